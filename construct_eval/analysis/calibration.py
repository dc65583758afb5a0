"""From a trust score (a 1-10 rating, an expected rating, a log-prob) to P(error), and how good that map is.

Calibrators (all ``fit(score, wrong)`` / ``predict(score) -> P(error)``), looked up by name in
:data:`CALIBRATORS` (a new one is one :func:`register_calibrator` call; an instance is accepted
wherever a name is):

- ``isotonic`` and ``platt`` from scikit-learn;
- ``beta``, ``histogram``, ``bbq`` and ``enir`` from netcal (:data:`NETCAL_METHODS`, the one place
  netcal's classes are named). netcal reads a probability of
  the positive class, so the score is first mapped onto (0, 1) by the training fold's range
  and the calibrator learns P(right); P(error) is one minus that. netcal imports torch
  (seconds), so it is imported only when one of its methods is used, with its warnings
  silenced and its tensorboard logging off.

Every number reported here is *out of fold*: :func:`out_of_fold` fits on folds grouped by
document (no document's fields on both sides) and predicts the held-out fold. In-sample
isotonic regression has an ECE of zero by construction and says nothing.

Metrics: Brier, log loss, ECE with equal-width and equal-mass bins, a debiased ECE (the
binned estimator minus its sampling-noise bias, Kumar et al. 2019), MCE; reliability
tables with Wilson intervals per bin; and a review planner.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import io
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from functools import partial
from typing import Any, Protocol

import numpy as np
from scipy import stats

from construct_eval.folds import grouped_folds

EPS = 1e-6


class Calibrator(Protocol):
    """Maps a score to P(error), fitted on (score, wrong). A new calibrator implements this and
    is registered by name (:func:`register_calibrator`)."""

    def fit(self, score: np.ndarray, wrong: np.ndarray) -> Calibrator: ...

    def predict(self, score: np.ndarray) -> np.ndarray: ...


class FieldCalibrator(Protocol):
    """A calibrator that also reads which field an item is (not a :class:`Calibrator`: its
    ``fit`` and ``predict`` need the fields)."""

    def fit(self, score: np.ndarray, wrong: np.ndarray, fields: Sequence[str]) -> FieldCalibrator: ...

    def predict(self, score: np.ndarray, fields: Sequence[str]) -> np.ndarray: ...


def _check(score: Any, wrong: Any | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    s = np.asarray(score, dtype=float).ravel()
    if np.isnan(s).any():
        raise ValueError("score has NaN: drop unscored items first")
    if wrong is None:
        return s, None
    y = np.asarray(wrong, dtype=float).ravel()
    if y.shape != s.shape:
        raise ValueError(f"score and wrong differ in length: {s.shape} vs {y.shape}")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("wrong must be 0/1")
    return s, y


class IsotonicCalibrator:
    """Monotone, non-increasing map from trust score to P(error) (scikit-learn)."""

    name = "isotonic"

    def fit(self, score: Any, wrong: Any) -> IsotonicCalibrator:
        from sklearn.isotonic import IsotonicRegression

        s, y = _check(score, wrong)
        self.model = IsotonicRegression(increasing=False, out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(s, y)
        return self

    def predict(self, score: Any) -> np.ndarray:
        s, _ = _check(score)
        return np.clip(self.model.predict(s), 0.0, 1.0)


class PlattCalibrator:
    """Logistic regression of the error on the score (Platt scaling, with an intercept)."""

    name = "platt"

    def fit(self, score: Any, wrong: Any) -> PlattCalibrator:
        from sklearn.linear_model import LogisticRegression

        s, y = _check(score, wrong)
        self.center, self.scale = float(s.mean()), float(s.std() or 1.0)
        self.model = LogisticRegression(C=1e4).fit(((s - self.center) / self.scale)[:, None], y)
        return self

    def predict(self, score: Any) -> np.ndarray:
        s, _ = _check(score)
        return self.model.predict_proba(((s - self.center) / self.scale)[:, None])[:, 1]


@contextlib.contextmanager
def quiet_netcal() -> Iterator[None]:
    """netcal and pyro warn and print on import and fit; keep that out of the user's output."""
    sink = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        for category in (DeprecationWarning, FutureWarning, UserWarning, RuntimeWarning):
            warnings.simplefilter("ignore", category)
        yield


@dataclass(frozen=True)
class NetcalMethod:
    """One netcal calibrator: where its class lives, how it is built and fitted."""

    module: str
    cls: str
    init: Callable[[int], dict[str, Any]] = lambda bins: {}  # keyword arguments, from the bin count
    fit: Mapping[str, Any] = dataclass_field(default_factory=dict)  # keyword arguments of fit


