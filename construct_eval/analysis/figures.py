"""Paper figures from recorded runs: the figure a paper shows, in the form a venue takes.

Every figure is drawn from the tables the analyses stored in each run's ``metrics/`` folder
(``construct-eval evaluate``, ``calibrate``, ``bias``), never from numbers typed in, and
saved three ways: vector PDF and SVG, and a 300-dpi PNG, byte-identical for identical inputs
(no creation dates, a fixed SVG hash salt). Sizes and font sizes follow the venue (NeurIPS,
ICML, ICLR through ``tueplots``; ACL from its style file's text and column widths), one
column or the full text width. Fonts are embedded as TrueType (``pdf.fonttype 42``), not Type
3, in a serif face matplotlib ships (DejaVu Serif: these machines have neither Times nor
LaTeX). Colours are the Okabe-Ito palette, colour-blind safe, keyed by scorer family, and the
marker by the scorer's name, so a scorer looks the same in every figure whichever subset it
shows. Legends sit outside the axes. Each figure has LaTeX (booktabs) and CSV twins of its
numbers (:mod:`construct_eval.analysis.paper_tables`), and ``manifest.json`` lists every file with the
run files (and their hashes) it read and the command that made it.

- :func:`forest_figure`: AUROC (or AUPRC, with the prevalence marked) with 95% document-bootstrap
  intervals, scorers as rows and datasets as panels, per level; underpowered rows drawn hollow;
  label-using baselines in grey; the n behind each panel in its title;
- :func:`review_figure`: precision and recall when reviewing the lowest-scored 5/10/20/30%;
- :func:`reliability_grid`: out-of-fold reliability diagrams, scorer x dataset;
- :func:`bias_figure`: the paired shift of the rating (or expected rating) under each prompt
  order, with intervals, per run;
- :func:`meaning_figure`: for each rating value the observed error rate with its Wilson
  interval, the naive reading and the out-of-fold isotonic and Platt maps.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from cycler import cycler
from matplotlib.figure import Figure

from construct_eval import scorer_registry
from construct_eval.types import ScorerId

OKABE_ITO = scorer_registry.OKABE_ITO
BASELINE_GREY = scorer_registry.BASELINE_GREY
FORMATS = ("pdf", "svg", "png")
PNG_DPI = 300

# ACL's style file: \textwidth 455.24411pt, \columnwidth 219.08614pt; text in 11pt
_ACL_WIDTH_IN = {"full": 455.24411 / 72.27, "half": 219.08614 / 72.27}
VENUES = ("neurips", "icml", "iclr", "acl")


def palette() -> tuple[dict[str, str], dict[str, str]]:
    """(colour, legend label) per legend group, from the scorer registry, read when drawn so that a
    scorer registered after this module was imported is drawn too."""
    colours: dict[str, str] = {}
    labels: dict[str, str] = {}
    for spec in scorer_registry.specs():
        colours.setdefault(spec.legend_group, spec.colour)
        labels.setdefault(spec.legend_group, spec.legend_label)
    return colours, {**labels, "other": "other"}


def run_files() -> tuple[str, ...]:
    """What the best marks read when they recompute a paired comparison from a run's rows: the run's
    description and labels, and every file the registry's scorers read rows or costs from."""
    return ("run.json", "labels.jsonl", *(f"{f}.jsonl" for f in scorer_registry.run_files() if f != "labels"))


def scorer_family(name: str | ScorerId) -> str:
    """The legend group a scorer is drawn under (:attr:`ScorerSpec.legend_group`): ``judge`` for every
    judge rating, ``baseline`` for those that use the labels, ``other`` for a scorer no one declared."""
    try:
        sid = name if isinstance(name, ScorerId) else ScorerId.parse(name)
    except ValueError:
        return "other"
    spec = scorer_registry.spec_for(sid.family)
    return "other" if spec is None else spec.legend_group


def colour(name: str | ScorerId) -> str:
    return colour_of_family(scorer_family(name))


MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">")


def marker(name: str | ScorerId) -> str:
    """The scorer's declared marker, or one fixed by its name (not by its position in a figure)."""
    try:
        spec = scorer_registry.spec_for(ScorerId.parse(str(name)).family)
    except ValueError:
        spec = None
    if spec is not None and spec.marker:
        return spec.marker
    return MARKERS[zlib.crc32(str(name).encode()) % len(MARKERS)]


