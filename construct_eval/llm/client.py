"""The one place that talks to an OpenAI-compatible endpoint: :class:`LLMClient` and :func:`make_client`.

:class:`LLMClient` wraps ``openai.AsyncOpenAI`` (any ``base_url``) with what a long judging
run needs: bounded concurrency, retries with exponential backoff on 429/5xx/timeouts that
honour ``Retry-After``, a per-request timeout, a content-addressed SQLite response cache,
token and latency accounting, and log-probs when the backend returns them.

A call never raises for a transient failure: after the last retry it returns a
:class:`ChatResult` whose ``error`` names what went wrong, so the judge can record an
unscored judgment with that reason. Credentials that the endpoint refuses (401/403) and a
model it does not know (404) raise :class:`EndpointError`, since every further call would
fail the same way.

Its parts live beside it, one job each: :mod:`.endpoint` (where calls go and the endpoint's
identity), :mod:`.chat` (the request per backend, the reply read back, the cache key),
:mod:`.cache` (the SQLite cache, its file modes, healing a damaged one), :mod:`.retries`
(backoff and error classes), :mod:`.sync` (running a coroutine from sync code). Their public
names are importable from here too, where the rest of the package imports them.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from construct_eval.llm.cache import (
    PRIVATE_DIR,
    PRIVATE_FILE,
    CacheError,
    CacheWarning,
    ResponseCache,
    cache_root,
    check_cache,
    default_cache_path,
    make_private,
    open_cache,
)
from construct_eval.llm.chat import (
    ChatRequest,
    ChatResult,
    cache_key,
    request_body,
    request_kwargs,
    result_from_body,
    result_from_completion,
)
from construct_eval.llm.endpoint import (
    BACKENDS,
    EMBEDDED_PREFIX,
    SERVER_INFO_PATH,
    Endpoint,
    EndpointError,
    identify,
    is_loopback_url,
    server_info,
)
from construct_eval.llm.fleet import Fleet
from construct_eval.llm.ratelimit import AdaptiveLimiter
from construct_eval.llm.retries import RetryPolicy, classified, classify
from construct_eval.llm.sync import run_sync

__all__ = [  # defined here, and the parts' names the package imports from here
    "BACKENDS", "DEFAULT_CONCURRENCY", "DEFAULT_TIMEOUT_S", "EMBEDDED_PREFIX", "LOCAL_TIMEOUT_S", "PRIVATE_DIR",
    "PRIVATE_FILE", "SERVER_INFO_PATH", "CacheError", "CacheWarning", "ChatRequest", "ChatResult", "ClientStats",
    "Endpoint", "EndpointError", "LLMClient", "ResponseCache", "RetryPolicy", "cache_key", "cache_root",
    "check_cache", "default_cache_path", "identify", "is_loopback_url", "make_client", "make_private",
    "open_cache", "request_body", "request_kwargs", "result_from_completion", "run_sync", "server_info",
]  # fmt: skip


def _http_response() -> type:
    """The response class of the HTTP library the installed openai client is built on."""
    try:
        import httpx2 as http
    except ImportError:  # pragma: no cover - older openai releases
        import httpx as http  # type: ignore[no-redef]
    return http.Response


@dataclass
class ClientStats:
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rate_limited: int = 0  # 429 answers (each retried, so also counted in retries)


class LLMClient:
    """Async chat client with bounded concurrency, retries, cache and accounting.

    ``concurrency`` bounds calls in flight from this client; ``timeout_s`` bounds each
    attempt. Use as an async context manager, or call :meth:`aclose`.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        concurrency: int = 4,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        cache: ResponseCache | str | os.PathLike[str] | bool | None = True,
        transport: str = "auto",
        adaptive: bool = False,
        max_concurrency: int = 256,
        replicas: Sequence[str] = (),
        affinity: bool = True,
    ):
        """``adaptive``: ``concurrency`` is only where the limit starts; it then follows the
        endpoint's answers and rate-limit headers up to ``max_concurrency``
        (:class:`~construct_eval.llm.ratelimit.AdaptiveLimiter`). ``replicas``: more base URLs
        serving the same model; calls are routed among them and the endpoint's own URL
        (:class:`~construct_eval.llm.fleet.Fleet`)."""
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.endpoint = endpoint
        self.retry = retry or RetryPolicy()
        self.timeout_s = timeout_s
        self.concurrency = concurrency
        self.stats = ClientStats()
        self.cache: ResponseCache | None = open_cache(cache)  # one that cannot be opened: warned, not used
        import openai  # here, not at import: an analysis command never makes a call

        key = endpoint.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.transport = _pick_transport(transport)
        self._openai = openai.AsyncOpenAI(
            base_url=endpoint.normalized_url,
            api_key=key,
            max_retries=0,  # retries are ours: recorded, and honouring Retry-After
            timeout=timeout_s,
            http_client=openai.DefaultAioHttpClient(timeout=timeout_s) if self.transport == "aiohttp" else None,
        )
        urls = [endpoint.normalized_url, *(u for u in replicas if u != endpoint.normalized_url)]
        self.fleet = Fleet(urls, affinity=affinity) if len(urls) > 1 else None
        self._replicas = [self._openai] + [
            openai.AsyncOpenAI(
                base_url=u,
                api_key=key,
                max_retries=0,
                timeout=timeout_s,
                http_client=openai.DefaultAioHttpClient(timeout=timeout_s) if self.transport == "aiohttp" else None,
            )
            for u in urls[1:]
        ]
        self._sem: asyncio.Semaphore | None = None
        self.limiter = AdaptiveLimiter(initial=concurrency, maximum=max_concurrency) if adaptive else None

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for api in getattr(self, "_replicas", [self._openai]):
            await api.close()

    def _semaphore(self) -> asyncio.Semaphore:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.concurrency)
        return self._sem

    async def complete(self, req: ChatRequest, *, use_cache: bool = True) -> ChatResult:
        """One chat completion, from the cache when possible, with retries otherwise."""
        kwargs = request_kwargs(self.endpoint, req)
        key = cache_key(self.endpoint, kwargs) if self.cache is not None else ""
        if use_cache and self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return hit
        if self.limiter is not None:
            async with self.limiter.slot():
                result = await self._call_with_retries(kwargs, req.affinity)
        else:
            async with self._semaphore():
                result = await self._call_with_retries(kwargs, req.affinity)
        self.stats.calls += 1
        self.stats.prompt_tokens += result.prompt_tokens
        self.stats.completion_tokens += result.completion_tokens
        if result.ok and self.cache is not None:
            self.cache.put(key, result)
        elif not result.ok:
            self.stats.failures += 1
        return result

    async def _call_with_retries(self, kwargs: dict[str, Any], affinity: str | None = None) -> ChatResult:
        body = {k: v for k, v in kwargs.items() if k != "extra_body"} | dict(
            kwargs.get("extra_body") or {}
        )  # = request_body
        # serialised once for all attempts: the openai client would deep-copy and re-encode it
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        reasons: list[str] = []
        started = time.perf_counter()
        tried: list[int] = []  # replicas that failed this call: its retries go to the others
        for attempt in range(self.retry.max_retries + 1):
            retry_after: float | None = None
            replica = self.fleet.pick(affinity, tried) if self.fleet is not None else 0
            if self.fleet is not None:
                self.fleet.started(replica)
            answered = False
            try:
                # The openai client's own HTTP path (errors, headers, timeouts) with the body
                # passed through as is: its per-call request transform and response model
                # construction cost ~2 ms of CPU per call, which caps throughput.
                api = self._replicas[replica]
                response = await api.post("/chat/completions", cast_to=_http_response(), content=content)
                answered = True
                if self.limiter is not None:
                    await self.limiter.answered(response.headers)
                result = result_from_body(response.json(), time.perf_counter() - started, attempt + 1, reasons)
                if self.fleet is not None:
                    result.replica = self.fleet.urls[replica]
                return result
            except classified() as exc:
                failure = classify(exc, self.endpoint, self.timeout_s)  # raises EndpointError for a refusal
                code, detail, retry_after = failure.code, failure.detail, failure.retry_after
                if code == "rate_limited":
                    self.stats.rate_limited += 1
                    if self.limiter is not None:
                        await self.limiter.refused(
                            retry_after, getattr(getattr(exc, "response", None), "headers", None)
                        )
                if not failure.retryable:
                    return self._failure(code, detail, attempt + 1, reasons, started)
            finally:
                if self.fleet is not None:
                    self.fleet.finished(replica, answered)
            if self.fleet is not None and not answered:
                tried.append(replica)
            reasons.append(code)
            if attempt < self.retry.max_retries:
                self.stats.retries += 1
                await asyncio.sleep(self.retry.delay(attempt, retry_after))
        return self._failure(code, detail, self.retry.max_retries + 1, reasons, started)

    def _failure(self, code: str, detail: str, attempts: int, reasons: list[str], started: float) -> ChatResult:
        return ChatResult(
            error=code,
            error_detail=detail,
            attempts=attempts,
            latency_s=time.perf_counter() - started,
            retry_reasons=reasons,
        )


