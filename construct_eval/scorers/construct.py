"""CONSTRUCT, the paper's method as its authors' code computes it, on any OpenAI-compatible endpoint.

Two ways in:

- :func:`trust`: one output, in real time. It makes the output's calls (five reflection
  templates, and at the ``high``/``best`` presets the consistency samples) concurrently and
  returns its trust score, each top-level field's score and TLM's explanation, in [0, 1], with
  the calls made and their latency. The score depends on that output's calls alone.
- :func:`construct_run`: every output of a run, through the package's engine (cache, resume,
  spending limit, Batch API, the run lock). Each call is an audit row in ``construct.jsonl``;
  the ``construct`` score rows (document and top-level fields) are made from them. Where the
  run holds the generator's own samples and token log-probs, the ``construct-gen`` rows score
  each document from the same reflections with the generator's samples as observed consistency
  and its mean token probability as TLM's perplexity part: this package's extension (TLM draws
  consistency only from its own calls; it does read a perplexity given with the response). TLM's
  field scores come from the reflections alone, so it has no field rows.

The definitions are in :mod:`construct_eval.scorers.construct_method`, each citing the TLM file
it follows; ``tests/test_construct_equivalence.py`` runs TLM 0.0.3 itself on the same replies.
The authors score top-level keys only: nested leaves get no ``construct`` score.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.digest import sha256_hex
from construct_eval.fields import DOCUMENT
from construct_eval.judging.stage import ModelScorer, StageReport, model_scorer, run_scorer
from construct_eval.llm.budget import Budget
from construct_eval.llm.client import ChatRequest, ChatResult, LLMClient
from construct_eval.scorer_registry import CONSTRUCT, CONSTRUCT_GEN
from construct_eval.scorers import construct_method as cm
from construct_eval.types import JudgeInput

FAMILY, GEN_FAMILY = CONSTRUCT.family, CONSTRUCT_GEN.family
FILE = "construct"
"""The run file of the calls' audit rows (``construct.jsonl``)."""


def answer_text(output: Any) -> str:
    """The output as the JSON string TLM is given as the response (and reads back)."""
    return json.dumps(output, ensure_ascii=False)


def messages_for(item: JudgeInput) -> list[dict[str, str]]:
    """What the user asked, as TLM's ``messages``: the request (instruction and document) as the
    one user message; the schema goes in ``response_format``, as TLM takes it."""
    return [{"role": "user", "content": item.request}]


def chat_request(req: cm.Request, affinity: str | None = None) -> ChatRequest:
    return ChatRequest(
        messages=req.messages,
        temperature=req.temperature,
        max_tokens=req.max_tokens,
        json_schema=req.schema,
        schema_name=req.schema_name or "reply",
        schema_strict=req.schema is not None,
        affinity=affinity,
    )


@dataclass(frozen=True)
class ConstructTask:
    """One call for one output: a reflection template, or the ``index``-th consistency sample."""

    item: JudgeInput
    request: cm.Request
    index: int
    key: str


def plan_requests(item: JudgeInput, config: cm.Config, schema_name: str = "output") -> list[cm.Request]:
    """Every call TLM makes for this output, consistency samples first (as TLM starts them).
    ``schema_name``: the name the caller gives the output's JSON schema (TLM puts it in the
    consistency calls' reply schema)."""
    fmt = cm.response_format(item.schema, schema_name)
    messages = messages_for(item)
    return [
        *cm.consistency_requests(messages, fmt, config),
        *cm.reflection_requests(messages, fmt, answer_text(item.output), config),
    ]


def read_reply(req: cm.Request, text: str | None, answer: str) -> dict[str, Any]:
    """An audit row's reading of one reply (JSON-ready): a reflection's score, fields and
    explanation, or a consistency sample's answer; ``reason`` where TLM could not read it."""
    if req.template == "consistency":
        return {"sample": cm.read_consistency(text)}
    try:
        r = cm.read_reflection(cm.template(req.template), text, answer)
    except cm.Unreadable as exc:
        return {"reason": f"unreadable: {exc}"}
    fields = None if r.fields is None else {k: [v.score, v.explanation] for k, v in r.fields.items()}
    return {"score": r.score, "fields": fields, "explanation": r.explanation}


