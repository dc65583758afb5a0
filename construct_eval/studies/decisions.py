"""The decision tables and figures of every recorded run with at least 100 labelled documents
(issue 33), from the stored files (no model calls):

    .venv/bin/python -m construct_eval.studies.decisions [--figures-only] [RUN ...]

writes ``metrics/decision_*.csv/.md`` and ``figures/decision_*.png`` in each run (a named run with
fewer labelled documents is skipped, saying so), then prints the
findings paragraph (:func:`construct_eval.studies.decision_findings.findings_markdown`). ``--figures-only``
redraws the figures from the stored tables and the run's files, without the tables (the
reliability diagrams' bootstrap bands, most of either's time since issue 79, are drawn again).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

from construct_eval.data.runs import RunDir
from construct_eval.decide.stored import (
    MIN_DOCUMENTS,
    labelled_documents,
    redraw_decision_figures,
    write_decision_tables,
)
from construct_eval.studies import RUNS
from construct_eval.studies.decision_findings import findings_markdown


def eligible() -> list[Path]:
    out = []
    for path in sorted(p for p in RUNS.iterdir() if (p / "labels.jsonl").exists()):
        if labelled_documents(RunDir(path, create=False)) >= MIN_DOCUMENTS:
            out.append(path)
    return out


def main(argv: list[str]) -> int:
    warnings.simplefilter("ignore", UserWarning)
    figures_only = "--figures-only" in argv
    named = [Path(a) for a in argv if a != "--figures-only"]
    # redrawing reads the stored tables: by default only the runs that have them
    runs = named or [p for p in eligible() if not figures_only or (p / "metrics" / "decision_thresholds.csv").exists()]
    for path in runs:
        start = time.time()
        print(f"== {path.name}", flush=True)
        run = RunDir(path, create=False)
        if named and (n := labelled_documents(run)) < MIN_DOCUMENTS:  # eligible() has checked the others
            print(f"   skipped: {n} labelled documents, the decision tables need {MIN_DOCUMENTS}", flush=True)
            continue
        if figures_only:
            for written in redraw_decision_figures(run):
                print("  ", written.name, flush=True)
        else:
            write_decision_tables(run, progress=lambda m: print("  ", m, flush=True))
        print(f"   {time.time() - start:.0f} s", flush=True)
    print(findings_markdown(RUNS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
