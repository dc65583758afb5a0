"""The paper's detection figure (:func:`forest_figure`): how well each score finds wrong items:
AUROC (or AUPRC, with the share wrong marked) with 95% document-bootstrap intervals, scores as rows,
datasets as panels; underpowered rows hollow, baselines that use the labels grey. Its layout is the
figures' shared one (:mod:`.paper_plots`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from construct_eval.display import plots
from construct_eval.display.style import BASELINE_GREY, series_style, wrap
from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.paper.figure_data import Estimate, order_key
from construct_eval.paper.paper_plots import (
    FOREST_MARGIN,
    NARROW_PANEL_IN,
    NOTE_PT,
    UNDER_LINE,
    grid_shape,
    is_narrow,
    legend,
    level_titles,
    new_figure,
    panel_grid,
    panel_title,
    per_row,
    room_under,
    row_granularity,
    row_labels,
    text_width,
    title_row,
    unit_of,
)


def forest_figure(
    estimates: Sequence[Estimate],
    *,
    metric: str = "auroc",
    style: Mapping[str, Any],
    granularity: Mapping[str, str] | None = None,
    small: Sequence[str] = (),
    moved: Mapping[str, set[str]] | None = None,
    too_few: str = "too few: appendix",
    per_line: int | None = None,
    label_width: int = 26,
) -> Figure:
    """Scores as rows, datasets as panels (one level; a dataset and an output kind where the
    estimates carry one): estimate and 95% interval per row.

    Rows are keyed by what a reader sees (a score's label), so a score shown per leaf on one
    dataset and per top-level field on another is one row. Hollow: underpowered (few of a
    class, or a wide interval); "flat": a rating that does not vary (its 0.5 says nothing);
    grey: baselines that use labels; the chance line is 0.5 for AUROC and each panel's share
    wrong for AUPRC (each row's own where the rows' shares differ). A row's n and wrong count
    are written under it where they differ from the panel title's. A score missing on a dataset
    says so in its row: "not run", or ``too_few`` for the labels in ``moved[panel]`` (by default
    "too few: appendix": rows drawn in an appendix figure instead).
    """
    import matplotlib
    from matplotlib.lines import Line2D

    from construct_eval.paper.figure_data import KIND_LABELS

    panels = list(dict.fromkeys(e.panel for e in estimates))
    label_of = row_labels(estimates)
    rows = sorted(set(label_of.values()), key=lambda lab: min(order_key(s) for s, x in label_of.items() if x == lab))
    level = estimates[0].level if estimates else "document"
    granularity = granularity or {}
    moved = moved or {}
    prevalences = {round(e.prevalence, 3) for e in estimates if not math.isnan(e.prevalence)}
    with matplotlib.rc_context(dict(style)):
        line = per_line or _panels_per_line(estimates)
        fig = new_figure(style, forest_height(estimates, line, label_width))
        shown = [wrap(r, label_width) for r in rows]
        axes = panel_grid(fig, len(panels), line, sharex=True, sharey=True)
        flat_notes: list[tuple[Any, Estimate, int, Any, bool]] = []
        count_notes: list[tuple[Any, Estimate, int, Any]] = []
        last_row_counted = False
        for ax, panel in zip(axes, panels, strict=True):
            mine = [e for e in estimates if e.panel == panel]
            dataset, kind = mine[0].dataset, KIND_LABELS.get(mine[0].kind, "")
            first = title_row(mine, lambda e: e.scorer, lambda e: (e.n, e.positives), lambda e: e.uses_labels)
            per_row_chance = metric == "auprc" and len({round(e.prevalence, 3) for e in mine}) > 1
            for e in mine:
                y = rows.index(label_of[e.scorer])
                s = series_style(e.scorer)
                c = BASELINE_GREY if e.uses_labels else s.colour
                if not math.isnan(e.low):
                    ax.plot([e.low, e.high], [y, y], color=c, lw=1.0, clip_on=False)
                (dot,) = ax.plot([e.value], [y], marker=s.marker, ms=3.8, color=c, lw=0, clip_on=False,
                                 markerfacecolor="white" if e.weak else c)  # fmt: skip
                plots.tag(dot, e.scorer)
                if per_row_chance:  # each row's own share wrong
                    ax.plot([e.prevalence] * 2, [y - 0.4, y + 0.4], color="grey", lw=0.6, ls="--")
                counted = (e.n, e.positives) != (first.n, first.positives)
                if e.flat:  # beside its interval, on its own line: above it, it met the row above's count
                    flat_notes.append((ax, e, y, c, counted))
                if counted:  # its own count under it, placed once the panel's width is known
                    count_notes.append((ax, e, y, c))
                    last_row_counted |= y == len(rows) - 1
            for y, lab in enumerate(rows):
                if not any(label_of[e.scorer] == lab for e in mine):
                    why = too_few if lab in moved.get(panel, ()) else _missing_why(lab, dataset)
                    ax.text(0.5, y, why, fontsize=NOTE_PT, ha="center", va="center", color=BASELINE_GREY,
                            bbox=UNDER_LINE, zorder=3)  # fmt: skip
            if not per_row_chance:
                chance = 0.5 if metric == "auroc" else first.prevalence
                ax.axvline(chance, color="grey", lw=0.6, ls="--")
            ax.set_xlim(-FOREST_MARGIN, 1 + FOREST_MARGIN)  # a marker at 0 or 1 sits inside the frame, not on it
            ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
            ax.set_ylim(len(rows) - 0.5, -0.6)
            unit = unit_of(level, row_granularity(first.scorer) or granularity.get(dataset, "top"))
            ax.set_title(panel_title(dataset, first.n, first.positives, unit, small=panel in small, kind=kind,
                                     narrow=is_narrow() or fig.get_figwidth() / line < NARROW_PANEL_IN),
                         fontsize="x-small")  # fmt: skip
            ax.set_xlabel(metric.upper(), fontsize="small")
            ax.tick_params(axis="y", length=0)
            ax.tick_params(axis="x", labelbottom=True)
        for k in range(0, len(axes), line):
            axes[k].set_yticks(range(len(rows)), shown)
        level_titles(axes, line)
        handles = [Line2D([], [], color="grey", lw=0.6, ls="--")]
        per_row_line = metric == "auprc" and len(prevalences) > 1
        labels = ["chance" if metric == "auroc" else "share wrong (chance)" + (", per row" if per_row_line else "")]
        if any(e.weak for e in estimates):
            handles.append(Line2D([], [], color="black", marker="o", ms=3.5, markerfacecolor="white", lw=0))
            labels.append("underpowered")
        if any(e.uses_labels for e in estimates):
            handles.append(Line2D([], [], color=BASELINE_GREY, marker="s", ms=3.5, lw=0))
            labels.append("uses the labels")
        legend(fig, handles, labels)
        if last_row_counted:  # room under the last row for its count, off the frame
            for ax in axes:
                ax.set_ylim(len(rows) - 0.5 + 0.45, -0.6)
        fig.draw_without_rendering()  # the panels at their laid-out widths, for the notes' places
        placed = [_under(ax, e, y, c) for ax, e, y, c in count_notes]  # a note a row: a shared one read as ambiguous
        placed += [_beside(ax, e, y, c, below=not counted) for ax, e, y, c, counted in flat_notes]
        room_under(fig, placed)  # a note under the last row clear of the frame
    return fig


def _missing_why(label: str, dataset: str) -> str:
    """What a forest row says where its score is missing on a dataset: "no generator" for the
    generator's own scores on planted errors (the outputs were not generated, so they cannot
    exist), else "not run" (the score was not asked there)."""
    planted = dataset_label(dataset)[1].startswith("planted")
    return "no generator" if planted and ("token log-probs" in label or "generator" in label) else "not run"


def _under(ax: Any, e: Estimate, y: float, colour: Any) -> Any:
    """A row's own count ("n=246, 123 wrong") under its estimate: centred on it in a wide panel,
    on the panel in a narrow one, and moved in so that it stays inside the frame (on two lines
    where one is wider than the panel). Returns the note."""
    note = f"n={e.n:,}, {e.positives:,} wrong"
    box = ax.get_window_extent()
    want = 0.5 if is_narrow() else e.value
    if text_width(ax, note) + 2 * _clear(ax) >= box.width:
        note = note.replace(", ", ",\n")
    return _hang(ax, note, want, y, colour)


def _clear(ax: Any) -> float:
    """How far (pixels) a note under an estimate keeps from the frame: 5 points, its box's pad included."""
    return 5 * ax.figure.dpi / 72


