"""Every published number means what it says: conventions, baselines and warnings in the tables."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from construct_eval.cli import main
from construct_eval.data.labels import LabelRules, compare_values, label_output
from construct_eval.data.runs import RunDir
from construct_eval.reports.collect import ALT_LABELS, FIELD_PRIOR, ScoredItems, collect, field_prior_items, label_run
from construct_eval.reports.run_analyses import calibrate_run
from construct_eval.reports.tables import detection_table, within_field_auroc
from construct_eval.stats.metrics import detection_summary


def test_bias_keeps_the_rating_and_the_expected_rating_tables_apart(tmp_path):
    run = RunDir(tmp_path / "run")
    rows = []
    for i in range(12):
        for v, shift in (("sec:r-s-o|fields:original", 0), ("sec:r-s-o|fields:reversed", 1)):
            rows.append(
                {"doc_id": f"d{i}", "field": "__doc__", "mode": "doc", "variant": v, "status": "ok",
                 "rating": 5, "expected_rating": 5.0 + shift * 0.1 + i * 0.01, "call_id": f"{i}{v}"}
            )  # fmt: skip
    run.append("judgments", rows)
    run.append("labels", [{"id": f"d{i}", "wrong": i % 3 == 0, "fields": []} for i in range(12)])
    from construct_eval.reports.run_analyses import bias_run

    bias_run(run, variants=["default", "reversed"], n_boot=100)
    bias_run(run, variants=["default", "reversed"], n_boot=100, value="expected_rating")
    with (run.path / "metrics" / "bias_pairs_doc.csv").open() as fh:
        rating = next(csv.DictReader(fh))
    with (run.path / "metrics" / "bias_pairs_doc_expected_rating.csv").open() as fh:
        expected = next(csv.DictReader(fh))
    assert float(rating["mean_shift"]) == 0.0 and float(expected["mean_shift"]) == pytest.approx(0.1)


def test_null_like_strings_are_a_recorded_rule_with_a_strict_default():
    strict = LabelRules()
    assert compare_values(None, "null", "name", strict) == (False, "invented_value")
    loose = strict.with_null_like(["null", "", "Unknown"])
    assert compare_values(None, "null", "name", loose) == (True, "both_null")
    assert compare_values(None, " unknown ", "name", loose) == (True, "both_null")
    assert compare_values("Ann", "", "name", loose) == (False, "missing_value")
    assert strict.hash != loose.hash and loose.to_dict()["null_like_strings"] == ["", "null", "unknown"]
    assert LabelRules.from_dict(loose.to_dict()) == loose


def test_dates_in_string_lists_follow_what_the_rules_say():
    truth, pred = ["Q3 2019", "2019-03-01"], ["q3 2019", "03/01/2019"]
    as_strings = LabelRules(dates="parsed")
    assert compare_values(truth, pred, "Date", as_strings)[0] is False  # normalised strings: 2019-03-01 != 03/01/2019
    date_rule = LabelRules(dates="parsed", dates_in_string_lists="date_rule")
    assert compare_values(truth, pred, "Date", date_rule)[0] is False  # "Q3 2019" is not a date: exact
    assert compare_values(["Q3 2019", "2019-03-01"], ["Q3 2019", "03/01/2019"], "Date", date_rule)[0] is True
    exact = LabelRules(dates_in_string_lists="date_rule")
    assert compare_values(["Q3 2019"], ["q3 2019"], "Date", exact)[0] is False
    assert compare_values(["Q3 2019"], ["q3 2019"], "Date", LabelRules())[0] is True


def test_label_run_writes_the_other_reading_where_it_differs(tmp_path):
    run = RunDir(tmp_path / "run")
    truth = {"name": None, "city": "Oslo"}
    run.append("records", [{"id": f"d{i}", "request": "x", "ground_truth": truth} for i in range(3)])
    outputs = [{"name": "null", "city": "Oslo"}, {"name": None, "city": "Oslo"}, {"name": "Unknown", "city": "Rome"}]
    run.append("outputs", [{"id": f"d{i}", "output": o} for i, o in enumerate(outputs)])
    summary = label_run(run)
    assert summary["documents_wrong"] == 2 and summary["other_reading"]["documents_wrong"] == 1
    assert run.file(ALT_LABELS).exists() and run.meta()[ALT_LABELS]["documents_differing"] == 2
    run.replace("outputs", [{"id": f"d{i}", "output": {"name": None, "city": "Oslo"}} for i in range(3)])
    label_run(run)  # the readings agree now: the stale file and entry go
    assert not run.file(ALT_LABELS).exists() and ALT_LABELS not in run.meta()


def test_labelled_items_a_scorer_cannot_score_are_counted_with_a_reason(tmp_path):
    run = RunDir(tmp_path / "run")
    truth = {"items": [{"a": 1, "b": 2}, {"a": 3, "b": 4}], "c": "x"}
    out = {"items": [{"a": 1, "b": 2}], "c": "x"}  # the second item dropped
    run.append("records", [{"id": "d0", "request": "x", "ground_truth": truth}])
    run.append("records", [{"id": "d1", "request": "x", "ground_truth": truth}])
    run.append("outputs", [{"id": "d0", "output": out}, {"id": "d1", "output": truth}])
    label_run(run)
    leaves = ["items[0].a", "items[0].b", "c"]
    scores = [{"id": "d0", "scorer": "s", "field": p, "granularity": "leaf", "score": 0.5} for p in leaves]
    run.append("scores", scores)
    it = next(i for i in collect(run) if i.scorer == "s@leaf")
    assert it.n == 3
    assert it.left_out == {"not in the output (a dropped item or missing field)": 2, "document not scored": 5}


def test_field_prior_baseline_and_within_field_auroc():
    rng = np.random.default_rng(0)
    from construct_eval.data.labels import DocumentLabels, FieldLabel

    labels = {}
    for d in range(60):  # field "risky" is wrong half the time, "safe" never
        fields = [
            FieldLabel("safe", "safe", False, "match"),
            FieldLabel("risky", "risky", bool(rng.random() < 0.5), "x"),
        ]
        labels[f"d{d}"] = DocumentLabels(f"d{d}", fields)
    prior = field_prior_items(labels, "leaf")
    assert prior.scorer == f"{FIELD_PRIOR}@leaf" and prior.n == 120
    y, s, g = prior.arrays()
    assert detection_summary(y, s, g, n_boot=50).auroc.estimate > 0.7  # knowing the field is enough here
    noise = ScoredItems("noise", "field", "leaf", prior.doc_ids, prior.fields, list(rng.random(120)), prior.wrong)
    value, used, one_class = within_field_auroc(noise)
    assert used == 1 and one_class == 1 and 0.3 < value < 0.7
    rows = detection_table([prior, noise], n_boot=50)
    assert rows[0]["uses_labels"] is True and "auroc_within_field" not in rows[0]
    assert rows[1]["fields_one_class"] == 1


def test_the_field_prior_labels_a_top_level_field_as_every_other_scorer_does():
    """A top-level field whose only error is a value the output left out (a dropped list item, a
    column missing from a dictionary) is wrong for the judge's field rating
    (``judged_field_errors``); the prior once read it as right, so the two were compared on
    different labels. Per leaf the left-out value has no item at all."""
    from construct_eval.data.labels import DocumentLabels, FieldLabel
    from construct_eval.data.labels.summary import judged_field_errors

    labels = {}
    for d in range(20):
        fields = [
            FieldLabel("items[0].name", "items[0].name", False, "match"),
            FieldLabel("items", "items[1]", d % 2 == 0, "missing_in_output", in_output=False),  # dropped item
            FieldLabel("total", "total", d % 5 == 0, "x"),
            FieldLabel("notes", "notes", True, "missing_in_output", in_output=False),  # nothing of it in the output
        ]
        labels[f"d{d}"] = DocumentLabels(f"d{d}", fields)
    top = field_prior_items(labels, "top")
    assert sorted(set(top.fields)) == ["items", "total"]  # an item where the output has something of the field
    for d, f, w in zip(top.doc_ids, top.fields, top.wrong, strict=True):
        assert bool(w) == judged_field_errors(labels[d], [f])[f], (d, f)
    assert sum(w for f, w in zip(top.fields, top.wrong, strict=True) if f == "items") == 10
    leaf = field_prior_items(labels, "leaf")
    assert sorted(set(leaf.fields)) == ["items[0].name", "total"]


def test_a_constant_score_is_not_calibrated(tmp_path):
    run = RunDir(tmp_path / "run")
    field = {"path": "a", "truth_path": "a", "reason": "x"}
    run.append("labels", [{"id": f"d{i}", "fields": [{**field, "wrong": i % 4 == 0}]} for i in range(40)])
    run.append("scores", [{"id": f"d{i}", "scorer": "flat", "field": "__doc__", "score": 5.0} for i in range(40)])
    run.append(
        "scores", [{"id": f"d{i}", "scorer": "two", "field": "__doc__", "score": float(i % 2)} for i in range(40)]
    )
    report = calibrate_run(run, methods=("isotonic", "platt"))
    by = {r["scorer"]: r for r in report["rows"]}
    assert by["flat"]["method"] == "undefined: constant score" and "brier" not in by["flat"]
    assert by["two"]["method"] == "not fitted: 2 distinct scores"
    assert not list((run.path / "figures").glob("reliability_*flat*"))
    assert (run.path / "metrics" / "values_document_two.md").exists()
    assert not (run.path / "metrics" / "values_document_flat.md").exists()


def test_rows_on_few_positives_are_flagged_and_lose_their_interval():
    y = np.array([1] + [0] * 19)
    s = np.linspace(0, 1, 20)
    row = detection_summary(y, s, np.arange(20), n_boot=400, seed=0).row()
    assert "1 wrong / 19 right" in row["underpowered"]
    assert row["boot_dropped"] > 20 and np.isnan(row["auroc_low"]) and "no interval" in row["underpowered"]
    big = np.array([1, 0] * 100)
    ok = detection_summary(big, big + np.random.default_rng(1).random(200) * 2, np.arange(200), n_boot=200).row()
    assert ok["underpowered"] == "" and ok["boot_dropped"] == 0


def test_unparsed_outputs_null_truth_leaves_are_not_non_null_truth():
    lab = label_output("d", {"a": "x", "b": None, "c": None}, None, parse_failed=True)
    assert [f.reason for f in lab.fields] == [
        "unparsed_output",
        "unparsed_output_null_truth",
        "unparsed_output_null_truth",
    ]


def test_combine_never_averages_the_label_using_field_prior(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "20"]) == 0
    assert main(["label", "--run", str(run_dir)]) == 0
    run = RunDir(run_dir)
    rng = np.random.default_rng(3)
    rows = []
    for doc in run.read("labels"):
        for p in dict.fromkeys(f["path"] for f in doc["fields"]):
            for scorer in ("s1", "s2"):
                rows.append(
                    {"id": doc["id"], "scorer": scorer, "field": p, "granularity": "leaf", "score": float(rng.random())}
                )
    run.append("scores", rows)
    assert main(["combine", "--run", str(run_dir)]) == 0
    names = {r["scorer"] for r in run.read("scores")}
    assert "combo:rank-mean[s1@leaf+s2@leaf]" in names and not any(FIELD_PRIOR in n for n in names)


def test_paired_table_states_the_ranking_its_interval_allows(tmp_path):
    from construct_eval.reports.tables import paired_table

    rng = np.random.default_rng(5)
    y = (rng.random(200) < 0.3).astype(int)
    docs = [f"d{i}" for i in range(200)]
    fields = ["__doc__"] * 200
    good = ScoredItems("good", "document", None, docs, fields, list(-y + rng.normal(0, 0.3, 200)), list(y))
    noise = ScoredItems("noise", "document", None, docs, fields, list(rng.random(200)), list(y))
    same = ScoredItems("same", "document", None, docs, fields, list(rng.random(200)), list(y))
    rows = {r["a"]: r for r in paired_table([good, noise, same], "noise", level="document", n_boot=300)}
    assert rows["good"]["ranking"] == "good higher" and rows["good"]["p_holm"] >= rows["good"]["p"]
    assert rows["same"]["ranking"] == "none: the interval holds 0"


def test_a_paired_difference_over_one_document_ranks_nothing():
    """Seven fields of one document: every document resample is that document, so the interval
    has no width and p is 0, yet nothing is known; the table says underpowered instead."""
    from construct_eval.reports.tables import paired_table

    fields = [f"f{i}" for i in range(7)]
    wrong = [1, 1, 1, 1, 0, 0, 0]
    ref = ScoredItems("ref", "field", "top", ["d"] * 7, fields, [1.0, 1, 1, 10, 10, 10, 1], wrong)
    other = ScoredItems("other", "field", "top", ["d"] * 7, fields, [1.0, 2, 3, 4, 5, 6, 7], wrong)
    (row,) = paired_table([ref, other], "ref", level="field", n_boot=200)
    assert row["low"] == row["high"] and row["documents"] == 1
    assert row["ranking"] == "none: underpowered (4 wrong / 3 right in 1 documents)"


def test_an_interval_that_excludes_zero_ranks_nothing_when_holm_says_no(monkeypatch):
    """Three comparisons each at p = 0.03: every unadjusted interval excludes 0, Holm's p is 0.09."""
    from construct_eval.reports import tables

    def marginal(a, b, **_):
        row = {"a": a.scorer, "b": b.scorer, "n": 200, "positives": 60, "documents": 200}
        return row | {"difference": 0.05, "low": 0.001, "high": 0.1, "p": 0.03}

    monkeypatch.setattr(tables, "compare_scorers", marginal)
    items = [ScoredItems(name, "document", None, ["d"], ["__doc__"], [0.5], [1]) for name in ("ref", "a", "b", "c")]
    rows = tables.paired_table(items, "ref", level="document")
    assert [r["p_holm"] for r in rows] == pytest.approx([0.09, 0.09, 0.09])
    assert {r["ranking"] for r in rows} == {"none after Holm (the unadjusted interval excludes 0)"}


