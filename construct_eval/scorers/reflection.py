"""A reflection ensemble in the spirit of CONSTRUCT: several judge prompts, each from another angle.

What is known of CONSTRUCT's design (docs/design.md, "CONSTRUCT, as far as its open-source code shows"): several self-reflection
prompts at temperature 0, some listing the incorrect fields, some rating every field on a
verbal or numeric scale, one arguing against the whole answer; per-field replies forced
through a JSON schema built from the output's keys; field and document scores as averages.
This module builds that family on any OpenAI-compatible endpoint:

- ``reflect-incorrect``: list the incorrect fields (a listed field scores 0.1, others 0.9);
- ``reflect-certainty``: a five-level certainty per field (1.0, 0.75, 0.5, 0.25, 0.0);
- ``reflect-score100``: a 0-100 score per field (divided by 100);
- ``reflect-argue``: argue why the output may be wrong, then a 0-100 score for the whole output.

Field score: the mean over the field-aware prompts that scored the field. Document score:
the mean over prompts of each prompt's document view (any field listed: 0.1 else 0.9; the
least certain field; the lowest field score; the argued score). Scores are clipped to
[0.001, 0.999]. A reply that cannot be read is unscored with a reason, for that prompt only;
unlike the peers, fields may be nested paths (any granularity), not only top-level keys.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from construct_eval.digest import sha256_hex
from construct_eval.fields import DOCUMENT, field_names
from construct_eval.judging.prompts import DEFAULT_VARIANT, shared_context
from construct_eval.judging.stage import ModelScorer, model_scorer
from construct_eval.llm.client import ChatRequest, ChatResult, LLMClient
from construct_eval.parsing import extract_json_object, is_request_failure
from construct_eval.scorer_registry import REFLECTION
from construct_eval.types import JudgeInput

FAMILY = REFLECTION.family
"""The scorer family of this module's score rows (declared in :mod:`construct_eval.scorer_registry`)."""
CERTAINTY = {
    "certainly correct": 1.0,
    "probably correct": 0.75,
    "unsure": 0.5,
    "probably incorrect": 0.25,
    "certainly incorrect": 0.0,
}

SYSTEM = (
    "You are a meticulous reviewer of data extracted from documents. You check every value "
    "against the document and the request, and you say so when something is wrong or unsupported."
)


@dataclass(frozen=True)
class ReflectionPrompt:
    id: str
    instruction: str
    per_field: bool

    @property
    def hash(self) -> str:
        return sha256_hex(json.dumps([self.id, SYSTEM, self.instruction]))[:16]


PROMPTS: dict[str, ReflectionPrompt] = {
    p.id: p
    for p in (
        ReflectionPrompt(
            "reflect-incorrect",
            "Check each field of the output against the document. Reply with a JSON object "
            '{"incorrect_fields": [...]} listing the names of the fields whose values are wrong, '
            "missing or not supported by the document (an empty list if all are right). Fields:\n{fields}",
            True,
        ),
        ReflectionPrompt(
            "reflect-certainty",
            "For each field below, say how certain you are that its value in the output is correct, "
            "using exactly one of: " + ", ".join(f'"{k}"' for k in CERTAINTY) + ". Reply with a JSON object "
            "mapping each field name to its level. Fields:\n{fields}",
            True,
        ),
        ReflectionPrompt(
            "reflect-score100",
            "For each field below, give a score from 0 (certainly wrong) to 100 (certainly right) for its value "
            "in the output, checked against the document. Reply with a JSON object mapping each field name to an "
            "integer score. Fields:\n{fields}",
            True,
        ),
        ReflectionPrompt(
            "reflect-argue",
            "Argue as strongly as the document allows that the output is wrong: point at every value that could "
            "be mistaken. Then give a score from 0 to 100 for how likely it is that the whole output is correct. "
            'Reply with a JSON object {"argument": "...", "score": <integer>}.',
            False,
        ),
    )
}


def reply_schema(prompt: ReflectionPrompt, names: Sequence[str]) -> dict[str, Any]:
    """JSON schema forcing the reply's shape (grammars ignore min/max, so ranges are checked after)."""
    if prompt.id == "reflect-incorrect":
        items = {"enum": list(names)} if names else {"type": "string"}
        return {
            "type": "object",
            "properties": {"incorrect_fields": {"type": "array", "items": items}},
            "required": ["incorrect_fields"],
        }
    if prompt.id == "reflect-certainty":
        return {
            "type": "object",
            "properties": {n: {"enum": list(CERTAINTY)} for n in names},
            "required": list(names),
        }
    if prompt.id == "reflect-score100":
        return {"type": "object", "properties": {n: {"type": "integer"} for n in names}, "required": list(names)}
    return {
        "type": "object",
        "properties": {"argument": {"type": "string"}, "score": {"type": "integer"}},
        "required": ["argument", "score"],
    }


