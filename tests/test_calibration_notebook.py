"""Notebook 03's tables, formatted from calibration report rows (calibration_notebook)."""

from __future__ import annotations

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
    # the judge's own score that no map could fit is named, with why, not only counted in the link
    assert "Not in it, because no map was fitted (one value: under 4 values" in text
    assert "not fitted with a curve): judge rating (forced), per field (4,200 items). " in text


def test_the_study_runs_forced_ratings_are_named_as_not_fitted_from_its_stored_table():
    """On the recorded study run the forced rating, per output and per field, takes 3 values, too
    few for a map; the notebook names both rather than leaving them out of the table silently."""
    import csv
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    table = root / "results/runs/financial_ner-sample600-controlled30/metrics/calibration.csv"
    rows = list(csv.DictReader(table.open()))
    text = cn.calibrators_table(rows, 0.9, table.with_suffix(".md"), root)
    said = text.split("Not in it, because no map was fitted (")[1].split(". The ")[0]
    unfitted = [r for r in rows if r["method"].startswith("not fitted") and cn._main_score(r["scorer"])]
    assert len(unfitted) == 2 and said.startswith("3 distinct scores: under 4 values")
    assert said.endswith("): judge rating (forced) (600 items); judge rating (forced), per field (4,200 items)")