def _hang(ax: Any, note: str, want: float, y: float, colour: Any) -> Any:
    """``note`` under row ``y``, centred as near ``want`` as the frame allows (:func:`_inside`)."""
    x = _inside(ax, want, note, _clear(ax))
    return ax.annotate(note, (x, y), xytext=(0, -3.5), textcoords="offset points", fontsize=NOTE_PT, ha="center",
                       va="top", color=colour, bbox=UNDER_LINE, zorder=3)  # fmt: skip


def _inside(ax: Any, want: float, note: str, clear: float) -> float:
    """The x (data) nearest ``want`` where ``note``, centred on it, stays ``clear`` pixels inside the
    panel's frame (the panel's middle where it cannot)."""
    box = ax.get_window_extent()
    x0, x1 = ax.get_xlim()
    half = max(text_width(ax, line) for line in note.split("\n")) / 2 + clear
    px = box.x0 + box.width * (want - x0) / (x1 - x0)
    px = min(max(px, box.x0 + half), box.x1 - half) if 2 * half < box.width else box.x0 + box.width / 2
    return x0 + (px - box.x0) / box.width * (x1 - x0)


def _beside(ax: Any, e: Estimate, y: float, colour: Any, *, below: bool = False) -> Any:
    """A flat rating's note ("constant", "99% one value") on its row, beside its interval on the
    side where it fits inside the panel (measured on the laid-out figure); where it fits on neither
    side, under the estimate if the row has no count there (``below``), else without the share
    ("one value") beside it. Returns the note."""
    low, high = (e.value, e.value) if math.isnan(e.low) else (e.low, e.high)
    box = ax.get_window_extent()
    x0, x1 = ax.get_xlim()
    pad = 8 * ax.figure.dpi / 72  # the 4-point offset, the note's box and 2 points clear of the frame
    room = {"right": box.width * (x1 - high) / (x1 - x0) - pad, "left": box.width * (low - x0) / (x1 - x0) - pad}
    note = e.flat_note
    fits = [side for side in ("right", "left") if room[side] >= text_width(ax, note)]
    if not fits and below:
        return _hang(ax, note, e.value, y, colour)
    if not fits:
        note = note.split("% ")[-1]
        fits = [side for side in ("right", "left") if room[side] >= text_width(ax, note)]
    side = fits[0] if fits else max(room, key=room.__getitem__)
    right = side == "right"
    return ax.annotate(note, (high if right else low, y), xytext=(4 if right else -4, 0), textcoords="offset points",
                       fontsize=NOTE_PT, ha="left" if right else "right", va="center", color=colour,
                       bbox=UNDER_LINE, zorder=3)  # fmt: skip