def venue_style(venue: str = "neurips", column: str = "full", *, nrows: int = 1, ncols: int = 1) -> dict[str, Any]:
    """rcParams for a venue's size and font sizes, with embeddable fonts that exist here."""
    if venue not in VENUES:
        raise ValueError(f"venue must be one of {VENUES}, not {venue!r}")
    if column not in ("full", "half"):
        raise ValueError("column must be 'full' (text width) or 'half' (one column of two)")
    from tueplots import bundles, fontsizes

    if venue == "icml":
        style = dict(bundles.icml2024(column=column, nrows=nrows, ncols=ncols, usetex=False))
    elif venue in ("neurips", "iclr"):
        bundle = bundles.neurips2024 if venue == "neurips" else bundles.iclr2024
        style = dict(bundle(usetex=False, rel_width=1.0 if column == "full" else 0.5, nrows=nrows, ncols=ncols))
    else:  # ACL: tueplots has no bundle; widths from the style file, 11pt text (captions 10pt)
        width = _ACL_WIDTH_IN[column]
        style = {"figure.figsize": (width, width / ncols * nrows * 0.618), "figure.constrained_layout.use": True}
        style.update(fontsizes.icml2024(default_smaller=-1))
    style.update(
        {
            "font.family": "serif",
            "font.serif": ["DejaVu Serif"],
            "mathtext.fontset": "dejavuserif",
            "text.usetex": False,
            "pdf.fonttype": 42,  # TrueType, not Type 3
            "ps.fonttype": 42,
            "svg.fonttype": "none",
            "svg.hashsalt": "construct-eval",  # stable element ids: identical inputs, identical SVG
            "savefig.dpi": PNG_DPI,
            "axes.prop_cycle": cycler(color=list(OKABE_ITO)),
        }
    )
    return style


_NO_DATES = {"pdf": {"CreationDate": None}, "svg": {"Date": None}, "png": {}}


def save_all(fig: Figure, stem: Path, style: Mapping[str, Any]) -> list[Path]:
    """``stem``.pdf, .svg and a 300-dpi .png, saved under ``style`` (font embedding is read at
    save time), without creation dates so that the same inputs give the same bytes."""
    import matplotlib

    stem.parent.mkdir(parents=True, exist_ok=True)
    out = []
    with matplotlib.rc_context({**style, "svg.hashsalt": "construct-eval"}):
        for fmt in FORMATS:
            path = stem.with_suffix(f".{fmt}")
            fig.savefig(path, format=fmt, dpi=PNG_DPI if fmt == "png" else None, metadata=_NO_DATES[fmt])
            out.append(path)
    return out


# --------------------------------------------------------------------------- reading tables


@dataclass(frozen=True)
class Estimate:
    dataset: str
    level: str
    scorer: ScorerId
    value: float
    low: float
    high: float
    n: int
    prevalence: float
    underpowered: bool
    uses_labels: bool
    positives: int = 0
    documents: int = 0
    flat: bool = False  # a rating that does not vary (``rating_use`` "flat ..."): its AUROC is a coin's


def _float(text: Any) -> float:
    try:
        return float(text) if text not in (None, "") else math.nan
    except ValueError:
        return math.nan


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def detection_rows(run_dir: Path) -> list[dict[str, str]]:
    """The stored detection table of a run (``construct-eval evaluate``)."""
    path = Path(run_dir) / "metrics" / "detection.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path}: run `construct-eval evaluate --run {run_dir}` first")
    return _rows(path)


def _uses_labels(r: Mapping[str, str]) -> bool:
    return str(r.get("uses_labels")).lower() == "true" or scorer_family(r["scorer"]) == "baseline"


def read_detection(run_dir: Path, metric: str = "auroc") -> list[Estimate]:
    """The stored detection table of a run, one estimate of ``metric`` per row that has one; each
    row's scorer name parsed once, here (a name that does not parse is refused, naming the row)."""
    out = []
    for number, r in enumerate(detection_rows(run_dir), start=2):
        value = _float(r.get(metric))
        if math.isnan(value):
            continue  # one class only: no detection metric
        try:
            scorer = ScorerId.parse(r["scorer"])
        except ValueError as exc:
            raise ValueError(f"{Path(run_dir) / 'metrics' / 'detection.csv'}:{number}: {exc}") from None
        out.append(
            Estimate(
                dataset=Path(run_dir).name,
                level=r["level"],
                scorer=scorer,
                value=value,
                low=_float(r.get(f"{metric}_low")),
                high=_float(r.get(f"{metric}_high")),
                n=int(float(r.get("n") or 0)),
                prevalence=_float(r.get("prevalence")),
                underpowered=bool(r.get("underpowered")),
                uses_labels=_uses_labels(r),
                positives=int(float(r.get("positives") or 0)),
                documents=int(float(r.get("documents") or 0)),
                flat=str(r.get("rating_use") or "").startswith("flat"),
            )
        )
    return out


def review_budgets(rows: Sequence[Mapping[str, str]]) -> list[int]:
    """The review budgets (in %) a detection table has intervals for."""
    found = {int(k[len("recall@") : -len("%_low")]) for r in rows for k in r if re.fullmatch(r"recall@\d+%_low", k)}
    return sorted(found)


def short_name(scorer: ScorerId | str, limit: int = 38) -> str:
    """A row label (:attr:`ScorerId.display`), long ones cut in the middle."""
    try:
        name = (scorer if isinstance(scorer, ScorerId) else ScorerId.parse(scorer)).display
    except ValueError:
        name = str(scorer)
    return _cut_middle(name, limit)


