"""The calibrators: maps from a trust score (a 1-10 rating, an expected rating, a log-prob) to
P(error), each ``fit(score, wrong)`` / ``predict(score) -> P(error)``, looked up by name in
:data:`CALIBRATORS` (a new one is one :func:`register_calibrator` call; an instance is accepted
wherever a name is):

- ``isotonic`` and ``platt`` from scikit-learn;
- ``beta``, ``histogram``, ``bbq`` and ``enir`` from netcal (:data:`NETCAL_METHODS`, the one place
  netcal's classes are named). netcal reads a probability of the positive class, so the score is
  first mapped onto (0, 1) by the training fold's range and the calibrator learns P(right);
  P(error) is one minus that. netcal imports torch (seconds), so it is imported only when one of
  its methods is used, with its warnings silenced and its tensorboard logging off;
- beside them, ``platt-per-field`` (:class:`PerFieldCalibrator`, a :class:`FieldCalibrator`),
  which also reads which field an item is.

Fitting out of fold is :mod:`~construct_eval.stats.out_of_fold`'s job; the metrics of a
fitted map are :mod:`~construct_eval.stats.calibration_metrics`'.
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


class BetaCalibrator:
    """Beta calibration (Kull, Silva Filho and Flach 2017) fitted in closed form: a logistic
    regression of P(right) on ``ln s`` and ``-ln(1 - s)`` with both weights kept non-negative,
    by L-BFGS-B with the analytic gradient, in float64. It is netcal's ``BetaCalibration``
    (``method="mle"``: the same features, clipping, constraint and loss, minimised by SciPy with a
    numerical gradient) without torch or pyro, and it maps the score onto (0, 1) as
    :class:`NetcalCalibrator` does; ``tests/test_calibration.py`` holds it to netcal's predictions
    within 1e-4. Not in :data:`CALIBRATORS` (the stored tables use netcal's): pass an instance."""

    name = "beta-closed"

    def _features(self, s: np.ndarray) -> np.ndarray:
        unit = np.clip(0.05 + 0.9 * (s - self.lo) / (self.hi - self.lo), 1e-3, 1 - 1e-3)  # NetcalCalibrator._unit
        eps = np.finfo(np.float64).eps  # netcal clips to its dtype's epsilon
        x = np.clip(np.stack([unit, 1.0 - unit], axis=1), eps, 1 - eps)
        f = np.log(x)
        f[:, 1] *= -1
        return f

    def fit(self, score: Any, wrong: Any) -> BetaCalibrator:
        from scipy.optimize import minimize

        s, y = _check(score, wrong)
        self.lo, self.hi = float(s.min()), float(s.max())
        if self.hi <= self.lo:
            self.hi = self.lo + 1.0
        f = self._features(s)
        right = 1.0 - y

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            z = f @ theta[1:] + theta[0]
            p = 1.0 / (1.0 + np.exp(-z))
            value = float(np.mean(np.logaddexp(0.0, -z) * right + np.logaddexp(0.0, z) * (1 - right)))
            g = (p - right) / len(z)
            return value, np.concatenate([[g.sum()], f.T @ g])

        bounds = [(None, None), (0.0, None), (0.0, None)]
        result = minimize(loss, np.array([0.0, 1.0, 1.0]), jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000})  # fmt: skip
        self.theta = result.x
        return self

    def predict(self, score: Any) -> np.ndarray:
        s, _ = _check(score)
        z = self._features(s) @ self.theta[1:] + self.theta[0]
        return np.clip(1.0 - 1.0 / (1.0 + np.exp(-z)), 0.0, 1.0)


CALIBRATORS: dict[str, Callable[[], Calibrator]] = {
    "isotonic": IsotonicCalibrator,
    "platt": PlattCalibrator,
    **{name: partial(NetcalCalibrator, name) for name in NETCAL_METHODS},
}
"""Every calibrator by name: a class (or factory) making a new, unfitted one."""
METHODS = tuple(CALIBRATORS)
"""The built-in calibrators' names, in the order the tables list them."""


CALIBRATOR_WORDS: dict[str, str] = {
    "isotonic": "isotonic",
    "platt": "Platt",
    "platt-per-field": "Platt per field",
    "beta": "beta calibration",
    "histogram": "histogram binning",
    "bbq": "Bayesian binning into quantiles",
    "enir": "ensemble of near-isotonic regressions",
}
"""Every calibrator in a reader's words: the one table the figures' legends and the reports read."""


def register_calibrator(name: str, factory: Callable[[], Calibrator], *, words: str | None = None) -> None:
    """Make a calibrator known by ``name`` (to :func:`make_calibrator`, ``calibrate --methods``);
    ``words`` is how legends and reports name it (``name`` itself when not given)."""
    if name in CALIBRATORS and CALIBRATORS[name] is not factory:
        raise ValueError(f"calibration method {name!r} is already registered")
    CALIBRATORS[name] = factory
    if words is not None:
        CALIBRATOR_WORDS[name] = words


def calibrator_words(method: str, *, out_of_fold: bool = False) -> str:
    """``method`` in a reader's words, naming netcal where the map is netcal's, and saying "out of
    fold" where the figure shows maps fitted without the items they are read on."""
    notes = (["netcal"] if method in NETCAL_METHODS else []) + (["out of fold"] if out_of_fold else [])
    words = CALIBRATOR_WORDS.get(method, method)
    return f"{words} ({', '.join(notes)})" if notes else words


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


class PerFieldCalibrator:
    """One logistic model over all fields: a common slope on the score and an intercept per field
    (a :class:`FieldCalibrator`).

    Fields with few examples borrow strength from the others (the slope is shared); a field
    never seen in training falls back to the reference intercept.
    """

    name = "platt-per-field"

    def fit(self, score: Any, wrong: Any, fields: Sequence[str]) -> PerFieldCalibrator:
        from sklearn.linear_model import LogisticRegression

        s, y = _check(score, wrong)
        self.center, self.scale = float(s.mean()), float(s.std() or 1.0)
        self.categories = np.unique(np.asarray(fields, dtype=str))  # sorted, as OneHotEncoder's
        self.model = LogisticRegression(C=10.0).fit(self._x(s, fields), y)
        return self

    def _x(self, s: np.ndarray, fields: Sequence[str]) -> np.ndarray:
        """The score and the fields' indicators, dense: the matrix scikit-learn's
        ``OneHotEncoder(handle_unknown="ignore", drop="first")`` makes (the first field is the
        reference; an unseen field has no indicator), built from the fields' codes instead, which
        is several times faster on 10^5 items and the same matrix to the bit. A sparse one-hot
        fits about 4x faster but sums each field's gradient terms in another order: its
        predictions moved by up to 1e-9 and, on the recorded runs, items across equal-mass bins;
        the tables' numbers come first."""
        f = np.asarray(fields, dtype=str)
        code = np.searchsorted(self.categories, f)
        known = (code < len(self.categories)) & (self.categories[np.minimum(code, len(self.categories) - 1)] == f)
        onehot = np.zeros((len(f), max(0, len(self.categories) - 1)))
        rows = np.flatnonzero(known & (code > 0))
        onehot[rows, code[rows] - 1] = 1.0
        return np.column_stack([(s - self.center) / self.scale, onehot])

    def predict(self, score: Any, fields: Sequence[str]) -> np.ndarray:
        s, _ = _check(score)
        return self.model.predict_proba(self._x(s, fields))[:, 1]
