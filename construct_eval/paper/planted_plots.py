"""Which planted errors each score finds (the paper figure ``appx_planted_kind``).

Planted error kinds as rows (the near misses first: a digit slipped, a span cut short, an
entity of a neighbouring type...), one panel per dataset with planted errors, each score a
coloured dot with its 95% document-bootstrap interval, a little apart from the others in its
row: the AUROC of that kind's wrong fields ranked against every correct field
(:mod:`~construct_eval.reports.by_kind`) of the same output kind: a filled wrong field against
the correct filled fields, a field left empty by its error against the correct empty ones (pooled,
a score that only tells filled from empty fields would seem to find or miss whole kinds). A kind
with too few errors in a dataset to mean anything
(:func:`~construct_eval.paper.figure_data.row_powered`) says "too few (n=k)" in its row
instead of drawing dots ("k wrong: too few" in a score's own slot where that score alone was
asked on too few, and "on k of m" beside a score asked on k of the row's m errors of the kind);
a kind the dataset never planted says "none planted" ("all left the field empty" where each of
its errors of that kind did). Scores that use the labels are grey, as in the other figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from construct_eval.display import plots
from construct_eval.display.style import (
    BASELINE_GREY,
    NEAR_MISSES,
    PLANTED_LABELS,
    planted_row_label,
    series_style,
    wrap,
)
from construct_eval.display.style import (
    paper_dataset_label as dataset_label,
)
from construct_eval.paper.figure_data import KIND_LABELS, Estimate, order_key, role
from construct_eval.paper.paper_plots import (
    FOREST_MARGIN,
    NOTE_PT,
    UNDER_LINE,
    legend_below,
    new_figure,
    panel_grid,
    per_row,
    row_labels,
)

ROW_IN = 0.07
"""Height (in) a score takes in a kind's row; a row is its scores plus a gap."""


def kinds_in(estimates: Sequence[Estimate]) -> list[tuple[str, str]]:
    """The (planted kind, output kind) rows of ``estimates`` in reading order: planted kinds as
    :data:`PLANTED_LABELS` orders them, the filled fields before the empty ones."""
    present = {(e.planted, e.kind) for e in estimates}
    return [(p, k) for p in PLANTED_LABELS for k in KIND_LABELS if (p, k) in present]


def planted_height(estimates: Sequence[Estimate]) -> float:
    """The height (in) :func:`planted_kind_figure` gives ``estimates`` at the current width."""
    kinds = kinds_in(estimates)
    scorers = set(row_labels(estimates).values())
    n_lines = math.ceil(len({e.dataset for e in estimates}) / per_row())
    return n_lines * (len(kinds) * (ROW_IN * (len(scorers) + 1) + 0.1) + 1.0) + 0.65


def _kind_label(row: tuple[str, str]) -> str:
    return planted_row_label(*row)


def _judged(estimates: Sequence[Estimate]) -> bool:
    """Whether a panel has a judge's score (a dataset may have only the label-free baselines)."""
    return any(role(e.scorer) in ("judge", "expected", "p-correct") for e in estimates)