def _cut_middle(name: str, limit: int) -> str:
    """``name`` at most ``limit`` characters, its middle cut, so the suffix (``:expected``) stays."""
    if len(name) <= limit:
        return name
    tail = (limit - 3) // 2
    return name[: limit - 3 - tail] + "..." + name[len(name) - tail :]


def row_labels(scorers: Sequence[ScorerId | str], limit: int = 38) -> list[str]:
    """One label per scorer, never the same for two: scorers whose short names coincide (two
    combinations of different scorers, say) are labelled by their full names instead, numbered
    if even those cut to the same text."""
    labels = [short_name(s, limit) for s in scorers]
    clashing = {label for label in labels if labels.count(label) > 1}
    labels = [
        _cut_middle(str(s), limit) if label in clashing else label for s, label in zip(scorers, labels, strict=True)
    ]
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if labels.count(label) == 1 else f"{label} #{seen[label]}")
    return out


PANELS_PER_ROW = 4
"""Datasets side by side before a forest or review figure wraps onto another row."""


def panel_title(dataset: str, n: int, positives: int, unit: str) -> str:
    name = dataset.replace("-", "-\n") if len(dataset) > 14 else dataset
    return f"{name}\nn={n}\n{positives} wrong"


def _panel_grid(fig: Figure, n_panels: int, **kwargs: Any) -> list[Any]:
    """Axes for ``n_panels`` panels, at most :data:`PANELS_PER_ROW` per row; spare cells hidden."""
    ncols = min(n_panels, PANELS_PER_ROW)
    nrows = math.ceil(n_panels / ncols)
    grid = fig.subplots(nrows, ncols, squeeze=False, **kwargs)
    axes = [ax for row in grid for ax in row]
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    return axes[:n_panels]


# --------------------------------------------------------------------------- figures


def _legend_below(fig: Figure, handles: Sequence[Any], labels: Sequence[str], ncols: int = 3) -> None:
    """A legend under the axes, outside every one of them (constrained layout makes room)."""
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(ncols, len(handles)), frameon=False)


def _family_handles(names: Iterable[str], hollow_note: bool) -> tuple[list[Any], list[str]]:
    from matplotlib.lines import Line2D

    families = list(dict.fromkeys(scorer_family(n) for n in names))
    handles: list[Any] = [Line2D([], [], color=colour_of_family(f), marker="o", ms=3.5, lw=1.0) for f in families]
    legend = palette()[1]
    labels = [legend.get(f, f) for f in families]
    if hollow_note:
        handles.append(Line2D([], [], color="black", marker="o", ms=3.5, markerfacecolor="white", lw=0))
        labels.append("underpowered")
    return handles, labels


def colour_of_family(family: str) -> str:
    return palette()[0].get(family, scorer_registry.OTHER_COLOUR)


def forest_figure(estimates: Sequence[Estimate], *, metric: str = "auroc", style: Mapping[str, Any]) -> Figure:
    """Scorers as rows, datasets as panels (one level): estimate and 95% interval per row.

    Hollow markers: underpowered rows (few of a class, or a wide interval); "flat": a rating
    that does not vary (its 0.5 says nothing); grey: baselines that use labels. The chance line is 0.5 for AUROC and each panel's prevalence for AUPRC.
    A scorer missing on a dataset leaves its row empty there (rows and colours do not shift).
    """
    import matplotlib

    datasets = list(dict.fromkeys(e.dataset for e in estimates))
    scorers = list(dict.fromkeys(e.scorer for e in estimates))
    unit = "documents" if estimates and estimates[0].level == "document" else "fields"
    with matplotlib.rc_context(dict(style)):
        width, _ = matplotlib.rcParams["figure.figsize"]
        rows_of_panels = math.ceil(len(datasets) / PANELS_PER_ROW)
        height = rows_of_panels * (0.2 * len(scorers) + 0.9) + 0.6
        fig = Figure(figsize=(width, height), layout="constrained")
        axes = _panel_grid(fig, len(datasets), sharex=True)
        for k, (ax, dataset) in enumerate(zip(axes, datasets, strict=True)):
            rows = {e.scorer: e for e in estimates if e.dataset == dataset}
            for y, scorer in enumerate(scorers):
                e = rows.get(scorer)
                if e is None:
                    continue
                c = colour(scorer)
                if not math.isnan(e.low):
                    ax.plot([e.low, e.high], [y, y], color=c, lw=1.0)
                ax.plot(
                    [e.value], [y], marker=marker(scorer), ms=3.5, color=c,
                    markerfacecolor="white" if e.underpowered else c,
                )  # fmt: skip
                if e.flat:
                    ax.annotate("flat", (e.value, y), xytext=(4, 0), textcoords="offset points",
                                fontsize="xx-small", va="center", color=c)  # fmt: skip
            first = max(rows.values(), key=lambda e: e.n)
            chance = 0.5 if metric == "auroc" else first.prevalence
            ax.axvline(chance, color="grey", lw=0.6, ls="--")
            ax.set_xlim(0, 1)
            ax.set_ylim(len(scorers) - 0.5, -0.5)
            ax.set_title(panel_title(dataset, first.n, first.positives, unit), fontsize="x-small")
            ax.set_xlabel(metric.upper(), fontsize="small")
            if k % PANELS_PER_ROW == 0:
                ax.set_yticks(range(len(scorers)), row_labels(scorers))
            else:
                ax.set_yticks(range(len(scorers)), [])
        _legend_below(fig, *_family_handles(scorers, any(e.underpowered for e in estimates)))
    return fig