def _panels_per_line(estimates: Sequence[Estimate]) -> int:
    """Panels a row of a forest figure: :func:`per_row`, or at most two where the panels are a
    dataset's output kinds (each dataset's filled and empty fields side by side)."""
    return min(2, per_row()) if any(e.kind for e in estimates) else per_row()


def forest_height(estimates: Sequence[Estimate], per_line: int | None = None, label_width: int = 26) -> float:
    """The height (in) :func:`forest_figure` gives ``estimates`` at the current figure width
    (``per_line`` panels a row, default :func:`_panels_per_line`; row labels wrapped at
    ``label_width`` characters)."""
    label_of = row_labels(estimates)
    rows = sorted(set(label_of.values()), key=lambda lab: min(order_key(s) for s, x in label_of.items() if x == lab))
    lines = [wrap(r, label_width).count("\n") + 1 for r in rows] or [1]
    # rows are evenly spaced: as far apart as the two neighbouring labels with the most lines need (the
    # first and last row have half a row outside them)
    need = max([(a + b) / 2 for a, b in itertools.pairwise(lines)] + [lines[0], lines[-1]])
    counted = any(
        len({(e.n, e.positives) for e in estimates if e.panel == p}) > 1 for p in {e.panel for e in estimates}
    )
    if counted and is_narrow():  # a row's own count hangs on two lines under its marker: room before the next row
        need = max(need, 2.5)
    _, n_rows = grid_shape(len({e.panel for e in estimates}), per_line or _panels_per_line(estimates))
    return n_rows * ((0.1 + 0.08 * need) * len(rows) + 1.05) + 0.45
