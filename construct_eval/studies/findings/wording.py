"""The findings' wording: Jinja2 templates over named cells, with filters that quote through a
:class:`~construct_eval.reports.cells.Ledger`.

A finding's numbers are named cells (:mod:`.facts`); its sentences are a template in
``templates/<finding>.md.j2`` that words them. A template reads a cell's other columns as
attributes (``forced.n`` is the cell ``forced`` with the column ``n``) and writes any number
through a filter, so every number it quotes is recorded in the ledger, in the order it is
written::

    AUROC {{ forced | interval }} on {{ forced.n | count }} sentences, {{ pair | diff }} ({{ pair.p_holm | holm }})

A template holds its finding's sections, each opened by a line ``== <section>`` (``title``,
``body``, ``short``, ``pending``); text before the first section is for ``{% set %}`` blocks
that later sections use, rendered where they stand (so the ledger keeps the order a reader would
check them in). Whitespace runs inside a section collapse to one space, so a template may break its
lines anywhere a space belongs.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from construct_eval.csv_tables import read_rows
from construct_eval.numbers import at_resample_floor, p_bound
from construct_eval.reports.cells import Cell, Ledger
from construct_eval.reports.paper_comparison import family_tests
from construct_eval.reports.tables import RatingUse
from construct_eval.templating import SECTION as SECTION  # the section line, read here by the findings' tests
from construct_eval.templating import environment, split_sections

TEMPLATES = Path(__file__).with_name("templates")


class Named:
    """A cell as a template reads it: ``c.column`` is the same row's ``column``."""

    __slots__ = ("cell",)

    def __init__(self, cell: Cell) -> None:
        self.cell = cell

    def __getattr__(self, column: str) -> Named:
        if column.startswith("__"):
            raise AttributeError(column)
        return Named(self.cell.with_column(column))

    def __repr__(self) -> str:
        return f"Named({self.cell!r})"