def review_figure(rows: Sequence[Mapping[str, Any]], *, level: str, style: Mapping[str, Any]) -> Figure:
    """Precision (top row) and recall (bottom row) when reviewing the lowest-scored share of
    items, per scorer, with document-bootstrap intervals; datasets as columns.

    ``rows``: long rows with dataset, scorer, budget (%), precision/recall and their bounds.
    """
    import matplotlib
    from matplotlib.lines import Line2D

    unit = "documents" if level == "document" else "fields"
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    scorers = list(dict.fromkeys(r["scorer"] for r in rows))
    with matplotlib.rc_context(dict(style)):
        width, _ = matplotlib.rcParams["figure.figsize"]
        fig = Figure(figsize=(width, 3.2 + 0.12 * len(scorers)), layout="constrained")
        axes = fig.subplots(2, len(datasets), sharex=True, sharey="row", squeeze=False)
        for j, dataset in enumerate(datasets):
            mine = [r for r in rows if r["dataset"] == dataset]
            for i, what in enumerate(("precision", "recall")):
                ax = axes[i][j]
                for k, scorer in enumerate(scorers):
                    pts = sorted((r for r in mine if r["scorer"] == scorer), key=lambda r: r["budget"])
                    if not pts:
                        continue
                    x = np.array([r["budget"] for r in pts], dtype=float) + (k - len(scorers) / 2) * 0.25
                    y = np.array([r[what] for r in pts], dtype=float)
                    lo = np.array([r[f"{what}_low"] for r in pts], dtype=float)
                    hi = np.array([r[f"{what}_high"] for r in pts], dtype=float)
                    err = np.clip(np.nan_to_num(np.array([y - lo, hi - y])), 0, None)
                    c = colour(scorer)
                    ax.errorbar(x, y, yerr=err, color=c, marker=marker(scorer), ms=3, lw=0.8, capsize=1.2)
                if i == 0:
                    first = max(mine, key=lambda r: r["n"])
                    ax.set_title(panel_title(dataset, first["n"], first["positives"], unit), fontsize="x-small")
                    ax.axhline(first["prevalence"], color="grey", lw=0.6, ls="--")
                ax.set_ylim(-0.02, 1.02)
            axes[1][j].set_xlabel("% reviewed", fontsize="small")
        axes[0][0].set_ylabel(f"precision:\nreviewed {unit}\nthat are wrong", fontsize="small")
        axes[1][0].set_ylabel(f"recall:\nwrong {unit}\nfound", fontsize="small")
        fig.suptitle(f"Reviewing the lowest-scored {unit} first (95% intervals)", fontsize="small")
        handles = [Line2D([], [], color=colour(s), marker=marker(s), ms=3, lw=0.8) for s in scorers]
        handles.append(Line2D([], [], color="grey", lw=0.6, ls="--"))
        _legend_below(fig, handles, [*row_labels(scorers), "share wrong (no skill)"], ncols=2)
    return fig


