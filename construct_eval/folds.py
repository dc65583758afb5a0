"""Out-of-fold splits grouped by document and stratified by error: one helper for every fitted
map of the package (calibrators, the fitted combiner), so "out of fold" means the same everywhere.
"""

from __future__ import annotations

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
    class to split.
    """
    from sklearn.model_selection import StratifiedGroupKFold

    wrong = np.asarray(wrong).astype(int)
    k = fold_count(wrong, groups, n_splits)
    if not k:
        n_pos = int(wrong.sum())
        raise ValueError(
            f"out-of-fold {what} needs 2+ documents and 2+ items of each class"
            f" (wrong: {n_pos}, right: {len(wrong) - n_pos})"
        )
    splitter = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros(len(wrong)), wrong, groups))
