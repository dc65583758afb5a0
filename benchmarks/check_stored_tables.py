"""The stored-numbers guard on a few recorded runs, with the items that explain a changed cell.

Each run's committed folder (``git archive`` of ``--stored``: the run files and the tables
stored with them) is copied under ``--work``; ``calibrate`` and ``evaluate`` remake its tables
there (``--figures none``) twice: with this checkout's code and with ``--before``'s (the code
before issue 58's fits, unpacked from git). The tables remade by this checkout are held to the
committed ones by ``construct_eval.studies.diff_tables``' ``compare_trees`` under the tolerance rule.

The tables store no items, so this script gives ``compare_trees`` the explainer the rule asks
for: every item's out-of-fold P(error) for every scorer and method, by ``--before``'s code (the
per-item stand-in for the stored numbers) and by this checkout's. A changed printed cell of
``calibration`` or ``reliability`` is explained when the items whose equal-mass bin, equal-width
bin or review flag differs all lie within the tolerance (1e-6, Beta 1e-4) of that bin's edge or
of the review threshold, before or after (a review cut that moved because the expected recall
passes the target within the predictions' moves counts too); the items are listed. Two kinds of
difference ``compare_trees`` cannot pass are listed here with their items too: a reliability
table whose rows differ in number because such items emptied a bin (no empty bin is written),
and a bin's full-precision numbers (its mean, observed rate and interval), which move with the
items that changed bins. Finally, a cell that ``--before``'s code, run here, makes the same as
this checkout's is not this change's: the stored table was made elsewhere (netcal's fits differ
between machines) or by older code; it is listed as such.

    python benchmarks/check_stored_tables.py                      # the runs whose calibration has beta
    python benchmarks/check_stored_tables.py --runs insurance_claims,synthetic40 --commands calibrate

Exit status 0 when every difference is explained, 1 if not.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import pickle
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, as run by path from benchmarks/
from construct_eval.studies.diff_tables import TOLERANCE, Difference, Kind, compare_trees  # noqa: E402

BEFORE = "4bffa01"
"""The code before issue 58's fits (netcal's Beta, scikit-learn's Platt fits), the per-item
stand-in for the stored tables."""
DUMP = """
import os, pickle, sys, warnings
METHODS = ("isotonic", "platt", "beta", "histogram")
warnings.simplefilter("ignore")
os.environ["CONSTRUCT_EVAL_COLLECT_CACHE"] = "0"
from construct_eval.data.runs import RunDir
from construct_eval.reports.collect import collect
from construct_eval.reports.tables import calibration_table
out = {}
for run in sys.argv[2:]:
    items = collect(RunDir(run, create=False))
    _, predictions = calibration_table(items, methods=METHODS)
    by_key = {it.key: it for it in items}
    for (key, method), p in predictions.items():
        it = by_key[key]
        out[(os.path.basename(run), key, method)] = (p, [float(w) for w in it.wrong], list(it.doc_ids), list(it.fields))
pickle.dump(out, open(sys.argv[1], "wb"))
"""


def committed_run(rev: str, run: str, dest: Path, repo: Path = ROOT) -> Path:
    """``results/runs/<run>`` as ``rev`` committed it, under ``dest``."""
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", rev, f"results/runs/{run}"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest / "results" / "runs" / run


def runs_with_beta(rev: str, repo: Path = ROOT) -> list[str]:
    """The run folders whose calibration table, as ``rev`` committed it, has a ``beta`` row."""
    names = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "--name-only", rev, "results/runs/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    out = []
    for path in names:
        shown = subprocess.run(
            ["git", "-C", str(repo), "show", f"{rev}:{path}/metrics/calibration.csv"], capture_output=True, text=True
        )
        if shown.returncode == 0 and any(r.get("method") == "beta" for r in csv.DictReader(io.StringIO(shown.stdout))):
            out.append(Path(path).name)
    return out


def predictions(tree: Path, runs: Sequence[Path], out: Path) -> dict[tuple[str, str, str], Any]:
    """Every item's out-of-fold P(error) per (run, scorer key, method), by ``tree``'s code."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore"}
    subprocess.run([sys.executable, "-c", DUMP, str(out), *map(str, runs)], cwd=tree, env=env, check=True)
    with out.open("rb") as fh:
        return pickle.load(fh)


def _edges_mass(p: np.ndarray) -> np.ndarray:
    edges = np.quantile(p, np.linspace(0.0, 1.0, 11))
    edges[0], edges[-1] = 0.0, 1.0
    return edges