DEFAULT_TIMEOUT_S = 120.0
LOCAL_TIMEOUT_S = 1800.0
"""llama.cpp on a CPU: a slow reply is no failure, and a retry would queue a second generation."""
DEFAULT_CONCURRENCY = 4


def make_client(
    endpoint: Endpoint,
    *,
    concurrency: int | None = None,
    timeout_s: float | None = None,
    max_retries: int = 4,
    cache: ResponseCache | str | os.PathLike[str] | bool | None = True,
    identify_server: bool = True,
    adaptive: bool = False,
    replicas: Sequence[str] = (),
    affinity: bool = True,
) -> LLMClient:
    """The one way construct-eval sets up a client (CLI, demo, Python API, notebooks).

    The endpoint is first asked who it is (:func:`identify`: the embedded server reports a
    fingerprint that survives a restart on another port, and its one slot). Defaults: a
    timeout of 1800 s per attempt on llama.cpp and 120 s elsewhere; as many calls in flight
    as the server has slots where it says (one on the embedded server, so a document's calls
    run back to back and share its prompt prefix), else 4. ``adaptive``: the concurrency is
    where it starts, then it follows the endpoint's answers and rate-limit headers. ``replicas``:
    more base URLs serving the same model (a fleet; concurrency is then per replica).
    """
    if identify_server:
        endpoint = identify(endpoint)
    if timeout_s is None:
        timeout_s = LOCAL_TIMEOUT_S if endpoint.resolved_backend == "llamacpp" else DEFAULT_TIMEOUT_S
    if concurrency is None:
        concurrency = endpoint.slots or DEFAULT_CONCURRENCY
    concurrency *= 1 + len([u for u in replicas if u != endpoint.base_url])
    return LLMClient(
        endpoint,
        concurrency=concurrency,
        timeout_s=timeout_s,
        retry=RetryPolicy(max_retries=max_retries),
        cache=cache,
        adaptive=adaptive,
        replicas=[Endpoint(u, endpoint.model).normalized_url for u in replicas],
        affinity=affinity,
    )


def _pick_transport(choice: str) -> str:
    """``aiohttp`` under the openai client where installed (openai's own option: about a third
    less CPU per call than its default HTTPX2 stack, which bounds throughput at high
    concurrency), else ``httpx``."""
    if choice not in ("auto", "aiohttp", "httpx"):
        raise ValueError(f"transport must be auto, aiohttp or httpx, not {choice!r}")
    if choice == "httpx":
        return choice
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        if choice == "aiohttp":
            raise ValueError("transport 'aiohttp' needs: pip install 'openai[aiohttp]'") from None
        return "httpx"
    return "aiohttp"
