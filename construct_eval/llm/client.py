"""The one place that talks to an OpenAI-compatible endpoint.

:class:`LLMClient` wraps ``openai.AsyncOpenAI`` (any ``base_url``) with what a long judging
run needs: bounded concurrency, retries with exponential backoff on 429/5xx/timeouts that
honour ``Retry-After``, a per-request timeout, a content-addressed SQLite response cache,
token and latency accounting, and log-probs when the backend returns them.

A call never raises for a transient failure: after the last retry it returns a
:class:`ChatResult` whose ``error`` names what went wrong, so the judge can record an
unscored judgment with that reason. Credentials that the endpoint refuses (401/403) and a
model it does not know (404) raise :class:`EndpointError`, since every further call would
fail the same way.

Backends differ in how they take structured output; that is handled here only:

* ``openai``: ``response_format={"type": "json_schema", ...}``, ``max_completion_tokens``,
  no grammars;
* ``llamacpp``: ``response_format={"type": "json_object", "schema": ...}`` (it rejects
  ``json_schema`` with HTTP 500) and an optional GBNF ``grammar`` in the request body;
* ``generic`` (vLLM, Ollama, others): ``json_schema`` and ``max_tokens``; grammars are
  refused with a clear error.

The API key is sent to the endpoint and nowhere else: not into the cache key, the cache,
run files or logs.

An endpoint's *identity* (what resume keys and cache keys are made of) is what changes its
replies, not where it listens: the base URL for a hosted or self-hosted API (or an explicit
``endpoint_id`` for users whose URL changes: a tunnel, a new vLLM pod), and, for the embedded
llama.cpp server, the fingerprint it reports at ``/construct-eval/server`` (model sha256,
context size, llama-cpp-python version, this package's server patches), so a server
restarted on another port keeps every recorded judgment and cached reply valid.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sqlite3
import stat
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import openai

from construct_eval.digest import sha256_hex
from construct_eval.llm.fleet import Fleet
from construct_eval.llm.logprobs import TokenLogprob
from construct_eval.llm.ratelimit import AdaptiveLimiter

try:  # the HTTP library the installed openai client is built on
    import httpx2 as _http
except ImportError:  # pragma: no cover - older openai releases
    import httpx as _http  # type: ignore[no-redef]

BACKENDS = ("openai", "llamacpp", "generic")
T = TypeVar("T")


class EndpointError(RuntimeError):
    """The endpoint refuses every call (bad key, unknown model, wrong URL)."""


SERVER_INFO_PATH = "/construct-eval/server"
"""Where the embedded server reports its identity and slots (relative to its ``/v1`` base URL)."""

EMBEDDED_PREFIX = "embedded-llamacpp:"
"""Identities reported by the embedded server start with this."""


@dataclass(frozen=True)
class Endpoint:
    """Where to send calls. ``api_key`` is used for requests only and never persisted.

    ``endpoint_id`` replaces the base URL in resume and cache keys: set it by hand for an
    endpoint whose URL changes, or let :func:`identify` read it from the embedded server.
    ``slots`` is how many requests the server runs at once, where it says (the embedded
    server has one; calls beyond that only queue).
    """

    base_url: str
    model: str
    backend: str = "auto"
    api_key: str | None = field(default=None, repr=False, compare=False)
    endpoint_id: str | None = None
    slots: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.backend not in (*BACKENDS, "auto"):
            raise ValueError(f"unknown backend {self.backend!r}; choose from {BACKENDS} or 'auto'")

    @property
    def resolved_backend(self) -> str:
        if self.backend != "auto":
            return self.backend
        return "openai" if "api.openai.com" in self.base_url else "generic"

    @property
    def normalized_url(self) -> str:
        return self.base_url.rstrip("/")

    @property
    def identity(self) -> str:
        """What resume and cache keys know of the endpoint: ``endpoint_id``, else the base URL."""
        return self.endpoint_id or self.normalized_url

    @property
    def is_embedded(self) -> bool:
        return (self.endpoint_id or "").startswith(EMBEDDED_PREFIX)

    def describe(self) -> dict[str, Any]:
        """What run files record about the endpoint (never the key)."""
        out: dict[str, Any] = {"base_url": self.normalized_url, "model": self.model, "backend": self.resolved_backend}
        if self.endpoint_id:
            out["endpoint_id"] = self.endpoint_id
        if self.slots:
            out["slots"] = self.slots
        return out


def is_loopback_url(url: str) -> bool:
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def server_info(base_url: str, *, timeout_s: float = 3.0) -> dict[str, Any] | None:
    """What an embedded construct-eval server says about itself, or ``None`` for any other server."""
    url = base_url.rstrip("/") + SERVER_INFO_PATH
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            info = json.loads(resp.read().decode("utf-8"))
    except (urllib.error.URLError, OSError, ValueError):
        return None
    if not isinstance(info, dict) or not str(info.get("identity", "")).startswith(EMBEDDED_PREFIX):
        return None
    return info


def identify(endpoint: Endpoint) -> Endpoint:
    """The endpoint with the identity and slot count its server reports (embedded server only).

    An explicit ``endpoint_id`` is kept as given; hosted APIs (backend ``openai``) are not asked.
    """
    if endpoint.endpoint_id or endpoint.resolved_backend == "openai":
        return endpoint
    info = server_info(endpoint.normalized_url)
    if info is None:
        return endpoint
    slots = info.get("slots")
    return replace(endpoint, endpoint_id=str(info["identity"]), slots=int(slots) if slots else None)


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion; everything here except nothing-secret goes into the cache key."""

    messages: list[dict[str, str]]
    temperature: float = 0.0
    max_tokens: int = 512
    json_schema: Mapping[str, Any] | None = None
    schema_name: str = "reply"
    grammar: str | None = None
    logprobs: bool = False
    top_logprobs: int = 0
    seed: int | None = None
    affinity: str | None = None  # calls with one affinity go to one replica of a fleet; not in any key


