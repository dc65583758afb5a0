"""The paper's figure set from recorded runs (``construct-eval figures``): one message a figure.

Main figures, for the questions the package exists for (datasets with at least
:data:`~construct_eval.analysis.figure_data.MIN_CLASS` wrong and right items at the level):

- ``detect_document``, ``detect_field``: how well each score finds wrong documents and wrong
  fields, against the field prior (uses the labels) and the generator's token log-probs;
- ``meaning_ratings``: what each value of the judge's written rating means;
- ``order_shift``: does the prompt order sway the judge;
- ``review_document``, ``review_field``: what a review budget buys.

Appendix figures (``appx_*``) hold the rest: the datasets too small to mean anything (marked),
the other prompt orders, the combinations, other forms of a score, AUPRC, reliability diagrams.
No panel draws more than :data:`~construct_eval.analysis.style.MAX_SERIES` series; a group with
more is split into numbered figures. Every figure is saved as PDF, SVG and 300-dpi PNG
(byte-identical for identical inputs) with its numbers as LaTeX and CSV tables; ``figures.md``
says what each file shows and ``manifest.json`` maps each short file name to its message, its
datasets, the scores it draws (internal name -> label shown) and the run files (and hashes) it
was made from. :func:`build_figures` makes the figures without writing anything (the
readability tests check each).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from construct_eval.analysis import figure_data as fd
from construct_eval.analysis import figure_tables as ft
from construct_eval.analysis import paper_plots as pp
from construct_eval.analysis.style import MAX_SERIES, PNG_DPI, save_all, venue_style

MAX_NAME = 40
"""The longest file stem the set writes (the manifest maps each to what it shows)."""
MAX_PANELS = 9
"""Panels of a meaning or reliability figure before it continues in a numbered figure."""


@dataclass
class PaperFigure:
    """A figure of the set with what the manifest says about it."""

    name: str
    figure: Figure
    style: dict[str, Any]
    what: str
    inputs: list[Path]
    appendix: bool = False
    datasets: list[str] = field(default_factory=list)
    scorers: dict[str, str] = field(default_factory=dict)  # internal name -> label shown


def _names(base: str, n: int) -> list[str]:
    names = [base if k == 0 else f"{base}_{k + 1}" for k in range(n)]
    for name in names:
        if len(name) > MAX_NAME:
            raise ValueError(f"figure name {name!r} is longer than {MAX_NAME} characters")
    return names


def _scorers(rows: Iterable[Any]) -> dict[str, str]:
    """The manifest's scorer map: internal name -> the label its row or panel carries in the figure
    (:func:`paper_plots.row_labels`: one score under two internal names on two datasets is one row)."""
    return {str(k): v for k, v in pp.row_labels(list(rows)).items()}


def _split_by_power(estimates: Sequence[fd.Estimate]) -> tuple[list[str], list[str]]:
    datasets = list(dict.fromkeys(e.dataset for e in estimates))
    powered = [d for d in datasets if fd.powered(e for e in estimates if e.dataset == d)]
    return powered, [d for d in datasets if d not in powered]


def _detection_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    out = []
    inputs = [r / "metrics" / "detection.csv" for r in run_dirs]
    for metric in ("auroc", "auprc"):
        estimates = [e for r in run_dirs for e in fd.read_detection(r, metric)]
        for level in ("document", "field"):
            chosen = [e for e in estimates if e.level == level]
            if not chosen:
                continue
            powered, small = _split_by_power(chosen)
            gran = {d: fd.panel_granularity(e for e in chosen if e.dataset == d) for d in powered + small}
            group_of = {(e.dataset, e.scorer): fd.group(e.scorer, gran[e.dataset]) for e in chosen}
            unit = "documents" if level == "document" else "fields"
            plans: list[tuple[str, str, list[str], str, bool]] = []
            if metric == "auroc":
                plans.append((f"detect_{level}", "main", powered, f"how well each score finds wrong {unit}", False))
                plans.append((f"appx_detect_{level}_small", "main", small,
                              f"as detect_{level}, on the datasets too small to mean anything", True))  # fmt: skip
                for g in ("orders", "combinations", "other"):
                    what = {"orders": "under other prompt orders (default order for reference)",
                            "combinations": "combined scores", "other": "other forms of each score"}[g]  # fmt: skip
                    plans.append((f"appx_{g}_{level}", g, powered + small, f"AUROC for wrong {unit}: {what}", True))
            else:
                plans.append((f"appx_auprc_{level}", "main", powered, f"AUPRC for wrong {unit}, main scores", True))
            for base, g, datasets, what, appendix in plans:
                rows = [e for e in chosen if e.dataset in datasets and group_of[(e.dataset, e.scorer)] == g]
                if not rows:
                    continue
                scorers = sorted(dict.fromkeys(e.scorer for e in rows), key=fd.order_key)
                if g == "orders":  # the default order beside the others, as the reference
                    ref = [e for e in chosen if e.dataset in {r.dataset for r in rows}
                           and fd.role(e.scorer) in ("judge", "expected") and group_of[(e.dataset, e.scorer)] == "main"]  # fmt: skip
                    rows, scorers = ref + rows, [*sorted({e.scorer for e in ref}, key=fd.order_key), *scorers]
                present = {d: {e.scorer for e in rows if e.dataset == d} for d in datasets}
                parts = fd.chunks(scorers, MAX_SERIES, present)
                for name, part in zip(_names(base, len(parts)), parts, strict=True):
                    mine = [e for e in rows if e.scorer in part]
                    mine.sort(key=lambda e: (part.index(e.scorer), e.dataset))
                    sets = list(dict.fromkeys(e.dataset for e in sorted(mine, key=lambda e: datasets.index(e.dataset))))
                    mine.sort(key=lambda e: sets.index(e.dataset))
                    style = venue_style(venue, column, ncols=min(len(sets), pp.PANELS_PER_ROW + 1))
                    fig = pp.forest_figure(mine, metric=metric, style=style, granularity=gran,
                                           small=[d for d in sets if d in small])  # fmt: skip
                    out.append(PaperFigure(name, fig, style, what, inputs, appendix, sets, _scorers(mine)))
    return out


def _review_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    out = []
    inputs = [r / "metrics" / "detection.csv" for r in run_dirs]
    for level in ("document", "field"):
        rows = fd.review_rows(run_dirs, level)
        estimates = [e for r in run_dirs for e in fd.read_detection(r) if e.level == level]
        if not rows or not estimates:
            continue
        powered, _ = _split_by_power(estimates)
        gran = {d: fd.panel_granularity(e for e in estimates if e.dataset == d) for d in powered}
        chosen = [r for r in rows if r["dataset"] in powered and fd.group(r["scorer"], gran[r["dataset"]]) == "main"]
        scorers = sorted(dict.fromkeys(r["scorer"] for r in chosen), key=fd.order_key)
        present = {d: {r["scorer"] for r in chosen if r["dataset"] == d} for d in powered}
        parts = fd.chunks(scorers, MAX_SERIES, present)
        unit = "documents" if level == "document" else "fields"
        for name, part in zip(_names(f"review_{level}", len(parts)), parts, strict=True):
            mine = [r for r in chosen if r["scorer"] in part]
            if not mine:
                continue
            sets = [d for d in powered if any(r["dataset"] == d for r in mine)]
            style = venue_style(venue, column, ncols=min(len(sets), pp.PANELS_PER_ROW + 1))
            fig = pp.review_figure(mine, level=level, style=style, granularity=gran)
            what = f"what a review budget buys: wrong {unit} found when the lowest-scored are reviewed first"
            out.append(PaperFigure(name, fig, style, what, inputs, False, sets, _scorers(mine)))
    return out


def _meaning_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    tables = [t for r in run_dirs for t in fd.value_tables(r)]
    if not tables:
        return []
    estimates = [e for r in run_dirs for e in fd.read_detection(r)]
    power = {(t.dataset, t.level): fd.powered(e for e in estimates if (e.dataset, e.level) == (t.dataset, t.level))
             for t in tables}  # fmt: skip
    main = [t for t in tables if power[(t.dataset, t.level)] and fd.group(t.scorer) == "main"]
    rest = [t for t in tables if t not in main]
    small = [d for (d, _), ok in power.items() if not ok]
    out = []
    for base, chosen, appendix, what in (
        ("meaning_ratings", main, False, "what each value of the judge's written rating means"),
        ("appx_meaning", rest, True, "what each rating value means: other orders, field minima, small datasets"),
    ):
        parts = [chosen[i : i + MAX_PANELS] for i in range(0, len(chosen), MAX_PANELS)]
        for name, part in zip(_names(base, len(parts)), parts, strict=True):
            style = venue_style(venue, column, ncols=min(len(part), pp.PANELS_PER_ROW + 1))
            fig = pp.meaning_figure(part, style=style, small=small)
            sets = list(dict.fromkeys(t.dataset for t in part))
            out.append(PaperFigure(name, fig, style, what, [t.path for t in part], appendix, sets,
                                   _scorers(part)))  # fmt: skip
    return out


def _order_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    by_value, inputs = {}, []
    for value in ("rating", "expected_rating"):
        rows, paths = fd.bias_rows(run_dirs, value)
        by_value[value], inputs = rows, inputs + paths
    runs = list(dict.fromkeys(r["run"] for rows in by_value.values() for r in rows))
    if not runs:
        return []
    estimates = [e for r in run_dirs for e in fd.read_detection(r) if e.level == "document"]
    powered = [r for r in runs if fd.powered(e for e in estimates if e.dataset == r)]
    out = []
    for base, chosen, appendix, what in (
        ("order_shift", powered, False, "does the prompt order sway the judge"),
        ("appx_order_small", [r for r in runs if r not in powered], True,
         "prompt order on the datasets too small to mean anything"),
    ):  # fmt: skip
        keys = list(
            dict.fromkeys((r["run"], r["variant_b"]) for v in by_value.values() for r in v if r["run"] in chosen)
        )
        parts = fd.chunks([f"{k[0]}\t{k[1]}" for k in keys], MAX_SERIES)
        for name, part in zip(_names(base, len(parts)), parts, strict=True):
            if not part:
                continue
            picked = {tuple(p.split("\t")) for p in part}
            mine = {v: [r for r in rows if (r["run"], r["variant_b"]) in picked] for v, rows in by_value.items()}
            style = venue_style(venue, column, ncols=4)
            fig = pp.order_figure(mine, style=style)
            sets = list(dict.fromkeys(k[0] for k in keys if f"{k[0]}\t{k[1]}" in part))
            out.append(PaperFigure(name, fig, style, what, inputs, appendix, sets))
    return out


def _reliability_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    bins = fd.reliability_bins(run_dirs)
    estimates = [e for r in run_dirs for e in fd.read_detection(r)]
    inputs = [r / "metrics" / "reliability.csv" for r in run_dirs]
    out = []
    for level in ("document", "field"):
        mine = [e for e in estimates if e.level == level]
        sets = list(dict.fromkeys(e.dataset for e in mine))
        powered = [d for d in sets if fd.powered(e for e in mine if e.dataset == d)]
        gran = {d: fd.panel_granularity(e for e in mine if e.dataset == d) for d in sets}
        chosen = [
            b for b in bins
            if b["level"] == level and b["dataset"] in powered and b["method"] in ("isotonic", "platt")
            and fd.group(b["scorer"], gran[b["dataset"]]) == "main" and fd.role(b["scorer"]) != "prior"
        ]  # fmt: skip
        pairs = sorted(dict.fromkeys((b["scorer"], b["dataset"]) for b in chosen),
                       key=lambda p: (fd.order_key(p[0]), powered.index(p[1])))  # fmt: skip
        parts = [pairs[i : i + MAX_PANELS] for i in range(0, len(pairs), MAX_PANELS)]
        for name, part in zip(_names(f"appx_reliability_{level}", len(parts)), parts, strict=True):
            picked = set(part)
            these = [b for b in chosen if (b["scorer"], b["dataset"]) in picked]
            these.sort(key=lambda b: part.index((b["scorer"], b["dataset"])))
            style = venue_style(venue, column, ncols=min(len(part), pp.PANELS_PER_ROW + 1))
            fig = pp.reliability_grid(these, style=style)
            what = f"out-of-fold reliability of the main scores, {level}s"
            out.append(PaperFigure(name, fig, style, what, inputs, True, list(dict.fromkeys(d for _, d in part)),
                                   _scorers(these)))  # fmt: skip
    return out


def build_figures(runs: Iterable[str | Path], *, venue: str = "neurips", column: str = "full") -> list[PaperFigure]:
    """Every figure of the set for ``runs``, drawn, not written."""
    run_dirs = [Path(r) for r in runs]
    for r in run_dirs:
        fd.detection_rows(r)  # a clear error naming the run that was never evaluated
    return [
        *_detection_figures(run_dirs, venue, column),
        *_meaning_figures(run_dirs, venue, column),
        *_order_figures(run_dirs, venue, column),
        *_review_figures(run_dirs, venue, column),
        *_reliability_figures(run_dirs, venue, column),
    ]


# --------------------------------------------------------------------------- writing


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_files() -> tuple[str, ...]:
    """What the manifest hashes from each run: its description and labels, and every file the
    scorer registry's scorers read rows or costs from."""
    from construct_eval import scorer_registry

    return ("run.json", "labels.jsonl", *(f"{f}.jsonl" for f in scorer_registry.run_files() if f != "labels"))


