"""Out-of-fold splits grouped by document and stratified by error: one helper for every fitted
map of the package (calibrators, the fitted combiner), so "out of fold" means the same everywhere.

The split is scikit-learn's ``StratifiedGroupKFold(shuffle=True)``, computed here by the same
steps (:func:`stratified_group_folds`): scikit-learn's version spends about 50 numpy calls per
document, which at 17,000 documents is most of a calibration; this one assigns the documents
in a compiled loop with the same floating-point operations in the same order, so the folds are
the same (``tests/test_folds.py`` holds it to scikit-learn's on many random splits).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np


def fold_count(wrong: np.ndarray, groups: np.ndarray, n_splits: int) -> int:
    """How many folds a grouped, stratified split can have: no more than the documents or than
    either class has items (every fold can then hold both classes); 0 when fewer than 2."""
    n_pos = int(np.sum(wrong))
    n_neg = len(wrong) - n_pos
    n_groups = len(np.unique(groups))
    if min(n_pos, n_neg) < 2 or n_groups < 2:
        return 0
    return min(n_splits, n_groups, n_pos, n_neg)


def grouped_folds(
    wrong: np.ndarray, groups: np.ndarray, n_splits: int, seed: int, *, what: str = "fitting"
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) index pairs: documents never straddle a split, classes spread over the folds.

    Raises ``ValueError`` (naming what is fitted) when there are too few documents or items of a
    class to split. The same arrays give the same (read-only) folds, computed once per process.
    """
    wrong = np.asarray(wrong).astype(int)
    groups = np.asarray(groups)
    k = fold_count(wrong, groups, n_splits)
    if not k:
        n_pos = int(wrong.sum())
        raise ValueError(
            f"out-of-fold {what} needs 2+ documents and 2+ items of each class"
            f" (wrong: {n_pos}, right: {len(wrong) - n_pos})"
        )
    digest = hashlib.blake2b(digest_size=16)
    for a in (wrong, groups):
        digest.update(str((a.dtype.str, a.shape)).encode())
        digest.update(np.ascontiguousarray(a).data)
    key = (digest.hexdigest(), k, seed)
    if key not in _FOLDS:
        if len(_FOLDS) >= 64:
            _FOLDS.pop(next(iter(_FOLDS)))
        folds = stratified_group_folds(wrong, groups, k, seed)
        for pair in folds:
            for part in pair:
                part.flags.writeable = False  # shared by every caller with the same arrays
        _FOLDS[key] = folds
    return list(_FOLDS[key])


_FOLDS: dict[tuple[Any, ...], list[tuple[np.ndarray, np.ndarray]]] = {}


def stratified_group_folds(y: np.ndarray, groups: np.ndarray, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed).split(X, y, groups)``.

    Documents are shuffled (``RandomState(seed)``), sorted by the spread of their class counts
    (stable), and each goes to the fold that keeps the classes' shares across folds most even,
    the least populated fold among equally good ones. Needs ``k`` no larger than the documents
    or the items of the smallest class (:func:`fold_count` makes sure).
    """
    classes, y_inv, y_cnt = np.unique(y, return_inverse=True, return_counts=True)
    _, groups_inv, groups_cnt = np.unique(groups, return_inverse=True, return_counts=True)
    n_groups = len(groups_cnt)
    if not (2 <= k <= n_groups and k <= y_cnt.min()) or len(classes) < 2:
        raise ValueError(f"cannot split {len(y)} items of {n_groups} documents into {k} stratified folds")
    counts = np.zeros((n_groups, len(y_cnt)))
    np.add.at(counts, (groups_inv, y_inv), 1)
    perm = np.arange(n_groups)
    np.random.RandomState(seed).shuffle(perm)
    counts = counts[perm]
    inv_perm = np.empty_like(perm)
    inv_perm[perm] = np.arange(perm.size)
    groups_inv = inv_perm[groups_inv]
    order = np.argsort(-np.std(counts, axis=1), kind="stable")
    fold_of_group = _ASSIGN(np.ascontiguousarray(counts[order]), y_cnt.astype(np.float64), k)
    fold = np.empty(n_groups, dtype=np.int64)
    fold[order] = fold_of_group
    item_fold = fold[groups_inv]
    return [(np.flatnonzero(item_fold != i), np.flatnonzero(item_fold == i)) for i in range(k)]


def _assign(group_counts: np.ndarray, y_cnt: np.ndarray, k: int) -> np.ndarray:
    """Scikit-learn's ``_find_best_fold`` for each document in turn, as scalar arithmetic in its
    order: per class, the fold shares' mean, squared deviations summed fold by fold (numpy's
    reduction over a short axis), their mean and root; classes averaged; ties within
    ``np.isclose`` go to the fold with fewer items."""
    n_groups, n_classes = group_counts.shape
    per_fold = np.zeros((k, n_classes))
    out = np.empty(n_groups, dtype=np.int64)
    shares = np.empty((k, n_classes))
    for gi in range(n_groups):
        best = -1
        min_eval = np.inf
        min_samples = np.inf
        for i in range(k):
            for f in range(k):
                for c in range(n_classes):
                    count = per_fold[f, c] + group_counts[gi, c] if f == i else per_fold[f, c]
                    shares[f, c] = count / y_cnt[c]
            total_std = 0.0
            for c in range(n_classes):
                s = shares[0, c]
                for f in range(1, k):
                    s = s + shares[f, c]
                mean = s / k
                d = shares[0, c] - mean
                sq = d * d
                for f in range(1, k):
                    d = shares[f, c] - mean
                    sq = sq + d * d
                total_std = total_std + np.sqrt(sq / k)
            fold_eval = total_std / n_classes
            samples = 0.0
            for c in range(n_classes):
                samples = samples + per_fold[i, c]
            close = np.isfinite(min_eval) and abs(fold_eval - min_eval) <= 1e-08 + 1e-05 * abs(min_eval)
            if fold_eval < min_eval or (close and samples < min_samples):
                min_eval = fold_eval
                min_samples = samples
                best = i
        for c in range(n_classes):
            per_fold[best, c] += group_counts[gi, c]
        out[gi] = best
    return out


try:  # compiled when numba is there (it is a dependency); the same steps in Python otherwise
    import numba

    _ASSIGN = numba.njit(cache=True)(_assign)
except ImportError:  # pragma: no cover
    _ASSIGN = _assign
