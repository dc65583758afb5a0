"""A generator's error rate from few labels: prediction-powered inference (PPI++), by ``ppi-python``.

With n labelled documents and N unlabelled ones that a scorer has scored, PPI (Angelopoulos,
Bates, Fannjiang, Jordan and Zrnic 2023, arXiv 2301.09633) estimates the mean label as the mean
prediction on the unlabelled items plus the mean error of the predictions on the labelled ones;
PPI++ (arXiv 2311.01453, ppi-python's default) weighs the predictions by a tuned lambda in [0, 1],
so a useless score costs nothing: lambda goes to 0 and the interval to the classical one.

The unit is the document (fields of one document are not independent): the document-level target
is the share of wrong documents; the field-level target is the mean over documents of the share
of a document's fields that are wrong (equal to the pooled field error rate when documents have
equally many fields, as in the financial-entities runs). The prediction is label-free: one minus
the scorer's trust score scaled to [0, 1] by its range over all items (the document's mean over
its fields at the field level); PPI needs no calibrated prediction, lambda absorbs the scale.

:func:`repeated_draws` checks coverage on a fully labelled run: the run is the population, each
draw takes n labelled and N unlabelled documents from it with replacement (independent draws from
its distribution), and the truth is the run's own rate. Width is turned into an effective number
of labels: n_eff = n * (classical width / PPI width)^2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

N_LABELLED = (25, 50, 100, 200, 400)


def document_targets(scores: Any, wrong: Any, doc_ids: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per document: the share of its items that are wrong, the label-free predicted share, its id."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(wrong, dtype=float)
    lo, hi = float(s.min()), float(s.max())
    distrust = 1.0 - (s - lo) / (hi - lo) if hi > lo else np.full_like(s, 0.5)
    docs, inverse = np.unique(np.asarray(doc_ids), return_inverse=True)
    count = np.bincount(inverse).astype(float)
    return np.bincount(inverse, weights=y) / count, np.bincount(inverse, weights=distrust) / count, docs


DEGENERATE_SPREAD = 1e-9
"""Predictions that spread less than this (max minus min over the labelled and unlabelled ones
together) are one value: rounding, not a score."""


def degenerate(yhat_labelled: np.ndarray, yhat_unlabelled: np.ndarray) -> bool:
    """True where the predictions carry no information: PPI++'s tuned lambda is then a ratio of
    two rounding errors (0/0, NaN, or any value, by the CPU's arithmetic), so the rule is lambda =
    0, the classical interval, which is what PPI++ tends to as the predictions' variance goes to
    zero with nothing to learn from them."""
    both = np.concatenate([np.ravel(yhat_labelled), np.ravel(yhat_unlabelled)])
    return bool(np.ptp(both) <= DEGENERATE_SPREAD)


def intervals(
    y_labelled: np.ndarray, yhat_labelled: np.ndarray, yhat_unlabelled: np.ndarray, *, level: float = 0.95
) -> dict[str, tuple[float, float]]:
    """The PPI++ interval (power-tuned) and the classical one from the labels alone."""
    from ppi_py import classical_mean_ci, ppi_mean_ci

    a = 1 - level
    lam = 0.0 if degenerate(yhat_labelled, yhat_unlabelled) else None  # None: PPI++ tunes it
    lo, hi = ppi_mean_ci(y_labelled, yhat_labelled, yhat_unlabelled, alpha=a, lam=lam)
    c_lo, c_hi = classical_mean_ci(y_labelled, alpha=a)
    return {"ppi": (float(np.ravel(lo)[0]), float(np.ravel(hi)[0])), "classical": (float(c_lo), float(c_hi))}


def _stacked_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each row's ``a_row.T @ b_row`` as ppi-python forms it on one draw's (n, 1) columns: the same
    matrix product, stacked (so the same BLAS dot product per draw)."""
    return np.matmul(a[:, None, :], b[:, :, None])[:, 0, 0]


def _rescaled(weights: np.ndarray) -> np.ndarray:
    """ppi-python's ``construct_weight_vector`` on given weights: scaled to sum to their number
    (``w / w.sum() * n``, which need not give back exact ones)."""
    return weights / weights.sum() * len(weights)


def _ppi_given_lambda(
    y: np.ndarray, f: np.ndarray, fu: np.ndarray, lam: Any, w: np.ndarray, wu: np.ndarray, z: float
) -> tuple[np.ndarray, np.ndarray]:
    """ppi-python's ``ppi_mean_ci`` once its lambda is set, one draw per row (labels ``y`` and
    predictions ``f`` of the labelled documents, ``fu`` of the unlabelled): ``w`` and ``wu`` are
    the weights it holds at that point (ones, or ones rescaled once), and every operation is its
    own, in its order, along each row."""
    n, big_n = y.shape[1], fu.shape[1]
    w2, wu2 = _rescaled(w), _rescaled(wu)  # ppi_mean_pointestimate rescales them again
    point = (wu2 * lam * fu).mean(axis=1) + (w2 * (y - lam * f)).mean(axis=1)
    imputed_std = (wu * (lam * fu)).std(axis=1) / np.sqrt(big_n)
    rectifier_std = (w * (y - lam * f)).std(axis=1) / np.sqrt(n)
    se = np.sqrt(imputed_std**2 + rectifier_std**2)
    return point - z * se, point + z * se


def _tuned_lambda(y: np.ndarray, f: np.ndarray, fu: np.ndarray) -> np.ndarray:
    """PPI++'s power-tuning lambda per draw (row), as ppi-python's ``_calc_lam_glm`` computes it for
    a mean (one coordinate, clipped to [0, 1]) around the lambda = 1 point estimate."""
    n, big_n = y.shape[1], fu.shape[1]
    c, cu = _rescaled(np.ones(n)), _rescaled(np.ones(big_n))
    p1 = ((cu * 1 * fu).mean(axis=1) + (c * (y - 1 * f)).mean(axis=1))[:, None]
    grads, grads_hat, grads_hat_unlabelled = y - p1, f - p1, fu - p1  # times weights of exact ones
    grads_cent = grads - grads.mean(axis=1, keepdims=True)
    hat_cent = grads_hat - grads_hat.mean(axis=1, keepdims=True)
    cov_grads = (1 / n) * (_stacked_dot(grads_cent, hat_cent) + _stacked_dot(hat_cent, grads_cent))
    both = np.concatenate([grads_hat, grads_hat_unlabelled], axis=1)  # np.cov of the predictions' gradients
    both -= both.mean(axis=1, keepdims=True)
    var_grads_hat = _stacked_dot(both, both) * np.true_divide(1, both.shape[1] - 1)
    return np.clip(cov_grads / (2 * (1 + (n / big_n)) * var_grads_hat), 0, 1)


def intervals_of_draws(
    y_labelled: np.ndarray, yhat_labelled: np.ndarray, yhat_unlabelled: np.ndarray, *, level: float = 0.95
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`intervals` for many draws at once, one per row (draws x documents): each draw's PPI++
    and classical interval are the numbers :func:`intervals` gives it alone, to the bit: the same
    operations as ppi-python's ``ppi_mean_ci`` and ``classical_mean_ci``, in the same order, along
    rows instead of one draw at a time (the draws' loop cost more than their arithmetic)."""
    from scipy import stats

    y, f, fu = (np.asarray(v, dtype=float) for v in (y_labelled, yhat_labelled, yhat_unlabelled))
    n, big_n = y.shape[1], fu.shape[1]
    z = stats.norm.ppf(1 - (1 - level) / 2.0)
    spread = np.maximum(f.max(axis=1), fu.max(axis=1)) - np.minimum(f.min(axis=1), fu.min(axis=1))
    flat = spread <= DEGENERATE_SPREAD  # lambda = 0 (:func:`degenerate`), ppi-python's weights left as ones
    lo, hi = np.empty(len(y)), np.empty(len(y))
    if flat.any():
        lo[flat], hi[flat] = _ppi_given_lambda(y[flat], f[flat], fu[flat], 0.0, np.ones(n), np.ones(big_n), z)
    if (~flat).any():
        tuned = ~flat
        lam = _tuned_lambda(y[tuned], f[tuned], fu[tuned])[:, None]
        ones_n, ones_big = _rescaled(np.ones(n)), _rescaled(np.ones(big_n))  # rescaled once by the recursion
        lo[tuned], hi[tuned] = _ppi_given_lambda(y[tuned], f[tuned], fu[tuned], lam, ones_n, ones_big, z)
    mean, se = y.mean(axis=1), y.std(axis=1) / np.sqrt(n)
    return {"ppi": (lo, hi), "classical": (mean - z * se, mean + z * se)}


@dataclass(frozen=True)
class CoverageRow:
    n: int
    unlabelled: int
    draws: int
    truth: float
    ppi_coverage: float
    classical_coverage: float
    ppi_width: float
    classical_width: float

    @property
    def effective_labels(self) -> float:
        """Labels the classical interval would need to be as narrow as PPI's with n."""
        return self.n * (self.classical_width / self.ppi_width) ** 2 if self.ppi_width > 0 else float("nan")

    def to_row(self) -> dict[str, Any]:
        return {
            "n_labelled": self.n,
            "n_unlabelled": self.unlabelled,
            "draws": self.draws,
            "true_rate": round(self.truth, 4),
            "ppi_coverage": round(self.ppi_coverage, 4),
            "classical_coverage": round(self.classical_coverage, 4),
            "ppi_width": round(self.ppi_width, 4),
            "classical_width": round(self.classical_width, 4),
            "width_ratio": round(self.ppi_width / self.classical_width, 4) if self.classical_width else None,
            "effective_labels": round(self.effective_labels, 1),
        }


def repeated_draws(
    y_doc: Any,
    yhat_doc: Any,
    *,
    ns: Sequence[int] = N_LABELLED,
    unlabelled: int | None = None,
    draws: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> list[CoverageRow]:
    """Coverage and mean width of PPI++ and classical intervals over ``draws`` draws per n."""
    y = np.asarray(y_doc, dtype=float)
    f = np.asarray(yhat_doc, dtype=float)
    big_n = len(y) if unlabelled is None else unlabelled
    truth = float(y.mean())
    rng = np.random.default_rng(seed)
    out = []
    for n in ns:
        # the draws in the loop's order (labelled, then unlabelled, draw by draw), then computed together
        picks = [(rng.integers(0, len(y), n), rng.integers(0, len(y), big_n)) for _ in range(draws)]
        lab = np.array([p[0] for p in picks], dtype=np.intp).reshape(draws, n)
        unl = np.array([p[1] for p in picks], dtype=np.intp).reshape(draws, big_n)
        found = intervals_of_draws(y[lab], f[lab], f[unl], level=level)
        hit = {name: int(np.sum((lo <= truth) & (truth <= hi))) for name, (lo, hi) in found.items()}
        # summed in draw order, as a running total would: the stored widths keep their last digits
        width = {name: float(np.cumsum(hi - lo)[-1]) if draws else 0.0 for name, (lo, hi) in found.items()}
        out.append(
            CoverageRow(
                n,
                big_n,
                draws,
                truth,
                hit["ppi"] / draws,
                hit["classical"] / draws,
                width["ppi"] / draws,
                width["classical"] / draws,
            )
        )
    return out


def estimate(y_labelled: Any, yhat_labelled: Any, yhat_unlabelled: Any, *, level: float = 0.95) -> dict[str, Any]:
    """The error rate from n labelled and N unlabelled documents: both intervals and n_eff."""
    y, f, fu = (np.asarray(v, dtype=float) for v in (y_labelled, yhat_labelled, yhat_unlabelled))
    if len(y) < 2:
        raise ValueError("PPI needs at least 2 labelled documents")
    ci = intervals(y, f, fu, level=level)
    w_ppi = ci["ppi"][1] - ci["ppi"][0]
    w_cls = ci["classical"][1] - ci["classical"][0]
    return {
        "n_labelled": len(y),
        "n_unlabelled": len(fu),
        "level": level,
        "ppi_low": ci["ppi"][0],
        "ppi_high": ci["ppi"][1],
        "classical_low": ci["classical"][0],
        "classical_high": ci["classical"][1],
        "effective_labels": len(y) * (w_cls / w_ppi) ** 2 if w_ppi > 0 else float("nan"),
    }
