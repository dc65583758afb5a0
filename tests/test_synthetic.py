"""The project's own dataset: deterministic, nested, fast, and with distractors in the text."""

from __future__ import annotations

import re
import time

import pytest

from construct_eval.data.datasets import DatasetError, load_dataset, reload_from_source
from construct_eval.data.datasets.synthetic import CONTACT_PHRASINGS, KINDS, SCHEMAS, contact_phrasing, make_record
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
    with pytest.raises(
        DatasetError, match="must be some of invoice, insurance_claim, shipping_notice, shipping_notice_v2; got receipt"
    ):
        load_dataset("synthetic", n=3, kinds=["receipt"])
    with pytest.raises(DatasetError, match="financial_ner: document kinds are a choice of the synthetic set only"):
        load_dataset("financial_ner", kinds=["invoice"])


def test_the_second_shipping_notice_is_its_own_stream_and_leaves_the_first_as_it_was():
    first = load_dataset("synthetic", n=20, seed=2, kinds=["shipping_notice"])
    second = load_dataset("synthetic", n=20, seed=2, kinds=["shipping_notice_v2"])
    assert [r.id for r in second.records] == [f"synthetic-shipping_notice_v2-{i:05d}" for i in range(20)]
    assert {r.text for r in first.records}.isdisjoint(r.text for r in second.records)
    assert all(second.schema_for(r) == SCHEMAS["shipping_notice"] for r in second.records)  # a revision, same schema
    assert first.records[3].text == make_record(int(first.records[3].id[-5:]), 2)[0].text  # the cycle is untouched
    assert [r.text for r in reload_from_source(second.source).records] == [r.text for r in second.records]
    rules = LabelRules.from_dict(second.label_rules)
    assert not any(
        label_output(r.id, r.ground_truth, r.ground_truth, schema=second.schema_for(r), rules=rules).wrong
        for r in second.records
    )
    with pytest.raises(
        DatasetError, match="shipping_notice_v2 is a later version with its own documents: choose it alone"
    ):
        load_dataset("synthetic", n=3, kinds=["shipping_notice", "shipping_notice_v2"])
    with pytest.raises(ValueError, match="synthetic document 1 is a insurance_claim, not a invoice"):
        make_record(1, kind="invoice")


def test_the_second_shipping_notice_names_its_contact_in_varied_ways_beside_a_sender_who_is_not_it():
    """What the version is for (issue 35): the first version named the contact only in the
    salutation, so one omission decided every label; the second writes each phrasing, signs with
    another person, reschedules some deliveries and weighs some light packages in grams."""
    records = load_dataset("synthetic", n=300, seed=2, kinds=["shipping_notice_v2"]).records
    seen = dict.fromkeys(CONTACT_PHRASINGS, 0)
    for rec in records:
        contact = rec.ground_truth["destination"]["contact"]
        sender = rec.text.splitlines()[-1].split(",")[0]
        assert sender != contact and sender in rec.text
        if contact is None:
            assert not any(p in rec.text for p in ("Attn:", "Delivery contact:", "hand the goods to", "will sign for"))
            assert "Dear customer," in rec.text or "Hello," in rec.text or "Dear receiving team," in rec.text
            assert contact_phrasing(rec.text, contact) is None
            continue
        seen[contact_phrasing(rec.text, contact)] += 1  # exactly one phrasing names it, or this raises
    assert min(seen.values()) >= 20, seen  # 300 notices, about 180 with a contact: about 36 a phrasing
    assert sum("first planned for" in r.text for r in records) > 60
    assert sum(re.search(r"PKG-\d{5}: \d+ g$", r.text, re.M) is not None for r in records) > 20


def test_a_notice_naming_its_contact_in_no_known_way_is_refused_with_the_contact():
    with pytest.raises(ValueError, match="names its contact 'Ann Lee' in 0 known ways"):
        contact_phrasing("Dear customer,\nyour goods left ...", "Ann Lee")
