"""Prefix caching on the embedded llama.cpp server: shared-prefix prompts vs field-first prompts.

On one real insurance claim with at least 10 leaf fields, times (in one run, same server):
  * one document-level judge call (cold: an unrelated call runs first);
  * 10 per-field calls with construct-eval's layout (request, schema, output first; the
    field instruction last), so the server reuses the shared prefix;
  * the same 10 calls with a naive layout that puts the field instruction first.
Prints both totals and their ratio to the document-level call, for two kinds of reply: the
rating alone (how the recorded runs judge) and a 120-character explanation before it (then
every call also pays for generating the explanation, which no prompt layout can share).
Target: 10 per-field calls cost at most 3x one document-level call.

    python benchmarks/bench_prefix_cache.py [--model smollm2-135m] [--data-dir ../shared/data/cleanlab]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from construct_eval.data.datasets.cleanlab import load
from construct_eval.fields import field_paths, get_at
from construct_eval.judging.prompts import document_prompt, field_prompt, rating_grammar
from construct_eval.llm.client import ChatRequest, Endpoint, LLMClient
from construct_eval.serving.models import DEFAULT_MODEL, LocalServer

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "cleanlab"


def field_first(messages: list[dict[str, str]], shared_prefix: str) -> list[dict[str, str]]:
    """The same content with the field-specific instruction moved before the shared part."""
    user = messages[-1]["content"]
    instruction = user[len(shared_prefix) :].strip()
    return [messages[0], {"role": "user", "content": f"{instruction}\n\n{shared_prefix}"}]


async def timed(client: LLMClient, messages: list[dict[str, str]], grammar: str, max_tokens: int) -> float:
    t0 = time.perf_counter()
    result = await client.complete(ChatRequest(messages=messages, max_tokens=max_tokens, grammar=grammar))
    if not result.ok:
        raise RuntimeError(f"call failed: {result.error} {result.error_detail}")
    return time.perf_counter() - t0


REPLIES = {
    # name: (explanation cap in characters, max tokens)
    "rating only (the recorded runs' judge)": (0, 16),
    "explanation <= 120 chars, then rating": (120, 48),
}


async def bench(base_url: str, model: str, text: str, truth: dict, unrelated: str, n_fields: int) -> None:
    paths = field_paths(None, truth, granularity="leaf")[:n_fields]
    assert len(paths) >= n_fields, f"claim has only {len(paths)} leaf fields"
    doc = document_prompt(text, None, truth)
    shared = [field_prompt(text, None, truth, p, get_at(truth, p)) for p in paths]
    naive = [field_first(p.messages, p.shared_prefix) for p in shared]
    flush = document_prompt(unrelated, None, {"x": 1}).messages
    print(f"model {model}; one insurance claim, {len(paths)} leaf fields; every call starts after an unrelated call")
    async with LLMClient(
        Endpoint(base_url, model, backend="llamacpp"), cache=False, timeout_s=600, concurrency=1
    ) as client:
        for reply, (cap, max_tokens) in REPLIES.items():
            grammar = rating_grammar(cap)
            await timed(client, flush, grammar, max_tokens)  # warm-up: load weights, empty the prefix cache
            t_doc = await timed(client, doc.messages, grammar, max_tokens)
            await timed(client, flush, grammar, max_tokens)
            t_shared = [await timed(client, p.messages, grammar, max_tokens) for p in shared]
            await timed(client, flush, grammar, max_tokens)
            t_naive = [await timed(client, m, grammar, max_tokens) for m in naive]
            print(f"\nreplies: {reply}")
            print(f"  document-level call (cold):                   {t_doc:7.2f} s")
            print(
                f"  {n_fields} per-field calls, shared prefix first:      {sum(t_shared):7.2f} s"
                f"  = {sum(t_shared) / t_doc:5.2f}x one document call"
            )
            print(
                f"  {n_fields} per-field calls, field instruction first:  {sum(t_naive):7.2f} s"
                f"  = {sum(t_naive) / t_doc:5.2f}x one document call"
            )
            later = sum(t_shared[1:]) / (len(t_shared) - 1)
            print(f"  first vs later shared-prefix field calls: {t_shared[0]:.2f} s then mean {later:.2f} s")
            print(f"  speed-up of the shared-prefix layout: {sum(t_naive) / sum(t_shared):.1f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA))
    parser.add_argument("--fields", type=int, default=10)
    args = parser.parse_args()
    if not Path(args.data_dir).is_dir():
        print(f"skipped: benchmark data not found at {args.data_dir}")
        return 0
    rows = load("insurance_claims", args.data_dir)
    with LocalServer(args.model) as server:
        asyncio.run(
            bench(server.base_url, server.model_name, rows[0].text, rows[0].ground_truth, rows[1].text, args.fields)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
