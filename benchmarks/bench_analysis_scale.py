"""The analysis path at paper scale: ``evaluate`` and ``calibrate`` on synthetic runs of three sizes,
the old code against this checkout's on the same run, cold and warm.

Each size is a synthetic run with planted errors (``construct-eval inject`` on the synthetic
dataset, then ``label``) and four external scorers brought in with ``construct-eval
import-scores``: each scores every document and every top-level field, two of them every leaf
as well (issue 32's recipe). The scorers differ in how they tie: a 1-10 rating (ten values), a
score on a 0.01 grid and two continuous ones, each lower on wrong items, about 1% of rows
unscored.

Every command runs as the CLI runs it, one process each (and the workers it forks), driven from
this one process: wall seconds, CPU seconds (user + system of the command and every worker it
waited for), the peak memory of the command's process tree (the sum of its processes'
proportional set sizes, sampled every 0.1 s: shared pages counted once) and the machine's load
average (``os.getloadavg``) before and after. For each size and side (``--old``: that commit's
package, unpacked under ``--work``; new: this checkout) two passes: **cold** (the run's
``.analysis_cache`` removed: ``evaluate`` reads the JSONL and keeps the collected items beside
the run, ``calibrate`` reads them) and **warm** (both read what the cold pass kept). The old side
runs both its passes first, then the new side (the two sides' caches are keyed by their code and
would replace each other). Every table of the two sides is then compared under the guard's
tolerance rule (``construct_eval.studies.diff_tables``' ``compare_trees``). ``--profile`` runs the new
side's warm pass once more under a CPU-time profiler and prints where its time goes. ``--delong``
adds a third side, this checkout's ``evaluate --intervals delong`` (AUROC intervals by the clustered
DeLong estimator instead of the document bootstrap; the other tables' bootstrap is unchanged), and a
second table: the new side's bootstrap against it, cold and warm, in the same run.

    python benchmarks/bench_analysis_scale.py                       # 500, 2000, 17000 documents
    python benchmarks/bench_analysis_scale.py --docs 500 --old-max-docs 500
    python benchmarks/bench_analysis_scale.py --docs 17000 --old-max-docs 0 --profile
    python benchmarks/bench_analysis_scale.py --docs 2000,17000 --old-max-docs 0 --delong

Runs are built once under ``--work`` (default: a folder in the system's temp dir) and reused.
Goal (issue 58): 1.2 M scored items (17,000 documents), evaluate + calibrate <= 60 s of wall time
on two cores and <= 4 GB resident on a warm pass.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD_VERSION = "2"  # bump when the run recipe changes: runs built by another recipe are rebuilt
SCORERS = ("ext-rating", "ext-grid", "ext-prob", "ext-logit")
LEAF_SCORERS = ("ext-rating", "ext-prob")
UNSCORED_SHARE = 0.01
OLD = "4bffa01"
"""main before issue 58's work: netcal's Beta, scikit-learn's Platt fits, serial fits."""


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


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            out.setdefault(ppid, []).append(int(entry))
    return out


