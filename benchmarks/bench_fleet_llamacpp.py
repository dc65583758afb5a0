"""Prefix affinity on two real embedded llama.cpp servers (one thread each), on insurance claims.

    python benchmarks/bench_fleet_llamacpp.py [--claims 4] [--model smollm2-135m]

The same claims (ground truth with planted errors) judged per document and per field, the
rating forced, by a fleet of two servers: with a document's calls kept on one server (its
prompt cache holds the claim after the first call) and with each call sent to the least loaded.
Each routing judges a fresh copy of the run, response cache off. Needs ../shared/data/cleanlab.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from construct_eval.cli import main as cli
from construct_eval.serving.models import LocalServer

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "cleanlab"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", type=int, default=4)
    ap.add_argument("--model", default="smollm2-135m")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "claims"
        cli(["inject", "--run", str(base), "--dataset", "insurance_claims", "--data-dir", str(DATA),
             "--limit", str(args.claims), "--doc-error-rate", "0.5"])  # fmt: skip
        with LocalServer(args.model, n_threads=1) as a, LocalServer(args.model, n_threads=1) as b:
            times = {}
            for routing in ("affinity", "least-loaded", "affinity"):  # affinity twice: warm both ways
                run = Path(tmp) / f"run-{routing}-{len(times)}"
                shutil.copytree(base, run)
                argv = ["score", "--run", str(run), "--mode", "doc,fields", "--base-url", a.base_url, "--replicas",
                        b.base_url, "--model", args.model, "--backend", "llamacpp", "--constrained", "grammar",
                        "--explanation-cap", "0", "--max-tokens", "16", "--no-cache", "--quiet",
                        "--replica-routing", routing, "--data-dir", str(DATA)]  # fmt: skip
                t0 = time.perf_counter()
                cli(argv)
                times[f"{routing} #{len(times) + 1}"] = time.perf_counter() - t0
    print(f"{args.claims} insurance claims, document + top-level fields, rating forced; two {args.model} servers,"
          " one thread each; response cache off")  # fmt: skip
    for name, seconds in times.items():
        print(f"  {name:18s} {seconds:7.1f} s")
    aff = min(v for k, v in times.items() if k.startswith("affinity"))
    least = next(v for k, v in times.items() if k.startswith("least"))
    print(f"least-loaded / affinity: {least / aff:.2f}x")


if __name__ == "__main__":
    main()
