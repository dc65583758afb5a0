"""Paper figures from recorded runs: the figure a paper shows, in the form a venue takes.

Every figure is drawn from the tables the analyses stored in each run's ``metrics/`` folder
(``construct-eval evaluate``, ``calibrate``, ``bias``), never from numbers typed in, and
saved three ways: vector PDF and SVG, and a 300-dpi PNG. Sizes and font sizes follow the
venue (NeurIPS, ICML, ICLR through ``tueplots``; ACL from its style file's text and column
widths), one column or the full text width. Fonts are embedded as TrueType (``pdf.fonttype
42``), not Type 3, in a serif face matplotlib ships (DejaVu Serif: these machines have neither
Times nor LaTeX). Colours are the Okabe-Ito palette, colour-blind safe, keyed by scorer family,
so a scorer keeps its colour in every figure. A ``figures.md`` beside them says which runs and
command made them.

- :func:`forest_figure`: AUROC (or AUPRC, with the prevalence marked) with 95% document-bootstrap
  intervals, scorers as rows and datasets as panels, per level; underpowered rows drawn hollow;
  label-using baselines in grey;
- :func:`bias_figure`: the paired shift of the rating (or expected rating) under each prompt
  order, with intervals, per run;
- :func:`meaning_figure`: for each rating value the observed error rate with its Wilson
  interval, the naive reading and the out-of-fold isotonic and Platt maps.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from cycler import cycler
from matplotlib.figure import Figure

OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")
"""Okabe & Ito (2008), colour-blind safe; grey is kept for baselines that use labels."""
BASELINE_GREY = "#999999"
FAMILY_COLOURS = {
    "judge": OKABE_ITO[4],
    "p-correct": OKABE_ITO[0],
    "token_logprob": OKABE_ITO[5],
    "consistency": OKABE_ITO[2],
    "reflection": OKABE_ITO[6],
    "tlm": OKABE_ITO[1],
    "combo": OKABE_ITO[7],
}
FORMATS = ("pdf", "svg", "png")
PNG_DPI = 300

# ACL's style file: \textwidth 455.24411pt, \columnwidth 219.08614pt; text in 11pt
_ACL_WIDTH_IN = {"full": 455.24411 / 72.27, "half": 219.08614 / 72.27}
VENUES = ("neurips", "icml", "iclr", "acl")


def scorer_family(name: str) -> str:
    """The family a scorer's colour is keyed by: "judge" for every judge rating, etc."""
    if name.startswith(("field-prior", "fitted")):
        return "baseline"
    for family in FAMILY_COLOURS:
        if name.startswith(family):
            return family
    return "other"


def colour(name: str) -> str:
    family = scorer_family(name)
    if family == "baseline":
        return BASELINE_GREY
    return FAMILY_COLOURS.get(family, OKABE_ITO[3])


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
            "savefig.dpi": PNG_DPI,
            "axes.prop_cycle": cycler(color=list(OKABE_ITO)),
        }
    )
    return style


def save_all(fig: Figure, stem: Path, style: Mapping[str, Any]) -> list[Path]:
    """``stem``.pdf, .svg and a 300-dpi .png, saved under ``style`` (font embedding is read at save time)."""
    import matplotlib

    stem.parent.mkdir(parents=True, exist_ok=True)
    out = []
    with matplotlib.rc_context(dict(style)):
        for fmt in FORMATS:
            path = stem.with_suffix(f".{fmt}")
            fig.savefig(path, format=fmt, dpi=PNG_DPI if fmt == "png" else None)
            out.append(path)
    return out


# --------------------------------------------------------------------------- reading tables


@dataclass(frozen=True)
class Estimate:
    dataset: str
    level: str
    scorer: str
    value: float
    low: float
    high: float
    n: int
    prevalence: float
    underpowered: bool
    uses_labels: bool


def _float(text: Any) -> float:
    try:
        return float(text) if text not in (None, "") else math.nan
    except ValueError:
        return math.nan


def read_detection(run_dir: Path, metric: str = "auroc") -> list[Estimate]:
    """The stored detection table of a run (``construct-eval evaluate``), one estimate per row."""
    path = Path(run_dir) / "metrics" / "detection.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path}: run `construct-eval evaluate --run {run_dir}` first")
    out = []
    with path.open(newline="") as fh:
        for r in csv.DictReader(fh):
            value = _float(r.get(metric))
            if math.isnan(value):
                continue  # one class only: no detection metric
            out.append(
                Estimate(
                    dataset=Path(run_dir).name,
                    level=r["level"],
                    scorer=r["scorer"],
                    value=value,
                    low=_float(r.get(f"{metric}_low")),
                    high=_float(r.get(f"{metric}_high")),
                    n=int(float(r.get("n") or 0)),
                    prevalence=_float(r.get("prevalence")),
                    underpowered=bool(r.get("underpowered")),
                    uses_labels=str(r.get("uses_labels")).lower() == "true" or scorer_family(r["scorer"]) == "baseline",
                )
            )
    return out


def short_name(scorer: str, limit: int = 38) -> str:
    """A row label: combinations lose their member list, long names their middle."""
    name = re.sub(r"\[(sec:[^\]]*)\]", lambda m: "[" + m.group(1).replace("sec:r-s-o|fields:", "") + "]", scorer)
    name = re.sub(r"^(combo:rank-mean|fitted-oof-uses-labels)\[.*\]", r"\1[...]", name)
    return name if len(name) <= limit else name[: limit - 3] + "..."


