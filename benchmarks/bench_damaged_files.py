"""What a user sees when a run's files are damaged: a response cache cut short or overwritten, a
judgments file with an unreadable middle line. Measured with ``construct-eval score`` processes on
the scripted server (N synthetic controlled-error documents, per document and per field).

For each case: the exit code and last stderr line of the scoring after the damage, the calls it
made and the judgment rows the run holds, then (judgments case) what ``repair`` and a rerun do.
``--code DIR`` runs the package in DIR (an older commit unpacked with ``git archive``) to
compare before and after.

    python benchmarks/bench_damaged_files.py --docs 40
    python benchmarks/bench_damaged_files.py --docs 40 --code /tmp/before
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from construct_eval.data.runs import RunDir
from construct_eval.serving.scripted_server import ScriptedServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--code", default=None, help="folder holding the construct_eval package to run")
    args = parser.parse_args()
    env = dict(os.environ, NO_PROXY="127.0.0.1,localhost")
    if args.code:
        env["PYTHONPATH"] = args.code
    cli = [sys.executable, "-m", "construct_eval.cli"]
    print(f"code: {args.code or 'this checkout'}; {args.docs} documents, modes doc,fields")
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as server:

        def ce(*argv: str) -> subprocess.CompletedProcess:
            return subprocess.run([*cli, *argv], env=env, cwd=tmp, capture_output=True, text=True, timeout=1800)

        def new_run(name: str) -> Path:
            run = Path(tmp) / name
            ce("inject", "--run", str(run), "--dataset", "synthetic", "--n", str(args.docs)).check_returncode()
            return run

        def score(run: Path, *extra: str) -> tuple[subprocess.CompletedProcess, int]:
            before = len(server.requests)
            done = ce("score", "--run", str(run), "--mode", "doc,fields", "--base-url", server.base_url, "--model",
                      "m", "--quiet", "--concurrency", "4", *extra)  # fmt: skip
            return done, len(server.requests) - before

        def show(what: str, done: subprocess.CompletedProcess, calls: int, run: Path) -> None:
            rows = RunDir(run, create=False).read("judgments") if done.returncode == 0 else []
            said = [line for line in done.stderr.strip().splitlines() if line.strip()]
            print(f"  {what}: exit {done.returncode}; calls {calls}; rows {len(rows) if rows else 'unreadable'}")
            print(f"    stderr ({len(said)} lines), last: {(said or ['(nothing)'])[-1][:230]}")

        for how in ("truncated", "garbage"):
            cache = Path(tmp) / f"cache-{how}" / "responses.sqlite"
            score(new_run(f"fill-{how}"), "--cache", str(cache))[0].check_returncode()
            data = cache.read_bytes()
            cache.write_bytes(data[: len(data) // 3] if how == "truncated" else b"garbage!" * (len(data) // 8))
            run = new_run(f"after-{how}")
            print(f"cache {how} ({len(data)} bytes before the damage):")
            show("score", *score(run, "--cache", str(cache)), run)
            show("score again", *score(run, "--cache", str(cache)), run)

        run = new_run("judgments")
        score(run, "--no-cache")[0].check_returncode()
        path = run / "judgments.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        lines[len(lines) // 2] = b"\x00" * 60 + b"\n"
        path.write_bytes(b"".join(lines))
        print(f"judgments.jsonl with a line of NUL bytes at line {len(lines) // 2 + 1} of {len(lines)}:")
        done, calls = score(run, "--no-cache")
        print(f"  score: exit {done.returncode}; calls {calls}; stderr: {done.stderr.strip()[-230:]}")
        repair = ce("repair", "--run", str(run))
        print(f"  repair: exit {repair.returncode}; {' | '.join(repair.stdout.strip().splitlines()[:3])[:300]}")
        if repair.returncode == 0:
            done, calls = score(run, "--no-cache")
            keys = Counter(r["key"] for r in RunDir(run).read("judgments"))
            print(f"  score after repair: exit {done.returncode}; calls {calls}; rows {sum(keys.values())},"
                  f" distinct {len(keys)}")  # fmt: skip


if __name__ == "__main__":
    main()
