"""The paper's review figure (:func:`review_figure`): what a review budget buys: the share of wrong
items found when the lowest-scored 5/10/20/30% are reviewed, against reviewing in random order and
against a perfect score. Its layout is the figures' shared one (:mod:`.paper_plots`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from construct_eval.display import plots
from construct_eval.display.style import BASELINE_GREY, keep_together, series_style, wrap
from construct_eval.paper.figure_data import order_key, pct_of
from construct_eval.paper.paper_plots import (
    NOTE_PT,
    PERFECT_BAND_ALPHA,
    PERFECT_LINE,
    TITLE_LINE_IN,
    fill_columns,
    grid_shape,
    legend,
    legend_columns,
    level_titles,
    new_figure,
    panel_grid,
    panel_title,
    per_row,
    row_labels,
    title_line_count,
    title_row,
    unit_of,
)

NOTE_CHARS = 34
"""The characters a line of a review panel's note holds ("curves on the 246 of 350 all rated")."""


def _note_names(labels: Sequence[str]) -> dict[str, str]:
    """Each legend label as a panel's note names it: without its parenthesis where no other
    label shares the name before it (the legend carries "(built for the planted kinds)"), kept where
    one does ("judge rating (forced)" beside "judge rating (free)")."""
    bases = Counter(re.sub(r" \([^()]*\)$", "", lab) for lab in labels)
    return {lab: base if bases[base] == 1 else lab for lab in labels
            for base in [re.sub(r" \([^()]*\)$", "", lab)]}  # fmt: skip


def _together(labels: Sequence[str]) -> str:
    """Labels that differ only in their parenthesis said once: "judge rating (forced, free)"."""
    parts = [re.fullmatch(r"(.*) \(([^()]*)\)", lab) for lab in labels]
    if len(labels) > 1 and all(parts) and len({m[1] for m in parts if m}) == 1:
        return f"{parts[0][1]} ({', '.join(m[2] for m in parts if m)})"  # type: ignore[index]
    return "; ".join(labels)


def _own_counts(rows: Sequence[Mapping[str, Any]], titled: tuple[int, int], label_of: Mapping[str, str]) -> list[str]:
    """The note lines under a review panel: where every score was recomputed on the items all of
    the panel's scores rated (``common_of``: the most any of them rated,
    :func:`~construct_eval.reports.figure_pairs.common_review_rows`), first lines saying so, with their
    share wrong beside the whole set's (a recall at a budget depends on it); then
    each curve on other items than its title counts, with its own n, and each flat rating's note;
    a constant rating (one value for every item) is not drawn (:func:`constant_review`: its curve
    would be only the order ties are broken in) and its note says "constant, not drawn", the
    constant ratings named once ("judge rating (forced, free)"), last (under a drawn curve's note it
    read as if that curve were not drawn). A score is named without a
    parenthesis the legend gives (:func:`_note_names`). Wrapped at :data:`NOTE_CHARS` characters."""
    lines: list[str] = []
    recomputed = [r for r in rows if r.get("common_of")]
    common = next((r for r in recomputed if r.get("all_n") == r["common_of"]), recomputed[0] if recomputed else None)
    if common is not None:  # the drawn scores recomputed on the items all of them rated
        lines.append(
            f"curves on the {common['n']:,} of {common['common_of']:,} all rated"
        )  # the title counts their wrong
        if common.get("all_n") == common["common_of"]:  # the whole set's share wrong beside the title's
            lines.append(f"(all {common['all_n']:,}: {pct_of(common['all_positives'], common['all_n'])} wrong)")
    lasts = {s: max((r for r in rows if r["scorer"] == s), key=lambda r: r["budget"]) for s in dict.fromkeys(r["scorer"] for r in rows)}  # fmt: skip
    named = _note_names(list(dict.fromkeys(label_of.values())))  # the figure's labels: one name in every panel
    constant = [label_of[s] for s, last in lasts.items() if constant_review(last)]
    for scorer, last in lasts.items():
        if constant_review(last):
            continue
        notes = [f"n={last['n']:,}, {last['positives']:,} wrong"] if (last["n"], last["positives"]) != titled else []
        notes += [last["flat_note"]] if last.get("flat_note") else []
        text = f"{named[label_of[scorer]]}: {'; '.join(notes)}"
        if notes and len(text) <= NOTE_CHARS:
            lines.append(text)
        elif notes:  # the score on its line(s), what it says on the next: "99% one value" stays whole
            lines += [*wrap(f"{named[label_of[scorer]]}:", NOTE_CHARS).split("\n"),
                      *wrap("; ".join(notes), NOTE_CHARS).split("\n")]  # fmt: skip
    if constant:  # said once for all of them, last: a drawn curve's note above it does not read as "not drawn"
        named_once = _together(constant)  # held on one line where it fits: "judge rating (forced, free)"
        named_once = keep_together(named_once) if len(named_once) <= NOTE_CHARS else named_once
        lines += wrap(f"constant, not drawn: {named_once}", NOTE_CHARS).split("\n")
    return lines


