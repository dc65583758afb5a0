"""Field paths: text form round-trips, enumeration over nested schemas, outputs and truths."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from construct_eval.fields import (
    MISSING,
    FieldPathError,
    field_names,
    field_paths,
    format_path,
    get_at,
    parse_path,
    schema_at,
    without_others,
)

CLAIM_SCHEMA = {
    "type": "object",
    "properties": {
        "header": {
            "type": "object",
            "properties": {"claim_id": {"type": "string"}, "channel": {"type": "string"}},
        },
        "policy_details": {
            "anyOf": [
                {"$ref": "#/$defs/policy"},
                {"type": "null"},
            ]
        },
        "insured_objects": {"type": "array", "items": {"$ref": "#/$defs/object"}},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "$defs": {
        "policy": {"type": "object", "properties": {"policy_number": {"type": "string"}}},
        "object": {"type": "object", "properties": {"object_id": {"type": "string"}, "year": {"type": "integer"}}},
    },
}

OUTPUT = {
    "header": {"claim_id": "CLM-1", "channel": "Email"},
    "policy_details": {"policy_number": "POL-9"},
    "insured_objects": [{"object_id": "A", "year": 1972}, {"object_id": "B", "year": None}],
    "tags": ["x", "y"],
}


def test_top_level_paths_follow_schema_order():
    assert field_names(CLAIM_SCHEMA, OUTPUT, granularity="top") == [
        "header",
        "policy_details",
        "insured_objects",
        "tags",
    ]


def test_leaf_paths_descend_objects_refs_and_lists_of_objects():
    assert field_names(CLAIM_SCHEMA, OUTPUT, granularity="leaf") == [
        "header.claim_id",
        "header.channel",
        "policy_details.policy_number",
        "insured_objects[0].object_id",
        "insured_objects[0].year",
        "insured_objects[1].object_id",
        "insured_objects[1].year",
        "tags",
    ]


def test_item_granularity_stops_at_list_items():
    assert field_names(CLAIM_SCHEMA, OUTPUT, granularity="item") == [
        "header.claim_id",
        "header.channel",
        "policy_details.policy_number",
        "insured_objects[0]",
        "insured_objects[1]",
        "tags",
    ]


def test_union_of_output_and_truth_keeps_schema_order_and_adds_extras():
    truth = {"header": {"claim_id": "CLM-1"}, "policy_details": None, "insured_objects": [], "extra": 1}
    out = {"header": {"claim_id": "CLM-2", "surprise": True}, "policy_details": None}
    names = field_names(CLAIM_SCHEMA, out, truth, granularity="leaf")
    assert names == [
        "header.claim_id",
        "header.channel",
        "header.surprise",
        "policy_details",
        "insured_objects",
        "tags",
        "extra",
    ]


def test_null_section_in_one_document_expands_from_the_other():
    names = field_names(
        CLAIM_SCHEMA, {"policy_details": None}, {"policy_details": {"policy_number": "P"}}, granularity="leaf"
    )
    assert "policy_details.policy_number" in names


def test_no_schema_uses_the_documents():
    assert field_names(None, {"b": 1, "a": {"c": [1, 2]}}, granularity="leaf") == ["b", "a.c"]


def test_get_at_distinguishes_missing_from_null():
    assert get_at(OUTPUT, ("insured_objects", 1, "year")) is None
    assert get_at(OUTPUT, ("insured_objects", 5, "year")) is MISSING
    assert get_at(OUTPUT, ("header", "nope")) is MISSING
    assert get_at(OUTPUT, ("tags", "x")) is MISSING


def test_schema_at_resolves_refs_through_lists():
    assert schema_at(CLAIM_SCHEMA, ("insured_objects", 3, "year")) == {"type": "integer"}
    assert schema_at(CLAIM_SCHEMA, ("policy_details", "policy_number")) == {"type": "string"}


def test_without_others_masks_everything_but_the_target():
    masked = without_others(OUTPUT, ("insured_objects", 1, "year"))
    assert masked["header"] == "<ignored>"
    assert masked["insured_objects"][0] == "<ignored>"
    assert masked["insured_objects"][1]["year"] is None


@pytest.mark.parametrize(
    "path, text",
    [
        (("a", "b"), "a.b"),
        (("insured_objects", 0, "year"), "insured_objects[0].year"),
        (("key.with.dots",), '["key.with.dots"]'),
        (("a", 'quote"d', 3), 'a["quote\\"d"][3]'),
        (("ünïcode", "sp ace"), '["ünïcode"]["sp ace"]'),
        (("",), '[""]'),
        ((0, 1), "[0][1]"),
    ],
)
def test_known_text_forms(path, text):
    assert format_path(path) == text
    assert parse_path(text) == path


@pytest.mark.parametrize("bad", ["a..b", ".a", "a.", "a[x]", "a[1", '["x"', "a b", "[-1]", "a.[0]"])
def test_malformed_paths_are_rejected(bad):
    with pytest.raises(FieldPathError):
        parse_path(bad)


keys = st.text(min_size=0, max_size=12)
parts = st.lists(st.one_of(keys, st.integers(min_value=0, max_value=10**6)), min_size=1, max_size=6)


@settings(max_examples=500, deadline=None)
@given(parts)
def test_any_path_round_trips(path):
    path = tuple(path)
    assert parse_path(format_path(path)) == path


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))
json_docs = st.recursive(
    json_scalars,
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(keys, children, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, json_docs, min_size=1, max_size=5))
def test_every_enumerated_path_exists_and_round_trips(doc):
    for gran in ("top", "item", "leaf"):
        for path in field_paths(None, doc, granularity=gran):
            assert get_at(doc, path) is not MISSING
            assert parse_path(format_path(path)) == path


def test_one_definition_of_an_empty_field():
    """A missing key, null, "", [] and {} are empty; 0, False, " " and [None] are values."""
    from construct_eval.fields import MISSING, is_empty

    assert all(is_empty(v) for v in (MISSING, None, "", [], {}))
    assert not any(is_empty(v) for v in (0, False, " ", [None], {"a": None}, 0.0))