"""What the best marks read when they recompute a paired comparison from a run's rows."""


class _Manifest:
    """Which run files (and their hashes) each written file came from, and what it shows."""

    def __init__(self, out: Path, command: str, runs: Sequence[Path]):
        self.out, self.command, self.runs = out, command, runs
        self.entries: dict[str, dict[str, Any]] = {}
        self._hashes: dict[Path, str] = {}

    def _inputs(self, paths: Iterable[Path]) -> dict[str, str]:
        found = {}
        for p in sorted(set(paths)):
            if p.exists():
                if p not in self._hashes:
                    self._hashes[p] = _sha256(p)
                found[str(p)] = self._hashes[p]
        return found

    def add(self, written: Iterable[Path], inputs: Iterable[Path], what: str, **about: Any) -> None:
        sources = self._inputs(inputs)
        for path in written:
            self.entries[path.name] = {"what": what, **about, "sha256": _sha256(path), "inputs": sources}

    def write(self) -> Path:
        path = self.out / "manifest.json"
        body = {
            "command": self.command,
            "runs": [str(r) for r in self.runs],
            "files": dict(sorted(self.entries.items())),
        }
        path.write_text(json.dumps(body, indent=1) + "\n")
        return path


def paper_figures(
    runs: Iterable[str | Path],
    out: str | Path,
    *,
    venue: str = "neurips",
    column: str = "full",
    command: str = "",
) -> list[Path]:
    """Every paper figure and table for ``runs`` into ``out``: figures as PDF, SVG and PNG,
    tables as LaTeX and CSV, ``figures.md`` saying what each is and ``manifest.json`` listing
    what each file shows and the run files it was made from, with their hashes, and the command."""
    from construct_eval.analysis.collect import collect
    from construct_eval.data.runs import RunDir

    run_dirs = [Path(r) for r in runs]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = _Manifest(out, command, run_dirs)
    written: list[Path] = []
    main_notes: list[str] = []
    appx_notes: list[str] = []
    for f in build_figures(run_dirs, venue=venue, column=column):
        paths = save_all(f.figure, out / f.name, f.style)
        manifest.add(paths, f.inputs, f.what, appendix=f.appendix, datasets=f.datasets, scorers=f.scorers)
        written += paths
        (appx_notes if f.appendix else main_notes).append(f"- `{f.name}`: {f.what} ({', '.join(f.datasets)})")
    detection_inputs = [r / "metrics" / "detection.csv" for r in run_dirs]
    raw_inputs = [r / name for r in run_dirs for name in run_files()]
    items_of = {r.name: collect(RunDir(r)) for r in run_dirs}
    tables: list[tuple[list[Path], list[Path], str]] = []
    for metric in ("auroc", "auprc"):
        for level in ("document", "field"):
            paths = ft.detection_tables(run_dirs, metric, level, out, items_of)
            tables.append((paths, [*detection_inputs, *raw_inputs], f"{metric.upper()} per score, {level}s, every row"))
    for level in ("document", "field"):
        rows = fd.review_rows(run_dirs, level)
        if rows:
            tables.append((ft.review_tables(rows, level, out), detection_inputs, f"review budgets, {level}s"))
    values = [t for r in run_dirs for t in fd.value_tables(r)]
    if values:
        tables.append((ft.meaning_tables(values, out), [t.path for t in values], "what each rating value means"))
    for value in ("rating", "expected_rating"):
        rows, inputs = fd.bias_rows(run_dirs, value)
        if rows:
            tables.append((ft.bias_tables(rows, out / f"table_bias_{value}", value), inputs, f"order shifts, {value}"))
    table_notes = []
    for paths, inputs, what in tables:
        if paths:
            manifest.add(paths, inputs, what)
            written += paths
            table_notes.append(f"- {', '.join(f'`{p.name}`' for p in paths)}: {what}")
    head = [
        "# Paper figures",
        "",
        f"Made by `{command or 'construct_eval.analysis.figures.paper_figures'}` from the stored tables of:",
        *(f"- `{r}`" for r in run_dirs),
        "",
        f"Venue `{venue}`, `{column}` width; PDF and SVG (TrueType fonts), PNG at {PNG_DPI} dpi. `manifest.json`",
        "maps each file to what it shows, its datasets, the scores it draws (internal name -> label) and",
        "the run files (with their hashes) it was made from.",
        f"Main figures hold the datasets with at least {fd.MIN_CLASS} wrong and {fd.MIN_CLASS} right items at the",
        'level; the others are in the appendix figures, marked "too few to judge". Hollow markers and daggers:',
        'underpowered rows (fewer than 10 of a class, or an AUROC interval wider than 0.3). "flat": a',
        "rating that does not vary. Grey: baselines that use the labels. Fields are top-level fields, or",
        "leaves where a dataset's panel says so (the granularity with more items of the smaller class).",
        f"At most {MAX_SERIES} series a panel; every row of every score is in the tables.",
        "",
        "## Main figures",
        "",
        *main_notes,
        "",
        "## Appendix figures",
        "",
        *appx_notes,
        "",
        "## Tables",
        "",
        "Bold in a table: better than the runner-up by a paired difference that excludes zero after Holm",
        "correction across the table.",
        "",
        *table_notes,
    ]
    (out / "figures.md").write_text("\n".join(head) + "\n")
    manifest.write()
    return written
