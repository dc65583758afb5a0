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

import argparse
import filecmp
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_decisions import differing, load, unpack

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "results" / "runs"
BEFORE = "e1ef8619"
"""The code before calibrate ran with BLAS on one thread."""

CHILD = """
import sys, warnings
from pathlib import Path
code, run, out = sys.argv[1:4]
sys.path.insert(0, code)
warnings.simplefilter("ignore")
import construct_eval
assert construct_eval.__file__.startswith(code), construct_eval.__file__
from construct_eval.data.runs import RunDir
from construct_eval.reports.run_analyses import calibrate_run
calibrate_run(RunDir(run, create=False), Path(out), methods=("isotonic", "platt", "beta", "histogram"))
"""


def calibrated_runs() -> list[str]:
    """The runs ``make reproduce`` calibrates: those with a stored calibration table."""
    return sorted(p.name for p in RUNS.iterdir() if (p / "metrics" / "calibration.csv").exists())


def timed(code: Path, run: str, out: Path) -> tuple[float, float]:
    """CPU and wall seconds of one version calibrating one run in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, "CONSTRUCT_EVAL_COLLECT_CACHE": "0", "MPLBACKEND": "Agg"}
    subprocess.run([sys.executable, "-c", CHILD, str(code), str(RUNS / run), str(out)], check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def committed_differ(out: Path, run: str) -> list[str]:
    """The CSV tables written to ``out`` that differ from the run's committed ones."""
    return [
        f.name
        for f in sorted((out / "metrics").glob("*.csv"))
        if (RUNS / run / "metrics" / f.name).exists()
        and not filecmp.cmp(f, RUNS / run / "metrics" / f.name, shallow=False)
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=BEFORE, help=f"the commit to compare with (default {BEFORE})")
    ap.add_argument("--runs", nargs="*", help="run folder names (default: every calibrated run)")
    ap.add_argument("--out", type=Path, help="also write the report here")
    args = ap.parse_args(argv)
    runs = args.runs or calibrated_runs()
    lines = [
        f"calibrate, code at {args.before} against this working tree; {os.cpu_count()} cores; load before: {load()}",
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
            moved = [f for f in differing(old_out, new_out) + differing(new_out, old_out) if f.endswith(".csv")]
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
