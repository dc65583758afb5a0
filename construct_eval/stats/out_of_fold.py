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
from construct_eval.stats.count_metrics import distinct_scores


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


def _present(codes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct codes among ``codes`` (sorted) and each code's position among them."""
    seen = np.zeros(size, dtype=bool)
    seen[codes] = True
    where = np.cumsum(seen) - 1
    return np.flatnonzero(seen), where[codes]


def out_of_fold(
    method: str | Calibrator,
    score: Any,
    wrong: Any,
    groups: Any,
    *,
    n_splits: int = 5,
    seed: int = 0,
) -> np.ndarray:
    """P(error) for every item from a calibrator that never saw its document.

    Every calibrator is a map of the score, so each fold's map is asked once per distinct score
    of the held-out fold; one that can be fitted on each distinct score's items and wrong items
    (``fit_counts(values, count, wrong)``: the built-in ones but netcal's) is fitted so, with the
    counts of each fold made from the distinct scores of all items, found once."""
    s, y = _check(score, wrong)
    assert y is not None
    g = np.asarray(groups)
    if g.shape != s.shape:
        raise ValueError("groups must have one entry per item")
    g = group_codes(g)
    key = _fit_key(method, s, y, g, n_splits, seed)
    if key is not None and key in _FITTED:
        return _FITTED[key].copy()
    values, at = distinct_scores(s)
    out = np.empty_like(s)
    for train, test in _folds(y, g, n_splits, seed):
        wrong_train = float(y[train].sum())
        if wrong_train in (0.0, float(len(train))):
            model: Any = _Constant(wrong_train / len(train))
        else:
            model = make_calibrator(method)
            fit_counts = getattr(model, "fit_counts", None)
            if callable(fit_counts):
                count = np.bincount(at[train], minlength=len(values))
                errors = np.bincount(at[train], weights=y[train], minlength=len(values))
                kept = count > 0
                fit_counts(values[kept], count[kept].astype(float), errors[kept])
            else:
                model.fit(s[train], y[train])
        asked, back = _present(at[test], len(values))
        out[test] = np.asarray(model.predict(values[asked]), dtype=float).reshape(-1)[back]
    _keep(key, out)
    return out


def _fit_key(
    method: str | Calibrator, s: np.ndarray, y: np.ndarray, g: np.ndarray, n_splits: int, seed: int
) -> tuple[Any, ...] | None:
    """What an out-of-fold fit is kept under: a registered name's fit on the same items (documents
    as codes) is the same fit; an instance's is not known to be."""
    if not isinstance(method, str):
        return None
    return (method, CALIBRATORS.get(method), _content_key(s, y, g), n_splits, seed)


def _keep(key: tuple[Any, ...] | None, p: np.ndarray) -> None:
    if key is None:
        return
    if len(_FITTED) >= _FITTED_MAX:
        _FITTED.pop(next(iter(_FITTED)))
    _FITTED[key] = p.copy()


def remember_out_of_fold(
    method: str | Calibrator,
    score: Any,
    wrong: Any,
    groups: Any,
    p_error: np.ndarray,
    *,
    n_splits: int = 5,
    seed: int = 0,
) -> None:
    """Keep ``p_error`` as :func:`out_of_fold`'s answer for these arguments: the fit was made in
    another process (the calibration table fits in parallel), and the rating readings ask again."""
    s, y = _check(score, wrong)
    assert y is not None
    _keep(_fit_key(method, s, y, group_codes(np.asarray(groups)), n_splits, seed), np.asarray(p_error, dtype=float))


def out_of_fold_per_field(
    score: Any, wrong: Any, groups: Any, fields: Sequence[str], *, n_splits: int = 5, seed: int = 0
) -> np.ndarray:
    """P(error) for every item from :class:`PerFieldCalibrator` fitted on the other folds: each
    fold's fit over the distinct (score, field) pairs of its training items, the fields coded
    among the training fold's (a field it never saw has no indicator)."""
    s, y = _check(score, wrong)
    assert y is not None
    g = group_codes(np.asarray(groups))
    names, field_code = np.unique(np.asarray(fields, dtype=str), return_inverse=True)
    field_code = field_code.reshape(-1)
    values, at = distinct_scores(s)
    k = len(names)
    pairs, pair_at = np.unique(at.astype(np.int64) * k + field_code, return_inverse=True)
    pair_at = pair_at.reshape(-1)
    pair_value, pair_field = values[pairs // k], pairs % k
    out = np.empty_like(s)
    for train, test in _folds(y, g, n_splits, seed):
        wrong_train = float(y[train].sum())
        if wrong_train in (0.0, float(len(train))):
            out[test] = wrong_train / len(train)
            continue
        count = np.bincount(pair_at[train], minlength=len(pairs))
        errors = np.bincount(pair_at[train], weights=y[train], minlength=len(pairs))
        seen_fields = np.zeros(k, dtype=bool)
        seen_fields[pair_field[count > 0]] = True
        code = np.where(seen_fields, np.cumsum(seen_fields) - 1, -1)  # each field's code in the training fold
        model = PerFieldCalibrator()
        model.categories = names[seen_fields]
        kept = count > 0
        st = s[train]
        model.fit_counts(
            pair_value[kept], code[pair_field[kept]], count[kept].astype(float), errors[kept],
            center=float(st.mean()), scale=float(st.std() or 1.0),
        )  # fmt: skip
        asked, back = _present(pair_at[test], len(pairs))
        out[test] = model.predict_codes(pair_value[asked], code[pair_field[asked]])[back]
    return out
