"""Run the judge over a run folder: resumable, bounded, with progress and a summary."""

from __future__ import annotations

import datetime as _dt
import os
import time
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.judging.judge import Judge, JudgeConfig, JudgeTask
from construct_eval.llm.budget import Budget, BudgetReached
from construct_eval.llm.client import (
    ChatRequest,
    Endpoint,
    EndpointError,
    LLMClient,
    cache_key,
    make_client,
    request_kwargs,
    run_sync,
)
from construct_eval.llm.engine import run_tasks
from construct_eval.llm.prompt_size import CHARS_PER_TOKEN, MESSAGE_OVERHEAD_TOKENS, estimate_tokens


class ScoringError(RuntimeError):
    """A document or field could not be judged for a reason that is not the endpoint's."""


@dataclass
class ScoreSummary:
    documents: int = 0
    tasks_planned: int = 0
    tasks_skipped_done: int = 0
    judgments_written: int = 0
    calls_made: int = 0
    cache_hits: int = 0
    retries: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    outputs_not_judgeable: list[dict[str, Any]] = field(default_factory=list)
    status: Counter[str] = field(default_factory=Counter)
    unscored_by_reason: Counter[str] = field(default_factory=Counter)

    @property
    def unscored_rate(self) -> float:
        total = sum(self.status.values())
        return self.status.get("unscored", 0) / total if total else 0.0

    def lines(self) -> list[str]:
        out = [
            f"documents: {self.documents}  calls planned: {self.tasks_planned}  already done: {self.tasks_skipped_done}",
            f"judgments written: {self.judgments_written}  calls made: {self.calls_made}  "
            f"cache hits: {self.cache_hits}  retries: {self.retries}  failed calls: {self.failed_calls}",
            f"tokens: prompt {self.prompt_tokens}  completion {self.completion_tokens}  time: {self.seconds:.1f}s",
            f"unscored rate (this session): {self.unscored_rate:.1%}",
        ]
        for reason, n in self.unscored_by_reason.most_common():
            out.append(f"  unscored {reason}: {n}")
        if self.outputs_not_judgeable:
            out.append(f"outputs not judged (did not parse): {len(self.outputs_not_judgeable)}")
        return out


