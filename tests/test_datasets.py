"""Loading the paper's benchmark from the shared local copy."""

from __future__ import annotations

import pytest

from construct_eval.data.datasets.cleanlab import DatasetError, load, parse_ground_truth


def test_insurance_claims_load_with_nested_truth(shared_data):
    rows = load("insurance_claims", shared_data)
    assert len(rows) == 30
    first = rows[0]
    assert first.id == "insurance_claims-00000"
    assert first.ground_truth["header"]["claim_id"] == "CLM-424063"
    assert first.ground_truth["insured_objects"][0]["year"] == 1972
    assert len(first.source_hash) == 64


@pytest.mark.parametrize("name, n", [("pii", 100), ("financial_ner", 2117)])
def test_other_datasets_parse_every_row(shared_data, name, n):
    rows = load(name, shared_data)
    assert len(rows) == n and all(isinstance(r.ground_truth, dict) for r in rows)


def test_ground_truth_json_or_literal_else_named_error():
    assert parse_ground_truth('{"a": null}', "x") == {"a": None}
    assert parse_ground_truth("{'a': None}", "x") == {"a": None}
    with pytest.raises(DatasetError, match=r"file\.csv row 7"):
        parse_ground_truth("{'a': oops}", "file.csv row 7")


def test_unknown_dataset_and_missing_folder(tmp_path):
    with pytest.raises(DatasetError, match="unknown dataset"):
        load("nope", tmp_path)
    with pytest.raises(DatasetError, match="not found"):
        load("pii", tmp_path)


def test_bad_row_is_named(tmp_path):
    (tmp_path / "pii").mkdir()
    (tmp_path / "pii" / "pii_extraction.csv").write_text('text,ground_truth\nhello,"{""a"": 1}"\nworld,not-a-literal\n')
    with pytest.raises(DatasetError, match="row 1"):
        load("pii", tmp_path)
