"""A scripted CONSTRUCT judge for the equivalence test: replies to TLM's calls, and the same replies
replayed to ``construct``.

:class:`RecordingJudge` answers each of TLM's structured-output calls (the four JSON reflection
templates, the argument template, the consistency samples) with a reply drawn from a seed made of
the request's content, so the same request always gets the same reply, whichever order the calls
arrive in. It records every (request, reply). :class:`ReplayJudge` answers only requests recorded
there, with the recorded reply; any other request is refused with HTTP 400, so a request
``construct`` builds differently from TLM's cannot be scored.

A request whose document says "confident notice" gets high scores from every template. An
output asks for a broken reply through its ``case`` field: ``unreadable:<template>`` (a
reply that is not JSON), ``missing-field:<template>`` (a per-field reply without its first
field), ``no-score:argument`` (an argument with no number in it), ``words:argument`` (a
``<score>`` that is no number).
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from construct_eval.serving.scripted_replies import Reply, Request, Status

LEVELS = ("Certain", "Mostly Certain", "Somewhat Certain", "Uncertain", "Likely Incorrect")


def canonical(body: dict[str, Any]) -> str:
    """What decides a reply: the messages and the parameters that shape it (not the model name)."""
    fmt = body.get("response_format")
    keep = {
        "messages": body.get("messages"),
        "response_format": fmt,
        "temperature": body.get("temperature"),
        "max_tokens": body.get("max_tokens", body.get("max_completion_tokens")),
    }
    return json.dumps(keep, sort_keys=True, ensure_ascii=False)


def _schema(body: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The reply schema's name and body: from ``json_schema``, or from a llama.cpp-style
    ``json_object`` with a schema (named by its title, which TLM's models set to their name)."""
    fmt = body.get("response_format") or {}
    if "json_schema" in fmt:
        spec = fmt["json_schema"]
        return spec.get("name"), spec.get("schema") or {}
    schema = fmt.get("schema") or {}
    return schema.get("title"), schema


def _case(body: dict[str, Any]) -> str:
    text = json.dumps(body.get("messages"), ensure_ascii=False)
    for marker in ("unreadable:", "missing-field:", "no-score:", "words:"):
        at = text.find(marker)
        if at >= 0:
            return text[at : text.find("\\", at)].split('"')[0]
    return ""


def reply_for(body: dict[str, Any]) -> str:
    """A reply to one of TLM's calls, drawn from the request's content."""
    key = canonical(body)
    rng = random.Random(hashlib.sha256(key.encode()).hexdigest())
    name, schema = _schema(body)
    case = _case(body)
    sure = "confident notice" in key  # an output every template trusts
    template = {
        "ConfidenceModel": "field-accuracy",
        "RatingModel": "knowledge-gap",
        "PerFieldCorrectnessEvaluation": "per-field-correctness",
        "PerFieldCertaintyEvaluation": "per-field-certainty",
        "ObvConsistencyResponse": "consistency",
        None: "argument",
    }.get(name, "other")
    if case == f"unreadable:{template}":
        return "I cannot answer in JSON, sorry."
    if template in ("field-accuracy", "knowledge-gap"):
        field_def = schema["$defs"]["IncorrectField"]["properties"]["field_name"]
        keys = field_def.get("enum") or [field_def["const"]]
        flagged = [k for k in keys if rng.random() < (0.0 if sure else 0.3)]
        score_key = "confidence_score" if template == "field-accuracy" else "rating"
        top = 100 if template == "field-accuracy" else 10
        value: Any = rng.randint(top * 9 // 10 if sure else 0, top)
        if rng.random() < 0.1:
            value = value + 0.5  # a rating TLM's 0-10 table does not know
        return json.dumps(
            {
                "explanation": "Checked each field against the request.",
                "incorrect_fields": [{"field_name": k, "explanation": f"{k} is not supported"} for k in flagged],
                score_key: value,
            }
        )
    if template in ("per-field-correctness", "per-field-certainty"):
        keys = list(schema.get("properties", {}))
        if case == f"missing-field:{template}":
            keys = keys[1:]
        reply = {}
        for k in keys:
            if template == "per-field-correctness":
                level: Any = rng.choice(LEVELS[:1] if sure else LEVELS)
                if rng.random() < 0.1:
                    level = level.lower() if rng.random() < 0.5 else "Unsure"
                reply[k] = {"explanation": f"{k}: checked", "confidence": level}
            else:
                score: Any = rng.randint(95 if sure else 0, 100)
                if rng.random() < 0.05 and not sure:
                    score = "high"
                reply[k] = {"explanation": f"{k} might be wrong" if rng.random() < 0.7 else "", "score": score}
        return json.dumps(reply)
    if template == "consistency":
        answer = json.loads(body["messages"][-1]["content"].split("OUTPUT=")[-1]) if "OUTPUT=" in str(body) else {}
        return json.dumps({"explanation": "resampled", "answer": answer if rng.random() < 0.5 else {"other": 1}})
    if case == "no-score:argument":
        return "<think>It may be wrong.</think>\nNo confidence can be given."
    if case == "words:argument":
        return "<think>Unclear.</think>\n<score>\nhigh\n</score>"
    score = rng.randint(90 if sure else 0, 100)
    style = rng.random()
    if style < 0.6:
        return f"<think>\nThe value of one field may be wrong ({score}).\n</think>\n\n<score>\n{score}\n</score>"
    if style < 0.8:
        return f"<score>{score}</score>"
    return f"My confidence is about {score} out of 100"


class RecordingJudge:
    """Answers every call with :func:`reply_for` and records (canonical request, reply)."""

    def __init__(self) -> None:
        self.replies: dict[str, str] = {}
        self.requests: list[dict[str, Any]] = []

    def __call__(self, req: Request) -> Reply:
        text = reply_for(req.body)
        self.replies[canonical(req.body)] = text
        self.requests.append(req.body)
        return Reply(text)


class ReplayJudge:
    """Answers only the requests a :class:`RecordingJudge` saw, with the reply it gave."""

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.requests: list[dict[str, Any]] = []
        self.unknown: list[dict[str, Any]] = []

    def __call__(self, req: Request) -> Reply | Status:
        self.requests.append(req.body)
        text = self.replies.get(canonical(req.body))
        if text is None:
            self.unknown.append(req.body)
            return Status(400, message="a request TLM never sent")
        return Reply(text)
