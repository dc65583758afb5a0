"""The layout the paper's figures share, at a venue's size: the sizes (:data:`PANELS_PER_ROW`,
:data:`MAX_HEIGHT_IN`, ...), grids of panels and their height, legends, panel titles, row labels,
and the notes under or beside an estimate that more than one figure places.

Each figure draws in its own module:

- :mod:`.forest_plot`: how well each score finds wrong items: AUROC (or AUPRC, with the share
  wrong marked) with 95% document-bootstrap intervals, scores as rows, datasets as panels;
  underpowered rows hollow, baselines that use the labels grey;
- :mod:`.review_plot`: what a review budget buys: the share of wrong items found when the
  lowest-scored 5/10/20/30% are reviewed, against reviewing in random order;
- :mod:`.meaning_plot`: what each rating value means: the observed error rate (Wilson 95%)
  per value with the number of items below it, the naive reading and the out-of-fold isotonic
  and Platt maps;
- :mod:`.order_plot`: does the prompt order sway the judge: the paired shift of the written
  rating and of its expected rating, and the change in AUROC, per order;
- :mod:`.reliability_plot`: out-of-fold reliability diagrams, one panel per (score, dataset);
- :mod:`.comparison_plot`: the paper's own comparison (CONSTRUCT and the judges), AUROC and
  the share found at a fifth reviewed.

Labels come from :func:`~construct_eval.display.style.display_name` and
:func:`~construct_eval.display.style.dataset_label`; drawing on each axes from
:mod:`~construct_eval.display.plots` where the per-run figures draw the same thing.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from construct_eval.display import readability
from construct_eval.display.style import display_name, wrap
from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.paper.figure_data import order_key

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


UNDER_LINE = {"facecolor": "white", "edgecolor": "none", "pad": 0.3}
"""A note's background: the chance line passes under a note, not through its letters."""


SEE_THROUGH = {"facecolor": (1, 1, 1, 0.65), "edgecolor": "none", "pad": 0.3}
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


def is_narrow() -> bool:
    """Whether the current figure is one column of two (about 3.3 in) rather than the text width."""
    import matplotlib

    return bool(matplotlib.rcParams["figure.figsize"][0] < 4.5)


def row_granularity(scorer: str) -> str | None:
    """The fields a row's items are ("leaf", "top"), None when its name does not say."""
    from construct_eval.types import ScorerId

    try:
        return ScorerId.parse(scorer).granularity
    except ValueError:
        return None


def unit_of(level: str, granularity: str = "top") -> str:
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


def title_line_count(dataset: str, titled: tuple[int, int]) -> int:
    """Lines of a review panel's title (:func:`panel_title`); the unit does not change the count."""
    return panel_title(dataset, titled[0], titled[1], "fields").count("\n") + 1


def grid_shape(panels: int, per_line: int | None = None) -> tuple[int, int]:
    """(columns, rows) of a grid of so many panels: at most ``per_line`` (default :func:`per_row`,
    the current figure width's) a row; the one shape a grid figure and its height helper share."""
    ncols = max(1, min(panels, per_line or per_row()))
    return ncols, max(1, math.ceil(panels / ncols))


_SPARE: weakref.WeakKeyDictionary[Figure, list[Any]] = weakref.WeakKeyDictionary()
"""Each grid figure's spare cells (:func:`panel_grid`)."""


_COLUMNS: weakref.WeakKeyDictionary[Figure, int] = weakref.WeakKeyDictionary()
"""Each grid figure's columns (:func:`panel_grid`): a spare cell's width."""


def panel_grid(fig: Figure, n_panels: int, per_line: int | None = None, cells: int = 0, **kwargs: Any) -> list[Any]:
    """Axes for ``n_panels`` panels, at most ``per_line`` (default :func:`per_row`) a row, in a grid
    of at least ``cells`` cells (one more than the panels: a cell for the legend); spare cells hidden."""
    ncols, nrows = grid_shape(max(n_panels, cells), per_line)
    grid = fig.subplots(nrows, ncols, squeeze=False, **kwargs)
    axes = [ax for row in grid for ax in row]
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    _SPARE[fig] = axes[n_panels:]  # spare cells: where a legend can go (:func:`legend`)
    _COLUMNS[fig] = ncols
    return axes[:n_panels]


def level_titles(axes: Sequence[Any], per_line: int) -> None:
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
    which then holds the legend: :func:`legend`): every panel on one row where they fit, four as
    two by two, else ``most`` (default :func:`per_row`) a row."""
    most = most or per_row()
    if panels <= most:
        return max(1, panels)
    if panels == 4:
        return 2
    return min(range(2, most + 1), key=lambda c: (-(-panels // c) * c - panels > 1, -c))


def legend(fig: Figure, handles: Sequence[Any], labels: Sequence[str], ncols: int = 3) -> None:
    """The legend in the grid's spare cell where it has one (no cell of the grid is left empty),
    else under the axes (:func:`legend_below`)."""
    spare = _SPARE.get(fig, [])
    if not spare or not handles:
        legend_below(fig, handles, labels, ncols)
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


def legend_columns(ncols: int, width: float | None = None) -> int:
    """Columns of legend entries a figure ``width`` in (default: the style's) holds, at most ``ncols``."""
    import matplotlib

    width = width if width is not None else matplotlib.rcParams["figure.figsize"][0]
    return max(1, min(ncols, int(width // 1.7)))


def legend_below(fig: Figure, handles: Sequence[Any], labels: Sequence[str], ncols: int = 3) -> None:
    """A legend under the axes, outside every one of them (constrained layout makes room)."""
    if handles:
        import matplotlib

        cols = min(legend_columns(ncols, fig.get_figwidth()), len(handles))
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


def new_figure(style: Mapping[str, Any], height: float) -> Figure:
    """A constrained-layout figure ``height`` in tall at the current style's width."""
    import matplotlib

    width, _ = matplotlib.rcParams["figure.figsize"]
    return Figure(figsize=(width, height), layout="constrained")


# --------------------------------------------------------------------------- used by more than one figure
# a panel's title row, a note's width and the room under a panel's notes, a perfect score's line


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


def text_width(ax: Any, text: str) -> float:
    """The width (display pixels) ``text`` takes at :data:`NOTE_PT` in ``ax``'s figure."""
    probe = ax.text(0, 0, text, fontsize=NOTE_PT)
    width = float(probe.get_window_extent().width)
    probe.remove()
    return width


PERFECT_LINE = {"color": "0.72", "lw": 1.1, "ls": "-", "zorder": 1}
"""A perfect score's review curve: light and solid, so it reads apart from the dashed random
order and from the field prior's dotted grey curve."""
PERFECT_BAND_ALPHA = 0.45
"""The band's shade where a panel's scores rate different items (each its own perfect curve)."""


def room_under(fig: Figure, notes: Sequence[Any], margin_pt: float = 2.0) -> None:
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