def tree_pss(pid: int) -> float:
    """The proportional set size of ``pid`` and its descendants, bytes (shared pages counted once)."""
    children, todo, total = _children(), [pid], 0.0
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            with open(f"/proc/{current}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        total += float(line.split()[1]) * 1024
                        break
        except OSError:
            continue
    return total


@dataclass
class Measure:
    wall: float
    cpu: float
    peak_gb: float  # the process tree's peak PSS
    load: tuple[float, float]  # 1-minute load average before and after

    def cells(self) -> tuple[str, str, str]:
        return f"{self.wall:7.1f}", f"{self.cpu:7.1f}", f"{self.peak_gb:6.2f}"


def timed(tree: Path, command: str, run: Path, out: Path, extra: tuple[str, ...] = ()) -> Measure:
    """One CLI command with ``tree``'s package: wall and CPU seconds, peak memory of its processes."""
    out.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "construct_eval.cli", command, "--run", str(run), "--out", str(out), *extra]
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore", "MPLBACKEND": "Agg"}
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            peak[0] = max(peak[0], tree_pss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    done.set()
    sampler.join()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{command} failed with {tree}'s code: {proc.stderr.read().decode()[-2000:]}")
    peak_gb = max(peak[0], usage.ru_maxrss * 1024) / 1024**3  # a command shorter than a sample: its max RSS
    return Measure(seconds, usage.ru_utime + usage.ru_stime, peak_gb, (load_before, os.getloadavg()[0]))


PROFILED = """
import cProfile, sys, time
from construct_eval.cli import main
profile = cProfile.Profile(time.process_time)
profile.enable()
try:
    main(sys.argv[2:])
finally:
    profile.disable()
    profile.dump_stats(sys.argv[1])
"""

STEPS = {
    "evaluate": (
        ("collect (from the kept arrays)", "run_memo.py", "wrapper"),
        ("detection tables (and their figures)", "run_analyses.py", "_detection_tables"),
        ("  of which the detection table", "tables.py", "detection_table"),
        ("output kinds (kept beside the run)", "run_analyses.py", "item_output_kinds"),
        ("detection by output kind", "output_kinds.py", "output_kind_table"),
        ("detection by planted kind (both tables)", "run_analyses.py", "_planted_kind_tables"),
        ("rating-threshold tables", "metrics.py", "threshold_table"),
        ("parse-rule table (kept beside the run)", "judgment_counts.py", "parse_rule_rows"),
        ("figures", "report_objects.py", "save_figures"),
        ("  of which the document bootstrap walks", "resampled.py", "resampled"),
    ),
    "calibrate": (
        ("collect (from the kept arrays)", "run_memo.py", "wrapper"),
        ("calibration table (fits in workers)", "tables.py", "calibration_table"),
        ("reliability tables", "calibration_metrics.py", "reliability_table"),
        ("value tables", "calibration.py", "value_table"),
        ("rating readings", "rating_readings.py", "rating_readings"),
        ("figures", "report_objects.py", "save_figures"),
    ),
}


def where_time_goes(
    command: str, tree: Path, run: Path, out: Path, profile: Path, extra: tuple[str, ...] = ()
) -> list[str]:
    """The CPU seconds of the main process's steps (a profiled rerun of ``command``)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore", "MPLBACKEND": "Agg"}
    argv = [sys.executable, "-c", PROFILED, str(profile), command, "--run", str(run), "--out", str(out), *extra]
    done = subprocess.run(argv, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:  # say so and go on: the timings above stand without the profile
        return [f"  {command}: the profiled rerun failed (exit {done.returncode}): {done.stderr.strip()[-400:]}"]
    stats = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    total = max(cum for (_, _, _, cum, _) in stats.values())
    lines = [f"  {command}: {total:.1f} CPU s in the main process"]
    accounted = 0.0
    for label, file, name in STEPS[command]:
        cum = sum(v[3] for (f, _, n), v in stats.items() if f.endswith(file) and n == name)
        if not label.startswith("  "):
            accounted += cum
        lines.append(f"    {label:45s} {cum:6.1f}")
    lines.append(f"    {'imports, start-up and the rest':45s} {total - accounted:6.1f}")
    return lines


def compare(old_out: Path, new_out: Path, work: Path) -> str:
    """The guard's tolerance rule over the two sides' tables."""
    sys.path.insert(0, str(ROOT))
    from construct_eval.studies.diff_tables import compare_trees

    trees = work / "compare"
    shutil.rmtree(trees, ignore_errors=True)
    for side, out in (("before", old_out), ("after", new_out)):
        shutil.copytree(out / "metrics", trees / side / "results" / "runs" / "synthetic" / "metrics")
    report = compare_trees(trees / "before", trees / "after")
    moved = ", ".join(f"{m.count} {name} numbers moved within tolerance (at most {m.largest:.2g})" for name, m in
                      sorted(report.moved.items()) if m.count)  # fmt: skip
    return f"{report.files} tables, {len(report.failing)} differences beyond the rule; {moved or 'nothing moved'}"


def old_tree(work: Path, rev: str, repo: Path = ROOT) -> Path:
    """``rev``'s package, unpacked once under ``work``: the old path."""
    tree = work / f"code-{rev}"
    if not (tree / "construct_eval").is_dir():
        package = subprocess.run(["git", "-C", str(repo), "archive", rev, "construct_eval"], check=True,
                                 capture_output=True).stdout  # fmt: skip
        with tarfile.open(fileobj=io.BytesIO(package)) as tar:
            tar.extractall(tree, filter="data")
    return tree


def table_lines(
    measured: dict[tuple[str, str, str], Measure],
    n: int,
    rows: int,
    a: str,
    b: str,
    commands: tuple[str, ...] = ("evaluate", "calibrate", "both"),
) -> list[str]:
    """Side ``a`` (the table's old columns, where it ran) against side ``b`` (its new columns), per
    pass and command: wall and CPU seconds with their ratios, peak memory, load after."""
    out = []
    for pass_ in ("cold", "warm"):
        for command in commands:
            parts = ("evaluate", "calibrate") if command == "both" else (command,)
            new = [measured[(b, pass_, c)] for c in parts]
            old = [measured[(a, pass_, c)] for c in parts] if (a, pass_, parts[0]) in measured else None
            nw, nc, ng = sum(m.wall for m in new), sum(m.cpu for m in new), max(m.peak_gb for m in new)
            nl = max(m.load[1] for m in new)
            if old:
                ow, oc, og = sum(m.wall for m in old), sum(m.cpu for m in old), max(m.peak_gb for m in old)
                ol = max(m.load[1] for m in old)
                cells = (f"{ow:7.1f} {nw:7.1f} {ow / nw:5.1f}x | {oc:7.1f} {nc:7.1f} {oc / nc:5.1f}x |"
                         f" {og:6.2f} {ng:6.2f} | {ol:4.1f}, {nl:4.1f}")  # fmt: skip
            else:
                cells = f"{'-':>7} {nw:7.1f} {'-':>6} | {'-':>7} {nc:7.1f} {'-':>6} | {'-':>6} {ng:6.2f} | -, {nl:4.1f}"
            out.append(f"{n:>6} {rows:>11,} | {pass_:4} {command:9} | {cells}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default="500,2000,17000", help="run sizes in documents")
    parser.add_argument("--old", default=OLD, help="the commit whose code is the old path")
    parser.add_argument("--old-max-docs", type=int, default=17000, help="time the old path up to this size")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "construct-eval-bench-scale")
    parser.add_argument("--profile", action="store_true", help="where the new warm pass's time goes")
    parser.add_argument("--delong", action="store_true", help="also time evaluate --intervals delong (a third side)")
    parser.add_argument("--figures", default="all", choices=("none", "main", "all"), help="figures drawn (both sides)")
    parser.add_argument(
        "--repo", type=Path, default=ROOT, help="the git checkout of --old (when this copy is a snapshot of one)"
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(
        ["git", "-C", str(args.repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, this checkout at {commit.stdout.strip()} against {args.old};"
          f" {os.cpu_count()} cores; load average at the start {load}", flush=True)  # fmt: skip
    extra = () if args.figures == "all" else ("--figures", args.figures)
    header = (
        f"{'docs':>6} {'score rows':>11} | {'pass':4} {'command':9} | {'old s':>7} {'new s':>7} {'ratio':>6} |"
        f" {'old cpu':>7} {'new cpu':>7} {'ratio':>6} | {'old GB':>6} {'new GB':>6} | load old, new"
    )
    lines: list[str] = []
    delong_lines: list[str] = []
    warmed: set[Path] = set()
    for n in (int(x) for x in args.docs.split(",")):
        run = args.work / f"synthetic{n}"
        t0 = time.perf_counter()
        rows = build_run(run, n)
        print(f"run {run}: {n} documents, {rows:,} score rows (ready in {time.perf_counter() - t0:.0f} s)", flush=True)
        sides = [("new", ROOT)]
        if n <= args.old_max_docs:
            sides.insert(0, ("old", old_tree(args.work, args.old, args.repo)))
        if args.delong:
            sides.append(("delong", ROOT))
        measured: dict[tuple[str, str, str], Measure] = {}
        for _, tree in sides:  # numba's compiled walks kept by each side's code, as an installed package has them
            if tree not in warmed:
                small = args.work / "synthetic500"
                build_run(small, 500)
                timed(tree, "evaluate", small, args.work / "out-warm-up", ("--figures", "none", "--n-boot", "20"))
                warmed.add(tree)
        for side, tree in sides:
            out = args.work / f"out-{side}-{n}"
            shutil.rmtree(out, ignore_errors=True)
            for pass_ in ("cold", "warm"):
                if pass_ == "cold":
                    shutil.rmtree(run / ".analysis_cache", ignore_errors=True)
                for command in ("evaluate", "calibrate"):
                    how = ("--intervals", "delong") if side == "delong" and command == "evaluate" else ()
                    m = measured[(side, pass_, command)] = timed(tree, command, run, out, extra + how)
                    print(f"  {side} {pass_} {command}: {m.wall:.1f} s, {m.cpu:.1f} CPU s, {m.peak_gb:.2f} GB,"
                          f" load {m.load[0]:.1f} -> {m.load[1]:.1f}", flush=True)  # fmt: skip
        lines += table_lines(measured, n, rows, "old", "new")
        if args.delong:
            delong_lines.append(f"{n:>6} {rows:>11,} | bootstrap (old columns) against DeLong (new columns):")
            delong_lines += table_lines(measured, n, rows, "new", "delong", commands=("evaluate",))
        if len(sides) > 1 and sides[0][0] == "old":
            lines.append(
                f"{n:>6} tables old vs new: {compare(args.work / f'out-old-{n}', args.work / f'out-new-{n}', args.work)}"
            )
        if args.profile:
            lines.append(f"{n:>6} where the new warm pass's time goes (a profiled rerun):")
            for command in ("evaluate", "calibrate"):
                prof = args.work / f"{command}-{n}.prof"
                lines += where_time_goes(command, ROOT, run, args.work / f"out-new-{n}", prof, extra)
        print("\n".join(lines[-12:]), flush=True)
    print("\n" + header)
    print("\n".join(lines))
    if delong_lines:
        print("\n# AUROC intervals by the document bootstrap (old columns) and by clustered DeLong (new columns)")
        print(header)
        print("\n".join(delong_lines))
    print(f"# load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
