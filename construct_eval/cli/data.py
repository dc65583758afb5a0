"""Commands that make or move run folders: generate, inject, label, import, export,
import-scores, subset."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from construct_eval.cli.common import client_from, dataset_from, parse_ids, print_report, stage_run_options
from construct_eval.data.datasets.prompts import recorded_choice
from construct_eval.data.generate import GenerationConfig
from construct_eval.data.inject import ALL_KINDS, ERROR_KINDS, InjectionConfig
from construct_eval.data.runs import RunDir
from construct_eval.fields import DOCUMENT


def cmd_generate(args: argparse.Namespace) -> int:
    from construct_eval.data.generate_stage import generate
    from construct_eval.llm.prompt_size import LongDocumentPolicy

    if args.prompt is None and (Path(args.run) / "run.json").is_file():  # a run already made keeps its prompt
        args.prompt = recorded_choice(RunDir(args.run, create=False).meta())
    config = GenerationConfig(
        max_tokens=args.max_tokens,
        json_mode=not args.no_json_mode,
        logprobs=not args.no_logprobs,
        samples=args.samples,
        sample_temperature=args.sample_temperature,
    )
    policy = LongDocumentPolicy(args.max_document_tokens, args.long_documents) if args.max_document_tokens else None
    dataset, options = dataset_from(args), stage_run_options(args)
    if args.ids:
        dataset = dataset.only(parse_ids(args.ids))
    report = generate(RunDir(args.run), dataset, client_from(args), config, max_context=args.max_context,
                      long_documents=policy, **options)  # fmt: skip
    return print_report(report)


def cmd_label(args: argparse.Namespace) -> int:
    from construct_eval.reports.collect import label_run
    from construct_eval.reports.lines import label_lines

    run = RunDir(args.run, create=False)
    extra = json.loads(Path(args.rules).read_text()) if args.rules else {}
    summary = label_run(run, data_dir=args.data_dir, extra_rules=extra)
    print("\n".join(label_lines(summary, run.file("labels"))))
    return 0


def cmd_inject(args: argparse.Namespace) -> int:
    from construct_eval.data.outputs import inject_run

    dataset = dataset_from(args)
    near = getattr(args, "near_miss_share", None)
    config = InjectionConfig(
        doc_error_rate=args.doc_error_rate,
        min_errors=args.min_errors,
        max_errors=args.max_errors,
        kinds=tuple(args.kinds.split(",")) if args.kinds else ALL_KINDS if near is not None else ERROR_KINDS,
        seed=args.error_seed,
        near_miss_share=near,
    )
    rows = inject_run(RunDir(args.run), dataset, config)
    kinds = Counter(op["kind"] for row in rows for op in row["ops"])
    wrong = sum(bool(row["ops"]) for row in rows)
    print(f"{len(rows)} outputs written, {wrong} with planted errors: {dict(kinds)}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Make a run folder from a JSONL of {id, request, schema?, output, ground_truth?}."""
    from construct_eval.data.outputs import import_items

    run = RunDir(args.run)
    added = import_items(run, args.items, args.schema)
    print(f"imported {added} documents into {run.path}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from construct_eval.jsonl import replace_jsonl
    from construct_eval.scorers.external import export_items

    run = RunDir(args.run, create=False)
    rows, not_parsed = export_items(run, data_dir=args.data_dir)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    replace_jsonl(out, rows)
    print(f"wrote {len(rows)} documents to {out}; {not_parsed} outputs did not parse and are not exported")
    return 0


def cmd_import_scores(args: argparse.Namespace) -> int:
    from construct_eval.scorers.external import read_external_scores

    run = RunDir(args.run, create=False)
    rows = read_external_scores(args.scores, run, args.scorer)
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
    files = args.files.split(",") if args.files else None
    target = RunDir(args.run, create=False).copy_subset(args.out, ids, files=files)
    print(f"{len(ids)} documents of {args.run} copied to {target.path}")
    return 0
