"""The paper's own comparison: ``construct_vs_baselines`` (main), CONSTRUCT against its baselines
on the items every method scored, from each run's ``paper_comparison`` table."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from construct_eval.display.style import venue_style
from construct_eval.paper import comparison_messages, comparison_plot
from construct_eval.paper import figure_data as fd
from construct_eval.paper.figure_parts import PaperFigure, Pick
from construct_eval.paper.figure_parts import every as _every


def construct_figures(run_dirs: Sequence[Path], venue: str, column: str, pick: Pick = _every) -> list[PaperFigure]:
    """``construct_vs_baselines`` (main): CONSTRUCT against its baselines, the paper's own
    comparison, on every run with a ``paper_comparison`` table: each method's AUROC and the share
    of wrong items it finds reviewing a fifth, on the items every method of a level scored. The
    main figures' power rule does not drop its rows (it is the paper's question): underpowered
    rows are drawn hollow and the message says what the paired tests allow."""
    rows = [r for d in run_dirs for r in fd.read_paper_comparison(d) if pick(r["key"]) or pick(str(r["scorer"]))]
    rows = [r for r in rows if not all(r["dataset"] != x["dataset"] or x["key"] != "construct" for x in rows)]
    if not rows:
        return []
    same = {d for d in {r["dataset"] for r in rows}
            if fd.same_ranking([r for r in rows if r["dataset"] == d], "construct-gen")}  # fmt: skip
    drawn_rows = [r for r in rows if not (r["key"] == "construct-gen" and r["dataset"] in same)]
    style = venue_style(venue, column, ncols=2)
    fig = comparison_plot.paper_comparison_figure(
        drawn_rows, style=style, interim=comparison_messages.paper_title(rows)
    )
    inputs = [d / "metrics" / fd.PAPER_COMPARISON for d in run_dirs if (d / "metrics" / fd.PAPER_COMPARISON).exists()]
    sets = list(dict.fromkeys(r["dataset"] for r in rows))
    scorers = {
        str(r["scorer"]): comparison_plot.PAPER_LABELS.get(r["key"], r["key"]) for r in drawn_rows if r.get("scorer")
    }
    drawn = [(r["dataset"], r["level"], str(r["scorer"])) for r in drawn_rows if r.get("scorer")]
    return [PaperFigure("construct_vs_baselines", fig, style,
                        "does CONSTRUCT find wrong outputs and fields better than its baselines", inputs, False, sets,
                        scorers, drawn, comparison_messages.paper_comparison(rows))]  # fmt: skip