def reflection_from_row(row: Mapping[str, Any]) -> cm.Reflection:
    fields = row.get("fields")
    readings = None if fields is None else {k: cm.FieldReading(v[0], v[1]) for k, v in fields.items()}
    score = row.get("score")
    return cm.Reflection(row["template"], None if score is None else float(score), readings, row.get("explanation"))


@model_scorer
class ConstructScorer(ModelScorer):
    """Plans and makes CONSTRUCT's calls through an :class:`LLMClient`; resumable by key.

    A call's key is made of the document, its output, the template (and sample index), the
    request's text, the preset and reasoning effort, the endpoint's identity and the model.
    ``construct-eval construct`` is made from this class (the scorer contract).
    """

    spec = CONSTRUCT
    command = "construct"
    summary = "CONSTRUCT, the paper's method as its authors' TLM 0.0.3 computes it (resumable)"

    def __init__(
        self,
        client: LLMClient,
        config: cm.Config | None = None,
        *,
        preset: str = "medium",
        reasoning_effort: str | None = None,
        schema_name: str = "output",
    ):
        super().__init__(client)
        self.config = config or cm.Config(preset, reasoning_effort)
        self.schema_name = schema_name
        self._refused: list[dict[str, Any]] = []

    @classmethod
    def add_options(cls, parser: Any) -> None:
        parser.add_argument("--preset", default="medium", choices=list(cm.PRESETS),
                            help="TLM's quality preset: 5 calls per output (high 9, best 13); base and low need --reasoning-effort")  # fmt: skip
        parser.add_argument("--reasoning-effort", choices=["low", "medium", "high"],
                            help="default: the preset's (high for structured outputs at medium, high and best)")  # fmt: skip

    @classmethod
    def options_from(cls, args: Any) -> dict[str, Any]:
        return {"preset": args.preset, "reasoning_effort": args.reasoning_effort}

    @property
    def families(self) -> set[str]:
        return {FAMILY, GEN_FAMILY}

    @property
    def refused(self) -> list[dict[str, Any]]:
        return self._refused

    def where(self, task: Any) -> str:
        return f"document {task.item.doc_id!r}, {task.request.template}"

    def describe(self) -> dict[str, Any]:
        return {"endpoint": self.client.endpoint.describe(), **self.config.describe()}

    def _key(self, item: JudgeInput, req: cm.Request, index: int) -> str:
        ep = self.client.endpoint
        content = json.dumps([req.messages, req.schema, req.temperature, req.max_tokens], ensure_ascii=False)
        payload = [item.doc_id, item.output_hash, req.template, index, sha256_hex(content)[:16],
                   self.config.preset, self.config.reasoning, ep.identity, ep.model]  # fmt: skip
        return sha256_hex(json.dumps(payload, ensure_ascii=False))[:24]

    def plan(self, items: Sequence[JudgeInput]) -> list[ConstructTask]:
        """Every call, an output's calls together (they share its prompt prefix); the outputs TLM
        cannot score at all (not a JSON object, a field name it refuses) go to :attr:`refused`."""
        tasks: list[ConstructTask] = []
        refused: list[dict[str, Any]] = []
        for item in items:
            try:
                requests = plan_requests(item, self.config, self.schema_name)
            except cm.ConstructConfigError as exc:
                refused.append({"id": item.doc_id, "reason": f"not scorable by CONSTRUCT: {exc}"})
                continue
            samples = 0
            for req in requests:
                index = samples if req.template == "consistency" else 0
                samples += req.template == "consistency"
                tasks.append(ConstructTask(item, req, index, self._key(item, req, index)))
        self._refused = refused
        return tasks

    def request_for(self, task: ConstructTask) -> ChatRequest:
        return chat_request(task.request, task.item.doc_id)

    def row_for(self, task: ConstructTask, result: ChatResult) -> dict[str, Any]:
        """The audit row of one call: the raw reply and its reading, or why there is none."""
        item, req = task.item, task.request
        if result.ok:
            reading = read_reply(req, result.text, answer_text(item.output))
            if "reason" in reading and result.finish_reason == "length":
                reading["reason"] = f"truncated at {req.max_tokens} tokens; {reading['reason']}"
        else:
            reading = {"reason": f"request_failed: {result.error}: {result.error_detail}"}
        ep = self.client.endpoint
        return {
            "id": item.doc_id,
            "template": req.template,
            "index": task.index,
            "output_hash": item.output_hash,
            "preset": self.config.preset,
            "reasoning_effort": self.config.reasoning,
            "status": "unscored" if "reason" in reading else "ok",
            **{"reason": None, **reading},
            "raw_reply": result.text,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "latency_s": round(result.latency_s, 3),
            "model": ep.model,
            "base_url": ep.normalized_url,
            "endpoint_id": ep.identity,
            "key": task.key,
        }

    def owns(self, row: Mapping[str, Any]) -> bool:
        ep = self.client.endpoint
        return (
            row.get("preset") == self.config.preset
            and row.get("reasoning_effort") == self.config.reasoning
            and row.get("endpoint_id") == ep.identity
            and row.get("model") == ep.model
        )

    def score_rows(
        self, rows: Sequence[Mapping[str, Any]], *, items: Sequence[JudgeInput], run: RunDir
    ) -> list[dict[str, Any]]:
        """``construct`` and ``construct-gen`` rows (:func:`score_rows`), and an unscored row for
        each output it refused."""
        samples, probability = generator_parts(run)
        scored = score_rows(rows, items, self.config, model=self.client.endpoint.model,
                            generator=(samples, probability) if samples else None)  # fmt: skip
        refused = [{"id": r["id"], "scorer": FAMILY, "field": DOCUMENT, "score": None, "reason": r["reason"]}
                   for r in self._refused]  # fmt: skip
        return scored + refused


