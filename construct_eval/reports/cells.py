"""Numbers in prose, read from named cells of stored tables.

A finding in the README, ``results/FINDINGS.md`` or a notebook quotes numbers. Typed by hand,
a number can drift from its table or be attached to the wrong row (a README sentence once
gave two orders' shifts the wrong way round, and a test that only checked the number appeared
somewhere in the table could not see it). Here a number is a :class:`Cell`: a table file, the
column values that pick exactly one row, and the column to read. :func:`quote` reads and
formats it, and records what it read in a :class:`Ledger`, so a test can read every quoted
cell again, by its row and column, and compare.

    ledger = Ledger(root)
    c = Cell("results/runs/x/metrics/detection.csv", {"level": "document", "scorer": "judge-doc"}, "auroc")
    ledger.interval(c)          # "0.501 [0.483, 0.520]" (the _low and _high columns beside it)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from construct_eval import csv_tables
from construct_eval.numbers import p_value


class CellError(LookupError):
    """A cell names a table, row or column that is not there, or a row that is not unique."""


@cache
def _table(path: Path, mtime: float) -> tuple[tuple[str, ...], tuple[dict[str, str], ...]]:
    columns, rows = csv_tables.read_table(path)
    return tuple(columns), tuple(rows)


def read_table(path: Path) -> tuple[tuple[str, ...], tuple[dict[str, str], ...]]:
    """The header and rows of a CSV table (cached until the file changes)."""
    if not path.exists():
        raise CellError(f"no table {path}")
    return _table(path, path.stat().st_mtime)


@dataclass(frozen=True)
class Cell:
    """One value of a stored table: ``table`` (a path relative to the repository), the column
    values ``where`` that select exactly one row, and the ``column`` to read."""

    table: str
    where: Mapping[str, str]
    column: str

    def with_column(self, column: str) -> Cell:
        return Cell(self.table, self.where, column)

    def row(self, root: Path) -> dict[str, str]:
        header, rows = read_table(root / self.table)
        for key in (*self.where, self.column):
            if key not in header:
                raise CellError(f"{self.table} has no column {key!r} (columns: {', '.join(header)})")
        hits = [r for r in rows if all(r[k] == v for k, v in self.where.items())]
        if len(hits) != 1:
            raise CellError(f"{self.table}: {len(hits)} rows match {dict(self.where)} (one expected)")
        return hits[0]

    def raw(self, root: Path) -> str:
        return self.row(root)[self.column]

    def value(self, root: Path) -> float:
        text = self.raw(root)
        try:
            return float(text)
        except ValueError:
            raise CellError(f"{self.table} {dict(self.where)} {self.column!r} is {text!r}, not a number") from None


FORMATS = {
    "3f": lambda x: f"{x:.3f}",
    "+3f": lambda x: f"{x:+.3f}",
    "+4f": lambda x: f"{x:+.4f}",  # a small difference whose interval excludes 0 but rounds to 0.000 at 3
    "4f": lambda x: f"{x:.4f}",
    "2f": lambda x: f"{x:.2f}",
    "1f": lambda x: f"{x:.1f}",
    # a share is rounded as the tables print it (three decimals of the fraction, binary rounding) and
    # only then written as a percentage: 0.0375 prints as 0.037 in its table, so 3.7% here, not 3.8%
    "pct1": lambda x: f"{100 * round(x, 3):.1f}%",
    "pct0": lambda x: f"{100 * round(x, 2):.0f}%",
    "int": lambda x: f"{round(x):,}",
    "p": p_value,
}
"""How a quoted number is written: three decimals for AUROCs and Brier scores, a sign for
differences, percentages with one decimal, counts with thousands separators, p-values with a
floor at the bootstrap's resolution."""


def format_value(x: float, fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if math.isnan(x):
        return "n/a"
    text = FORMATS[fmt](x)
    if text.startswith("-") and not any(c in "123456789" for c in text):  # rounds to zero: no "-0.000"
        text = ("+" if fmt.startswith("+") else "") + text[1:]
    return text


@dataclass
class Ledger:
    """Reads cells under ``root`` and remembers every quote (cell, format, text) in order."""

    root: Path
    quotes: list[tuple[Cell, str, str]] = field(default_factory=list)

    def quote(self, cell: Cell, fmt: str = "3f") -> str:
        text = format_value(cell.value(self.root), fmt)
        self.quotes.append((cell, fmt, text))
        return text

    def text(self, cell: Cell) -> str:
        """A cell quoted as the text it holds (a label such as a rating-use summary)."""
        text = cell.raw(self.root)
        self.quotes.append((cell, "text", text))
        return text

    def interval(self, cell: Cell, fmt: str = "3f", *, low: str | None = None, high: str | None = None) -> str:
        """``x [low, high]`` from the cell and the interval columns beside it (``<column>_low`` and
        ``<column>_high`` unless named). A signed point (``+3f``) keeps plain bounds; a point whose
        table drew no interval (a bound that is not a number) says so: ``0.333 (no interval)``."""
        lo = cell.with_column(low or f"{cell.column}_low")
        hi = cell.with_column(high or f"{cell.column}_high")
        if math.isnan(lo.value(self.root)) or math.isnan(hi.value(self.root)):
            return f"{self.quote(cell, fmt)} (no interval)"
        bound = fmt.lstrip("+")
        return f"{self.quote(cell, fmt)} [{self.quote(lo, bound)}, {self.quote(hi, bound)}]"

    def rows(self) -> list[dict[str, str]]:
        """The ledger as table rows (what ``FINDINGS.cells.csv`` stores)."""
        return [
            {
                "table": c.table,
                "where": "; ".join(f"{k}={v}" for k, v in c.where.items()),
                "column": c.column,
                "format": fmt,
                "quoted": text,
            }
            for c, fmt, text in self.quotes
        ]
