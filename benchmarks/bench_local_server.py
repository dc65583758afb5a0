"""The embedded server's log-prob fixes: stock ``llama_cpp.server`` vs ``construct_eval.serving.server``.

On one real insurance claim, in one run, each server started in turn with the same model:
  * a document-level judge call as recorded in results/runs (grammar forcing `Rating: [[x]]`,
    top-10 log-probs for the expected rating);
  * the same call without log-probs;
  * the generator's extraction with token log-probs (JSON mode, top-1), as `generate` makes it.
Each call starts cold (an unrelated call runs first, so no prompt prefix is reused).
Prints seconds per call for both servers, their ratio, and whether replies and log-probs agree.

    python benchmarks/bench_local_server.py [--model qwen2.5-coder-0.5b] [--data-dir ../shared/data/cleanlab]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from construct_eval.data.datasets.cleanlab import load_dataset
from construct_eval.judging.prompts import document_prompt, rating_grammar
from construct_eval.llm.client import ChatRequest, ChatResult, Endpoint, LLMClient
from construct_eval.serving.models import LocalServer

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "cleanlab"


def requests(data_dir: str) -> dict[str, ChatRequest]:
    dataset = load_dataset("insurance_claims", data_dir, prompt="package")  # the prompt its numbers were measured with
    record = dataset.records[0]
    judge = document_prompt(record.text, dataset.schema, record.ground_truth).messages
    return {
        "judge, log-probs": ChatRequest(
            judge, max_tokens=16, grammar=rating_grammar(0), logprobs=True, top_logprobs=10
        ),
        "judge, no log-probs": ChatRequest(judge, max_tokens=16, grammar=rating_grammar(0)),
        "extraction, log-probs": ChatRequest(
            dataset.generator_messages(record),
            max_tokens=1024,
            json_schema=dataset.schema,
            schema_name="extraction",
            logprobs=True,
            top_logprobs=1,
        ),
    }


async def run_all(server: LocalServer, todo: dict[str, ChatRequest]) -> dict[str, tuple[float, ChatResult]]:
    endpoint = Endpoint(server.base_url, server.model_name, backend="llamacpp")
    out = {}
    async with LLMClient(endpoint, cache=False, timeout_s=1800, concurrency=1) as client:
        flush = ChatRequest([{"role": "user", "content": "Say OK."}], max_tokens=2)
        for name, request in todo.items():
            await client.complete(flush)  # loads the weights, and no call reuses the previous prompt
            t0 = time.perf_counter()
            result = await client.complete(request)
            if not result.ok:
                raise RuntimeError(f"{name}: {result.error} {result.error_detail}")
            out[name] = (time.perf_counter() - t0, result)
    return out


def agree(a: ChatResult, b: ChatResult) -> str:
    if a.text != b.text:
        return "replies differ"
    if a.logprobs is None:
        return "same reply"
    gap = max((abs(x.logprob - y.logprob) for x, y in zip(a.logprobs, b.logprobs, strict=True)), default=0.0)
    return f"same reply, log-probs within {gap:.1e}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA))
    args = parser.parse_args()
    if not Path(args.data_dir).is_dir():
        print(f"skipped: benchmark data not found at {args.data_dir}")
        return 0
    todo = requests(args.data_dir)
    timings = {}
    for fast in (False, True):
        with LocalServer(args.model, fast_logprobs=fast) as server:
            timings[fast] = asyncio.run(run_all(server, todo))
    print(f"model {args.model}; insurance claim 0; stock llama_cpp.server vs construct_eval.serving.server")
    print(f"{'call':24} {'tokens in/out':>14} {'stock s':>8} {'fixed s':>8} {'speed-up':>8}  agreement")
    for name in todo:
        (t_stock, r_stock), (t_fast, r_fast) = timings[False][name], timings[True][name]
        tokens = f"{r_fast.prompt_tokens}/{r_fast.completion_tokens}"
        print(f"{name:24} {tokens:>14} {t_stock:8.1f} {t_fast:8.1f} {t_stock / t_fast:7.2f}x  {agree(r_stock, r_fast)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
