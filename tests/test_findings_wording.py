"""The findings' wording: templates over named cells (construct_eval.studies.findings).

A finding's numbers are named cells (``facts``), its sentences a template (``templates/``). Here:
every named cell is quoted by its finding's template (a cell named and never written is a fact the
prose dropped), every template has its sections, a misspelt name stops the build instead of
writing an empty string, and the filters quote through the ledger.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from construct_eval.reports.cells import Cell, Ledger
from construct_eval.studies.findings import facts, finding, wording

ROOT = Path(__file__).resolve().parents[1]
NAMES = [f.__name__ for f in facts.FINDINGS]


def _cells(value: object) -> list[Cell]:
    if isinstance(value, Cell):
        return [value]
    if isinstance(value, dict):
        return [c for v in value.values() for c in _cells(v)]
    if isinstance(value, list | tuple):
        return [c for v in value for c in _cells(v)]
    return []


def _have_tables() -> bool:
    return (ROOT / facts.MAIN / "detection.csv").exists()


@pytest.mark.parametrize("name", NAMES)
def test_every_named_cell_of_a_finding_is_quoted_by_its_template(name):
    if not _have_tables():
        pytest.skip("no stored tables here")
    ledger = Ledger(ROOT)
    spec = getattr(facts, name)(ROOT)
    written = finding(name, ledger)
    quoted = {(c.table, tuple(sorted(c.where.items()))) for c, _, _ in ledger.quotes}
    unused = [c for c in _cells(spec.values) if (c.table, tuple(sorted(c.where.items()))) not in quoted]
    assert not unused, f"{name}: named but never quoted: {unused}"
    assert written.title and written.body and written.title[0].isupper()
    if spec.in_readme:
        assert written.short, f"{name} is in the README but its template has no short section"


@pytest.mark.parametrize("name", NAMES)
def test_every_finding_has_a_template_with_a_title_and_a_body(name):
    text = (wording.TEMPLATES / f"{name}.md.j2").read_text()
    sections = wording.SECTION.findall(text)
    assert sections[:1] in (["title"], ["body"]) and {"title", "body"} <= set(sections)
    assert len(sections) == len(set(sections))


def test_sections_collapse_whitespace_and_refuse_stray_text():
    assert wording.sections("== title\nA  title,\n  on two lines.\n== body\nBody.\n") == {
        "title": "A title, on two lines.",
        "body": "Body.",
    }
    with pytest.raises(ValueError, match="text before its first section"):
        wording.sections("stray\n== title\nx\n")
    with pytest.raises(ValueError, match="twice"):
        wording.sections("== body\nx\n== body\ny\n")
    with pytest.raises(ValueError, match="no '== <section>' line"):
        wording.sections("no sections at all")


def _table(tmp_path: Path) -> Cell:
    (tmp_path / "t.csv").write_text(
        "key,auroc,auroc_low,auroc_high,n,use,same,other\na,0.61234,0.5,0.7,1200,flat (10:100%),x,y\n"
    )
    return Cell("t.csv", {"key": "a"}, "auroc")


def test_the_filters_quote_through_the_ledger_in_the_order_written(tmp_path):
    cell = _table(tmp_path)
    ledger = Ledger(tmp_path)
    template = wording._environment().from_string(
        "== body\nAUROC {{ c | interval }} on {{ c.n | count }} ({{ (c.use | rating).described() }}); {{ c | pct }}"
    )
    text = wording.sections(template.render(c=wording.Named(cell), ledger=ledger))["body"]
    assert text == "AUROC 0.612 [0.500, 0.700] on 1,200 (flat (10 for 100%)); 61.2%"
    assert [(c.column, fmt) for c, fmt, _ in ledger.quotes] == [
        ("auroc", "3f"), ("auroc_low", "3f"), ("auroc_high", "3f"), ("n", "int"), ("use", "text"), ("auroc", "pct1"),
    ]  # fmt: skip


def test_a_misspelt_name_or_a_sentence_over_cells_that_differ_stops_the_build(tmp_path):
    import jinja2

    cell = _table(tmp_path)
    env = wording._environment()
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("== body\n{{ forcd | interval }}").render(forced=wording.Named(cell), ledger=Ledger(tmp_path))
    same = env.from_string("== body\n{{ c.same | same_text(c.same) }}")
    assert "x" in same.render(c=wording.Named(cell), ledger=Ledger(tmp_path))
    with pytest.raises(ValueError, match="rewrite the finding"):
        env.from_string("== body\n{{ c.same | same_text(c.other) }}").render(
            c=wording.Named(cell), ledger=Ledger(tmp_path)
        )
