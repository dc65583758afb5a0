"""The one reader of the project's stored CSV tables (``write_table``'s and the studies' files).

Every table the package writes is read back through here as text (``dict`` rows keyed by its
header), so that an analysis, a figure, a notebook and a finding read a cell the same way; the
caller converts the cells it needs. Input data (a dataset's own CSV files) is read by its loader.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
>>> _ = path.write_text("level,auroc\\ndocument,0.5\\n")
>>> read_rows(path)
[{'level': 'document', 'auroc': '0.5'}]
>>> read_table(path)[0]
['level', 'auroc']
"""

from __future__ import annotations

import csv
from pathlib import Path


def read_table(path: str | Path) -> tuple[list[str], list[dict[str, str]]]:
    """A stored table's columns and rows, as text."""
    with Path(path).open(newline="") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def read_rows(path: str | Path, *, missing_ok: bool = False) -> list[dict[str, str]]:
    """A stored table's rows, as text; ``missing_ok``: no rows where the file is not there (a
    table not written yet), else :class:`FileNotFoundError`."""
    if missing_ok and not Path(path).exists():
        return []
    return read_table(path)[1]