def parse_reflection(prompt_id: str, text: str | None, names: Sequence[str]) -> tuple[dict[str, float], str | None]:
    """Field scores in [0, 1] (key ``__doc__`` for the argued score), or ({}, reason unscored)."""
    if not text or not text.strip():
        return {}, "empty_reply"
    obj, why = extract_json_object(text)
    if obj is None:
        return {}, f"invalid_json: {why}"
    if prompt_id == "reflect-incorrect":
        listed = obj.get("incorrect_fields")
        if not isinstance(listed, list) or not all(isinstance(x, str) for x in listed):
            return {}, "bad_field_entry: incorrect_fields must be a list of names"
        return {n: (0.1 if n in listed else 0.9) for n in names}, None
    if prompt_id == "reflect-certainty":
        out = {
            n: CERTAINTY[str(obj[n]).strip().lower()] for n in names if str(obj.get(n, "")).strip().lower() in CERTAINTY
        }
        return (out, None) if out else ({}, "missing_field: no field has a known certainty level")
    if prompt_id == "reflect-score100":
        out = {}
        for n in names:
            v = obj.get(n)
            if isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 100:
                out[n] = float(v) / 100
        return (out, None) if out else ({}, "out_of_range: no field has a score in 0..100")
    v = obj.get("score")
    if isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 100:
        return {DOCUMENT: float(v) / 100}, None
    return {}, "out_of_range: score must be 0..100"


def _clip(x: float) -> float:
    return min(0.999, max(0.001, x))


def combine(parsed: Mapping[str, Mapping[str, float]], names: Sequence[str]) -> dict[str, float | None]:
    """Field and document scores from the parsed replies of each prompt (see module docstring)."""
    scores: dict[str, float | None] = {}
    for n in names:
        values = [p[n] for pid, p in parsed.items() if PROMPTS[pid].per_field and n in p]
        scores[n] = _clip(sum(values) / len(values)) if values else None
    views = []
    for pid, p in parsed.items():
        if not p:
            continue
        if pid == "reflect-incorrect":
            views.append(0.1 if any(v < 0.5 for v in p.values()) else 0.9)
        elif PROMPTS[pid].per_field:
            views.append(min(p.values()))
        else:
            views.append(p[DOCUMENT])
    scores[DOCUMENT] = _clip(sum(views) / len(views)) if views else None
    return scores


def _messages(item: JudgeInput, prompt: ReflectionPrompt, names: Sequence[str]) -> list[dict[str, str]]:
    context = shared_context(item.request, item.schema, item.output, DEFAULT_VARIANT)
    fields = "\n".join(f"- {json.dumps(n, ensure_ascii=False)}" for n in names)
    instruction = prompt.instruction.replace("{fields}", fields)
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"{context}\n\n[Instruction]\n{instruction}"},
    ]


@dataclass(frozen=True)
class ReflectionTask:
    """One reflection call: a document, a prompt, and the key its audit row will carry."""

    item: JudgeInput
    prompt_id: str
    names: tuple[str, ...]
    key: str


def _prompt_list(text: str) -> tuple[str, ...]:
    return tuple(text.split(","))


