"""Controlled errors: exact rates, realistic kinds, and labels that agree with labels.py."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from construct_eval.data.datasets import load_dataset
from construct_eval.data.inject import (
    ERROR_KINDS,
    InjectionConfig,
    agrees,
    apply_ops,
    expected_error_paths,
    inject_rows,
    plant_errors,
)
from construct_eval.data.labels import LabelRules, label_output


def _check_dataset(ds, config):
    rules = LabelRules.from_dict(ds.label_rules)
    rows = inject_rows(ds.records, ds.schema_for, rules, config)
    by_id = ds.by_id()
    kinds: Counter[str] = Counter()
    for row in rows:
        rec = by_id[row["id"]]
        out = apply_ops(rec.ground_truth, row["ops"])
        labels = label_output(rec.id, rec.ground_truth, out, schema=ds.schema_for(rec), rules=rules)
        assert labels.wrong == bool(row["ops"]), row
        assert agrees(labels, row["ops"]), (row, [f for f in labels.fields if f.wrong])
        kinds.update(op["kind"] for op in row["ops"])
    n_wrong = sum(bool(r["ops"]) for r in rows)
    assert n_wrong == round(config.doc_error_rate * len(rows))
    return rows, kinds


def test_synthetic_errors_agree_with_labels_and_cover_every_kind():
    ds = load_dataset("synthetic", n=300, seed=3)
    rows, kinds = _check_dataset(ds, InjectionConfig(doc_error_rate=0.4, seed=1))
    assert set(kinds) == set(ERROR_KINDS), kinds
    per_doc = [len(r["ops"]) for r in rows if r["ops"]]
    assert min(per_doc) >= 1 and max(per_doc) <= 3


@pytest.mark.shared_data
@pytest.mark.parametrize("name, sample", [("insurance_claims", None), ("pii", 50), ("financial_ner", 200)])
def test_real_datasets_errors_agree_with_labels(shared_data, name, sample):
    ds = load_dataset(name, data_dir=shared_data).select(sample=sample)
    _check_dataset(ds, InjectionConfig(doc_error_rate=0.2, seed=0))


def test_injection_is_reproducible_and_the_rate_is_exact():
    ds = load_dataset("synthetic", n=50)
    rules = LabelRules.from_dict(ds.label_rules)
    a = inject_rows(ds.records, ds.schema_for, rules, InjectionConfig(doc_error_rate=0.2, seed=5))
    b = inject_rows(ds.records, ds.schema_for, rules, InjectionConfig(doc_error_rate=0.2, seed=5))
    c = inject_rows(ds.records, ds.schema_for, rules, InjectionConfig(doc_error_rate=0.2, seed=6))
    assert a == b and a != c
    assert sum(bool(r["ops"]) for r in a) == 10


def test_other_value_takes_a_value_from_the_document():
    truth = {"incident_date": "2024-03-04", "report_date": "2024-03-09", "policy": "POL-123456789"}
    text = "On March 4, 2024 my car was hit. Reported 09.03.2024. Policy POL-123456789; theirs is POL-987654321."
    ops = plant_errors("d", truth, text, 1, kinds=["other_value"], rng=random.Random(0))
    (op,) = ops
    assert op["kind"] == "other_value"
    assert op["value"] in {"2024-03-09", "2024-03-04", "POL-987654321"} and op["value"] != truth[op["path"]]


def test_expected_paths_for_list_edits():
    truth = {"items": [{"a": 1}, {"a": 2}]}
    drop = [{"op": "drop", "path": "items[0]", "kind": "item_dropped"}]
    dup = [{"op": "duplicate", "path": "items[1]", "kind": "item_duplicated"}]
    assert apply_ops(truth, drop) == {"items": [{"a": 2}]}
    assert apply_ops(truth, dup) == {"items": [{"a": 1}, {"a": 2}, {"a": 2}]}
    assert expected_error_paths(drop) == ["items"] and expected_error_paths(dup) == ["items[2]"]
    assert truth == {"items": [{"a": 1}, {"a": 2}]}  # the ground truth is never modified


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="doc_error_rate"):
        InjectionConfig(doc_error_rate=1.5)
    with pytest.raises(ValueError, match="unknown error kind"):
        InjectionConfig(kinds=("typo",))
