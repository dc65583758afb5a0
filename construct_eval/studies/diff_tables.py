"""Compare what two analysed trees hold: the stored-numbers guard, under issue 58's tolerance rule.

    python -m construct_eval.studies.diff_tables [--exact] BEFORE_DIR AFTER_DIR

Both folders hold ``results/`` (and ``README.md``) as ``diff_tables.sh`` leaves them: the same
recorded run files analysed by ``analyse_all.sh`` with two revisions' code, and ``FINDINGS.md``
written from each tree's tables by one ``findings.py``. BEFORE holds the stored numbers.

What is compared:

- every ``results/**/metrics/*.csv`` and ``*.md`` table, and the two reports ``analyse_all.sh``
  prints from them (``results/runs/null_split.md``, ``results/runs/judge_study.md``), cell by cell;
- ``results/FINDINGS.md``, ``results/FINDINGS.cells.csv`` and the README's findings block
  (between ``<!-- findings:`` and ``<!-- findings: end -->``), byte for byte.

The tolerance rule (the default):

- A CSV number written at full precision (its column holds, on either side, a number with more
  than 6 decimals; the analyses round what they round to at most 6) is a fitted value: it stands
  if within 1e-6 of BEFORE's (absolute), 1e-4 for Beta calibration (a row whose
  method/reading/calibrator cell names ``beta``, a column or table whose name has the word beta).
  Moves within tolerance are counted and the largest is printed.
- Every other cell is printed at the precision it is written with: CSV numbers in a column
  rounded to at most 6 decimals (calibration and detection metrics, counts), text cells, every
  Markdown table cell and every line of Markdown outside a table. These must be identical (a CSV
  number equal as a number, ``0.25`` = ``0.250``). The rule lets a changed printed cell stand if it
  is explained by items whose fitted value lies within tolerance of an equal-mass bin edge, a
  threshold or a review-budget cut; the tables store no items, so the guard cannot establish that
  and reports every changed printed cell as an UNEXPLAINED difference (failing) with what a
  person needs to judge: file, row number and the row's key cells, column, both values, the change
  in units of the last printed digit, for a Markdown cell its CSV twin before and after, and the
  full-precision numbers of the same CSV row that moved within tolerance (a moved bin edge or
  threshold there is the trace of items near it). ``compare_trees(..., explain=...)`` takes a
  function that names such items from elsewhere; a cell it explains is listed, with its items,
  and does not fail.
- A table or column on one side only, a different number of rows, or a different number of
  Markdown tables in a file fails (STRUCTURE).

The exact rule (``--exact``, the guard before issue 58): every CSV number within 1e-9 of
BEFORE's, relative to max(1, |value|), whatever its precision; everything else as above.

Not checked: figures and their data; the fitted value of each item (no analysis writes one; a
per-item file would be compared only if written under ``metrics/`` as CSV); which full-precision
numbers are fitted (all of them are held to the fitted tolerance, so an AUROC or bootstrap p
written at full precision may also move by up to 1e-6); tables that ``analyse_all.sh`` does not
remake (decision and policy tables, notebooks' copies), which are compared as each revision
committed them, so a table AFTER's code stopped writing still has its committed copy there.

Exit status: 0 if every stored number stands, 1 if not, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import csv
import enum
import io
import itertools
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path

FITTED_TOLERANCE = 1e-6
"""How far a fitted probability or score (a full-precision number) may move, absolute."""
BETA_TOLERANCE = 1e-4
"""The same for Beta calibration, whose closed-form fit and netcal's differ by about 5e-6."""
EXACT_TOLERANCE = 1e-9
"""The exact rule's bound, relative to max(1, |value|) (the guard before issue 58)."""
FULL_PRECISION_DECIMALS = 6
"""A column holding a number with more decimals than this is written at full precision."""

TABLE_GLOBS = ("results/**/metrics/*.csv", "results/**/metrics/*.md")
REPORTS = ("results/runs/null_split.md", "results/runs/judge_study.md")
"""Markdown that analyse_all.sh prints from the tables: compared as printed tables."""
VERBATIM = ("results/FINDINGS.md", "results/FINDINGS.cells.csv")
"""Compared byte for byte."""
README = "README.md"
README_BLOCK = re.compile(r"<!-- findings:(?! end -->).*?<!-- findings: end -->", re.DOTALL)

