"""A document's judge calls back to back versus interleaved with another document's, on one slot.

The embedded llama.cpp server has one slot and keeps the last prompt's KV state: calls that
share a prefix with the call before them skip that prefill. Run against a running
``construct-eval serve`` (the model of the judge study); per document: one document call and
one call per top-level field, the rating forced alone, no cache. Both orders make the same
calls; the orders alternate so neither always runs first, and each is timed whole.

    python benchmarks/bench_grouping.py --base-url http://127.0.0.1:8093/v1 --model qwen2.5-coder-1.5b \\
        --run results/runs/financial_ner-sample600-controlled30 --data-dir ../shared/data/cleanlab --docs 2
"""

from __future__ import annotations

import argparse
import asyncio
import time

from construct_eval.data.runs import RunDir
from construct_eval.judging.judge import Judge, JudgeConfig
from construct_eval.llm.client import Endpoint, make_client


async def timed(judge: Judge, tasks: list) -> float:
    started = time.perf_counter()
    for task in tasks:  # one at a time: the server has one slot
        await judge.run_task(task)
    return time.perf_counter() - started


async def main_async(args: argparse.Namespace) -> None:
    run = RunDir(args.run, create=False)
    items, _ = run.judge_inputs(data_dir=args.data_dir)
    items = items[-args.docs :]  # the last documents: the study reaches them last
    endpoint = Endpoint(args.base_url, args.model, backend="llamacpp")
    config = JudgeConfig(constrained="grammar", explanation_cap=0, max_tokens=16)
    async with make_client(endpoint, cache=False, concurrency=1) as client:
        judge = Judge(client, config)
        per_doc = [judge.plan(item, ["doc", "field"]) for item in items]
        grouped = [t for tasks in per_doc for t in tasks]
        interleaved = [t for round_ in zip(*per_doc, strict=False) for t in round_]
        results: dict[str, list[float]] = {"grouped": [], "interleaved": []}
        for repeat in range(args.repeats):
            order = ("interleaved", "grouped") if repeat % 2 == 0 else ("grouped", "interleaved")
            for name in order:
                results[name].append(await timed(judge, grouped if name == "grouped" else interleaved))
        calls = len(grouped)
    print(f"{len(items)} documents, {calls} calls per order, {args.repeats} repeats, model {args.model}")
    for name, times in results.items():
        per = [t / len(items) for t in times]
        print(f"{name:12s} seconds per document: " + ", ".join(f"{p:.1f}" for p in per))
    g = sum(results["grouped"]) / len(results["grouped"])
    i = sum(results["interleaved"]) / len(results["interleaved"])
    print(f"interleaved / grouped: {i / g:.2f}x")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--data-dir")
    p.add_argument("--docs", type=int, default=2)
    p.add_argument("--repeats", type=int, default=2)
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