# --------------------------------------------------------------------------- one output's scores


@dataclass(frozen=True)
class TrustResult:
    """One output's CONSTRUCT result: ``score`` (None, with ``reason``, where it could not be
    scored), ``fields`` (each top-level field's score), ``explanations`` (each field's, where a
    template gave one), TLM's ``explanation``, the ``parts`` of the score, and what it cost."""

    score: float | None
    fields: dict[str, float]
    explanations: dict[str, str | None]
    explanation: str
    parts: dict[str, float | None] = field(default_factory=dict)
    calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    reason: str | None = None


def scores_from_rows(
    rows: Sequence[Mapping[str, Any]],
    config: cm.Config,
    *,
    model: str | None,
    samples: Sequence[str] | None = None,
    perplexity: float | None = None,
) -> TrustResult:
    """An output's scores from its audit rows (one per call, all present). ``samples`` replaces
    the rows' consistency samples (the generator's own), ``perplexity`` is added where given."""
    cost = {
        "calls": len(rows),
        "tokens": sum(int(r["prompt_tokens"]) + int(r["completion_tokens"]) for r in rows),
        "seconds": round(sum(float(r["latency_s"]) for r in rows), 3),
    }
    failed = [r for r in rows if r["status"] != "ok"]
    if failed:
        why = "; ".join(f"{r['template']}: {r['reason']}" for r in failed)
        return TrustResult(None, {}, {}, "", {}, **cost, reason=why)
    order = {t: i for i, t in enumerate(cm.TEMPLATE_IDS)}
    reflections = [reflection_from_row(r) for r in sorted(rows, key=lambda r: order.get(r["template"], -1))
                   if r["template"] != "consistency"]  # fmt: skip
    if samples is None:
        samples = [r["sample"] for r in sorted(rows, key=lambda r: r["index"]) if r["template"] == "consistency"]
    answer = rows[0].get("answer") or ""
    s = cm.score_output(answer, reflections, samples=samples, perplexity=perplexity, model=model)
    if s.trust is None:
        return TrustResult(
            None, {}, {}, s.explanation, s.parts, **cost, reason="no part of the score could be computed"
        )
    return TrustResult(
        s.trust,
        {k: v.score for k, v in s.fields.items()},
        {k: v.explanation for k, v in s.fields.items()},
        s.explanation,
        s.parts,
        **cost,
    )


