"""What every builder of the paper's figure set shares: the figure it returns and how it names it.

A builder (:mod:`.figures` and the modules beside it: one per question the set answers) draws its
figures from stored run tables and returns each as a :class:`PaperFigure`: the figure, what the
manifest says of it and the tables its message quotes. :func:`figure_names` numbers a figure that
continues over pages, :func:`shown_scorers` maps its scores to the labels it shows, and
:func:`most_panels` says how many panels a grid holds at a venue's width.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from construct_eval.display.style import venue_style
from construct_eval.paper import paper_plots as pp
from construct_eval.paper.captions import Caption

MAX_NAME = 40
"""The longest file stem the set writes (the manifest maps each to what it shows)."""
MAX_PANELS = 9
"""Panels of a grid figure (a main figure; a meaning or reliability figure before it continues in a
numbered appendix figure)."""
Pick = Callable[[str], bool]
"""Which scorers a figure may draw (``--scorers``): every one by default."""


def every(_: str) -> bool:
    return True


@dataclass
class PaperFigure:
    """A figure of the set with what the manifest says about it."""

    name: str
    figure: Figure
    style: dict[str, Any]
    what: str
    inputs: list[Path]
    appendix: bool = False
    datasets: list[str] = field(default_factory=list)
    scorers: dict[str, str] = field(default_factory=dict)  # internal name -> label shown
    rows: list[tuple[str, str, str]] = field(default_factory=list)  # (dataset, level, scorer) drawn
    # a main figure's caption and its parts (:mod:`~construct_eval.paper.messages`)
    message: Caption = field(default_factory=lambda: Caption(""))
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # the tables its message reads, by file stem


def figure_names(base: str, n: int) -> list[str]:
    names = [base if k == 0 else f"{base}_{k + 1}" for k in range(n)]
    for name in names:
        if len(name) > MAX_NAME:
            raise ValueError(f"figure name {name!r} is longer than {MAX_NAME} characters")
    return names


def shown_scorers(rows: Iterable[Any]) -> dict[str, str]:
    """The manifest's scorer map: internal name -> the label its row or panel carries in the figure
    (:func:`paper_plots.row_labels`: one score under two internal names on two datasets is one row)."""
    return {str(k): v for k, v in pp.row_labels(list(rows)).items()}


def most_panels(height: Callable[[int], float], venue: str, column: str) -> int:
    """The most panels (at most :data:`MAX_PANELS`) a grid figure holds at the venue's width
    without growing taller than :data:`paper_plots.MAX_HEIGHT_IN`; ``height``: its height for so
    many panels in the style context."""
    import matplotlib

    with matplotlib.rc_context(venue_style(venue, column, ncols=pp.PANELS_PER_ROW + 1)):
        return max(k for k in range(1, MAX_PANELS + 1) if k == 1 or height(k) <= pp.MAX_HEIGHT_IN)
