"""AUROC intervals at paper scale: the clustered DeLong estimator against the document bootstrap.

For each size, synthetic items (documents of 70 fields, about 8% wrong, a score lower on wrong
items with ties on a 0.01 grid) get an AUROC interval both ways, one process, the same items:
the document bootstrap as every stored table draws it (1,000 resamples,
:func:`construct_eval.stats.metrics.auroc_interval`) and the clustered DeLong interval
(:func:`construct_eval.stats.delong.auroc_interval`); then a paired AUROC difference of two scores
both ways. Printed side by side: seconds (the best of 3 cold calls: the package's per-process
caches emptied before each, as for a table computed once), their ratio, and how far the two
intervals' ends lie apart.

    python benchmarks/bench_delong.py                 # 10,000, 100,000 and 1,000,000 items
    python benchmarks/bench_delong.py --items 200000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from construct_eval.stats import delong
from construct_eval.stats.metrics import auroc_interval, compare_scores


def items(n: int, grid: bool, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``n`` items in documents of 70, about 8% wrong; two scores lower on wrong items, on a 0.01
    grid (about 100 distinct values, as a rating or a rounded score) or continuous (every value
    distinct, as log-probs)."""
    rng = np.random.default_rng(seed)
    docs = np.arange(n) // 70
    wrong = (rng.random(n) < 0.08).astype(float)
    shared = rng.normal(size=n)
    a = (shared - 0.9 * wrong) / 4 + 0.5
    b = (shared - 0.6 * wrong + 0.5 * rng.normal(size=n)) / 4 + 0.5
    return (wrong, np.round(a, 2), np.round(b, 2), docs) if grid else (wrong, a, b, docs)


def cold() -> None:
    """Forget what the package keeps per process (sorted scores, drawn resamples, resampled
    metrics): each timing is a table's first, as on a run analysed once."""
    from construct_eval.stats import count_metrics, resampled

    count_metrics._DISTINCT.clear()
    resampled._RESAMPLED.clear()
    resampled._TRANSPOSED.clear()
    resampled._drawn.cache_clear()


def best_of(fn: Callable[[], Any], repeats: int = 3) -> tuple[float, Any]:
    """The fastest of ``repeats`` cold calls."""
    times, out = [], None
    for _ in range(repeats):
        cold()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--items", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    args = p.parse_args()
    print(
        f"{'items':>10} {'scores':<11} {'what':<18} {'bootstrap s':>12} {'DeLong s':>9} {'ratio':>7} {'largest end gap':>16}"
    )
    for n in args.items:
        for grid in (True, False):
            y, a, b, g = items(n, grid)
            kind = "0.01 grid" if grid else "continuous"
            tb, boot = best_of(lambda: auroc_interval(y, a, g, n_boot=1000, seed=0))  # noqa: B023
            td, dl = best_of(lambda: delong.auroc_interval(y, a, g))  # noqa: B023
            gap = max(abs(boot.low - dl.low), abs(boot.high - dl.high))
            print(f"{n:>10,} {kind:<11} {'AUROC interval':<18} {tb:>12.3f} {td:>9.3f} {tb / td:>7.1f} {gap:>16.4f}")
            tb, pb = best_of(lambda: compare_scores(y, a, b, g, n_boot=1000, seed=0))  # noqa: B023
            td, (pd, _) = best_of(lambda: delong.paired_difference(y, a, b, g))  # noqa: B023
            gap = max(abs(pb.difference.low - pd.low), abs(pb.difference.high - pd.high))
            print(f"{n:>10,} {kind:<11} {'paired difference':<18} {tb:>12.3f} {td:>9.3f} {tb / td:>7.1f} {gap:>16.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
