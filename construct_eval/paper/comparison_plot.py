"""The paper's own comparison (:func:`paper_comparison_figure`, ``construct-eval
paper-comparison``): each method's AUROC and the share of the wrong items it finds when a fifth is
reviewed, CONSTRUCT beside the judges, with the labels and styles the figure names its methods by
(:data:`PAPER_LABELS`). Its layout is the figures' shared one (:mod:`.paper_plots`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from construct_eval.display import plots
from construct_eval.display.style import (
    BASELINE_GREY,
    CONSTRUCT_COLOUR,
    JSON_JUDGE_COLOUR,
    OKABE_ITO,
    series_style,
    wrap,
    wrap_even,
)
from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.paper.paper_plots import (
    FOREST_MARGIN,
    NOTE_PT,
    PERFECT_BAND_ALPHA,
    PERFECT_LINE,
    SEE_THROUGH,
    UNDER_LINE,
    is_narrow,
    legend_below,
    new_figure,
)

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
    :func:`~construct_eval.paper.comparison_messages.paper_title`)."""
    import matplotlib
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from construct_eval.paper.figure_data import PAPER_METHODS, paper_flat_note

    panels = list(dict.fromkeys((r["dataset"], r["level"]) for r in rows))
    methods = [k for k in PAPER_METHODS if any(r["key"] == k for r in rows)]
    one_run = len({d for d, _ in panels}) == 1
    weak_any = banded = False
    with matplotlib.rc_context(dict(style)):
        narrow = is_narrow()
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
        fig = new_figure(style, paper_comparison_height(len(methods)) + more)
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
                                bbox=UNDER_LINE, zorder=3)  # fmt: skip
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
                                    fontsize=NOTE_PT, ha="center", va="top", color=colour, bbox=SEE_THROUGH,
                                    zorder=3)  # fmt: skip
                    elif flat:
                        right = value < 0.75
                        ax.annotate(flat, (max(value, high) if right else min(value, low), y),
                                    xytext=(4 if right else -4, 0), textcoords="offset points", fontsize=NOTE_PT,
                                    ha="left" if right else "right", va="center", color=colour, bbox=SEE_THROUGH,
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
                    if is_narrow():
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
        legend_below(fig, handles, labels)
        if title:
            fig.suptitle(title, fontsize="small")
    return fig
