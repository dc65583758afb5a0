"""The paper's figures, each with one message, at a venue's size.

- :func:`forest_figure`: how well each score finds wrong items: AUROC (or AUPRC, with the share
  wrong marked) with 95% document-bootstrap intervals, scores as rows, datasets as panels;
  underpowered rows hollow, baselines that use the labels grey;
- :func:`review_figure`: what a review budget buys: the share of wrong items found when the
  lowest-scored 5/10/20/30% are reviewed, against reviewing in random order;
- :func:`meaning_figure`: what each rating value means: the observed error rate (Wilson 95%)
  per value with the number of items below it, the naive reading and the out-of-fold isotonic
  and Platt maps;
- :func:`order_figure`: does the prompt order sway the judge: the paired shift of the written
  rating and of its expected rating, and the change in AUROC, per order;
- :func:`reliability_grid`: out-of-fold reliability diagrams, one panel per (score, dataset).

Labels come from :func:`~construct_eval.display.style.display_name` and
:func:`~construct_eval.display.style.dataset_label`; drawing on each axes from
:mod:`~construct_eval.display.plots` where the per-run figures draw the same thing.
"""

from __future__ import annotations

import itertools
import math
import re
import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from construct_eval.display import plots, readability
from construct_eval.display.style import (
    BASELINE_GREY,
    CALIBRATOR_STYLES,
    CONSTRUCT_COLOUR,
    JSON_JUDGE_COLOUR,
    OKABE_ITO,
    display_name,
    keep_together,
    order_label,
    series_style,
    wrap,
    wrap_even,
)
from construct_eval.display.style import (
    paper_dataset_label as dataset_label,
)
from construct_eval.paper.figure_data import (
    ONE_VALUE_SHARE,
    READABLE_ITEMS,
    Estimate,
    MeaningPanel,
    ValueTable,
    _float,
    order_key,
    out_of_order,
    pct_of,
    small_share,
)
from construct_eval.scorer_labels import SECTION_WORDS

PANELS_PER_ROW = 3
"""Panels side by side at the full text width (5.5 in) before a figure wraps onto another row."""
PANEL_WIDTH_IN = 1.6
"""About the narrowest a panel can be and still hold its three-line title."""
TICK_PT = 6.0
"""The smallest tick label a figure draws (points)."""
NOTE_PT = 6.0
"""Notes beside an estimate ("flat", a row's own n, "not run")."""
MAX_HEIGHT_IN = 8.0
"""The tallest figure (NeurIPS' text block is 9 in; the rest is the caption's)."""


_UNDER_LINE = {"facecolor": "white", "edgecolor": "none", "pad": 0.3}
"""A note's background: the chance line passes under a note, not through its letters."""
_SEE_THROUGH = {"facecolor": (1, 1, 1, 0.65), "edgecolor": "none", "pad": 0.3}
"""A note's background over a shaded band: the dashed line fades under its letters, the band still shows."""


