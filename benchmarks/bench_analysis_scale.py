"""The analysis path at paper scale: ``evaluate`` and ``calibrate`` on synthetic runs of three sizes.

Each size is a synthetic run with planted errors (``construct-eval inject`` on the synthetic
dataset, then ``label``) and four external scorers brought in with ``construct-eval
import-scores``: each scores every document and every top-level field, two of them every leaf
as well (issue 32's recipe). The scorers differ in how they tie: a 1-10 rating (ten values), a
score on a 0.01 grid and two continuous ones, each lower on wrong items, about 1% of rows
unscored.

The commands are timed as the CLI runs them (one process each, wall clock and peak resident
memory from ``wait4``), with this checkout's code and, for the sizes up to ``--old-max-docs``,
with the code of ``--old`` (a detached worktree of that commit), the two alternating on the same
run so that a neighbour's load falls on both. Both write their tables to their own folder, and
every table is compared cell by cell (as ``results/runs/diff_tables.py`` does): the ratio means
something only if the numbers are the same.

    python benchmarks/bench_analysis_scale.py                       # 500, 2000, 17000 documents
    python benchmarks/bench_analysis_scale.py --docs 500 --old-max-docs 500
    python benchmarks/bench_analysis_scale.py --docs 17000 --old-max-docs 0 --profile /tmp/prof
    python benchmarks/bench_analysis_scale.py --docs 17000 --old-max-docs 0 --figures none

The new path's ``evaluate`` starts cold (the run's ``.analysis_cache`` removed first: it reads
the JSONL and keeps the collected items beside the run) and ``calibrate`` reads what it kept.
``--figures none`` times the analysis pass alone (the old path always draws every figure).

Runs are built once under ``--work`` (default: a folder in the system's temp dir) and reused.
Goal (issue 32): 1.2 M scored items, evaluate + calibrate <= 60 s on two cores, <= 4 GB resident.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD_VERSION = "2"  # bump when the run recipe changes: runs built by another recipe are rebuilt
SCORERS = ("ext-rating", "ext-grid", "ext-prob", "ext-logit")
LEAF_SCORERS = ("ext-rating", "ext-prob")
UNSCORED_SHARE = 0.01


def _cli(tree: Path, *argv: str, env: dict[str, str] | None = None) -> None:
    subprocess.run(
        [sys.executable, "-m", "construct_eval.cli", *argv],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore", **(env or {})},
        check=True,
        stdout=subprocess.DEVNULL,
    )


def _trust(kind: str, wrong: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A trust score in [0, 1], lower on wrong items, with the ties of its kind."""
    noise = rng.normal(0.0, 1.0, len(wrong))
    if kind == "ext-rating":  # a 1-10 rating written as r / 10
        return np.clip(np.round(8.0 - 2.5 * wrong + 2.0 * noise), 1, 10) / 10
    if kind == "ext-grid":
        return np.round(1 / (1 + np.exp(-(1.2 - 1.0 * wrong + noise))), 2)
    if kind == "ext-prob":
        return 1 / (1 + np.exp(-(1.5 - 1.4 * wrong + noise)))
    return 1 / (1 + np.exp(-(0.8 - 0.7 * wrong + 1.3 * noise)))


def build_run(path: Path, n_docs: int, seed: int = 0) -> int:
    """The synthetic run of ``n_docs`` documents with four imported scorers; returns its score rows."""
    marker = path / "bench_build.json"
    if marker.exists() and json.loads(marker.read_text()).get("version") == BUILD_VERSION:
        return int(json.loads(marker.read_text())["score_rows"])
    if path.exists():
        shutil.rmtree(path)
    _cli(ROOT, "inject", "--run", str(path), "--dataset", "synthetic", "--n", str(n_docs), "--seed", str(seed),
         "--doc-error-rate", "0.3", "--error-seed", str(seed))  # fmt: skip
    _cli(ROOT, "label", "--run", str(path))
    sys.path.insert(0, str(ROOT))
    from construct_eval.data.labels import DocumentLabels, judged_field_errors
    from construct_eval.fields import DOCUMENT, parse_path

    items: list[tuple[str, str, str, bool]] = []  # (doc, field, granularity, wrong)
    with (path / "labels.jsonl").open() as fh:
        for line in fh:
            lab = DocumentLabels.from_dict(json.loads(line))
            if lab.wrong is None or lab.parse_failed:
                continue
            leaves = sorted({f.path for f in lab.fields if f.in_output and f.path})
            tops = sorted({str(parse_path(p)[0]) for p in leaves})
            errors = judged_field_errors(lab, [*tops, *leaves])
            items.append((lab.doc_id, DOCUMENT, "", bool(lab.wrong)))
            items += [(lab.doc_id, t, "top", bool(errors[t])) for t in tops if errors[t] is not None]
            items += [(lab.doc_id, p, "leaf", bool(errors[p])) for p in leaves if errors[p] is not None]
    wrong = np.array([w for *_, w in items], dtype=float)
    gran = np.array([g for _, _, g, _ in items])
    rng = np.random.default_rng(seed)
    total = 0
    for scorer in SCORERS:
        keep = np.ones(len(items), dtype=bool) if scorer in LEAF_SCORERS else gran != "leaf"
        score = _trust(scorer, wrong, rng)
        unscored = rng.random(len(items)) < UNSCORED_SHARE
        file = path / f"import_{scorer}.jsonl"
        with file.open("w") as fh:
            for i in np.flatnonzero(keep):
                doc, name, g, _ = items[i]
                row: dict[str, Any] = {"id": doc, "field": name}
                row |= {"score": None, "reason": "no reply"} if unscored[i] else {"score": float(score[i])}
                if g:
                    row["granularity"] = g
                fh.write(json.dumps(row) + "\n")
                total += 1
        _cli(ROOT, "import-scores", "--run", str(path), "--scores", str(file), "--scorer", scorer)
        file.unlink()
    marker.write_text(json.dumps({"version": BUILD_VERSION, "documents": n_docs, "score_rows": total}))
    return total


