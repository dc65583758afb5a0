"""Three readings of a written 1-10 rating as an error probability, side by side.

A user's first reading of a rating r is P(error) = (10 - r) / 9. A rating that takes only a few
values is not given a fitted curve in the calibration table (a curve through two or three points
says little), yet the question "what does a 6 mean?" still has an answer: fit isotonic and Platt
out of fold (grouped by document, so no document informs its own prediction) and score all three
readings on the same items. Brier and an ECE over the rating's own values (each value a bin: the
natural bins of a discrete score) each carry a document-bootstrap interval, and each fitted
reading its paired Brier difference from the naive one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from construct_eval.analysis.calibration import naive_rating_reading, out_of_fold

READINGS = ("naive", "isotonic", "platt")


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
    }


def rating_readings(
    ratings: Any, wrong: Any, groups: Any, *, n_boot: int = 1000, seed: int = 0
) -> list[dict[str, Any]]:
    """One row per reading: Brier and value-binned ECE with 95% document-bootstrap intervals,
    and for the fitted readings the Brier difference from the naive reading with its interval
    (the same resamples for every number). Empty when the rating has one value or one class."""
    r = np.asarray(ratings, dtype=float)
    y = np.asarray(wrong, dtype=float)
    g = np.asarray(groups)
    if len(np.unique(r)) < 2 or len(np.unique(y)) < 2:
        return []
    preds = _readings(r, y, g, seed)
    _, gi = np.unique(g, return_inverse=True)
    members = [np.flatnonzero(gi == k) for k in range(gi.max() + 1)]
    rng = np.random.default_rng(seed)
    boot: dict[str, list[tuple[float, float, float]]] = {k: [] for k in READINGS}
    for _ in range(n_boot):
        idx = np.concatenate([members[k] for k in rng.integers(0, len(members), len(members))])
        yb, rb = y[idx], r[idx]
        naive_brier = float(np.mean((preds["naive"][idx] - yb) ** 2))
        for k in READINGS:
            pb = preds[k][idx]
            b = float(np.mean((pb - yb) ** 2))
            boot[k].append((b, value_ece(pb, yb, rb), b - naive_brier))
    naive_brier = float(np.mean((preds["naive"] - y) ** 2))
    rows = []
    for k in READINGS:
        draws = np.array(boot[k])
        low, high = np.percentile(draws, [2.5, 97.5], axis=0)
        brier = float(np.mean((preds[k] - y) ** 2))
        row: dict[str, Any] = {
            "reading": k if k == "naive" else f"{k} (out of fold)",
            "n": len(y),
            "documents": len(members),
            "brier": round(brier, 4),
            "brier_low": round(float(low[0]), 4),
            "brier_high": round(float(high[0]), 4),
            "ece_per_value": round(value_ece(preds[k], y, r), 4),
            "ece_low": round(float(low[1]), 4),
            "ece_high": round(float(high[1]), 4),
        }
        if k != "naive":
            row.update(
                brier_minus_naive=round(brier - naive_brier, 4),
                diff_low=round(float(low[2]), 4),
                diff_high=round(float(high[2]), 4),
            )
        rows.append(row)
    return rows
