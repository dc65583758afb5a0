"""Run the judge over a run folder: resumable, bounded, with progress and a summary."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from construct_eval.data.runs import RunDir, RunError
from construct_eval.judging.batch import JudgeWork
from construct_eval.judging.judge import Judge, JudgeConfig, JudgeTask
from construct_eval.judging.planning import ScoreSummary, ScoringError, plan_score, record_judge
from construct_eval.judging.stage import StageOptions
from construct_eval.llm.batch_api import run_batches
from construct_eval.llm.budget import Budget, CostEstimate, estimate_requests
from construct_eval.llm.client import Endpoint, LLMClient, make_client, run_sync
from construct_eval.llm.engine import Spending, kept_on_failure, run_keyed_calls


def estimate_cost(judge: Judge, tasks: Sequence[JudgeTask], **prices: Any) -> CostEstimate:
    """Tokens and money for the judge's ``tasks`` (no model call); ``prices`` as
    :func:`~construct_eval.llm.budget.estimate_requests` takes them."""
    return estimate_requests(judge.client, (judge.request_for(t) for t in tasks), **prices)


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
    if judge.client.fleet is not None:  # each replica works on its own documents at once
        todo = interleave_documents(todo, len(judge.client.fleet.urls))
    record_judge(run, judge)

    def write(rows: list[dict[str, Any]]) -> int:
        n = run.append("judgments", rows)
        summary.judgments_written += n
        for r in rows:
            summary.status[r["status"]] += 1
            if r["reason"]:
                summary.unscored_by_reason[r["reason"]] += 1
        return n

    async def call(task: JudgeTask) -> list[dict[str, Any]]:
        return [j.to_dict() for j in await judge.run_task(task, skip_keys=done)]

    def where(task: JudgeTask) -> str:
        fields = task.paths[0] if len(task.paths) == 1 else f"{len(task.paths)} fields"
        return f"document {task.item.doc_id!r}, {task.mode} {fields}"

    stats0 = _snapshot(judge)
    try:
        await run_keyed_calls(
            todo,
            (),  # planning left out the tasks whose judgments are all written
            call,
            write,
            concurrency=judge.client.concurrency,
            progress=progress,
            desc="judging",
            where=where,
            spending=None if budget is None else Spending(budget, judge.request_for),
            error=ScoringError,
            announce=False,
        )
    finally:
        _fill_stats(summary, judge, stats0)
        summary.seconds = time.perf_counter() - started
    return summary


def interleave_documents(tasks: Sequence[JudgeTask], streams: int) -> list[JudgeTask]:
    """Tasks reordered for a fleet: documents dealt into ``streams`` queues (a document's calls
    stay together in their queue) and the queues taken in turn, so that concurrent workers start
    different documents, which prefix affinity then keeps on different replicas; on one server
    the plan order (a document's calls back to back) is what shares the prefix."""
    by_doc: dict[str, list[JudgeTask]] = {}
    for t in tasks:
        by_doc.setdefault(t.item.doc_id, []).append(t)
    queues: list[list[JudgeTask]] = [[] for _ in range(max(1, streams))]
    for i, doc_tasks in enumerate(by_doc.values()):
        queues[i % len(queues)].extend(doc_tasks)
    out: list[JudgeTask] = []
    for k in range(max((len(q) for q in queues), default=0)):
        out += [q[k] for q in queues if k < len(q)]
    return out


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


@dataclass
class ScoreOutcome:
    """What :func:`score` did: a dry run's plan and cost, the batches' report, the live summary
    (the batches and then the live fallback's, where both ran)."""

    plan: ScoreSummary | None = None
    estimate: CostEstimate | None = None
    batches: list[str] = field(default_factory=list)
    summary: ScoreSummary | None = None

    def lines(self) -> list[str]:
        """What the CLI prints."""
        out: list[str] = []
        if self.estimate is not None and self.plan is not None:
            p = self.plan
            out += [
                f"dry run: {p.documents} documents, {p.tasks_planned} calls planned, {p.tasks_skipped_done} already done",
                *self.estimate.lines(),
            ]
        out += self.batches
        if self.batches and self.summary is not None:
            out.append("live fallback: the calls the batches left undone")
        return out + (self.summary.lines() if self.summary is not None else [])


def score(
    run: RunDir,
    client: LLMClient,
    config: JudgeConfig,
    modes: Sequence[str],
    *,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    options: StageOptions | None = None,
    batch_fallback: bool = False,
) -> ScoreOutcome:
    """Judge ``run`` as ``options`` say, the way the other stages run (:func:`make_calls`): a
    dry run (the calls after resume and cache, their tokens and cost at ``options.prices``), the
    provider's Batch API (then, with ``batch_fallback``, the lines it left undone as live calls),
    or live calls on the engine within ``options.budget``. Raises
    :class:`~construct_eval.llm.engine.StageFailed` (what was written is kept; a rerun resumes)
    or :class:`~construct_eval.llm.engine.StageStopped` at the spending limit."""
    options = options or StageOptions()
    judge = Judge(client, config)
    selection: dict[str, Any] = {"limit": limit, "ids": ids, "data_dir": data_dir}
    outcome = ScoreOutcome()
    if options.dry_run:
        with kept_on_failure("nothing was called", (RunError,)):
            plan, todo, _ = plan_score(run, judge, modes, **selection)
        outcome.plan, outcome.estimate = plan, estimate_cost(judge, todo, **options.prices)
        return outcome
    if options.batch:
        import openai

        kept = f"the batches are recorded in {run.file('batches')}; rerun to resume polling them"
        with kept_on_failure(kept, (RunError, openai.APIError)):
            work = JudgeWork(run, judge, modes, **selection)
            outcome.batches = run_batches(run, work, poll_s=options.batch_poll, progress=options.progress).lines()
        if not batch_fallback:
            return outcome

    async def go() -> ScoreSummary:
        async with client:
            return await score_run(run, judge, modes, progress=options.progress, budget=options.budget, **selection)

    with kept_on_failure(f"judgments written so far are kept in {run.file('judgments')}; rerun to resume", (RunError,)):
        outcome.summary = asyncio.run(go())
    return outcome
