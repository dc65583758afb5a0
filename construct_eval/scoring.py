"""Run the judge over a run folder: resumable, bounded, with progress and a summary."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from construct_eval.judge import Judge, JudgeTask
from construct_eval.llm import EndpointError
from construct_eval.runs import RunDir


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


def _progress(total: int, enabled: bool, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit="call", dynamic_ncols=True)


async def score_run(
    run: RunDir,
    judge: Judge,
    modes: Sequence[str],
    *,
    limit: int | None = None,
    progress: bool = True,
    data_dir: str | os.PathLike[str] | None = None,
) -> ScoreSummary:
    """Judge every output of ``run`` in ``modes``, appending judgments as calls finish.

    Work already in ``judgments.jsonl`` (same document, output, field, mode, endpoint and
    configuration) is skipped, so an interrupted run resumes where it stopped.
    """
    started = time.perf_counter()
    items, skipped = run.judge_inputs(data_dir=data_dir)
    if limit is not None:
        items = items[:limit]
    done = {row["key"] for row in run.iter_rows("judgments") if "key" in row}
    summary = ScoreSummary(documents=len(items), outputs_not_judgeable=skipped)
    run.write_meta("judge", {"endpoint": judge.client.endpoint.describe(), "config": judge.config.signature()})

    stats0 = _snapshot(judge)
    n_workers = judge.client.concurrency * 2  # a prepared call waits behind every call in flight
    queue: asyncio.Queue[JudgeTask | None] = asyncio.Queue(maxsize=4 * n_workers)
    bar = _progress(0, progress, "judging")
    failure: list[BaseException] = []

    async def planner() -> None:
        # Calls start as soon as the first document is planned; planning the rest overlaps them.
        try:
            for item in items:
                if failure:
                    return
                try:
                    planned = judge.plan(item, modes)
                except Exception as exc:  # bad schema or output: name the document
                    failure.append(ScoringError(f"document {item.doc_id!r}: cannot plan judge calls: {exc}"))
                    failure[-1].__cause__ = exc
                    return
                summary.tasks_planned += len(planned)
                for task in planned:
                    if all(k in done for k in task.keys):
                        summary.tasks_skipped_done += 1
                    else:
                        bar.total = (bar.total or 0) + 1
                        await queue.put(task)
                await asyncio.sleep(0)  # let the workers send what is planned
        finally:
            bar.refresh()
            for _ in range(n_workers):
                await queue.put(None)

    async def worker() -> None:
        while (task := await queue.get()) is not None:
            if failure:
                continue  # drain: the planner must be able to put its end markers
            try:
                judgments = await judge.run_task(task, skip_keys=done)
            except EndpointError as exc:
                failure.append(exc)
                continue
            except Exception as exc:
                where = task.paths[0] if len(task.paths) == 1 else f"{len(task.paths)} fields"
                failure.append(ScoringError(f"document {task.item.doc_id!r}, {task.mode} {where}: {exc}"))
                failure[-1].__cause__ = exc
                continue
            rows = [j.to_dict() for j in judgments]
            summary.judgments_written += run.append("judgments", rows)
            for j in judgments:
                summary.status[j.status] += 1
                if j.reason:
                    summary.unscored_by_reason[j.reason] += 1
            bar.update(1)

    try:
        await asyncio.gather(planner(), *(worker() for _ in range(n_workers)))
    finally:
        bar.close()
        _fill_stats(summary, judge, stats0)
        summary.seconds = time.perf_counter() - started
    if failure:
        raise failure[0]
    return summary


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
