"""One chat call on the wire: the request as each backend takes it, and the reply read back.

Backends differ in how they take structured output; that is handled here only:

* ``openai``: ``response_format={"type": "json_schema", ...}``, ``max_completion_tokens``,
  no grammars;
* ``llamacpp``: ``response_format={"type": "json_object", "schema": ...}`` (it rejects
  ``json_schema`` with HTTP 500) and an optional GBNF ``grammar`` in the request body;
* ``generic`` (vLLM, Ollama, others): ``json_schema`` and ``max_tokens``; grammars are
  refused with a clear error.

A call's content address (:func:`cache_key`: endpoint identity and every parameter, never the
key) names it in the response cache and in batch files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from construct_eval.digest import sha256_hex
from construct_eval.llm.endpoint import Endpoint
from construct_eval.llm.logprobs import TokenLogprob


class InvalidResponse(Exception):
    """A completion body without the parts a reply needs."""


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion; everything here except nothing-secret goes into the cache key."""

    messages: list[dict[str, str]]
    temperature: float | None = 0.0  # None: not sent (the endpoint's default), as some recipes ask
    max_tokens: int = 512
    json_schema: Mapping[str, Any] | None = None
    schema_name: str = "reply"
    schema_strict: bool = False  # ``"strict": true`` beside a ``json_schema`` (where the backend takes one)
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


def request_kwargs(endpoint: Endpoint, req: ChatRequest) -> dict[str, Any]:
    """Arguments for ``chat.completions.create`` on this endpoint's backend."""
    backend = endpoint.resolved_backend
    kw: dict[str, Any] = {"model": endpoint.model, "messages": req.messages}
    if req.temperature is not None:
        kw["temperature"] = req.temperature
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
                "json_schema": {"name": req.schema_name, "schema": dict(req.json_schema)}
                | ({"strict": True} if req.schema_strict else {}),
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


def read_token_logprobs(choice: Mapping[str, Any]) -> list[TokenLogprob] | None:
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        return None
    out = []
    for item in content:
        top = {t["token"]: float(t["logprob"]) for t in (item.get("top_logprobs") or [])}
        out.append(TokenLogprob(token=item["token"], logprob=float(item["logprob"]), top=top))
    return out


def result_from_body(data: Any, latency_s: float, attempts: int, reasons: list[str]) -> ChatResult:
    """Read the parts of a chat completion body we use; raise ``InvalidResponse`` otherwise."""
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
            logprobs=read_token_logprobs(choice),
            retry_reasons=reasons,
            model=data.get("model"),
            system_fingerprint=data.get("system_fingerprint"),
        )
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise InvalidResponse(f"unexpected completion body: {type(exc).__name__}: {exc}") from None


def request_body(endpoint: Endpoint, req: ChatRequest) -> dict[str, Any]:
    """The JSON body a live call posts to ``/chat/completions`` (what a batch file line holds)."""
    kwargs = request_kwargs(endpoint, req)
    return {k: v for k, v in kwargs.items() if k != "extra_body"} | dict(kwargs.get("extra_body") or {})


def result_from_completion(body: Any) -> ChatResult:
    """A completion body received another way (a batch results file) read as a live reply is."""
    try:
        return result_from_body(body, 0.0, 1, [])
    except InvalidResponse as exc:
        return ChatResult(error="invalid_response", error_detail=str(exc), attempts=1)
