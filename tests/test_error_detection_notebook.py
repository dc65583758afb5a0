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
    assert headline.startswith("**Forced to write its 1-10 rating alone, the judge ") and headline.endswith(".**")
    assert rest.startswith("- **Per sentence:**")
    with (runs / STUDY / "metrics" / "detection.csv").open(newline="") as f:
        forced = next(r for r in csv.DictReader(f) if (r["level"], r["scorer"]) == ("document", FORCED_DOC))
    chance = float(forced["auroc_low"]) <= 0.5 <= float(forced["auroc_high"])
    assert ("no better than chance" in headline) == chance
    with (runs / STUDY / "metrics" / f"{DOC_PAIRS}.csv").open(newline="") as f:
        free = next(r for r in csv.DictReader(f) if (r["a"], r["b"]) == (FREE_DOC, FORCED_DOC))
    assert ("its explained rating per sentence" in headline) == (verdict(free["ranking"]) == "ahead")
