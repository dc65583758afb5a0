"""``construct-eval``: command-line entry points, thin over the package's modules."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from construct_eval.judge import MODES, Judge, JudgeConfig
from construct_eval.llm import Endpoint, EndpointError, LLMClient, ResponseCache, RetryPolicy, default_cache_path
from construct_eval.prompts import PromptVariant
from construct_eval.runs import RunDir, RunError, iter_jsonl
from construct_eval.scoring import ScoringError, score_run

MODE_ALIASES = {
    "doc": "doc",
    "document": "doc",
    "field": "field",
    "fields": "field",
    "fields-joint": "fields-joint",
    "joint": "fields-joint",
}


def _modes(text: str) -> list[str]:
    modes = []
    for part in text.split(","):
        part = part.strip()
        if part not in MODE_ALIASES:
            raise argparse.ArgumentTypeError(f"unknown mode {part!r}; use doc, fields or fields-joint")
        modes.append(MODE_ALIASES[part])
    return modes


def _add_endpoint_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--base-url",
        default=os.environ.get("CONSTRUCT_EVAL_BASE_URL"),
        help="OpenAI-compatible URL, e.g. http://127.0.0.1:8080/v1",
    )
    p.add_argument("--model", default=os.environ.get("CONSTRUCT_EVAL_MODEL"), help="model name the endpoint knows")
    p.add_argument("--backend", default="auto", choices=["auto", "openai", "llamacpp", "generic"])
    p.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="name of the environment variable holding the key (never pass the key itself)",
    )
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per request attempt")
    p.add_argument("--max-retries", type=int, default=4)
    p.add_argument("--cache", default=None, help=f"response cache file (default {default_cache_path()})")
    p.add_argument("--no-cache", action="store_true")


def _client(args: argparse.Namespace) -> LLMClient:
    if not args.base_url or not args.model:
        raise SystemExit(
            "error: --base-url and --model are required (or set CONSTRUCT_EVAL_BASE_URL and CONSTRUCT_EVAL_MODEL)"
        )
    endpoint = Endpoint(args.base_url, args.model, backend=args.backend, api_key=os.environ.get(args.api_key_env))
    cache: Any = False if args.no_cache else (ResponseCache(args.cache) if args.cache else True)
    return LLMClient(
        endpoint,
        concurrency=args.concurrency,
        timeout_s=args.timeout,
        retry=RetryPolicy(max_retries=args.max_retries),
        cache=cache,
    )


def cmd_score(args: argparse.Namespace) -> int:
    run = RunDir(args.run, create=False)
    config = JudgeConfig(
        constrained=args.constrained,
        max_tokens=args.max_tokens,
        granularity=args.granularity,
        variant=PromptVariant.parse(args.variant),
        logprobs=not args.no_logprobs,
    )

    async def go() -> Any:
        async with _client(args) as client:
            return await score_run(run, Judge(client, config), args.mode, limit=args.limit, progress=not args.quiet)

    try:
        summary = asyncio.run(go())
    except (RunError, ScoringError, EndpointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"judgments written so far are kept in {run.file('judgments')}; rerun to resume", file=sys.stderr)
        return 2
    print("\n".join(summary.lines()))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Make a run folder from a JSONL of {id, request, schema?, output, ground_truth?}."""
    run = RunDir(args.run)
    have = {r["id"] for r in run.iter_rows("records")}
    records, outputs = [], []
    try:
        rows = list(iter_jsonl(Path(args.items)))
    except RunError as exc:
        raise SystemExit(f"error: {exc}") from None
    for number, row in enumerate(rows, start=1):
        doc_id = str(row.get("id", number))
        if "request" not in row or "output" not in row:
            raise SystemExit(f"error: {args.items} (document {doc_id!r}): needs 'request' and 'output'")
        if doc_id in have:
            continue
        have.add(doc_id)
        record = {"id": doc_id, "request": row["request"]}
        for key in ("schema", "ground_truth"):
            if key in row:
                record[key] = row[key]
        records.append(record)
        outputs.append({"id": doc_id, "output": row["output"]})
    if args.schema:
        (run.path / "schema.json").write_text(Path(args.schema).read_text())
    run.append("records", records)
    run.append("outputs", outputs)
    print(f"imported {len(records)} documents into {run.path}")
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    run = RunDir(args.run, create=False)
    rows = run.read("judgments")
    by_mode: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    ratings: Counter[tuple[str, int]] = Counter()
    for r in rows:
        by_mode[(r["mode"], r["status"])] += 1
        if r["status"] != "ok":
            reasons[r["reason"]] += 1
        else:
            ratings[(r["mode"], r["rating"])] += 1
    print(f"{len(rows)} judgments in {run.file('judgments')}")
    for mode in MODES:
        ok, un = by_mode[(mode, "ok")], by_mode[(mode, "unscored")]
        if ok + un:
            hist = " ".join(f"{v}:{ratings[(mode, v)]}" for v in range(1, 11) if ratings[(mode, v)])
            print(f"  {mode:13s} scored {ok:6d}  unscored {un:6d} ({un / (ok + un):.1%})  ratings {hist}")
    for reason, n in reasons.most_common():
        print(f"  unscored {reason}: {n}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="construct-eval", description="Trust scores for LLM structured outputs.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="judge every output of a run folder (resumable)")
    p.add_argument("--run", required=True, help="run folder with records.jsonl and outputs.jsonl")
    p.add_argument("--mode", type=_modes, default=["doc", "field"], help="comma list of doc, fields, fields-joint")
    p.add_argument("--granularity", default="top", choices=["top", "item", "leaf"])
    p.add_argument("--constrained", default="auto", choices=["auto", "none", "grammar", "json"])
    p.add_argument("--variant", default="default", help="prompt variant id, e.g. reversed, o-r-s, shuffled3")
    p.add_argument("--max-tokens", type=int, default=512)
    p.add_argument("--no-logprobs", action="store_true", help="do not ask for log-probs")
    p.add_argument("--limit", type=int, default=None, help="judge only the first N documents")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_endpoint_args(p)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("import", help="make a run folder from a JSONL of documents and outputs")
    p.add_argument("--run", required=True)
    p.add_argument("--items", required=True, help="JSONL: id, request, output, optional schema and ground_truth")
    p.add_argument("--schema", help="a JSON schema file shared by all documents")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("summary", help="counts of ratings and unscored reasons in a run")
    p.add_argument("--run", required=True)
    p.set_defaults(func=cmd_summary)

    from construct_eval import local_llm

    local_llm.add_cli(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
