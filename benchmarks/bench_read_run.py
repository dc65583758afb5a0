"""Reading a run's JSONL cold: the standard library's parser against orjson and a columnar cache.

    .venv/bin/python benchmarks/bench_read_run.py [--rows 1200000] [--repeat 3]

Builds a scores file of ``--rows`` rows from a recorded run's own rows (ids renumbered), then
times, side by side in one run, the three ways a run's rows could be read: ``json.loads`` a line
(what :func:`construct_eval.jsonl.iter_numbered` did), ``orjson.loads`` a line (what it does now,
with the standard parser as the fallback for what orjson refuses), and a columnar cache (the
columns an analysis reads, ``id``, ``scorer``, ``field``, ``score``, saved with NumPy beside the
file as integer codes and their distinct values; timed reading only, its best case: building it,
invalidating it when the JSONL grows, and an analysis that reads codes are extra). The
page cache is dropped between passes where the machine allows (root); otherwise the file is read
warm from memory and the ratios are of parsing alone. Prints seconds and the ratios to the
standard parser.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from construct_eval.jsonl import iter_numbered

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "results/runs/financial_ner-sample600-controlled30/scores.jsonl"


def build(path: Path, rows: int) -> None:
    """``rows`` rows of the recorded run's scores, repeated with new document ids."""
    seed = [json.loads(line) for line in SOURCE.read_text().splitlines() if line.strip()]
    with path.open("w") as fh:
        for i in range(rows):
            row = dict(seed[i % len(seed)])
            row["id"] = f"{row['id']}-{i // len(seed)}"
            fh.write(json.dumps(row, separators=(",", ":")) + "\n")


def drop_caches() -> bool:
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def with_json(path: Path) -> int:
    n = 0
    with path.open("rb") as fh:
        for raw in fh:
            if raw.strip():
                json.loads(raw)
                n += 1
    return n


def with_package(path: Path) -> int:
    return sum(1 for _ in iter_numbered(path, skip_torn_tail=True))


def columnar(path: Path) -> Path:
    """The columns an analysis reads, each text column as integer codes and its distinct values
    (the cache's best case: a few thousand distinct strings, one small array each)."""
    cache = path.with_suffix(".npz")
    rows = [r for _, r in iter_numbered(path)]
    columns: dict[str, np.ndarray] = {}
    for name in ("id", "scorer", "field"):
        values, codes = np.unique(np.array([str(r.get(name, "")) for r in rows], dtype=object), return_inverse=True)
        columns[f"{name}_values"], columns[f"{name}_codes"] = values.astype(str), codes.astype(np.int32)
    columns["score"] = np.array([float(r["score"]) if r.get("score") is not None else np.nan for r in rows])
    np.savez(cache, **columns)
    return cache


def with_columns(cache: Path) -> int:
    data = np.load(cache)
    arrays = [data[name] for name in data.files]  # every column read, as an analysis would
    return len(data["score"]) + 0 * len(arrays)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_200_000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.jsonl"
        build(path, args.rows)
        cache = columnar(path)
        size = path.stat().st_size / 1e6
        cold = drop_caches()
        print(f"{args.rows:,} score rows, {size:.0f} MB of JSONL ({cache.stat().st_size / 1e6:.0f} MB as columns); "
              f"{'cold (page cache dropped before each pass)' if cold else 'warm (page cache not droppable here)'}; "
              f"best of {args.repeat}; load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")  # fmt: skip
        ways = [("json.loads a line", with_json, path), ("iter_numbered (orjson)", with_package, path),
                ("columnar cache (np.load)", with_columns, cache)]  # fmt: skip
        best: dict[str, float] = {}
        for _ in range(args.repeat):
            for name, read, target in ways:
                drop_caches()
                start = time.perf_counter()
                count = read(target)
                took = time.perf_counter() - start
                assert count == args.rows, (name, count)
                best[name] = min(best.get(name, took), took)
        base = best[ways[0][0]]
        for name, _, _ in ways:
            print(f"  {name:28s} {best[name]:7.2f} s   {base / best[name]:5.1f}x the standard parser")


if __name__ == "__main__":
    main()