async def trust_async(
    client: LLMClient,
    text: str,
    schema: Mapping[str, Any] | None,
    output: Any,
    *,
    config: cm.Config | None = None,
    samples: Sequence[Any] | None = None,
    perplexity: float | None = None,
    schema_name: str = "output",
) -> TrustResult:
    """:func:`trust` on an open client (its calls run concurrently)."""
    config = config or cm.Config()
    item = JudgeInput("output", text, schema, output)
    scorer = ConstructScorer(client, config, schema_name=schema_name)
    tasks = scorer.plan([item])
    refused = scorer.refused
    if samples is not None:  # the caller's samples stand for the consistency calls: none is made
        tasks = [t for t in tasks if t.request.template != "consistency"]
    if refused:
        return TrustResult(None, {}, {}, "", reason=refused[0]["reason"])
    started = time.perf_counter()
    rows = await asyncio.gather(*(scorer.run_task(t) for t in tasks))
    for r in rows:
        r["answer"] = answer_text(output)
    given = None if samples is None else [cm.sample_answer(s) for s in samples]
    result = scores_from_rows(rows, config, model=client.endpoint.model, samples=given, perplexity=perplexity)
    return replace(result, seconds=round(time.perf_counter() - started, 3))  # wall time: the calls ran together


def trust(
    text: str,
    schema: Mapping[str, Any] | None,
    output: Any,
    *,
    endpoint: Any = None,
    preset: str = "medium",
    reasoning_effort: str | None = None,
    cache: Any = True,
    samples: Sequence[Any] | None = None,
    perplexity: float | None = None,
    schema_name: str = "output",
) -> TrustResult:
    """CONSTRUCT's trust score of one output, now: ``text`` is what the generator was asked
    (instruction and document), ``schema`` the output's JSON schema (named ``schema_name``, as
    the caller's ``response_format`` names it), ``output`` the JSON it wrote.

    ``endpoint``: an :class:`~construct_eval.llm.endpoint.Endpoint` (else
    ``CONSTRUCT_EVAL_BASE_URL`` and ``CONSTRUCT_EVAL_MODEL``); ``preset``: TLM's quality preset
    (``medium`` 5 calls, ``high`` 9, ``best`` 13; ``base`` and ``low`` set no reasoning, with which
    TLM's templates refuse to score structured outputs, so they raise
    :class:`~construct_eval.scorers.construct_method.ConstructConfigError` unless
    ``reasoning_effort`` is given); ``samples``/``perplexity``: the generator's other outputs and
    its mean token probability, where the caller has them (this package's extension: given
    samples replace the consistency calls, which are then not made). The seconds are the wall
    time of the output's calls, made concurrently.
    """
    from construct_eval.judging.judge import endpoint_from_env
    from construct_eval.llm.client import make_client
    from construct_eval.llm.sync import run_sync

    config = cm.Config(preset, reasoning_effort)
    ep = endpoint if endpoint is not None else endpoint_from_env()

    async def go() -> TrustResult:
        async with make_client(ep, cache=cache) as client:
            return await trust_async(client, text, schema, output, config=config, samples=samples,
                                     perplexity=perplexity, schema_name=schema_name)  # fmt: skip

    return run_sync(go())


# --------------------------------------------------------------------------- a run's scores


def mean_token_probability(token_logprobs: Sequence[Sequence[Any]] | None) -> float | None:
    """The generator's mean token probability over its whole reply (the mean TLM's
    ``compute_mean_message_confidence`` takes), given to TLM's perplexity part; None without log-probs."""
    if not token_logprobs:
        return None
    return float(sum(math.exp(float(t[1])) for t in token_logprobs) / len(token_logprobs))