def named(value: Any) -> Any:
    """Cells (and cells inside lists, tuples and dicts) wrapped for a template; other facts as they are."""
    if isinstance(value, Cell):
        return Named(value)
    if isinstance(value, Mapping):
        return {k: named(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(named(v) for v in value)
    return value


def _cell(value: Named | Cell) -> Cell:
    if isinstance(value, Named):
        return value.cell
    if isinstance(value, Cell):
        return value
    import jinja2

    if isinstance(value, jinja2.Undefined):  # a misspelt name: StrictUndefined says which
        value._fail_with_undefined_error()
    raise TypeError(f"a filter was given {value!r}, not a named cell")


def holm_family(root: Path, cell: Cell) -> tuple[int, int]:
    """(B, m) for a Holm-adjusted p-value cell: the bootstrap resamples its p-values were counted
    over and the number of tests Holm corrected across, both read from the table and beside it.

    Both have the resamples in ``n_boot`` (empty where DeLong's estimator gave the p: no floor).
    A paired table (``p_holm``) is one family: every row with a ``p``; the paper comparison
    (``<metric>_p_holm``) is Holm within the family its ``<metric>_holm_family`` names."""

    rows = read_rows(root / cell.table)
    if cell.column == "p_holm":
        tests = sum(1 for r in rows if r.get("p", "") != "")
        resamples = cell.row(root).get("n_boot", "")
        return (int(resamples) if resamples else 0), tests
    if cell.column.endswith("_p_holm"):  # the tests of the cell's own family (every test before families)
        family = cell.row(root).get(cell.column.removesuffix("_p_holm") + "_holm_family", "")
        tests = family_tests(rows, family)
        return int(cell.with_column("n_boot").value(root)), tests
    raise ValueError(f"{cell.column!r} is not a Holm-adjusted p-value column")


def holm_p(ledger: Ledger, cell: Cell) -> str:
    """A Holm-adjusted p-value with its family: ``p = 0.114 after Holm over 7 tests``, or, where it
    is the smallest its resamples allow (2 / (B + 1) times the m tests: no resample fell on the far
    side of 0), the bound ``p <= 0.013 after Holm over 13 tests``."""
    resamples, tests = holm_family(ledger.root, cell)
    x = cell.value(ledger.root)
    if at_resample_floor(x, tests, resamples):  # the one rule the captions use too (construct_eval.numbers)
        text = p_bound(x)
        ledger.quotes.append((cell, "p_bound", text))  # a format of the findings' own (the ledger's has no bounds)
    else:
        text = ledger.quote(cell, "p")
    return f"p {text} after Holm over {tests} test{'' if tests == 1 else 's'}"


def _ledger(context: Any) -> Ledger:
    return context["ledger"]


def _filter(function: Any) -> Any:
    """A filter that quotes through the ledger of the template's context (its ``ledger`` fact)."""
    import jinja2

    return jinja2.pass_context(
        lambda context, c, *args, **kwargs: function(_ledger(context), _cell(c), *args, **kwargs)
    )


def same_text(ledger: Ledger, cell: Cell, *others: Named | Cell) -> str:
    """The text of ``cell``, quoted with each of ``others``, which must hold the same text: a
    sentence that says one thing of several fields quotes every one of them."""
    text = ledger.text(cell)
    for other in others:
        if ledger.text(_cell(other)) != text:
            raise ValueError(f"{_cell(other)} no longer holds {text!r} as {cell} does; rewrite the finding")
    return text


FILTERS: dict[str, Any] = {
    "num": lambda L, c, fmt="3f": L.quote(c, fmt),
    "count": lambda L, c: L.quote(c, "int"),
    "pct": lambda L, c: L.quote(c, "pct1"),
    "pct0": lambda L, c: L.quote(c, "pct0"),
    "interval": lambda L, c, fmt="3f", low=None, high=None: L.interval(c, fmt, low=low, high=high),
    "diff": lambda L, c: L.interval(c, "+3f", low="low", high="high"),
    "holm": holm_p,
    "text": lambda L, c: L.text(c),
    "rating": lambda L, c: RatingUse.parse(L.text(c)),
    "value": lambda L, c: c.value(L.root),
    "same_text": same_text,
}
"""The filters a template writes numbers with, each quoting through the context's ledger.

``num(fmt)`` a number (three decimals unless named: ``'1f'``, ``'+3f'``, ...); ``count`` a count
with thousands separators; ``pct``/``pct0`` a share in percent with one or no decimal;
``interval(fmt, low=, high=)`` a number with its interval (the ``_low``/``_high`` columns unless
named); ``diff`` a paired difference with its interval (columns ``low`` and ``high``); ``holm`` a
Holm-adjusted p-value with its family; ``text`` a cell's text as stored (``same_text(*others)``: and each of ``others`` holds it too); ``rating`` a rating-use
cell as a :class:`RatingUse` (``.described()``, ``.words()``, ``.kind``); ``value`` a cell's
number, not quoted (for a comparison, never for the prose)."""


@cache
def _environment() -> Any:
    return environment(TEMPLATES, {name: _filter(f) for name, f in FILTERS.items()})


def render(name: str, ledger: Ledger, facts: Mapping[str, Any]) -> dict[str, str]:
    """The sections of template ``name`` (``templates/<name>.md.j2``) worded from ``facts`` (named
    cells and computed values), every quoted number recorded in ``ledger``; each section's
    whitespace collapsed to single spaces."""
    template = _environment().get_template(f"{name}.md.j2")
    text = template.render(**named(dict(facts)), ledger=ledger)
    return sections(text, name)


def sections(text: str, name: str = "template") -> dict[str, str]:
    """``{section: text}`` from a rendered template's ``== <section>`` lines
    (:func:`~construct_eval.templating.split_sections`: text before the first is dropped, it holds
    only ``{% set %}`` blocks; whitespace collapsed); a finding names each section once."""
    out: dict[str, str] = {}
    for key, body in split_sections(text, name):
        if key in out:
            raise ValueError(f"{name}: section {key!r} twice")
        out[key] = body
    return out
