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

import argparse
import filecmp
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "results" / "runs"
BEFORE = "ff3e98d9"
"""The code before issue 79's decision-table work (validity and PPI draws in loops, BLAS threads)."""

CHILD = """
import sys, warnings
from pathlib import Path
code, run, out = sys.argv[1:4]
sys.path.insert(0, code)
warnings.simplefilter("ignore", UserWarning)
import construct_eval
assert construct_eval.__file__.startswith(code), construct_eval.__file__
from construct_eval.data.runs import RunDir
from construct_eval.decide.stored import write_decision_tables
write_decision_tables(RunDir(run, create=False), Path(out))
"""


def decision_runs() -> list[str]:
    """The runs ``make reproduce`` makes decision tables for: those that have them."""
    return sorted(p.name for p in RUNS.iterdir() if (p / "metrics" / "decision_thresholds.csv").exists())


def unpack(rev: str, into: Path) -> Path:
    """The package as it was at ``rev``, in ``into``."""
    archive = subprocess.run(["git", "archive", rev, "construct_eval"], cwd=ROOT, capture_output=True, check=True)
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def timed(code: Path, run: str, out: Path) -> tuple[float, float]:
    """CPU and wall seconds of one version making one run's decision tables in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, "CONSTRUCT_EVAL_COLLECT_CACHE": "0", "MPLBACKEND": "Agg"}
    subprocess.run([sys.executable, "-c", CHILD, str(code), str(RUNS / run), str(out)], check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def differing(a: Path, b: Path) -> list[str]:
    """Files under ``a`` that ``b`` lacks or holds with other bytes (metrics/ and figures/)."""
    out = []
    for file in sorted(p for p in a.rglob("*") if p.is_file()):
        other = b / file.relative_to(a)
        if not other.exists() or not filecmp.cmp(file, other, shallow=False):
            out.append(str(file.relative_to(a)))
    return out


def committed_differ(out: Path, run: str) -> list[str]:
    """The decision tables written to ``out`` that differ from the run's committed ones."""
    return [
        f.name
        for f in sorted((out / "metrics").glob("decision_*"))
        if not filecmp.cmp(f, RUNS / run / "metrics" / f.name, shallow=False)
    ]


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=BEFORE, help=f"the commit to compare with (default {BEFORE})")
    ap.add_argument("--runs", nargs="*", help="run folder names (default: every run with decision tables)")
    ap.add_argument("--out", type=Path, help="also write the report here")
    args = ap.parse_args(argv)
    runs = args.runs or decision_runs()
    lines = [
        f"decision tables, code at {args.before} against this working tree; {os.cpu_count()} cores;"
        f" load before: {load()}",
        f"{'run':<66} {'CPU s before':>12} {'after':>7} {'ratio':>6} {'wall s before':>13} {'after':>7}  same bytes",
    ]
    print("\n".join(lines), flush=True)
    totals = [0.0, 0.0, 0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmp:
        old_code = unpack(args.before, Path(tmp) / "before")
        for run in runs:
            old_out, new_out = Path(tmp) / "out-before" / run, Path(tmp) / "out-after" / run
            cpu_old, wall_old = timed(old_code, run, old_out)
            cpu_new, wall_new = timed(ROOT, run, new_out)
            moved = differing(old_out, new_out) + differing(new_out, old_out)
            stored = committed_differ(new_out, run)
            same = "yes" if not moved and not stored else f"NO: {', '.join(moved + stored)}"
            for i, v in enumerate((cpu_old, cpu_new, wall_old, wall_new)):
                totals[i] += v
            line = (
                f"{run:<66} {cpu_old:>12.1f} {cpu_new:>7.1f} {cpu_old / cpu_new:>5.1f}x"
                f" {wall_old:>13.1f} {wall_new:>7.1f}  {same}"
            )
            lines.append(line)
            print(line, flush=True)
    total = (
        f"{'all runs':<66} {totals[0]:>12.1f} {totals[1]:>7.1f} {totals[0] / totals[1]:>5.1f}x"
        f" {totals[2]:>13.1f} {totals[3]:>7.1f}"
    )
    lines += [total, f"load after: {load()}"]
    print("\n".join(lines[-2:]))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
