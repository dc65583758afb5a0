"""The judge's field scores within one kind of field (reports.within_kind): the two tables the paper
figures and the findings read, checked against scikit-learn and against counts made here."""

from __future__ import annotations

import math

import numpy as np
from sklearn.metrics import roc_auc_score

from construct_eval.reports.collect import ScoredItems
from construct_eval.reports.output_kinds import EMPTY, VALUE, attach_kinds
from construct_eval.reports.within_kind import values_by_output_kind_table, within_field_table


def _run(n: int = 60) -> list[ScoredItems]:
    """``n`` documents with an empty ``Company`` and a filled ``Person`` and ``Amount``. The judge
    rates a wrong Person lower than a right one, half of the time; it rates every Amount 7 (one
    value: constant); the token log-probs are no judge's and get no within-field rows."""
    rng = np.random.default_rng(3)
    judge = ScoredItems(scorer="judge-field", level="field", granularity="top")
    logprob = ScoredItems(scorer="token_logprob@top", level="field", granularity="top")
    outputs = {}
    for i in range(n):
        doc = f"d{i:03d}"
        outputs[doc] = {"Company": [], "Person": ["Ann"], "Amount": 12}
        person_wrong, amount_wrong, company_wrong = i % 3 == 0, i % 4 == 0, i % 10 == 0
        person = float(rng.integers(1, 6) if person_wrong and i % 2 else rng.integers(4, 11))
        for it in (judge, logprob):
            it.doc_ids += [doc, doc, doc]
            it.fields += ["Company", "Person", "Amount"]
            it.wrong += [int(company_wrong), int(person_wrong), int(amount_wrong)]
        judge.scores += [1.0 if company_wrong else 2.0, person, 7.0]
        logprob.scores += [float(rng.random()) for _ in range(3)]
    items = [judge, logprob]
    attach_kinds(items, outputs)
    return items


def test_within_field_rows_are_each_fields_auroc_among_its_filled_values():
    items = _run()
    rows = within_field_table(items, n_boot=200)
    assert {r["scorer"] for r in rows} == {"judge-field"}  # the log-probs are not the judge's
    assert [r["field"] for r in rows] == ["Amount", "Person"]  # the empty Company is not a filled value
    judge = items[0]
    person = [i for i, f in enumerate(judge.fields) if f == "Person"]
    y = [judge.wrong[i] for i in person]
    row = next(r for r in rows if r["field"] == "Person")
    assert (row["n"], row["wrong"], row["constant"]) == (len(person), sum(y), False)
    # wrong items are flagged by low scores: the AUROC of the negated score
    assert math.isclose(row["auroc"], roc_auc_score(y, [-judge.scores[i] for i in person]), abs_tol=1e-12)
    assert row["auroc_low"] < row["auroc"] < row["auroc_high"] and row["powered"]
    amount = next(r for r in rows if r["field"] == "Amount")
    assert amount["constant"] and amount["auroc"] == 0.5


def test_values_by_output_kind_count_each_rating_value_within_each_kind():
    items = _run()
    rows = values_by_output_kind_table(items)
    assert {r["scorer"] for r in rows} == {"judge-field"}  # a written rating only
    judge = items[0]
    for kind in (VALUE, EMPTY):
        mine = [r for r in rows if r["fields"] == kind]
        keep = [i for i, f in enumerate(judge.fields) if (f == "Company") == (kind == EMPTY)]  # Company is left empty
        assert sum(r["n"] for r in mine) == len(keep)
        for r in mine:
            at = [i for i in keep if judge.scores[i] == r["value"]]
            wrong = sum(judge.wrong[i] for i in at)
            assert (r["n"], r["wrong"]) == (len(at), wrong)
            assert r["error_rate"] == round(wrong / len(at), 4)
            assert r["naive"] == round(min(1.0, max(0.0, (10 - r["value"]) / 9)), 4)
    # within the empty fields a 1 is always wrong and a 2 always right
    empty = {r["value"]: r["error_rate"] for r in rows if r["fields"] == EMPTY}
    assert empty == {1.0: 1.0, 2.0: 0.0}
