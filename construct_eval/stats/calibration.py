"""From a trust score (a 1-10 rating, an expected rating, a log-prob) to P(error), and how good that map is.

The parts, one job each, all importable from here:

- :mod:`~construct_eval.stats.calibrators`: the calibrators (``fit(score, wrong)`` /
  ``predict(score) -> P(error)``) by name in :data:`CALIBRATORS` (a new one is one
  :func:`register_calibrator` call): ``isotonic`` and ``platt`` (scikit-learn's models),
  ``beta`` and ``histogram`` (netcal's maps, fitted here), ``bbq``, ``enir``, ``netcal-beta`` and
  ``netcal-histogram`` from netcal (:data:`NETCAL_METHODS`), and ``platt-per-field``;
- :mod:`~construct_eval.stats.out_of_fold`: every number reported is *out of fold*:
  :func:`out_of_fold` fits on folds grouped by document (no document's fields on both sides)
  and predicts the held-out fold. In-sample isotonic regression has an ECE of zero by
  construction and says nothing;
- :mod:`~construct_eval.stats.calibration_metrics`: Brier, log loss, ECE with equal-width and
  equal-mass bins, a debiased ECE (Kumar et al. 2019), MCE; reliability tables with Wilson
  intervals per bin;
- here: what a calibrated score is used for, a review planner (:func:`plan_review`), and what
  each value of a score with few values means (:func:`value_table`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from construct_eval.stats.calibration_metrics import (  # noqa: F401 (the metrics, importable from here)
    EPS,
    ReliabilityBin,
    bin_edges,
    brier,
    calibration_metrics,
    debiased_ece,
    debiased_squared_error,
    ece,
    log_loss,
    mce,
    reliability_table,
    wilson,
)
from construct_eval.stats.calibrators import (  # noqa: F401 (the registry, importable from here)
    CALIBRATORS,
    METHODS,
    NETCAL_METHODS,
    BetaCalibrator,
    Calibrator,
    FieldCalibrator,
    HistogramCalibrator,
    IsotonicCalibrator,
    NetcalCalibrator,
    NetcalMethod,
    PerFieldCalibrator,
    PlattCalibrator,
    _check,
    calibrator_name,
    make_calibrator,
    quiet_netcal,
    register_calibrator,
)
from construct_eval.stats.out_of_fold import out_of_fold, out_of_fold_per_field  # noqa: F401

# --------------------------------------------------------------------------- review planner


@dataclass(frozen=True)
class ReviewPlan:
    target_recall: float
    threshold: float  # review every item with P(error) >= threshold
    share_items: float
    share_documents: float
    expected_recall: float  # from the calibrated probabilities alone (what a user without labels sees)
    realised_recall: float | None  # on labelled data, when labels are given
    realised_precision: float | None


def plan_review(p_error: Any, groups: Any, *, target_recall: float = 0.9, wrong: Any | None = None) -> ReviewPlan:
    """The P(error) threshold expected to catch ``target_recall`` of the errors, and its cost.

    Items are flagged from the most to the least suspicious until the calibrated
    probabilities say that share of the expected errors is covered; the cost is the share
    of items and of documents (any flagged field sends a document to review).
    """
    if not 0 < target_recall <= 1:
        raise ValueError("target_recall must be in (0, 1]")
    p, _ = _check(p_error)
    g = np.asarray(groups)
    order = np.argsort(-p, kind="stable")
    expected = np.cumsum(p[order]) / max(p.sum(), EPS)
    k = int(np.searchsorted(expected, target_recall - 1e-12) + 1)
    k = min(k, len(p))
    threshold = float(p[order][k - 1])
    flagged = p >= threshold
    realised_recall = realised_precision = None
    if wrong is not None:
        _, y = _check(p, wrong)
        assert y is not None
        realised_recall = float(y[flagged].sum() / y.sum()) if y.sum() else float("nan")
        realised_precision = float(y[flagged].mean()) if flagged.any() else float("nan")
    if g.ndim == 1 and g.dtype.kind in "iu" and len(g) and g.min() >= 0:  # documents as codes: counted, not sorted
        documents = np.bincount(g)
        share_documents = float(
            np.count_nonzero(np.bincount(g[flagged], minlength=len(documents))) / np.count_nonzero(documents)
        )
    else:
        share_documents = float(len(np.unique(g[flagged])) / len(np.unique(g)))
    return ReviewPlan(
        target_recall,
        threshold,
        float(flagged.mean()),
        share_documents,
        float(p[flagged].sum() / max(p.sum(), EPS)),
        realised_recall,
        realised_precision,
    )


FEW_ITEMS = 20
"""A score value holding fewer items than this is shown but marked: its error rate is loose."""


def value_table(
    score: Any,
    wrong: Any,
    *,
    fitted: Mapping[str, Any] | None = None,
    naive: Callable[[float], float] | None = None,
) -> list[dict[str, Any]]:
    """For each distinct score value: items, errors, the observed error rate with its Wilson
    interval, and (optionally) what each fitted map predicts there (the mean of its out-of-fold
    predictions at that value) and a naive reading such as ``P(error) = (10 - r) / 9``.

    This is what a score with few values means, read off the data: no curve is fitted through
    two or three points, and a value with fewer than :data:`FEW_ITEMS` items is marked.
    """
    s, y = _check(score, wrong)
    assert y is not None
    rows = []
    for v in np.unique(s):
        mask = s == v
        n, k = int(mask.sum()), int(y[mask].sum())
        low, high = wilson(k, n)
        row: dict[str, Any] = {
            "value": float(v),
            "n": n,
            "wrong": k,
            "error_rate": round(k / n, 4),
            "error_low": round(low, 4),
            "error_high": round(high, 4),
            "few_items": n < FEW_ITEMS,
        }
        if naive is not None:
            row["naive"] = round(float(naive(float(v))), 4)
        for name, p in (fitted or {}).items():
            row[name] = round(float(np.mean(np.asarray(p)[mask])), 4)
        rows.append(row)
    return rows


def naive_rating_reading(rating: float) -> float:
    """The reading a user is tempted by: a 1-10 rating r means P(error) = (10 - r) / 9."""
    return min(1.0, max(0.0, (10.0 - rating) / 9.0))


def describe_values(rows: Sequence[Mapping[str, Any]], min_items: int = FEW_ITEMS) -> list[str]:
    """What each value of a :func:`value_table` means, in words: its observed error rate with the
    Wilson interval and the item count, beside the naive reading where the table has one; values
    with fewer than ``min_items`` items are named as too few to read. Rows may come from the
    function or from its stored CSV (strings)."""
    out = []
    for r in rows:
        n, value = int(float(r["n"])), float(r["value"])
        shown = int(value) if value.is_integer() else value
        if n < min_items:
            out.append(f"rating {shown}: {n:,} items, too few to read")
            continue
        text = (
            f"rating {shown} ({n:,} items): {100 * float(r['error_rate']):.1f}% wrong"
            f" [{100 * float(r['error_low']):.1f}%, {100 * float(r['error_high']):.1f}%]"
        )
        if r.get("naive") not in (None, ""):
            text += f"; the naive reading (10 - r)/9 says {100 * float(r['naive']):.0f}%"
        out.append(text)
    return out