@dataclass
class ChatResult:
    """A reply, or an ``error`` code with ``error_detail`` saying why there is none."""

    text: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 0
    cached: bool = False
    logprobs: list[TokenLogprob] | None = None
    error: str | None = None
    error_detail: str | None = None
    retry_reasons: list[str] = field(default_factory=list)
    model: str | None = None  # as the reply names it (a hosted alias can drift)
    system_fingerprint: str | None = None
    replica: str | None = None  # which replica of a fleet answered

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_cache(self) -> str:
        keep = {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": self.latency_s,
            "logprobs": [asdict(t) for t in self.logprobs] if self.logprobs is not None else None,
        }
        return json.dumps(keep, ensure_ascii=False)

    @classmethod
    def from_cache(cls, payload: str) -> ChatResult:
        """The stored reply, marked ``cached``; ``latency_s`` is that of the call that made it.

        A score's cost is what producing it took, not reading it back, so a rerun served from
        the cache reports the same seconds (0.0 for entries cached before latency was kept).
        """
        data = json.loads(payload)
        lps = data.get("logprobs")
        return cls(
            text=data["text"],
            finish_reason=data["finish_reason"],
            prompt_tokens=data["prompt_tokens"],
            completion_tokens=data["completion_tokens"],
            latency_s=float(data.get("latency_s") or 0.0),
            logprobs=[TokenLogprob(**t) for t in lps] if lps is not None else None,
            cached=True,
        )


# --------------------------------------------------------------------------- backend


def request_kwargs(endpoint: Endpoint, req: ChatRequest) -> dict[str, Any]:
    """Arguments for ``chat.completions.create`` on this endpoint's backend."""
    backend = endpoint.resolved_backend
    kw: dict[str, Any] = {"model": endpoint.model, "messages": req.messages, "temperature": req.temperature}
    extra: dict[str, Any] = {}
    if backend == "openai":
        kw["max_completion_tokens"] = req.max_tokens
    else:
        kw["max_tokens"] = req.max_tokens
    if req.json_schema is not None:
        if backend == "llamacpp":
            kw["response_format"] = {"type": "json_object", "schema": dict(req.json_schema)}
        else:
            kw["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": req.schema_name, "schema": dict(req.json_schema)},
            }
    if req.grammar is not None:
        if backend != "llamacpp":
            raise ValueError(f"backend {backend!r} takes no GBNF grammar; use constrained='json' or none")
        if req.json_schema is not None:
            raise ValueError("a request takes a grammar or a JSON schema, not both")
        extra["grammar"] = req.grammar
    if req.logprobs:
        kw["logprobs"] = True
        if req.top_logprobs:
            kw["top_logprobs"] = req.top_logprobs
    if req.seed is not None:
        kw["seed"] = req.seed
    if extra:
        kw["extra_body"] = extra
    return kw