def _bins(p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.clip(np.searchsorted(edges[1:-1], p, side="right"), 0, len(edges) - 2)


def _threshold(p: np.ndarray, target: float = 0.9) -> tuple[float, np.ndarray]:
    """plan_review's threshold and each item's place in the expected recall (descending P(error))."""
    order = np.argsort(-p, kind="stable")
    expected = np.cumsum(p[order]) / max(p.sum(), 1e-6)
    k = min(int(np.searchsorted(expected, target - 1e-12) + 1), len(p))
    return float(p[order][k - 1]), expected


class Explainer:
    """``compare_trees``' explainer for the calibration tables, from per-item predictions."""

    def __init__(self, before: Mapping[tuple[str, str, str], Any], after: Mapping[tuple[str, str, str], Any]):
        self.before, self.after = before, after

    def items(self, run: str, key: str, method: str, what: str) -> list[str]:
        """The items that change ``what`` (``mass``, ``width`` or ``review``) between the two fits,
        each named with its values, if all of them lie within tolerance of their edge; else []."""
        if (run, key, method) not in self.before or (run, key, method) not in self.after:
            return []
        pb, _, docs, fields = self.before[(run, key, method)]
        pa = self.after[(run, key, method)][0]
        tol = TOLERANCE.beta if re.search(r"(?<![a-z])beta(?![a-z])", method) else TOLERANCE.fitted
        if what == "review":
            tb, eb = _threshold(pb)
            ta, _ = _threshold(pa)
            cross = np.flatnonzero((pb >= tb) != (pa >= ta))
            shift = float(np.abs(pa - pb).sum() / max(pb.sum(), 1e-6)) + 1e-12
            cut_moved = bool(np.any(np.abs(eb - 0.9) <= shift))  # the expected recall passes 0.9 within the moves
            near = [i for i in cross if min(abs(pb[i] - tb), abs(pa[i] - ta)) <= tol or cut_moved]
            edges = f"threshold {tb:.10g} -> {ta:.10g}"
        else:
            eb = _edges_mass(pb) if what == "mass" else np.linspace(0.0, 1.0, 11)
            ea = _edges_mass(pa) if what == "mass" else eb
            cross = np.flatnonzero(_bins(pb, eb) != _bins(pa, ea))
            near = [
                i
                for i in cross
                if min(np.abs(eb - pb[i]).min(), np.abs(ea - pa[i]).min(), np.abs(ea - pb[i]).min()) <= tol
            ]
            edges = f"{what} bin edges"
        if not len(cross) or len(near) != len(cross):
            return []
        return [f"{docs[i]}/{fields[i]} P(error) {pb[i]:.12g} -> {pa[i]:.12g} ({edges})" for i in near]

    def __call__(self, d: Difference) -> Sequence[str]:
        parts = Path(d.file).parts
        if len(parts) < 5 or parts[3] != "metrics" or Path(d.file).stem not in ("calibration", "reliability"):
            return []
        key = dict(part.split("=", 1) for part in d.key.replace("\\|", "|").split(", ") if "=" in part)
        if not {"level", "scorer", "method"} <= key.keys():
            return []
        scorer_key, method, run = f"{key['level']}:{key['scorer']}", key["method"], parts[2]
        column = d.column
        if Path(d.file).stem == "reliability" or column in ("ece_mass", "ece_debiased"):
            return self.items(run, scorer_key, method, "mass")
        if column in ("ece_width", "mce"):
            return self.items(run, scorer_key, method, "width")
        if column.startswith("review_share") or column == "realised_recall":
            return self.items(run, scorer_key, method, "review")
        return []


def structure_items(explain: Explainer, d: Difference) -> list[str]:
    """A reliability table with rows on one side only: the items that emptied or filled a bin."""
    found = re.findall(r"level=(\w+), scorer=(.+?), method=([\w-]+), bin=\d+", d.detail)
    run = Path(d.file).parts[2]
    out: list[str] = []
    for level, scorer, method in dict.fromkeys(found):
        items = explain.items(run, f"{level}:{scorer}", method, "mass")
        if not items:
            return []
        out += items
    return out


def remake(tree: Path, copy: Path, commands: Sequence[str], out: Path) -> None:
    """``commands`` on the run copy with ``tree``'s code, tables into ``out``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore", "MPLBACKEND": "Agg"}
    for command in commands:
        argv = [sys.executable, "-m", "construct_eval.cli", command, "--run", str(copy), "--out", str(out)]
        subprocess.run([*argv, "--figures", "none"], cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)


def cell(path: Path, row: int | None, column: str) -> str | None:
    """A CSV cell (a Markdown table's cell read from its CSV twin), or None."""
    csv_path = path.with_suffix(".csv")
    if row is None or not csv_path.exists():
        return None
    with csv_path.open() as fh:
        rows = list(csv.DictReader(fh))
    return rows[row - 1].get(column) if 0 < row <= len(rows) else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", default="", help="run folder names (default: those whose calibration has beta)")
    parser.add_argument("--stored", default="HEAD", help="the commit whose run files and tables are checked")
    parser.add_argument("--before", default=BEFORE, help="the code the stored calibration tables were made with")
    parser.add_argument("--commands", default="calibrate,evaluate")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "check-stored-tables")
    parser.add_argument(
        "--repo", type=Path, default=ROOT, help="the git checkout (when this copy is a snapshot of one)"
    )
    parser.add_argument(
        "--compare-only", action="store_true", help="compare what an earlier check left in --work, remaking nothing"
    )
    args = parser.parse_args()
    runs = [r for r in args.runs.split(",") if r] or runs_with_beta(args.stored, args.repo)
    commands = args.commands.split(",")
    tree = args.work / f"code-{args.before}"  # the package as --before committed it
    copies = [args.work / "runs" / "results" / "runs" / run for run in runs]
    if not args.compare_only:
        shutil.rmtree(args.work, ignore_errors=True)
        copies = [committed_run(args.stored, run, args.work / "runs", args.repo) for run in runs]
        package = subprocess.run(
            ["git", "-C", str(args.repo), "archive", args.before, "construct_eval"], check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(package)) as tar:
            tar.extractall(tree, filter="data")
        for copy in copies:
            remake(ROOT, copy, commands, copy / "remade")
            remake(tree, copy, commands, copy / "remade-before")
            print(f"{copy.name}: {', '.join(commands)} remade with this code and {args.before}'s", flush=True)
    for side in ("before", "after"):  # the stored tables and the remade ones, the same file names
        shutil.rmtree(args.work / side, ignore_errors=True)
        for copy in copies:
            for table in sorted((copy / "remade" / "metrics").iterdir()):
                source = copy / "metrics" / table.name if side == "before" else table
                dest = args.work / side / "results" / "runs" / copy.name / "metrics" / table.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                if source.exists():
                    shutil.copy(source, dest)
    explain = None
    if "calibrate" in commands:
        kept = args.work / "before.pkl", args.work / "after.pkl"
        if args.compare_only and all(p.exists() for p in kept):
            before, after = (pickle.loads(p.read_bytes()) for p in kept)
        else:
            before, after = predictions(tree, copies, kept[0]), predictions(ROOT, copies, kept[1])
        explain = Explainer(before, after)
    report = compare_trees(args.work / "before", args.work / "after", TOLERANCE, explain)
    print(report.text())
    unexplained = []
    for d in report.failing:
        run_dir = next(c for c in copies if c.name == Path(d.file).parts[2])
        name = Path(d.file).name
        if d.kind is Kind.STRUCTURE and explain is not None and (items := structure_items(explain, d)):
            print(
                f"explained structure difference (items near equal-mass bin edges): {d.file}; items: {', '.join(items)}"
            )
            continue
        if d.kind is Kind.BEYOND and Path(d.file).stem == "reliability" and explain is not None:
            items = explain(replace_kind(d))  # a bin's own numbers move with the items that changed bins
            if items:
                print(f"explained bin value: {d.line()}")
                continue
        made_before = cell(run_dir / "remade-before" / "metrics" / name, d.row, d.column)
        if made_before is not None and made_before == cell(run_dir / "remade" / "metrics" / name, d.row, d.column):
            print(f"not this change ({args.before}'s code here makes the same cell): {d.line()}")
            continue
        unexplained.append(d)
    for d in unexplained:
        print(f"UNEXPLAINED: {d.line()}")
    print(f"{len(unexplained)} differences unexplained" if unexplained else "every difference explained")
    return 1 if unexplained else 0


def replace_kind(d: Difference) -> Difference:
    """A full-precision number of a reliability bin (its mean, observed rate, interval) read as that
    bin's printed cells are: moved by the items that changed bins."""
    from dataclasses import replace

    return replace(d, kind=Kind.UNEXPLAINED)


if __name__ == "__main__":
    sys.exit(main())
