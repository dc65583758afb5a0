"""The calibration map a trust policy keeps: from score to P(wrong), as plain numbers a policy file
holds and reads back.

Isotonic or Platt, whichever has the lower out-of-fold Brier score (folds by document), the base
rate beside it; the base rate itself where neither beats it, or where the score has one value (a
constant is not calibrated).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from construct_eval.stats.out_of_fold import out_of_fold

CALIBRATION_METHODS = ("isotonic", "platt")
"""Maps a policy file can hold exactly; the one with the lower out-of-fold Brier score is kept."""


def _brier(p: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((p - y) ** 2))


def fit_calibration(score: np.ndarray, wrong: np.ndarray, groups: np.ndarray, *, seed: int = 0) -> dict[str, Any]:
    """The calibration map a policy keeps (see the module docstring), as plain numbers."""
    base = float(wrong.mean())
    out: dict[str, Any] = {"base_rate": base, "brier_base_rate": _brier(np.full_like(wrong, base), wrong)}
    if len(np.unique(score)) < 2:
        return out | {"method": "base rate", "note": "the score has one value: it is not calibrated"}
    if wrong.min() == wrong.max():
        return out | {"method": "base rate", "note": "one class only: nothing to calibrate"}
    oof = {m: _brier(out_of_fold(m, score, wrong, groups, seed=seed), wrong) for m in CALIBRATION_METHODS}
    out["brier_out_of_fold"] = oof
    best = min(oof, key=lambda m: oof[m])
    if oof[best] >= out["brier_base_rate"]:
        return out | {"method": "base rate", "note": "neither map beats the base rate out of fold"}
    from construct_eval.stats.calibrators import make_calibrator

    model = make_calibrator(best).fit(score, wrong)
    if best == "isotonic":
        iso = model.model  # type: ignore[attr-defined]
        return out | {"method": best, "x": iso.X_thresholds_.tolist(), "y": iso.y_thresholds_.tolist()}
    return out | {"method": best, **platt_parameters(model)}


def platt_parameters(model: Any) -> dict[str, float]:
    """A fitted :class:`~construct_eval.stats.calibrators.PlattCalibrator` as the numbers a policy
    file keeps (:func:`calibrated` reads them back): the standardisation and the logistic fit."""
    return {"center": float(model.center), "scale": float(model.scale), "coef": float(model.coef[0]),
            "intercept": float(model.coef[-1])}  # fmt: skip


def calibrated(calibration: Mapping[str, Any], score: np.ndarray) -> np.ndarray:
    """P(wrong) at each score from a stored map (isotonic: the step function scikit-learn fits,
    read between its points linearly and clipped beyond them, as it predicts)."""
    s = np.asarray(score, dtype=float)
    method = calibration["method"]
    if method == "isotonic":
        return np.clip(np.interp(s, calibration["x"], calibration["y"]), 0.0, 1.0)
    if method == "platt":
        z = calibration["coef"] * (s - calibration["center"]) / calibration["scale"] + calibration["intercept"]
        return 1.0 / (1.0 + np.exp(-z))
    return np.full(s.shape, float(calibration["base_rate"]))
