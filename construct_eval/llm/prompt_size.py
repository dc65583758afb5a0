"""How many tokens a prompt takes, before it is sent: context limits and long documents.

A document that cannot fit in the endpoint's context with the requested completion is
refused by the server (HTTP 400) after the request has been queued, and on a slow CPU server
that can be minutes into a run. Where the context is known it is checked up front instead:

- the embedded server reports its context size and counts tokens with the model's own
  tokenizer (``/extras/tokenize/count`` of llama-cpp-python's server): exact for the text,
  plus a fixed allowance per message for the chat template;
- any other endpoint, given ``--max-context N``: the count is an estimate (one token per
  :data:`CHARS_PER_TOKEN` characters), so a document near the limit may still be refused by
  the server, which the run then records as not generated.

:class:`LongDocumentPolicy` says what to do with a document longer than
``--max-document-tokens``: ``skip`` it (recorded as not generated, with its token count) or
``truncate`` it to that many tokens (the truncation recorded on the output row). Never silent.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from construct_eval.llm.client import Endpoint, server_info

CHARS_PER_TOKEN = 4.0
"""Estimate for endpoints without a tokenizer to ask (English text, BPE vocabularies)."""

MESSAGE_OVERHEAD_TOKENS = 8
"""Tokens a chat template adds around each message (role markers, separators), allowed for."""

POLICIES = ("skip", "truncate")


class PromptSizeError(RuntimeError):
    """The token counter could not be reached."""


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def _server_root(base_url: str) -> str:
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def server_token_counter(endpoint: Endpoint, *, timeout_s: float = 600.0) -> Callable[[str], int]:
    """Exact token counts from llama-cpp-python's ``/extras/tokenize/count`` (it waits for the one slot)."""
    url = _server_root(endpoint.normalized_url) + "/extras/tokenize/count"

    def count(text: str) -> int:
        body = json.dumps({"input": text, "model": endpoint.model}).encode("utf-8")
        req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as resp:
                return int(json.loads(resp.read())["count"])
        except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
            raise PromptSizeError(f"cannot count tokens at {url}: {exc}") from None

    return count


@dataclass
class ContextBudget:
    """The context an endpoint has and how its prompts are counted."""

    n_ctx: int
    count: Callable[[str], int]
    exact: bool

    def prompt_tokens(self, messages: Sequence[Mapping[str, Any]]) -> int:
        return sum(self.count(str(m.get("content") or "")) + MESSAGE_OVERHEAD_TOKENS for m in messages)

    def shortfall(self, messages: Sequence[Mapping[str, Any]], max_tokens: int) -> tuple[int, str | None]:
        """(prompt tokens, why it cannot be sent or None)."""
        n = self.prompt_tokens(messages)
        if n + max_tokens > self.n_ctx:
            how = "" if self.exact else " (estimated)"
            return n, f"not_sent: prompt {n} tokens{how} + {max_tokens} for the reply > context {self.n_ctx}"
        return n, None


def context_budget(endpoint: Endpoint, max_context: int | None = None) -> ContextBudget | None:
    """The budget where the context is known: the embedded server's, or ``max_context``; else None."""
    info = server_info(endpoint.normalized_url) if endpoint.is_embedded else None
    if info and info.get("n_ctx"):
        return ContextBudget(int(max_context or info["n_ctx"]), server_token_counter(endpoint), exact=True)
    if max_context:
        return ContextBudget(int(max_context), estimate_tokens, exact=False)
    return None


@dataclass(frozen=True)
class LongDocumentPolicy:
    """What to do with a document of more than ``max_tokens`` tokens: ``skip`` or ``truncate``."""

    max_tokens: int
    action: str = "skip"

    def __post_init__(self) -> None:
        if self.action not in POLICIES:
            raise ValueError(f"long-document policy must be one of {POLICIES}, not {self.action!r}")
        if self.max_tokens < 1:
            raise ValueError("--max-document-tokens must be at least 1")

    def apply(self, text: str, count: Callable[[str], int]) -> tuple[str | None, dict[str, Any] | None]:
        """(text to send or None to skip, what was done, for the output row)."""
        n = count(text)
        if n <= self.max_tokens:
            return text, None
        if self.action == "skip":
            return None, {"policy": "skip", "document_tokens": n, "max_document_tokens": self.max_tokens}
        lo, hi = 0, len(text)  # the longest prefix within the budget (counts grow with length)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count(text[:mid]) <= self.max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo], {
            "policy": "truncate",
            "document_tokens": n,
            "max_document_tokens": self.max_tokens,
            "kept_characters": lo,
            "of_characters": len(text),
        }
