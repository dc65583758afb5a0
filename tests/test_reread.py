"""Stored judgments re-read under today's parser: no call, no write, keys as stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from construct_eval.data.runs import RunDir
from construct_eval.judging.reread import judgment_rows, reread, rule_counts
from construct_eval.reports import judgment_counts
from construct_eval.reports.judgment_counts import parse_rule_rows

RESULTS = Path(__file__).resolve().parents[1] / "results"
JUDGED = sorted(p.parent for p in RESULTS.glob("**/judgments.jsonl") if (p.parent / "run.json").exists())
MAIN = RESULTS / "runs" / "financial_ner-sample600-controlled30"


def _row(reply, **kw):
    base = {
        "doc_id": "d1",
        "field": "__doc__",
        "mode": "doc",
        "rating": None,
        "status": "unscored",
        "reason": "no_rating",
        "detail": "no 'Rating: [[x]]' in reply",
        "raw_reply": reply,
        "finish_reason": "stop",
        "constrained": "none",
        "expected_rating": None,
        "key": "k1",
    }
    return {**base, **kw}


def test_a_reply_the_old_parser_left_unscored_is_read_by_the_recipes_pattern():
    row = _row("Therefore, I would rate this response as [[4]].")
    out = reread(row)
    assert (out["rating"], out["status"], out["reason"], out["parse_rule"]) == (4, "ok", None, "double_bracket")
    assert out["stored_reading"]["reason"] == "no_rating" and out["key"] == "k1"
    assert row["rating"] is None  # the stored row is not touched


def test_an_unchanged_reading_keeps_its_log_prob_twin_and_gains_its_rule():
    row = _row("Rating: [[7]]", rating=7, status="ok", reason=None, detail=None, expected_rating=6.8)
    out = reread(row)
    assert out["rating"] == 7 and out["expected_rating"] == 6.8 and out["parse_rule"] == "rating_prefix"
    assert "stored_reading" not in out


def test_failed_requests_truncated_replies_and_rows_of_this_parser_are_left_alone():
    failed = reread(_row(None, reason="request_failed", detail="timeout"))
    assert failed["reason"] == "request_failed" and failed["parse_rule"] is None
    cut = reread(_row("I would rate this [[4]] but", reason="truncated", finish_reason="length"))
    assert cut["status"] == "unscored" and cut["reason"] == "truncated"
    new = _row("as [[4]]", parse_rule=None)  # a row this parser made: trusted as written
    assert reread(new)["rating"] is None


@pytest.mark.parametrize("run_dir", JUDGED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_stored_rating_reads_the_same_under_the_new_parser(run_dir):
    """The fallback only adds ratings where the stored reply had no prefixed one. Rows made by
    this parser (they carry their rule as written) are not re-read: any rule may have read them."""
    for stored in RunDir(run_dir, create=False).iter_rows("judgments"):
        if "parse_rule" in stored:
            continue
        r = reread(stored)
        if "stored_reading" in r:
            assert r["stored_reading"]["reason"] == "no_rating", (run_dir.name, r["key"])
            assert r["parse_rule"] in ("double_bracket", "single_bracket")
        elif r["status"] == "ok":
            assert r["parse_rule"] in ("rating_prefix", "json"), (run_dir.name, r["key"])


def test_the_main_runs_free_recipe_replies_are_all_read_now():
    rows = [r for r in judgment_rows(RunDir(MAIN, create=False)) if r["constrained"] == "none"]
    counts = rule_counts(rows)
    assert counts[("doc", "none", "rating_prefix")] == 598
    assert counts[("doc", "none", "double_bracket")] == 2 and counts[("doc", "none", "changed")] == 2
    assert counts[("doc", "none", "unscored")] == 0
    changed = {r["doc_id"]: r["rating"] for r in rows if "stored_reading" in r}
    assert changed == {"financial_ner-00196": 4, "financial_ner-00860": 1}


def test_the_parse_rule_table_counts_each_rule_and_the_changed_readings():
    rows = parse_rule_rows(RunDir(MAIN, create=False))
    free = {r["rule"]: r for r in rows if r["constrained"] == "none"}
    assert {k: r["judgments"] for k, r in free.items()} == {"double_bracket": 2, "rating_prefix": 598}
    assert {r["of"] for r in free.values()} == {600} and {r["readings_changed"] for r in free.values()} == {2}
    forced = [r for r in rows if r["constrained"] == "grammar:rating-only"]
    assert forced and all(r["rule"] == "rating_prefix" and r["readings_changed"] == 0 for r in forced)


def test_the_parse_rule_table_is_read_back_until_the_judgments_change(tmp_path, monkeypatch):
    """Counted once per file contents: a second evaluate reads the kept table, not a million
    replies; an appended judgment makes it count again."""
    run = RunDir(tmp_path / "run")
    stored = (MAIN / "judgments.jsonl").read_text().splitlines(keepends=True)
    free = [line for line in stored if '"constrained":"none"' in line.replace(" ", "")][:40]
    assert free, "the main run's free-recipe judgments are not where this test expects them"
    run.file("judgments").write_text("".join(free[:30]))
    first = parse_rule_rows(run)
    assert (run.path / ".analysis_cache" / "parse_rule_rows.json").exists()

    def no_reread(_run):
        raise AssertionError("the judgments were read again")

    monkeypatch.setattr(judgment_counts, "judgment_rows", no_reread)
    assert parse_rule_rows(run) == first
    monkeypatch.undo()
    with run.file("judgments").open("a") as fh:
        fh.writelines(free[30:])
    again = parse_rule_rows(run)
    assert sum(r["judgments"] for r in again) == len(free) and sum(r["judgments"] for r in first) == 30