def test_evaluate_writes_the_other_reading_beside(tmp_path):
    from construct_eval.reports.run_analyses import evaluate_run

    run = RunDir(tmp_path / "run")
    truth = {"name": None, "city": "Oslo"}
    outs = [{"name": "null" if i % 2 else None, "city": "Oslo" if i % 3 else "Rome"} for i in range(30)]
    run.append("records", [{"id": f"d{i}", "request": "x", "ground_truth": truth} for i in range(30)])
    run.append("outputs", [{"id": f"d{i}", "output": o} for i, o in enumerate(outs)])
    label_run(run)
    rows = [{"id": f"d{i}", "scorer": "s", "field": "__doc__", "score": float(i % 5)} for i in range(30)]
    run.append("scores", rows)
    report = evaluate_run(run, n_boot=50)
    strict = next(r for r in report["rows"] if r["scorer"] == "s")
    other = next(r for r in report["other_reading"] if r["scorer"] == "s")
    assert strict["prevalence"] > other["prevalence"]
    assert "read as null" in (run.path / "metrics" / "detection_other_reading.md").read_text()


def test_null_like_strings_inside_lists_follow_the_reading():
    loose = LabelRules().with_null_like(["null", "none"])
    assert compare_values(None, ["null"], "Person", loose) == (True, "both_null")
    assert compare_values(None, ["None", "null"], "Person", loose)[0] is True
    assert compare_values(["Ann"], ["Ann", "null"], "Person", loose)[0] is True
    assert compare_values(None, ["null"], "Person", LabelRules()) == (False, "invented_value")
    assert compare_values(["Ann"], ["Ann", "null"], "Person", LabelRules())[0] is False