NETCAL_METHODS: Mapping[str, NetcalMethod] = {
    "beta": NetcalMethod("netcal.scaling", "BetaCalibration", lambda bins: {"method": "mle"}, {"tensorboard": False}),
    "histogram": NetcalMethod("netcal.binning", "HistogramBinning", lambda bins: {"bins": bins}),
    "bbq": NetcalMethod("netcal.binning", "BBQ"),
    "enir": NetcalMethod("netcal.binning", "ENIR"),
}
"""netcal's methods by our name: the one place their classes are named."""


class NetcalCalibrator:
    """A netcal method on the score mapped to (0, 1) by the training range; predicts P(error)."""

    def __init__(self, method: str, bins: int = 10):
        if method not in NETCAL_METHODS:
            raise ValueError(f"not a netcal method here: {method!r}; choose from {tuple(NETCAL_METHODS)}")
        self.name = method
        self.bins = bins

    def _unit(self, s: np.ndarray) -> np.ndarray:
        """The training range onto [0.05, 0.95]: away from 0 and 1, where Beta's log terms explode."""
        return np.clip(0.05 + 0.9 * (s - self.lo) / (self.hi - self.lo), 1e-3, 1 - 1e-3)

    def fit(self, score: Any, wrong: Any) -> NetcalCalibrator:
        s, y = _check(score, wrong)
        self.lo, self.hi = float(s.min()), float(s.max())
        if self.hi <= self.lo:
            self.hi = self.lo + 1.0
        spec = NETCAL_METHODS[self.name]
        with quiet_netcal():
            model_class = getattr(importlib.import_module(spec.module), spec.cls)
            right = (1 - y).astype(int)
            self.model = model_class(**spec.init(self.bins)).fit(self._unit(s), right, **spec.fit)
        return self

    def predict(self, score: Any) -> np.ndarray:
        s, _ = _check(score)
        with quiet_netcal():
            p_right = np.asarray(self.model.transform(self._unit(s)), dtype=float).ravel()
        return np.clip(1.0 - p_right, 0.0, 1.0)


CALIBRATORS: dict[str, Callable[[], Calibrator]] = {
    "isotonic": IsotonicCalibrator,
    "platt": PlattCalibrator,
    **{name: partial(NetcalCalibrator, name) for name in NETCAL_METHODS},
}
"""Every calibrator by name: a class (or factory) making a new, unfitted one."""
METHODS = tuple(CALIBRATORS)
"""The built-in calibrators' names, in the order the tables list them."""


def register_calibrator(name: str, factory: Callable[[], Calibrator]) -> None:
    """Make a calibrator known by ``name`` (to :func:`make_calibrator`, ``calibrate --methods``)."""
    if name in CALIBRATORS and CALIBRATORS[name] is not factory:
        raise ValueError(f"calibration method {name!r} is already registered")
    CALIBRATORS[name] = factory


def calibrator_name(method: str | Calibrator) -> str:
    """The name a calibrator is reported under: its registered name, or an instance's ``name``."""
    return method if isinstance(method, str) else str(getattr(method, "name", type(method).__name__))


def make_calibrator(method: str | Calibrator) -> Calibrator:
    """A new, unfitted calibrator: by registered name, or a fresh copy of the instance given."""
    if not isinstance(method, str):
        if not (callable(getattr(method, "fit", None)) and callable(getattr(method, "predict", None))):
            raise TypeError(f"a calibrator needs fit(score, wrong) and predict(score): {method!r}")
        return copy.deepcopy(method)
    factory = CALIBRATORS.get(method)
    if factory is None:
        raise ValueError(f"unknown calibration method {method!r}; choose from {tuple(CALIBRATORS)}")
    return factory()


class _Constant:
    """What a fold with one class can learn: its error rate."""

    def __init__(self, rate: float):
        self.rate = rate

    def predict(self, score: Any) -> np.ndarray:
        return np.full(len(np.asarray(score)), self.rate)