def timed(
    tree: Path, command: str, run: Path, out: Path, profile: Path | None = None, extra: tuple[str, ...] = ()
) -> tuple[float, float, float]:
    """Wall seconds, peak resident GB and CPU seconds (user + system: what a neighbour's load
    does not inflate as much) of one CLI command run with ``tree``'s code."""
    out.mkdir(parents=True, exist_ok=True)
    head = [sys.executable]
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
        head += ["-m", "cProfile", "-o", str(profile / f"{command}_{run.name}.prof")]
    argv = [*head, "-m", "construct_eval.cli", command, "--run", str(run), "--out", str(out), *extra]
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore", "MPLBACKEND": "Agg"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{command} failed with {tree}'s code: {proc.stderr.read().decode()[-2000:]}")
    return seconds, usage.ru_maxrss / 1024**2, usage.ru_utime + usage.ru_stime  # KiB on Linux


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y))


def compare_tables(before: Path, after: Path) -> tuple[int, int]:
    """(tables compared, cells or tables that differ) between two ``metrics/`` folders."""
    names_a = {p.name for p in (before / "metrics").glob("*.csv")}
    names_b = {p.name for p in (after / "metrics").glob("*.csv")}
    problems = len(names_a ^ names_b)
    for name in sorted(names_a & names_b):
        with (before / "metrics" / name).open() as fa, (after / "metrics" / name).open() as fb:
            a, b = list(csv.DictReader(fa)), list(csv.DictReader(fb))
        if len(a) != len(b):
            problems += 1
            continue
        for ra, rb in zip(a, b, strict=True):
            problems += sum(not _same(ra.get(c, ""), rb.get(c, "")) for c in set(ra) | set(rb))
    return len(names_a & names_b), problems


def old_tree(work: Path, rev: str) -> Path:
    """A detached worktree of ``rev`` (made once) whose code is the old path."""
    tree = work / f"tree-{rev}"
    if not tree.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), rev], check=True)
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default="500,2000,17000", help="run sizes in documents")
    parser.add_argument("--old", default="f745cc3", help="the commit whose code is the old path")
    parser.add_argument("--old-max-docs", type=int, default=2000, help="time the old path up to this size")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "construct-eval-bench-scale")
    parser.add_argument("--profile", type=Path, default=None, help="cProfile the new path into this folder")
    parser.add_argument(
        "--figures", default="all", choices=("none", "main", "all"), help="the new path's figures (old: all)"
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    sizes = [int(x) for x in args.docs.split(",")]
    lines = []
    header = (
        f"{'docs':>6} {'score rows':>11} | {'command':9} | {'old s':>7} {'new s':>7} {'ratio':>6} |"
        f" {'old cpu':>7} {'new cpu':>7} {'ratio':>6} | {'old GB':>6} {'new GB':>6} | tables"
    )
    for n in sizes:
        run = args.work / f"synthetic{n}"
        t0 = time.perf_counter()
        rows = build_run(run, n)
        print(f"run {run}: {n} documents, {rows:,} score rows (ready in {time.perf_counter() - t0:.0f} s)", flush=True)
        total_new = 0.0
        shutil.rmtree(run / ".analysis_cache", ignore_errors=True)  # evaluate collects cold, calibrate warm
        for side in ("old", "new"):  # tables of an earlier run would count as tables on one side only
            shutil.rmtree(args.work / f"out-{side}-{n}", ignore_errors=True)
        extra = () if args.figures == "all" else ("--figures", args.figures)
        for command in ("evaluate", "calibrate"):
            old = None
            if n <= args.old_max_docs:
                old = timed(old_tree(args.work, args.old), command, run, args.work / f"out-old-{n}")
            new = timed(ROOT, command, run, args.work / f"out-new-{n}", args.profile, extra)
            total_new += new[0]
            if old is not None:
                compared, diffs = compare_tables(args.work / f"out-old-{n}", args.work / f"out-new-{n}")
                same = f"{compared} compared, {diffs} differences"
                line = (
                    f"{n:>6} {rows:>11,} | {command:9} | {old[0]:7.1f} {new[0]:7.1f} {old[0] / new[0]:5.1f}x |"
                    f" {old[2]:7.1f} {new[2]:7.1f} {old[2] / new[2]:5.1f}x | {old[1]:6.2f} {new[1]:6.2f} | {same}"
                )
            else:
                line = (
                    f"{n:>6} {rows:>11,} | {command:9} | {'-':>7} {new[0]:7.1f} {'-':>6} |"
                    f" {'-':>7} {new[2]:7.1f} {'-':>6} | {'-':>6} {new[1]:6.2f} |"
                )
            lines.append(line)
            print(line, flush=True)
        lines.append(f"{n:>6} {rows:>11,} | {'both':9} | {'':>7} {total_new:7.1f}")
    print("\n" + header)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
