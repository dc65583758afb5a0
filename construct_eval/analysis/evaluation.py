"""The analyses of a run, in one import: collecting scores with labels
(:mod:`~construct_eval.analysis.collect`), the tables (:mod:`~construct_eval.analysis.tables`)
and a run's reports (:mod:`~construct_eval.analysis.reports`). Kept so code written against the
former single module still imports from here.
"""

from construct_eval.analysis.collect import *  # noqa: F403
from construct_eval.analysis.collect import _add, _cost, _judge_items, _labelled_keys, _score_items  # noqa: F401
from construct_eval.analysis.reports import *  # noqa: F403
from construct_eval.analysis.reports import _positions  # noqa: F401
from construct_eval.analysis.tables import *  # noqa: F403
from construct_eval.analysis.tables import _fmt, _slug  # noqa: F401
