"""The fast log-prob ranking of the embedded server gives exactly what llama-cpp-python's sort gives."""

from __future__ import annotations

import builtins
import math

import numpy as np
import pytest

from construct_eval.serving.server import RANKED_KEPT, VocabularyScores, _sorted, _zip, top_ranked


def reference(scores, k):
    return list(builtins.sorted(builtins.zip(scores, range(len(scores)), strict=True), reverse=True))[:k]


@pytest.mark.parametrize("seed", range(20))
def test_top_ranked_equals_the_python_sort_with_ties_and_minus_infinity(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1024, 5000))
    # a coarse grid makes many ties, also across the k-th place
    scores = (rng.integers(-40, 0, size=n) / 4).astype(np.float32)
    scores[rng.choice(n, size=50, replace=False)] = -np.inf
    for k in (1, 5, 20, RANKED_KEPT):
        got = top_ranked(scores, k)
        want = reference(scores, k)
        assert [i for _, i in got] == [i for _, i in want]
        assert [float(v) for v, _ in got] == [float(v) for v, _ in want]
        assert all(type(g[0]) is type(w[0]) for g, w in builtins.zip(got, want, strict=True))


def test_a_list_of_floats_is_ranked_the_same_as_by_python():
    rng = np.random.default_rng(7)
    scores = [math.log(p) for p in rng.dirichlet(np.ones(3000))]
    assert top_ranked(scores, 10) == reference(scores, 10)


def test_only_a_vocabulary_zip_is_diverted_and_it_still_iterates_like_zip():
    scores = np.linspace(-5, 0, 2000, dtype=np.float32)
    z = _zip(scores, range(len(scores)))
    assert isinstance(z, VocabularyScores)
    assert list(z)[:3] == list(builtins.zip(scores[:3], range(3), strict=True))
    # llama_cpp's other zips: token lists, three iterables, short sequences
    assert not isinstance(_zip([1, 2, 3], [1, 2, 4]), VocabularyScores)
    assert not isinstance(_zip(scores, range(len(scores)), scores), VocabularyScores)
    assert not isinstance(_zip(list(range(10)), range(10)), VocabularyScores)
    assert not isinstance(_zip(scores, range(5)), VocabularyScores)
    assert _sorted([3, 1, 2]) == [1, 2, 3]
    assert _sorted([3, 1, 2], reverse=True, key=lambda x: -x) == [1, 2, 3]
    assert _sorted(_zip(scores, range(len(scores))), reverse=True) == reference(scores, RANKED_KEPT)


SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_json_schema_response_format_becomes_llama_cpp_json_object():
    from construct_eval.serving.server import json_schema_as_json_object

    body = {"model": "m", "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA}}}
    assert json_schema_as_json_object(body) == {
        "model": "m",
        "response_format": {"type": "json_object", "schema": SCHEMA},
    }
    assert body["response_format"]["type"] == "json_schema"  # the caller's body is not changed
    no_schema = {"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}}
    assert json_schema_as_json_object(no_schema) == {"response_format": {"type": "json_object"}}
    for unchanged in ({"model": "m"}, {"response_format": {"type": "json_object", "schema": SCHEMA}}):
        assert json_schema_as_json_object(unchanged) is unchanged


def _call_middleware(path, body_chunks, headers=((b"content-type", b"application/json"),)):
    """Run OpenAIJsonSchema around a recording ASGI app; what the app saw."""
    import asyncio

    from construct_eval.serving.server import OpenAIJsonSchema

    seen = {}

    async def app(scope, receive, send):
        message = await receive()
        seen["scope"], seen["body"] = scope, message["body"]
        seen["after"] = await receive()

    incoming = [
        {"type": "http.request", "body": c, "more_body": i < len(body_chunks) - 1} for i, c in enumerate(body_chunks)
    ]
    incoming.append({"type": "http.disconnect"})

    async def receive():
        return incoming.pop(0)

    async def send(message):
        pass

    scope = {"type": "http", "method": "POST", "path": path, "headers": list(headers)}
    asyncio.run(OpenAIJsonSchema(app)(scope, receive, send))
    return seen


def test_middleware_rewrites_a_chunked_chat_request_and_fixes_its_length():
    import json

    body = json.dumps({"response_format": {"type": "json_schema", "json_schema": {"schema": SCHEMA}}}).encode()
    seen = _call_middleware(
        "/v1/chat/completions", [body[:10], body[10:]], [(b"content-length", str(len(body)).encode())]
    )
    assert json.loads(seen["body"]) == {"response_format": {"type": "json_object", "schema": SCHEMA}}
    assert dict(seen["scope"]["headers"])[b"content-length"] == str(len(seen["body"])).encode()
    assert seen["after"] == {"type": "http.disconnect"}  # later receives reach the server's own


def test_middleware_passes_other_requests_and_bad_json_through_untouched():
    seen = _call_middleware("/v1/chat/completions", [b"{not json"])
    assert seen["body"] == b"{not json"
    body = b'{"prompt": "x", "response_format": {"type": "json_schema"}}'
    assert _call_middleware("/v1/completions", [body])["body"] == body
