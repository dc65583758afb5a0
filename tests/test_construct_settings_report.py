"""The paper's question setting by setting: every number of ``results/runs/construct_settings.csv``
is the stored paper comparison's cell, and a setting not run yet says so."""

from __future__ import annotations

import csv
from pathlib import Path

from construct_eval.studies import construct_settings_report as report

RUNS = Path(__file__).resolve().parents[1] / "results" / "runs"


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_the_stored_table_is_what_the_paper_comparisons_hold_now():
    stored = _csv(RUNS / "construct_settings.csv")
    made = report.report()
    assert [r["run"] for r in stored] == [r["run"] for r in made]
    for s, m in zip(stored, made, strict=True):
        assert {k: str(v) for k, v in m.items()} == {k: v for k, v in s.items() if k in m}


def test_each_number_is_its_settings_paper_comparison_cell(tmp_path):
    natural = report.SETTINGS[0]
    rows = report.setting_rows(natural)
    table = _csv(RUNS / natural.run / "metrics" / "paper_comparison.csv")
    filled = next(r for r in _csv(RUNS / natural.run / "metrics" / f"{report.FILLED}.csv") if r["fields"] == "value")
    (within,) = [row for row in rows if row["level"] == "filled field"]  # the log-probs (a) against CONSTRUCT (b)
    assert (within["construct_auroc"], within["logprob_auroc"], within["n"]) == (
        filled["auroc_b"],
        filled["auroc_a"],
        filled["n"],
    )
    assert within["construct_minus_logprob"] == -float(filled["difference"])
    assert within["ranking"] == {"token_logprob@top higher": "CONSTRUCT lower"}.get(
        filled["ranking"], filled["ranking"]
    )
    for row in rows:
        if row["level"] == "filled field":
            continue
        assert row["holm"].startswith("p ") and "after Holm over" in row["holm"]
        construct = next(r for r in table if r["level"] == row["level"] and r["key"] == "construct")
        logprob = next(r for r in table if r["level"] == row["level"] and r["key"] == "token-logprob")
        assert (row["construct_auroc"], row["n"], row["wrong"]) == (
            construct["auroc"],
            construct["n"],
            construct["wrong"],
        )
        assert (row["logprob_auroc"], row["construct_minus_logprob"]) == (logprob["auroc"], logprob["auroc_diff"])
    missing = report.Setting("no-such-run", "d", "g", "j", 10)
    (only,) = report.setting_rows(missing, tmp_path)
    assert only["state"].startswith("not run yet")
