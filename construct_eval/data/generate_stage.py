"""Generation as a stage, the way the judge and the other stages run (:func:`generate`): live on
the engine (:func:`~construct_eval.data.generate.generate_run`), a dry run (what the calls still
to make would cost), or the provider's Batch API (submitted, polled, read back as the live
path's output and sample rows, marked ``via: batch``; a killed run resumes polling its
batches). Failures come back as the engine's ``StageFailed``/``StageStopped``."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from construct_eval.data.datasets import Dataset
from construct_eval.data.generate import (
    GenerationConfig,
    GenerationJob,
    GenerationPlan,
    generate_run,
    output_row,
    plan_generation,
    prepare_run,
    request_for,
)
from construct_eval.data.runs import RunDir, RunError
from construct_eval.llm.batch_api import BatchRun, KeyedWork, run_batches
from construct_eval.llm.budget import Budget, CostEstimate, estimate_requests
from construct_eval.llm.client import LLMClient
from construct_eval.llm.engine import kept_on_failure
from construct_eval.llm.prompt_size import LongDocumentPolicy, context_budget


def estimate_generation(
    run: RunDir,
    dataset: Dataset,
    client: LLMClient,
    config: GenerationConfig,
    *,
    long_documents: LongDocumentPolicy | None = None,
    prices: Mapping[str, Any] | None = None,
) -> tuple[GenerationPlan, CostEstimate]:
    """The calls :func:`~construct_eval.data.generate.generate_run` would still make and what
    they would cost at ``prices`` (as :func:`~construct_eval.llm.budget.estimate_requests`
    takes them); no model call. The run folder gets its records and schema, as a live run's."""
    prepare_run(run, dataset)
    plan = plan_generation(run, dataset, config, long_documents=long_documents)
    requests = [request_for(dataset, rec, config, s) for rec, s in plan.jobs]
    return plan, estimate_requests(client, requests, **(prices or {}))


def generation_work(
    run: RunDir, dataset: Dataset, config: GenerationConfig, client: LLMClient, plan: GenerationPlan
) -> KeyedWork:
    """A generation plan's calls for a batch: replies become output rows (sample 0) and sample
    rows, as live replies do."""
    jobs = [GenerationJob(rec, s) for rec, s in plan.jobs]
    return KeyedWork(
        run,
        client,
        jobs,
        set(),
        lambda j: request_for(dataset, j.record, config, j.sample),
        lambda j, result: output_row(j.record, result, j.sample, client.endpoint.model),
        lambda row: "outputs" if row["sample"] == 0 else "samples",
    )


def generate_batch(
    run: RunDir,
    dataset: Dataset,
    client: LLMClient,
    config: GenerationConfig,
    *,
    long_documents: LongDocumentPolicy | None = None,
    poll_s: float = 30.0,
    progress: bool = True,
) -> BatchRun:
    """Generate the outputs (and samples) ``run`` does not have yet through the provider's Batch
    API (or resume polling the run's batches); returns what the batches did."""
    prepare_run(run, dataset)
    run.write_meta("generator", {"endpoint": client.endpoint.describe(), "config": config.signature()})
    plan = plan_generation(run, dataset, config, long_documents=long_documents)
    return run_batches(run, generation_work(run, dataset, config, client, plan), poll_s=poll_s, progress=progress)


@dataclass
class GenerationDryRun:
    """What a generation run's calls still to make would cost; nothing was called."""

    plan: GenerationPlan
    estimate: CostEstimate

    def lines(self) -> list[str]:
        s = self.plan.summary
        return [f"dry run: {s.documents} documents, {s.skipped_done} already done", *self.estimate.lines()]


def generate(
    run: RunDir,
    dataset: Dataset,
    client: LLMClient,
    config: GenerationConfig,
    *,
    max_context: int | None = None,
    long_documents: LongDocumentPolicy | None = None,
    progress: bool = True,
    dry_run: bool = False,
    prices: Mapping[str, Any] | None = None,
    budget: Budget | None = None,
    batch: bool = False,
    batch_poll: float = 30.0,
) -> Any:
    """Generate what ``run`` does not have yet: a dry run's cost (:class:`GenerationDryRun`),
    the Batch API's report, or live calls on the engine within ``budget`` (the
    :class:`~construct_eval.data.generate.GenerationSummary`); each has ``lines()``.
    ``max_context`` is the endpoint's context in tokens (the embedded server's is known):
    prompts that cannot fit with the reply are reported and not sent. Raises
    :class:`~construct_eval.llm.engine.StageFailed` (what was written is kept; a rerun resumes)
    or :class:`~construct_eval.llm.engine.StageStopped` at the spending limit."""
    if dry_run:
        plan, estimate = estimate_generation(run, dataset, client, config, long_documents=long_documents, prices=prices)
        return GenerationDryRun(plan, estimate)
    if batch:
        import openai

        kept = f"the batches are recorded in {run.file('batches')}; rerun to resume polling them"
        with kept_on_failure(kept, (RunError, openai.APIError)):
            return generate_batch(
                run, dataset, client, config, long_documents=long_documents, poll_s=batch_poll, progress=progress
            )

    async def go() -> Any:
        async with client:
            fits = context_budget(client.endpoint, max_context)
            if fits is None and long_documents is not None:
                print("note: document tokens are estimated (one per 4 characters): no tokenizer at this endpoint")
            return await generate_run(
                run, dataset, client, config, progress=progress, budget=fits, long_documents=long_documents,
                spend=budget,
            )  # fmt: skip

    with kept_on_failure(f"outputs written so far are kept in {run.path}; rerun to resume", (RunError,)):
        return asyncio.run(go())