def constant_review(row: Mapping[str, Any]) -> bool:
    """A review row of a rating that gave every item of its panel one value: it orders nothing, so
    its "review curve" is only the order its ties were broken in, and it is not drawn."""
    return row.get("flat_note") == "constant"


def _review_layout(
    rows: Sequence[Mapping[str, Any]], label_of: Mapping[str, str], per_line: int | None = None, ringed: bool = False,
    beside: bool = False,
) -> tuple[dict[str, tuple[int, int]], dict[str, list[str]], float]:  # fmt: skip
    """A review figure's (items, wrong) per panel title (:func:`title_row`), the own-count note
    lines under each panel, and the figure's height in inches (in the venue's style context);
    ``ringed``: the legend has a ringed point's entry too; ``beside``: the legend in a cell of the
    grid (:func:`review_grid`)."""
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    labels = set(label_of[r["scorer"]] for r in rows if not constant_review(r))  # a constant rating is not drawn
    titled: dict[str, tuple[int, int]] = {}
    for d in datasets:
        ref = title_row(
            [r for r in rows if r["dataset"] == d],
            lambda r: r["scorer"],
            lambda r: (r["n"], r["positives"]),
            lambda r: r["uses_labels"],
        )
        titled[d] = (ref["n"], ref["positives"])
    own_notes = {d: _own_counts([r for r in rows if r["dataset"] == d], titled[d], label_of) for d in datasets}
    line = per_line or per_row()
    note_lines = sum(  # the notes under each line of panels take their own height, not the axes'
        max(len(own_notes[d]) for d in datasets[i : i + line]) for i in range(0, len(datasets), line)
    )
    cells, line = review_grid(len(datasets), line, beside)
    n_cols, n_rows = grid_shape(cells, line)
    spare = n_rows * n_cols > len(datasets)  # the legend goes in the spare cell, not under the grid
    # a perfect score's line, its band (where a panel's scores rate different items), or both
    perfect = len({len({(r["n"], r["positives"]) for r in rows if r["dataset"] == d}) > 1 for d in datasets})
    legend_cols = legend_columns(2)  # the scores, random order, a perfect score: two a row where they fit
    legend_rows = 0 if spare else math.ceil((len(labels) + 1 + perfect + ringed) / legend_cols)
    title_lines = sum(  # a title over four lines (a long dataset name) takes the axes' height too
        max(max(0, title_line_count(d, titled[d]) - 4) for d in datasets[i : i + line])
        for i in range(0, len(datasets), line)
    )
    height = (n_rows * 1.75 + 0.35 + 0.14 * legend_rows + note_lines * NOTE_PT * 1.25 / 72
              + title_lines * TITLE_LINE_IN)  # fmt: skip
    return titled, own_notes, height


PERFECT = "a perfect score"


def perfect_review(n: int, wrong: int, largest_budget: float) -> tuple[list[float], list[float]]:
    """The review curve of a perfect score (every wrong item scored below every right one) on a
    panel of ``n`` items, ``wrong`` of them wrong: it finds ``min(1, b / share wrong)`` at ``b``
    reviewed, so where many items are wrong even a perfect score's curve stays low (42% wrong:
    0.71 at 30%), and a curve near it is strong. Percent reviewed on x, share found on y."""
    if n <= 0 or wrong <= 0:
        return [0.0, largest_budget], [0.0, 0.0]
    knee = 100 * wrong / n  # % reviewed at which a perfect score has found every wrong item
    if knee >= largest_budget:
        return [0.0, largest_budget], [0.0, largest_budget / knee]
    return [0.0, knee, largest_budget], [0.0, 1.0, 1.0]


PERFECT_BANDED = "a perfect score (a band where scores rate different items)"


