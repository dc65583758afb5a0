"""Run a generator LLM over a dataset: one JSON output per document, in the run folder.

Each output row records the raw reply, the parsed output or why it did not parse, the
token log-probs when the backend returns them (the token log-prob baseline reads them),
usage and latency. ``samples`` extra outputs per document at a higher temperature go to
``samples.jsonl`` (the self-consistency scorer reads them). Rows already written are
skipped, so an interrupted run resumes.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from construct_eval.data.datasets import Dataset, Record, record_row
from construct_eval.data.labels import output_state
from construct_eval.data.runs import RunDir, RunError
from construct_eval.llm.budget import Budget
from construct_eval.llm.client import ChatRequest, ChatResult, LLMClient
from construct_eval.llm.engine import Spending, run_keyed_calls
from construct_eval.llm.prompt_size import ContextBudget, LongDocumentPolicy, estimate_tokens
from construct_eval.parsing import extract_json_object


@dataclass(frozen=True)
class GenerationConfig:
    temperature: float = 0.0
    max_tokens: int = 1536
    json_mode: bool = True  # the backend's JSON mode with the dataset's schema
    logprobs: bool = True
    samples: int = 0  # extra outputs per document for self-consistency
    sample_temperature: float = 1.0

    def signature(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_mode": self.json_mode,
            "logprobs": self.logprobs,
            "samples": self.samples,
            "sample_temperature": self.sample_temperature,
        }


@dataclass
class GenerationSummary:
    documents: int = 0
    written: int = 0
    skipped_done: int = 0
    samples_written: int = 0
    status: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def lines(self) -> list[str]:
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.status.items())) or "nothing new"
        return [
            f"documents: {self.documents} ({self.skipped_done} already done)",
            f"outputs written: {self.written} ({parts}); samples written: {self.samples_written}",
            f"time: {self.seconds:.1f} s",
        ]


def parse_output(result: ChatResult) -> tuple[dict[str, Any] | None, str | None]:
    """The output object, or None and why not. Truncated replies never count as outputs."""
    if not result.ok:
        return None, f"request_failed: {result.error}: {result.error_detail}"
    if result.text is None or not result.text.strip():
        return None, "empty_reply"
    try:
        obj = json.loads(result.text)
    except json.JSONDecodeError:
        if result.finish_reason == "length":
            return None, "truncated: the reply hit max_tokens before the JSON closed"
        obj, why = extract_json_object(result.text)
        if obj is None:
            return None, f"invalid_json: {why}"
    if not isinstance(obj, dict):
        return None, f"invalid_json: expected an object, got {type(obj).__name__}"
    return obj, None


def _output_row(record: Record, result: ChatResult, sample: int, model: str) -> dict[str, Any]:
    output, error = parse_output(result)
    row: dict[str, Any] = {"id": record.id, "sample": sample}
    if error is None:
        row["output"] = output
    else:
        row["parse_error"] = error
    row["state"] = output_state(row)  # parsed, unparsed (the model's failure) or not_generated
    row.update(
        raw=result.text,
        finish_reason=result.finish_reason,
        usage={"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens},
        latency_s=round(result.latency_s, 3),
        cached=result.cached,
        model=model,
    )
    if result.logprobs:
        row["token_logprobs"] = [[t.token, round(t.logprob, 5)] for t in result.logprobs]
    return row


def _request(dataset: Dataset, record: Record, config: GenerationConfig, *, sample: int) -> ChatRequest:
    temperature = config.temperature if sample == 0 else config.sample_temperature
    return ChatRequest(
        messages=dataset.generator_messages(record),
        temperature=temperature,
        max_tokens=config.max_tokens,
        json_schema=dataset.schema_for(record) if config.json_mode else None,
        schema_name="extraction",
        logprobs=config.logprobs,
        top_logprobs=1 if config.logprobs else 0,  # llama.cpp returns no log-probs without top_logprobs
        seed=sample if sample else None,
    )


def prepare_run(run: RunDir, dataset: Dataset) -> None:
    """Write records.jsonl (new documents only), schema.json and the dataset's description.

    The description (run.json's ``dataset``) is how a run that refers to documents by id gets
    their text back, so it changes only when documents are added: a rerun over fewer of them
    (``--limit 6 --samples 5`` on a 30-document run) keeps the one that covers them all.
    """
    have = {row["id"]: row for row in run.iter_rows("records")}
    recorded = (run.meta().get("dataset") or {}).get("system_prompt")
    if have and recorded not in (None, dataset.system_prompt):  # one run, one instruction
        was = (run.meta()["dataset"].get("source") or {}).get("prompt", "package")
        raise RunError(
            f"{run.path}: this run was generated with the {was!r} prompt, not the one asked for now"
            f" ({dataset.source.get('prompt')!r}); pass --prompt {was} or use a new run folder"
        )
    new = []
    for rec in dataset.records:
        old = have.get(rec.id)
        if old is None:
            new.append(record_row(dataset, rec))
        elif old.get("source_hash") not in (None, rec.source_hash):
            raise RunError(f"document {rec.id!r}: this run holds a different text under that id")
    run.append("records", new)
    schema_path = run.path / "schema.json"
    if not schema_path.exists():
        schema_path.write_text(json.dumps(dataset.schema, indent=1, ensure_ascii=False) + "\n")
    if new or "dataset" not in run.meta():
        run.write_meta("dataset", dataset.describe())


@dataclass
class GenerationPlan:
    """The calls a generation run still has to make (no call made to plan them)."""

    jobs: list[tuple[Record, int]]  # (document, sample): 0 is the output, 1.. the samples
    refused: list[dict[str, Any]]  # documents not sent (over the context or the length policy)
    notes: dict[str, dict[str, Any]]  # per document: how it was truncated
    summary: GenerationSummary
    latest: dict[str, dict[str, Any]]


def plan_generation(
    run: RunDir,
    dataset: Dataset,
    config: GenerationConfig,
    *,
    budget: ContextBudget | None = None,
    long_documents: LongDocumentPolicy | None = None,
) -> GenerationPlan:
    """What :func:`generate_run` would send: documents (and samples) not done yet."""
    latest = {row["id"]: row for row in run.iter_rows("outputs")}
    done_outputs = {i for i, row in latest.items() if output_state(row) != "not_generated"}
    done_samples = {(row["id"], row.get("sample")) for row in run.iter_rows("samples")}
    summary = GenerationSummary(documents=len(dataset.records))
    jobs: list[tuple[Record, int]] = []
    notes: dict[str, dict[str, Any]] = {}
    refused: list[dict[str, Any]] = []
    count = budget.count if budget is not None else estimate_tokens
    for rec in dataset.records:
        wanted = [] if rec.id in done_outputs else [0]
        summary.skipped_done += rec.id in done_outputs
        wanted += [s for s in range(1, config.samples + 1) if (rec.id, s) not in done_samples]
        if not wanted:
            continue
        send, note = (rec.text, None) if long_documents is None else long_documents.apply(rec.text, count)
        reason = None
        if send is None:
            reason = f"skipped: document {note['document_tokens']} tokens > --max-document-tokens {note['max_document_tokens']}"  # type: ignore[index]
        elif budget is not None:
            n, reason = budget.shortfall(dataset.generator_messages(replace(rec, text=send)), config.max_tokens)
            note = {**(note or {}), "prompt_tokens": n} if reason else note
        if reason is not None:
            if 0 in wanted:
                refused.append(
                    {"id": rec.id, "sample": 0, "parse_error": reason, "state": "not_generated", **(note or {})}
                )
            continue
        if note:
            notes[rec.id] = {"document_truncated": note}
        jobs.extend((replace(rec, text=send) if send != rec.text else rec, s) for s in wanted)
    return GenerationPlan(jobs, refused, notes, summary, latest)


@dataclass(frozen=True)
class GenerationJob:
    """One generation call: a document's output (sample 0) or one of its samples."""

    record: Record
    sample: int

    @property
    def key(self) -> str:
        """The call's key on the engine and its ``custom_id`` in a batch file."""
        return f"gen:{self.record.id}:{self.sample}"


def request_for(dataset: Dataset, record: Record, config: GenerationConfig, sample: int) -> ChatRequest:
    """The request a generation call sends (for dry runs, spending limits and batch files)."""
    return replace(_request(dataset, record, config, sample=sample), affinity=record.id)


def output_row(record: Record, result: ChatResult, sample: int, model: str) -> dict[str, Any]:
    """The row of one generation reply, however it arrived (live, batch)."""
    return _output_row(record, result, sample, model)


async def generate_run(
    run: RunDir,
    dataset: Dataset,
    client: LLMClient,
    config: GenerationConfig | None = None,
    *,
    progress: bool = True,
    budget: ContextBudget | None = None,
    long_documents: LongDocumentPolicy | None = None,
    spend: Budget | None = None,
) -> GenerationSummary:
    """Generate the outputs (and samples) that ``run`` does not have yet.

    A document whose last attempt was not generated (a failed request) is tried again. With
    a ``budget`` (the endpoint's context is known), a prompt that cannot fit with
    ``max_tokens`` for the reply is not sent: it is reported at once, by id and token count,
    and recorded as not generated. ``long_documents`` skips or truncates documents over its
    token limit, recorded on the row. With ``spend``, no call starts that could pass its limit
    (:class:`~construct_eval.llm.budget.BudgetReached` after the calls in flight are written).
    """
    config = config or GenerationConfig()
    started = time.perf_counter()
    prepare_run(run, dataset)
    run.write_meta("generator", {"endpoint": client.endpoint.describe(), "config": config.signature()})
    plan = plan_generation(run, dataset, config, budget=budget, long_documents=long_documents)
    jobs, refused, notes, summary, latest = plan.jobs, plan.refused, plan.notes, plan.summary, plan.latest
    if refused:
        for row in refused:
            print(f"not sent: document {row['id']!r}: {row['parse_error']}", flush=True)
        new = [r for r in refused if latest.get(r["id"], {}).get("parse_error") != r["parse_error"]]
        run.append("outputs", new)
        summary.status["not_generated"] += len(new)
    model = client.endpoint.model

    async def call(job: GenerationJob) -> dict[str, Any]:
        result = await client.complete(request_for(dataset, job.record, config, job.sample))
        return _output_row(job.record, result, job.sample, model) | notes.get(job.record.id, {})

    def write(rows: list[dict[str, Any]]) -> int:
        n = 0
        for row in rows:
            if row["sample"] == 0:
                n += run.append("outputs", [row])
                summary.written += 1
                summary.status[row["state"]] += 1
            else:
                n += run.append("samples", [row])
                summary.samples_written += 1
        return n

    spending = None if spend is None else Spending(spend, lambda j: request_for(dataset, j.record, config, j.sample))
    try:
        await run_keyed_calls(
            [GenerationJob(rec, sample) for rec, sample in jobs],
            (),  # planning left out what is generated
            call,
            write,
            concurrency=client.concurrency,
            progress=progress,
            desc="generating",
            where=lambda j: f"document {j.record.id!r}" + (f", sample {j.sample}" if j.sample else ""),
            spending=spending,
            announce=False,
        )
    finally:
        summary.seconds = time.perf_counter() - started
    return summary
