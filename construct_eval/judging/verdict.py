"""P(correct): a yes/no verdict per document and per field, read from the answer token's log-probs.

Is a small model's binary verdict more informative than its 1-10 rating? The judge is asked
"Is this value correct? Answer yes or no." (per field, the other fields ignored, as in the
per-field rating) or the same of the whole output, and the score is

    P(correct) = P(yes) / (P(yes) + P(no))

summed over the first answer token's top log-probs whose text is "yes" or "no" in any case,
with or without a leading space. ``mass`` = P(yes) + P(no) says how much of the model's
distribution those tokens covered: a verdict whose mass is small was not really a yes/no
answer, and a reply with neither token among the alternatives is unscored
(``no_verdict_tokens``), never a number.

The prompt shares the judge's system message and document/schema/output context
(:func:`construct_eval.judging.prompts.shared_context`), so on a one-slot server a document's verdict
calls reuse the prefix its rating calls computed. On llama.cpp a grammar forces the answer to
``yes`` or ``no``; the log-probs are the model's own, before the grammar. Elsewhere the reply
is cut at two tokens. Calls are keyed like judgments (document, output, field, prompt, endpoint
identity, model, configuration) and resume.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from construct_eval.digest import sha256_hex
from construct_eval.fields import DOCUMENT, MISSING, FieldPath, field_paths, format_path, get_at
from construct_eval.judging.prompts import DEFAULT_VARIANT, SYSTEM_PROMPT, fence, render_json, shared_context
from construct_eval.judging.stage import ModelScorer, model_scorer
from construct_eval.kinds import judge_modes
from construct_eval.llm.client import ChatRequest, ChatResult, LLMClient
from construct_eval.llm.logprobs import TokenLogprob
from construct_eval.scorer_registry import P_CORRECT
from construct_eval.types import JudgeInput

SCORER = P_CORRECT.family

DOC_QUESTION = (
    "Is the assistant's JSON output above correct as a whole: is every value right, complete and "
    "faithful to the document and the request? Answer with one word: yes or no."
)
FIELD_QUESTION = (
    "Consider only the field {field} of the assistant's JSON output, whose value is:\n{value}\n"
    "Ignore all other fields of the output. Is this value correct according to the document and "
    "the request? Answer with one word: yes or no."
)
YES_NO_GRAMMAR = 'root ::= "yes" | "no"\n'
TEMPLATE_HASH = sha256_hex(json.dumps([SYSTEM_PROMPT, DOC_QUESTION, FIELD_QUESTION]))[:16]


def p_correct(first: TokenLogprob | None) -> tuple[float | None, float, str | None]:
    """(P(yes) / (P(yes) + P(no)), the mass of those tokens, reason if unscored) from one token."""
    if first is None:
        return None, 0.0, "no_logprobs: the endpoint returned no log-probs"
    alternatives = dict(first.top)
    alternatives.setdefault(first.token, first.logprob)
    yes = sum(math.exp(lp) for tok, lp in alternatives.items() if tok.strip().casefold() == "yes")
    no = sum(math.exp(lp) for tok, lp in alternatives.items() if tok.strip().casefold() == "no")
    if yes + no <= 0.0:
        return None, 0.0, "no_verdict_tokens: neither yes nor no among the answer's top tokens"
    return yes / (yes + no), yes + no, None


@dataclass(frozen=True)
class VerdictTask:
    item: JudgeInput
    field: str  # DOCUMENT for the whole output
    path: FieldPath | None
    key: str


def _parse_modes(text: str) -> list[str]:
    try:
        return [m.value for m in judge_modes(text)]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@model_scorer
class VerdictAsker(ModelScorer):
    """Plans and makes verdict calls; resumable by key (like :class:`construct_eval.judging.judge.Judge`).
    The scorer contract's built-in example: ``construct-eval verdict`` is made from this class."""

    spec = P_CORRECT
    command = "verdict"
    summary = "P(correct): a yes/no verdict per document and field from the answer's log-probs"

    def __init__(
        self,
        client: LLMClient,
        *,
        modes: str | Sequence[str] = ("doc", "fields"),
        granularity: str = "top",
        top_logprobs: int = 20,
    ):
        super().__init__(client)
        self.modes = modes
        self.granularity = granularity
        self.top_logprobs = top_logprobs
        self.backend = client.endpoint.resolved_backend

    @classmethod
    def add_options(cls, parser: Any) -> None:
        parser.add_argument("--mode", type=_parse_modes, default=["doc", "field"], help="comma list of doc, fields")
        parser.add_argument("--granularity", default="top", choices=["top", "item", "leaf"])

    @classmethod
    def options_from(cls, args: Any) -> dict[str, Any]:
        return {"modes": args.mode, "granularity": args.granularity}

    def score_rows(self, rows: Sequence[Mapping[str, Any]], **_: Any) -> list[dict[str, Any]]:
        return score_rows(rows)

    def extra(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        masses = [r["mass"] for r in rows if r["status"] == "ok"]
        return {"mean yes/no mass": f"{sum(masses) / len(masses):.3f}"} if masses else {}

    def where(self, task: Any) -> str:
        return f"document {task.item.doc_id!r}, {task.field}"

    def describe(self) -> dict[str, Any]:
        return {
            "endpoint": self.client.endpoint.describe(),
            "granularity": self.granularity,
            "top_logprobs": self.top_logprobs,
            "template_hash": TEMPLATE_HASH,
        }

    def _key(self, doc_id: str, output_hash: str, field: str) -> str:
        ep = self.client.endpoint
        payload = json.dumps(
            [doc_id, output_hash, field, TEMPLATE_HASH, self.granularity, self.top_logprobs, ep.identity, ep.model],
            ensure_ascii=False,
        )
        return sha256_hex(payload)[:24]

    def key(self, item: JudgeInput, field: str) -> str:
        return self._key(item.doc_id, item.output_hash, field)

    def owns(self, row: Mapping[str, Any]) -> bool:
        """Whether this configuration (template, granularity, log-probs asked, endpoint, model)
        made the audit row, on whichever document and in whichever mode."""
        return bool(row.get("key")) and row["key"] == self._key(row["id"], row["output_hash"], row["field"])

    def plan(self, items: Sequence[JudgeInput], modes: str | Sequence[str] | None = None) -> list[VerdictTask]:
        """A document's calls together: its verdict, then each field's. ``modes`` (default: the
        asker's): "doc", "fields" (or "field"), as a sequence or a comma list."""
        modes = self.modes if modes is None else modes
        wanted = {m.strip() for m in (modes.split(",") if isinstance(modes, str) else modes)}
        unknown = wanted - {"doc", "field", "fields"}
        if unknown:
            raise ValueError(f"unknown verdict mode(s) {sorted(unknown)}: use doc and/or fields")
        tasks = []
        for item in items:
            if "doc" in wanted:
                tasks.append(VerdictTask(item, DOCUMENT, None, self.key(item, DOCUMENT)))
            if wanted & {"field", "fields"}:
                for path in field_paths(item.schema, item.output, granularity=self.granularity):
                    name = format_path(path)
                    tasks.append(VerdictTask(item, name, path, self.key(item, name)))
        return tasks

    def _messages(self, task: VerdictTask) -> list[dict[str, str]]:
        item = task.item
        context = shared_context(item.request, item.schema, item.output, DEFAULT_VARIANT)
        if task.path is None:
            question = DOC_QUESTION
        else:
            value = get_at(item.output, task.path)
            shown = "(missing)" if value is MISSING else render_json(value)
            question = FIELD_QUESTION.format(field=f"`{task.field}`", value=fence(shown, "VALUE"))
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"{context}\n\n[Instruction]\n{question}"},
        ]

    def request_for(self, task: VerdictTask) -> ChatRequest:
        """The request :meth:`run_task` sends (for dry runs and spending limits)."""
        return ChatRequest(
            messages=self._messages(task),
            temperature=0.0,
            max_tokens=2,
            grammar=YES_NO_GRAMMAR if self.backend == "llamacpp" else None,
            logprobs=True,
            top_logprobs=self.top_logprobs,
            affinity=task.item.doc_id,
        )

    async def run_task(self, task: VerdictTask) -> dict[str, Any]:
        return self.row_for(task, await self.client.complete(self.request_for(task)))

    def row_for(self, task: VerdictTask, result: ChatResult) -> dict[str, Any]:
        """The row of ``task`` from its reply, however it arrived (live, batch)."""
        if not result.ok:
            value, mass, reason = None, 0.0, f"request_failed: {result.error}: {result.error_detail}"
        else:
            value, mass, reason = p_correct(result.logprobs[0] if result.logprobs else None)
        ep = self.client.endpoint
        return {
            "id": task.item.doc_id,
            "field": task.field,
            "granularity": None if task.path is None else self.granularity,
            "output_hash": task.item.output_hash,
            "status": "ok" if reason is None else "unscored",
            "reason": reason,
            "p_correct": value,
            "mass": round(mass, 6),
            "raw_reply": result.text,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "latency_s": round(result.latency_s, 3),
            "model": ep.model,
            "endpoint_id": ep.identity,
            "template_hash": TEMPLATE_HASH,
            "key": task.key,
        }


def score_rows(verdicts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Score rows (scorer ``p-correct``) from verdict rows: one per document and per field.

    The document row carries the cost of all the document's verdict calls; an unscored verdict
    is a row with ``score`` None and its reason.
    """
    by_doc: dict[str, list[Mapping[str, Any]]] = {}
    for r in verdicts:
        by_doc.setdefault(r["id"], []).append(r)
    rows: list[dict[str, Any]] = []
    for doc_id, group in by_doc.items():
        cost = {
            "calls": len(group),
            "tokens": sum(int(r["prompt_tokens"]) + int(r["completion_tokens"]) for r in group),
            "seconds": round(sum(float(r["latency_s"]) for r in group), 3),
        }
        for r in group:
            row: dict[str, Any] = {"id": doc_id, "scorer": SCORER, "field": r["field"], "score": r["p_correct"]}
            row["mass"] = r["mass"]
            if r["reason"]:
                row["reason"] = r["reason"]
            if r["field"] == DOCUMENT:
                row.update(cost)
            else:
                row["granularity"] = r["granularity"]
            rows.append(row)
    return rows
