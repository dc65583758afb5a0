"""A fleet of replicas: throughput against one replica, and prefix affinity against plain
least-loaded routing. Scripted replicas in their own processes; ratios side by side in one run.

1. Throughput: replies take ``--latency`` seconds; ``--per-replica`` calls in flight per
   replica; the same client with 1 and with 4 replicas (so the router is measured, not the
   client's two cores).
2. Affinity: replicas that answer ``--prefix-latency`` seconds slower for a prompt prefix they
   have not seen (a prompt cache); documents of 5 calls sharing a prefix, as a document's judge
   calls do; routed with the document's affinity vs least-loaded.

    python benchmarks/bench_fleet.py [--latency 1.0] [--per-replica 32] [--seconds 6]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time

from construct_eval.llm.client import ChatRequest, Endpoint, LLMClient
from construct_eval.serving.models import free_port
from construct_eval.serving.scripted_server import wait_until_up


def start(n: int, latency: float, prefix_latency: float = 0.0) -> tuple[list[subprocess.Popen[bytes]], list[str]]:
    procs, urls = [], []
    for _ in range(n):
        port = free_port()
        cmd = [sys.executable, "-m", "construct_eval.serving.scripted_server", "--port", str(port)]
        cmd += ["--latency", str(latency), "--prefix-latency", str(prefix_latency)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL))
        urls.append(f"http://127.0.0.1:{port}/v1")
    for url in urls:
        wait_until_up(url)
    return procs, urls


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait(10)


def run(urls: list[str], requests: list[ChatRequest], concurrency: int) -> float:
    async def go() -> float:
        async with LLMClient(Endpoint(urls[0], "m"), concurrency=concurrency, cache=False, replicas=urls[1:]) as c:
            t0 = time.perf_counter()
            results = await asyncio.gather(*(c.complete(r) for r in requests))
            assert all(r.ok for r in results)
            return time.perf_counter() - t0

    return asyncio.run(go())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--per-replica", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=6.0, help="about how long each throughput run lasts")
    ap.add_argument("--prefix-latency", type=float, default=0.5)
    args = ap.parse_args()
    print(f"scripted replicas in their own processes; 2 cores; reply latency {args.latency:g} s")
    rates = {}
    for n in (1, 4):
        procs, urls = start(n, args.latency)
        try:
            calls = int(n * args.per_replica * args.seconds / args.latency)
            reqs = [ChatRequest([{"role": "user", "content": f"r{n}-{i} Rating: [[x]]"}]) for i in range(calls)]
            seconds = run(urls, reqs, args.per_replica * n)
        finally:
            stop(procs)
        rates[n] = calls / seconds
        print(
            f"{n} replica(s), {args.per_replica} in flight each: {calls} calls in {seconds:.2f} s = {rates[n]:.1f} calls/s"
        )
    print(f"throughput, 4 replicas / 1: {rates[4] / rates[1]:.2f}x (ideal 4.00x)")

    docs, per_doc = 64, 5
    reqs_by_route = {}
    for affinity in (True, False):
        reqs_by_route[affinity] = [
            ChatRequest(
                [{"role": "user", "content": f"document {d} " + "x" * 600 + f" field {k}"}],
                affinity=f"doc-{d}" if affinity else None,
            )
            for d in range(docs)
            for k in range(per_doc)
        ]
    times = {}
    for affinity in (True, False):
        procs, urls = start(4, 0.05, args.prefix_latency)
        try:
            times[affinity] = run(urls, reqs_by_route[affinity], 8)
        finally:
            stop(procs)
    print(
        f"prefix affinity ({docs} documents x {per_doc} calls, 4 replicas, 8 in flight, {args.prefix_latency:g} s"
        f" for an unseen prefix): {times[True]:.2f} s with affinity, {times[False]:.2f} s least-loaded"
        f" ({times[False] / times[True]:.2f}x)"
    )


if __name__ == "__main__":
    main()
