"""Token log-prob baseline: exact value spans in JSON text and tokens mapped to nested paths."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from construct_eval.fields import field_paths, format_path, get_at
from construct_eval.scorers.token_confidence import SpanError, field_confidences, score_rows, value_spans

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(doc=st.dictionaries(st.text(max_size=8), json_values, max_size=5), indent=st.sampled_from([None, 1, 2]))
def test_every_span_decodes_to_the_value_at_its_path(doc, indent):
    text = json.dumps(doc, indent=indent, ensure_ascii=bool(indent))
    spans = value_spans(text)
    for path, (start, end) in spans.items():
        assert json.loads(text[start:end]) == get_at(doc, path)


def test_bad_json_raises():
    with pytest.raises(SpanError):
        value_spans('{"a": 1')
    with pytest.raises(SpanError):
        value_spans('{"a": 1} trailing')


def test_tokens_map_to_nested_fields():
    raw = '{"a": {"b": "xy"}, "items": [{"c": 10}]}'
    tokens = [
        '{"',
        "a",
        '":',
        ' {"',
        "b",
        '":',
        ' "',
        "x",
        "y",
        '"},',
        ' "',
        "items",
        '":',
        ' [{"',
        "c",
        '":',
        " 1",
        "0",
        "}]}",
    ]
    assert "".join(tokens) == raw
    lps = {"x": -2.0, "y": -0.5, " 1": -1.0, "0": -3.0}
    pairs = [[t, lps.get(t, -0.01)] for t in tokens]
    conf, why = field_confidences(raw, pairs, field_paths(None, json.loads(raw), granularity="leaf"))
    assert why is None
    # "a.b" covers ' "' (the opening quote shares the token with a space), x, y and '"},'
    assert conf["a.b"].n_tokens == 4 and conf["a.b"].min_logprob == -2.0
    assert conf["items[0].c"].n_tokens == 2
    assert conf["items[0].c"].score == pytest.approx(math.exp(-2.0))


def test_score_rows_report_outputs_that_cannot_be_mapped():
    good = {
        "id": "a",
        "output": {"x": 1},
        "raw": '{"x": 1}',
        "token_logprobs": [['{"x": ', -0.1], ["1", -0.2], ["}", 0.0]],
    }
    mismatch = {"id": "b", "output": {"x": 1}, "raw": '{"x": 1}', "token_logprobs": [["{", -0.1]]}
    none = {"id": "c", "output": {"x": 1}, "raw": '{"x": 1}'}
    rows = score_rows([good, mismatch, none], granularities=("leaf",))
    docs = {r["id"]: r for r in rows if r["field"] == "__doc__"}
    assert docs["a"]["score"] == pytest.approx(math.exp(-0.2))
    assert docs["b"]["score"] is None and "join" in docs["b"]["reason"]
    assert docs["c"]["score"] is None and docs["c"]["reason"] == "no token log-probs"
    assert [format_path(("x",))] == [r["field"] for r in rows if r["id"] == "a" and r["field"] != "__doc__"]