def cache_key(endpoint: Endpoint, kwargs: Mapping[str, Any]) -> str:
    """Content address of a call: endpoint identity, model, messages and every parameter.

    The identity is the base URL unless the endpoint has an ``endpoint_id`` (the embedded
    server's fingerprint, or one given by the user), so keys of hosted endpoints are unchanged.
    """
    payload = json.dumps({"url": endpoint.identity, "kw": kwargs}, sort_keys=True, ensure_ascii=False)
    return sha256_hex(payload)


# --------------------------------------------------------------------------- cache


PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_SQLITE_SIDE_FILES = ("", "-wal", "-shm", "-journal")


def make_private(path: Path) -> None:
    """``path`` (a cache file) and SQLite's side files readable by their owner only; its folder too."""
    with contextlib.suppress(OSError):
        os.chmod(path.parent, PRIVATE_DIR)
    for suffix in _SQLITE_SIDE_FILES:
        side = Path(str(path) + suffix)
        if side.exists() and stat.S_IMODE(side.stat().st_mode) != PRIVATE_FILE:
            os.chmod(side, PRIVATE_FILE)


class ResponseCache:
    """SQLite store of successful replies by content address; safe across threads/processes.

    It holds every prompt's reply keyed by a hash of the prompt, and prompts hold documents
    (PII, contracts): the folder is created 0700 and its files 0600 (SQLite's ``-wal`` and
    ``-shm`` too), and an existing cache with looser modes is tightened on open.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
        self._lock = threading.Lock()
        # SQLite gives its -wal and -shm files the mode of the database file: create that 0600 first
        os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, PRIVATE_FILE))
        make_private(self.path)
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, created REAL, payload TEXT)")
        make_private(self.path)

    def get(self, key: str) -> ChatResult | None:
        with self._lock:
            row = self._db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()
        return ChatResult.from_cache(row[0]) if row else None

    def put(self, key: str, result: ChatResult) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, created, payload) VALUES (?, ?, ?)",
                (key, time.time(), result.to_cache()),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def clear(self) -> int:
        """Delete every entry; returns how many there were."""
        with self._lock:
            n = int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            self._db.execute("DELETE FROM responses")
            self._db.execute("VACUUM")
        return n


def cache_root() -> Path:
    """construct-eval's own cache folder (responses, assembled models): ``$CONSTRUCT_EVAL_CACHE``,
    else ``$XDG_CACHE_HOME/construct-eval``, else ``~/.cache/construct-eval``."""
    root = os.environ.get("CONSTRUCT_EVAL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "construct-eval"
    )
    return Path(root)


def default_cache_path() -> Path:
    return cache_root() / "responses.sqlite"


# --------------------------------------------------------------------------- client


@dataclass
class ClientStats:
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rate_limited: int = 0  # 429 answers (each retried, so also counted in retries)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    jitter: float = 0.25

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay_s)
        base = self.base_delay_s * (2**attempt)
        return min(base * (1 + random.uniform(-self.jitter, self.jitter)), self.max_delay_s)


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = getattr(exc.response, "headers", None) or {}
    raw = headers.get("retry-after-ms")
    if raw is not None:
        try:
            return float(raw) / 1000.0
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return float(raw)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def _token_logprobs(choice: Mapping[str, Any]) -> list[TokenLogprob] | None:
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        return None
    out = []
    for item in content:
        top = {t["token"]: float(t["logprob"]) for t in (item.get("top_logprobs") or [])}
        out.append(TokenLogprob(token=item["token"], logprob=float(item["logprob"]), top=top))
    return out


def _result_from_body(data: Any, latency_s: float, attempts: int, reasons: list[str]) -> ChatResult:
    """Read the parts of a chat completion body we use; raise ``_InvalidResponse`` otherwise."""
    try:
        choice = data["choices"][0]
        message = choice["message"]
        usage = data.get("usage") or {}
        return ChatResult(
            text=message.get("content"),
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=latency_s,
            attempts=attempts,
            logprobs=_token_logprobs(choice),
            retry_reasons=reasons,
            model=data.get("model"),
            system_fingerprint=data.get("system_fingerprint"),
        )
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise _InvalidResponse(f"unexpected completion body: {type(exc).__name__}: {exc}") from None


def request_body(endpoint: Endpoint, req: ChatRequest) -> dict[str, Any]:
    """The JSON body a live call posts to ``/chat/completions`` (what a batch file line holds)."""
    kwargs = request_kwargs(endpoint, req)
    return {k: v for k, v in kwargs.items() if k != "extra_body"} | dict(kwargs.get("extra_body") or {})


def result_from_completion(body: Any) -> ChatResult:
    """A completion body received another way (a batch results file) read as a live reply is."""
    try:
        return _result_from_body(body, 0.0, 1, [])
    except _InvalidResponse as exc:
        return ChatResult(error="invalid_response", error_detail=str(exc), attempts=1)


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
        if cache is True:
            cache = ResponseCache(default_cache_path())
        elif cache is False or cache is None:
            cache = None
        elif not isinstance(cache, ResponseCache):
            cache = ResponseCache(cache)
        self.cache: ResponseCache | None = cache
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
                response = await api.post("/chat/completions", cast_to=_http.Response, content=content)
                answered = True
                if self.limiter is not None:
                    await self.limiter.answered(response.headers)
                result = _result_from_body(response.json(), time.perf_counter() - started, attempt + 1, reasons)
                if self.fleet is not None:
                    result.replica = self.fleet.urls[replica]
                return result
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise EndpointError(
                    f"endpoint {self.endpoint.normalized_url} refused the credentials: {exc.status_code}"
                ) from None
            except openai.NotFoundError as exc:
                raise EndpointError(
                    f"endpoint {self.endpoint.normalized_url} has no model {self.endpoint.model!r} or no chat API ({exc.status_code})"
                ) from None
            except openai.RateLimitError as exc:
                code, detail, retry_after = "rate_limited", str(exc.status_code), _retry_after(exc)
                self.stats.rate_limited += 1
                if self.limiter is not None:
                    await self.limiter.refused(retry_after, getattr(exc.response, "headers", None))
            except openai.APITimeoutError as exc:
                code = _timeout_or_connection(exc)
                detail = f"no reply within {self.timeout_s:g}s" if code == "timeout" else _short(_root(exc))
            except openai.APIConnectionError as exc:
                code, detail = "connection", type(exc.__cause__ or exc).__name__
            except openai.APIStatusError as exc:
                if exc.status_code < 500 and exc.status_code != 408:
                    return self._failure(f"http_{exc.status_code}", _short(exc), attempt + 1, reasons, started)
                code, detail, retry_after = f"http_{exc.status_code}", _short(exc), _retry_after(exc)
            except (
                _InvalidResponse,
                openai.APIResponseValidationError,
                ValueError,  # includes json.JSONDecodeError
                TypeError,
            ) as exc:
                code, detail = "invalid_response", _short(exc)
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


def _cause_chain(exc: BaseException, limit: int = 16) -> list[BaseException]:
    """The exceptions behind ``exc`` (causes, else contexts), nearest first, bounded."""
    chain: list[BaseException] = []
    node = exc.__cause__ or exc.__context__
    while node is not None and len(chain) < limit:
        chain.append(node)
        node = node.__cause__ or node.__context__
    return chain


def _root(exc: BaseException) -> BaseException:
    chain = _cause_chain(exc)
    return chain[-1] if chain else exc


def _timeout_or_connection(exc: BaseException) -> str:
    """openai's aiohttp bridge reports a dropped connection as a timeout; tell them apart."""
    chain = _cause_chain(exc)
    if any(isinstance(e, TimeoutError) for e in chain):
        return "timeout"
    if any(
        isinstance(e, (ConnectionError, OSError))
        or type(e).__name__.startswith(("ServerDisconnected", "ClientConnection", "ClientOSError"))
        for e in chain
    ):
        return "connection"
    return "timeout"


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


class _InvalidResponse(Exception):
    pass


def _short(exc: BaseException, limit: int = 300) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------- sync facade


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, also inside a running event loop.

    Jupyter runs an event loop in the kernel's thread, where ``asyncio.run`` is refused;
    there the coroutine runs on a fresh loop in a worker thread instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=worker, name="construct-eval-sync", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
