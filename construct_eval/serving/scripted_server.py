"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests, fault injection and benchmarks.

It speaks real HTTP/1.1 (keep-alive, Content-Length) so the unmodified ``openai`` client
talks to it exactly as to a real endpoint. What it answers is decided per request by a
*script*: a function from the parsed request to an action (a reply, an HTTP status with
optional ``Retry-After``, a malformed body, a delay, a dropped connection).

The default script is a deterministic fake judge: its rating depends only on the
messages, so reruns agree, and it honours ``response_format`` (joint per-field JSON),
``logprobs`` and a yes/no grammar (a P(correct) verdict). :class:`FaultScript` injects faults at a chosen rate.

Run standalone (used by the benchmarks to keep the server off the client's GIL)::

    python -m construct_eval.serving.scripted_server --port 8999 --latency 0.1
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    text: str
    finish_reason: str = "stop"
    delay_s: float = 0.0
    logprobs: list[dict[str, Any]] | None = None


@dataclass
class Status:
    code: int
    retry_after: float | None = None
    delay_s: float = 0.0
    message: str = "scripted error"


@dataclass
class Malformed:
    delay_s: float = 0.0


@dataclass
class Drop:
    delay_s: float = 0.0


Action = Reply | Status | Malformed | Drop


@dataclass
class Request:
    path: str
    body: dict[str, Any]
    attempt: int  # 1 for the first time these exact messages arrive, 2 for the second, ...
    messages_hash: str = ""


def messages_hash(messages: Any) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()


def _unit(seed: str) -> float:
    """A number in [0, 1) fixed by ``seed``."""
    return int(hashlib.sha256(seed.encode()).hexdigest()[:12], 16) / float(16**12)


def fake_rating(digest: str, salt: str = "") -> int:
    return 1 + int(_unit(salt + digest) * 10)


def _reply_properties(body: dict[str, Any]) -> list[str] | None:
    """Property names of the JSON schema in ``response_format`` (either backend's form), if any."""
    rf = body.get("response_format") or {}
    schema = rf.get("schema") or (rf.get("json_schema") or {}).get("schema")
    return list(schema.get("properties") or {}) if isinstance(schema, dict) else None


def _requested_fields(body: dict[str, Any]) -> list[str] | None:
    props = _reply_properties(body)
    return None if props is None or _wants_json_rating(body) else props


def _wants_json_rating(body: dict[str, Any]) -> bool:
    return set(_reply_properties(body) or ()) == {"explanation", "rating"}


def _joint_fields_from_prompt(body: dict[str, Any]) -> list[str]:
    user = next((m["content"] for m in body.get("messages", []) if m.get("role") == "user"), "")
    m = re.search(r"separately:\n((?:- .*\n)+)", user)
    if not m:
        return []
    return [json.loads(line[2:]) for line in m.group(1).splitlines() if line.startswith("- ")]


def _tokens_with_logprobs(text: str, rating_value: int, top_n: int) -> list[dict[str, Any]]:
    """Split text into word-ish tokens; give the rating token a spread-out distribution."""
    pieces = re.findall(r"\[\[|\]\]|\d+|\s+|[^\s\[\]\d]+|[\[\]]", text)
    assert "".join(pieces) == text
    out = []
    rating_index = max(i for i, p in enumerate(pieces) if p == "[[") + 1 if "[[" in pieces else -1
    for i, piece in enumerate(pieces):
        if i == rating_index:
            # mass 0.6 on the written rating, the rest on its neighbours
            probs = {str(rating_value): 0.6}
            for v in (rating_value - 1, rating_value + 1):
                if 1 <= v <= 10:
                    probs[str(v)] = 0.2
            total = sum(probs.values())
            top = [{"token": t, "logprob": math.log(p / total), "bytes": None} for t, p in probs.items()][:top_n]
            lp = math.log(probs[str(rating_value)] / total)
        else:
            lp = -0.05
            top = [{"token": piece, "logprob": lp, "bytes": None}][:top_n]
        out.append({"token": piece, "logprob": lp, "bytes": None, "top_logprobs": top})
    return out


def default_judge(req: Request) -> Action:
    """A deterministic fake judge: replies in the format the request asks for."""
    body = req.body
    fields = _requested_fields(body)
    if fields is None and body.get("response_format") and not _wants_json_rating(body):
        fields = _joint_fields_from_prompt(body)
    if fields:
        payload = {
            f: {"explanation": f"checked {f}", "rating": 1 + int(_unit(f + req.messages_hash) * 10)} for f in fields
        }
        return Reply(json.dumps(payload))
    grammar = str(body.get("grammar") or "")
    if '"yes"' in grammar and '"no"' in grammar:  # a yes/no verdict (P(correct)): a fixed P(yes) per request
        p = 0.05 + 0.9 * _unit("verdict" + req.messages_hash)
        top = [{"token": "yes", "logprob": math.log(p)}, {"token": "no", "logprob": math.log(1 - p)}]
        chosen = top[0] if p >= 0.5 else top[1]
        return Reply(chosen["token"], logprobs=[{**chosen, "bytes": None, "top_logprobs": top}])
    rating = fake_rating(req.messages_hash)
    if _wants_json_rating(body):
        return Reply(json.dumps({"explanation": "looks plausible", "rating": rating}))
    text = f"The values match the document in most places. Rating: [[{rating}]]"
    lps = _tokens_with_logprobs(text, rating, int(body.get("top_logprobs") or 1)) if body.get("logprobs") else None
    return Reply(text, logprobs=lps)


@dataclass
class FaultScript:
    """Wraps a script and makes a share ``rate`` of distinct requests misbehave.

    Transient faults (429 with Retry-After, 500, a reply slower than ``slow_s``, a
    malformed body, a dropped connection) hit only the first attempt, so a client that
    retries recovers. Content faults (a truncated reply, a reply without a rating) hit
    every attempt, so they must end as unscored judgments with the right reason.
    """

    rate: float = 0.3
    seed: str = "faults"
    slow_s: float = 2.0
    retry_after_s: float = 0.05
    inner: Callable[[Request], Action] = default_judge
    kinds: tuple[str, ...] = ("429", "500", "slow", "malformed", "drop", "truncated", "no_rating")
    injected: Counter[str] = field(default_factory=Counter)

    def fault_for(self, messages_digest: str) -> str | None:
        u = _unit(self.seed + messages_digest)
        if u >= self.rate:
            return None
        return self.kinds[int(u / self.rate * len(self.kinds)) % len(self.kinds)]

    def __call__(self, req: Request) -> Action:
        kind = self.fault_for(req.messages_hash)
        if kind in ("truncated", "no_rating"):
            self.injected[kind] += 1
            if kind == "truncated":
                return Reply("The output looks mostly right but the claim id", finish_reason="length")
            return Reply("I think this output is fine overall.")
        if kind is not None and req.attempt == 1:
            self.injected[kind] += 1
            if kind == "429":
                return Status(429, retry_after=self.retry_after_s, message="rate limited")
            if kind == "500":
                return Status(500)
            if kind == "slow":
                return Reply("Too late. Rating: [[5]]", delay_s=self.slow_s)
            if kind == "malformed":
                return Malformed()
            if kind == "drop":
                return Drop()
        return self.inner(req)


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


class BatchAPI:
    """OpenAI's files and batches endpoints, enough for a client to run a batch end to end.

    ``POST /files`` (multipart upload), ``GET /files/{id}`` and ``/files/{id}/content``,
    ``POST /batches``, ``GET /batches/{id}``, ``POST /batches/{id}/cancel``. A batch moves one
    state per retrieve (validating -> in_progress -> finalizing -> completed; ``expire_after``
    retrieves ends it ``expired`` instead, with the lines not yet done in the error file;
    ``fail_validation`` ends it ``failed`` with an ``errors`` list and no files), and its
    replies come from the server's script, as live calls' do. ``fail_line`` picks lines the
    runner fails (they go to the error file).
    """

    STATES = ("validating", "in_progress", "finalizing", "completed")

    def __init__(self, script: Callable[[Request], Action], *, fail_line: Callable[[int], bool] | None = None,
                 expire_after: int | None = None, fail_validation: bool = False):  # fmt: skip
        self.script = script
        self.fail_validation = fail_validation  # True: every batch ends "failed" at validation
        self.fail_line = fail_line or (lambda i: False)
        self.expire_after = expire_after
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.created = 0  # batches created, ever (a resumed run must not add one)
        self.hold = False  # True: batches stay in_progress (a test kills the client meanwhile)

    def _file(self, content: bytes, filename: str, purpose: str) -> dict[str, Any]:
        fid = f"file-{len(self.files) + 1}"
        meta = {"id": fid, "object": "file", "bytes": len(content), "created_at": 0, "filename": filename,
                "purpose": purpose}  # fmt: skip
        self.files[fid] = {"meta": meta, "content": content}
        return meta

    def upload(self, raw: bytes) -> dict[str, Any]:
        boundary = raw.split(b"\r\n", 1)[0]
        fields: dict[str, Any] = {}
        for part in raw.split(boundary)[1:]:
            if part.startswith(b"--"):
                break
            head, _, body = part.lstrip(b"\r\n").partition(b"\r\n\r\n")
            name = re.search(rb'name="([^"]+)"', head)
            filename = re.search(rb'filename="([^"]*)"', head)
            key = name.group(1).decode() if name else ""
            fields[key] = (
                body[:-2] if body.endswith(b"\r\n") else body,
                filename.group(1).decode() if filename else None,
            )
        content, filename = fields.get("file", (b"", "input.jsonl"))
        purpose = fields.get("purpose", (b"batch", None))[0].decode()
        return self._file(content, filename or "input.jsonl", purpose)

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        self.created += 1
        bid = f"batch_{self.created}"
        lines = self.files[body["input_file_id"]]["content"].decode().splitlines()
        batch = {"id": bid, "object": "batch", "endpoint": body.get("endpoint"), "errors": None,
                 "input_file_id": body["input_file_id"], "completion_window": body.get("completion_window", "24h"),
                 "status": "validating", "output_file_id": None, "error_file_id": None, "created_at": 0,
                 "request_counts": {"total": len(lines), "completed": 0, "failed": 0}, "_retrieves": 0}  # fmt: skip
        self.batches[bid] = batch
        return batch

    def _finish(self, batch: dict[str, Any], expired: bool) -> None:
        lines = [json.loads(x) for x in self.files[batch["input_file_id"]]["content"].decode().splitlines()]
        out, errors = [], []
        for i, line in enumerate(lines):
            if expired and i >= len(lines) // 2:
                errors.append({"id": f"batch_req_{i}", "custom_id": line["custom_id"], "response": None,
                               "error": {"code": "batch_expired", "message": "this request could not be executed before the completion window expired"}})  # fmt: skip
                continue
            if self.fail_line(i):
                errors.append({"id": f"batch_req_{i}", "custom_id": line["custom_id"], "response": None,
                               "error": {"code": "server_error", "message": "scripted failure"}})  # fmt: skip
                continue
            body = line["body"]
            action = self.script(Request(line.get("url", ""), body, 1, messages_hash(body.get("messages", []))))
            reply = action if isinstance(action, Reply) else Reply("Rating: [[5]]")
            out.append({"id": f"batch_req_{i}", "custom_id": line["custom_id"],
                        "response": {"status_code": 200, "request_id": f"req_{i}", "body": _completion(body, reply)},
                        "error": None})  # fmt: skip
        dump = lambda rows: "".join(json.dumps(r) + "\n" for r in rows).encode()  # noqa: E731
        batch["output_file_id"] = self._file(dump(out), "output.jsonl", "batch_output")["id"] if out else None
        batch["error_file_id"] = self._file(dump(errors), "errors.jsonl", "batch_output")["id"] if errors else None
        batch["request_counts"] |= {"completed": len(out), "failed": len(errors)}
        batch["status"] = "expired" if expired else "completed"

    def retrieve(self, bid: str) -> dict[str, Any]:
        batch = self.batches[bid]
        if batch["status"] in ("completed", "expired", "failed", "cancelled"):
            return batch
        batch["_retrieves"] += 1
        if self.fail_validation:
            batch["status"] = "failed"
            batch["errors"] = {"object": "list", "data": [{"code": "invalid_request", "message": "scripted validation failure", "line": 1}]}  # fmt: skip
            return batch
        if self.expire_after is not None and batch["_retrieves"] >= self.expire_after:
            self._finish(batch, expired=True)
            return batch
        if self.hold and batch["status"] == "in_progress":
            return batch
        nxt = self.STATES[min(self.STATES.index(batch["status"]) + 1, len(self.STATES) - 1)]
        if nxt == "completed":
            self._finish(batch, expired=False)
        else:
            batch["status"] = nxt
            if nxt == "finalizing":
                batch["request_counts"]["completed"] = batch["request_counts"]["total"]
        return batch

    def route(self, method: str, path: str, raw: bytes) -> tuple[int, bytes, dict[str, str]] | None:
        """The answer to a files/batches request, or None for any other path."""
        path = path.split("?", 1)[0].rstrip("/")
        public = lambda obj: json.dumps({k: v for k, v in obj.items() if not k.startswith("_")}).encode()  # noqa: E731
        m = re.search(r"/files(?:/([^/]+))?(/content)?$", path)
        if m:
            fid, content = m.group(1), m.group(2)
            if method == "POST" and fid is None:
                return 200, json.dumps(self.upload(raw)).encode(), {}
            if fid not in self.files:
                return 404, json.dumps({"error": {"message": f"no file {fid}"}}).encode(), {}
            if content:
                return 200, self.files[fid]["content"], {}
            return 200, json.dumps(self.files[fid]["meta"]).encode(), {}
        m = re.search(r"/batches(?:/([^/]+))?(/cancel)?$", path)
        if m:
            bid, cancel = m.group(1), m.group(2)
            if method == "POST" and bid is None:
                return 200, public(self.create(json.loads(raw or b"{}"))), {}
            if method == "GET" and bid is None:  # list, newest first
                data = [json.loads(public(b)) for b in reversed(self.batches.values())]
                return 200, json.dumps({"object": "list", "data": data, "has_more": False}).encode(), {}
            if bid not in self.batches:
                return 404, json.dumps({"error": {"message": f"no batch {bid}"}}).encode(), {}
            if cancel:
                self.batches[bid]["status"] = "cancelled"
                return 200, public(self.batches[bid]), {}
            return 200, public(self.retrieve(bid)), {}
        return None


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
            return delay, (200, json.dumps(_completion(body, action)).encode(), limit_headers)
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


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    prompt_chars = sum(len(m.get("content") or "") for m in body.get("messages", []))
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": reply.text},
        "finish_reason": reply.finish_reason,
        "logprobs": {"content": reply.logprobs} if reply.logprobs is not None else None,
    }
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "scripted"),
        "choices": [choice],
        "usage": {
            "prompt_tokens": max(1, prompt_chars // 4),
            "completion_tokens": max(1, len(reply.text) // 4),
            "total_tokens": max(1, prompt_chars // 4) + max(1, len(reply.text) // 4),
        },
    }


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


if __name__ == "__main__":
    main()
