"""The README's findings are true line by line: every number a finding quotes is in the table it cites.

Each bullet of "What a small local judge can and cannot do" cites the stored tables its
numbers come from (Markdown links to files under results/). A number with a decimal point
matches a number of a cited table that rounds to it at the README's precision; a bound
("p < 0.0001") and a number inside a name ("Qwen2.5", "1.5B") are not findings and are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SECTION = "## What a small local judge can and cannot do (measured)"
QUOTED = re.compile(r"(?<![\w.<>])(?<![<>] )([-+]?\d+\.\d+)(?![\w.])")
IN_TABLE = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
LINK = re.compile(r"\]\(((?:results)/[^)\s]+\.(?:md|csv))\)")


def findings() -> list[str]:
    text = (REPO / "README.md").read_text()
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    bullets = re.split(r"\n(?=- )", body)
    return [b for b in bullets if b.startswith("- ")]


def _found(value: str, numbers: list[float]) -> bool:
    decimals = len(value.split(".")[1])
    x = float(value)
    tol = 0.5 * 10**-decimals + 1e-9
    return any(abs(v - x) <= tol for v in numbers)


def test_the_section_has_findings_that_cite_tables():
    assert len(findings()) >= 6
    for bullet in findings():
        assert LINK.search(bullet), f"a finding cites no table: {bullet[:80]}"


@pytest.mark.parametrize("bullet", findings(), ids=lambda b: b[4:44])
def test_every_number_of_a_finding_is_in_a_table_it_cites(bullet):
    cited = [REPO / m for m in LINK.findall(bullet)]
    missing_files = [str(p) for p in cited if not p.exists()]
    assert not missing_files, f"cited tables do not exist: {missing_files}"
    numbers = [float(n) for p in cited for n in IN_TABLE.findall(p.read_text())]
    quoted = QUOTED.findall(re.sub(r"\]\([^)]*\)", "]", bullet))  # not the numbers in link targets
    assert quoted, "a finding with no number to check"
    absent = [q for q in quoted if not _found(q, numbers)]
    assert not absent, f"numbers not in the cited tables {[p.name for p in cited]}: {absent}"