def draw_perfect(ax: Any, panels: set[tuple[int, int]], largest_budget: float) -> bool:
    """A perfect score's review curve on a panel whose scores rate the items ``panels`` holds as
    (n, wrong) pairs: one light line where every score rates the same items; where they rate
    different items (a judge on a subset, the generator's log-probs on all), each has its own
    perfect curve, so a band spans them all (a line would be one score's ceiling, drawn under
    another's curve). Returns whether a band was drawn."""
    curves = [perfect_review(n, wrong, largest_budget) for n, wrong in sorted(panels)]
    if len(curves) == 1:
        ax.plot(*curves[0], gid=PERFECT, **PERFECT_LINE)
        return False
    x = np.array(sorted({v for xs, _ in curves for v in xs}))  # every curve is straight between its knees
    ys = np.array([np.interp(x, xs, ys) for xs, ys in curves])
    ax.fill_between(x, ys.min(axis=0), ys.max(axis=0), color=PERFECT_LINE["color"], alpha=PERFECT_BAND_ALPHA,
                    lw=0, zorder=PERFECT_LINE["zorder"], gid=PERFECT)  # fmt: skip
    # its upper edge drawn too: where every perfect curve has found all, the band is a line at 1
    ax.plot(x, ys.max(axis=0), color=PERFECT_LINE["color"], alpha=PERFECT_BAND_ALPHA, lw=0.8,
            zorder=PERFECT_LINE["zorder"])  # fmt: skip
    return True


def review_grid(panels: int, per_line: int, beside: bool) -> tuple[int, int]:
    """(cells, panels a row) of a review figure's grid: its ``panels`` at ``per_line`` a row; where
    ``beside`` and they leave no spare cell, one cell more, for the legend, and the grid laid out
    anew (:func:`fill_columns`). At the text width a review legend under a row of panels runs to
    nine lines and squeezed the panels to a strip; in a cell of the grid it leaves them their height."""
    ncols, nrows = grid_shape(panels, per_line)
    if not beside or ncols * nrows > panels:
        return panels, per_line
    return panels + 1, fill_columns(panels + 1)


def review_height(
    rows: Sequence[Mapping[str, Any]], per_line: int | None = None, ringed: bool = False, beside: bool = False
) -> float:
    """The height (inches) :func:`review_figure` gives ``rows`` in the current style context."""
    return _review_layout(rows, row_labels(rows), per_line, ringed, beside)[2]


