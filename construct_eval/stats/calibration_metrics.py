"""How good a map to P(error) is: Brier, log loss, ECE with equal-width and equal-mass bins, a
debiased ECE (the binned estimator minus its sampling-noise bias, Kumar et al. 2019), MCE, and
reliability tables with Wilson intervals per bin. Every input is a P(error) made out of fold
(:mod:`~construct_eval.stats.out_of_fold`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtri  # the normal quantile; scipy.stats costs half a second to import

from construct_eval.stats.calibrators import _check

EPS = 1e-6


def brier(p_error: Any, wrong: Any) -> float:
    p, y = _check(p_error, wrong)
    return float(np.mean((p - y) ** 2))


def log_loss(p_error: Any, wrong: Any) -> float:
    p, y = _check(p_error, wrong)
    p = np.clip(p, EPS, 1 - EPS)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def bin_edges(p: np.ndarray, bins: int, strategy: str) -> np.ndarray:
    """Equal-width edges on [0, 1], or equal-mass edges (quantiles) with the ends at 0 and 1."""
    if strategy == "width":
        return np.linspace(0.0, 1.0, bins + 1)
    if strategy == "mass":
        edges = np.quantile(p, np.linspace(0.0, 1.0, bins + 1))
        edges[0], edges[-1] = 0.0, 1.0
        return edges
    raise ValueError("strategy must be 'width' or 'mass'")


def _bin_index(p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.clip(np.searchsorted(edges[1:-1], p, side="right"), 0, len(edges) - 2)


def wilson(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion."""
    if n <= 0:
        return float("nan"), float("nan")
    z = ndtri((1 + level) / 2)
    phat = successes / n
    denom = 1 + z**2 / n
    center = (phat + z**2 / (2 * n)) / denom
    half = z * np.sqrt(phat * (1 - phat) / n + z**2 / (4 * n**2)) / denom
    return float(max(0.0, min(phat, center - half))), float(min(1.0, max(phat, center + half)))


@dataclass(frozen=True)
class ReliabilityBin:
    low: float
    high: float
    n: int
    mean_predicted: float
    observed: float
    observed_low: float
    observed_high: float


def reliability_table(p_error: Any, wrong: Any, *, bins: int = 10, strategy: str = "width") -> list[ReliabilityBin]:
    """Per bin of predicted P(error): its mean, the observed error rate and a Wilson interval."""
    p, y = _check(p_error, wrong)
    return _reliability(p, y, bins, strategy)


def _reliability(p: np.ndarray, y: np.ndarray, bins: int, strategy: str) -> list[ReliabilityBin]:
    edges = bin_edges(p, bins, strategy)
    idx = _bin_index(p, edges)
    out = []
    for b in range(bins):
        m = idx == b
        n = int(m.sum())
        if not n:
            continue
        lo, hi = wilson(float(y[m].sum()), n)
        out.append(
            ReliabilityBin(float(edges[b]), float(edges[b + 1]), n, float(p[m].mean()), float(y[m].mean()), lo, hi)
        )
    return out


def ece(p_error: Any, wrong: Any, *, bins: int = 10, strategy: str = "width") -> float:
    """Expected calibration error of P(error): bin-weighted |mean predicted - observed|."""
    p, y = _check(p_error, wrong)
    return _ece(reliability_table(p, y, bins=bins, strategy=strategy), len(p))


def _ece(table: list[ReliabilityBin], n: int) -> float:
    return float(sum(b.n * abs(b.mean_predicted - b.observed) for b in table) / n)


def mce(p_error: Any, wrong: Any, *, bins: int = 10, strategy: str = "width") -> float:
    """Maximum calibration error over non-empty bins."""
    return _mce(reliability_table(p_error, wrong, bins=bins, strategy=strategy))


def _mce(table: list[ReliabilityBin]) -> float:
    return float(max((abs(b.mean_predicted - b.observed) for b in table), default=0.0))


def debiased_squared_error(p_error: Any, wrong: Any, *, bins: int = 10, strategy: str = "mass") -> float:
    """Unbiased estimate of the binned squared calibration error (may be negative by noise).

    The plug-in squared error of a bin overstates the truth by the variance of its observed
    rate, about observed * (1 - observed) / (n - 1); that is subtracted (Kumar et al. 2019).
    """
    p, y = _check(p_error, wrong)
    return _debiased_squared_error(reliability_table(p, y, bins=bins, strategy=strategy), len(p))


def _debiased_squared_error(table: list[ReliabilityBin], n: int) -> float:
    total = 0.0
    for b in table:
        if b.n < 2:
            continue
        sq = (b.mean_predicted - b.observed) ** 2 - b.observed * (1 - b.observed) / (b.n - 1)
        total += b.n / n * sq
    return float(total)


def debiased_ece(p_error: Any, wrong: Any, *, bins: int = 10, strategy: str = "mass") -> float:
    """Square root of :func:`debiased_squared_error`, floored at 0: a perfectly calibrated score
    gives about 0 instead of a positive number that shrinks only with more data."""
    return float(np.sqrt(max(debiased_squared_error(p_error, wrong, bins=bins, strategy=strategy), 0.0)))


def calibration_metrics(p_error: Any, wrong: Any, *, bins: int = 10) -> dict[str, float]:
    """Brier, log loss, ECE with equal-width and equal-mass bins, the debiased ECE (equal-mass
    bins) and MCE (equal-width bins): each binning made once for the numbers that read it."""
    p, y = _check(p_error, wrong)
    width = _reliability(p, y, bins, "width")
    mass = _reliability(p, y, bins, "mass")
    return {
        "brier": brier(p, y),
        "log_loss": log_loss(p, y),
        "ece_width": _ece(width, len(p)),
        "ece_mass": _ece(mass, len(p)),
        "ece_debiased": float(np.sqrt(max(_debiased_squared_error(mass, len(p)), 0.0))),
        "mce": _mce(width),
    }
