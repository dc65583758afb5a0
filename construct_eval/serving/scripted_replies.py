"""What a scripted server answers: the actions a script returns (a reply, an HTTP status, a
malformed body, a dropped connection), the request a script sees, the deterministic fake judge
(:func:`default_judge`), :class:`FaultScript` (faults at a chosen rate) and the chat-completion
body a reply is sent as."""

from __future__ import annotations

import hashlib
import json
import math
import re
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


def reply_properties(body: dict[str, Any]) -> list[str] | None:
    """Property names of the JSON schema in ``response_format`` (either backend's form), if any."""
    rf = body.get("response_format") or {}
    schema = rf.get("schema") or (rf.get("json_schema") or {}).get("schema")
    return list(schema.get("properties") or {}) if isinstance(schema, dict) else None


def _requested_fields(body: dict[str, Any]) -> list[str] | None:
    props = reply_properties(body)
    return None if props is None or _wants_json_rating(body) else props


def _wants_json_rating(body: dict[str, Any]) -> bool:
    return set(reply_properties(body) or ()) == {"explanation", "rating"}


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


def completion_body(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
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
