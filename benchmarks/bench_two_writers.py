"""Two ``construct-eval score`` processes started together on one run folder: calls, rows, exits.

The case of issue 30 (two terminals, two kernels, a scheduler retrying a job it thinks died),
measured on the scripted server: a controlled-error run of N synthetic documents, judged per
document and per field, by two processes started at the same moment. Prints each process's
exit code and last stderr line, the calls the server received, the judgment rows written and
how many of them repeat a key (calls paid twice). ``--code DIR`` runs the two processes on the
package in DIR (e.g. an older commit unpacked with ``git archive``) to measure before and after.

    python benchmarks/bench_two_writers.py --docs 40
    python benchmarks/bench_two_writers.py --docs 40 --wait        # both with --wait: one waits for the other
    python benchmarks/bench_two_writers.py --docs 40 --code /tmp/before
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from construct_eval.data.runs import RunDir
from construct_eval.serving.scripted_server import ScriptedServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--mode", default="doc,fields")
    parser.add_argument("--latency", type=float, default=0.01, help="seconds per reply")
    parser.add_argument("--code", default=None, help="folder holding the construct_eval package to run")
    parser.add_argument("--wait", action="store_true", help="start both processes with --wait")
    args = parser.parse_args()
    env = dict(os.environ, NO_PROXY="127.0.0.1,localhost")
    if args.code:
        env["PYTHONPATH"] = args.code
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        env["CONSTRUCT_EVAL_CACHE"] = str(Path(tmp) / "cache")
        cli = [sys.executable, "-m", "construct_eval.cli"]
        subprocess.run(
            [*cli, "inject", "--run", str(run), "--dataset", "synthetic", "--n", str(args.docs)],
            env=env, check=True, capture_output=True, cwd=tmp,
        )  # fmt: skip
        with ScriptedServer(latency_s=args.latency) as server:
            score = [*cli, "score", "--run", str(run), "--mode", args.mode, "--base-url", server.base_url]
            score += ["--model", "m", "--quiet", "--no-cache", "--concurrency", "4"]
            started = time.perf_counter()
            procs = [
                subprocess.Popen([*score, *(["--wait"] if args.wait else [])], env=env, text=True, cwd=tmp,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for i in range(2)
            ]  # fmt: skip
            outs = [p.communicate(timeout=1800) for p in procs]
            seconds = time.perf_counter() - started
            calls = len(server.requests)
        rows = RunDir(run, create=False).read("judgments")
    keys = Counter(r["key"] for r in rows)
    print(f"code: {args.code or 'this checkout'}; {args.docs} documents, modes {args.mode}; {seconds:.1f} s")
    for i, (proc, (out, err)) in enumerate(zip(procs, outs, strict=True)):
        said = (out.strip().splitlines() or ["(nothing)"])[:1] + (err.strip().splitlines() or ["(nothing)"])[-1:]
        print(f"process {i + 1}: exit {proc.returncode}; stdout: {said[0][:120]}; stderr: {said[1][:240]}")
    print(f"calls made: {calls}; judgment rows: {len(rows)}; distinct judgments: {len(keys)}")
    print(f"calls paid twice: {calls - len(keys)}; rows repeating a key: {len(rows) - len(keys)}")


if __name__ == "__main__":
    main()
