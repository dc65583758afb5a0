"""``make demo``: the whole pipeline on the embedded local model, offline, in one command.

:mod:`~construct_eval.demo.pipeline` runs the stages that need the model (generate, label,
judge) into two run folders; :mod:`~construct_eval.demo.report` turns those folders into
``report.md`` without a model, so a recorded demo's report can be rewritten on its own
(``python -m construct_eval.demo --out results/demo --report-only``).
"""

from construct_eval.demo.pipeline import main, run_demo
from construct_eval.demo.report import DemoRecord, compare_with_recorded, write_report

__all__ = ["DemoRecord", "compare_with_recorded", "main", "run_demo", "write_report"]
