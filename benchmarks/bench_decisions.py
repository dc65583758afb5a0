"""The decision tables of the recorded runs made by two versions of the code, side by side.

For each run that has decision tables, ``write_decision_tables`` (what ``make reproduce``'s
decisions step runs per run) is run by the code of ``--before`` (a commit, unpacked from git into
a temporary folder) and by this working tree, one after the other in fresh processes, each
writing into a temporary folder (the run folders are only read; the collection cache is off, so
each collects cold). Printed per run: each version's CPU seconds (user + system of the process
and its children, from the operating system: steadier than wall time on a shared machine) and
wall seconds, their ratio, and whether every table and figure the two wrote is byte for byte the
same and the same as the run's committed tables. The load average is printed before and after:
on two cores shared with other work both versions slow down, and CPU seconds less than wall.

    python benchmarks/bench_decisions.py                         # every run, against ff3e98d9
    python benchmarks/bench_decisions.py --runs synthetic200-controlled30 --before HEAD~3
    python benchmarks/bench_decisions.py --out results/benchmarks/decisions.txt
"""

from __future__ import annotations

from side_by_side import child, main

BEFORE = "ff3e98d9"
"""The code before issue 79's decision-table work (validity and PPI draws in loops, BLAS threads)."""

CHILD = child(
    """from construct_eval.decide.stored import write_decision_tables
write_decision_tables(RunDir(run, create=False), Path(out))"""
)


if __name__ == "__main__":
    raise SystemExit(
        main(__doc__, "decision tables", CHILD, BEFORE, table="decision_thresholds.csv", tables="decision_*")
    )