KEY_COLUMNS = (
    "level", "scorer", "method", "reading", "a", "b", "variant_a", "variant_b", "variants", "variant", "granularity",
    "fields", "kind", "target", "run", "score", "value", "threshold", "bin", "mode", "constrained", "rule", "key",
)  # fmt: skip
"""Columns that name a row (the first of a table's columns if it has none of them)."""
BETA_NAME_COLUMNS = ("method", "reading", "calibrator")
BETA = re.compile(r"(?<![a-z])beta(?![a-z])", re.IGNORECASE)
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?(nan|inf|infinity)", re.IGNORECASE)


@dataclass(frozen=True)
class Rule:
    """How far a number may move. ``exact``: every CSV number within ``fitted`` relative to
    max(1, |value|), whatever its precision (the old guard); otherwise full-precision numbers
    within ``fitted`` (``beta`` for Beta calibration) absolute, printed cells identical."""

    name: str
    fitted: float
    beta: float
    exact: bool


TOLERANCE = Rule("tolerance", FITTED_TOLERANCE, BETA_TOLERANCE, exact=False)
EXACT = Rule("exact", EXACT_TOLERANCE, EXACT_TOLERANCE, exact=True)


class Kind(enum.Enum):
    STRUCTURE = "structure"  # a file, column or row on one side only
    BEYOND = "beyond tolerance"  # a full-precision number moved further than the rule allows
    UNEXPLAINED = "unexplained"  # a printed cell changed and no items near an edge explain it
    VERBATIM = "not byte-identical"  # FINDINGS.md, its cells, the README block
    EXPLAINED = "explained"  # a printed cell changed by items near an edge (listed); does not fail


@dataclass(frozen=True)
class Difference:
    """One thing that differs. ``row`` counts a table's data rows from 1 (a Markdown file's lines
    from 1 for text outside its tables); ``key`` is the row's naming cells."""

    kind: Kind
    file: str
    row: int | None = None
    key: str = ""
    column: str = ""
    before: str = ""
    after: str = ""
    detail: str = ""
    items: tuple[str, ...] = ()

    def line(self) -> str:
        where = self.file
        if self.row is not None:
            where += f" row {self.row}" + (f" ({self.key})" if self.key else "")
        if self.column:
            where += f" column {self.column!r}"
        change = f": {self.before!r} -> {self.after!r}" if (self.before or self.after) else ""
        detail = f"; {self.detail}" if self.detail else ""
        items = f"; items: {', '.join(self.items)}" if self.items else ""
        return f"{where}{change}{detail}{items}"


Explainer = Callable[[Difference], Sequence[str]]
"""Given a changed printed cell, the items (named as a person can find them) whose fitted value lies
within tolerance of an equal-mass bin edge, a threshold or a review-budget cut and so explain the
change; empty if none do."""


@dataclass
class Moved:
    """Full-precision numbers that moved within tolerance: how many, and the largest move."""

    count: int = 0
    largest: float = 0.0
    where: str = ""

    def add(self, delta: float, where: str) -> None:
        self.count += 1
        if delta > self.largest:
            self.largest, self.where = delta, where


@dataclass
class Report:
    rule: Rule
    files: int = 0
    cells: int = 0
    moved: dict[str, Moved] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def failing(self) -> list[Difference]:
        return [d for d in self.differences if d.kind is not Kind.EXPLAINED]

    @property
    def passed(self) -> bool:
        return not self.failing

    def of(self, kind: Kind) -> list[Difference]:
        return [d for d in self.differences if d.kind is kind]

    def text(self) -> str:
        bounds = (
            f"every CSV number within {self.rule.fitted:g} relative"
            if self.rule.exact
            else f"full-precision numbers within {self.rule.fitted:g} (Beta {self.rule.beta:g}), printed cells identical"
        )
        lines = [f"rule: {self.rule.name} ({bounds})"]
        lines += [f"note: {n}" for n in self.notes]
        for kind in Kind:
            found = self.of(kind)
            if found:
                lines.append(f"{kind.value} ({len(found)}):")
                lines += [f"  {d.line()}" for d in found]
        for name, m in sorted(self.moved.items()):
            if m.count:
                lines.append(f"moved within tolerance ({name}): {m.count} numbers, at most {m.largest:.3g} ({m.where})")
        counts = ", ".join(f"{len(self.of(k))} {k.value}" for k in Kind if self.of(k))
        verdict = "the stored numbers stand" if self.passed else "the stored numbers do not stand"
        lines.append(f"{self.files} files, {self.cells} cells compared; {counts or 'no differences'}: {verdict}")
        return "\n".join(lines)