@model_scorer
class Reflector(ModelScorer):
    """Plans and makes reflection calls through an :class:`LLMClient`; resumable by key.

    A row's key is made of the document and output, the prompt and its text's hash, the
    granularity, the reply budget, the endpoint's identity and the model, as a judgment's
    key is: a rerun with another model, endpoint or granularity is new work, not done work.
    ``construct-eval reflect`` is made from this class (the scorer contract).
    """

    spec = REFLECTION
    command = "reflect"
    stage_name = "reflection"
    summary = "the reflection ensemble (this package's four prompts), resumable"

    def __init__(
        self,
        client: LLMClient,
        *,
        granularity: str = "top",
        max_tokens: int = 1024,
        prompts: Sequence[str] = tuple(PROMPTS),
    ):
        super().__init__(client)
        unknown = set(prompts) - set(PROMPTS)
        if unknown:
            raise ValueError(f"unknown reflection prompt(s) {sorted(unknown)}; choose from {list(PROMPTS)}")
        self.granularity = granularity
        self.max_tokens = max_tokens
        self.prompts = tuple(prompts)

    @classmethod
    def add_options(cls, parser: Any) -> None:
        parser.add_argument("--prompts", type=_prompt_list, default=tuple(PROMPTS),
                            help="comma list; default all: reflect-incorrect,reflect-certainty,...")  # fmt: skip
        parser.add_argument("--granularity", default="top", choices=["top", "item", "leaf"])
        parser.add_argument("--max-tokens", type=int, default=1024)

    @classmethod
    def options_from(cls, args: Any) -> dict[str, Any]:
        return {"prompts": args.prompts, "granularity": args.granularity, "max_tokens": args.max_tokens}

    def score_rows(self, rows: Sequence[Mapping[str, Any]], **_: Any) -> list[dict[str, Any]]:
        return score_rows(rows)

    def where(self, task: Any) -> str:
        return f"document {task.item.doc_id!r}, {task.prompt_id}"

    def describe(self) -> dict[str, Any]:
        return {
            "endpoint": self.client.endpoint.describe(),
            "granularity": self.granularity,
            "max_tokens": self.max_tokens,
        }

    def _key(self, doc_id: str, output_hash: str, prompt_id: str, identity: str) -> str:
        ep = self.client.endpoint
        payload = json.dumps(
            [doc_id, output_hash, prompt_id, PROMPTS[prompt_id].hash, self.granularity, self.max_tokens,
             identity, ep.model],
            ensure_ascii=False,
        )  # fmt: skip
        return sha256_hex(payload)[:24]

    def key(self, item: JudgeInput, prompt_id: str) -> str:
        return self._key(item.doc_id, item.output_hash, prompt_id, self.client.endpoint.identity)

    def owns(self, row: Mapping[str, Any]) -> bool:
        """Whether this configuration made the audit row (or would have: see below).

        Rows written before reflections had keys (the first recorded reflection runs, all on the
        embedded server) carry no endpoint; such a row is this configuration's when its
        document, output, prompt (id and text hash), granularity and model are.
        """
        prompt = PROMPTS.get(row.get("prompt_id", ""))
        if prompt is None:
            return False
        if row.get("key"):
            return bool(
                row["key"] == self._key(row["id"], row["output_hash"], prompt.id, self.client.endpoint.identity)
            )
        return (
            row.get("prompt_hash") == prompt.hash
            and row.get("granularity", "top") == self.granularity
            and row.get("model") == self.client.endpoint.model
        )

    def own_rows(self, rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """The rows of ``rows`` that this configuration made (see :meth:`owns`)."""
        return [r for r in rows if self.owns(r)]

    def done_keys(self, rows: Sequence[Mapping[str, Any]]) -> set[str]:
        """This configuration's keys of the calls already in ``rows``."""
        return {
            self._key(r["id"], r["output_hash"], r["prompt_id"], self.client.endpoint.identity)
            for r in self.own_rows(rows)
            if not is_request_failure(r.get("reason"))  # a failed call is made again
        }

    def plan(self, items: Sequence[JudgeInput], prompts: Sequence[str] | None = None) -> list[ReflectionTask]:
        """Every call, a document's prompts together (they share the document's prompt prefix);
        ``prompts`` default: the reflector's."""
        prompts = self.prompts if prompts is None else prompts
        tasks = []
        for item in items:
            names = tuple(field_names(item.schema, item.output, granularity=self.granularity))
            tasks += [ReflectionTask(item, pid, names, self.key(item, pid)) for pid in prompts]
        return tasks

    def request_for(self, task: ReflectionTask) -> ChatRequest:
        """The request :meth:`run_task` sends (for dry runs and spending limits)."""
        prompt = PROMPTS[task.prompt_id]
        return ChatRequest(
            messages=_messages(task.item, prompt, task.names),
            temperature=0.0,
            max_tokens=self.max_tokens,
            json_schema=reply_schema(prompt, task.names),
            schema_name="reflection",
            affinity=task.item.doc_id,
        )

    def row_for(self, task: ReflectionTask, result: ChatResult) -> dict[str, Any]:
        """The audit row of ``task`` from its reply, however it arrived (live, batch)."""
        item, pid, names = task.item, task.prompt_id, task.names
        prompt = PROMPTS[pid]
        if result.ok:
            parsed, reason = parse_reflection(pid, result.text, names)
            if reason is None and result.finish_reason == "length" and not parsed:
                reason = "truncated"
        else:
            parsed, reason = {}, f"request_failed: {result.error}: {result.error_detail}"
        ep = self.client.endpoint
        return {
            "id": item.doc_id,
            "prompt_id": pid,
            "prompt_hash": prompt.hash,
            "output_hash": item.output_hash,
            "granularity": self.granularity,
            "fields": list(names),
            "status": "ok" if reason is None else "unscored",
            "reason": reason,
            "scores": parsed,
            "raw_reply": result.text,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "latency_s": round(result.latency_s, 3),
            "model": ep.model,
            "base_url": ep.normalized_url,
            "endpoint_id": ep.identity,
            "max_tokens": self.max_tokens,
            "key": task.key,
        }


def score_rows(reflections: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Score rows (scorer ``reflection``) from audit rows of one configuration, one set per document.

    Pass :meth:`Reflector.own_rows`: rows of another model or granularity in the same file
    must never be averaged together.
    """
    by_doc: dict[str, list[Mapping[str, Any]]] = {}
    for r in reflections:
        by_doc.setdefault(r["id"], []).append(r)
    rows: list[dict[str, Any]] = []
    for doc_id, group in by_doc.items():
        names = group[0]["fields"]
        parsed = {r["prompt_id"]: r["scores"] for r in group if r["status"] == "ok"}
        scores = combine(parsed, names)
        cost = {
            "calls": len(group),
            "tokens": sum(int(r["prompt_tokens"]) + int(r["completion_tokens"]) for r in group),
            "seconds": round(sum(float(r["latency_s"]) for r in group), 3),
            "unscored_prompts": sum(r["status"] != "ok" for r in group),
        }
        rows.append({"id": doc_id, "scorer": FAMILY, "field": DOCUMENT, "score": scores[DOCUMENT], **cost})
        gran = group[0].get("granularity", "top")
        for n in names:
            rows.append({"id": doc_id, "scorer": FAMILY, "granularity": gran, "field": n, "score": scores[n]})
    return rows
