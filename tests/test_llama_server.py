"""The fast log-prob ranking of the embedded server gives exactly what llama-cpp-python's sort gives."""

from __future__ import annotations

import builtins
import math

import numpy as np
import pytest

from construct_eval.llama_server import RANKED_KEPT, VocabularyScores, _sorted, _zip, top_ranked


def reference(scores, k):
    return list(builtins.sorted(builtins.zip(scores, range(len(scores)), strict=True), reverse=True))[:k]


@pytest.mark.parametrize("seed", range(20))
def test_top_ranked_equals_the_python_sort_with_ties_and_minus_infinity(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1024, 5000))
    # a coarse grid makes many ties, also across the k-th place
    scores = (rng.integers(-40, 0, size=n) / 4).astype(np.float32)
    scores[rng.choice(n, size=50, replace=False)] = -np.inf
    for k in (1, 5, 20, RANKED_KEPT):
        got = top_ranked(scores, k)
        want = reference(scores, k)
        assert [i for _, i in got] == [i for _, i in want]
        assert [float(v) for v, _ in got] == [float(v) for v, _ in want]
        assert all(type(g[0]) is type(w[0]) for g, w in builtins.zip(got, want, strict=True))


def test_a_list_of_floats_is_ranked_the_same_as_by_python():
    rng = np.random.default_rng(7)
    scores = [math.log(p) for p in rng.dirichlet(np.ones(3000))]
    assert top_ranked(scores, 10) == reference(scores, 10)


def test_only_a_vocabulary_zip_is_diverted_and_it_still_iterates_like_zip():
    scores = np.linspace(-5, 0, 2000, dtype=np.float32)
    z = _zip(scores, range(len(scores)))
    assert isinstance(z, VocabularyScores)
    assert list(z)[:3] == list(builtins.zip(scores[:3], range(3), strict=True))
    # llama_cpp's other zips: token lists, three iterables, short sequences
    assert not isinstance(_zip([1, 2, 3], [1, 2, 4]), VocabularyScores)
    assert not isinstance(_zip(scores, range(len(scores)), scores), VocabularyScores)
    assert not isinstance(_zip(list(range(10)), range(10)), VocabularyScores)
    assert not isinstance(_zip(scores, range(5)), VocabularyScores)
    assert _sorted([3, 1, 2]) == [1, 2, 3]
    assert _sorted([3, 1, 2], reverse=True, key=lambda x: -x) == [1, 2, 3]
    assert _sorted(_zip(scores, range(len(scores))), reverse=True) == reference(scores, RANKED_KEPT)
