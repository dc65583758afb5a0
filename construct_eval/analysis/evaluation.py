"""The analyses of a run, in one import: collecting scores with labels
(:mod:`~construct_eval.analysis.collect`), the tables (:mod:`~construct_eval.analysis.tables`)
and a run's reports (:mod:`~construct_eval.analysis.reports`), their public names only.
"""

from construct_eval.analysis.collect import *  # noqa: F403
from construct_eval.analysis.reports import *  # noqa: F403
from construct_eval.analysis.tables import *  # noqa: F403
