"""How well a trust score finds wrong outputs and wrong fields, with honest uncertainty.

Conventions: ``wrong`` is 1 for an erroneous item (the positive class of error detection)
and ``score`` is a *trust* score (higher = more likely right), so an item is flagged for
review when its score is low. AUROC and AUPRC are computed for detecting errors with
``-score``. Ratings are integers on 1-10 and tie heavily, so every metric here treats ties
exactly: AUROC counts a tied pair as one half, AUPRC steps over tied blocks (as
scikit-learn does), and "review the lowest k%" takes the expected value over a random
order inside the tied block at the cut instead of an arbitrary one.

Intervals come from a bootstrap over *groups* (documents): the fields of one document
move together, so resampling fields would understate the uncertainty. The bootstrap is
vectorised: each resample is a vector of group counts, and the positives and negatives at
each distinct score value are counts times a sparse group-by-value matrix, so 1,000
resamples of 100,000 items cost one sparse matrix product.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from construct_eval import power
from construct_eval.numbers import interval
from construct_eval.stats.count_metrics import (  # the kernels: also behind the resampled draws
    ap_from_counts as _ap_from_counts,
)
from construct_eval.stats.count_metrics import (
    auroc_from_counts as _auroc_from_counts,
)
from construct_eval.stats.count_metrics import distinct_scores
from construct_eval.stats.count_metrics import (
    review_from_counts as _review_from_counts,
)
from construct_eval.stats.count_metrics import (
    value_counts as _value_counts,
)
from construct_eval.stats.resampled import (  # the draws live there; imported from here too
    DRAW_CHUNK,  # noqa: F401
    group_weights,  # noqa: F401
    iter_group_draws,
    resampled_metrics,
)

# --------------------------------------------------------------------------- inputs


def _arrays(wrong: Any, score: Any, groups: Any | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = np.asarray(wrong, dtype=float)
    s = np.asarray(score, dtype=float)
    if y.ndim != 1 or s.shape != y.shape:
        raise ValueError(f"wrong and score must be 1-D of one length, got {y.shape} and {s.shape}")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("wrong must be 0/1 (1 = the item is wrong)")
    if np.isnan(s).any():
        raise ValueError("score has NaN: drop unscored items first and report how many there were")
    if groups is None:
        g = np.arange(len(y))
    else:
        g = group_index(groups)
        if g.shape != y.shape:
            raise ValueError("groups must have one entry per item")
    return y, s, g


def group_index(groups: Any) -> np.ndarray:
    """Each item's group as 0..n_groups-1 in the sorted order of the group names: what
    ``np.unique(groups, return_inverse=True)`` gives, by hashing instead of sorting the items
    (document ids are strings; sorting 200,000 of them per table costs more than the rest)."""
    arr = np.asarray(groups)
    if arr.ndim == 1 and arr.dtype.kind in "iu" and len(arr) and arr.min() >= 0 and arr.max() < 4 * len(arr) + 1024:
        present = np.bincount(arr) > 0  # small non-negative codes (documents as codes): ranked without sorting
        rank = np.cumsum(present) - 1
        return rank[arr].astype(np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "US":
        return np.unique(arr, return_inverse=True)[1].reshape(-1)
    first: dict[str, int] = {}
    codes = np.fromiter((first.setdefault(x, len(first)) for x in arr.tolist()), dtype=np.int64, count=len(arr))
    names = list(first)
    rank = np.empty(len(names), dtype=np.int64)
    rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    return rank[codes]


def auroc(wrong: Any, score: Any) -> float:
    """P(a random wrong item scores lower than a random right one), ties counted one half."""
    y, s, _ = _arrays(wrong, score)
    pos, neg = _value_counts(y, s)
    return float(_auroc_from_counts(pos, neg))


def auprc(wrong: Any, score: Any) -> float:
    """Average precision of finding wrong items by low score; compare it with the prevalence."""
    y, s, _ = _arrays(wrong, score)
    pos, neg = _value_counts(y, s)
    return float(_ap_from_counts(pos, neg))


# --------------------------------------------------------------------------- bootstrap


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    n_boot: int
    level: float = 0.95

    def __str__(self) -> str:
        return interval(self.estimate, self.low, self.high)


def _review_draws(draws: Mapping[str, np.ndarray], budget: float) -> tuple[np.ndarray, np.ndarray]:
    j = int(np.flatnonzero(draws["budgets"] == budget)[0])
    return draws["precision"][:, j], draws["recall"][:, j]


def _group_value_matrices(y: np.ndarray, s: np.ndarray, g: np.ndarray) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    _, inv = np.unique(s, return_inverse=True)
    n_groups, n_values = int(g.max()) + 1, int(inv.max()) + 1
    pos = sparse.csr_matrix((y, (g, inv)), shape=(n_groups, n_values))
    neg = sparse.csr_matrix((1 - y, (g, inv)), shape=(n_groups, n_values))
    return pos, neg


def bootstrap_counts(
    wrong: Any, score: Any, groups: Any | None, *, n_boot: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Positives and negatives per distinct score for each resample, ``(n_boot, n_values)`` each."""
    y, s, g = _arrays(wrong, score, groups)
    pos_m, neg_m = _group_value_matrices(y, s, g)
    n_groups = pos_m.shape[0]
    pos_t, neg_t = pos_m.T.tocsr(), neg_m.T.tocsr()
    out_pos = np.empty((n_boot, pos_m.shape[1]))
    out_neg = np.empty_like(out_pos)
    start = 0
    for d in iter_group_draws(n_groups, n_boot, seed):
        offsets = (np.arange(len(d)) * n_groups)[:, None]
        counts = np.bincount((d + offsets).ravel(), minlength=len(d) * n_groups).reshape(len(d), n_groups)
        counts_t = counts.T.astype(float)
        out_pos[start : start + len(d)] = (pos_t @ counts_t).T
        out_neg[start : start + len(d)] = (neg_t @ counts_t).T
        start += len(d)
    return out_pos, out_neg