def reliability_grid(bins: Sequence[Mapping[str, Any]], *, style: Mapping[str, Any]) -> Figure:
    """Out-of-fold reliability diagrams, one panel per (scorer, dataset) that has one, scorer
    by scorer (a wrapped scorer x dataset grid without its empty cells): the observed error
    rate (Wilson 95%) per equal-mass bin of predicted P(error), isotonic and Platt."""
    import matplotlib
    from matplotlib.lines import Line2D

    pairs = list(dict.fromkeys((b["scorer"], b["dataset"]) for b in bins))
    scorer_order = list(dict.fromkeys(s for s, _ in pairs))
    pairs.sort(key=lambda p: scorer_order.index(p[0]))  # grouped by scorer, first-seen order (stable)
    methods = {"isotonic": OKABE_ITO[0], "platt": OKABE_ITO[2]}
    with matplotlib.rc_context(dict(style)):
        width, _ = matplotlib.rcParams["figure.figsize"]
        ncols = min(len(pairs), PANELS_PER_ROW)
        nrows = math.ceil(len(pairs) / ncols)
        fig = Figure(figsize=(width, nrows * width / ncols * 1.05 + 0.4), layout="constrained")
        axes = _panel_grid(fig, len(pairs), sharex=True, sharey=True)
        for k, (ax, (scorer, dataset)) in enumerate(zip(axes, pairs, strict=True)):
            ax.plot([0, 1], [0, 1], color="grey", lw=0.6, ls="--")
            mine = [b for b in bins if b["scorer"] == scorer and b["dataset"] == dataset]
            for method, c in methods.items():
                pts = [b for b in mine if b["method"] == method]
                if not pts:
                    continue
                x = np.array([_float(b["mean_predicted"]) for b in pts])
                y = np.array([_float(b["observed"]) for b in pts])
                lo = np.array([_float(b["observed_low"]) for b in pts])
                hi = np.array([_float(b["observed_high"]) for b in pts])
                err = np.clip([y - lo, hi - y], 0, None)
                ax.errorbar(x, y, yerr=err, color=c, marker="o", ms=2, lw=0.8, capsize=1)
            n = sum(int(_float(b["n"])) for b in mine if b["method"] == mine[0]["method"])
            ax.set_title(f"{short_name(scorer, 26)}\n{dataset}\nn={n}", fontsize="x-small")
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            if k % ncols == 0:
                ax.set_ylabel("observed error rate", fontsize="x-small")
            if k >= len(pairs) - ncols:
                ax.set_xlabel("predicted P(error)", fontsize="x-small")
        handles = [Line2D([], [], color=c, marker="o", ms=2.5, lw=0.8) for c in methods.values()]
        _legend_below(fig, handles, ["isotonic (out of fold)", "Platt (out of fold)"])
    return fig


def bias_figure(rows: Sequence[Mapping[str, Any]], *, value: str, style: Mapping[str, Any]) -> Figure:
    """Paired shift against the reference order, with its interval, one row per (run, order)."""
    import matplotlib

    with matplotlib.rc_context(dict(style)):
        width, _ = matplotlib.rcParams["figure.figsize"]
        fig = Figure(figsize=(width, max(1.4, 0.25 * len(rows) + 0.7)), layout="constrained")
        ax = fig.subplots()
        labels = []
        for y, r in enumerate(rows):
            shift, low, high = _float(r["mean_shift"]), _float(r["shift_low"]), _float(r["shift_high"])
            ax.plot([low, high], [y, y], color=OKABE_ITO[4], lw=1.0)
            ax.plot([shift], [y], marker="o", ms=3.5, color=OKABE_ITO[4])
            labels.append(f"{r['run']}: {str(r['variant_b']).replace('sec:', '')} (n={r['n']})")
        ax.axvline(0, color="grey", lw=0.6, ls="--")
        ax.set_yticks(range(len(rows)), labels)
        ax.invert_yaxis()
        ax.set_xlabel(f"shift of the {value.replace('_', ' ')} against the default order")
    return fig


def meaning_figure(rows: Sequence[Mapping[str, Any]], title: str, *, style: Mapping[str, Any]) -> Figure:
    """Observed error rate per rating value (Wilson 95%; hollow: fewer than 20 items), with the
    naive reading and the out-of-fold isotonic and Platt maps where the table has them."""
    import matplotlib

    with matplotlib.rc_context(dict(style)):
        width, height = matplotlib.rcParams["figure.figsize"]
        fig = Figure(figsize=(width, height + 0.5), layout="constrained")
        ax = fig.subplots()
        x = np.array([_float(r["value"]) for r in rows])
        y = np.array([_float(r["error_rate"]) for r in rows])
        lo = np.array([_float(r["error_low"]) for r in rows])
        hi = np.array([_float(r["error_high"]) for r in rows])
        few = np.array([str(r.get("few_items")).lower() == "true" for r in rows])
        ax.errorbar(x, y, yerr=np.clip([y - lo, hi - y], 0, None), fmt="none", ecolor="black", lw=0.8, capsize=1.5)
        ax.plot(x[~few], y[~few], "o", color="black", ms=3.5, label="observed")
        ax.plot(x[few], y[few], "o", color="black", markerfacecolor="white", ms=3.5, label="observed (< 20 items)")
        for name, c in (("naive", BASELINE_GREY), ("isotonic", OKABE_ITO[0]), ("platt", OKABE_ITO[2])):
            if rows and all(r.get(name) not in (None, "") for r in rows):
                ax.plot(x, [_float(r[name]) for r in rows], "-", color=c, lw=1.0, label=name)
        n = sum(int(_float(r["n"])) for r in rows)
        ax.set(xlabel="rating", ylabel="observed error rate", ylim=(-0.02, 1.02))
        ax.set_title(f"{title} (n={n})", fontsize=matplotlib.rcParams["axes.titlesize"])
        _legend_below(fig, *ax.get_legend_handles_labels(), ncols=3)
    return fig


