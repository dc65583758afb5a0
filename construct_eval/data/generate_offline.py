"""Generation without live calls: what a run's calls still to make would cost (a dry run), or
the same calls through a provider's Batch API (submitted, polled, read back as the live path's
output and sample rows, marked ``via: batch``; a killed run resumes polling its batches)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from construct_eval.data.datasets import Dataset
from construct_eval.data.generate import (
    GenerationConfig,
    GenerationJob,
    GenerationPlan,
    output_row,
    plan_generation,
    prepare_run,
    request_for,
)
from construct_eval.data.runs import RunDir
from construct_eval.llm.batch_api import BatchRun, KeyedWork, run_batches
from construct_eval.llm.budget import CostEstimate, estimate_requests
from construct_eval.llm.client import LLMClient
from construct_eval.llm.prompt_size import LongDocumentPolicy


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
