"""AUROC intervals without resampling: the clustered DeLong estimator (Obuchowski 1997).

DeLong, DeLong and Clarke-Pearson (1988) estimate the variance of an AUROC from its *structural
components*: for each wrong item, the share of right items it outranks (ties count a half), and
for each right item, the share of wrong items that outrank it. Fields of one document are not
independent, so Obuchowski (1997, "Nonparametric analysis of clustered ROC curve data",
Biometrics 53:567-578) sums the components within each cluster (here the document) and takes the
variance over clusters:

    theta = AUROC;  V10_i, V01_i = the sums of document i's components;  m_i, n_i its wrong and
    right items;  M, N the totals;  I the documents
    S10 = I / ((I - 1) M) sum_i (V10_i - m_i theta)^2
    S01 = I / ((I - 1) N) sum_i (V01_i - n_i theta)^2
    S11 = I / (I - 1)     sum_i (V10_i - m_i theta)(V01_i - n_i theta)
    var(theta) = S10 / M + S01 / N + 2 S11 / (M N)

and, for two scores on the same items, the covariance from the same sums with one factor from
each score, so the paired difference has variance var(a) + var(b) - 2 cov(a, b). With one item
per document it is DeLong's own estimator but for its small-sample factors (I / (I - 1) over the
documents where DeLong has M / (M - 1) and N / (N - 1) over each class). The components come from
the counts of wrong and right items at each distinct score (the midranks of Sun and Xu 2014,
grouped): one sort per score, shared with every other table of the score
(:func:`construct_eval.stats.count_metrics.distinct_scores`), then O(n); no resamples. Conventions as :mod:`construct_eval.stats.metrics`:
``wrong`` is 1 for an error, ``score`` a trust score, and AUROC is for finding errors with
``-score``.

The interval is Wald's, estimate +- z sd, clipped to [0, 1]. It rests on a normal approximation:
with few wrong items, few documents or an AUROC near 0 or 1 the document bootstrap is the safer
interval (:data:`MIN_DOCUMENTS`, :data:`MIN_CLASS_ITEMS` and :func:`preferred` say when).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from construct_eval.stats.count_metrics import distinct_scores

MIN_DOCUMENTS = 200
"""At or above this many documents (and :data:`MIN_CLASS_ITEMS` of each class) DeLong is offered
by default where a table would otherwise resample: the normal approximation then holds within
the bootstrap's own Monte Carlo error on every recorded run (``tests/test_delong.py``)."""
MIN_CLASS_ITEMS = 30


@dataclass(frozen=True)
class Components:
    """One score's clustered structural components on a set of items."""

    auroc: float
    v10: np.ndarray  # per document: the sum over its wrong items of the share of right items they outrank
    v01: np.ndarray  # per document: the sum over its right items of the share of wrong items outranking them
    m: np.ndarray  # per document: its wrong items
    n: np.ndarray  # per document: its right items

    @property
    def documents(self) -> int:
        return len(self.m)


def components(wrong: Any, score: Any, groups: Any) -> Components:
    """The clustered components of ``-score`` for finding ``wrong`` items, documents ``groups``."""
    y = np.asarray(wrong, dtype=bool)
    values, at = distinct_scores(np.asarray(score, dtype=float))  # ascending: the most suspicious first
    g = _group_codes(np.asarray(groups))
    pos = np.bincount(at[y], minlength=len(values)).astype(float)
    neg = np.bincount(at[~y], minlength=len(values)).astype(float)
    big_m, big_n = pos.sum(), neg.sum()
    if big_m == 0 or big_n == 0:
        raise ValueError("AUROC needs wrong and right items")
    # a wrong item at a score outranks the right items above it, and half of those tied with it;
    # a right item is outranked by the wrong items below it, and by half of those tied with it
    v10_value = (big_n - np.cumsum(neg) + 0.5 * neg) / big_n
    v01_value = (np.cumsum(pos) - 0.5 * pos) / big_m
    v10_items, v01_items = v10_value[at[y]], v01_value[at[~y]]
    k = int(g.max()) + 1
    return Components(
        auroc=float(v10_items.mean()),
        v10=np.bincount(g[y], weights=v10_items, minlength=k),
        v01=np.bincount(g[~y], weights=v01_items, minlength=k),
        m=np.bincount(g[y], minlength=k).astype(float),
        n=np.bincount(g[~y], minlength=k).astype(float),
    )