# --------------------------------------------------------------------------- one command


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class _Manifest:
    """Which run files (and their hashes) each written file came from."""

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

    def add(self, written: Iterable[Path], inputs: Iterable[Path], what: str) -> None:
        sources = self._inputs(inputs)
        for path in written:
            self.entries[path.name] = {"what": what, "sha256": _sha256(path), "inputs": sources}

    def write(self) -> Path:
        path = self.out / "manifest.json"
        body = {
            "command": self.command,
            "runs": [str(r) for r in self.runs],
            "files": dict(sorted(self.entries.items())),
        }
        path.write_text(json.dumps(body, indent=1) + "\n")
        return path


def _detection_tables(
    run_dirs: Sequence[Path], metric: str, level: str, out: Path, items_of: Mapping[str, Any]
) -> list[Path]:
    """LaTeX and CSV twins of a forest figure's numbers, with best marks."""
    from construct_eval.analysis import paper_tables as pt

    estimates = [e for r in run_dirs for e in read_detection(r, metric) if e.level == level]
    if not estimates:
        return []
    datasets = list(dict.fromkeys(e.dataset for e in estimates))
    scorers = list(dict.fromkeys(e.scorer for e in estimates))
    candidates: dict[tuple[str, str, str], list[tuple[str, float, bool]]] = {}
    for e in estimates:
        if not e.uses_labels:
            key = (e.dataset, level, pt.granularity(e.scorer))
            candidates.setdefault(key, []).append((e.scorer, e.value, e.underpowered))
    marks = pt.best_marks(candidates, items_of, metric=metric)
    cells = {(e.dataset, e.scorer): e for e in estimates}
    long_rows = []
    for e in estimates:
        m = marks.get((e.dataset, level, pt.granularity(e.scorer)))
        best = bool(m and m.is_best and m.top == e.scorer)
        long_rows.append(
            {
                "dataset": e.dataset, "level": level, "scorer": e.scorer, "metric": metric,
                "value": e.value, "low": e.low, "high": e.high, "cell": pt.fmt_estimate(e.value, e.low, e.high),
                "n": e.n, "positives": e.positives, "prevalence": e.prevalence,
                "underpowered": e.underpowered, "flat": e.flat, "uses_labels": e.uses_labels, "best": best,
                "runner_up": m.runner_up if m and m.top == e.scorer else "",
                "difference_vs_runner_up": m.difference if m and m.top == e.scorer else "",
                "difference_low": m.low if m and m.top == e.scorer else "",
                "difference_high": m.high if m and m.top == e.scorer else "",
                "p_holm": m.p_holm if m and m.top == e.scorer else "",
            }
        )  # fmt: skip
    stem = out / f"table_{metric}_{level}"
    written = [pt.write_csv(long_rows, stem.with_suffix(".csv"))]
    unit = "documents" if level == "document" else "fields"
    header = [r"scorer"]
    for d in datasets:
        first = max((e for e in estimates if e.dataset == d), key=lambda e: e.n)
        header.append(rf"{pt.latex_escape(d)} (n={first.n}, {first.positives} wrong)")
    body = []
    for s in scorers:
        label = rf"\texttt{{{pt.latex_escape(short_name(s))}}}" + (r"$^\ddagger$" if any(
            e.uses_labels for e in estimates if e.scorer == s) else "")  # fmt: skip
        row = [label]
        for d in datasets:
            e = cells.get((d, s))
            if e is None:
                row.append("")
                continue
            text = pt.fmt_estimate(e.value, e.low, e.high)
            m = marks.get((d, level, pt.granularity(s)))
            if m and m.is_best and m.top == s:
                text = rf"\textbf{{{text}}}"
            row.append(text + (r"$^\dagger$" if e.underpowered else "") + (" (flat)" if e.flat else ""))
        body.append(row)
    caption = (
        f"{metric.upper()} for finding wrong {unit}, 95% document-bootstrap intervals. Bold: better than the"
        f" runner-up (label-free, powered, same items) by a paired difference whose interval excludes zero"
        f" after Holm correction across the table (alpha {pt.BEST_ALPHA}). Dagger: underpowered."
        " Double dagger: uses the labels (baseline). Flat: a rating that does not vary."
    )
    tex = pt.latex_table(header, body, caption=caption, label=f"tab:{metric}-{level}", escape=False)
    stem.with_suffix(".tex").write_text(tex)
    written.append(stem.with_suffix(".tex"))
    return written


def _review_rows(run_dirs: Sequence[Path], level: str) -> list[dict[str, Any]]:
    rows = []
    for r in run_dirs:
        table = [row for row in detection_rows(r) if row["level"] == level]
        for budget in review_budgets(table):
            for row in table:
                if math.isnan(_float(row.get(f"recall@{budget}%"))):
                    continue
                rows.append(
                    {
                        "dataset": Path(r).name, "level": level, "scorer": row["scorer"], "budget": budget,
                        **{f"{w}{b}": _float(row.get(f"{w}@{budget}%{b}")) for w in ("precision", "recall")
                           for b in ("", "_low", "_high")},
                        "n": int(float(row["n"])), "positives": int(float(row.get("positives") or 0)),
                        "prevalence": _float(row.get("prevalence")), "underpowered": bool(row.get("underpowered")),
                        "uses_labels": _uses_labels(row),
                    }
                )  # fmt: skip
    return rows


