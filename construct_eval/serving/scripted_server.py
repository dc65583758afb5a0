"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests, fault injection and benchmarks.

It speaks real HTTP/1.1 (keep-alive, Content-Length) so the unmodified ``openai`` client
talks to it exactly as to a real endpoint. What it answers is decided per request by a
*script*: a function from the parsed request to an action (a reply, an HTTP status with
optional ``Retry-After``, a malformed body, a delay, a dropped connection).

The default script is a deterministic fake judge: its rating depends only on the
messages, so reruns agree, and it honours ``response_format`` (joint per-field JSON),
``logprobs`` and a yes/no grammar (a P(correct) verdict). :class:`FaultScript` injects faults at a chosen rate.

This module is the HTTP side (the server, its protocol, a request limit); the actions, the fake
judge and :class:`FaultScript` are in :mod:`.scripted_replies`, the files and batches endpoints
in :mod:`.scripted_batch`, and every name is importable from here as before.

Run standalone (used by the benchmarks to keep the server off the client's GIL)::

    python -m construct_eval.serving.scripted_server --port 8999 --latency 0.1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from construct_eval.serving.scripted_batch import BatchAPI
from construct_eval.serving.scripted_replies import (
    Action,
    Drop,
    FaultScript,
    Malformed,
    Reply,
    Request,
    Status,
    completion_body,
    default_judge,
    fake_rating,
    messages_hash,
    reply_properties,
)


@dataclass
class TokenBucket:
    """A provider's request limit: ``rate`` requests per second, bursts of up to ``burst``.

    A request that finds no token is answered 429 with ``Retry-After`` (the time until the next
    token); with ``headers`` every answer also carries ``x-ratelimit-limit-requests``,
    ``x-ratelimit-remaining-requests`` and ``x-ratelimit-reset-requests``, as OpenAI-style APIs do.
    """

    rate: float
    burst: float = 1.0
    headers: bool = True
    tokens: float = field(default=-1.0)
    stamp: float = 0.0
    refused: int = 0
    served: int = 0

    def take(self, now: float) -> tuple[bool, dict[str, str]]:
        if self.tokens < 0:
            self.tokens, self.stamp = self.burst, now
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        ok = self.tokens >= 1.0
        if ok:
            self.tokens -= 1.0
            self.served += 1
        else:
            self.refused += 1
        wait = max(0.0, (1.0 - self.tokens) / self.rate)  # until the next request is allowed
        full = max(0.0, (self.burst - self.tokens) / self.rate)  # until the bucket is full again
        extra = {"Retry-After": f"{wait:.3f}"} if not ok else {}
        if self.headers:  # OpenAI's meaning: reset = time until the limit is back to its initial state
            extra |= {
                "x-ratelimit-limit-requests": f"{self.burst:g}",
                "x-ratelimit-remaining-requests": str(int(self.tokens)),
                "x-ratelimit-reset-requests": f"{full * 1000:.0f}ms",
            }
        return ok, extra


class ScriptedServer:
    """Serve a script over HTTP on 127.0.0.1 from a background thread."""

    def __init__(
        self,
        script: Callable[[Request], Action] = default_judge,
        *,
        latency_s: float = 0.0,
        port: int = 0,
        info: dict[str, Any] | None = None,
        rate_limit: TokenBucket | None = None,
        batch: BatchAPI | None = None,
        prefix_extra_s: float = 0.0,
    ):
        """``info``: what to answer at ``/construct-eval/server``, as the embedded server does
        (an identity and slots), to stand in for it; ``None`` answers 404 like any other server."""
        self.script = script
        self.info = info
        self.rate_limit = rate_limit
        self.prefix_extra_s = prefix_extra_s  # a prefix this server has not seen costs this much more
        self._seen_prefixes: set[str] = set()
        self.batch = batch if batch is not None else BatchAPI(script)
        self.latency_s = latency_s
        self.port = port
        self.requests: list[Request] = []
        self._attempts: Counter[str] = Counter()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._ready = threading.Event()
        self._connections: set[_HTTPProtocol] = set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> ScriptedServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="scripted-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("scripted server did not start")

    def stop(self) -> None:
        if self._loop and self._server:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread:
            self._thread.join(5)

    async def _shutdown(self) -> None:
        """Close the listener and every open connection."""
        assert self._server is not None
        self._server.close()
        for conn in list(self._connections):
            if conn.transport is not None:
                conn.transport.close()

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(self._loop.create_server(self._protocol, "127.0.0.1", self.port))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    async def serve_forever(self) -> None:
        """Serve on the current loop (standalone mode)."""
        self._server = await asyncio.get_running_loop().create_server(self._protocol, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        async with self._server:
            await self._server.serve_forever()

    def _protocol(self) -> _HTTPProtocol:
        conn = _HTTPProtocol(self)
        self._connections.add(conn)
        return conn

    def respond_to(
        self, method: str, path: str, raw: bytes
    ) -> tuple[float, Action | tuple[int, bytes, dict[str, str]]]:
        """Decide the answer to one request: (delay, action or ready HTTP response)."""
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return 0.0, (
                200,
                json.dumps({"object": "list", "data": [{"id": "scripted", "object": "model"}]}).encode(),
                {},
            )
        if method == "GET" and path.rstrip("/").endswith("/construct-eval/server") and self.info is not None:
            return 0.0, (200, json.dumps(self.info).encode(), {})
        if "/files" in path or "/batches" in path:
            routed = self.batch.route(method, path, raw)
            if routed is not None:
                return 0.0, routed
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            return 0.0, (404, json.dumps({"error": {"message": f"no route {method} {path}"}}).encode(), {})
        body = json.loads(raw or b"{}")
        limit_headers: dict[str, str] = {}
        if self.rate_limit is not None:
            ok, limit_headers = self.rate_limit.take(time.monotonic())
            if not ok:
                payload = json.dumps({"error": {"message": "rate limit reached", "type": "requests"}}).encode()
                return 0.0, (429, payload, limit_headers)
        digest = messages_hash(body.get("messages", []))
        self._attempts[digest] += 1
        req = Request(path, body, self._attempts[digest], digest)
        self.requests.append(req)
        action = self.script(req)
        delay = self.latency_s + getattr(action, "delay_s", 0.0)
        if self.prefix_extra_s:  # a prompt cache: the first 500 characters, once per server
            prefix = json.dumps(body.get("messages", []))[:500]
            if prefix not in self._seen_prefixes:
                self._seen_prefixes.add(prefix)
                delay += self.prefix_extra_s
        if isinstance(action, Reply):
            return delay, (200, json.dumps(completion_body(body, action)).encode(), limit_headers)
        if isinstance(action, Status):
            extra = {"Retry-After": f"{action.retry_after:g}"} if action.retry_after is not None else {}
            payload = json.dumps({"error": {"message": action.message, "type": "scripted"}}).encode()
            return delay, (action.code, payload, extra)
        if isinstance(action, Malformed):
            return delay, (200, b'{"id": "x", "choices": [{"message": ', {})
        return delay, action  # Drop


class _HTTPProtocol(asyncio.Protocol):
    """Minimal HTTP/1.1 with keep-alive. A protocol, not streams: a reply is a timer callback,
    which keeps the server's own per-request cost (and so its share of measured latency) small."""

    def __init__(self, server: ScriptedServer):
        self.server = server
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.busy = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._next()

    def _next(self) -> None:
        if self.busy or self.transport is None:
            return
        end = self.buffer.find(b"\r\n\r\n")
        if end == -1:
            return
        lines = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if len(self.buffer) < end + 4 + length:
            return
        raw = bytes(self.buffer[end + 4 : end + 4 + length])
        del self.buffer[: end + 4 + length]
        self.busy = True
        delay, answer = self.server.respond_to(method, path, raw)
        loop = asyncio.get_running_loop()
        if delay:
            loop.call_later(delay, self._answer, answer)
        else:
            self._answer(answer)

    def _answer(self, answer: Action | tuple[int, bytes, dict[str, str]]) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if isinstance(answer, Drop):
            transport.close()
            return
        assert isinstance(answer, tuple)
        code, data, headers = answer
        head = [
            f"HTTP/1.1 {code} {'OK' if code == 200 else 'Error'}",
            "Content-Type: application/json",
            f"Content-Length: {len(data)}",
        ]
        head += [f"{k}: {v}" for k, v in headers.items()]
        transport.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        self.busy = False
        self._next()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.server._connections.discard(self)


def wait_until_up(base_url: str, timeout_s: float = 10.0) -> None:
    """Block until a server started in another process answers ``GET {base_url}/models``."""
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            urllib.request.urlopen(f"{base_url}/models", timeout=1)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8999)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--rate-limit", type=float, default=None, help="requests per second (token bucket); 429 beyond")
    parser.add_argument("--burst", type=float, default=1.0, help="token bucket size")
    parser.add_argument("--no-limit-headers", action="store_true", help="send 429s without x-ratelimit-* headers")
    parser.add_argument("--prefix-latency", type=float, default=0.0, help="extra seconds for a prompt prefix not seen")
    args = parser.parse_args(argv)
    script: Callable[[Request], Action] = FaultScript(rate=args.fault_rate) if args.fault_rate else default_judge
    bucket = (
        TokenBucket(args.rate_limit, burst=args.burst, headers=not args.no_limit_headers) if args.rate_limit else None
    )
    server = ScriptedServer(
        script, latency_s=args.latency, port=args.port, rate_limit=bucket, prefix_extra_s=args.prefix_latency
    )
    print(f"scripted server on http://127.0.0.1:{args.port}/v1", flush=True)
    asyncio.run(server.serve_forever())


__all__ = [
    "Action",
    "BatchAPI",
    "Drop",
    "FaultScript",
    "Malformed",
    "Reply",
    "Request",
    "ScriptedServer",
    "Status",
    "TokenBucket",
    "completion_body",
    "default_judge",
    "fake_rating",
    "main",
    "messages_hash",
    "reply_properties",
    "wait_until_up",
]


if __name__ == "__main__":
    main()