# --------------------------------------------------------------------------- figures


def forest_figure(estimates: Sequence[Estimate], *, metric: str = "auroc", style: Mapping[str, Any]) -> Figure:
    """Scorers as rows, datasets as panels (one level): estimate and 95% interval per row.

    Hollow markers: underpowered rows (few of a class, or a wide interval); grey: baselines
    that use labels. The chance line is 0.5 for AUROC and each panel's prevalence for AUPRC.
    """
    import matplotlib

    datasets = list(dict.fromkeys(e.dataset for e in estimates))
    scorers = list(dict.fromkeys(e.scorer for e in estimates))
    with matplotlib.rc_context(dict(style)):
        width, _ = matplotlib.rcParams["figure.figsize"]
        height = max(1.6, 0.22 * len(scorers) + 0.8)
        fig = Figure(figsize=(width, height), layout="constrained")
        axes = fig.subplots(1, len(datasets), sharey=True, squeeze=False)[0]
        for ax, dataset in zip(axes, datasets, strict=True):
            rows = {e.scorer: e for e in estimates if e.dataset == dataset}
            for y, scorer in enumerate(scorers):
                e = rows.get(scorer)
                if e is None:
                    continue
                c = colour(scorer)
                if not math.isnan(e.low):
                    ax.plot([e.low, e.high], [y, y], color=c, lw=1.0)
                ax.plot([e.value], [y], marker="o", ms=3.5, color=c, markerfacecolor="white" if e.underpowered else c)
            chance = 0.5 if metric == "auroc" else next(iter(rows.values())).prevalence
            ax.axvline(chance, color="grey", lw=0.6, ls="--")
            ax.set_xlim(0, 1)
            ax.set_title(dataset.replace("-", "-\n", 1) if len(dataset) > 16 else dataset)
            ax.set_xlabel(metric.upper())
        axes[0].set_yticks(range(len(scorers)), [short_name(s) for s in scorers])
        axes[0].invert_yaxis()
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
            labels.append(f"{r['run']}: {str(r['variant_b']).replace('sec:', '')}")
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
        fig = Figure(layout="constrained")
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
        ax.set(xlabel="rating", ylabel="P(error)", ylim=(-0.02, 1.02))
        ax.set_title(title, fontsize=matplotlib.rcParams["axes.titlesize"])
        ax.legend(frameon=False)
    return fig


# --------------------------------------------------------------------------- one command


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def paper_figures(
    runs: Iterable[str | Path],
    out: str | Path,
    *,
    venue: str = "neurips",
    column: str = "full",
    command: str = "",
) -> list[Path]:
    """Every paper figure for ``runs`` into ``out`` (PDF, SVG, PNG), with ``figures.md`` saying what made them."""
    run_dirs = [Path(r) for r in runs]
    out = Path(out)
    written: list[Path] = []
    notes: list[str] = []
    for metric in ("auroc", "auprc"):
        estimates = [e for r in run_dirs for e in read_detection(r, metric)]
        for level in ("document", "field"):
            chosen = [e for e in estimates if e.level == level]
            if not chosen:
                continue
            n_sets = len({e.dataset for e in chosen})
            style = venue_style(venue, column, ncols=n_sets)
            stem = out / f"forest_{metric}_{level}"
            written += save_all(forest_figure(chosen, metric=metric, style=style), stem, style)
            notes.append(f"- `{stem.name}`: {metric.upper()} per scorer, {level} level, {n_sets} datasets")
    for value in ("rating", "expected_rating"):
        suffix = "" if value == "rating" else "_expected_rating"
        rows = []
        for r in run_dirs:
            path = r / "metrics" / f"bias_pairs_doc{suffix}.csv"
            if path.exists():
                rows += [{**row, "run": r.name} for row in _rows(path)]
        if rows:
            stem = out / f"bias_shifts_{value}"
            style = venue_style(venue, column)
            written += save_all(bias_figure(rows, value=value, style=style), stem, style)
            notes.append(f"- `{stem.name}`: paired shifts of the {value} per prompt order")
    for r in run_dirs:
        for path in sorted((r / "metrics").glob("values_*judge*.csv")):
            if "expected" in path.name:
                continue
            rows = _rows(path)
            if len(rows) < 2:
                continue
            stem = out / f"meaning_{r.name}_{path.stem.removeprefix('values_')}"
            title = f"{r.name}: {path.stem.removeprefix('values_')}"
            style = venue_style(venue, "half")
            written += save_all(meaning_figure(rows, title, style=style), stem, style)
            notes.append(f"- `{stem.name}`: what each rating value means")
    head = [
        "# Paper figures",
        "",
        f"Made by `{command or 'construct_eval.figures.paper_figures'}` from the stored tables of:",
        *(f"- `{r}`" for r in run_dirs),
        "",
        f"Venue `{venue}`, `{column}` width; PDF and SVG (TrueType fonts), PNG at {PNG_DPI} dpi.",
        "Hollow markers: underpowered rows (fewer than 10 of a class, or an AUROC interval wider",
        "than 0.3). Grey: baselines that use labels. Colours: Okabe-Ito by scorer family.",
        "",
    ]
    out.mkdir(parents=True, exist_ok=True)
    (out / "figures.md").write_text("\n".join([*head, *notes]) + "\n")
    return written