def _interval(estimate: float, samples: np.ndarray, level: float) -> Interval:
    ok = samples[~np.isnan(samples)]
    if not len(ok):
        return Interval(estimate, float("nan"), float("nan"), 0, level)
    lo, hi = np.quantile(ok, [(1 - level) / 2, (1 + level) / 2])
    return Interval(estimate, float(lo), float(hi), len(ok), level)


def auroc_interval(
    wrong: Any,
    score: Any,
    groups: Any | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    intervals: str = "bootstrap",
) -> Interval:
    """AUROC with its interval: a percentile interval from resampling groups (documents,
    ``bootstrap``), or the clustered DeLong estimator's (``delong``, no resamples; ``n_boot`` 0).
    ``auto`` takes :func:`construct_eval.stats.delong.choose`'s rule; a table that marks its
    DeLong rows asks ``choose`` first and passes its answer here."""
    from construct_eval.stats import delong

    y, s, g = _arrays(wrong, score, groups)
    if delong.choose(intervals, y, g) == "delong":
        iv = delong.auroc_interval(y, s, g, level=level)
        return Interval(iv.estimate, iv.low, iv.high, 0, iv.level)
    return _interval(
        auroc(y, s), resampled_metrics(y, s, g, n_boot=n_boot, seed=seed, budgets=REVIEW_BUDGETS)["auroc"], level
    )


def auroc_interval_loop(
    wrong: Any, score: Any, groups: Any | None = None, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95
) -> Interval:
    """The same interval as :func:`auroc_interval` by a plain loop over scikit-learn (the reference)."""
    from sklearn.metrics import roc_auc_score

    y, s, g = _arrays(wrong, score, groups)
    order = np.argsort(g, kind="stable")
    starts = np.searchsorted(g[order], np.arange(g.max() + 1))
    ends = np.append(starts[1:], len(g))
    members = [order[a:b] for a, b in zip(starts, ends, strict=True)]
    values = np.full(n_boot, np.nan)
    b = 0
    for block in iter_group_draws(len(members), n_boot, seed):
        for draw in block:
            idx = np.concatenate([members[i] for i in draw])
            if 0 < y[idx].sum() < len(idx):
                values[b] = roc_auc_score(y[idx], -s[idx])
            b += 1
    return _interval(auroc(wrong, score), values, level)


@dataclass(frozen=True)
class PairedComparison:
    value_a: float
    value_b: float
    difference: Interval  # a - b
    p_value: float  # two-sided bootstrap p-value for "no difference"
    metric: str = "auroc"

    @property
    def auroc_a(self) -> float:
        return self.value_a

    @property
    def auroc_b(self) -> float:
        return self.value_b


PAIRED_METRICS = ("auroc", "auprc")


