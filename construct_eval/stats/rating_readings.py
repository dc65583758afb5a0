"""Readings of a written 1-10 rating as an error probability, side by side.

A user's first reading of a rating r is P(error) = (10 - r) / 9. A rating that takes only a few
values is not given a fitted curve in the calibration table (a curve through two or three points
says little), yet the question "what does a 6 mean?" still has an answer: fit isotonic and Platt
out of fold (grouped by document, so no document informs its own prediction) and score all three
readings on the same items, beside a **reading per value** (each value's share wrong in the
training folds: histogram binning with one bin per value, no order imposed, for ratings whose
values are out of order) and the **base rate** (out of fold too: the training folds' share
wrong for every item), the reading that knows nothing about the rating: a map that does not beat
it has learnt only the error rate, not what a rating value means (with values out of order,
isotonic regression collapses to it). The Brier score carries a document-bootstrap interval and
each fitted reading its paired Brier difference from the naive reading and from the base rate;
the ECE over the rating's own values (each value a bin) has none (a percentile interval of a
binned ECE, a biased statistic, can lie wholly above its own estimate).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from construct_eval.stats.calibration import brier, naive_rating_reading, out_of_fold
from construct_eval.stats.metrics import group_weights


class BaseRate:
    """The share wrong of the items it is fitted on, for every item: the reading that ignores the
    score (not a registered calibrator: the calibration tables do not list it as a method)."""

    name = "base rate"

    def fit(self, score: Any, wrong: Any) -> BaseRate:
        self.rate = float(np.mean(np.asarray(wrong, dtype=float)))
        return self

    def predict(self, score: Any) -> np.ndarray:
        return np.full(len(np.asarray(score)), self.rate)


class PerValue:
    """Each rating value's share wrong among the items it is fitted on (histogram binning with one
    bin per value: no order imposed, so a rating whose error rate rises and then falls keeps it); a
    value it was not fitted on gets the fitted items' share wrong (not a registered calibrator: the
    calibration tables fit maps of scores with many values; this is the reading of a few)."""

    name = "per value"

    def fit(self, score: Any, wrong: Any) -> PerValue:
        s, y = np.asarray(score, dtype=float), np.asarray(wrong, dtype=float)
        values, at = np.unique(s, return_inverse=True)
        return self.fit_counts(values, np.bincount(at).astype(float), np.bincount(at, weights=y))

    def fit_counts(self, values: np.ndarray, count: np.ndarray, wrong: np.ndarray) -> PerValue:
        """The fit on each distinct value (sorted), its items and its wrong ones."""
        self.values = np.asarray(values, dtype=float)
        self.rates = np.asarray(wrong, dtype=float) / np.asarray(count, dtype=float)
        self.rate = float(np.sum(wrong) / np.sum(count))
        return self

    def predict(self, score: Any) -> np.ndarray:
        s = np.asarray(score, dtype=float)
        at = np.clip(np.searchsorted(self.values, s), 0, len(self.values) - 1)
        return np.where(self.values[at] == s, self.rates[at], self.rate)


def value_ece(p_error: np.ndarray, wrong: np.ndarray, values: np.ndarray) -> float:
    """Expected calibration error with one bin per rating value (weights: the items per value)."""
    total = 0.0
    for v in np.unique(values):
        at = values == v
        total += at.sum() * abs(float(p_error[at].mean()) - float(wrong[at].mean()))
    return total / len(values) if len(values) else float("nan")


def _readings(ratings: np.ndarray, wrong: np.ndarray, groups: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    return {
        "naive": np.array([naive_rating_reading(r) for r in ratings]),
        "isotonic": out_of_fold("isotonic", ratings, wrong, groups, seed=seed),
        "platt": out_of_fold("platt", ratings, wrong, groups, seed=seed),
        "per value": out_of_fold(PerValue(), ratings, wrong, groups, seed=seed),
        "base rate": out_of_fold(BaseRate(), ratings, wrong, groups, seed=seed),
    }


def rating_maps(ratings: Any, wrong: Any, groups: Any, *, seed: int = 0) -> dict[float, dict[str, float]]:
    """Rating value -> the mean out-of-fold isotonic and Platt prediction at it: the fitted
    readings :func:`rating_readings` scores, per value (what a value table and its figure draw).
    Empty where :func:`rating_readings` fits nothing."""
    r = np.asarray(ratings, dtype=float)
    y = np.asarray(wrong, dtype=float)
    if len(np.unique(r)) < 2 or len(np.unique(y)) < 2:
        return {}
    try:
        preds = _readings(r, y, np.asarray(groups), seed)
    except ValueError:
        return {}
    return {
        float(v): {m: round(float(preds[m][r == v].mean()), 4) for m in ("isotonic", "platt")} for v in np.unique(r)
    }


def rating_readings(
    ratings: Any, wrong: Any, groups: Any, *, n_boot: int = 1000, seed: int = 0
) -> list[dict[str, Any]]:
    """One row per reading (naive, isotonic, Platt, per value, base rate): Brier with its 95%
    document-bootstrap interval and the value-binned ECE, and for the fitted readings the Brier
    differences from the naive reading and from the base rate with their intervals
    (the package's document resamples, :func:`~construct_eval.stats.metrics.group_weights`,
    the same for every number). Empty when the rating has one value or one class, or too few
    documents or items of a class to fit out of fold (a run still being judged): no reading is
    better than one fitted on the items it is scored on."""
    r = np.asarray(ratings, dtype=float)
    y = np.asarray(wrong, dtype=float)
    g = np.asarray(groups)
    if len(np.unique(r)) < 2 or len(np.unique(y)) < 2:
        return []
    try:
        preds = _readings(r, y, g, seed)
    except ValueError:  # grouped folds impossible: see construct_eval.folds.grouped_folds
        return []
    _, gi = np.unique(g, return_inverse=True)
    n_groups = int(gi.max()) + 1
    weights = group_weights(n_groups, n_boot, seed)  # (resamples, documents)

    def resampled_sum(x: np.ndarray) -> np.ndarray:
        return weights @ np.bincount(gi, weights=x, minlength=n_groups)

    items = resampled_sum(np.ones(len(y)))
    draws: dict[str, dict[str, np.ndarray]] = {}
    for k, p in preds.items():
        draws[k] = {"brier": resampled_sum((p - y) ** 2) / items}
    naive_brier, base_brier = brier(preds["naive"], y), brier(preds["base rate"], y)
    rows = []
    for k, p in preds.items():
        point = brier(p, y)
        b_low, b_high = np.quantile(draws[k]["brier"], [0.025, 0.975])
        row: dict[str, Any] = {
            "reading": k if k == "naive" else f"{k} (out of fold)",
            "n": len(y),
            "documents": n_groups,
            "brier": round(point, 4),
            "brier_low": round(float(b_low), 4),
            "brier_high": round(float(b_high), 4),
            "ece_per_value": round(value_ece(p, y, r), 4),
        }
        if k != "naive":
            d_low, d_high = np.quantile(draws[k]["brier"] - draws["naive"]["brier"], [0.025, 0.975])
            row.update(
                brier_minus_naive=round(point - naive_brier, 4),
                diff_low=round(float(d_low), 4),
                diff_high=round(float(d_high), 4),
            )
        if k in ("isotonic", "platt", "per value"):
            m_low, m_high = np.quantile(draws[k]["brier"] - draws["base rate"]["brier"], [0.025, 0.975])
            row.update(
                brier_minus_base_rate=round(point - base_brier, 4),
                base_diff_low=round(float(m_low), 4),
                base_diff_high=round(float(m_high), 4),
            )
        rows.append(row)
    return rows
