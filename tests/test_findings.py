"""The findings are true cell by cell.

``results/findings.py`` writes ``results/FINDINGS.md``, the README's findings block and
``results/FINDINGS.cells.csv`` (every quoted cell: table, row, column, format, text). Here every
quoted cell is read again with the standard library, by its row and column (not by looking for
the number anywhere in the table, which cannot see a number attached to the wrong row), the
written files must be what the script writes now, and the prose may hold no decimal number that
is not one of the quoted cells.
"""

from __future__ import annotations

import csv
import importlib.util
import math
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CELLS = ROOT / "results" / "FINDINGS.cells.csv"


def _findings_module():
    spec = importlib.util.spec_from_file_location("findings_script", ROOT / "results" / "findings.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _cells() -> list[dict[str, str]]:
    with CELLS.open(newline="") as f:
        return list(csv.DictReader(f))


def _format(x: float, fmt: str) -> str:
    """Formats written out again here, not imported, so a wrong formatter cannot agree with itself."""
    if math.isnan(x):
        return "n/a"
    text = {
        "3f": f"{x:.3f}",
        "+3f": f"{x:+.3f}",
        "2f": f"{x:.2f}",
        "1f": f"{x:.1f}",
        # a share as its table prints it (0.0375 -> 0.037), then in percent: 3.7%, as the reader of the table sees
        "pct1": f"{float(f'{x:.3f}') * 100:.1f}%",
        "pct0": f"{float(f'{x:.2f}') * 100:.0f}%",
        "int": f"{round(x):,}",
        "p": "< 0.0005" if x < 0.0005 else f"= {x:.3f}",
    }[fmt]
    if re.fullmatch(r"-[0.,]+%?", text):  # a negative number that rounds to zero is written without its minus
        text = ("+" if fmt == "+3f" else "") + text[1:]
    return text


def test_the_written_findings_are_what_the_script_writes_now():
    assert _findings_module().main(["--check"]) == 0, "run: .venv/bin/python results/findings.py"


@pytest.mark.parametrize("row", _cells(), ids=lambda r: f"{Path(r['table']).parent.parent.name}:{r['column']}")
def test_every_quoted_cell_is_the_cell_of_its_row_and_column(row):
    where = dict(part.partition("=")[::2] for part in row["where"].split("; "))
    with (ROOT / row["table"]).open(newline="") as f:
        hits = [r for r in csv.DictReader(f) if all(r[k] == v for k, v in where.items())]
    assert len(hits) == 1, f"{row['table']}: {len(hits)} rows match {where}"
    raw = hits[0][row["column"]]
    expected = raw if row["format"] == "text" else _format(float(raw), row["format"])
    assert expected == row["quoted"]


def _readme_block() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme.split("<!-- findings: written by", 1)[1].split("<!-- findings: end -->", 1)[0]


@pytest.mark.parametrize("where", ["FINDINGS.md", "README.md"])
def test_the_prose_quotes_no_number_that_is_not_a_cell(where):
    if where == "FINDINGS.md":
        findings = (ROOT / "results" / "FINDINGS.md").read_text().split("\n- ", 1)[1]
    else:
        findings = _readme_block()
    prose = re.sub(r"\]\([^)]*\)", "]", findings)  # not the numbers in link targets
    number = re.compile(r"(?<![\w.])\d+(?:,\d{3})*\.\d+(?![\w.])|(?<![\w.])\d{1,3}(?:,\d{3})+(?![\w.])")
    quoted = {n for c in _cells() for n in number.findall(c["quoted"])}
    typed = [n for n in number.findall(prose) if n not in quoted]
    assert not typed, f"numbers in {where} that are not quoted cells: {typed}"


def test_the_readme_shows_the_main_findings_briefly():
    """Five to eight findings, each a short bullet (its title, the numbers that carry it, two links):
    every number and caveat stays in FINDINGS.md, which each bullet links to."""
    bullets = [b.split("\n\n", 1)[0] for b in _readme_block().split("\n- **")[1:]]  # a paragraph may follow the list
    assert 5 <= len(bullets) <= 8
    for bullet in bullets:
        words = len(re.sub(r"\]\([^)]*\)", "]", bullet).split())
        assert words <= 110, f"{words} words: {bullet[:80]}"
        assert "[in full](results/FINDINGS.md)" in bullet


def test_a_study_still_running_is_named_under_the_list_until_its_finding_joins_it():
    """The README says the paper's comparison is under way exactly while its finding is interim."""
    block = _readme_block()
    interim = "Interim, on" in (ROOT / "results" / "FINDINGS.md").read_text()
    assert ("is under way" in block) == interim
    assert ("on errors a generator really made, construct-style" in block.lower()) == (not interim)


@pytest.mark.parametrize(
    "x,fmt,text",
    [
        (-0.0004, "3f", "0.000"),
        (-0.0004, "+3f", "+0.000"),
        (-0.0014, "+3f", "-0.001"),
        (-0.0001, "pct1", "0.0%"),
        (0.0004, "+3f", "+0.000"),
        (-0.2, "int", "0"),
    ],
)
def test_a_number_that_rounds_to_zero_carries_no_minus_sign(x, fmt, text):
    from construct_eval.reports.cells import format_value

    assert format_value(x, fmt) == text