def _number(text: str) -> float | None:
    return float(text) if NUMBER.fullmatch(text.strip()) else None


def _decimals(text: str) -> int:
    """Decimals a number is written with (``0.25`` 2, ``1e-07`` 7, ``593`` 0, ``nan`` 0)."""
    exponent = Decimal(text.strip()).as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _key(header: Sequence[str], row: Sequence[str]) -> str:
    named = [i for i, c in enumerate(header) if c in KEY_COLUMNS][:4] or [0]
    return ", ".join(f"{header[i]}={row[i]}" for i in named if i < len(row))


def _moved_words(cells: Sequence[tuple[str, str, str]]) -> str:
    return (
        "; full-precision values of the row that moved within tolerance: "
        + ", ".join(f"{c} {a} -> {b}" for c, a, b in cells[:6])
        + (" ..." if len(cells) > 6 else "")
    )


@dataclass
class _Table:
    header: list[str]
    rows: list[list[str]]


def _read_csv(text: str) -> _Table:
    rows = list(csv.reader(io.StringIO(text)))
    return _Table(rows[0] if rows else [], [r for r in rows[1:] if r])


def _markdown_cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


def _read_markdown(text: str) -> tuple[list[_Table], list[tuple[int, str]]]:
    """The Markdown tables of a text, and its other lines with their line numbers."""
    tables: list[_Table] = []
    other: list[tuple[int, str]] = []
    block: list[str] = []
    for number, line in enumerate([*text.split("\n"), ""], start=1):
        if line.lstrip().startswith("|"):
            block.append(line)
            continue
        if block:
            cells = [_markdown_cells(b) for b in block]
            separator = len(cells) > 1 and all(re.fullmatch(r":?-+:?", c) for c in cells[1])
            tables.append(_Table(cells[0], cells[2:] if separator else cells[1:]))
            block = []
        if number <= text.count("\n") + 1:
            other.append((number, line))
    return tables, other


