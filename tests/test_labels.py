"""Error labels: the benchmark's comparison rules, checked by hand on real rows and on edge cases."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from construct_eval.data.datasets import load_dataset
from construct_eval.data.labels import (
    LabelRules,
    compare_values,
    judged_field_errors,
    label_output,
    label_summary,
    normalize_string,
)


def spec(name: str) -> dict:
    return json.loads((resources.files("construct_eval.data.datasets") / "specs" / f"{name}.json").read_text())


INSURANCE_RULES = LabelRules.from_dict(spec("insurance_claims")["label_rules"])


@pytest.mark.parametrize(
    "truth, pred, key, expected",
    [
        ("Jennifer Garcia", "jennifer  garcia.", "reported_by", (True, "match")),
        ("CLM-424063", "CLM 424063", "claim_id", (True, "match")),
        ("CLM-424063", "CLM-424064", "claim_id", (False, "different_string")),
        ("rear_end_collision", "Rear-End  Collision", "incident_type", (True, "match")),
        ("rear_end_collision", "rear end", "incident_type", (False, "different_enum")),
        ("2024-04-22", "2024-04-22", "report_date", (True, "match")),
        ("2024-04-22", "April 22, 2024", "report_date", (False, "different_date")),
        (5834, "5834", "estimated_damage_amount", (True, "match")),
        (5834, 5834.0, "estimated_damage_amount", (True, "match")),
        (5834, 5835, "estimated_damage_amount", (False, "different_number")),
        (5834, "5,834", "estimated_damage_amount", (False, "type_mismatch")),
        (None, None, "police_report_number", (True, "both_null")),
        (None, "PR-1", "police_report_number", (False, "invented_value")),
        ("PR-1", None, "police_report_number", (False, "missing_value")),
    ],
)
def test_insurance_scalar_rules(truth, pred, key, expected):
    assert compare_values(truth, pred, key, INSURANCE_RULES) == expected


def test_parsed_dates_and_tolerance_are_options_recorded_in_the_hash():
    rules = LabelRules.from_dict({"dates": "parsed", "numeric_tolerance": 0.5})
    assert compare_values("2024-04-22", "April 22, 2024", "report_date", rules)[0]
    assert compare_values(10, 10.4, "amount", rules)[0]
    assert not compare_values(10, 10.6, "amount", rules)[0]
    assert rules.hash != LabelRules().hash
    with pytest.raises(ValueError, match="unknown label rule"):
        LabelRules.from_dict({"strng": "exact"})


def test_string_lists_are_sets_and_empty_may_be_null():
    fin = LabelRules.from_dict(spec("financial_ner")["label_rules"])
    assert compare_values(["Rite Aid", "Albertsons"], ["albertsons", "rite aid"], "Company", fin) == (True, "match")
    assert compare_values(["A"], ["A", "B"], "Company", fin) == (False, "different_list")
    assert compare_values(None, [], "Company", fin) == (True, "both_null")
    assert compare_values(None, [], "Company", LabelRules()) == (False, "invented_value")


def test_normalize_string_drops_punctuation_and_case():
    assert normalize_string("  Ünïcode, Straße 5! ") == "ünïcodestrasse5"
    assert normalize_string("A-B c.D") == "abcd"


def test_hand_worked_insurance_claim(shared_data):
    """Row 0 of the real data, with five hand-made edits whose labels were worked out by hand."""
    ds = load_dataset("insurance_claims", data_dir=shared_data)
    rec = ds.records[0]
    truth = rec.ground_truth
    out = copy.deepcopy(truth)
    out["header"]["channel"] = "email"  # enum rule: still right
    out["header"]["incident_date"] = "2024-04-23"  # the wrong date
    out["policy_details"] = None  # a missing section: its 5 truth fields wrong
    out["insured_objects"][0]["year"] = "1972"  # number as text: float("1972") == 1972, right
    out["insured_objects"].insert(0, dict(out["insured_objects"][0], object_id="PROP-000001", year=2001))
    labels = label_output(rec.id, truth, out, schema=ds.schema, rules=LabelRules.from_dict(ds.label_rules))
    wrong = sorted((f.path, f.truth_path, f.reason) for f in labels.fields if f.wrong)
    assert wrong == sorted(
        [
            ("header.incident_date", "header.incident_date", "different_date"),
            *[("policy_details", f"policy_details.{k}", "missing_section") for k in truth["policy_details"]],
            *[(f"insured_objects[0].{k}", None, "extra_item") for k in truth["insured_objects"][0]],
        ]
    )
    # the inserted look-alike must not steal the pairing: the original (now index 1) pairs with the truth
    assert {f.path for f in labels.fields if f.truth_path == "insured_objects[0].year"} == {"insured_objects[1].year"}
    assert labels.wrong and labels.n_wrong == 1 + 5 + 6
    judged = judged_field_errors(
        labels, ["header", "policy_details", "insured_objects", "insured_objects[1]", "incident_description"]
    )
    assert judged == {
        "header": True,
        "policy_details": True,
        "insured_objects": True,
        "insured_objects[1]": False,
        "incident_description": False,
    }


def test_ground_truth_against_itself_is_right_on_every_real_row(shared_data):
    for name in ("insurance_claims", "pii", "financial_ner"):
        ds = load_dataset(name, data_dir=shared_data)
        rules = LabelRules.from_dict(ds.label_rules)
        for rec in ds.records[:300]:
            labels = label_output(rec.id, rec.ground_truth, rec.ground_truth, schema=ds.schema, rules=rules)
            assert not labels.wrong, (rec.id, [f for f in labels.fields if f.wrong])


def test_dropped_item_counts_for_its_list_not_for_the_other_items():
    truth = {"items": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]}
    out = {"items": [{"a": 2, "b": "y"}]}
    labels = label_output("d", truth, out)
    assert [(f.path, f.truth_path, f.reason, f.in_output) for f in labels.fields if f.wrong] == [
        ("items", "items[0].a", "missing_item", False),
        ("items", "items[0].b", "missing_item", False),
    ]
    assert judged_field_errors(labels, ["items", "items[0]", "items[0].a"]) == {
        "items": True,
        "items[0]": False,
        "items[0].a": False,
    }


def test_invented_section_and_unparsed_output():
    truth = {"policy": None, "name": "A"}
    labels = label_output("d", truth, {"policy": {"n": "1", "t": "x"}, "name": "A"})
    assert sorted((f.path, f.reason) for f in labels.fields if f.wrong) == [
        ("policy.n", "invented_section"),
        ("policy.t", "invented_section"),
    ]
    bad = label_output("d", {"a": 1, "b": {"c": 2}}, None, parse_failed=True)
    assert bad.wrong and bad.parse_failed and [f.truth_path for f in bad.fields] == ["a", "b.c"]
    assert all(f.reason == "unparsed_output" for f in bad.fields)


def test_summary_reports_rates_on_non_null_truth_too():
    truth = {"a": None, "b": None, "c": "x", "d": "y"}
    labels = [label_output("d", truth, {"a": None, "b": None, "c": "x", "d": None})]
    s = label_summary(labels)
    assert s["field_error_rate"] == 0.25 and s["nonnull_field_error_rate"] == 0.5
