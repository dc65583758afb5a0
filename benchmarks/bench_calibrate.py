"""``calibrate`` of the recorded runs by two versions of the code, side by side.

For each run, ``calibrate_run`` with the command's default methods (what ``construct-eval
calibrate`` and ``make reproduce``'s tables step run per run: every calibration table and figure) is run by the code of ``--before`` (a commit,
unpacked from git) and by this working tree, one after the other in fresh processes, each writing
into a temporary folder (the run folders are only read; the collection cache is off, so each
collects cold). Printed per run: each version's CPU seconds (user + system of the process, from
the operating system: steadier than wall time on a shared machine) and wall seconds, their ratio,
and whether every table the two wrote is byte for byte the same and the same as the run's
committed one (figures are compared between the versions only).

    python benchmarks/bench_calibrate.py                              # every run, against e1ef8619
    python benchmarks/bench_calibrate.py --runs financial_ner-sample200 --before HEAD~1
    python benchmarks/bench_calibrate.py --out results/benchmarks/calibrate.txt
"""

from __future__ import annotations

from side_by_side import child, main

BEFORE = "e1ef8619"
"""The code before calibrate ran with BLAS on one thread."""

CHILD = child(
    """from construct_eval.reports.run_analyses import calibrate_run
calibrate_run(RunDir(run, create=False), Path(out), methods=("isotonic", "platt", "beta", "histogram"))"""
)


if __name__ == "__main__":
    raise SystemExit(
        main(__doc__, "calibrate", CHILD, BEFORE, table="calibration.csv", tables="*.csv", compare="*.csv")
    )