def test_a_rating_counts_as_varying_only_with_three_values_of_five_percent():
    from construct_eval.reports.tables import rating_use

    assert rating_use([5] * 30).startswith("flat")
    assert rating_use([1] * 3 + [10] * 21).startswith("flat")  # two values: a threshold, not a scale
    assert rating_use([1] * 2 + [5] * 49 + [10] * 49).startswith("flat")  # 1 holds 2% only
    assert rating_use([3] * 10 + [7] * 45 + [9] * 45).startswith("varying")


def test_a_score_that_is_no_rating_stores_its_values_only_where_one_value_holds_nearly_every_item():
    """The plausibility checks gave 346 of 350 notices 1.0: a figure must tag them flat as it tags a
    judge's flat rating, so their values are stored; a varying score's are not."""
    from construct_eval.reports.tables import score_use

    assert score_use("plausibility", [1.0] * 346 + [0.5] * 4) == "flat (1:99%)"
    assert score_use("plausibility", [1.0] * 90 + [0.5] * 10) == ""  # 90% one value: it varies
    assert score_use("token_logprob", [i / 100 for i in range(100)]) == ""
    assert score_use("judge-doc", [3] * 10 + [7] * 45 + [9] * 45).startswith("varying")  # a rating: always
    assert score_use("judge-doc", []) == ""