def _review_tables(rows: Sequence[Mapping[str, Any]], level: str, out: Path) -> list[Path]:
    from construct_eval.analysis import paper_tables as pt

    stem = out / f"table_review_{level}"
    written = [pt.write_csv(rows, stem.with_suffix(".csv"))]
    budgets = sorted({r["budget"] for r in rows})
    unit = "documents" if level == "document" else "fields"
    for what in ("precision", "recall"):
        keyed = {(r["dataset"], r["scorer"], r["budget"]): r for r in rows}
        pairs = list(dict.fromkeys((r["dataset"], r["scorer"]) for r in rows))
        body = []
        for dataset, scorer in pairs:
            cells = []
            for b in budgets:
                r = keyed.get((dataset, scorer, b))
                cells.append(pt.fmt_estimate(r[what], r[f"{what}_low"], r[f"{what}_high"]) if r else "")
            body.append([dataset, short_name(scorer), *cells])
        meaning = f"share of flagged {unit} that are wrong" if what == "precision" else f"share of wrong {unit} found"
        caption = f"{what.capitalize()} ({meaning}) when reviewing the lowest-scored share of {unit}, 95% intervals."
        header = ["dataset", "scorer", *(f"{b}%" for b in budgets)]
        path = out / f"table_review_{what}_{level}.tex"
        path.write_text(pt.latex_table(header, body, caption=caption, label=f"tab:review-{what}-{level}"))
        written.append(path)
    return written


def _meaning_tables(rows: Sequence[Mapping[str, str]], stem: Path, title: str) -> list[Path]:
    from construct_eval.analysis import paper_tables as pt

    written = [pt.write_csv(rows, stem.with_suffix(".csv"))]
    maps = [m for m in ("naive", "isotonic", "platt") if rows and all(r.get(m) not in (None, "") for r in rows)]
    body = [
        [
            pt.fmt_value(_float(r["value"]), 0), r["n"],
            pt.fmt_estimate(_float(r["error_rate"]), _float(r["error_low"]), _float(r["error_high"])),
            *(pt.fmt_value(_float(r[m])) for m in maps),
        ]
        for r in rows
    ]  # fmt: skip
    header = ["rating", "n", "observed error rate", *maps]
    caption = f"What each rating means: {title}. Wilson 95% intervals; maps fitted out of fold, grouped by document."
    stem.with_suffix(".tex").write_text(pt.latex_table(header, body, caption=caption, label=f"tab:{stem.name}"))
    return [*written, stem.with_suffix(".tex")]


