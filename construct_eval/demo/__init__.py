"""``make demo`` and ``make demo-full``: the package's job on the embedded local model, offline.

``make demo`` (the default, a few minutes): :mod:`~construct_eval.demo.live` generates, labels and
judges a few synthetic documents on the embedded model and scores one output with CONSTRUCT, each
stage timed; :mod:`~construct_eval.demo.recorded` then reads the recorded 1.5B judge study's
answers from its stored tables (no model call). ``make demo-full`` (``--full``, about an hour):
:mod:`~construct_eval.demo.pipeline` runs every stage on the model's own runs into two run folders.
:mod:`~construct_eval.demo.report` turns either into ``report.md`` without a model, so a recorded
demo's report can be rewritten on its own (``python -m construct_eval.demo --out results/demo
--report-only``; add ``--full`` for ``results/demo-full``).
"""

import time

STARTED = time.perf_counter()
"""When the demo package was first imported: ``make demo`` times its start-up stage from here."""

from construct_eval.demo.pipeline import main, run_demo, run_quick  # noqa: E402
from construct_eval.demo.report import (  # noqa: E402
    DemoRecord,
    QuickRecord,
    compare_with_recorded,
    write_quick_report,
    write_report,
)

__all__ = [
    "STARTED",
    "DemoRecord",
    "QuickRecord",
    "compare_with_recorded",
    "main",
    "run_demo",
    "run_quick",
    "write_quick_report",
    "write_report",
]