def review_figure(
    rows: Sequence[Mapping[str, Any]],
    *,
    level: str,
    style: Mapping[str, Any],
    granularity: Mapping[str, str] | None = None,
    per_line: int | None = None,
    ringed: Mapping[str, Mapping[str, Any]] | None = None,
    ringed_label: str = "",
    beside: bool = False,
) -> Figure:
    """The share of wrong items found when reviewing the lowest-scored share first, per score,
    with document-bootstrap intervals, one panel per dataset; the dashed diagonal is a random
    order and the light solid line a perfect score, the most any score can find (a band where the
    panel's scores rate different items: :func:`draw_perfect`). Each curve and its markers sit at
    the true budgets; only its intervals are dodged sideways (by under a point of the budget), so
    close intervals stay apart. A
    score on other items than its panel's title counts (:func:`title_row`) has its own n under the
    panel's axis label; a rating constant on a panel's items is not drawn there, and its note says
    "constant, not drawn". ``ringed``: a row per dataset whose point is ringed (the judge's best
    score at the caption's budget, :func:`~construct_eval.paper.messages.judge_best_review`), said
    in the legend as ``ringed_label``; ``beside``: the legend in a cell of the grid, not under it
    (:func:`review_grid`)."""
    import matplotlib
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ringed = ringed or {}
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    scorers = list(dict.fromkeys(r["scorer"] for r in rows))
    label_of = row_labels(rows)
    labels = sorted(set(label_of.values()), key=lambda lab: min(order_key(s) for s, x in label_of.items() if x == lab))
    granularity = granularity or {}
    with matplotlib.rc_context(dict(style)):
        line = per_line or per_row()
        titled, own_notes, height = _review_layout(rows, label_of, line, bool(ringed and ringed_label), beside)
        perfect_kinds: set[bool] = set()  # True: a band (a panel whose scores rate different items), False: a line
        fig = new_figure(style, height)
        cells, line = review_grid(len(datasets), line, beside)
        axes = panel_grid(fig, len(datasets), line, cells, sharex=True, sharey=True)
        for ax, dataset in zip(axes, datasets, strict=True):
            mine = [r for r in rows if r["dataset"] == dataset]
            first = next(r for r in mine if (r["n"], r["positives"]) == titled[dataset])
            here = [s for s in scorers if any(r["scorer"] == s and not constant_review(r) for r in mine)]
            for k, scorer in enumerate(here):
                pts = sorted((r for r in mine if r["scorer"] == scorer), key=lambda r: r["budget"])
                budget = np.array([r["budget"] for r in pts], dtype=float)
                x = budget + (k - (len(here) - 1) / 2) * 0.7  # intervals dodged sideways, to be told apart
                y = np.array([r["recall"] for r in pts], dtype=float)
                lo = np.array([r["recall_low"] for r in pts], dtype=float)
                hi = np.array([r["recall_high"] for r in pts], dtype=float)
                err = np.clip(np.nan_to_num(np.array([y - lo, hi - y])), 0, None)
                s = series_style(scorer)
                c = BASELINE_GREY if pts[0]["uses_labels"] else s.colour
                # the curve and its markers at the budgets themselves (a curve through dodged points seemed
                # to start at 3% or end at 31%); only the intervals stand beside them
                (curve,) = ax.plot(budget, y, color=c, lw=0.9, ls=s.linestyle, marker=s.marker, ms=3)
                ax.errorbar(x, y, yerr=err, color=c, ls="none", capsize=1.2, elinewidth=0.6)
                plots.tag(curve, scorer)
            best = ringed.get(dataset)
            if best is not None and best["scorer"] in here:
                ringed_style = series_style(best["scorer"])
                ring_colour = BASELINE_GREY if best["uses_labels"] else ringed_style.colour
                # its own marker drawn again on top: where curves overlap, the ring holds the ringed score's marker
                ax.plot([best["budget"]], [best["recall"]], marker=ringed_style.marker, ms=3,
                        color=ring_colour, lw=0, zorder=5.5)  # fmt: skip
                (ring,) = ax.plot([best["budget"]], [best["recall"]], "o", ms=9, mfc="none", mec=ring_colour, mew=1.3,
                                  zorder=6)  # fmt: skip
                plots.tag(ring, f"ringed {best['scorer']}")
            budgets = sorted({r["budget"] for r in mine})
            ax.plot([0, max(budgets)], [0, max(budgets) / 100], color="grey", lw=0.6, ls="--")
            drawn_items = {
                (r["n"], r["positives"]) for r in mine if r["scorer"] in here
            }  # a constant, not drawn, adds none
            perfect_kinds.add(draw_perfect(ax, drawn_items or {(r["n"], r["positives"]) for r in mine}, max(budgets)))
            unit = unit_of(level, granularity.get(dataset, "top"))
            ax.set_title(panel_title(dataset, first["n"], first["positives"], unit), fontsize="x-small")
            ax.set_xticks(budgets)
            ax.set_xlim(0, max(budgets) + 3)
            ax.set_ylim(0, 1.05)  # an interval's cap at 1 stays inside the frame
            ax.set_yticks([0, 0.25, 0.5, 0.75, 1], ["0", "25", "50", "75", "100"])  # in %, as the x axis
            ax.set_xlabel("% reviewed", fontsize="small")
            if own_notes[dataset]:  # under the axis label, where no curve can run over it
                ax.annotate("\n".join(own_notes[dataset]), (0.5, 0), xycoords=ax.xaxis.label,
                            xytext=(0, -2), textcoords="offset points", ha="center", va="top", fontsize=NOTE_PT)  # fmt: skip
            ax.tick_params(axis="x", labelbottom=True)
        for k in range(0, len(axes), line):
            axes[k].set_ylabel(f"% of wrong\n{'outputs' if level == 'document' else 'fields'} found", fontsize="small")
        level_titles(axes, line)
        handles = []
        drawn = {r["scorer"] for r in rows if not constant_review(r)}
        labels = [lab for lab in labels if any(label_of[x] == lab for x in drawn)]
        for lab in labels:
            s = next(x for x in scorers if label_of[x] == lab and x in drawn)
            grey = any(r["uses_labels"] for r in rows if r["scorer"] == s)
            st = series_style(s)
            handles.append(Line2D([], [], color=BASELINE_GREY if grey else st.colour, marker=st.marker, ms=3,
                                  lw=0.9, ls=st.linestyle))  # fmt: skip
        handles.append(Line2D([], [], color="grey", lw=0.6, ls="--"))
        perfect = []
        if False in perfect_kinds:
            handles.append(Line2D([], [], **PERFECT_LINE))
            perfect.append(PERFECT)
        if True in perfect_kinds:
            handles.append(Patch(facecolor=PERFECT_LINE["color"], alpha=PERFECT_BAND_ALPHA, lw=0))
            perfect.append(PERFECT_BANDED)
        ring = []
        if any(ringed.get(d) is not None for d in datasets) and ringed_label:
            handles.append(Line2D([], [], marker="o", ms=6, mfc="none", mec="black", mew=1.3, lw=0))
            ring.append(ringed_label)
        legend(fig, handles, [*labels, "random order", *perfect, *ring], ncols=2)
    return fig
