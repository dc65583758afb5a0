"""The paper's figure of what a rating means (:func:`meaning_figure`, :func:`meaning_grid`): what
each rating value means: the observed error rate (Wilson 95%) per value with the number of items
below it, the naive reading and the out-of-fold isotonic and Platt maps. Its layout is the figures'
shared one (:mod:`.paper_plots`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from construct_eval.display import plots
from construct_eval.display.style import BASELINE_GREY, CALIBRATOR_STYLES, keep_together, wrap
from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.paper.figure_data import (
    ONE_VALUE_SHARE,
    READABLE_ITEMS,
    MeaningPanel,
    ValueTable,
    _float,
    out_of_order,
    pct_of,
)
from construct_eval.paper.paper_plots import NOTE_PT, TICK_PT, grid_shape, is_narrow, legend_below, new_figure, unit_of

MEANING_FEW = READABLE_ITEMS
"""A value with fewer items is drawn grey and small (its interval spans most of 0-1): hollow
markers mean "underpowered" in the other figures."""


MEANING_COLUMNS = ("per output, forced", "per output, free", "per filled field, forced")
"""The columns of the meaning figure, in order (one row a dataset)."""


MEANING_ROW_IN = 1.55
"""The height of one dataset's row of the meaning figure (inches)."""


def _draw_meaning(ax: Any, counts: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    """The observed error rate per value (Wilson 95%; grey where a value holds fewer than
    :data:`MEANING_FEW` items), the naive reading, the out-of-fold isotonic and Platt readings and
    the base rate over it (:data:`~construct_eval.display.style.CALIBRATOR_STYLES`); below, the
    items at each value as a number (grey where few)."""
    from construct_eval.display.plots import map_label, tag

    x = np.array([_float(r["value"]) for r in rows])
    y = np.array([_float(r["error_rate"]) for r in rows])
    lo = np.array([_float(r["error_low"]) for r in rows])
    hi = np.array([_float(r["error_high"]) for r in rows])
    n = np.array([_float(r["n"]) for r in rows])
    few = n < MEANING_FEW
    for name in ("naive", "isotonic", "platt"):
        if rows and all(r.get(name) not in (None, "") for r in rows):
            c, ls, mk = CALIBRATOR_STYLES[name]
            xs, ys = x, np.array([_float(r[name]) for r in rows])
            if name == "naive":
                xs, ys = np.arange(1, 11), (10 - np.arange(1, 11)) / 9
            (line,) = ax.plot(xs, ys, color=c, ls=ls, marker=mk, ms=2.0, lw=1.0, label=map_label(name, per_value=True),
                              zorder=3)  # fmt: skip
            tag(line, name)
    if n.sum() > 0:
        c, ls, _ = CALIBRATOR_STYLES["base rate"]
        base = float(np.sum(y * n) / n.sum())
        (line,) = ax.plot([1, 10], [base, base], color=c, ls=ls, lw=0.8, label="base rate (share wrong)", zorder=3.5)
        tag(line, "base rate")
    for mask, colour, size, label in ((~few, "black", 3.2, "observed (Wilson 95%)"),
                                      (few, BASELINE_GREY, 2.2, f"observed, < {MEANING_FEW} items (no interval)")):  # fmt: skip
        if mask.any():
            if colour == "black":  # a value on few items is a dot alone: its interval spans most of the axis
                err = np.clip([y[mask] - lo[mask], hi[mask] - y[mask]], 0, None)
                ax.errorbar(x[mask], y[mask], yerr=err, fmt="none", ecolor=colour, lw=0.7, capsize=1.2, zorder=4)
            (dots,) = ax.plot(x[mask], y[mask], "o", color=colour, ms=size, label=label, zorder=5)
            tag(dots, "observed")
    ax.set_ylim(-0.06, 1.08)  # a share of 0 or 1 drawn inside the frame, not on it
    wide = is_narrow() or (len(n) and float(n.max()) >= 1000)  # a count at 1 or 10 clear of the frame
    ax.set_xlim(*((-0.2, 11.2) if wide else (0.3, 10.7)))
    ticks = [0, 1] if is_narrow() else [0, 0.5, 1]  # in %, as the titles and the caption say a share wrong
    ax.set_yticks(ticks, [f"{100 * t:.0f}" for t in ticks])
    # the items at each value as a row of numbers (grey where few), upright at the notes' size; where
    # neighbouring values would crowd a narrow panel, on two staggered lines
    narrow = is_narrow()
    crowded = narrow and len(x) > 1 and float(np.min(np.diff(np.sort(x)))) < 2
    counts.set_ylim(0, 1)
    for k, (xi, ni, f) in enumerate(zip(x, n, few, strict=True)):
        level = (0.73 if k % 2 == 0 else 0.27) if crowded else 0.5
        counts.text(xi, level, f"{ni:,.0f}", ha="center", va="center", fontsize=NOTE_PT,
                    color=BASELINE_GREY if f else "black")  # fmt: skip
    counts.set_yticks([])
    counts.set_xticks([1, 4, 7, 10])
    counts.tick_params(axis="x", labelsize=TICK_PT)
    ax.tick_params(labelbottom=False, labelsize=TICK_PT)


OUT_OF_ORDER_COLOUR = "#CC3311"
"""The ring around two values of a rating out of order (a red not used by any score's series)."""


def _mark_out_of_order(ax: Any, t: ValueTable) -> None:
    """Ring the widest pair of ``t``'s values out of order beyond their intervals (a lower rating
    wrong less often than a higher one, each on at least :data:`MEANING_FEW` items,
    :func:`~construct_eval.paper.figure_data.out_of_order`): the inversion the caption names, one
    bump among many points otherwise."""
    hit = out_of_order(t, MEANING_FEW)
    if hit is None:
        return
    _, lo, hi = hit
    xs = [_float(lo["value"]), _float(hi["value"])]
    ys = [_float(lo["error_rate"]), _float(hi["error_rate"])]
    (ring,) = ax.plot(xs, ys, "o", ms=7, mfc="none", mec=OUT_OF_ORDER_COLOUR, mew=1.0, zorder=6,
                      label="out of order")  # fmt: skip
    plots.tag(ring, "out of order")


def _meaning_title(t: ValueTable, kind: str = "") -> str:
    unit = "outputs" if t.level == "document" else (kind or "fields")
    return f"{t.wrong:,} of {t.n:,} {unit} wrong"


def _empty_note(rows: Sequence[Mapping[str, Any]]) -> str:
    """The fields left empty in a line: how many, the share wrong, the value most of them get."""
    n = sum(_float(r["n"]) for r in rows)
    wrong = sum(_float(r["wrong"]) for r in rows)
    top = max(rows, key=lambda r: _float(r["n"]))
    cut = "\n" if is_narrow() else " "  # a one-column panel's title keeps to the panel's width
    return f"{n:,.0f} empty: {pct_of(wrong, n)} wrong,{cut}{pct_of(_float(top['n']), n)} at {_float(top['value']):.0f}"


def meaning_height(panels: int) -> float:
    """The height (inches) the appendix :func:`meaning_figure` gives so many panels in the current style context."""
    return grid_shape(panels)[1] * 2.05 + 0.45


def meaning_layout(panels: Sequence[MeaningPanel]) -> tuple[list[list[MeaningPanel]], int, list[MeaningPanel]]:
    """The main meaning figure's grid: rows of the ratings drawn as panels (a dataset's side by
    side in :data:`MEANING_COLUMNS` order, only what was asked; a dataset joins the first row with
    room for all of its panels, so no cell is left blank where another dataset's fits), the
    columns a row holds (the most panels one dataset has), and the ratings that give one value to
    nearly every item (:attr:`~construct_eval.paper.figure_data.MeaningPanel.one_value`: a line
    each, not a panel)."""
    order = {c: i for i, c in enumerate(MEANING_COLUMNS)}
    datasets = list(dict.fromkeys(p.table.dataset for p in panels))
    drawn = {
        d: sorted(
            (p for p in panels if p.table.dataset == d and p.one_value is None), key=lambda p: order.get(p.column, 9)
        )
        for d in datasets
    }
    ncols = max([len(v) for v in drawn.values()] + [1])
    rows: list[list[MeaningPanel]] = []
    for d in datasets:
        if not drawn[d]:
            continue
        row = next((r for r in rows if len(r) + len(drawn[d]) <= ncols), None)
        if row is None:
            rows.append(list(drawn[d]))
        else:
            row.extend(drawn[d])
    return rows, ncols, [p for p in panels if p.one_value is not None]


def _one_value_lines(lines: Sequence[MeaningPanel]) -> str:
    """The ratings drawn as a line, one a line: "financial NER, planted errors (per output,
    forced): 5 for 96% of 600 outputs", wrapped to the figure's width."""
    if not lines:
        return ""
    width = 52 if is_narrow() else 110
    head = (
        f"A line each, not a panel (one value holds \u2265 {100 * ONE_VALUE_SHARE:.0f}% of the items, "
        f"or is the only one with \u2265 {READABLE_ITEMS}):"
    )
    said = [wrap(head, width)]
    for p in lines:
        v, share = p.one_value or (math.nan, math.nan)
        name, how = dataset_label(p.table.dataset)
        unit = "outputs" if p.table.level == "document" else "fields"
        held = keep_together(f"{v:.0f} for {100 * share:.0f}% of {p.table.n:,} {unit}")  # a value beside its share
        said.append(wrap(f"{name}, {how.split(',')[0]} ({p.column}): {held}", width))
    return "\n".join(said)


def _meaning_notes_height(panels: Sequence[MeaningPanel]) -> float:
    """The height (inches) of the meaning figure's last strip: its one-value lines, and the legend
    where the grid has no spare cell."""
    rows, ncols, lines = meaning_layout(panels)
    text = _one_value_lines(lines)
    height = (text.count("\n") + 1) * NOTE_PT * 1.35 / 72 + 0.08 if text else 0.0
    if not rows or len(rows[-1]) == ncols:  # the legend below: three entries a line (two in one column)
        entries = 6 + any(out_of_order(p.table, MEANING_FEW) for row in rows for p in row)  # a ring's entry
        per_line = 2 if is_narrow() else 3
        height += 0.14 + (0.14 if not is_narrow() else 0.138) * math.ceil(entries / per_line)
    return height


def _meaning_titles(row: Sequence[MeaningPanel]) -> list[str]:
    """The titles of a row's panels: the dataset where the row holds more than one (with how it
    was made unless they share it, said in the row's title), the rating, its counts."""
    names = [dataset_label(d) for d in dict.fromkeys(p.table.dataset for p in row)]
    hows = {how.split(",")[0] for _, how in names}
    titles = []
    for p in row:
        kind = "filled" if p.table.level == "field" else ""
        empty = f"\n{_empty_note(p.empty)}" if p.empty else ""
        name, how = dataset_label(p.table.dataset)
        which = "" if len(names) == 1 else (f"{name}\n" if len(hows) == 1 else f"{name}, {how.split(',')[0]}\n")
        title = f"{which}{p.column}\n{_meaning_title(p.table, kind)}{empty}"
        if is_narrow():  # a part of one column: each line wrapped as a whole
            width = 19 if len(row) > 2 else 31
            title = "\n".join(wrap(line, width) for line in title.split("\n"))
        titles.append(title)
    return titles


def _meaning_row_in(row: Sequence[MeaningPanel]) -> float:
    """The height (inches) of one row of the meaning figure: taller where its titles run past three lines."""
    lines = max((t.count("\n") + 1 for t in _meaning_titles(row)), default=3)
    narrow = 0.3 if is_narrow() else 0.0  # a one-column panel: its share-wrong strip tall enough to read
    return MEANING_ROW_IN + narrow + 0.12 * max(0, lines - 3)


def meaning_grid_height(panels: Sequence[MeaningPanel]) -> float:
    """The height (inches) :func:`meaning_grid` gives these panels in the current style context."""
    rows, _, _ = meaning_layout(panels)
    return sum(_meaning_row_in(r) for r in rows) + _meaning_notes_height(panels) + 0.15


def meaning_grid(panels: Sequence[MeaningPanel], *, style: Mapping[str, Any]) -> Figure:
    """The main meaning figure: a row a dataset (:func:`meaning_layout`: only what was asked, two
    datasets' panels sharing a row where they fit in it), a panel each for the written rating per
    output (forced, free) and per field (forced, within the fields the output filled; the fields
    left empty in its title), "% wrong" and "items" on each row's first panel. A rating that
    gives one value to nearly every item is a line under the grid, not a panel; the legend fills
    the last row's spare cells (or sits below)."""
    import matplotlib

    rows, ncols, lines = meaning_layout(panels)
    with matplotlib.rc_context(dict(style)):
        notes = _meaning_notes_height(panels)
        fig = new_figure(style, meaning_grid_height(panels))
        ratios = [_meaning_row_in(r) for r in rows] + ([notes] if notes else [])
        subs = list(fig.subfigures(len(ratios), 1, hspace=0.0, height_ratios=ratios)) if len(ratios) > 1 else [fig]
        spare = None
        for i, row in enumerate(rows):
            sub = subs[i]
            names = [dataset_label(d) for d in dict.fromkeys(p.table.dataset for p in row)]
            hows = {how.split(",")[0] for _, how in names}
            if len(names) == 1:
                sub.suptitle(f"{names[0][0]}, {names[0][1].split(',')[0]}", fontsize="small", fontweight="bold")
            elif len(hows) == 1:  # datasets made the same way: the row names them and how, each panel which
                head = f"{' and '.join(n for n, _ in names)}, {next(iter(hows))}"
                sub.suptitle(wrap(head, 40 if is_narrow() else 90), fontsize="small", fontweight="bold")
            grid = sub.add_gridspec(2, ncols, height_ratios=[2.4, 1.3] if is_narrow() else [2.6, 1])
            for j, (p, title) in enumerate(zip(row, _meaning_titles(row), strict=True)):
                ax = sub.add_subplot(grid[0, j])
                counts = sub.add_subplot(grid[1, j], sharex=ax)
                _draw_meaning(ax, counts, p.table.rows)
                _mark_out_of_order(ax, p.table)
                ax.set_title(title, fontsize="x-small")
                if j == 0:
                    ax.set_ylabel("% wrong", fontsize="x-small")
                    counts.set_ylabel("items", fontsize="x-small")
                counts.set_xlabel("rating", fontsize="x-small", labelpad=1)
            if i == len(rows) - 1 and len(row) < ncols:
                spare = sub.add_subplot(grid[:, len(row) :])
                spare.set_axis_off()
                spare.set_gid("legend")  # the last row's spare cells hold the legend
        handles, labels = [], []
        for ax in fig.get_axes():
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        last = subs[-1] if notes else fig
        text = _one_value_lines(lines)
        if text:
            note = last.add_subplot(1, 1, 1)
            note.set_axis_off()
            note.set_gid("note")
            note.text(0.5, 1.0, text, ha="center", va="top", fontsize=NOTE_PT, transform=note.transAxes)
        if spare is not None:
            spare.legend(handles, labels, loc="center", frameon=False, fontsize="x-small")
        elif handles:
            last.legend(handles, labels, loc="outside lower center", ncols=2 if is_narrow() else 3, frameon=False,
                        fontsize="x-small")  # fmt: skip
    return fig


def meaning_figure(tables: Sequence[ValueTable], *, style: Mapping[str, Any], small: Sequence[str] = ()) -> Figure:
    """One panel per written rating (the appendix): observed error rate per value (Wilson 95%;
    grey: fewer than 20 items) with the naive reading and the out-of-fold isotonic and Platt maps
    over it, and below it the number of items at each value."""
    import matplotlib

    with matplotlib.rc_context(dict(style)):
        ncols, nrows = grid_shape(len(tables))
        fig = new_figure(style, meaning_height(len(tables)))
        grid = fig.add_gridspec(2 * nrows, ncols, height_ratios=[3, 1] * nrows)
        for k, t in enumerate(tables):
            i, j = divmod(k, ncols)
            ax = fig.add_subplot(grid[2 * i, j])
            counts = fig.add_subplot(grid[2 * i + 1, j], sharex=ax)
            _draw_meaning(ax, counts, t.rows)
            fitted = all(r.get("isotonic") not in (None, "") for r in t.rows)
            note = "" if fitted else f"\n{len(t.rows)} values: no maps fitted"
            name, how = dataset_label(t.dataset)
            label = plots.labels_for([t.scorer])[0]
            width = 31 if not is_narrow() else 26
            small_mark = " (too few)" if t.path in small or t.dataset in small else ""
            ax.set_title(wrap(f"{name}, {how.split(',')[0]}\n{label}\n{t.wrong:,} of {t.n:,} {unit_of(t.level)} wrong"
                              f"{small_mark}{note}", width), fontsize="x-small")  # fmt: skip
            if j == 0:
                ax.set_ylabel("% wrong", fontsize="x-small")
                counts.set_ylabel("items", fontsize="x-small")
            else:
                ax.tick_params(labelleft=False)
            counts.set_xlabel("rating", fontsize="x-small", labelpad=1)
        handles, labels = fig.axes[0].get_legend_handles_labels() if fig.axes else ([], [])
        for ax in fig.axes[::2]:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        legend_below(fig, handles, labels, ncols=3)
    return fig
