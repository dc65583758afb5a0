"""The paper's prompt-order figure (:func:`order_figure`): does the prompt order sway the judge: the
paired shift of the written rating and of its expected rating, and the change in AUROC, per order.
Its layout is the figures' shared one (:mod:`.paper_plots`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from construct_eval.display import plots
from construct_eval.display.style import OKABE_ITO, order_label, wrap
from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.paper.figure_data import _float, small_share
from construct_eval.paper.paper_plots import NOTE_PT, TICK_PT, UNDER_LINE, is_narrow, new_figure, room_under, text_width
from construct_eval.scorer_labels import SECTION_WORDS


def _beside_interval(ax: Any, text: str, low: float, high: float) -> tuple[float, str, float] | None:
    """Where ``text`` fits on its row beside an interval [``low``, ``high``] inside ``ax``'s frame
    without crossing the dashed zero line: (the end it starts from, its alignment, its offset in
    points), right of the interval first; None where neither side has room."""
    fig = ax.figure
    width = text_width(ax, text) * 72 / fig.dpi + 4  # its white box and a gap, in points
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
            return wrap(order_label(variant), 20 if is_narrow() else 30)
        text = f"{order_label(variant)} (n={int(_float(n_of[(run, variant)])):,}{'' if one_run else mark})"
        return wrap(text if one_run else f"{dataset(run)}: {text}", 20 if is_narrow() else 30)

    with matplotlib.rc_context(dict(style)):
        lines = max((label(*k).count("\n") + 1 for k in keys), default=1)
        # room for the default order's AUROC under the AUROC-change panels, where it is written
        defaults = any(
            _default_auroc([r for r in rows if (r["run"], r["variant_b"]) in keys]) for rows in by_value.values()
        )
        orders = [DEFAULT_ORDER, *dict.fromkeys(f"{order_label(v)}: {order_words(v)}" for _, v in keys)]
        # the footer defines every order drawn, a line each, where there are few
        footer = (
            "\n".join(wrap(o, 60) if is_narrow() else o for o in orders)
            if len(orders) <= 3
            else wrap(DEFAULT_ORDER, 60 if is_narrow() else 110)  # many orders (an appendix figure): labels name them
        )
        extra = (0.12 if defaults else 0) + (0.25 if one_run else 0) + 0.12 * footer.count("\n")
        fig = new_figure(style, 2 * ((0.12 + 0.1 * lines) * len(keys) + 0.75) + 0.2 + extra)
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
            xlabel = f"{unit},{chr(10) if is_narrow() else ' '}order minus default"
            if mid == "mean_shift":  # which way is lenient
                xlabel += "\n(> 0: rates higher)"
            if mid == "auroc_diff":  # what the change is against: the rating's AUROC in the default order
                drawn = [r for r in by_value.get(value, []) if (r["run"], r["variant_b"]) in keys]
                if default := _default_auroc(drawn):
                    xlabel += "\n" + wrap(default, 20 if is_narrow() else 40)
            ax.set_xlabel(xlabel, fontsize="x-small")
            ax.tick_params(axis="x", labelsize=TICK_PT)
            ax.locator_params(
                axis="x", nbins=3 if is_narrow() else 5, min_n_ticks=3
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
                                         ha=ha, va="center", color=colour, bbox=UNDER_LINE, zorder=3))  # fmt: skip
                continue
            # else under its marker, running away from the nearer frame
            left, right = ax.get_xlim()
            side = (x - left) / (right - left)
            ha = "left" if side < 0.35 else "right" if side > 0.65 else "center"
            dx = {"left": -2.0, "right": 2.0, "center": 0.0}[ha]
            if ha != "center":  # a note whose white box would cover the dashed zero line starts beyond it
                to_zero = (ax.transData.transform((0, 0))[0] - ax.transData.transform((x, 0))[0]) * 72 / fig.dpi
                width = text_width(ax, text) * 72 / fig.dpi
                sign = 1 if ha == "left" else -1
                start, end = sorted((dx, dx + sign * width))
                if start - 6 <= to_zero <= end + 6:  # its white box (about 2 pt) clear of the line too
                    dx = to_zero + sign * 4.5
            drawn.append(ax.annotate(text, (x, y), xytext=(dx, -4),
                                     textcoords="offset points", fontsize=NOTE_PT, ha=ha, va="top", color=colour,
                                     bbox=UNDER_LINE, zorder=3))  # fmt: skip
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
        room_under(fig, drawn)
    return fig
