"""The project's own dataset: deterministic, nested, fast, and with distractors in the text."""

from __future__ import annotations

import re
import time

import pytest

from construct_eval.data.datasets import DatasetError, load_dataset, reload_from_source
from construct_eval.data.datasets.synthetic import KINDS, SCHEMAS, make_record
from construct_eval.data.labels import LabelRules, label_output
from construct_eval.fields import field_paths


def test_same_seed_same_documents_and_index_independent_of_n():
    a = load_dataset("synthetic", n=12, seed=7)
    b = load_dataset("synthetic", n=40, seed=7)
    assert [r.text for r in a.records] == [r.text for r in b.records[:12]]
    assert a.records[5].ground_truth == make_record(5, 7)[0].ground_truth
    assert load_dataset("synthetic", n=12, seed=8).records[0].text != a.records[0].text


def test_kinds_schemas_and_structure():
    ds = load_dataset("synthetic", n=60)
    assert {r.id.split("-")[1] for r in ds.records} == set(KINDS)
    rules = LabelRules.from_dict(ds.label_rules)
    optional_null = list_lengths = 0
    for rec in ds.records:
        schema = ds.schema_for(rec)
        assert schema in SCHEMAS.values()
        leaves = field_paths(schema, rec.ground_truth, granularity="leaf")
        assert len(leaves) >= 10
        assert any(isinstance(p[-2] if len(p) > 1 else None, int) for p in leaves)  # a list of objects
        optional_null += any(v is None for v in rec.ground_truth.values())
        list_lengths += max(len(v) for v in rec.ground_truth.values() if isinstance(v, list))
        assert not label_output(rec.id, rec.ground_truth, rec.ground_truth, schema=schema, rules=rules).wrong
    assert optional_null > 10 and list_lengths > 60  # optional sections are absent sometimes; lists vary


def test_text_holds_the_values_and_distractors():
    for i in range(30):
        rec, _ = make_record(i)
        truth, text = rec.ground_truth, rec.text
        if rec.id.startswith("synthetic-invoice"):
            assert truth["invoice_number"] in text and truth["seller"]["name"] in text
            assert "Your order: PO-" in text  # a look-alike number
            assert len(re.findall(r"\d{4}|\d{1,2} \w+ \d{4}", text)) >= 2  # more than one date
        elif rec.id.startswith("synthetic-insurance"):
            assert truth["claim_id"] in text and truth["claimant"]["name"] in text
        else:
            assert truth["tracking_number"] in text and "replaces notice SHP-" in text


def test_ten_thousand_documents_in_seconds():
    start = time.perf_counter()
    ds = load_dataset("synthetic", n=10_000)
    assert len(ds.records) == 10_000 and len({r.id for r in ds.records}) == 10_000
    assert time.perf_counter() - start < 30  # measured ~0.7 s; a generous bound for a loaded CI machine


def test_a_set_of_one_kind_keeps_each_documents_id_and_text():
    mixed = load_dataset("synthetic", n=30, seed=2)
    shipping = load_dataset("synthetic", n=10, seed=2, kinds=["shipping_notice"])
    assert [r.id for r in shipping.records] == [r.id for r in mixed.records if "shipping_notice" in r.id]
    same = {r.id: r for r in mixed.records}
    assert all(r.text == same[r.id].text and r.ground_truth == same[r.id].ground_truth for r in shipping.records)
    assert shipping.source == {
        "kind": "synthetic",
        "n": 10,
        "seed": 2,
        "kinds": ["shipping_notice"],
        "prompt": "package",
    }
    assert "kinds" not in mixed.source  # recorded runs' sources read as before
    assert [r.id for r in reload_from_source(shipping.source).records] == [r.id for r in shipping.records]


def test_an_unknown_kind_or_a_kind_choice_off_the_synthetic_set_is_refused():
    with pytest.raises(DatasetError, match="must be some of invoice, insurance_claim, shipping_notice; got receipt"):
        load_dataset("synthetic", n=3, kinds=["receipt"])
    with pytest.raises(DatasetError, match="financial_ner: document kinds are a choice of the synthetic set only"):
        load_dataset("financial_ner", kinds=["invoice"])
