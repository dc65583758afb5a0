"""Entry point of the embedded llama.cpp server, with one measured fix to llama-cpp-python 0.3.x.

When a request asks for log-probs, llama-cpp-python finds the top alternatives of every
generated token by sorting the whole vocabulary in Python:
``sorted(zip(logprobs, range(n_vocab)), reverse=True)``. For Qwen's 151,936 tokens that is
0.18 s per generated token, several times the cost of generating it, so a 300-token
extraction with token log-probs took about 100 s instead of 25 s.

This module gives the ``llama_cpp.llama`` module its own ``zip`` and ``sorted``: a
``(scores, range(len(scores)))`` zip over a whole vocabulary is ranked with a numpy partial
sort instead, with the same values in the same order (ties broken as Python's tuple sort
breaks them: higher token id first). Only the first :data:`RANKED_KEPT` entries of the
ranking are kept, more than the 20 alternatives the OpenAI API allows. Every other use of
``zip`` and ``sorted`` in that module is untouched. The patch lives in the server process
only; the rest of construct-eval never imports llama_cpp.

Run as ``python -m construct_eval.llama_server`` with the arguments of
``python -m llama_cpp.server``.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

RANKED_KEPT = 64
"""Alternatives kept per token: a request for more top log-probs gets this many."""

_VOCABULARY_MIN = 1024
"""A (scores, range) zip shorter than this is an ordinary zip (no vocabulary is this small)."""


class VocabularyScores:
    """``zip(scores, range(len(scores)))`` over a vocabulary, kept whole so it can be ranked fast."""

    def __init__(self, scores: Sequence[float] | np.ndarray):
        self.scores = scores

    def __iter__(self) -> Iterator[tuple[Any, int]]:
        return builtins.zip(self.scores, range(len(self.scores)), strict=True)


def top_ranked(scores: Sequence[float] | np.ndarray, k: int) -> list[tuple[Any, int]]:
    """The first ``k`` of ``sorted(zip(scores, range(n)), reverse=True)``, computed with numpy.

    Ordered by score, then by token id, both descending, exactly as the Python tuple sort
    orders them; each entry keeps the score object of ``scores`` (numpy scalar or float).
    """
    values = np.asarray(scores)
    n = len(values)
    k = min(k, n)
    if k <= 0:
        return []
    kth = np.partition(values, n - k)[n - k]
    above = np.flatnonzero(values > kth)
    tied = np.flatnonzero(values == kth)
    chosen = np.concatenate([above, tied[len(tied) - (k - len(above)) :]])
    order = chosen[np.lexsort((-chosen, -values[chosen]))]
    return [(scores[i], i) for i in order.tolist()]


def _zip(*iterables: Iterable[Any], strict: bool = False) -> Iterable[Any]:
    if (
        len(iterables) == 2
        and not strict
        and isinstance(iterables[1], range)
        and isinstance(iterables[0], list | np.ndarray)
        and len(iterables[0]) >= _VOCABULARY_MIN
        and iterables[1] == range(len(iterables[0]))
    ):
        return VocabularyScores(iterables[0])
    return builtins.zip(*iterables, strict=strict)


def _sorted(iterable: Iterable[Any], /, *, key: Any = None, reverse: bool = False) -> list[Any]:
    if isinstance(iterable, VocabularyScores) and key is None and reverse:
        return top_ranked(iterable.scores, RANKED_KEPT)
    return builtins.sorted(iterable, key=key, reverse=reverse)


def patch_logprob_ranking() -> None:
    """Install the fast ranking into ``llama_cpp.llama`` (idempotent)."""
    import llama_cpp.llama as llama_module

    llama_module.zip = _zip  # type: ignore[attr-defined]
    llama_module.sorted = _sorted  # type: ignore[attr-defined]


def main() -> None:
    patch_logprob_ranking()
    from llama_cpp.server.__main__ import main as server_main

    server_main()


if __name__ == "__main__":
    main()
