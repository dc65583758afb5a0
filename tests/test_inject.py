"""Controlled errors: exact rates, realistic kinds, and labels that agree with labels.py."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from construct_eval.data.datasets import load_dataset, reload_from_source
from construct_eval.data.inject import (
    ALL_KINDS,
    ERROR_KINDS,
    NEAR_MISS_DEFAULT_SHARE,
    InjectionConfig,
    agrees,
    apply_ops,
    expected_error_paths,
    inject_rows,
    plant_errors,
)
from construct_eval.data.labels import LabelRules, label_output
from construct_eval.data.near_miss import (
    NEAR_MISS_KINDS,
    digit_slips,
    format_changes,
    list_candidates,
    span_cuts,
    span_extensions,
)


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


# --------------------------------------------------------------------------- near misses and replay

RUNS = Path(__file__).resolve().parents[1] / "results" / "runs"
INJECTED = sorted(
    p.parent
    for p in RUNS.glob("*/run.json")
    if (json.loads(p.read_text()).get("generator") or {}).get("kind") == "controlled_errors"
)


def _reload(run_dir: Path, data_dir: Path | None):
    meta = json.loads((run_dir / "run.json").read_text())
    source = meta["dataset"]["source"]
    ds = reload_from_source(source, data_dir=data_dir)
    if source.get("sample") is not None or source.get("limit") is not None:
        ds = ds.select(limit=source.get("limit"), sample=source.get("sample"), seed=source.get("seed", 0))
    return ds, InjectionConfig.from_signature(meta["generator"]["config"]), LabelRules.from_dict(ds.label_rules)


@pytest.mark.parametrize("run_dir", INJECTED, ids=lambda p: p.name)
def test_recorded_runs_replay_their_planted_errors_byte_for_byte(run_dir, request):
    """Every recorded run replays from its recorded config byte for byte: a config without near
    misses draws exactly as before they existed, and a near-miss run as when it was made."""
    meta = json.loads((run_dir / "run.json").read_text())
    data_dir = request.getfixturevalue("shared_data") if meta["dataset"]["source"]["kind"] == "cleanlab" else None
    ds, config, rules = _reload(run_dir, data_dir)
    assert config.signature() == meta["generator"]["config"]
    assert (config.near_miss_share is None) == ("near_miss_share" not in meta["generator"]["config"])
    rows = inject_rows(ds.records, ds.schema_for, rules, config)
    written = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows)
    assert written == (run_dir / "outputs.jsonl").read_text()


def test_near_miss_kinds_need_near_misses_on_and_are_recorded():
    with pytest.raises(ValueError, match="need near misses on"):
        InjectionConfig(kinds=("span_cut",))
    with pytest.raises(ValueError, match="near_miss_share"):
        InjectionConfig(kinds=ALL_KINDS, near_miss_share=1.5)
    sig = InjectionConfig(kinds=ALL_KINDS, near_miss_share=0.5).signature()
    assert sig["near_miss_share"] == 0.5 and set(sig["near_miss_kinds"]) == set(NEAR_MISS_KINDS)
    assert "near_miss_share" not in InjectionConfig().signature()
    assert InjectionConfig.from_signature(sig) == InjectionConfig(kinds=ALL_KINDS, near_miss_share=0.5)


def _near_share(kinds: Counter[str]) -> float:
    return sum(n for k, n in kinds.items() if k in NEAR_MISS_KINDS) / sum(kinds.values())


def test_synthetic_near_misses_agree_with_labels_and_make_a_third_of_the_errors():
    ds = load_dataset("synthetic", n=150, seed=2)
    config = InjectionConfig(doc_error_rate=0.3, kinds=ALL_KINDS, near_miss_share=NEAR_MISS_DEFAULT_SHARE)
    _, kinds = _check_dataset(ds, config)
    assert _near_share(kinds) >= 1 / 3, kinds
    assert {"span_cut", "span_extended", "digit_slip", "format_change"} <= set(kinds), kinds


@pytest.mark.shared_data
@pytest.mark.parametrize("name, sample", [("financial_ner", 200), ("insurance_claims", None), ("pii", 50)])
def test_real_datasets_near_misses_agree_with_labels_and_make_a_third_of_the_errors(shared_data, name, sample):
    ds = load_dataset(name, data_dir=shared_data).select(sample=sample)
    config = InjectionConfig(doc_error_rate=0.3, kinds=ALL_KINDS, near_miss_share=NEAR_MISS_DEFAULT_SHARE)
    _, kinds = _check_dataset(ds, config)
    assert _near_share(kinds) >= 1 / 3, kinds
    if name == "financial_ner":  # every field a list of strings: the near misses must reach them
        assert set(NEAR_MISS_KINDS) <= set(kinds), kinds


@pytest.mark.parametrize(
    "fn, value, expected",
    [
        (lambda v: format_changes(v), "February 21", "21 February"),
        (lambda v: format_changes(v), "$117 billion", "$117 bn"),
        (lambda v: format_changes(v), "$ 17.9 billion", "USD 17.9 billion"),
        (lambda v: format_changes(v), "12.5 %", "12.5 percent"),
        (lambda v: span_cuts(v, "Daiichi Sankyo said"), "Daiichi Sankyo", "Daiichi"),
        (lambda v: span_extensions(v, "after US President Donald Trump"), "US", "US President"),
        (lambda v: span_extensions(v, "after US President Donald Trump"), "Donald Trump", "President Donald Trump"),
        (lambda v: digit_slips(v, random.Random(0)), "$ 17.9 billion", "$ 71.9 billion"),
    ],
)
def test_near_miss_candidates_are_the_errors_an_extractor_makes(fn, value, expected):
    assert expected in fn(value)


def test_near_misses_reach_string_lists_and_empty_fields_of_a_neighbouring_type():
    truth = {"Company": ["Daiichi Sankyo"], "Product": ["Enhertu"], "Money": None, "Quantity": ["$ 5 million"]}
    text = "Daiichi Sankyo sells Enhertu for $ 5 million ."
    rng = random.Random(0)
    assert ["Daiichi"] in list_candidates("span_cut", truth["Company"], text, "Company", truth, rng)
    assert ["Enhertu"] in list_candidates("neighbour_type", truth["Company"], text, "Company", truth, rng)
    assert list_candidates("neighbour_type", [], text, "Money", truth, rng) == [["$ 5 million"]]
