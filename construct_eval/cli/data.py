"""Commands that make or move run folders: generate, inject, label, import, export,
import-scores, subset."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from construct_eval.cli.common import client_from, dataset_from, price_options, spend_of
from construct_eval.data.datasets.prompts import recorded_choice
from construct_eval.data.generate import GenerationConfig, generate_run
from construct_eval.data.inject import ERROR_KINDS, InjectionConfig
from construct_eval.data.runs import RunDir, RunError
from construct_eval.fields import DOCUMENT
from construct_eval.llm.budget import BudgetReached
from construct_eval.llm.client import EndpointError


def cmd_generate(args: argparse.Namespace) -> int:
    if args.prompt is None and (Path(args.run) / "run.json").is_file():  # a run already made keeps its prompt
        args.prompt = recorded_choice(RunDir(args.run, create=False).meta())
    dataset = dataset_from(args)
    run = RunDir(args.run)
    config = GenerationConfig(
        max_tokens=args.max_tokens,
        json_mode=not args.no_json_mode,
        logprobs=not args.no_logprobs,
        samples=args.samples,
        sample_temperature=args.sample_temperature,
    )

    from construct_eval.llm.prompt_size import LongDocumentPolicy, context_budget

    try:
        policy = LongDocumentPolicy(args.max_document_tokens, args.long_documents) if args.max_document_tokens else None
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None

    if args.dry_run or args.batch:
        return _generate_offline(args, run, dataset, config, policy)
    spend = spend_of(args)

    async def go() -> Any:
        async with client_from(args) as client:
            budget = context_budget(client.endpoint, args.max_context)
            if budget is None and policy is not None:
                print("note: document tokens are estimated (one per 4 characters): no tokenizer at this endpoint")
            return await generate_run(
                run, dataset, client, config, progress=not args.quiet, budget=budget, long_documents=policy,
                spend=spend,
            )  # fmt: skip

    try:
        summary = asyncio.run(go())
    except BudgetReached as exc:
        print(f"stopped at the spending limit: {exc}", file=sys.stderr)
        return 3
    except (RunError, EndpointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"outputs written so far are kept in {run.path}; rerun to resume", file=sys.stderr)
        return 2
    print("\n".join(summary.lines()))
    return 0


def _generate_offline(args: argparse.Namespace, run: RunDir, dataset: Any, config: Any, policy: Any) -> int:
    """``generate --dry-run`` (what it would cost) or ``--batch`` (through the provider's Batch API)."""
    import openai

    from construct_eval.data.generate import plan_generation, prepare_run, request_for
    from construct_eval.judging.batch_api import GenerationWork, run_batches
    from construct_eval.llm.budget import estimate_requests

    client = client_from(args)
    prepare_run(run, dataset)
    plan = plan_generation(run, dataset, config, long_documents=policy)
    if args.dry_run:
        requests = [request_for(dataset, rec, config, s) for rec, s in plan.jobs]
        estimate = estimate_requests(client, requests, **price_options(args))
        print(f"dry run: {plan.summary.documents} documents, {plan.summary.skipped_done} already done")
        print("\n".join(estimate.lines()))
        return 0
    run.write_meta("generator", {"endpoint": client.endpoint.describe(), "config": config.signature()})
    try:
        report = run_batches(run, GenerationWork(run, dataset, config, client, plan), poll_s=args.batch_poll,
                             progress=not args.quiet)  # fmt: skip
    except (RunError, openai.APIError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"the batches are recorded in {run.file('batches')}; rerun to resume polling them", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    return 0


def cmd_label(args: argparse.Namespace) -> int:
    from construct_eval.analysis.collect import label_run

    run = RunDir(args.run, create=False)
    try:
        extra = json.loads(Path(args.rules).read_text()) if args.rules else {}
        summary = label_run(run, data_dir=args.data_dir, extra_rules=extra)
    except (RunError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{summary['documents']} documents: {summary['documents_wrong']} wrong ({summary['document_error_rate']:.1%}),"
        f" {summary['unparsed']} unparsed; leaf fields wrong {summary['field_error_rate']:.1%}"
        f" ({summary['fields_wrong']}/{summary['fields']}); on non-null truth {summary['nonnull_field_error_rate']:.1%}"
        f" ({summary['nonnull_fields_wrong']}/{summary['nonnull_fields']})"
    )
    other = summary.get("other_reading")
    if other:
        print(
            f"with null-like strings {other['null_like_strings']} read as null: {other['documents_wrong']} wrong"
            f" documents, leaf fields wrong {other['field_error_rate']:.1%} ({other['fields_wrong']}/{other['fields']});"
            f" written to labels_other_reading.jsonl"
        )
    if summary["not_generated"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in summary["not_generated_reasons"].items())
        print(
            f"{summary['not_generated']} more documents were not generated ({reasons}):"
            " left out of every rate (a request that failed is not a wrong output)"
        )
    print(f"labels written to {run.file('labels')} (rules {summary['rules_hash']})")
    return 0


def cmd_inject(args: argparse.Namespace) -> int:
    from construct_eval.data.outputs import inject_run

    dataset = dataset_from(args)
    config = InjectionConfig(
        doc_error_rate=args.doc_error_rate,
        min_errors=args.min_errors,
        max_errors=args.max_errors,
        kinds=tuple(args.kinds.split(",")) if args.kinds else ERROR_KINDS,
        seed=args.error_seed,
    )
    try:
        rows = inject_run(RunDir(args.run), dataset, config)
    except (RunError, ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    kinds = Counter(op["kind"] for row in rows for op in row["ops"])
    wrong = sum(bool(row["ops"]) for row in rows)
    print(f"{len(rows)} outputs written, {wrong} with planted errors: {dict(kinds)}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Make a run folder from a JSONL of {id, request, schema?, output, ground_truth?}."""
    from construct_eval.data.outputs import import_items

    run = RunDir(args.run)
    try:
        added = import_items(run, args.items, args.schema)
    except RunError as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"imported {added} documents into {run.path}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from construct_eval.jsonl import replace_jsonl
    from construct_eval.scorers.external import export_items

    run = RunDir(args.run, create=False)
    try:
        rows, not_parsed = export_items(run, data_dir=args.data_dir)
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    replace_jsonl(out, rows)
    print(f"wrote {len(rows)} documents to {out}; {not_parsed} outputs did not parse and are not exported")
    return 0


def cmd_import_scores(args: argparse.Namespace) -> int:
    from construct_eval.scorers.external import ExternalScoreError, read_external_scores

    run = RunDir(args.run, create=False)
    try:
        rows = read_external_scores(args.scores, run, args.scorer)
    except ExternalScoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    run.replace_scorers(rows, {args.scorer})
    docs = [r for r in rows if r["field"] == DOCUMENT]
    unscored = Counter(r["reason"] for r in rows if r["score"] is None)
    print(
        f"{args.scorer}: {len(rows)} score rows for {len({r['id'] for r in rows})} documents"
        f" ({len(docs)} document scores) into {run.file('scores')}; unscored: {dict(unscored) or 0}"
    )
    return 0


def cmd_subset(args: argparse.Namespace) -> int:
    ids = [i.strip() for i in args.docs.split(",") if i.strip()]
    try:
        files = args.files.split(",") if args.files else None
        target = RunDir(args.run, create=False).copy_subset(args.out, ids, files=files)
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(ids)} documents of {args.run} copied to {target.path}")
    return 0
