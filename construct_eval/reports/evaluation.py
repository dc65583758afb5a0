"""The analyses of a run, in one import: collecting scores with labels
(:mod:`~construct_eval.reports.collect`), the tables (:mod:`~construct_eval.reports.tables`)
and a run's reports (:mod:`~construct_eval.reports.run_analyses`), their public names only.
"""

from construct_eval.reports.collect import *  # noqa: F403
from construct_eval.reports.run_analyses import *  # noqa: F403
from construct_eval.reports.tables import *  # noqa: F403
