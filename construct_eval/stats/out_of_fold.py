"""Fitting a calibrator out of fold: every item's P(error) from a map that never saw its document.

In-sample isotonic regression has an ECE of zero by construction and says nothing, so every
number of the calibration tables comes from here: folds grouped by document (no document's
fields on both sides, :func:`construct_eval.folds.grouped_folds`), a calibrator fitted on the
other folds predicting the held-out one. The same fit asked twice in a process (the calibration
table and the rating readings fit isotonic and Platt on the same items) is made once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from construct_eval.folds import grouped_folds
from construct_eval.stats.calibrators import CALIBRATORS, Calibrator, PerFieldCalibrator, _check, make_calibrator


class _Constant:
    """What a fold with one class can learn: its error rate."""

    def __init__(self, rate: float):
        self.rate = rate

    def predict(self, score: Any) -> np.ndarray:
        return np.full(len(np.asarray(score)), self.rate)


def _folds(wrong: np.ndarray, groups: np.ndarray, n_splits: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    return grouped_folds(wrong, groups, n_splits, seed, what="calibration")


def group_codes(groups: Any) -> np.ndarray:
    """Each item's document as 0..n-1 in the sorted order of the document ids: the folds of these
    codes are the folds of the ids (the split sorts the ids first), without sorting 100,000
    strings once per calibrator."""
    from construct_eval.stats.metrics import group_index

    return group_index(groups)


def _content_key(*arrays: np.ndarray) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for a in arrays:
        digest.update(str((a.dtype.str, a.shape)).encode())
        digest.update(np.ascontiguousarray(a).data)
    return digest.hexdigest()


_FITTED: dict[tuple[Any, ...], np.ndarray] = {}
_FITTED_MAX = 64


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
    g = group_codes(g)
    key = None
    if isinstance(method, str):  # a registered name: the same fit on the same items is made once
        key = (method, CALIBRATORS.get(method), _content_key(s, y, g), n_splits, seed)
        if key in _FITTED:
            return _FITTED[key].copy()
    out = np.empty_like(s)
    for train, test in _folds(y, g, n_splits, seed):
        if len(np.unique(y[train])) < 2:
            model: Any = _Constant(float(y[train].mean()))
        else:
            model = make_calibrator(method).fit(s[train], y[train])
        out[test] = model.predict(s[test])
    if key is not None:
        if len(_FITTED) >= _FITTED_MAX:
            _FITTED.pop(next(iter(_FITTED)))
        _FITTED[key] = out.copy()
    return out


def out_of_fold_per_field(
    score: Any, wrong: Any, groups: Any, fields: Sequence[str], *, n_splits: int = 5, seed: int = 0
) -> np.ndarray:
    s, y = _check(score, wrong)
    assert y is not None
    g, f = group_codes(np.asarray(groups)), np.asarray(fields)
    out = np.empty_like(s)
    for train, test in _folds(y, g, n_splits, seed):
        if len(np.unique(y[train])) < 2:
            out[test] = y[train].mean()
            continue
        model = PerFieldCalibrator().fit(s[train], y[train], list(f[train]))
        out[test] = model.predict(s[test], list(f[test]))
    return out
