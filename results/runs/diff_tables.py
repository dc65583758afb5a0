"""Compare every metrics table of two analysed trees cell by cell (the restructure guard).

    python results/runs/diff_tables.py BEFORE_DIR AFTER_DIR

Both folders hold ``results/`` as written by ``analyse_all.sh`` (see ``diff_tables.sh``, which
makes them from two commits on the same recorded run files). Numbers must agree to 1e-9; a
column present on one side only is listed apart (a new column is not a changed number).
Exits 1 if any number or any table differs.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y))


def compare(before: Path, after: Path) -> int:
    tables_a = {p.relative_to(before) for p in before.glob("results/**/metrics/*.csv")}
    tables_b = {p.relative_to(after) for p in after.glob("results/**/metrics/*.csv")}
    problems = 0
    for rel in sorted(tables_a ^ tables_b):
        side = "before only" if rel in tables_a else "after only"
        print(f"{rel}: {side}")
        problems += rel in tables_a  # a table that disappeared is a problem; a new one is listed
    checked = 0
    for rel in sorted(tables_a & tables_b):
        a, b = _read(before / rel), _read(after / rel)
        checked += 1
        if len(a) != len(b):
            print(f"{rel}: {len(a)} rows before, {len(b)} after")
            problems += 1
            continue
        cols_a, cols_b = (set(a[0]) if a else set()), (set(b[0]) if b else set())
        if cols_a != cols_b:
            print(f"{rel}: columns before only {sorted(cols_a - cols_b)}, after only {sorted(cols_b - cols_a)}")
        for i, (ra, rb) in enumerate(zip(a, b, strict=True)):
            bad = [c for c in sorted(cols_a & cols_b) if not _same(ra[c], rb[c])]
            if bad:
                problems += 1
                shown = ", ".join(f"{c}: {ra[c]!r} -> {rb[c]!r}" for c in bad[:4])
                print(f"{rel} row {i}: {shown}{' ...' if len(bad) > 4 else ''}")
    print(f"{checked} tables compared; {problems} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(compare(Path(sys.argv[1]), Path(sys.argv[2])))