def compare_scores(
    wrong: Any,
    score_a: Any,
    score_b: Any,
    groups: Any | None = None,
    *,
    metric: str = "auroc",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> PairedComparison:
    """Paired bootstrap of metric(a) - metric(b) (AUROC or AUPRC) on the same items and resamples."""
    if metric not in PAIRED_METRICS:
        raise ValueError(f"metric must be one of {PAIRED_METRICS}, not {metric!r}")
    point = auroc if metric == "auroc" else auprc
    y, sa, g = _arrays(wrong, score_a, groups)
    _, sb, _ = _arrays(y, score_b)
    draws_a = resampled_metrics(y, sa, g, n_boot=n_boot, seed=seed, budgets=REVIEW_BUDGETS)
    draws_b = resampled_metrics(y, sb, g, n_boot=n_boot, seed=seed, budgets=REVIEW_BUDGETS)
    diffs = draws_a[metric] - draws_b[metric]
    a, b = point(y, sa), point(y, sb)
    return PairedComparison(a, b, _interval(a - b, diffs, level), paired_p_value(diffs), metric)


def paired_p_value(diffs: np.ndarray) -> float:
    """Two-sided bootstrap p-value for "no difference" from the B resampled differences (those of
    resamples without both classes, NaN, left out): twice the smaller count k on either side of 0,
    counted as (k + 1) / (B + 1) (Davison & Hinkley 1997, eq. 4.11), so it is never 0: with no
    resample across 0 it is 2 / (B + 1), the most B resamples can show. A Holm correction of it
    then stays an honest bound (a 0 would stay 0 however many tests it is corrected for)."""
    ok = diffs[~np.isnan(diffs)]
    if not len(ok):
        return float("nan")
    k = min(int((ok <= 0).sum()), int((ok >= 0).sum()))
    return float(min(1.0, 2 * (k + 1) / (len(ok) + 1)))


def compare_aurocs(
    wrong: Any,
    score_a: Any,
    score_b: Any,
    groups: Any | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> PairedComparison:
    """Paired bootstrap of AUROC(a) - AUROC(b) on the same items and the same resamples."""
    return compare_scores(wrong, score_a, score_b, groups, metric="auroc", n_boot=n_boot, seed=seed, level=level)


# --------------------------------------------------------------------------- review budgets

REVIEW_BUDGETS = (0.05, 0.1, 0.2, 0.3)
"""Shares of items reviewed, lowest score first: the paper's way of stating what a score saves."""


@dataclass(frozen=True)
class ReviewOutcome:
    budget: float  # share of items reviewed
    reviewed: float  # items reviewed (expected; fractional inside a tied block)
    precision: float
    recall: float
    f1: float


def review_lowest(wrong: Any, score: Any, budget: float) -> ReviewOutcome:
    """Review the lowest-scored ``budget`` share of items; ties at the cut broken at random.

    The result is the exact expectation over random orders within the tied block, which is
    what averaging many random tie-breaks converges to.
    """
    if not 0 <= budget <= 1:
        raise ValueError("budget must be in [0, 1]")
    y, s, _ = _arrays(wrong, score)
    pos, neg = _value_counts(y, s)
    return _review_outcome(pos, neg, budget, len(y))


def review_curve(wrong: Any, score: Any, budgets: Sequence[float]) -> list[ReviewOutcome]:
    """:func:`review_lowest` at each budget, the items counted once (a figure asks for 51)."""
    if any(not 0 <= b <= 1 for b in budgets):
        raise ValueError("budget must be in [0, 1]")
    y, s, _ = _arrays(wrong, score)
    pos, neg = _value_counts(y, s)
    return [_review_outcome(pos, neg, float(b), len(y)) for b in budgets]


def _review_outcome(pos: np.ndarray, neg: np.ndarray, budget: float, n: int) -> ReviewOutcome:
    precision, recall = (float(v) for v in _review_from_counts(pos, neg, budget))
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return ReviewOutcome(budget, budget * n, precision, recall, f1)


def threshold_table(wrong: Any, score: Any) -> list[dict[str, float]]:
    """For each distinct score t: review every item scored <= t; share reviewed, precision, recall, F1."""
    y, s, _ = _arrays(wrong, score)
    values = distinct_scores(s)[0]
    pos, neg = _value_counts(y, s)
    tp, fp = np.cumsum(pos), np.cumsum(neg)
    rows = []
    for t, a, b in zip(values, tp, fp, strict=True):
        precision = a / (a + b) if a + b else float("nan")
        recall = a / pos.sum() if pos.sum() else float("nan")
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        rows.append(
            {
                "threshold": float(t),
                "share_reviewed": float((a + b) / len(y)),
                "precision": float(precision),
                "recall": float(recall),
                "f1": float(f1),
            }
        )
    return rows


def expected_errors(wrong: Any, score: Any) -> np.ndarray:
    """Expected wrong items among the k most trusted, k = 1..n, ties in random order: within a
    group of equal scores (a rating has ten values) the expected errors grow linearly."""
    y, s, _ = _arrays(wrong, score)
    values, inverse = np.unique(-s, return_inverse=True)  # most trusted first
    size = np.bincount(inverse, minlength=len(values)).astype(float)
    errs = np.bincount(inverse, weights=y, minlength=len(values))
    before_n = np.concatenate([[0.0], np.cumsum(size)[:-1]])
    before_e = np.concatenate([[0.0], np.cumsum(errs)[:-1]])
    k = np.arange(1, len(s) + 1, dtype=float)
    group = np.searchsorted(np.cumsum(size), k, side="left")  # the tie group the k-th item falls in
    return before_e[group] + (k - before_n[group]) * errs[group] / size[group]


def risk_coverage(wrong: Any, score: Any, *, per_item: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Accept the most trusted items first: coverage (share accepted) and risk (error rate among
    them), at each distinct score (the end of each tie group) or, ``per_item``, at every k = 1..n
    (ties as the average over random orders, :func:`expected_errors`). At a tie group's end the two
    are the same number.

    >>> coverage, risk = risk_coverage([0, 1, 0, 1], [0.9, 0.9, 0.5, 0.1])
    >>> coverage.tolist(), risk.tolist()
    ([0.5, 0.75, 1.0], [0.5, 0.3333333333333333, 0.5])
    >>> risk_coverage([0, 1, 0, 1], [0.9, 0.9, 0.5, 0.1], per_item=True)[1].tolist()
    [0.5, 0.5, 0.3333333333333333, 0.5]
    """
    errors = expected_errors(wrong, score)
    n = len(errors)
    k = np.arange(1, n + 1, dtype=float)
    if not per_item:  # a tie group's last item: the next score is lower
        s = np.sort(np.asarray(score, dtype=float))[::-1]
        ends = np.flatnonzero(np.append(s[1:] != s[:-1], True))
        errors, k = errors[ends], k[ends]
    return k / n, errors / k


def roc_points(wrong: Any, score: Any) -> tuple[np.ndarray, np.ndarray]:
    """False- and true-positive rates of flagging score <= t, for every distinct t (from (0, 0))."""
    y, s, _ = _arrays(wrong, score)
    pos, neg = _value_counts(y, s)
    tpr = np.concatenate([[0.0], np.cumsum(pos) / max(pos.sum(), 1)])
    fpr = np.concatenate([[0.0], np.cumsum(neg) / max(neg.sum(), 1)])
    return fpr, tpr


def pr_points(wrong: Any, score: Any) -> tuple[np.ndarray, np.ndarray]:
    """Recall and precision of flagging score <= t, for every distinct t."""
    y, s, _ = _arrays(wrong, score)
    pos, neg = _value_counts(y, s)
    tp, fp = np.cumsum(pos), np.cumsum(neg)
    return tp / max(pos.sum(), 1), tp / np.maximum(tp + fp, 1e-12)


@dataclass(frozen=True)
class DetectionSummary:
    n: int
    n_groups: int
    prevalence: float
    auroc: Interval
    auprc: Interval
    review: dict[float, ReviewOutcome]
    positives: int = 0
    n_boot: int = 0  # resamples drawn; ``auroc.n_boot`` of them had both classes
    review_intervals: dict[float, tuple[Interval, Interval]] | None = None  # (precision, recall) per budget

    @property
    def boot_dropped(self) -> int:
        return self.n_boot - self.auroc.n_boot

    def power_note(self) -> str:
        """Why the row is underpowered ("" if it is not), by the project's rule (:mod:`construct_eval.power`)."""
        why = power.reasons(
            wrong=self.positives, right=self.n - self.positives, documents=self.n_groups,
            width=self.auroc.high - self.auroc.low, documents_why=": the document bootstrap is coarse",
        )  # fmt: skip
        if self.n_boot and self.boot_dropped / self.n_boot > power.MAX_DROPPED_SHARE:
            why.append(f"{self.boot_dropped} of {self.n_boot} resamples lacked a class: no interval")
        return "; ".join(why)

    @property
    def hides_intervals(self) -> bool:
        """Too many resamples lacked a class (:data:`power.MAX_DROPPED_SHARE`): the intervals are not printed."""
        return bool(self.n_boot) and self.boot_dropped / self.n_boot > power.MAX_DROPPED_SHARE

    def row(self) -> dict[str, Any]:
        hide = self.hides_intervals
        nan = float("nan")
        out: dict[str, Any] = {
            "n": self.n,
            "documents": self.n_groups,
            "positives": self.positives,
            "prevalence": round(self.prevalence, 4),
            "auroc": round(self.auroc.estimate, 4),
            "auroc_low": nan if hide else round(self.auroc.low, 4),
            "auroc_high": nan if hide else round(self.auroc.high, 4),
            "auprc": round(self.auprc.estimate, 4),
            "auprc_low": nan if hide else round(self.auprc.low, 4),
            "auprc_high": nan if hide else round(self.auprc.high, 4),
            "boot_dropped": self.boot_dropped,
            "underpowered": self.power_note(),
        }
        for budget, r in self.review.items():
            pct = round(budget * 100)
            bounds = (self.review_intervals or {}).get(budget)
            for name, value, drawn in (
                ("precision", r.precision, bounds[0] if bounds else None),
                ("recall", r.recall, bounds[1] if bounds else None),
            ):
                out[f"{name}@{pct}%"] = round(value, 4)
                if drawn is not None:
                    out[f"{name}@{pct}%_low"] = nan if hide else round(drawn.low, 4)
                    out[f"{name}@{pct}%_high"] = nan if hide else round(drawn.high, 4)
        return out


def _delong_interval(y: np.ndarray, s: np.ndarray, g: np.ndarray, draws: np.ndarray) -> Interval:
    """The clustered DeLong AUROC interval as an :class:`Interval`; its ``n_boot`` is the row's
    usable resamples (those behind its other intervals), so a row's dropped count is unchanged."""
    from construct_eval.stats import delong

    iv = delong.auroc_interval(y, s, g)
    return Interval(iv.estimate, iv.low, iv.high, int((~np.isnan(draws)).sum()), iv.level)


def detection_summary(
    wrong: Any,
    score: Any,
    groups: Any | None = None,
    *,
    budgets: Sequence[float] = REVIEW_BUDGETS,
    n_boot: int = 1000,
    seed: int = 0,
    intervals: str = "bootstrap",
) -> DetectionSummary:
    """AUROC and AUPRC with document-bootstrap intervals, the prevalence, and precision and
    recall when reviewing the lowest-scored share of items, each with its interval (the
    same resamples for every number of a row). ``intervals``: the AUROC's from the resamples
    (``bootstrap``), from the clustered DeLong estimator (``delong``, no resamples; the other
    intervals stay the bootstrap's), or by :func:`construct_eval.stats.delong.choose`'s rule
    (``auto``)."""
    from construct_eval.stats import delong

    y, s, g = _arrays(wrong, score, groups)
    draws = resampled_metrics(y, s, g, n_boot=n_boot, seed=seed, budgets=(*REVIEW_BUDGETS, *budgets))
    pos, neg = _value_counts(y, s)  # the point estimates, from one count per distinct score
    review = {b: _review_outcome(pos, neg, b, len(y)) for b in budgets}
    review_intervals = {}
    for b in budgets:
        precision, recall = _review_draws(draws, b)
        review_intervals[b] = (
            _interval(review[b].precision, precision, 0.95),
            _interval(review[b].recall, recall, 0.95),
        )
    return DetectionSummary(
        n=len(y),
        n_groups=int(g.max()) + 1 if len(g) else 0,
        prevalence=float(y.mean()) if len(y) else float("nan"),
        auroc=_delong_interval(y, s, g, draws["auroc"])
        if delong.choose(intervals, y, g) == "delong"
        else _interval(float(_auroc_from_counts(pos, neg)), draws["auroc"], 0.95),
        auprc=_interval(float(_ap_from_counts(pos, neg)), draws["auprc"], 0.95),
        review=review,
        positives=int(y.sum()),
        n_boot=n_boot,
        review_intervals=review_intervals,
    )
