"""Two versions of the code doing one step on the recorded runs, one after the other: the shared
driver of ``bench_decisions.py`` and ``bench_calibrate.py``.

``--before`` (a commit) is unpacked from git into a temporary folder; for each run, a child
process of each version runs the step (``child``: Python source that takes the code folder, the
run folder and an output folder) into its own temporary folder, so the run folders are only read
and the collection cache is off (each collects cold). Printed per run: each version's CPU seconds
(user + system of the child, from the operating system: steadier than wall time on a shared
machine) and wall seconds, their ratio, and whether what the two wrote is byte for byte the same
(``compared``: which written files count) and the same as the run's committed files
(``committed``). The load average is printed before and after.
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
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "results" / "runs"


def child(step: str) -> str:
    """A child's Python source: the version at its code folder (``argv[1]``) imported, then ``step``
    run on ``run`` (``argv[2]``) into ``out`` (``argv[3]``), ``RunDir`` and ``Path`` at hand."""
    return f"""
import sys, warnings
from pathlib import Path
code, run, out = sys.argv[1:4]
sys.path.insert(0, code)
warnings.simplefilter("ignore", UserWarning)
import construct_eval
assert construct_eval.__file__.startswith(code), construct_eval.__file__
from construct_eval.data.runs import RunDir
{step}
"""


def unpack(rev: str, into: Path) -> Path:
    """The package as it was at ``rev``, in ``into``."""
    archive = subprocess.run(["git", "archive", rev, "construct_eval"], cwd=ROOT, capture_output=True, check=True)
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def timed(child: str, code: Path, run: str, out: Path) -> tuple[float, float]:
    """CPU and wall seconds of one version doing the step on one run in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, "CONSTRUCT_EVAL_COLLECT_CACHE": "0", "MPLBACKEND": "Agg"}
    subprocess.run([sys.executable, "-c", child, str(code), str(RUNS / run), str(out)], check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def differing(a: Path, b: Path) -> list[str]:
    """Files under ``a`` that ``b`` lacks or holds with other bytes."""
    out = []
    for file in sorted(p for p in a.rglob("*") if p.is_file()):
        other = b / file.relative_to(a)
        if not other.exists() or not filecmp.cmp(file, other, shallow=False):
            out.append(str(file.relative_to(a)))
    return out


def runs_with(table: str) -> list[str]:
    """The recorded runs that hold ``metrics/<table>``: those the step makes tables for."""
    return sorted(p.name for p in RUNS.iterdir() if (p / "metrics" / table).exists())


def committed_differ(out: Path, run: str, pattern: str) -> list[str]:
    """The files matching ``pattern`` written to ``out``'s ``metrics/`` that the run also holds,
    with other bytes."""
    return [
        f.name
        for f in sorted((out / "metrics").glob(pattern))
        if (RUNS / run / "metrics" / f.name).exists()
        and not filecmp.cmp(f, RUNS / run / "metrics" / f.name, shallow=False)
    ]


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def main(doc: str, step: str, child: str, before: str, *, table: str, tables: str, compare: str = "*") -> int:
    """The command line of a side-by-side benchmark of ``step`` (its module's ``doc``): by default
    on every run that holds ``metrics/<table>``; the two versions' files matching ``compare`` are
    held to each other, and their ``metrics/`` files matching ``tables`` to the run's committed ones."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--before", default=before, help=f"the commit to compare with (default {before})")
    ap.add_argument("--runs", nargs="*", help="run folder names (default: every run the step makes tables for)")
    ap.add_argument("--out", type=Path, help="also write the report here")
    args = ap.parse_args()
    runs = args.runs or runs_with(table)
    lines = [
        f"{step}, code at {args.before} against this working tree; {os.cpu_count()} cores; load before: {load()}",
        f"{'run':<66} {'CPU s before':>12} {'after':>7} {'ratio':>6} {'wall s before':>13} {'after':>7}  same bytes",
    ]
    print("\n".join(lines), flush=True)
    totals = [0.0, 0.0, 0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmp:
        old_code = unpack(args.before, Path(tmp) / "before")
        for run in runs:
            old_out, new_out = Path(tmp) / "out-before" / run, Path(tmp) / "out-after" / run
            cpu_old, wall_old = timed(child, old_code, run, old_out)
            cpu_new, wall_new = timed(child, ROOT, run, new_out)
            moved = [
                f for f in differing(old_out, new_out) + differing(new_out, old_out) if fnmatch(Path(f).name, compare)
            ]
            stored = committed_differ(new_out, run, tables)
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
