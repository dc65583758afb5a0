"""Retries and what a failed attempt was: the backoff policy, ``Retry-After``, and the error
classes a call is recorded under (``rate_limited``, ``timeout``, ``connection``, ``http_NNN``,
``invalid_response``).

A transient failure is retried and, after the last retry, becomes an unscored row with its
reason; credentials the endpoint refuses (401/403) and a model it does not know (404) raise
:class:`~construct_eval.llm.endpoint.EndpointError`, since every further call would fail the
same way; other 4xx answers are not retried.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from construct_eval.llm.chat import InvalidResponse
from construct_eval.llm.endpoint import Endpoint, EndpointError

if TYPE_CHECKING:
    import openai


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


def retry_after(exc: openai.APIStatusError) -> float | None:
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


@dataclass(frozen=True)
class Failure:
    """What one failed attempt was: its code, a short detail, when to retry (if at all)."""

    code: str
    detail: str
    retry_after: float | None = None
    retryable: bool = True


def classified() -> tuple[type[BaseException], ...]:
    """The exceptions :func:`classify` reads; anything else is a bug and propagates. A function,
    so that the openai client is imported when a call is made, not by every command that
    imports the package (about 1.5 s on 2 cores: an analysis command makes no call)."""
    import openai

    return (
        openai.APIStatusError,
        openai.APIConnectionError,
        openai.APIResponseValidationError,
        InvalidResponse,
        ValueError,  # includes json.JSONDecodeError
        TypeError,
    )


def classify(exc: BaseException, endpoint: Endpoint, timeout_s: float) -> Failure:
    """The failure an attempt's exception stands for; raises ``EndpointError`` for a refusal."""
    import openai

    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        raise EndpointError(f"endpoint {endpoint.normalized_url} refused the credentials: {exc.status_code}") from None
    if isinstance(exc, openai.NotFoundError):
        raise EndpointError(
            f"endpoint {endpoint.normalized_url} has no model {endpoint.model!r} or no chat API ({exc.status_code})"
        ) from None
    if isinstance(exc, openai.RateLimitError):
        return Failure("rate_limited", str(exc.status_code), retry_after(exc))
    if isinstance(exc, openai.APITimeoutError):
        code = timeout_or_connection(exc)
        return Failure(code, f"no reply within {timeout_s:g}s" if code == "timeout" else short_error(_root(exc)))
    if isinstance(exc, openai.APIConnectionError):
        return Failure("connection", type(exc.__cause__ or exc).__name__)
    if isinstance(exc, openai.APIStatusError):
        code = f"http_{exc.status_code}"
        if exc.status_code < 500 and exc.status_code != 408:
            return Failure(code, short_error(exc), retryable=False)
        return Failure(code, short_error(exc), retry_after(exc))
    return Failure("invalid_response", short_error(exc))


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


def timeout_or_connection(exc: BaseException) -> str:
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


def short_error(exc: BaseException, limit: int = 300) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[: limit - 3] + "..."
