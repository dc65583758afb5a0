"""Are new outputs' scores drawn like the fitting run's? The test a trust policy runs before it
quotes its bound on new outputs: documents are the unit (they move together between the samples,
so dependence within a document is kept).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _ks(a: np.ndarray, b: np.ndarray) -> float:
    grid = np.union1d(a, b)
    fa = np.searchsorted(np.sort(a), grid, side="right") / len(a)
    fb = np.searchsorted(np.sort(b), grid, side="right") / len(b)
    return float(np.max(np.abs(fa - fb)))


def shift_test(
    reference: Sequence[Sequence[float]], new: Sequence[Sequence[float]], *, n_perm: int = 999, seed: int = 0
) -> dict[str, Any]:
    """Are the new documents' values drawn like the reference's? The two-sample Kolmogorov-Smirnov
    distance of the pooled values, its p-value from permuting whole documents between the samples
    ((k + 1) / (n_perm + 1)), and the difference of the means as an effect size."""
    docs = [np.asarray(d, dtype=float) for d in (*reference, *new)]
    docs = [d for d in docs if len(d)]
    n_ref = sum(1 for d in reference if len(d))
    if n_ref == 0 or len(docs) == n_ref or n_perm < 1:
        return {"statistic": float("nan"), "p_value": float("nan"), "note": "no values to compare"}
    pooled = np.concatenate(docs)
    sizes = np.array([len(d) for d in docs])
    owner = np.repeat(np.arange(len(docs)), sizes)

    def split(is_ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mask = is_ref[owner]
        return pooled[mask], pooled[~mask]

    is_ref = np.arange(len(docs)) < n_ref
    a, b = split(is_ref)
    observed = _ks(a, b)
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_perm):
        pa, pb = split(rng.permutation(is_ref))
        hits += _ks(pa, pb) >= observed - 1e-12
    return {
        "statistic": observed,
        "p_value": (hits + 1) / (n_perm + 1),
        "mean_reference": float(a.mean()),
        "mean_new": float(b.mean()),
        "documents_reference": n_ref,
        "documents_new": len(docs) - n_ref,
    }