def plan_score(
    run: RunDir,
    judge: Judge,
    modes: Sequence[str],
    *,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> tuple[ScoreSummary, list[JudgeTask], set[str]]:
    """The calls :func:`score_run` would make (no model call): a summary with the counts, the
    tasks still to do, and the judgment keys already written."""
    items, skipped = run.judge_inputs(data_dir=data_dir)
    if ids is not None:
        wanted = set(ids)
        unknown = wanted - {i.doc_id for i in items} - {s["id"] for s in skipped}
        if unknown:
            raise ScoringError(f"{run.path}: no output for document(s) {sorted(unknown)[:5]}")
        items = [i for i in items if i.doc_id in wanted]
        skipped = [s for s in skipped if s["id"] in wanted]
    if limit is not None:
        items = items[:limit]
    done = judge.done_keys(run.iter_rows("judgments"))
    summary = ScoreSummary(documents=len(items), outputs_not_judgeable=skipped)
    todo: list[JudgeTask] = []
    for item in items:
        try:
            planned = judge.plan(item, modes)
        except Exception as exc:  # bad schema or output: name the document
            raise ScoringError(f"document {item.doc_id!r}: cannot plan judge calls: {exc}") from exc
        summary.tasks_planned += len(planned)
        for task in planned:
            if all(k in done for k in task.keys):
                summary.tasks_skipped_done += 1
            else:
                todo.append(task)
    return summary, todo, done


LOWEST_ESTIMATE_RATIO = 0.78
"""The estimate was as low as 0.79 of the exact token count (PII prompts, SmolLM2's tokenizer;
results/benchmarks/token_estimate.txt, 0.79-1.06 over four datasets and two tokenizers): the
worst-case cost divides input tokens by this, so it is an upper bound there too."""


@dataclass(frozen=True)
class CostEstimate:
    """What the planned calls would cost, before any is made."""

    calls: int  # planned calls not yet done and not in the response cache
    cached: int  # planned calls the response cache would answer (free)
    input_tokens: int  # estimated (characters / CHARS_PER_TOKEN, plus each message's template overhead)
    output_tokens_max: int  # every call writing its max_tokens: the worst case
    price_in: float | None = None  # per million tokens
    price_out: float | None = None
    discount: float = 0.0  # e.g. 0.5 for a provider's batch price

    @property
    def cost_max(self) -> float | None:
        if self.price_in is None or self.price_out is None:
            return None
        high_in = self.input_tokens / LOWEST_ESTIMATE_RATIO
        full = high_in * self.price_in / 1e6 + self.output_tokens_max * self.price_out / 1e6
        return full * (1 - self.discount)

    def lines(self) -> list[str]:
        out = [
            f"calls to make: {self.calls} (and {self.cached} answered by the response cache)",
            f"input tokens: about {self.input_tokens} (estimated: {CHARS_PER_TOKEN:g} characters per token"
            f" + {MESSAGE_OVERHEAD_TOKENS} per message; measured 0.79-1.06x the exact counts),"
            f" at most {round(self.input_tokens / LOWEST_ESTIMATE_RATIO)}",
            f"output tokens: at most {self.output_tokens_max} (every call writing its max_tokens)",
        ]
        if self.cost_max is not None:
            disc = f", {self.discount:.0%} discount" if self.discount else ""
            out.append(
                f"cost: at most {self.cost_max:.4f} at {self.price_in:g} in / {self.price_out:g} out per million"
                f" tokens{disc} (input at its upper bound, every call writing max_tokens)"
            )
        return out


def worst_case_tokens(req: ChatRequest) -> tuple[float, int]:
    """A call's input tokens at the estimate's upper bound, and its output at max_tokens."""
    tokens_in = sum(estimate_tokens(str(m.get("content") or "")) + MESSAGE_OVERHEAD_TOKENS for m in req.messages)
    return tokens_in / LOWEST_ESTIMATE_RATIO, req.max_tokens or 0


def estimate_requests(
    client: LLMClient,
    requests: Iterable[ChatRequest],
    *,
    price_in: float | None = None,
    price_out: float | None = None,
    discount: float = 0.0,
) -> CostEstimate:
    """Tokens and money for ``requests`` (no model call; a cached reply costs nothing)."""
    calls = cached = tokens_in = tokens_out = 0
    for req in requests:
        if client.cache is not None and client.cache.get(
            cache_key(client.endpoint, request_kwargs(client.endpoint, req))
        ):
            cached += 1
            continue
        calls += 1
        tokens_in += sum(estimate_tokens(str(m.get("content") or "")) + MESSAGE_OVERHEAD_TOKENS for m in req.messages)
        tokens_out += req.max_tokens or 0
    return CostEstimate(calls, cached, tokens_in, tokens_out, price_in, price_out, discount)


def estimate_cost(
    judge: Judge,
    tasks: Sequence[JudgeTask],
    *,
    price_in: float | None = None,
    price_out: float | None = None,
    discount: float = 0.0,
) -> CostEstimate:
    """Tokens and money for the judge's ``tasks`` (no model call)."""
    requests = (judge.request_for(t) for t in tasks)
    return estimate_requests(judge.client, requests, price_in=price_in, price_out=price_out, discount=discount)


async def score_run(
    run: RunDir,
    judge: Judge,
    modes: Sequence[str],
    *,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    progress: bool = True,
    data_dir: str | os.PathLike[str] | None = None,
    budget: Budget | None = None,
) -> ScoreSummary:
    """Judge every output of ``run`` in ``modes``, appending judgments as calls finish.

    Work already in ``judgments.jsonl`` (same document, output, field, mode, endpoint identity
    and configuration; see :meth:`Judge.done_keys`) is skipped, so an interrupted run resumes
    where it stopped and a finished one makes no call. ``limit`` keeps the first N documents,
    ``ids`` only the documents named. All calls are planned before the first is sent (planning
    costs no model call), so the progress bar shows the real total.
    """
    started = time.perf_counter()
    summary, todo, done = plan_score(run, judge, modes, limit=limit, ids=ids, data_dir=data_dir)
    record_judge(run, judge)

    def write(rows: list[dict[str, Any]]) -> None:
        summary.judgments_written += run.append("judgments", rows)
        for r in rows:
            summary.status[r["status"]] += 1
            if r["reason"]:
                summary.unscored_by_reason[r["reason"]] += 1

    async def call(task: JudgeTask) -> list[dict[str, Any]]:
        if budget is None:
            return [j.to_dict() for j in await judge.run_task(task, skip_keys=done)]
        worst = budget.cost(*worst_case_tokens(judge.request_for(task)))
        budget.reserve(worst)
        judgments = []
        try:
            judgments = await judge.run_task(task, skip_keys=done)
        finally:
            first = judgments[0] if judgments else None
            actual = 0.0
            if first is not None and not first.cached:
                actual = budget.cost(first.prompt_tokens or 0, first.completion_tokens or 0)
            budget.settle(worst, actual)
        return [j.to_dict() for j in judgments]

    def name(task: JudgeTask, exc: Exception) -> ScoringError:
        where = task.paths[0] if len(task.paths) == 1 else f"{len(task.paths)} fields"
        return ScoringError(f"document {task.item.doc_id!r}, {task.mode} {where}: {exc}")

    stats0 = _snapshot(judge)
    try:
        await run_tasks(
            todo,
            call,
            write,
            concurrency=judge.client.concurrency,
            progress=progress,
            desc="judging",
            on_error=name,
            fatal=(EndpointError, BudgetReached),
        )
    finally:
        _fill_stats(summary, judge, stats0)
        summary.seconds = time.perf_counter() - started
    return summary


def record_judge(run: RunDir, judge: Judge) -> None:
    """Add this judge's endpoint and configuration to run.json's ``judges`` history.

    One entry per configuration hash (the ``config_hash`` of its judgments), with when it was
    first and last used; ``judge`` keeps the latest, as before. Nothing earlier is overwritten.
    """
    meta = run.meta()
    history: list[dict[str, Any]] = list(meta.get("judges") or [])
    if not history and meta.get("judge"):
        history.append({**meta["judge"], "recorded": "before judge histories were kept"})
    entry = {
        "endpoint": judge.client.endpoint.describe(),
        "config": judge.config.signature(),
        "config_hash": judge.config.hash,
        "concurrency": judge.client.concurrency,
    }
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    same = [
        h for h in history if h.get("config_hash") == entry["config_hash"] and h.get("endpoint") == entry["endpoint"]
    ]
    if same:
        same[0]["last_used"] = now
    else:
        history.append({**entry, "first_used": now, "last_used": now})
    run.write_meta("judges", history)
    run.write_meta("judge", {k: entry[k] for k in ("endpoint", "config", "config_hash")})


def _snapshot(judge: Judge) -> dict[str, int]:
    s = judge.client.stats
    return dict(vars(s))


def _fill_stats(summary: ScoreSummary, judge: Judge, before: dict[str, int]) -> None:
    s = vars(judge.client.stats)
    summary.calls_made = s["calls"] - before["calls"]
    summary.cache_hits = s["cache_hits"] - before["cache_hits"]
    summary.retries = s["retries"] - before["retries"]
    summary.failed_calls = s["failures"] - before["failures"]
    summary.prompt_tokens = s["prompt_tokens"] - before["prompt_tokens"]
    summary.completion_tokens = s["completion_tokens"] - before["completion_tokens"]


def judge_run(
    run: RunDir,
    endpoint: Endpoint,
    modes: str | Sequence[str] = ("doc", "fields"),
    *,
    config: JudgeConfig | None = None,
    cache: bool = True,
    identify_server: bool = True,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    progress: bool = True,
    data_dir: str | os.PathLike[str] | None = None,
) -> ScoreSummary:
    """:func:`score_run` from synchronous code (notebooks, the demo, scripts), with the client made
    for ``endpoint`` the one way every entry point makes it (:func:`make_client`); ``modes`` in
    any spelling (``"doc"``, ``"fields"``, ``"doc,fields"``)."""

    async def go() -> ScoreSummary:
        async with make_client(endpoint, identify_server=identify_server, cache=cache) as client:
            judge = Judge(client, config or JudgeConfig())
            return await score_run(run, judge, modes, limit=limit, ids=ids, progress=progress, data_dir=data_dir)

    return run_sync(go())