def planted_kind_figure(estimates: Sequence[Estimate], *, style: Mapping[str, Any]) -> Figure:
    """Kinds down, datasets across, scores as offset dots (see the module doc)."""
    import matplotlib
    from matplotlib.lines import Line2D

    datasets = list(dict.fromkeys(e.dataset for e in estimates))
    kinds = kinds_in(estimates)
    label_of = row_labels(estimates)
    series = sorted(set(label_of.values()), key=lambda lab: min(order_key(s) for s, x in label_of.items() if x == lab))
    step = 0.84 / (len(series) + 1)  # the row's first slot holds its n, the others one score each
    offset = {lab: -0.42 + step * (k + 1.5) for k, lab in enumerate(series)}
    note_at = -0.42 + step * 0.5
    with matplotlib.rc_context(dict(style)):
        fig = new_figure(style, planted_height(estimates))
        axes = panel_grid(fig, len(datasets), sharex=True, sharey=True)
        handles: dict[str, Any] = {}
        hollow = False  # a drawn row too wide to rank by
        for ax, dataset in zip(axes, datasets, strict=True):
            mine = [e for e in estimates if e.dataset == dataset]
            for y, kind in enumerate(kinds):
                rows = [e for e in mine if (e.planted, e.kind) == kind]
                if not rows:
                    elsewhere = any(e.planted == kind[0] for e in mine)  # planted, but in the other output kind
                    why = (
                        ("none left empty" if KIND_LABELS[kind[1]] == "empty fields" else "all left the field empty")
                        if elsewhere
                        else "none planted"
                    )
                    ax.text(0.5, y, why, fontsize=NOTE_PT, ha="center", va="center", color=BASELINE_GREY,
                            bbox=UNDER_LINE)  # fmt: skip
                    continue
                wrong = max(e.positives for e in rows)
                if not any(e.powered for e in rows):
                    ax.text(0.5, y, f"only {wrong:,} wrong: too few", fontsize=NOTE_PT, ha="center", va="center",
                            color=BASELINE_GREY, bbox=UNDER_LINE)  # fmt: skip
                    continue
                for e in rows:
                    lab = label_of[e.scorer]
                    s = series_style(e.scorer)
                    c = BASELINE_GREY if e.uses_labels else s.colour
                    yy = y + offset[lab]
                    if not e.powered:  # this score was asked on too few of the kind's errors here
                        ax.text(0.5, yy, f"{e.positives:,} wrong: too few", fontsize=NOTE_PT, ha="center", va="center",
                                color=c, bbox=UNDER_LINE, zorder=3)  # fmt: skip
                        continue
                    ax.plot([e.low, e.high], [yy, yy], color=c, lw=0.9, clip_on=False)
                    (dot,) = ax.plot(
                        [e.value],
                        [yy],
                        marker=s.marker,
                        ms=3.2,
                        color=c,
                        lw=0,
                        clip_on=False,
                        markerfacecolor="white" if e.weak else c,
                    )  # hollow: too wide to rank by
                    plots.tag(dot, e.scorer)
                    handles.setdefault(lab, Line2D([], [], marker=s.marker, ms=3.2, color=c, lw=0))  # filled
                    hollow = hollow or e.weak
                    if e.positives != wrong:  # asked on fewer of the kind's errors than the row's note says
                        left = e.high > 0.75
                        ax.annotate(f"on {e.positives:,} of {wrong:,}", (e.low if left else e.high, yy), xytext=(-3 if left else 3, 0),
                                    textcoords="offset points", fontsize=NOTE_PT, ha="right" if left else "left",
                                    va="center", color=c, bbox=UNDER_LINE, zorder=3)  # fmt: skip
                    if e.flat:
                        right = e.value < 0.7
                        ax.annotate("constant", (e.value, yy), xytext=(4 if right else -4, 0), textcoords="offset points",
                                    fontsize=NOTE_PT, ha="left" if right else "right", va="center", color=c,
                                    bbox=UNDER_LINE, zorder=3)  # fmt: skip
                ax.text(0.98, y + note_at, f"{wrong:,} wrong", fontsize=NOTE_PT, ha="right", va="center", color="black")
            for y in range(1, len(kinds)):
                ax.axhline(y - 0.5, color="0.85", lw=0.5)
            ax.axvline(0.5, color="grey", lw=0.6, ls="--")
            ax.set_xlim(-FOREST_MARGIN, 1 + FOREST_MARGIN)  # a dot at 1.0 inside the frame, not on it
            ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
            ax.set_ylim(len(kinds) - 0.5, -0.5)
            name, how = dataset_label(dataset)
            filled = max((e.n - e.positives for e in mine if KIND_LABELS[e.kind] == "filled fields"), default=0)
            empty = max((e.n - e.positives for e in mine if KIND_LABELS[e.kind] == "empty fields"), default=0)
            narrow = matplotlib.rcParams["figure.figsize"][0] < 4.5
            counts = (
                f"correct:\n{filled:,} filled,\n{empty:,} empty"
                if narrow
                else f"correct: {filled:,} filled,\n{empty:,} empty"
            )
            judged = "" if _judged(mine) else ("\n(no judge per field)")
            ax.set_title(
                f"{wrap(name, 16 if narrow else 20)}\n{how.split(',')[0]}\n{counts}{judged}", fontsize="x-small"
            )
            ax.set_xlabel("AUROC", fontsize="small")
            ax.tick_params(axis="y", length=0)
            ax.tick_params(axis="x", labelbottom=True)
        line = per_row()
        for k in range(0, len(axes), line):
            axes[k].set_yticks(range(len(kinds)), [wrap(_kind_label(x), 20) for x in kinds])
        legend = [handles[lab] for lab in series if lab in handles]
        names = [lab for lab in series if lab in handles]
        legend.append(Line2D([], [], color="grey", lw=0.6, ls="--"))
        names.append("chance")
        if hollow:
            legend.append(Line2D([], [], color="black", marker="o", ms=3.2, markerfacecolor="white", lw=0))
            names.append("interval wider than 0.3")
        if any(p in NEAR_MISSES for p, _ in kinds):
            legend.append(Line2D([], [], lw=0))
            names.append("* near miss")
        legend_below(fig, legend, names)
    return fig
