"""Adaptive concurrency under a provider's rate limit: the limiter's rules, and a real client
against a scripted server that enforces a token bucket and sends OpenAI-style headers."""

from __future__ import annotations

import asyncio

import pytest

from construct_eval.llm.client import ChatRequest, Endpoint, LLMClient, RetryPolicy
from construct_eval.llm.ratelimit import AdaptiveLimiter, parse_duration
from construct_eval.serving.scripted_server import ScriptedServer, TokenBucket


@pytest.mark.parametrize(
    ("text", "seconds"), [("1s", 1.0), ("6m0s", 360.0), ("250ms", 0.25), ("1.5", 1.5), ("2m30.5s", 150.5)]
)
def test_reset_durations_in_the_providers_forms(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


def test_unreadable_durations_are_none():
    assert parse_duration(None) is None and parse_duration("soon") is None and parse_duration("5x") is None


def test_increase_per_answer_halve_per_429_and_pace_from_headers():
    async def go():
        lim = AdaptiveLimiter(initial=4)
        for _ in range(4):
            await lim.answered({})
        assert lim.limit == pytest.approx(4.92, abs=0.01)  # 4 + 1/4 + 1/4.25 + ...: about one more per round trip
        await lim.refused(None)
        assert lim.limit == pytest.approx(2.46, abs=0.01)  # no headers seen: halved
        await lim.answered(
            {"x-ratelimit-limit-requests": "20", "x-ratelimit-remaining-requests": "10",
             "x-ratelimit-reset-requests": "50ms"}
        )  # fmt: skip
        assert lim.rate == pytest.approx(200.0) and lim.window == 20  # (20 - 10) / 0.05 s
        before = lim.limit
        await lim.refused(0.2)
        assert lim.limit == pytest.approx(before * lim.decrease_with_headers)  # headers steer: eased, not halved
        assert lim.paused_until > 0 and lim.tokens == 0.0

    asyncio.run(go())


def _run(server: ScriptedServer, calls: int, concurrency: int, adaptive: bool) -> tuple[int, int]:
    async def go() -> tuple[int, int]:
        retry = RetryPolicy(max_retries=10, base_delay_s=0.02, max_delay_s=1.0)
        async with LLMClient(
            Endpoint(server.base_url, "m"), concurrency=concurrency, cache=False, retry=retry, adaptive=adaptive
        ) as client:
            reqs = [ChatRequest([{"role": "user", "content": f"{adaptive} {concurrency} {i}"}]) for i in range(calls)]
            results = await asyncio.gather(*(client.complete(r) for r in reqs))
            return sum(r.ok for r in results), client.stats.rate_limited

    return asyncio.run(go())


def test_adaptive_client_answers_everything_with_far_fewer_429s_than_a_fixed_one():
    with ScriptedServer(latency_s=0.02, rate_limit=TokenBucket(100, burst=10)) as server:
        _, refused_fixed = _run(server, 300, 64, adaptive=False)
    with ScriptedServer(latency_s=0.02, rate_limit=TokenBucket(100, burst=10)) as server:
        ok_adaptive, refused_adaptive = _run(server, 300, 4, adaptive=True)
    assert ok_adaptive == 300
    assert refused_fixed > 100 and refused_adaptive * 5 < refused_fixed, (refused_adaptive, refused_fixed)
