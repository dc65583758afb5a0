"""Throughput under a provider's rate limit: adaptive concurrency against fixed concurrency.

A scripted server in its own process enforces a token bucket (``--rate`` requests/s, bursts of
``--burst``) and answers 429 beyond it with ``Retry-After``, sending the ``x-ratelimit-*``
headers as OpenAI-style APIs do (and, in one run, withholding them). Each client sends the same
``--calls`` distinct requests (cache off, up to 8 retries): fixed concurrency 8, 32 and 128, and
adaptive concurrency (starting at 4). Printed side by side in one run: goodput (answered calls
per second), its share of the limit, the share of requests answered 429, calls that failed.

    python benchmarks/bench_rate_limits.py [--rate 200] [--burst 20] [--calls 3000] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time

from construct_eval.llm.client import ChatRequest, Endpoint, LLMClient, RetryPolicy
from construct_eval.serving.models import free_port
from construct_eval.serving.scripted_server import wait_until_up


def start_server(rate: float, burst: float, latency: float, headers: bool) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-m", "construct_eval.serving.scripted_server", "--port", str(port)]
    cmd += ["--latency", str(latency), "--rate-limit", str(rate), "--burst", str(burst)]
    if not headers:
        cmd.append("--no-limit-headers")
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    wait_until_up(base_url)
    return server, base_url


def run_client(base_url: str, calls: int, concurrency: int, adaptive: bool, salt: str) -> dict[str, float]:
    async def go() -> dict[str, float]:
        retry = RetryPolicy(max_retries=8, base_delay_s=0.05, max_delay_s=2.0)
        async with LLMClient(
            Endpoint(base_url, "m"), concurrency=concurrency, cache=False, retry=retry, adaptive=adaptive
        ) as client:
            reqs = [ChatRequest([{"role": "user", "content": f"{salt} {i}"}], max_tokens=8) for i in range(calls)]
            t0 = time.perf_counter()
            results = await asyncio.gather(*(client.complete(r) for r in reqs))
            seconds = time.perf_counter() - t0
            ok = sum(r.ok for r in results)
            sent = client.stats.calls if hasattr(client.stats, "calls") else calls
            return {
                "ok": ok,
                "failed": calls - ok,
                "seconds": seconds,
                "rate_limited": client.stats.rate_limited,
                "sent": ok + client.stats.retries + (calls - ok),
                "peak": client.limiter.peak if client.limiter else concurrency,
                "_sent_stat": sent,
            }

    return asyncio.run(go())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=200.0)
    ap.add_argument("--burst", type=float, default=20.0)
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--latency", type=float, default=0.05)
    args = ap.parse_args()
    configs = [("fixed 8", 8, False, True), ("fixed 32", 32, False, True), ("fixed 128", 128, False, True)]
    configs += [("adaptive", 4, True, True), ("adaptive, no x-ratelimit headers", 4, True, False)]
    print(
        f"token bucket {args.rate:g} requests/s, burst {args.burst:g}; reply latency {args.latency * 1000:.0f} ms;"
        f" {args.calls} calls each; server in its own process; 2 cores"
    )
    print(f"{'client':34s} {'goodput/s':>9s} {'of limit':>8s} {'429 share':>9s} {'failed':>6s} {'peak in flight':>14s}")
    for name, conc, adaptive, headers in configs:
        server, base_url = start_server(args.rate, args.burst, args.latency, headers)
        try:
            r = run_client(base_url, args.calls, conc, adaptive, name)
        finally:
            server.terminate()
            server.wait(10)
        goodput = r["ok"] / r["seconds"]
        share_429 = r["rate_limited"] / r["sent"] if r["sent"] else 0.0
        print(
            f"{name:34s} {goodput:9.1f} {goodput / args.rate:8.1%} {share_429:9.1%} {int(r['failed']):6d}"
            f" {r['peak']:14.0f}"
        )


if __name__ == "__main__":
    main()
