"""Token log-probs: their alignment to the reply text, and log-prob expected ratings.

The expected rating (G-Eval style) is ``sum_v p(v) * v`` over the rating values 1-10,
read at the token where the *last* ``Rating: [[x]]`` of the reply puts its number, not at
the first digit anywhere in the text.

Tokenisers differ: some have ``"10"`` as one token, others (Qwen, Llama 3) write it as
``"1"`` then ``"0"``. When the judge wrote ``1`` and the next position's distribution is
known, the mass of ``"1"`` is split between 1 and 10 by the probability of a following
``"0"``. When the judge wrote another digit, the continuation of ``"1"`` was never
observed; that mass is left out and reported as unresolved, and the expected rating is
renormalised over the resolved mass (``mass`` says how much that was).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

_LEADING_DIGITS = re.compile(r"(\d+)(.*)\Z", re.DOTALL)


@dataclass
class TokenLogprob:
    """One generated token with its log-prob and the top alternatives at its position."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ExpectedRating:
    value: float
    mass: float  # probability mass of the candidates that could be resolved to a rating
    distribution: dict[int, float]  # renormalised P(rating = v)


def token_spans(texts: Sequence[str]) -> list[tuple[int, int]]:
    """Character span of each token text in their concatenation."""
    spans, pos = [], 0
    for text in texts:
        spans.append((pos, pos + len(text)))
        pos += len(text)
    return spans


def token_offsets(tokens: Sequence[TokenLogprob]) -> list[tuple[int, int]]:
    """Character span of every token in the concatenated token text."""
    return token_spans([t.token for t in tokens])


def joined_text(tokens: Sequence[TokenLogprob]) -> str:
    return "".join(t.token for t in tokens)


def _candidate_value(candidate: str, prefix: str) -> tuple[int | None, bool]:
    """Rating value a candidate token would start, and whether it may continue ("1" -> "10")."""
    if not candidate.startswith(prefix):
        return None, False
    m = _LEADING_DIGITS.match(candidate[len(prefix) :].lstrip(" "))
    if not m:
        return None, False
    digits, rest = m.group(1), m.group(2)
    value = int(digits)
    if not 1 <= value <= 10:
        return None, False
    open_ended = rest == "" and digits == "1"
    return value, open_ended


def expected_rating(tokens: Sequence[TokenLogprob] | None, rating_start: int) -> ExpectedRating | None:
    """Expected rating from the log-probs at the token holding character ``rating_start``.

    ``rating_start`` indexes the concatenated token text (equal to the reply text on
    backends that return every token). Returns ``None`` where no alternatives were
    returned or no candidate resolves to a rating.
    """
    if not tokens:
        return None
    spans = token_offsets(tokens)
    idx = next((i for i, (s, e) in enumerate(spans) if s <= rating_start < e), None)
    if idx is None or not tokens[idx].top:
        return None
    tok = tokens[idx]
    prefix = tok.token[: rating_start - spans[idx][0]]
    nxt = tokens[idx + 1] if idx + 1 < len(tokens) else None
    _, chosen_open = _candidate_value(tok.token, prefix)
    masses: dict[int, float] = {}
    for cand, lp in tok.top.items():
        value, open_ended = _candidate_value(cand, prefix)
        if value is None:
            continue
        p = math.exp(lp)
        if open_ended:
            if cand == tok.token and chosen_open and nxt is not None and nxt.top:
                p_zero = sum(math.exp(v) for t, v in nxt.top.items() if t.startswith("0"))
                p_zero = min(p_zero, 1.0)
                masses[10] = masses.get(10, 0.0) + p * p_zero
                masses[1] = masses.get(1, 0.0) + p * (1.0 - p_zero)
            continue  # continuation never observed: unresolved
        masses[value] = masses.get(value, 0.0) + p
    total = sum(masses.values())
    if total <= 0:
        return None
    dist = {v: m / total for v, m in sorted(masses.items())}
    return ExpectedRating(value=sum(v * p for v, p in dist.items()), mass=min(total, 1.0), distribution=dist)