def test_a_rating_use_reads_back_from_the_text_a_table_stores():
    """Every reader of a detection table's ``rating_use`` cell (figures, findings, notebooks) reads
    it through :class:`RatingUse`, so the text and its reading cannot drift apart."""
    from construct_eval.reports.tables import RatingUse, rating_use

    text = rating_use([1] * 2 + [5] * 9 + [10] * 89)
    assert text == "flat (5:9% 10:89%)"  # 1 holds 2%: not listed
    use = RatingUse.parse(text)
    assert (use.kind, use.shares, use.top_share) == ("flat", (("5", 9), ("10", 89)), 89)
    assert use.words() == "5 for 9%, 10 for 89%" and str(use) == text
    assert RatingUse.parse(rating_use([7.5] * 3 + [2] * 3 + [9] * 4)).shares == (("2", 30), ("7.5", 30), ("9", 40))
    assert use.described() == "flat (5 for 9%, 10 for 89%)"
    split = RatingUse.parse(rating_use([5] * 43 + [10] * 55 + [1] * 2))
    assert split.described() == "split between two values (5 for 43%, 10 for 55%)"  # a reader does not call it flat
    assert RatingUse.parse("") is None
    with pytest.raises(ValueError, match="not a rating use: '10:100%'"):
        RatingUse.parse("10:100%")
