"""LLMClient against a real HTTP server on 127.0.0.1 with the unmodified openai client."""

from __future__ import annotations

import asyncio
import time

import pytest

from construct_eval.llm.client import (
    ChatRequest,
    Endpoint,
    EndpointError,
    LLMClient,
    ResponseCache,
    RetryPolicy,
    request_kwargs,
)
from construct_eval.serving.scripted_server import Drop, Malformed, Reply, ScriptedServer, Status

FAST_RETRY = RetryPolicy(max_retries=3, base_delay_s=0.01, max_delay_s=2.0)


def _req(text="hi"):
    return ChatRequest(messages=[{"role": "user", "content": text}])


def run(coro):
    return asyncio.run(coro)


async def _complete(server, req, **kw):
    kw.setdefault("cache", False)
    kw.setdefault("retry", FAST_RETRY)
    async with LLMClient(Endpoint(server.base_url, "m"), **kw) as client:
        return await client.complete(req), client.stats


def test_plain_reply_with_usage(scripted_server):
    result, stats = run(_complete(scripted_server, _req()))
    assert result.ok and "Rating: [[" in result.text
    assert result.prompt_tokens > 0 and result.completion_tokens > 0 and result.attempts == 1
    assert stats.calls == 1


def test_429_honours_retry_after():
    def script(req):
        return Status(429, retry_after=0.4) if req.attempt == 1 else Reply("ok Rating: [[5]]")

    with ScriptedServer(script) as server:
        t0 = time.perf_counter()
        result, stats = run(_complete(server, _req()))
        elapsed = time.perf_counter() - t0
    assert result.ok and result.attempts == 2 and result.retry_reasons == ["rate_limited"]
    assert elapsed >= 0.4  # waited as told, not the 10 ms base backoff
    assert stats.retries == 1


@pytest.mark.parametrize(
    "fault, reason",
    [(Status(500), "http_500"), (Status(503), "http_503"), (Malformed(), "invalid_response"), (Drop(), "connection")],
)
def test_transient_faults_are_retried(fault, reason):
    with ScriptedServer(lambda req: fault if req.attempt <= 2 else Reply("fine")) as server:
        result, _ = run(_complete(server, _req()))
    assert result.ok and result.text == "fine" and result.retry_reasons == [reason, reason]


def test_timeout_is_per_attempt_and_retried():
    with ScriptedServer(lambda req: Reply("slow", delay_s=2.0) if req.attempt == 1 else Reply("fast")) as server:
        t0 = time.perf_counter()
        result, _ = run(_complete(server, _req(), timeout_s=0.3))
        assert time.perf_counter() - t0 < 1.9
    assert result.ok and result.text == "fast" and result.retry_reasons == ["timeout"]


def test_persistent_failure_is_returned_not_raised():
    with ScriptedServer(lambda req: Status(500)) as server:
        result, stats = run(_complete(server, _req()))
    assert not result.ok and result.error == "http_500" and result.attempts == 4
    assert stats.failures == 1


def test_client_errors_are_not_retried():
    with ScriptedServer(lambda req: Status(400, message="context too long")) as server:
        result, _ = run(_complete(server, _req()))
        assert len(server.requests) == 1
    assert result.error == "http_400" and "context too long" in result.error_detail


@pytest.mark.parametrize("code", [401, 403, 404])
def test_refused_credentials_or_model_stop_the_run(code):
    with ScriptedServer(lambda req: Status(code)) as server, pytest.raises(EndpointError):
        run(_complete(server, _req()))


def test_bounded_concurrency():
    in_flight, peak = 0, 0

    def script(req):
        return Reply("x", delay_s=0.1)

    with ScriptedServer(script) as server:

        async def go():
            nonlocal in_flight, peak
            async with LLMClient(Endpoint(server.base_url, "m"), concurrency=3, cache=False) as client:
                orig = client._call_with_retries

                async def wrapped(kw, affinity=None):
                    nonlocal in_flight, peak
                    in_flight += 1
                    peak = max(peak, in_flight)
                    try:
                        return await orig(kw, affinity)
                    finally:
                        in_flight -= 1

                client._call_with_retries = wrapped
                await asyncio.gather(*(client.complete(_req(str(i))) for i in range(12)))

        run(go())
    assert peak == 3


def test_cache_hit_makes_no_call_and_keeps_the_reply(tmp_path, scripted_server):
    cache = ResponseCache(tmp_path / "c.sqlite")
    r1, _s1 = run(_complete(scripted_server, _req("same"), cache=cache))
    r2, s2 = run(_complete(scripted_server, _req("same"), cache=cache))
    assert len(scripted_server.requests) == 1
    assert r2.cached and r2.text == r1.text and r2.prompt_tokens == r1.prompt_tokens
    # the cost of a cached reply is that of the call that made it (scorer cost tables read it)
    assert r1.latency_s > 0 and r2.latency_s == r1.latency_s
    assert s2.cache_hits == 1 and s2.calls == 0


def test_cache_key_covers_endpoint_model_messages_and_parameters_but_not_the_key():
    req = _req()
    base = Endpoint("http://h/v1", "m", api_key="sk-secret-1")
    from construct_eval.llm.client import cache_key

    k = cache_key(base, request_kwargs(base, req))
    assert k == cache_key(Endpoint("http://h/v1/", "m", api_key="sk-other"), request_kwargs(base, req))
    assert k != cache_key(Endpoint("http://h2/v1", "m"), request_kwargs(base, req))
    assert k != cache_key(base, request_kwargs(Endpoint("http://h/v1", "m2"), req))
    assert k != cache_key(base, request_kwargs(base, ChatRequest(messages=req.messages, temperature=0.5)))


def test_backends_take_structured_output_their_own_way():
    schema = {"type": "object"}
    req = ChatRequest(messages=[], json_schema=schema)
    oa = request_kwargs(Endpoint("https://api.openai.com/v1", "gpt"), req)
    assert oa["response_format"]["type"] == "json_schema" and "max_completion_tokens" in oa
    ll = request_kwargs(Endpoint("http://127.0.0.1:8080/v1", "m", backend="llamacpp"), req)
    assert ll["response_format"] == {"type": "json_object", "schema": schema} and "max_tokens" in ll
    g = request_kwargs(
        Endpoint("http://127.0.0.1:8080/v1", "m", backend="llamacpp"), ChatRequest(messages=[], grammar="root ::= x")
    )
    assert g["extra_body"] == {"grammar": "root ::= x"}
    with pytest.raises(ValueError, match="grammar"):
        request_kwargs(Endpoint("https://api.openai.com/v1", "gpt"), ChatRequest(messages=[], grammar="root ::= x"))


def test_logprobs_are_returned_when_the_backend_gives_them(scripted_server):
    req = ChatRequest(messages=[{"role": "user", "content": "x"}], logprobs=True, top_logprobs=5)
    result, _ = run(_complete(scripted_server, req))
    assert result.logprobs and "".join(t.token for t in result.logprobs) == result.text