def generator_parts(run: RunDir) -> tuple[dict[str, list[str]], dict[str, float]]:
    """The generator's samples (as consistency answers) and mean token probability, per document."""
    samples: dict[str, list[str]] = {}
    for row in run.iter_rows("samples"):
        answer = cm.sample_answer(row["output"]) if "output" in row else (row.get("raw") or "").strip()
        samples.setdefault(row["id"], []).append(answer)
    probability = {}
    for row in run.read("outputs"):
        p = mean_token_probability(row.get("token_logprobs"))
        if p is not None:
            probability[row["id"]] = p
    return samples, probability


def score_rows(
    calls: Sequence[Mapping[str, Any]],
    items: Sequence[JudgeInput],
    config: cm.Config,
    *,
    model: str | None,
    generator: tuple[Mapping[str, Sequence[str]], Mapping[str, float]] | None = None,
) -> list[dict[str, Any]]:
    """``construct`` rows (and ``construct-gen`` rows where ``generator`` has samples for the
    document) for every output whose calls are all in ``calls``."""
    by_doc: dict[str, list[Mapping[str, Any]]] = {}
    for r in calls:
        by_doc.setdefault(r["id"], []).append(r)
    out: list[dict[str, Any]] = []
    for item in items:
        rows = [dict(r) | {"answer": answer_text(item.output)} for r in by_doc.get(item.doc_id, [])]
        if len(rows) < config.calls:
            continue  # not all of its calls made yet
        variants: list[tuple[str, TrustResult]] = [(FAMILY, scores_from_rows(rows, config, model=model))]
        if generator is not None and item.doc_id in generator[0]:
            samples, probability = generator[0][item.doc_id], generator[1].get(item.doc_id)
            gen = scores_from_rows(rows, config, model=model, samples=samples, perplexity=probability)
            variants.append((GEN_FAMILY, gen))
        for family, res in variants:
            cost = {"calls": res.calls, "tokens": res.tokens, "seconds": res.seconds}
            doc: dict[str, Any] = {"id": item.doc_id, "scorer": family, "field": DOCUMENT, "score": res.score, **cost}
            if res.reason:
                doc["reason"] = res.reason
            out.append(doc)
            names = list(item.output) if isinstance(item.output, dict) and family == FAMILY else []
            for name in names:  # TLM's field scores use its reflections alone: construct-gen's would be the same
                row: dict[str, Any] = {"id": item.doc_id, "scorer": family, "granularity": "top", "field": name,
                                       "score": res.fields.get(name)}  # fmt: skip
                if row["score"] is None:
                    row["reason"] = res.reason or "no template scored this field"
                out.append(row)
    return out


def construct_run(
    run: RunDir,
    client: LLMClient,
    *,
    preset: str = "medium",
    reasoning_effort: str | None = None,
    data_dir: str | None = None,
    ids: Sequence[str] | None = None,
    limit: int | None = None,
    progress: bool = True,
    dry_run: bool = False,
    prices: Mapping[str, Any] | None = None,
    budget: Budget | None = None,
    batch: bool = False,
    batch_poll: float = 30.0,
) -> StageReport:
    """CONSTRUCT over a run's outputs (resumable): writes ``construct.jsonl`` and the ``construct``
    (and, with the generator's samples, ``construct-gen``) score rows. Raises
    :class:`~construct_eval.judging.stage.StageFailed` (what was written is kept)."""
    scorer = ConstructScorer(client, preset=preset, reasoning_effort=reasoning_effort)
    return run_scorer(
        run, scorer, data_dir=data_dir, ids=ids, limit=limit, progress=progress, dry_run=dry_run, prices=prices,
        budget=budget, batch=batch, batch_poll=batch_poll,
    )  # fmt: skip


__all__ = ["ConstructScorer", "TrustResult", "construct_run", "score_rows", "trust", "trust_async"]
