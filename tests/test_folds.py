"""The grouped stratified folds against scikit-learn's StratifiedGroupKFold, which they reproduce."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import StratifiedGroupKFold

from construct_eval.folds import grouped_folds, stratified_group_folds


def _sklearn(y: np.ndarray, groups: np.ndarray, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    splitter = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros(len(y)), y, groups))


@pytest.mark.parametrize("case", range(40))
def test_the_same_folds_as_scikit_learn(case: int) -> None:
    rng = np.random.default_rng(case)
    n_groups = int(rng.integers(5, 400))
    per_group = rng.integers(1, 1 + int(rng.integers(1, 30)), n_groups)  # 1 item (documents) to many (fields)
    groups = np.repeat(np.arange(n_groups), per_group)
    rng.shuffle(groups)
    y = (rng.random(len(groups)) < rng.uniform(0.05, 0.6)).astype(int)
    if case % 3 == 0:  # string document ids, as the analyses pass them
        groups = np.array([f"doc-{g}" for g in groups])
    k = min(5, n_groups, int(y.sum()), int(len(y) - y.sum()))
    if k < 2:
        pytest.skip("too few items of a class")
    mine, theirs = stratified_group_folds(y, groups, k, case), _sklearn(y, groups, k, case)
    assert len(mine) == len(theirs) == k
    for (train_a, test_a), (train_b, test_b) in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(test_a, test_b)
        np.testing.assert_array_equal(train_a, train_b)


def test_grouped_folds_are_kept_and_read_only() -> None:
    y = np.array([0, 1] * 20)
    groups = np.repeat(np.arange(10), 4)
    first, again = grouped_folds(y, groups, 5, 0), grouped_folds(y, groups, 5, 0)
    assert all(a[1] is b[1] for a, b in zip(first, again, strict=True))
    with pytest.raises(ValueError, match="read-only"):
        first[0][1][0] = 3
    with pytest.raises(ValueError, match="needs 2\\+ documents"):
        grouped_folds(np.zeros(10), groups[:10], 5, 0)
