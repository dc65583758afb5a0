"""Field detection split by output kind: a pooled AUROC below 0.5 can hide a score that ranks
wrong fields first within both empty and filled fields."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from construct_eval.fields import MISSING
from construct_eval.reports.collect import ScoredItems
from construct_eval.reports.output_kinds import (
    EMPTY,
    RANKED_WITHIN_KIND,
    VALUE,
    attach_kinds,
    output_kind,
    output_kind_pairs,
    output_kind_table,
    within_kind_percentiles,
)


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (None, EMPTY),
        (MISSING, EMPTY),
        ("", EMPTY),
        ([], EMPTY),
        ({}, EMPTY),
        (0, VALUE),
        (False, VALUE),
        ("x", VALUE),
        (["a"], VALUE),
    ],
)
def test_output_kind(value, kind):
    assert output_kind(value) == kind


def _judge_that_rates_empty_low() -> tuple[ScoredItems, dict[str, dict[str, list[str]]]]:
    """40 documents with one empty and one filled entity list each. The judge rates an empty list
    1 or 2 (2 when it is wrong) and a filled one 9 or 10 (9 when wrong): within each kind the
    wrong field is rated lower; pooled, the mostly right empty fields are rated lowest."""
    it = ScoredItems(scorer="judge-field", level="field", granularity="top")
    outputs = {}
    for i in range(40):
        doc = f"d{i}"
        outputs[doc] = {"Company": [], "Person": ["Ann"]}
        empty_wrong, value_wrong = i % 10 == 0, i % 2 == 0
        it.doc_ids += [doc, doc]
        it.fields += ["Company", "Person"]
        it.wrong += [int(empty_wrong), int(value_wrong)]
        it.scores += [1.0 if empty_wrong else 2.0, 9.0 if value_wrong else 10.0]
    return it, outputs


def _with_kinds(items: list[ScoredItems], outputs: dict) -> list[ScoredItems]:
    attach_kinds(items, outputs)
    return items


def test_the_kinds_are_read_once_and_carried_by_the_items_and_their_subsets():
    """``attach_kinds`` gives each field item set its items' kinds; a cut by kind keeps the
    columns of the items it keeps (each document its group); a table without them says so."""
    it, outputs = _judge_that_rates_empty_low()
    del outputs["d1"]
    with pytest.raises(ValueError, match="output kinds were not read"):
        output_kind_table([it])
    attach_kinds([it], outputs)
    assert it.kinds.tolist()[:4] == [EMPTY, VALUE, "", ""]  # d1 has no output: no kind
    filled = it.of_kind(VALUE)
    assert filled.fields == ["Person"] * 39 and filled.kinds.tolist() == [VALUE] * 39
    y, s, g = filled.columns()
    fresh = ScoredItems(scorer="judge-field", level="field", granularity="top", doc_ids=filled.doc_ids,
                        fields=filled.fields, scores=filled.scores, wrong=filled.wrong)  # fmt: skip
    for mine, built in zip((y, s, g), fresh.columns(), strict=True):
        assert np.array_equal(mine, built)


def test_a_pooled_auroc_below_half_splits_into_perfect_rankings_within_kinds():
    it, outputs = _judge_that_rates_empty_low()
    rows = {r["fields"]: r for r in output_kind_table(_with_kinds([it], outputs), n_boot=100)}
    assert rows["all"]["n"] == 80 and rows[EMPTY]["n"] == 40 and rows[VALUE]["n"] == 40
    assert rows[EMPTY]["wrong"] == 4 and rows[VALUE]["wrong"] == 20
    assert rows["all"]["auroc"] < 0.5
    assert rows[EMPTY]["auroc"] == 1.0 and rows[VALUE]["auroc"] == 1.0
    assert rows[EMPTY]["rating_use"].startswith("flat") and "2:90%" in rows[EMPTY]["rating_use"]
    assert rows[VALUE]["auroc_low"] <= 1.0 <= rows[VALUE]["auroc_high"]


def test_a_kind_with_one_class_says_so_and_documents_without_output_are_left_out():
    it, outputs = _judge_that_rates_empty_low()
    it.wrong = [0 if f == "Company" else w for f, w in zip(it.fields, it.wrong, strict=True)]
    del outputs["d0"]
    rows = {r["fields"]: r for r in output_kind_table(_with_kinds([it], outputs), n_boot=100)}
    assert rows[EMPTY]["n"] == 39 and rows[VALUE]["n"] == 39 and rows["all"]["n"] == 80
    assert rows[EMPTY]["note"] == "one class only: no AUROC" and "auroc" not in rows[EMPTY]
    document_items = ScoredItems(
        scorer="judge-doc", level="document", doc_ids=["d1"], fields=["__doc__"], scores=[5.0], wrong=[0]
    )
    assert output_kind_table(_with_kinds([document_items], outputs)) == []


def test_within_kinds_a_score_that_loses_pooled_can_win_in_each_kind_and_holm_covers_all():
    """The judge above against a score that knows only the kind (filled fields first): pooled
    the kind score wins, within each kind it has no skill (0.5) and the judge ranks perfectly,
    so within kinds the difference is negative, with a paired interval and one Holm family."""
    judge, outputs = _judge_that_rates_empty_low()
    kind_only = ScoredItems(scorer="kind-only", level="field", granularity="top")
    kind_only.doc_ids, kind_only.fields, kind_only.wrong = list(judge.doc_ids), list(judge.fields), list(judge.wrong)
    kind_only.scores = [5.0 if f == "Person" else 8.0 for f in judge.fields]
    rows = output_kind_pairs(_with_kinds([judge, kind_only], outputs), "judge-field", n_boot=200)
    assert [r["fields"] for r in rows] == [EMPTY, VALUE]
    by_kind = {r["fields"]: r for r in rows}
    assert by_kind[VALUE]["n"] == 40 and by_kind[VALUE]["auroc_a"] == 0.5 and by_kind[VALUE]["auroc_b"] == 1.0
    assert by_kind[VALUE]["high"] < 0 and by_kind[VALUE]["ranking"] == "kind-only lower"
    assert all("p_holm" in r and r["p_holm"] >= r["p"] for r in rows)
    with pytest.raises(ValueError, match="no field-level scorer 'judge-doc'"):
        output_kind_pairs([judge], "judge-doc")


def test_ranking_within_each_kind_recovers_what_pooling_hid():
    """Label-free: each field's percentile among fields of its kind. The judge above ranks both
    kinds perfectly, so read within kinds it ranks the pooled fields perfectly too, and the row
    says how far that is from the raw pooled AUROC, paired."""
    it, outputs = _judge_that_rates_empty_low()
    rows = {r["fields"]: r for r in output_kind_table(_with_kinds([it], outputs), n_boot=100)}
    within = rows[RANKED_WITHIN_KIND]
    assert within["n"] == 80 and within["auroc"] == 1.0 and "exploratory" in within["note"]
    assert "uses no labels" in within["note"] and "the scorer itself does" not in within["note"]
    assert "minus_prior" not in within  # no field prior in the table
    assert within["minus_pooled"] == round(1.0 - rows["all"]["auroc"], 4) and within["minus_pooled_low"] > 0
    kinds = np.array(["a", "a", "b", "b"])
    assert within_kind_percentiles(np.array([3.0, 1.0, 7.0, 7.0]), kinds).tolist() == [0.75, 0.25, 0.5, 0.5]


def test_the_within_kind_reading_is_paired_against_the_field_prior_on_the_same_fields():
    """The field prior knows each field's error rate from the labels (here: an empty Company is
    wrong 10% of the time, a filled Person 50%). The label-free within-kind reading of the judge
    ranks perfectly, so it is ahead of the prior, paired on the same 80 fields; the prior's own
    row is not compared with itself and says that it uses labels."""
    it, outputs = _judge_that_rates_empty_low()
    prior = replace(
        it, scorer="field-prior-uses-labels@top", scores=[0.9 if f == "Company" else 0.5 for f in it.fields]
    )
    rows = output_kind_table(_with_kinds([it, prior], outputs), n_boot=200)
    within = {r["scorer"]: r for r in rows if r["fields"] == RANKED_WITHIN_KIND}
    prior_all = next(r for r in rows if r["scorer"] == prior.scorer and r["fields"] == "all")
    judge = within["judge-field"]
    assert judge["minus_prior"] == round(1.0 - prior_all["auroc"], 4) and judge["minus_prior_low"] > 0
    assert "minus_prior" not in within[prior.scorer]
    assert within[prior.scorer]["note"].endswith("the scorer itself does")


def test_mid_ranks_are_scipys_average_ranks_to_the_bit():
    from scipy.stats import rankdata

    from construct_eval.stats.count_metrics import mid_ranks

    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 1000):
        for values in (rng.integers(1, 11, n).astype(float), rng.random(n), np.round(rng.random(n), 2)):
            expected = rankdata(values)
            assert mid_ranks(values).dtype == expected.dtype
            np.testing.assert_array_equal(mid_ranks(values), expected)