def _bias_tables(rows: Sequence[Mapping[str, Any]], stem: Path, value: str) -> list[Path]:
    from construct_eval.analysis import paper_tables as pt

    written = [pt.write_csv(rows, stem.with_suffix(".csv"))]
    body = [
        [
            r["run"], str(r["variant_b"]).replace("sec:", ""), r["n"],
            pt.fmt_estimate(_float(r["mean_shift"]), _float(r["shift_low"]), _float(r["shift_high"])),
            pt.fmt_value(_float(r["share_changed"])), pt.fmt_value(_float(r.get("wilcoxon_p_holm")), 3),
        ]
        for r in rows
    ]  # fmt: skip
    header = ["run", "order", "n", "mean shift", "share changed", "Wilcoxon p (Holm)"]
    caption = (
        f"Paired shift of the {value.replace('_', ' ')} against the default order, 95% document-bootstrap intervals."
    )
    stem.with_suffix(".tex").write_text(pt.latex_table(header, body, caption=caption, label=f"tab:{stem.name}"))
    return [*written, stem.with_suffix(".tex")]


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
    the run files each was made from, with their hashes, and the command."""
    from construct_eval.analysis.collect import collect
    from construct_eval.data.runs import RunDir

    run_dirs = [Path(r) for r in runs]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = _Manifest(out, command, run_dirs)
    written: list[Path] = []
    notes: list[str] = []
    detection_inputs = [r / "metrics" / "detection.csv" for r in run_dirs]
    raw_inputs = [r / name for r in run_dirs for name in run_files()]
    items_of = {r.name: collect(RunDir(r)) for r in run_dirs}

    def keep(paths: list[Path], inputs: Iterable[Path], what: str) -> None:
        manifest.add(paths, inputs, what)
        written.extend(paths)

    for metric in ("auroc", "auprc"):
        estimates = [e for r in run_dirs for e in read_detection(r, metric)]
        for level in ("document", "field"):
            chosen = [e for e in estimates if e.level == level]
            if not chosen:
                continue
            n_sets = len({e.dataset for e in chosen})
            style = venue_style(venue, column, ncols=n_sets)
            stem = out / f"forest_{metric}_{level}"
            what = f"{metric.upper()} per scorer, {level} level, {n_sets} datasets"
            keep(save_all(forest_figure(chosen, metric=metric, style=style), stem, style), detection_inputs, what)
            tables = _detection_tables(run_dirs, metric, level, out, items_of)
            keep(tables, [*detection_inputs, *raw_inputs], f"{what}: numbers and best marks")
            notes.append(f"- `{stem.name}` ({', '.join(p.name for p in tables)}): {what}")
    for level in ("document", "field"):
        rows = _review_rows(run_dirs, level)
        if not rows:
            continue
        n_sets = len({r["dataset"] for r in rows})
        style = venue_style(venue, column, ncols=n_sets)
        stem = out / f"review_{level}"
        what = f"precision and recall when reviewing the lowest-scored share of {level}s"
        keep(save_all(review_figure(rows, level=level, style=style), stem, style), detection_inputs, what)
        tables = _review_tables(rows, level, out)
        keep(tables, detection_inputs, what)
        notes.append(f"- `{stem.name}` ({', '.join(p.name for p in tables)}): {what}")
    bins = []
    reliability_inputs = [r / "metrics" / "reliability.csv" for r in run_dirs]
    for r in run_dirs:
        path = r / "metrics" / "reliability.csv"
        if path.exists():
            bins += [{**b, "dataset": r.name} for b in _rows(path)]
    for level in ("document", "field"):
        chosen = [b for b in bins if b["level"] == level and scorer_family(b["scorer"]) not in ("combo", "baseline")]
        if not chosen:
            continue
        n_sets = len({b["dataset"] for b in chosen})
        style = venue_style(venue, column, ncols=n_sets)
        stem = out / f"reliability_{level}"
        what = f"reliability diagrams, scorer x dataset, {level} level (out of fold)"
        keep(save_all(reliability_grid(chosen, style=style), stem, style), reliability_inputs, what)
        from construct_eval.analysis import paper_tables as pt

        keep([pt.write_csv(chosen, stem.with_suffix(".csv"))], reliability_inputs, what)
        notes.append(f"- `{stem.name}` (`{stem.name}.csv`): {what}")
    for value in ("rating", "expected_rating"):
        suffix = "" if value == "rating" else "_expected_rating"
        rows, inputs = [], []
        for r in run_dirs:
            path = r / "metrics" / f"bias_pairs_doc{suffix}.csv"
            if path.exists():
                rows += [{**row, "run": r.name} for row in _rows(path)]
                inputs.append(path)
        if rows:
            stem = out / f"bias_shifts_{value}"
            style = venue_style(venue, column)
            what = f"paired shifts of the {value} per prompt order"
            keep(save_all(bias_figure(rows, value=value, style=style), stem, style), inputs, what)
            keep(_bias_tables(rows, out / f"table_bias_{value}", value), inputs, what)
            notes.append(f"- `{stem.name}` (`table_bias_{value}`): {what}")
    for r in run_dirs:
        for path in sorted((r / "metrics").glob("values_*judge*.csv")):
            if "expected" in path.name:
                continue
            rows = _rows(path)
            if len(rows) < 2:
                continue
            name = f"{r.name}_{path.stem.removeprefix('values_')}"
            stem = out / f"meaning_{name}"
            title = f"{r.name}: {path.stem.removeprefix('values_')}"
            style = venue_style(venue, "half")
            what = "what each rating value means"
            keep(save_all(meaning_figure(rows, title, style=style), stem, style), [path], what)
            keep(_meaning_tables(rows, out / f"table_meaning_{name}", title), [path], what)
            notes.append(f"- `{stem.name}` (`table_meaning_{name}`): {what}")
    head = [
        "# Paper figures",
        "",
        f"Made by `{command or 'construct_eval.analysis.figures.paper_figures'}` from the stored tables of:",
        *(f"- `{r}`" for r in run_dirs),
        "",
        f"Venue `{venue}`, `{column}` width; PDF and SVG (TrueType fonts), PNG at {PNG_DPI} dpi; each",
        "figure's numbers as LaTeX (booktabs) and CSV tables; `manifest.json` lists the run files",
        "(with their hashes) each file was made from.",
        "Hollow markers and daggers: underpowered rows (fewer than 10 of a class, or an AUROC interval",
        'wider than 0.3). "flat": a rating that does not vary (fewer than 3 values with 5% of items each).',
        "Grey: baselines that use labels. Colours: Okabe-Ito by scorer family; markers",
        "by scorer. Bold in a table: better than the runner-up by a paired difference that excludes",
        "zero after Holm correction across the table.",
        "",
    ]
    (out / "figures.md").write_text("\n".join([*head, *notes]) + "\n")
    manifest.write()
    return written
