"""Detection statistics from counts per distinct score: the kernels both the point estimates
(:mod:`.metrics`) and the resampled ones (:mod:`.resampled`) are computed with.

Every function takes ``pos`` and ``neg``, the wrong and right items at each distinct score in
ascending order (the most suspicious first), on the last axis: ``(V,)`` for one sample or
``(n_boot, V)`` for resamples. Ties form one threshold, as in scikit-learn.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np


def distinct_scores(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(s, return_inverse=True)``, kept per process by content: every table of a scorer
    (detection, its kinds, review budgets, curves) counts the same scores against other labels,
    and sorting a million scores costs more than the counting. Read-only arrays."""
    s = np.ascontiguousarray(s)
    digest = hashlib.blake2b(s.data, digest_size=16).hexdigest()
    key = (digest, s.dtype.str, s.shape)
    hit = _DISTINCT.get(key)
    if hit is None:
        values, inverse = np.unique(s, return_inverse=True)
        inverse = inverse.reshape(s.shape)
        values.flags.writeable = inverse.flags.writeable = False
        hit = (values, inverse)
        _DISTINCT[key] = hit
        while len(_DISTINCT) > 1 and sum(v.nbytes + i.nbytes for v, i in _DISTINCT.values()) > _DISTINCT_BYTES:
            _DISTINCT.pop(next(iter(_DISTINCT)))
    return hit


_DISTINCT: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] = {}
_DISTINCT_BYTES = 256 * 2**20


def mid_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing their mean rank: ``scipy.stats.rankdata``'s ``average``, to the
    bit, from :func:`distinct_scores` and a count per value, without importing scipy.stats (half a
    second of every ``evaluate``). Scores are finite (``collect`` keeps no NaN); a NaN is refused,
    not ranked last as the most trusted."""
    if np.isnan(values).any():
        raise ValueError("mid_ranks: a NaN score has no rank")
    distinct, inverse = distinct_scores(values)
    counts = np.bincount(inverse.reshape(-1), minlength=len(distinct))
    ends = np.cumsum(counts)
    return (ends - (counts - 1) / 2)[inverse.reshape(-1)]


def value_counts(y: np.ndarray, s: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Positives and negatives at each distinct score, ordered from most to least suspicious (low score first)."""
    values, inv = distinct_scores(s)  # ascending score = descending suspicion
    w = np.ones_like(y) if weights is None else weights
    pos = np.bincount(inv, weights=w * y, minlength=len(values))
    neg = np.bincount(inv, weights=w * (1 - y), minlength=len(values))
    return pos, neg


def auroc_from_counts(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUROC of flagging low scores, from counts per distinct value (last axis, low score first).

    A wrong item at value u beats every right item at a higher score and half of those tied.
    """
    p_tot, n_tot = pos.sum(-1), neg.sum(-1)
    neg_above = n_tot[..., None] - np.cumsum(neg, -1)  # right items with a strictly higher score
    num = (pos * (neg_above + 0.5 * neg)).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((p_tot > 0) & (n_tot > 0), num / (p_tot * n_tot), np.nan)


def ap_from_counts(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """Average precision (scikit-learn's step-wise definition), ties forming one threshold."""
    tp = np.cumsum(pos, -1)
    fp = np.cumsum(neg, -1)
    p_tot = tp[..., -1]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        return np.where(p_tot > 0, (pos * precision).sum(-1) / p_tot, np.nan)


def review_from_counts(pos: np.ndarray, neg: np.ndarray, budget: float) -> tuple[np.ndarray, np.ndarray]:
    """Expected precision and recall of reviewing the lowest ``budget`` share, from the
    positives and negatives per distinct score (ascending): ``(V,)`` or ``(n_boot, V)``."""
    total = pos + neg
    k = budget * total.sum(axis=-1, keepdims=True)
    cum = np.cumsum(total, axis=-1)
    take = np.clip(k - (cum - total), 0, total)  # how many of each tied block are reviewed
    frac = np.divide(take, total, out=np.zeros_like(take, dtype=float), where=total > 0)
    tp = (frac * pos).sum(axis=-1)
    reviewed = take.sum(axis=-1)
    p_tot = pos.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(reviewed > 0, tp / reviewed, np.nan)
        recall = np.where(p_tot > 0, tp / p_tot, np.nan)
    return precision, recall