def _group_codes(groups: np.ndarray) -> np.ndarray:
    """Each item's document as 0..k-1 in the order of the documents' own values, as
    ``np.unique(groups, return_inverse=True)`` numbers them; for the small non-negative integer codes
    the tables pass, by counting instead of sorting (the sort was most of a call at a million items)."""
    if groups.dtype.kind in "iu" and len(groups) and groups.min() >= 0 and groups.max() <= 4 * len(groups):
        present = np.bincount(groups) > 0
        return (np.cumsum(present) - 1)[groups]
    return distinct_scores(groups)[1]


def covariance(a: Components, b: Components) -> float:
    """Obuchowski's covariance of two AUROCs on the same items and documents (a variance when
    ``a`` is ``b``)."""
    k = a.documents
    if k < 2:
        return float("nan")
    big_m, big_n = a.m.sum(), a.n.sum()
    da10, da01 = a.v10 - a.m * a.auroc, a.v01 - a.n * a.auroc
    db10, db01 = b.v10 - b.m * b.auroc, b.v01 - b.n * b.auroc
    scale = k / (k - 1)
    s10 = scale * float(da10 @ db10) / big_m
    s01 = scale * float(da01 @ db01) / big_n
    s11 = scale * float(da10 @ db01 + db10 @ da01) / 2
    return s10 / big_m + s01 / big_n + 2 * s11 / (big_m * big_n)


@dataclass(frozen=True)
class DeLongInterval:
    estimate: float
    low: float
    high: float
    se: float
    level: float = 0.95


def _wald(estimate: float, variance: float, level: float, lo: float, hi: float) -> DeLongInterval:
    se = float(np.sqrt(max(variance, 0.0)))
    z = float(ndtri(0.5 + level / 2))
    return DeLongInterval(estimate, max(lo, estimate - z * se), min(hi, estimate + z * se), se, level)


def auroc_interval(wrong: Any, score: Any, groups: Any, *, level: float = 0.95) -> DeLongInterval:
    """AUROC with the clustered DeLong interval (documents ``groups``)."""
    c = components(wrong, score, groups)
    return _wald(c.auroc, covariance(c, c), level, 0.0, 1.0)


def paired_difference(
    wrong: Any, score_a: Any, score_b: Any, groups: Any, *, level: float = 0.95
) -> tuple[DeLongInterval, float]:
    """AUROC(a) - AUROC(b) on the same items with its clustered DeLong interval, and the two-sided
    p-value of "no difference" (normal)."""
    a, b = components(wrong, score_a, groups), components(wrong, score_b, groups)
    variance = covariance(a, a) + covariance(b, b) - 2 * covariance(a, b)
    diff = _wald(a.auroc - b.auroc, variance, level, -1.0, 1.0)
    p = float(2 * ndtr(-abs(diff.estimate) / diff.se)) if diff.se > 0 else (1.0 if diff.estimate == 0 else 0.0)
    return diff, p


AUTO_ITEMS = 100_000
"""``intervals="auto"`` takes DeLong for a table of at least this many items (where the document
bootstrap's resamples cost seconds per table) when :func:`preferred` allows it; below it the
bootstrap, so every recorded run's stored tables keep their bootstrap intervals."""
INTERVALS = ("auto", "bootstrap", "delong")


def choose(intervals: str, wrong: Any, groups: Any) -> str:
    """``"delong"`` or ``"bootstrap"`` for one table's items, as ``intervals`` asks (``auto``: by
    :data:`AUTO_ITEMS` and :func:`preferred`)."""
    if intervals not in INTERVALS:
        raise ValueError(f"intervals must be one of {INTERVALS}, not {intervals!r}")
    if intervals != "auto":
        return intervals
    return preferred(wrong, groups) if len(np.asarray(wrong)) >= AUTO_ITEMS else "bootstrap"


def preferred(wrong: Any, groups: Any) -> str:
    """``"delong"`` where the items are many enough for its normal approximation (at least
    :data:`MIN_DOCUMENTS` documents and :data:`MIN_CLASS_ITEMS` wrong and right items), else
    ``"bootstrap"``."""
    y = np.asarray(wrong, dtype=bool)
    documents = len(np.unique(np.asarray(groups)))
    enough = documents >= MIN_DOCUMENTS and min(int(y.sum()), int((~y).sum())) >= MIN_CLASS_ITEMS
    return "delong" if enough else "bootstrap"
