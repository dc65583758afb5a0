"""The data-table analysis task: a table as CSV text in, eight facts about it out.

The benchmark's fourth dataset (``Cleanlab/data-table-analysis``, research notes sections 8
and 9) asks for ``num_rows``, ``num_columns``, ``column_types``, ``column_max``,
``column_min``, ``identifier_first``, ``identifier_last`` and ``identifier_shortest``. Its
ground truth is a function of the table; :func:`analyse_table` is that function as this
package reads the benchmark's instruction (the real file's ``ground_truth`` column is used as
it is; these rules make the offline rebuild's truth and are tested on hand-made tables):

- The first CSV row is the header; every later row counts (``num_rows``), blank lines do not.
  A row shorter than the header has empty cells at its end; a longer one is an error.
- A column is ``"int"`` when every non-empty cell is an integer (``-3``, ``42``), ``"float"``
  when every non-empty cell is a number and one is not an integer (``2.5``, ``1e3``, ``29.0``),
  and ``"str"`` otherwise, also when it has no non-empty cell at all.
- ``column_max`` / ``column_min``: over the non-empty cells of numeric columns (ints for
  ``"int"``, floats for ``"float"``; null when the column has none); null for ``"str"`` columns.
- The ``Identifier`` column (that exact header): its first and last cells and its shortest cell
  (the first of the shortest, in row order), as the text in the table; an empty cell is ``""``.
  Without such a column all three are null.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

IDENTIFIER = "Identifier"
KEYS = (
    "num_rows",
    "num_columns",
    "column_types",
    "column_max",
    "column_min",
    "identifier_first",
    "identifier_last",
    "identifier_shortest",
)
_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


class TableError(ValueError):
    """A table that cannot be analysed (the message says where)."""


def parse_table(text: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a CSV table; short rows padded with empty cells."""
    lines = [row for row in csv.reader(io.StringIO(text)) if row]
    if not lines:
        raise TableError("the table has no header row")
    header, rows = lines[0], lines[1:]
    if len(set(header)) != len(header):
        raise TableError(f"the header names a column twice: {header}")
    out = []
    for i, row in enumerate(rows, start=1):
        if len(row) > len(header):
            raise TableError(f"row {i} has {len(row)} cells, the header {len(header)}")
        out.append(row + [""] * (len(header) - len(row)))
    return header, out


def column_type(cells: list[str]) -> str:
    """``"int"``, ``"float"`` or ``"str"`` for a column's cells (empty cells do not count)."""
    present = [c.strip() for c in cells if c.strip()]
    if not present:
        return "str"
    if all(_INT.fullmatch(c) for c in present):
        return "int"
    if all(_FLOAT.fullmatch(c) for c in present):
        return "float"
    return "str"


def _bounds(cells: list[str], kind: str) -> tuple[int | float | None, int | float | None]:
    if kind == "str":
        return None, None
    cast = int if kind == "int" else float
    values = [cast(c.strip()) for c in cells if c.strip()]
    return (max(values), min(values)) if values else (None, None)


def analyse_table(text: str) -> dict[str, Any]:
    """The eight facts of a table, by the rules in this module's docstring."""
    header, rows = parse_table(text)
    columns = {name: [row[j] for row in rows] for j, name in enumerate(header)}
    types = {name: column_type(cells) for name, cells in columns.items()}
    bounds = {name: _bounds(cells, types[name]) for name, cells in columns.items()}
    ident = columns.get(IDENTIFIER)
    first = last = shortest = None
    if ident is not None and ident:
        first, last = ident[0], ident[-1]
        shortest = min(ident, key=len)  # min keeps the first of equals: row order
    elif ident is not None:
        first = last = shortest = ""  # an Identifier column without rows
    return {
        "num_rows": len(rows),
        "num_columns": len(header),
        "column_types": types,
        "column_max": {name: b[0] for name, b in bounds.items()},
        "column_min": {name: b[1] for name, b in bounds.items()},
        "identifier_first": first,
        "identifier_last": last,
        "identifier_shortest": shortest,
    }


def write_table(header: list[str], rows: list[list[str]]) -> str:
    """CSV text of a table as the benchmark gives it: a header row, no index, ``\\n`` line ends."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()
