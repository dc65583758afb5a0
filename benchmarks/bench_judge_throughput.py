"""Judge throughput against a loopback server with a fixed reply latency.

Compares, in one run and on the same server process:
  * construct-eval's run scorer (score_run: planning, judge, cache off, JSONL store) at
    concurrency 32 and at concurrency 1;
  * the paper recipe's plain sequential loop (sync openai client, one call after another).

Prints throughput, the ratio to the ideal (concurrency / latency), the client overhead
per call, and the speed-up over the sequential loop. The server runs in its own process
so it does not share the client's interpreter lock.

    python benchmarks/bench_judge_throughput.py [--calls 2000] [--serial-calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import openai

from construct_eval.data.runs import RunDir
from construct_eval.fields import field_names
from construct_eval.judging.judge import Judge, JudgeConfig
from construct_eval.judging.prompts import document_prompt, field_prompt
from construct_eval.judging.scoring import score_run
from construct_eval.llm.client import Endpoint, LLMClient
from construct_eval.serving.models import free_port
from construct_eval.serving.scripted_server import wait_until_up

SCHEMA = {"type": "object", "properties": {k: {"type": "string"} for k in ("a", "b", "c", "d")}}


def make_run(path: Path, docs: int, salt: str) -> RunDir:
    run = RunDir(path)
    (run.path / "schema.json").write_text(json.dumps(SCHEMA))
    ids = [f"{salt}-{i}" for i in range(docs)]
    run.append("records", [{"id": d, "request": f"Document {d}: a=1 b=2 c=3 d=4"} for d in ids])
    run.append("outputs", [{"id": d, "output": {"a": "1", "b": "2", "c": "3", "d": d}} for d in ids])
    return run


def run_scorer(base_url: str, docs: int, concurrency: int, salt: str) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        run = make_run(Path(tmp) / "run", docs, salt)

        async def go() -> int:
            async with LLMClient(Endpoint(base_url, "m"), concurrency=concurrency, cache=False) as client:
                summary = await score_run(
                    run, Judge(client, JudgeConfig(logprobs=False)), ["doc", "field"], progress=False
                )
                return summary.calls_made

        t0 = time.perf_counter()
        calls = asyncio.run(go())
        return time.perf_counter() - t0, calls


def card_loop(base_url: str, docs: int, salt: str) -> tuple[float, int]:
    """The seed card's recipe as written: sequential calls, regex parse."""
    client = openai.OpenAI(base_url=base_url, api_key="not-needed", max_retries=0)
    pattern = re.compile(r"\[\[(\d+)\]\]")
    calls = 0
    t0 = time.perf_counter()
    for i in range(docs):
        request, output = f"Document {salt}-{i}: a=1 b=2 c=3 d=4", {"a": "1", "b": "2", "c": "3", "d": f"{salt}-{i}"}
        prompts = [document_prompt(request, SCHEMA, output)]
        prompts += [field_prompt(request, SCHEMA, output, (f,), output[f]) for f in field_names(SCHEMA, output)]
        for p in prompts:
            reply = client.chat.completions.create(model="m", messages=p.messages, temperature=0)
            pattern.search(reply.choices[0].message.content or "")
            calls += 1
    return time.perf_counter() - t0, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls for the concurrent run (multiple of 5)")
    parser.add_argument("--serial-calls", type=int, default=200, help="calls for the concurrency-1 and sequential runs")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()

    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "construct_eval.serving.scripted_server",
            "--port",
            str(port),
            "--latency",
            str(args.latency),
        ],
        stdout=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_up(base_url)
        per_doc = 5  # one document call + four field calls
        rows = []
        t, n = run_scorer(base_url, args.calls // per_doc, args.concurrency, "c32")
        rows.append((f"construct-eval, concurrency {args.concurrency}", n, t, args.concurrency))
        t, n = run_scorer(base_url, args.serial_calls // per_doc, 1, "c1")
        rows.append(("construct-eval, concurrency 1", n, t, 1))
        t, n = card_loop(base_url, args.serial_calls // per_doc, "loop")
        rows.append(("card's sequential loop", n, t, 1))
    finally:
        server.terminate()
        server.wait(10)

    print(f"loopback server, fixed reply latency {args.latency * 1000:.0f} ms, separate process; 2 cores")
    print(f"{'scorer':38s} {'calls':>6s} {'seconds':>8s} {'calls/s':>8s} {'% of ideal':>10s} {'overhead/call':>14s}")
    for name, n, t, conc in rows:
        thr = n / t
        ideal = conc / args.latency
        overhead_ms = (t * conc / n - args.latency) * 1000
        print(f"{name:38s} {n:6d} {t:8.2f} {thr:8.1f} {thr / ideal:10.1%} {overhead_ms:11.2f} ms")
    speedup = (rows[0][1] / rows[0][2]) / (rows[2][1] / rows[2][2])
    print(f"speed-up of concurrency {args.concurrency} over the plain sequential loop: {speedup:.1f}x")


if __name__ == "__main__":
    main()
