"""Notebook 03's tables, formatted from calibration report rows (calibration_notebook)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from construct_eval.studies import Ledger, findings
from construct_eval.studies import calibration_notebook as cn


def test_a_difference_keeps_its_sign_and_one_that_rounds_to_zero_is_zero():
    assert [cn.signed(x) for x in (0.0123, -0.0041, -0.0004, 0.0, float("nan"), None)] == [
        "+0.012", "-0.004", "0.000", "0.000", "-", "-",
    ]  # fmt: skip


def _row(scorer: str, method: str, **kw) -> dict:
    return {"scorer": scorer, "method": method, "n": 4200, "brier": 0.07, "log_loss": 0.3, "ece_width": 0.01,
            "ece_mass": 0.02, "review_share_items@90%": 0.8, "realised_recall": kw.get("recall", 0.93)}  # fmt: skip


def test_the_calibrators_table_shows_the_judges_scores_and_counts_the_rest(tmp_path):
    rows = [
        _row("judge-field", "isotonic"),
        _row("judge-field:expected", "platt", recall=0.85),
        _row("plausibility@leaf", "isotonic"),
        _row("judge-field", "not fitted: one value"),
    ]
    text = cn.calibrators_table(rows, 0.9, tmp_path / "out" / "metrics" / "calibration.md", tmp_path)
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(table) == 3  # the head and the judge's two fitted rows
    assert "| 4,200 |" in table[1] and table[2].endswith("| 0.850 (short) |")
    assert (
        "The 2 rows above are the judge's scores, of the 4 rows of [the full table](out/metrics/calibration.md)" in text
    )
    assert "says why 1 was not fitted" in text
    # the judge's own score that no map could fit is named, not only counted in the link
    assert "Not in it: judge rating (forced), per field (4,200 items). This table fits a map only to a score" in text


def test_the_study_runs_forced_ratings_are_named_as_not_fitted_from_its_stored_table():
    """On the recorded study run the forced rating, per output and per field, takes 3 values, too
    few for a map; the notebook names both rather than leaving them out of the table silently."""
    root = Path(__file__).resolve().parents[1]
    table = root / "results/runs/financial_ner-sample600-controlled30/metrics/calibration.csv"
    rows = list(csv.DictReader(table.open()))
    text = cn.calibrators_table(rows, 0.9, table.with_suffix(".md"), root)
    said = text.split("Not in it: ")[1].split(". This table")[0]
    unfitted = [r for r in rows if r["method"].startswith("not fitted") and cn._main_score(r["scorer"])]
    assert len(unfitted) == 2 and all(r["method"] == "not fitted: 3 distinct scores" for r in unfitted)
    assert (
        said
        == "judge rating (forced) (600 items, 3 values) and judge rating (forced), per field (4,200 items, 3 values)"
    )


RUN = Path(__file__).resolve().parents[1] / "results/runs/financial_ner-sample600-controlled30/metrics"


def _stored(name: str) -> list[dict]:
    if not (RUN / f"{name}.csv").exists():
        pytest.skip(f"no stored {name} table here")
    with (RUN / f"{name}.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def test_the_two_tables_say_the_same_about_a_rating_with_three_values():
    """N03-1 and N03-4: the readings table fits isotonic and Platt to the forced ratings (3 values)
    and the calibrators table does not; each says so, in sentences, naming the same ratings."""
    rows, readings = _stored("calibration"), _stored("rating_readings")
    fitted = {(r["level"], r["scorer"]) for r in readings if r["reading"] == "isotonic (out of fold)"}
    assert ("field", "judge-field") in fitted  # the readings table does fit the 3-value rating
    under = cn.readings_table({"readings": readings, "rows": rows}).split("\n\n")[-1]
    assert under.startswith("Isotonic and Platt are fitted here to every written rating, however few its values.")
    assert "fits a map only to a score with at least 4 distinct values, so it leaves out" in under
    assert "judge rating (forced), per field (3 values)" in under
    text = cn.calibrators_table(rows, 0.9, RUN / "calibration.md", RUN.parent, readings)
    assert "the readings table above fits isotonic and Platt to these ratings all the same" in text
    assert "no map was fitted (3 distinct scores" not in text and "as above, not fitted with a curve" not in text
    alone = cn.calibrators_table(rows, 0.9, RUN / "calibration.md", RUN.parent)  # no readings: no claim about them
    assert "the readings table above" not in alone


def test_a_difference_from_the_base_rate_that_excludes_zero_keeps_the_digits_that_show_it():
    """N03-3: Platt minus the base rate, -0.0011 [-0.0019, -0.0003], is printed at four decimals in
    the readings table, as the finding quotes it; at three it would read -0.001 [-0.002, 0.000]."""
    rows, readings = _stored("calibration"), _stored("rating_readings")
    platt = next(
        r
        for r in readings
        if (r["level"], r["scorer"], r["reading"]) == ("field", "judge-field", "platt (out of fold)")
    )
    shown = f"{float(platt['brier_minus_base_rate']):+.4f} [{float(platt['base_diff_low']):+.4f}, {float(platt['base_diff_high']):+.4f}]"
    assert float(platt["base_diff_high"]) < 0 and abs(float(platt["base_diff_high"])) < 0.0005
    assert f"| {shown} |" in cn.readings_table({"readings": readings, "rows": rows})
    finding = findings.rating_meaning(Ledger(RUN.parents[3]))
    assert f"a difference of {shown}" in finding.body
    assert cn.digits(-0.0135, -0.007) == 3 and cn.digits(-0.001, 0.0004) == 3 and cn.digits(0.0002, 0.003) == 4


def test_the_rating_finding_is_its_answer_then_a_few_short_bullets_with_every_sentence_kept():
    """N03-2: the 330-word bullet becomes the answer in bold and three or four bullets, none long,
    every sentence of the finding in one of them."""
    if not (RUN / "rating_readings.csv").exists():
        pytest.skip("no stored readings here")
    finding = findings.rating_meaning(Ledger(RUN.parents[3]))
    text = cn.finding_bullets(finding, strip="results/", prefix="../")
    answer, bullets, tables = text.split("\n\n")
    assert answer == f"**{finding.title}**" and tables.startswith("Tables: [what each value means](../runs/")
    bullets = bullets.splitlines()
    assert 3 <= len(bullets) <= 5 and all(b.startswith("- **") for b in bullets)
    assert max(len(b.split()) for b in bullets) < 100
    said = " ".join(b.split("** ", 1)[1] for b in bullets)
    assert sorted(re.split(r"(?<=[.!?])\s+(?=[A-Z])", said)) == sorted(
        re.split(r"(?<=[.!?])\s+(?=[A-Z])", finding.body.strip())
    )
    # the reading value by value opens its bullet, so its "it" is the rating, not the expected rating
    assert bullets[-1].startswith("- **Without an order.** Read value by value")
