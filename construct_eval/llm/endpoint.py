"""Which endpoint a call goes to, and who it is.

An endpoint's *identity* (what resume keys and cache keys are made of) is what changes its
replies, not where it listens: the base URL for a hosted or self-hosted API (or an explicit
``endpoint_id`` for users whose URL changes: a tunnel, a new vLLM pod), and, for the embedded
llama.cpp server, the fingerprint it reports at ``/construct-eval/server`` (model sha256,
context size, llama-cpp-python version, this package's server patches), so a server
restarted on another port keeps every recorded judgment and cached reply valid.

The API key is used for requests only: never in a key, the cache, run files or logs.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field, replace
from typing import Any

BACKENDS = ("openai", "llamacpp", "generic")


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