def per_row() -> int:
    """Panels a row at the current figure width: 3 at NeurIPS' text width, 2 in one column."""
    import matplotlib

    width = matplotlib.rcParams["figure.figsize"][0]
    return max(1, min(PANELS_PER_ROW + 1, int(width // PANEL_WIDTH_IN)))


def row_labels(rows: Sequence[Any]) -> dict[str, str]:
    """Scorer -> the label of its row: what a reader sees (:func:`display_name`), so one score
    on several datasets (under two internal names, or per leaf here and per field there) is one
    row; two scorers that share a label on the same dataset are told apart by granularity, then
    by name."""

    def key(r: Any) -> tuple[tuple[str, str], str]:  # a field score and a document score never share a row
        if hasattr(r, "scorer"):
            return (r.dataset, getattr(r, "level", "")), r.scorer
        return (r["dataset"], r.get("level", "")), r["scorer"]

    pairs = list(dict.fromkeys(key(r) for r in rows))
    label = {s: display_name(s) for _, s in pairs}
    for form in (lambda s: display_name(s, granularity=True), with_members, str):
        clash = {s for d, s in pairs for d2, s2 in pairs if d == d2 and s != s2 and label[s] == label[s2]}
        for s in clash:
            label[s] = form(s)
    combos = {s for _, s in pairs if "[" in s and "+" in s}  # two different combinations: name their members
    for s in combos:
        if any(s2 != s and display_name(s2) == display_name(s) for s2 in combos):
            label[s] = with_members(s)
    return label


def with_members(scorer: str) -> str:
    """A combination's label naming its members ("rank mean: judge rating (forced) + expected
    rating"); any other score's label with its granularity (:func:`display_name`)."""
    from construct_eval.types import ScorerId

    try:
        sid = ScorerId.parse(scorer)
    except ValueError:
        return scorer
    if not sid.is_combination:
        return display_name(sid, granularity=True)
    head = "fitted (uses labels)" if sid.uses_labels else "rank mean"
    text = f"{head}: {' + '.join(display_name(m) for m in sid.members)}"
    where = display_name(sid, granularity=True).removeprefix(display_name(sid))
    return text + where


def _narrow() -> bool:
    """Whether the current figure is one column of two (about 3.3 in) rather than the text width."""
    import matplotlib

    return bool(matplotlib.rcParams["figure.figsize"][0] < 4.5)


def _row_granularity(scorer: str) -> str | None:
    """The fields a row's items are ("leaf", "top"), None when its name does not say."""
    from construct_eval.types import ScorerId

    try:
        return ScorerId.parse(scorer).granularity
    except ValueError:
        return None


def _unit(level: str, granularity: str = "top") -> str:
    if level == "document":
        return "outputs"
    return "leaves" if granularity == "leaf" else "fields"


def panel_title(
    dataset: str, n: int, wrong: int, unit: str, *, small: bool = False, kind: str = "", narrow: bool | None = None
) -> str:
    """Short lines: the dataset, how its errors arose, what is wrong (two lines in a narrow panel:
    ``narrow``, by default a narrow figure); for a panel of one output kind (``kind``: "filled
    fields", "empty fields") the count is of those (of leaves where ``unit`` is "leaves")."""
    import matplotlib

    name, how = dataset_label(dataset)
    narrow = matplotlib.rcParams["figure.figsize"][0] < 4.5 if narrow is None else narrow
    if kind and unit == "leaves":  # "filled leaves": the panel counts what its scores rate
        kind = kind.replace("fields", "leaves")
    if kind:  # "136 of 3,053 filled wrong": one line where it fits, the figure's title says what the kind is
        count = f"{wrong:,} of {n:,} {kind.split()[0]} wrong" if narrow else f"{kind}: {wrong:,} of {n:,} wrong"
        if narrow and len(count) > 20:  # "122 of 460 filled wrong" overran a one-column panel's width
            count = f"{wrong:,} of {n:,}\n{kind.split()[0]} wrong"
    else:
        count = f"{wrong:,} of {n:,}\n{unit} wrong" if narrow else f"{wrong:,} of {n:,} {unit} wrong"  # one wording
    # a narrow panel: 20 characters, "synthetic shipping" / "notices (version 2)" on two lines, not three
    share = f"{100 * wrong / n:.0f}% wrong" if n else ""
    mostly = (
        (f"\n({share}:\nfew right to rank)" if narrow else f"\n({share}: few right to rank)")
        if n and wrong >= 0.9 * n
        else ""
    )
    return (
        f"{wrap(name, 20 if narrow else 28)}\n{how.split(',')[0]}\n{count}"
        + mostly
        + ("\n(too few to judge)" if small else "")
    )


NARROW_PANEL_IN = 1.9
"""A panel narrower than this (inches, its share of the figure's width) breaks its title's count
onto two lines."""
TITLE_LINE_IN = 0.12
"""The height of one line of a panel title (``x-small``) with its spacing, in inches."""


def _title_lines(dataset: str, titled: tuple[int, int]) -> int:
    """Lines of a review panel's title (:func:`panel_title`); the unit does not change the count."""
    return panel_title(dataset, titled[0], titled[1], "fields").count("\n") + 1


def grid_shape(panels: int, per_line: int | None = None) -> tuple[int, int]:
    """(columns, rows) of a grid of so many panels: at most ``per_line`` (default :func:`per_row`,
    the current figure width's) a row; the one shape a grid figure and its height helper share."""
    ncols = max(1, min(panels, per_line or per_row()))
    return ncols, max(1, math.ceil(panels / ncols))


_SPARE: weakref.WeakKeyDictionary[Figure, list[Any]] = weakref.WeakKeyDictionary()
"""Each grid figure's spare cells (:func:`_grid`)."""
_COLUMNS: weakref.WeakKeyDictionary[Figure, int] = weakref.WeakKeyDictionary()
"""Each grid figure's columns (:func:`_grid`): a spare cell's width."""


def _grid(fig: Figure, n_panels: int, per_line: int | None = None, cells: int = 0, **kwargs: Any) -> list[Any]:
    """Axes for ``n_panels`` panels, at most ``per_line`` (default :func:`per_row`) a row, in a grid
    of at least ``cells`` cells (one more than the panels: a cell for the legend); spare cells hidden."""
    ncols, nrows = grid_shape(max(n_panels, cells), per_line)
    grid = fig.subplots(nrows, ncols, squeeze=False, **kwargs)
    axes = [ax for row in grid for ax in row]
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    _SPARE[fig] = axes[n_panels:]  # spare cells: where a legend can go (:func:`_legend`)
    _COLUMNS[fig] = ncols
    return axes[:n_panels]


def _level_titles(axes: Sequence[Any], per_line: int) -> None:
    """Titles of a grid's row start on one line: a shorter title gets blank lines under it, so that
    the datasets' names of a row read level (matplotlib sets a title's last line on the frame)."""
    for k in range(0, len(axes), per_line):
        row = axes[k : k + per_line]
        lines = max(ax.get_title().count("\n") + 1 for ax in row)
        for ax in row:
            title = ax.get_title()
            if title and (short := lines - title.count("\n") - 1):
                ax.set_title(title + "\n " * short, fontsize="x-small")


def fill_columns(panels: int, most: int | None = None) -> int:
    """Panels a row so that a grid of ``panels`` has as few spare cells as it can (at most one,
    which then holds the legend: :func:`_legend`): every panel on one row where they fit, four as
    two by two, else ``most`` (default :func:`per_row`) a row."""
    most = most or per_row()
    if panels <= most:
        return max(1, panels)
    if panels == 4:
        return 2
    return min(range(2, most + 1), key=lambda c: (-(-panels // c) * c - panels > 1, -c))


def _legend(fig: Figure, handles: Sequence[Any], labels: Sequence[str], ncols: int = 3) -> None:
    """The legend in the grid's spare cell where it has one (no cell of the grid is left empty),
    else under the axes (:func:`_legend_below`)."""
    spare = _SPARE.get(fig, [])
    if not spare or not handles:
        _legend_below(fig, handles, labels, ncols)
        return
    import matplotlib
    from matplotlib.font_manager import FontProperties

    ax = spare[0]
    ax.set_visible(True)
    ax.set_axis_off()
    cell = fig.get_figwidth() / _COLUMNS.get(fig, 3)
    points = FontProperties(size=matplotlib.rcParams["legend.fontsize"]).get_size_in_points()
    chars = max(14, int((cell - 0.5) * 72 / (0.55 * points)))  # the handle takes about half an inch
    ax.legend(handles, [wrap(lab, chars) for lab in labels], loc="center", frameon=False, ncols=1)


def _legend_columns(ncols: int, width: float | None = None) -> int:
    """Columns of legend entries a figure ``width`` in (default: the style's) holds, at most ``ncols``."""
    import matplotlib

    width = width if width is not None else matplotlib.rcParams["figure.figsize"][0]
    return max(1, min(ncols, int(width // 1.7)))


def _legend_below(fig: Figure, handles: Sequence[Any], labels: Sequence[str], ncols: int = 3) -> None:
    """A legend under the axes, outside every one of them (constrained layout makes room)."""
    if handles:
        import matplotlib

        cols = min(_legend_columns(ncols, fig.get_figwidth()), len(handles))
        size = matplotlib.font_manager.FontProperties(size=matplotlib.rcParams["legend.fontsize"]).get_size_in_points()
        per_char = 0.55 * size / 72  # inches a character takes, about
        while cols > 1:  # as many columns as the longest label of each column lets fit the width
            rows = -(-len(labels) // cols)
            longest = [  # a label's widest line: a note on two lines is as wide as its longer line
                max((len(line) for x in labels[c * rows : (c + 1) * rows] for line in x.split("\n")), default=0)
                for c in range(cols)
            ]
            if sum(n * per_char + 0.6 for n in longest) <= fig.get_figwidth():
                break
            cols -= 1
        fig.legend(handles, labels, loc="outside lower center", ncols=cols, frameon=False)


def _figure(style: Mapping[str, Any], height: float) -> Figure:
    import matplotlib

    width, _ = matplotlib.rcParams["figure.figsize"]
    return Figure(figsize=(width, height), layout="constrained")


# --------------------------------------------------------------------------- detection


def title_row(rows: Sequence[Any], scorer: Callable[[Any], str], count: Callable[[Any], tuple[int, int]],
              uses_labels: Callable[[Any], bool]) -> Any:  # fmt: skip
    """The row whose (items, wrong) a panel's title gives; rows on other items carry their own.

    The reference score's count (the first label-free score in the figures' order: the judge's
    rating where the panel has one) where most of the panel's rows share it, else the largest
    count (the whole set). So a run whose token log-probs cover every document while the judge and
    most scores reached a part is titled by that part, with the log-probs row's own n under it;
    and a panel whose scores were run on parts of different sizes is titled by the whole."""
    reference = min(rows, key=lambda r: (bool(uses_labels(r)), order_key(scorer(r))))
    scores = {scorer(r): count(r) for r in rows}  # one count a score (review rows repeat a score per budget)
    if 2 * sum(c == count(reference) for c in scores.values()) > len(scores):
        return reference
    return max(rows, key=count)


FOREST_MARGIN = 0.06
"""Room either side of a forest panel's 0-1 axis, so an AUROC of 1.0 (0.0) is drawn inside the frame."""


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
        fig = _figure(style, forest_height(estimates, line, label_width))
        shown = [wrap(r, label_width) for r in rows]
        axes = _grid(fig, len(panels), line, sharex=True, sharey=True)
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
                            bbox=_UNDER_LINE, zorder=3)  # fmt: skip
            if not per_row_chance:
                chance = 0.5 if metric == "auroc" else first.prevalence
                ax.axvline(chance, color="grey", lw=0.6, ls="--")
            ax.set_xlim(-FOREST_MARGIN, 1 + FOREST_MARGIN)  # a marker at 0 or 1 sits inside the frame, not on it
            ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
            ax.set_ylim(len(rows) - 0.5, -0.6)
            unit = _unit(level, _row_granularity(first.scorer) or granularity.get(dataset, "top"))
            ax.set_title(panel_title(dataset, first.n, first.positives, unit, small=panel in small, kind=kind,
                                     narrow=_narrow() or fig.get_figwidth() / line < NARROW_PANEL_IN),
                         fontsize="x-small")  # fmt: skip
            ax.set_xlabel(metric.upper(), fontsize="small")
            ax.tick_params(axis="y", length=0)
            ax.tick_params(axis="x", labelbottom=True)
        for k in range(0, len(axes), line):
            axes[k].set_yticks(range(len(rows)), shown)
        _level_titles(axes, line)
        handles = [Line2D([], [], color="grey", lw=0.6, ls="--")]
        per_row_line = metric == "auprc" and len(prevalences) > 1
        labels = ["chance" if metric == "auroc" else "share wrong (chance)" + (", per row" if per_row_line else "")]
        if any(e.weak for e in estimates):
            handles.append(Line2D([], [], color="black", marker="o", ms=3.5, markerfacecolor="white", lw=0))
            labels.append("underpowered")
        if any(e.uses_labels for e in estimates):
            handles.append(Line2D([], [], color=BASELINE_GREY, marker="s", ms=3.5, lw=0))
            labels.append("uses the labels")
        _legend(fig, handles, labels)
        if last_row_counted:  # room under the last row for its count, off the frame
            for ax in axes:
                ax.set_ylim(len(rows) - 0.5 + 0.45, -0.6)
        fig.draw_without_rendering()  # the panels at their laid-out widths, for the notes' places
        placed = [_under(ax, e, y, c) for ax, e, y, c in count_notes]  # a note a row: a shared one read as ambiguous
        placed += [_beside(ax, e, y, c, below=not counted) for ax, e, y, c, counted in flat_notes]
        _room_under(fig, placed)  # a note under the last row clear of the frame
    return fig


def _beside_interval(ax: Any, text: str, low: float, high: float) -> tuple[float, str, float] | None:
    """Where ``text`` fits on its row beside an interval [``low``, ``high``] inside ``ax``'s frame
    without crossing the dashed zero line: (the end it starts from, its alignment, its offset in
    points), right of the interval first; None where neither side has room."""
    fig = ax.figure
    width = _text_width(ax, text) * 72 / fig.dpi + 4  # its white box and a gap, in points
    box = ax.get_window_extent()
    to_pt = 72 / fig.dpi

    def at(x: float) -> float:
        return float(ax.transData.transform((x, 0))[0])

    zero = at(0.0)
    right_room = (box.x1 - at(high)) * to_pt
    if right_room >= width + 8 and not at(high) < zero < at(high) + width / to_pt:
        return high, "left", 3.0
    left_room = (at(low) - box.x0) * to_pt
    if left_room >= width + 8 and not at(low) - width / to_pt < zero < at(low):
        return low, "right", -3.0
    return None


def _missing_why(label: str, dataset: str) -> str:
    """What a forest row says where its score is missing on a dataset: "no generator" for the
    generator's own scores on planted errors (the outputs were not generated, so they cannot
    exist), else "not run" (the score was not asked there)."""
    planted = dataset_label(dataset)[1].startswith("planted")
    return "no generator" if planted and ("token log-probs" in label or "generator" in label) else "not run"


def _text_width(ax: Any, text: str) -> float:
    """The width (display pixels) ``text`` takes at :data:`NOTE_PT` in ``ax``'s figure."""
    probe = ax.text(0, 0, text, fontsize=NOTE_PT)
    width = float(probe.get_window_extent().width)
    probe.remove()
    return width


def _under(ax: Any, e: Estimate, y: float, colour: Any) -> Any:
    """A row's own count ("n=246, 123 wrong") under its estimate: centred on it in a wide panel,
    on the panel in a narrow one, and moved in so that it stays inside the frame (on two lines
    where one is wider than the panel). Returns the note."""
    note = f"n={e.n:,}, {e.positives:,} wrong"
    box = ax.get_window_extent()
    want = 0.5 if _narrow() else e.value
    if _text_width(ax, note) + 2 * _clear(ax) >= box.width:
        note = note.replace(", ", ",\n")
    return _hang(ax, note, want, y, colour)


def _clear(ax: Any) -> float:
    """How far (pixels) a note under an estimate keeps from the frame: 5 points, its box's pad included."""
    return 5 * ax.figure.dpi / 72


def _hang(ax: Any, note: str, want: float, y: float, colour: Any) -> Any:
    """``note`` under row ``y``, centred as near ``want`` as the frame allows (:func:`_inside`)."""
    x = _inside(ax, want, note, _clear(ax))
    return ax.annotate(note, (x, y), xytext=(0, -3.5), textcoords="offset points", fontsize=NOTE_PT, ha="center",
                       va="top", color=colour, bbox=_UNDER_LINE, zorder=3)  # fmt: skip


def _inside(ax: Any, want: float, note: str, clear: float) -> float:
    """The x (data) nearest ``want`` where ``note``, centred on it, stays ``clear`` pixels inside the
    panel's frame (the panel's middle where it cannot)."""
    box = ax.get_window_extent()
    x0, x1 = ax.get_xlim()
    half = max(_text_width(ax, line) for line in note.split("\n")) / 2 + clear
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
    fits = [side for side in ("right", "left") if room[side] >= _text_width(ax, note)]
    if not fits and below:
        return _hang(ax, note, e.value, y, colour)
    if not fits:
        note = note.split("% ")[-1]
        fits = [side for side in ("right", "left") if room[side] >= _text_width(ax, note)]
    side = fits[0] if fits else max(room, key=room.__getitem__)
    right = side == "right"
    return ax.annotate(note, (high if right else low, y), xytext=(4 if right else -4, 0), textcoords="offset points",
                       fontsize=NOTE_PT, ha="left" if right else "right", va="center", color=colour,
                       bbox=_UNDER_LINE, zorder=3)  # fmt: skip


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
    if counted and _narrow():  # a row's own count hangs on two lines under its marker: room before the next row
        need = max(need, 2.5)
    _, n_rows = grid_shape(len({e.panel for e in estimates}), per_line or _panels_per_line(estimates))
    return n_rows * ((0.1 + 0.08 * need) * len(rows) + 1.05) + 0.45


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
    :func:`~construct_eval.paper.figure_data.common_review_rows`), first lines saying so, with their
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
    legend_cols = _legend_columns(2)  # the scores, random order, a perfect score: two a row where they fit
    legend_rows = 0 if spare else math.ceil((len(labels) + 1 + perfect + ringed) / legend_cols)
    title_lines = sum(  # a title over four lines (a long dataset name) takes the axes' height too
        max(max(0, _title_lines(d, titled[d]) - 4) for d in datasets[i : i + line])
        for i in range(0, len(datasets), line)
    )
    height = (n_rows * 1.75 + 0.35 + 0.14 * legend_rows + note_lines * NOTE_PT * 1.25 / 72
              + title_lines * TITLE_LINE_IN)  # fmt: skip
    return titled, own_notes, height


PERFECT = "a perfect score"
PERFECT_LINE = {"color": "0.72", "lw": 1.1, "ls": "-", "zorder": 1}
"""A perfect score's review curve: light and solid, so it reads apart from the dashed random
order and from the field prior's dotted grey curve."""


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
PERFECT_BAND_ALPHA = 0.45


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
        fig = _figure(style, height)
        cells, line = review_grid(len(datasets), line, beside)
        axes = _grid(fig, len(datasets), line, cells, sharex=True, sharey=True)
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
            unit = _unit(level, granularity.get(dataset, "top"))
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
        _level_titles(axes, line)
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
        _legend(fig, handles, [*labels, "random order", *perfect, *ring], ncols=2)
    return fig


# --------------------------------------------------------------------------- what a rating means


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
    wide = _narrow() or (len(n) and float(n.max()) >= 1000)  # a count at 1 or 10 clear of the frame
    ax.set_xlim(*((-0.2, 11.2) if wide else (0.3, 10.7)))
    ticks = [0, 1] if _narrow() else [0, 0.5, 1]  # in %, as the titles and the caption say a share wrong
    ax.set_yticks(ticks, [f"{100 * t:.0f}" for t in ticks])
    # the items at each value as a row of numbers (grey where few), upright at the notes' size; where
    # neighbouring values would crowd a narrow panel, on two staggered lines
    narrow = _narrow()
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
    cut = "\n" if _narrow() else " "  # a one-column panel's title keeps to the panel's width
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
    width = 52 if _narrow() else 110
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
        per_line = 2 if _narrow() else 3
        height += 0.14 + (0.14 if not _narrow() else 0.138) * math.ceil(entries / per_line)
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
        if _narrow():  # a part of one column: each line wrapped as a whole
            width = 19 if len(row) > 2 else 31
            title = "\n".join(wrap(line, width) for line in title.split("\n"))
        titles.append(title)
    return titles


def _meaning_row_in(row: Sequence[MeaningPanel]) -> float:
    """The height (inches) of one row of the meaning figure: taller where its titles run past three lines."""
    lines = max((t.count("\n") + 1 for t in _meaning_titles(row)), default=3)
    narrow = 0.3 if _narrow() else 0.0  # a one-column panel: its share-wrong strip tall enough to read
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
        fig = _figure(style, meaning_grid_height(panels))
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
                sub.suptitle(wrap(head, 40 if _narrow() else 90), fontsize="small", fontweight="bold")
            grid = sub.add_gridspec(2, ncols, height_ratios=[2.4, 1.3] if _narrow() else [2.6, 1])
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
            last.legend(handles, labels, loc="outside lower center", ncols=2 if _narrow() else 3, frameon=False,
                        fontsize="x-small")  # fmt: skip
    return fig


def meaning_figure(tables: Sequence[ValueTable], *, style: Mapping[str, Any], small: Sequence[str] = ()) -> Figure:
    """One panel per written rating (the appendix): observed error rate per value (Wilson 95%;
    grey: fewer than 20 items) with the naive reading and the out-of-fold isotonic and Platt maps
    over it, and below it the number of items at each value."""
    import matplotlib

    with matplotlib.rc_context(dict(style)):
        ncols, nrows = grid_shape(len(tables))
        fig = _figure(style, meaning_height(len(tables)))
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
            width = 31 if not _narrow() else 26
            small_mark = " (too few)" if t.path in small or t.dataset in small else ""
            ax.set_title(wrap(f"{name}, {how.split(',')[0]}\n{label}\n{t.wrong:,} of {t.n:,} {_unit(t.level)} wrong"
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
        _legend_below(fig, handles, labels, ncols=3)
    return fig


# --------------------------------------------------------------------------- prompt order

_ORDER_PANELS = (
    ("rating", "mean_shift", "shift_low", "shift_high", "forced rating (1-10):\nshift, per output", "rating points"),
    ("expected_rating", "mean_shift", "shift_low", "shift_high", "expected rating:\nshift, per output",
     "rating points"),
    ("rating", "auroc_diff", "auroc_diff_low", "auroc_diff_high", "forced rating (1-10):\nchange in AUROC", "ΔAUROC"),
    ("expected_rating", "auroc_diff", "auroc_diff_low", "auroc_diff_high", "expected rating:\nchange in AUROC",
     "ΔAUROC"),
)  # fmt: skip
"""The order figure's panels: (value, column, interval's low, high, title, unit), parallel titles
(the rating, then what is drawn)."""


def _default_auroc(rows: Sequence[Mapping[str, Any]]) -> str:
    """The AUROC of a rating in the default order (the bias table's ``auroc_a``), the line under an
    AUROC-change panel: "AUROC, default order: 0.496", with the run where the rows differ (none over
    two runs: the line would outgrow the panel)."""
    found = {r["run"]: _float(r.get("auroc_a")) for r in rows}
    found = {run: a for run, a in found.items() if not math.isnan(a)}
    if not found:
        return ""
    if len({f"{a:.3f}" for a in found.values()}) == 1:
        return f"AUROC, default order: {next(iter(found.values())):.3f}"
    if len(found) > 2:  # a line per run would outgrow the panel: the bias tables have them
        return ""
    return "AUROC, default order: " + ", ".join(f"{dataset_label(run)[0]} {a:.3f}" for run, a in found.items())


DEFAULT_ORDER = "default order (the dashed line: no change from it): document, schema, output, fields as extracted"


def order_words(variant: str) -> str:
    """A prompt order in words, from its variant ("sec:o-s-r|fields:original" -> "output, schema,
    document, fields as extracted"), in the section words the score names use: the order figure's footer defines each order it draws."""
    parts = dict(p.split(":", 1) for p in str(variant).split("|") if ":" in p)
    sections = ", ".join(SECTION_WORDS.get(s, s) for s in parts.get("sec", "r-s-o").split("-"))
    fields = parts.get("fields", "original")
    said = {"original": "fields as extracted", "reversed": "last field first"}.get(
        fields, "fields shuffled" if fields.startswith("shuffled") else f"fields {fields}"
    )
    return f"{sections}, {said}"


def order_figure(
    by_value: Mapping[str, Sequence[Mapping[str, Any]]], *, style: Mapping[str, Any], small: bool = False
) -> Figure:
    """Paired shift against the default order (mean and 95% document-bootstrap interval) of the
    written rating and of its expected rating, and the change in AUROC (with the rating's AUROC in
    the default order under the panel), one row per (run, order);
    each row names its dataset (and, with ``small``, says it is too small to judge). Where every
    row is on one dataset, the figure's title names it once and the rows name only their order."""
    import matplotlib

    keys = list(dict.fromkeys((r["run"], r["variant_b"]) for rows in by_value.values() for r in rows))
    n_of = {(r["run"], r["variant_b"]): r["n"] for rows in by_value.values() for r in rows}
    one_run = len({run for run, _ in keys}) == 1
    mark = ", too few to judge" if small else ""

    def dataset(run: str) -> str:
        name, how = dataset_label(run)
        return f"{name} ({how.split(',')[0]})"

    # one dataset and one n: the title gives "67 of 200 outputs wrong", so a row names its order alone
    title_n = one_run and len({int(_float(n)) for n in n_of.values() if n not in (None, "")}) == 1

    def label(run: str, variant: str) -> str:
        if title_n:
            return wrap(order_label(variant), 20 if _narrow() else 30)
        text = f"{order_label(variant)} (n={int(_float(n_of[(run, variant)])):,}{'' if one_run else mark})"
        return wrap(text if one_run else f"{dataset(run)}: {text}", 20 if _narrow() else 30)

    with matplotlib.rc_context(dict(style)):
        lines = max((label(*k).count("\n") + 1 for k in keys), default=1)
        # room for the default order's AUROC under the AUROC-change panels, where it is written
        defaults = any(
            _default_auroc([r for r in rows if (r["run"], r["variant_b"]) in keys]) for rows in by_value.values()
        )
        orders = [DEFAULT_ORDER, *dict.fromkeys(f"{order_label(v)}: {order_words(v)}" for _, v in keys)]
        # the footer defines every order drawn, a line each, where there are few
        footer = (
            "\n".join(wrap(o, 60) if _narrow() else o for o in orders)
            if len(orders) <= 3
            else wrap(DEFAULT_ORDER, 60 if _narrow() else 110)  # many orders (an appendix figure): labels name them
        )
        extra = (0.12 if defaults else 0) + (0.25 if one_run else 0) + 0.12 * footer.count("\n")
        fig = _figure(style, 2 * ((0.12 + 0.1 * lines) * len(keys) + 0.75) + 0.2 + extra)
        grid = fig.subplots(2, 2, sharey=True, squeeze=False)
        axes = [grid[0][0], grid[0][1], grid[1][0], grid[1][1]]
        notes: list[
            tuple[Any, float, int, str, str, float, float]
        ] = []  # the share of written ratings an order changes
        for ax, (value, mid, low, high, title, unit) in zip(axes, _ORDER_PANELS, strict=True):
            rows = {(r["run"], r["variant_b"]): r for r in by_value.get(value, [])}
            colour = OKABE_ITO[6] if value == "expected_rating" else OKABE_ITO[4]
            for y, key in enumerate(keys):
                r = rows.get(key)
                if r is None or math.isnan(_float(r.get(mid))):
                    continue
                ax.plot([_float(r[low]), _float(r[high])], [y, y], color=colour, lw=1.0)
                marker = "D" if value == "expected_rating" else "o"  # the expected rating's diamond, as elsewhere
                (dot,) = ax.plot([_float(r[mid])], [y], marker=marker, ms=3.5, color=colour, lw=0)
                plots.tag(dot, "|".join(key))
                share = _float(r.get("share_changed"))
                if mid == "mean_shift" and value == "rating" and not math.isnan(share):  # a mean of few changes
                    notes.append(
                        (
                            ax,
                            _float(r[mid]),
                            y,
                            f"{small_share(share)} changed",
                            colour,
                            _float(r[low]),
                            _float(r[high]),
                        )
                    )
            ax.axvline(0, color="grey", lw=0.6, ls="--")
            ax.set_title(title, fontsize="x-small")
            ax.set_ylim(len(keys) - 0.5, -0.5)
            xlabel = f"{unit},{chr(10) if _narrow() else ' '}order minus default"
            if mid == "mean_shift":  # which way is lenient
                xlabel += "\n(> 0: rates higher)"
            if mid == "auroc_diff":  # what the change is against: the rating's AUROC in the default order
                drawn = [r for r in by_value.get(value, []) if (r["run"], r["variant_b"]) in keys]
                if default := _default_auroc(drawn):
                    xlabel += "\n" + wrap(default, 20 if _narrow() else 40)
            ax.set_xlabel(xlabel, fontsize="x-small")
            ax.tick_params(axis="x", labelsize=TICK_PT)
            ax.locator_params(
                axis="x", nbins=3 if _narrow() else 5, min_n_ticks=3
            )  # "-0.050" and its neighbours need room
            same_row = [p for p in _ORDER_PANELS if p[1] == mid]  # a row of panels shares its x scale
            ends = [
                _float(r[p[2]]) for p in same_row for r in by_value.get(p[0], []) if (r["run"], r["variant_b"]) in keys
            ]
            ends += [
                _float(r[p[3]]) for p in same_row for r in by_value.get(p[0], []) if (r["run"], r["variant_b"]) in keys
            ]
            ends = [x for x in ends if not math.isnan(x)] + [0.0]
            lo, hi = min(ends), max(ends)
            pad = max(hi - lo, 0.1) * 0.08 + max(0.0, 0.1 - (hi - lo)) / 2  # at least 0.1 wide, markers inside
            ax.set_xlim(lo - pad, hi + pad)
            ax.tick_params(axis="y", length=0)
        drawn = []
        if notes:
            fig.draw_without_rendering()  # the panels at their laid-out widths, to measure against the zero line
        for ax, x, y, text, colour, lo_end, hi_end in notes:
            beside = _beside_interval(ax, text, lo_end, hi_end)
            if beside is not None:  # on its own row, past an end of its interval (under it, it met the row below)
                end, ha, dx = beside
                drawn.append(ax.annotate(text, (end, y), xytext=(dx, -1.5), textcoords="offset points", fontsize=NOTE_PT,
                                         ha=ha, va="center", color=colour, bbox=_UNDER_LINE, zorder=3))  # fmt: skip
                continue
            # else under its marker, running away from the nearer frame
            left, right = ax.get_xlim()
            side = (x - left) / (right - left)
            ha = "left" if side < 0.35 else "right" if side > 0.65 else "center"
            dx = {"left": -2.0, "right": 2.0, "center": 0.0}[ha]
            if ha != "center":  # a note whose white box would cover the dashed zero line starts beyond it
                to_zero = (ax.transData.transform((0, 0))[0] - ax.transData.transform((x, 0))[0]) * 72 / fig.dpi
                width = _text_width(ax, text) * 72 / fig.dpi
                sign = 1 if ha == "left" else -1
                start, end = sorted((dx, dx + sign * width))
                if start - 6 <= to_zero <= end + 6:  # its white box (about 2 pt) clear of the line too
                    dx = to_zero + sign * 4.5
            drawn.append(ax.annotate(text, (x, y), xytext=(dx, -4),
                                     textcoords="offset points", fontsize=NOTE_PT, ha=ha, va="top", color=colour,
                                     bbox=_UNDER_LINE, zorder=3))  # fmt: skip
        for ax in (axes[0], axes[2]):
            ax.set_yticks(range(len(keys)), [label(*k) for k in keys])
        fig.supxlabel(footer, fontsize="x-small")
        if one_run and keys:
            wrong = {
                int(_float(r["wrong"])) for rows in by_value.values() for r in rows if r.get("wrong") not in (None, "")
            }
            judged = {int(_float(n)) for n in n_of.values() if n not in (None, "")}
            of = (
                f", {wrong.pop():,} of {judged.pop():,} outputs wrong"
                if len(wrong) == 1 and len(judged) == 1
                else f", {wrong.pop():,} outputs wrong"
                if len(wrong) == 1
                else ""
            )
            fig.suptitle(wrap(dataset(keys[0][0]) + of + mark, 60), fontsize="small")
        _room_under(fig, drawn)
    return fig


def _room_under(fig: Figure, notes: Sequence[Any], margin_pt: float = 2.0) -> None:
    """Lower each panel's bottom until the notes drawn under its last row clear its frame by
    ``margin_pt`` (white box included): a note on the frame's line reads as cut (the y axis runs
    down, rows from the top)."""
    if not notes:
        return
    fig.draw_without_rendering()  # the panels at their laid-out sizes
    margin = margin_pt * fig.dpi / 72
    want: dict[Any, float] = {}  # a panel's new bottom limit
    for note in notes:
        ax = note.axes
        box = readability.note_extent(note)
        frame = ax.get_window_extent()
        short = frame.y0 + margin - box.y0
        if short <= 0:
            continue
        bottom, top = ax.get_ylim()
        anchor = note.xy[1]  # the note hangs a fixed distance under its marker: lift the marker by `short`
        lifted = (anchor - bottom) / (top - bottom) + short / frame.height
        new = (anchor - lifted * top) / (1 - lifted)
        want[ax] = new if ax not in want or abs(new - top) > abs(want[ax] - top) else want[ax]
    done: set[int] = set()
    for ax in want:  # panels sharing y (rows kept level) take the lowest bottom any of them needs
        if id(ax) in done:
            continue
        group = ax.get_shared_y_axes().get_siblings(ax)
        done.update(id(a) for a in group)
        top = ax.get_ylim()[1]
        ax.set_ylim(max((want[a] for a in group if a in want), key=lambda b: abs(b - top)), top)


# --------------------------------------------------------------------------- reliability


def reliability_height(panels: int) -> float:
    """The height (inches) :func:`reliability_grid` gives so many panels in the current style context."""
    import matplotlib

    width, _ = matplotlib.rcParams["figure.figsize"]
    ncols, nrows = grid_shape(panels)
    return nrows * (width / ncols * 0.9 + 0.35) + 0.35


def reliability_grid(bins: Sequence[Mapping[str, Any]], *, style: Mapping[str, Any]) -> Figure:
    """Out-of-fold reliability diagrams, one panel per (score, dataset), score by score: the
    observed error rate (Wilson 95%) per equal-mass bin of predicted P(error), isotonic and Platt."""
    import matplotlib

    pairs = list(dict.fromkeys((b["scorer"], b["dataset"]) for b in bins))
    with matplotlib.rc_context(dict(style)):
        width, _ = matplotlib.rcParams["figure.figsize"]
        ncols, _ = grid_shape(len(pairs))
        fig = Figure(figsize=(width, reliability_height(len(pairs))), layout="constrained")
        axes = _grid(fig, len(pairs), sharex=True, sharey=True)
        for k, (ax, (scorer, dataset)) in enumerate(zip(axes, pairs, strict=True)):
            mine = [b for b in bins if b["scorer"] == scorer and b["dataset"] == dataset]
            tables = {m: [b for b in mine if b["method"] == m] for m in ("isotonic", "platt")}
            plots.draw_reliability(ax, {m: t for m, t in tables.items() if t}, ms=2)
            n = sum(int(_float(b["n"])) for b in mine if b["method"] == mine[0]["method"])
            name, how = dataset_label(dataset)
            ax.set_title(
                wrap(f"{plots.labels_for([scorer])[0]}\n{name}, {how.split(',')[0]}\nn={n:,}", 20 if _narrow() else 30),
                fontsize="x-small",
            )
            ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
            ax.set_yticks([0, 0.5, 1], ["0", "0.5", "1"])
            if k % ncols == 0:
                ax.set_ylabel("observed\nerror rate", fontsize="x-small")
            if k >= len(pairs) - ncols:
                ax.set_xlabel("predicted P(error)", fontsize="x-small")
        handles, labels = [], []
        for ax in axes:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        _legend_below(fig, handles, labels)
    return fig


# --------------------------------------------------------------------------- the paper's comparison

PER_OUTPUT_MARK = "\u2021"  # a double dagger: the set's daggers mark underpowered rows
"""The dagger after a per-field judge's label in the CONSTRUCT figure (:data:`PAPER_LABELS`)."""
PER_OUTPUT_NOTE = f"{PER_OUTPUT_MARK} per output: the output's least field rating"
JSON_SCHEMA_NOTE = "JSON schema: every field in one call,\nan explanation then a rating each"
"""What "judge rating (JSON schema)" is, in the CONSTRUCT figure's legend: the paper's per-field judge."""
CONSTRUCT_GEN_NOTE = "with the generator's samples: adds their\nconsistency and the token probability"
"""What the second CONSTRUCT row adds to the authors' self-reflection (TLM's observed consistency over
the generator's stored samples and its token probability), in the CONSTRUCT figure's legend."""
"""What the dagger says, in the CONSTRUCT figure's legend (per field, the row is the field ratings)."""
PAPER_LABELS = {
    "construct": "CONSTRUCT (authors' TLM)",
    "construct-gen": "CONSTRUCT with the generator's samples",
    "judge-doc": "judge rating (free)\nof the whole output",
    "judge-field": f"judge rating (JSON schema)\nof each field{PER_OUTPUT_MARK}",
    "judge-field-forced": f"judge rating (forced)\nof each field{PER_OUTPUT_MARK}",
    "token-logprob": "token log-probs",
}
"""The paper's methods as the CONSTRUCT figure names them (the table's ``key`` column), in the
words the other figures use (:func:`display_name`). A label says what the judge rates (the whole
output, or each field), not the column's level: a per-field judge's row is its field ratings in
the per-field column and each output's least field rating in the per-output column, and a reader
met "per field" beside a per-output estimate as a contradiction; the mark
(:data:`PER_OUTPUT_MARK`) sends the reader to the legend's note (:data:`PER_OUTPUT_NOTE`)."""
PAPER_STYLES = {
    "construct": (CONSTRUCT_COLOUR, "*"),
    "construct-gen": (CONSTRUCT_COLOUR, "p"),
    "judge-doc": (OKABE_ITO[1], "s"),
    "judge-field": (JSON_JUDGE_COLOUR, "h"),
    "judge-field-forced": (OKABE_ITO[4], "o"),
    "token-logprob": (OKABE_ITO[5], "v"),
}
"""Each method's colour and marker in the CONSTRUCT figure, the same in every column (a method's
scorer differs between levels: the judge per field is its lowest field rating per output); the
colours are those :func:`~construct_eval.display.style.series_style` gives the same scores in the
other figures, CONSTRUCT's reserved for it."""
PAPER_BUDGET = "20%"
"""The review budget the CONSTRUCT figure's second row draws: a fifth of the items reviewed."""


def paper_comparison_height(methods: int, panel_rows: int = 2) -> float:
    """The height (inches) :func:`paper_comparison_figure` gives so many methods."""
    return panel_rows * (0.3 * methods + 0.75) + 0.95


def paper_comparison_figure(
    rows: Sequence[Mapping[str, Any]], *, style: Mapping[str, Any], interim: str = ""
) -> Figure:
    """The paper's own comparison (``construct-eval paper-comparison``): each method's AUROC
    (top) and the share of the wrong items it finds when the lowest-scored fifth is reviewed
    (bottom), with 95% document-bootstrap intervals, on the items every method of a level scored;
    a column per (run, level). Hollow: underpowered; "constant": one score for every item (0.5
    by construction); the dashed line is chance (AUROC 0.5, or a random review finding a fifth),
    the light solid line what a perfect score finds at that budget (the band: its interval, as the
    resampled items move it; no method's interval can reach past it). ``interim``: said after the
    dataset in the title ("interim: CONSTRUCT scored 23 of the 200 planned outputs",
    :func:`~construct_eval.paper.messages.paper_title`)."""
    import matplotlib
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from construct_eval.paper.figure_data import PAPER_METHODS, paper_flat_note

    panels = list(dict.fromkeys((r["dataset"], r["level"]) for r in rows))
    methods = [k for k in PAPER_METHODS if any(r["key"] == k for r in rows)]
    one_run = len({d for d, _ in panels}) == 1
    weak_any = banded = False
    with matplotlib.rc_context(dict(style)):
        narrow = _narrow()
        found = (  # in %, as the caption gives it
            f"% wrong found,\nlowest-scored\n{PAPER_BUDGET} reviewed"
            if narrow
            else f"% of wrong found,\nthe lowest-scored {PAPER_BUDGET} reviewed"
        )
        metrics = (("auroc", "AUROC"), (f"recall@{PAPER_BUDGET}", found))
        title = ""
        if one_run and panels:
            name, how = dataset_label(panels[0][0])
            width = 52 if narrow else 75  # characters a line of the title holds at its size
            head = wrap(f"{name}, {how.split(',')[0]}", width)
            said = wrap_even(interim.replace("; ", ";\n"), width)
            title = head + (f"\n{said}" if interim else "")
        # a title past two lines takes its room from the figure, not from the panels' rows
        more = max(0, title.count("\n") + 1 - 2) * 0.17
        fig = _figure(style, paper_comparison_height(len(methods)) + more)
        grid = fig.subplots(len(metrics), len(panels), sharey=True, squeeze=False)
        for j, (dataset, level) in enumerate(panels):
            mine = {r["key"]: r for r in rows if (r["dataset"], r["level"]) == (dataset, level)}
            common = next(r for r in mine.values() if not math.isnan(r["n"]))
            n, wrong = int(common["n"]), int(common["wrong"])
            for i, (metric, xlabel) in enumerate(metrics):
                ax = grid[i][j]
                for y, key in enumerate(methods):
                    r = mine.get(key)
                    if r is None or math.isnan(r.get(metric, math.nan)):
                        elsewhere = any(x["key"] == key and x["dataset"] == dataset and x["level"] != level
                                        and not math.isnan(x.get(metric, math.nan)) for x in rows)  # fmt: skip
                        other = "outputs" if level == "field" else "fields"
                        why = f"scores {other} only" if elsewhere else "not run"
                        if r is not None and key == "judge-doc":
                            why = "rates whole outputs"
                        why = wrap(why, 12) if narrow else why
                        ax.text(0.5, y, why, fontsize=NOTE_PT, ha="center", va="center", color=BASELINE_GREY,
                                bbox=_UNDER_LINE, zorder=3)  # fmt: skip
                        continue
                    colour, marker = PAPER_STYLES.get(key, (series_style(r["scorer"]).colour, "o"))
                    weak = bool(r.get("underpowered"))
                    weak_any |= weak
                    low, high, value = r[f"{metric}_low"], r[f"{metric}_high"], r[metric]
                    if not math.isnan(low):
                        ax.plot([low, high], [y, y], color=colour, lw=1.0, clip_on=False)
                    star = marker == "*"  # a hollow star needs room inside its edge to read as hollow
                    (dot,) = ax.plot([value], [y], marker=marker, ms=(7 if weak else 5) if star else 3.8, lw=0,
                                     color=colour, markerfacecolor="white" if weak else colour, clip_on=False,
                                     markeredgewidth=0.7 if star and weak else None)  # fmt: skip
                    plots.tag(dot, key)
                    flat = paper_flat_note(r)  # "constant", "2 values": a rating that barely orders the items
                    if flat and narrow:  # a one-column panel: under its marker, inside the frame
                        ax.annotate(flat, (min(max(value, 0.3), 0.7), y), xytext=(0, -3.5), textcoords="offset points",
                                    fontsize=NOTE_PT, ha="center", va="top", color=colour, bbox=_SEE_THROUGH,
                                    zorder=3)  # fmt: skip
                    elif flat:
                        right = value < 0.75
                        ax.annotate(flat, (max(value, high) if right else min(value, low), y),
                                    xytext=(4 if right else -4, 0), textcoords="offset points", fontsize=NOTE_PT,
                                    ha="left" if right else "right", va="center", color=colour, bbox=_SEE_THROUGH,
                                    zorder=3)  # fmt: skip
                budget = float(PAPER_BUDGET.rstrip("%")) / 100
                ax.axvline(0.5 if metric == "auroc" else budget, color="grey", lw=0.6, ls="--")
                if metric != "auroc":  # what a perfect score finds reviewing a fifth: all, if fewer are wrong
                    ceiling = common.get(f"{metric}_perfect", math.nan)
                    if math.isnan(ceiling):  # a table from before the ceiling's interval was stored
                        ceiling = min(1.0, budget * n / max(wrong, 1))
                    ax.axvline(ceiling, **{**PERFECT_LINE, "lw": 0.9})
                    low, high = (
                        common.get(f"{metric}_perfect_low", math.nan),
                        common.get(f"{metric}_perfect_high", math.nan),
                    )
                    if not math.isnan(low) and high > low:  # the ceiling moves with the resampled items
                        ax.axvspan(low, high, color=PERFECT_LINE["color"], alpha=PERFECT_BAND_ALPHA, lw=0,
                                   zorder=PERFECT_LINE["zorder"])  # fmt: skip
                        banded = True
                ax.set_xlim(-FOREST_MARGIN, 1 + FOREST_MARGIN)
                ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"] if metric == "auroc" else ["0", "50", "100"])
                ax.set_ylim(len(methods) - 0.5, -0.6)
                ax.tick_params(axis="y", length=0)
                ax.set_xlabel(xlabel, fontsize="small")
                if i == 0:
                    unit = "outputs" if level == "document" else "fields"
                    head = "" if one_run else f"{wrap(dataset_label(dataset)[0], 24)}\n"
                    if _narrow():
                        panel = f"{head}per {unit[:-1]}:\n{wrong:,} of {n:,} wrong\n({unit} every\nmethod scored)"
                    else:
                        panel = f"{head}per {unit[:-1]}: {wrong:,} of {n:,} wrong\n({unit} every method scored)"
                    ax.set_title(panel, fontsize="x-small")
            names = [wrap(PAPER_LABELS.get(k, k), 30) for k in methods]
            grid[0][0].set_yticks(range(len(methods)), names)
            grid[1][0].set_yticks(range(len(methods)), names)
        handles = [Line2D([], [], color="grey", lw=0.6, ls="--"), Line2D([], [], **{**PERFECT_LINE, "lw": 0.9})]
        labels = ["chance (AUROC 0.5; a random review)", "a perfect score"]
        if banded:
            handles[1] = (Patch(facecolor=PERFECT_LINE["color"], alpha=PERFECT_BAND_ALPHA, lw=0), handles[1])
            labels[1] = "a perfect score (its 95% interval: the band)"

        if weak_any:
            every = all(r.get("underpowered") for r in rows if not math.isnan(r.get("auroc", math.nan)))
            handles.append(Line2D([], [], color="black", marker="o", ms=3.5, markerfacecolor="white", lw=0))
            labels.append("underpowered" + (" (every row)" if every else ""))
        if any(PER_OUTPUT_MARK in PAPER_LABELS.get(k, "") for k in methods):  # a per-field judge's two readings
            handles.append(Line2D([], [], lw=0))
            labels.append(PER_OUTPUT_NOTE)
        if "judge-field" in methods:  # the paper's per-field judge, in the words of its recipe
            handles.append(Line2D([], [], lw=0))
            labels.append(JSON_SCHEMA_NOTE)
        if "construct-gen" in methods:  # what the second CONSTRUCT row adds
            handles.append(Line2D([], [], lw=0))
            labels.append(CONSTRUCT_GEN_NOTE)
        _legend_below(fig, handles, labels)
        if title:
            fig.suptitle(title, fontsize="small")
    return fig