def _folds(wrong: np.ndarray, groups: np.ndarray, n_splits: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    return grouped_folds(wrong, groups, n_splits, seed, what="calibration")


def out_of_fold(
    method: str | Calibrator,
    score: Any,
    wrong: Any,
    groups: Any,
    *,
    n_splits: int = 5,
    seed: int = 0,
) -> np.ndarray:
    """P(error) for every item from a calibrator that never saw its document."""
    s, y = _check(score, wrong)
    assert y is not None
    g = np.asarray(groups)
    if g.shape != s.shape:
        raise ValueError("groups must have one entry per item")
    out = np.empty_like(s)
    for train, test in _folds(y, g, n_splits, seed):
        if len(np.unique(y[train])) < 2:
            model: Any = _Constant(float(y[train].mean()))
        else:
            model = make_calibrator(method).fit(s[train], y[train])
        out[test] = model.predict(s[test])
    return out


class PerFieldCalibrator:
    """One logistic model over all fields: a common slope on the score and an intercept per field
    (a :class:`FieldCalibrator`).

    Fields with few examples borrow strength from the others (the slope is shared); a field
    never seen in training falls back to the reference intercept.
    """

    name = "platt-per-field"

    def fit(self, score: Any, wrong: Any, fields: Sequence[str]) -> PerFieldCalibrator:
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import OneHotEncoder

        s, y = _check(score, wrong)
        self.center, self.scale = float(s.mean()), float(s.std() or 1.0)
        self.encoder = OneHotEncoder(handle_unknown="ignore", drop="first").fit(np.asarray(fields)[:, None])
        self.model = LogisticRegression(C=10.0).fit(self._x(s, fields), y)
        return self

    def _x(self, s: np.ndarray, fields: Sequence[str]) -> np.ndarray:
        with warnings.catch_warnings():  # unseen fields get the reference intercept, by design
            warnings.filterwarnings("ignore", message="Found unknown categories", category=UserWarning)
            onehot = self.encoder.transform(np.asarray(fields)[:, None]).toarray()
        return np.column_stack([(s - self.center) / self.scale, onehot])

    def predict(self, score: Any, fields: Sequence[str]) -> np.ndarray:
        s, _ = _check(score)
        return self.model.predict_proba(self._x(s, fields))[:, 1]


def out_of_fold_per_field(
    score: Any, wrong: Any, groups: Any, fields: Sequence[str], *, n_splits: int = 5, seed: int = 0
) -> np.ndarray:
    s, y = _check(score, wrong)
    assert y is not None
    g, f = np.asarray(groups), np.asarray(fields)
    out = np.empty_like(s)
    for train, test in _folds(y, g, n_splits, seed):
        if len(np.unique(y[train])) < 2:
            out[test] = y[train].mean()
            continue
        model = PerFieldCalibrator().fit(s[train], y[train], list(f[train]))
        out[test] = model.predict(s[test], list(f[test]))
    return out


# --------------------------------------------------------------------------- metrics


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
    z = stats.norm.ppf((1 + level) / 2)
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
    table = reliability_table(p, y, bins=bins, strategy=strategy)
    return float(sum(b.n * abs(b.mean_predicted - b.observed) for b in table) / len(p))


def mce(p_error: Any, wrong: Any, *, bins: int = 10, strategy: str = "width") -> float:
    """Maximum calibration error over non-empty bins."""
    table = reliability_table(p_error, wrong, bins=bins, strategy=strategy)
    return float(max((abs(b.mean_predicted - b.observed) for b in table), default=0.0))


def debiased_squared_error(p_error: Any, wrong: Any, *, bins: int = 10, strategy: str = "mass") -> float:
    """Unbiased estimate of the binned squared calibration error (may be negative by noise).

    The plug-in squared error of a bin overstates the truth by the variance of its observed
    rate, about observed * (1 - observed) / (n - 1); that is subtracted (Kumar et al. 2019).
    """
    p, y = _check(p_error, wrong)
    total = 0.0
    for b in reliability_table(p, y, bins=bins, strategy=strategy):
        if b.n < 2:
            continue
        sq = (b.mean_predicted - b.observed) ** 2 - b.observed * (1 - b.observed) / (b.n - 1)
        total += b.n / len(p) * sq
    return float(total)


def debiased_ece(p_error: Any, wrong: Any, *, bins: int = 10, strategy: str = "mass") -> float:
    """Square root of :func:`debiased_squared_error`, floored at 0: a perfectly calibrated score
    gives about 0 instead of a positive number that shrinks only with more data."""
    return float(np.sqrt(max(debiased_squared_error(p_error, wrong, bins=bins, strategy=strategy), 0.0)))


def calibration_metrics(p_error: Any, wrong: Any, *, bins: int = 10) -> dict[str, float]:
    return {
        "brier": brier(p_error, wrong),
        "log_loss": log_loss(p_error, wrong),
        "ece_width": ece(p_error, wrong, bins=bins, strategy="width"),
        "ece_mass": ece(p_error, wrong, bins=bins, strategy="mass"),
        "ece_debiased": debiased_ece(p_error, wrong, bins=bins),
        "mce": mce(p_error, wrong, bins=bins, strategy="width"),
    }


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
    return ReviewPlan(
        target_recall,
        threshold,
        float(flagged.mean()),
        float(len(np.unique(g[flagged])) / len(np.unique(g))),
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
            out.append(f"rating {shown}: {n} items, too few to read")
            continue
        text = (
            f"rating {shown} ({n} items): {100 * float(r['error_rate']):.1f}% wrong"
            f" [{100 * float(r['error_low']):.1f}%, {100 * float(r['error_high']):.1f}%]"
        )
        if r.get("naive") not in (None, ""):
            text += f"; the naive reading (10 - r)/9 says {100 * float(r['naive']):.0f}%"
        out.append(text)
    return out
