"""Notebook 02's answer: a bold headline the stored cells carry, then a line per level."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from construct_eval.studies.error_detection_notebook import DOC_PAIRS, FORCED_DOC, FREE_DOC, ErrorDetection, verdict

ROOT = Path(__file__).resolve().parents[1]
STUDY, GENERATED = "financial_ner-sample600-controlled30", "financial_ner-sample200"


def test_the_answer_opens_with_a_headline_read_from_the_forced_ratings_interval_and_the_paired_verdicts():
    runs = ROOT / "results" / "runs"
    if not (runs / STUDY / "metrics" / f"{DOC_PAIRS}.csv").exists():
        pytest.skip(f"{STUDY} has no stored paired tables here")
    answer = ErrorDetection(runs, ROOT / "results" / "notebooks" / "02_error_detection").answer(STUDY, GENERATED)
    headline, rest = answer.split("\n\n", 1)
    assert headline.startswith("**Forced to write its 1-10 rating alone, the judge ") and ".** " in headline
    assert rest.startswith("- **Per sentence:**")
    with (runs / STUDY / "metrics" / "detection.csv").open(newline="") as f:
        forced = next(r for r in csv.DictReader(f) if (r["level"], r["scorer"]) == ("document", FORCED_DOC))
    chance = float(forced["auroc_low"]) <= 0.5 <= float(forced["auroc_high"])
    assert ("no better than chance" in headline) == chance
    with (runs / STUDY / "metrics" / f"{DOC_PAIRS}.csv").open(newline="") as f:
        free = next(r for r in csv.DictReader(f) if (r["a"], r["b"]) == (FREE_DOC, FORCED_DOC))
    assert ("the explained rating per sentence" in headline) == (verdict(free["ranking"]) == "ahead")


def _nb() -> ErrorDetection:
    return ErrorDetection(ROOT / "results" / "runs", ROOT / "results" / "notebooks" / "02_error_detection")


def test_the_headline_is_short_sentences_with_the_answer_first_and_every_number_kept():
    """N02-1: the bold answer is one short sentence; what beats the forced rating follows in short
    sentences of their own, no semicolons, nothing dropped from what the paired tables say."""
    runs = ROOT / "results" / "runs"
    if not (runs / STUDY / "metrics" / f"{DOC_PAIRS}.csv").exists():
        pytest.skip(f"{STUDY} has no stored paired tables here")
    headline = _nb().answer(STUDY, GENERATED).split("\n\n", 1)[0]
    bold, _, rest = headline.partition(".** ")
    assert bold.startswith("**") and "**" not in rest and ";" not in headline
    sentences = [s for s in headline.replace("**", "").split(". ") if s]
    assert len(sentences) >= 2 and max(len(s.split()) for s in sentences) <= 30
    assert "on the items each shares with it" not in headline
    with (runs / STUDY / "metrics" / f"{DOC_PAIRS}.csv").open(newline="") as f:
        free = next(r for r in csv.DictReader(f) if (r["a"], r["b"]) == (FREE_DOC, FORCED_DOC))
    assert ("the explained rating per sentence" in rest) == (verdict(free["ranking"]) == "ahead")


def test_an_overview_row_judged_on_part_of_its_documents_says_how_many_from_the_judges_row():
    """N02-2: "PII (planted errors, 50 docs)" beside n = 20 says the judge rated 20 of them, read
    from the judge's per-output row (its documents and the ones left out as not scored)."""
    run = "pii-sample50-controlled20"
    table = ROOT / "results" / "runs" / run / "metrics" / "detection.csv"
    if not table.exists():
        pytest.skip(f"{run} is not stored here")
    with table.open(newline="") as f:
        judge = next(r for r in csv.DictReader(f) if (r["level"], r["scorer"]) == ("document", FORCED_DOC))
    said = f"; the judge rated {int(judge['documents']):,} docs, not the other {int(judge['left_out']):,}"
    assert int(judge["left_out"]) > 0 and _nb().judged_subset(run) == said
    assert f"PII (planted errors, 50 docs{said})" in _nb().overview()
    assert _nb().judged_subset(STUDY) == ""  # every document judged: the label stands as it is


def test_the_paired_tables_name_their_reference_and_say_why_it_changes_between_rows():
    """N02-4: the reference column is the forced rating on each row's items; where it changes, a
    note names the rows that rated fewer items."""
    if not (ROOT / "results" / "runs" / STUDY / "metrics" / f"{DOC_PAIRS}.csv").exists():
        pytest.skip(f"{STUDY} has no stored paired tables here")
    per_output = _nb().paired_rows(STUDY, DOC_PAIRS)
    assert "| forced rating, same items |" in per_output and "| reference |" not in per_output
    references = {
        line.split(" | ")[3] for line in per_output.splitlines() if line.startswith("| ") and "---" not in line
    }
    references.discard("forced rating, same items")
    assert len(references) > 1 and "changes where a score rated fewer items (here P(correct))." in per_output
    generated = _nb().filled_pairs(GENERATED)  # one reference value: no note
    assert "changes where a score rated fewer items" not in generated


def test_an_imported_tlm_row_in_the_own_run_table_says_where_its_scores_came_from():
    """N02-5: the own-run table's Cleanlab TLM row comes with where its scores were made, the
    version read from the anchor's pinned environment."""
    row = {"level": "field", "scorer": "tlm@top", "n": 48, "positives": 11, "auroc": 0.62, "auroc_low": 0.48,
           "auroc_high": 0.77, "recall@10%": 0.12}  # fmt: skip
    text = _nb().own_run({"rows": [row]})
    lock = (ROOT / "results" / "tlm_anchor" / "requirements-tlm.lock").read_text()
    version = next(line.split("==")[1] for line in lock.splitlines() if line.startswith("trustworthy-llm=="))
    assert f"Cleanlab's open-source TLM (`trustworthy-llm` {version}" in text
    assert "](../tlm_anchor/README.md))." in text
    assert "open-source TLM" not in _nb().own_run({"rows": [{**row, "scorer": "plausibility@leaf"}]})


def test_the_planted_kind_answer_sorts_each_kind_by_its_interval_and_quotes_the_table():
    """The answer beside the planted-kind figure: the expected rating's count above chance is the
    table's count of the rows drawn filled (powered, an interval at most 0.3 wide) whose interval
    lies above 0.5; a kind it cannot tell from chance, or drawn hollow,
    is named with the interval the table stores; every number quoted is a named cell."""
    table = ROOT / "results" / "figures" / "table_planted_kind.csv"
    if not table.exists():
        pytest.skip("the figure set's planted-kind table is not here")
    with table.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["powered"] == "True" and r["scorer"] == "judge-field:expected"]
    filled = [r for r in rows if float(r["auroc_high"]) - float(r["auroc_low"]) <= 0.3]  # drawn solid in the figure
    nb = _nb()
    said = nb.planted_kinds()
    above = sum(float(r["auroc_low"]) > 0.5 for r in filled)
    assert said.startswith("**Which planted errors does the judge find?** ")
    assert f"above chance on {above} of the {len(filled)} (kind, dataset) pairs drawn solid" in said
    top = max(float(x["auroc"]) for x in filled)
    for r in rows:
        shown = f"{float(r['auroc']):.3f} [{float(r['auroc_low']):.3f}, {float(r['auroc_high']):.3f}]"
        named = r not in filled or float(r["auroc_low"]) <= 0.5 or float(r["auroc"]) == top
        assert (shown in said) == named, shown
    assert nb.ledger.quotes and all(c.table.endswith("table_planted_kind.csv") for c, _, _ in nb.ledger.quotes)