class _Comparison:
    def __init__(self, before: Path, after: Path, rule: Rule, explain: Explainer | None) -> None:
        self.before, self.after, self.rule, self.explain = before, after, rule, explain
        self.report = Report(rule)
        self.moved_in_row: dict[tuple[str, int], list[tuple[str, str, str]]] = {}

    def add(self, diff: Difference) -> None:
        self.report.differences.append(diff)

    def printed(self, diff: Difference) -> None:
        """A changed printed cell: explained (with its items) if the explainer names any, else unexplained."""
        items = tuple(self.explain(diff)) if self.explain else ()
        kind = Kind.EXPLAINED if items else Kind.UNEXPLAINED
        self.add(replace(diff, kind=kind, items=items))

    def _paths(self, root: Path) -> set[str]:
        found = {p.relative_to(root).as_posix() for g in TABLE_GLOBS for p in root.glob(g) if p.is_file()}
        return found | {r for r in (*REPORTS, *VERBATIM, README) if (root / r).is_file()}

    def run(self) -> Report:
        paths_a, paths_b = self._paths(self.before), self._paths(self.after)
        for rel in sorted(paths_a ^ paths_b):
            side = "BEFORE only" if rel in paths_a else "AFTER only"
            self.add(Difference(Kind.STRUCTURE, rel, detail=side))
        both = paths_a & paths_b
        for rel in (*VERBATIM, README):
            if rel not in paths_a | paths_b:
                self.report.notes.append(f"{rel} on neither side: not compared")
        # CSVs first: the Markdown tables' differences cite their CSV twin's moved values
        for rel in sorted(both, key=lambda r: (not r.endswith(".csv"), r)):
            self.report.files += 1
            text_a = (self.before / rel).read_text()
            text_b = (self.after / rel).read_text()
            if rel in VERBATIM:
                self.verbatim(rel, text_a, text_b)
            elif rel == README:
                self.readme(text_a, text_b)
            elif rel.endswith(".csv"):
                self.csv(rel, _read_csv(text_a), _read_csv(text_b))
            else:
                self.markdown(rel, text_a, text_b)
        return self.report

    def verbatim(self, rel: str, a: str, b: str) -> None:
        self.report.cells += 1
        if a == b:
            return
        lines_a, lines_b = a.split("\n"), b.split("\n")
        for number, (la, lb) in enumerate(itertools.zip_longest(lines_a, lines_b, fillvalue=""), start=1):
            if la != lb:
                more = sum(1 for x, y in itertools.zip_longest(lines_a, lines_b) if x != y)
                detail = f"first differing line of {more}" + (
                    f" ({len(lines_a)} lines before, {len(lines_b)} after)" if len(lines_a) != len(lines_b) else ""
                )
                self.add(Difference(Kind.VERBATIM, rel, number, "line", "", la, lb, detail))
                return

    def readme(self, a: str, b: str) -> None:
        block_a, block_b = README_BLOCK.search(a), README_BLOCK.search(b)
        if not block_a and not block_b:
            self.report.notes.append(f"{README} has no findings block on either side: not compared")
        elif not block_a or not block_b:
            self.add(
                Difference(
                    Kind.STRUCTURE, f"{README} findings block", detail="BEFORE only" if block_a else "AFTER only"
                )
            )
        else:
            self.verbatim(f"{README} findings block", block_a.group(0), block_b.group(0))

    def _header(self, rel: str, a: _Table, b: _Table, what: str = "") -> list[str]:
        """The columns both sides have; a column on one side only is a structure difference."""
        only_a = [c for c in a.header if c not in b.header]
        only_b = [c for c in b.header if c not in a.header]
        if only_a or only_b:
            self.add(Difference(Kind.STRUCTURE, rel, detail=f"{what}columns BEFORE only {only_a}, AFTER only {only_b}"))
        return [c for c in a.header if c in b.header]

    def _rows(self, rel: str, a: _Table, b: _Table, what: str = "") -> bool:
        if len(a.rows) == len(b.rows):
            return True
        keys_a = {_key(a.header, r) for r in a.rows}
        keys_b = {_key(b.header, r) for r in b.rows}
        gone, new = sorted(keys_a - keys_b)[:5], sorted(keys_b - keys_a)[:5]
        self.add(
            Difference(
                Kind.STRUCTURE,
                rel,
                detail=f"{what}{len(a.rows)} rows BEFORE, {len(b.rows)} AFTER; rows BEFORE only {gone}, AFTER only {new}",
            )
        )
        return False

    def csv(self, rel: str, a: _Table, b: _Table) -> None:
        columns = self._header(rel, a, b)
        if not self._rows(rel, a, b):
            return
        ia = {c: a.header.index(c) for c in columns}
        ib = {c: b.header.index(c) for c in columns}
        full = {
            c: any(
                _number(v) is not None and _decimals(v) > FULL_PRECISION_DECIMALS
                for t, i in ((a, ia[c]), (b, ib[c]))
                for r in t.rows
                for v in r[i : i + 1]
            )
            for c in columns
        }
        beta_table = bool(BETA.search(Path(rel).stem))
        for number, (ra, rb) in enumerate(zip(a.rows, b.rows, strict=True), start=1):
            cell_a = {c: ra[ia[c]] if ia[c] < len(ra) else "" for c in columns}
            cell_b = {c: rb[ib[c]] if ib[c] < len(rb) else "" for c in columns}
            beta_row = beta_table or any(
                BETA.search(cell.get(c, "")) for cell in (cell_a, cell_b) for c in BETA_NAME_COLUMNS
            )
            key = _key(a.header, ra)
            printed: list[Difference] = []
            moved: list[tuple[str, str, str]] = []
            for c in columns:
                self.report.cells += 1
                va, vb = cell_a[c], cell_b[c]
                if va == vb:
                    continue
                x, y = _number(va), _number(vb)
                if x is not None and y is not None:
                    if (math.isnan(x) and math.isnan(y)) or x == y:
                        continue
                    if self.rule.exact or full[c]:
                        beta = beta_row or bool(BETA.search(c))
                        name = "beta" if beta and not self.rule.exact else "fitted"
                        bound = self.rule.beta if beta else self.rule.fitted
                        delta = abs(x - y)
                        scale = max(1.0, abs(x), abs(y)) if self.rule.exact else 1.0
                        if delta <= bound * scale:
                            self.report.moved.setdefault(name, Moved()).add(delta, f"{rel} row {number} column {c!r}")
                            moved.append((c, va, vb))
                        else:
                            how = "relative to max(1, |value|)" if self.rule.exact else f"({name})"
                            detail = f"|change| {delta:.3g} > {bound:g} {how}"
                            self.add(Difference(Kind.BEYOND, rel, number, key, c, va, vb, detail))
                        continue
                    places = max(_decimals(va), _decimals(vb))
                    units = abs(x - y) * 10**places
                    detail = f"printed to {places} decimals: changed by {units:.3g} in the last digit"
                else:
                    detail = "text"
                printed.append(Difference(Kind.UNEXPLAINED, rel, number, key, c, va, vb, detail))
            if moved:
                self.moved_in_row[(rel, number)] = moved
            for diff in printed:
                self.printed(replace(diff, detail=diff.detail + _moved_words(moved)) if moved else diff)

    def _twin(self, rel: str) -> tuple[_Table, _Table] | None:
        """The CSV written with a metrics Markdown table (same rows), on both sides."""
        if "/metrics/" not in rel:
            return None
        twin = rel[: -len(".md")] + ".csv"
        a, b = self.before / twin, self.after / twin
        if not (a.is_file() and b.is_file()):
            return None
        return _read_csv(a.read_text()), _read_csv(b.read_text())

    def markdown(self, rel: str, text_a: str, text_b: str) -> None:
        tables_a, other_a = _read_markdown(text_a)
        tables_b, other_b = _read_markdown(text_b)
        if len(tables_a) != len(tables_b):
            self.add(
                Difference(Kind.STRUCTURE, rel, detail=f"{len(tables_a)} Markdown tables BEFORE, {len(tables_b)} AFTER")
            )
            return
        twin = self._twin(rel) if len(tables_a) == 1 else None
        for t, (a, b) in enumerate(zip(tables_a, tables_b, strict=True), start=1):
            what = f"table {t}: " if len(tables_a) > 1 else ""
            columns = self._header(rel, a, b, what)
            if not self._rows(rel, a, b, what):
                continue
            ia = {c: a.header.index(c) for c in columns}
            ib = {c: b.header.index(c) for c in columns}
            for number, (ra, rb) in enumerate(zip(a.rows, b.rows, strict=True), start=1):
                key = (what + _key(a.header, ra)).strip()
                for c in columns:
                    self.report.cells += 1
                    va = ra[ia[c]] if ia[c] < len(ra) else ""
                    vb = rb[ib[c]] if ib[c] < len(rb) else ""
                    if va == vb:
                        continue
                    detail = "printed cell" + self._twin_words(rel, twin, number, c)
                    self.printed(Difference(Kind.UNEXPLAINED, rel, number, key, c, va, vb, detail))
        for (number, la), (_, lb) in zip(other_a, other_b, strict=False):
            self.report.cells += 1
            if la != lb:
                self.printed(
                    Difference(Kind.UNEXPLAINED, rel, number, "text outside tables", "", la, lb, "printed line")
                )
        if len(other_a) != len(other_b):
            self.add(
                Difference(
                    Kind.STRUCTURE, rel, detail=f"{len(other_a)} lines outside tables BEFORE, {len(other_b)} AFTER"
                )
            )

    def _twin_words(self, rel: str, twin: tuple[_Table, _Table] | None, number: int, column: str) -> str:
        if twin is None:
            return ""
        a, b = twin
        if column not in a.header or column not in b.header or len(a.rows) < number or len(b.rows) < number:
            return ""
        ra, rb = a.rows[number - 1], b.rows[number - 1]
        ia, ib = a.header.index(column), b.header.index(column)
        if ia >= len(ra) or ib >= len(rb):
            return ""
        words = f"; CSV twin {ra[ia]!r} -> {rb[ib]!r}"
        x, y = _number(ra[ia]), _number(rb[ib])
        if x is not None and y is not None and not (math.isnan(x) or math.isnan(y)):
            words += f" (|change| {abs(x - y):.3g})"
        moved = self.moved_in_row.get((rel[: -len(".md")] + ".csv", number))
        return words + (_moved_words(moved) if moved else "")


def compare_trees(before: Path, after: Path, rule: Rule = TOLERANCE, explain: Explainer | None = None) -> Report:
    """Everything the guard compares between two analysed trees (see the module's text), under
    ``rule``; ``explain`` names the items behind a changed printed cell, where anything can."""
    return _Comparison(Path(before), Path(after), rule, explain).run()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m construct_eval.studies.diff_tables",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("before", type=Path, help="the tree holding the stored numbers")
    parser.add_argument("after", type=Path, help="the tree to hold to them")
    parser.add_argument("--exact", action="store_true", help="the old rule: every CSV number within 1e-9 (relative)")
    args = parser.parse_args(argv)
    for root in (args.before, args.after):
        if not (root / "results").is_dir():
            parser.error(f"{root} holds no results/ folder")
    report = compare_trees(args.before, args.after, EXACT if args.exact else TOLERANCE)
    print(report.text())
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
