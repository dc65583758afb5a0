"""Expected ratings from token log-probs at the last rating token."""

from __future__ import annotations

import math

import pytest

from construct_eval.llm.logprobs import TokenLogprob, expected_rating, joined_text
from construct_eval.parsing import parse_rating


def tok(text, p=0.9, top=None):
    return TokenLogprob(text, math.log(p), {k: math.log(v) for k, v in (top or {text: p}).items()})


def test_single_token_ratings():
    tokens = [tok("Good. Rating: [["), tok("8", 0.5, {"8": 0.5, "7": 0.3, "9": 0.2}), tok("]]")]
    start = parse_rating(joined_text(tokens)).span[0]
    exp = expected_rating(tokens, start)
    assert exp.value == pytest.approx(8 * 0.5 + 7 * 0.3 + 9 * 0.2)
    assert exp.mass == pytest.approx(1.0)


def test_ten_split_into_one_then_zero():
    tokens = [
        tok("Rating: [["),
        tok("1", 0.8, {"1": 0.8, "9": 0.2}),
        tok("0", 0.75, {"0": 0.75, "]]": 0.25}),
        tok("]]"),
    ]
    exp = expected_rating(tokens, len("Rating: [["))
    assert exp.distribution == pytest.approx({1: 0.8 * 0.25, 9: 0.2, 10: 0.8 * 0.75})
    assert exp.value == pytest.approx(0.2 * 1 + 0.2 * 9 + 0.6 * 10)


def test_unobserved_continuation_of_one_is_left_out_and_reported():
    tokens = [tok("Rating: [["), tok("8", 0.7, {"8": 0.7, "1": 0.1, "7": 0.2}), tok("]]")]
    exp = expected_rating(tokens, len("Rating: [["))
    assert exp.mass == pytest.approx(0.9)
    assert exp.value == pytest.approx((8 * 0.7 + 7 * 0.2) / 0.9)


def test_rating_read_at_the_last_marker_not_the_first_digit():
    tokens = [
        tok("Field 3 of 5 looks fine. Rating: [["),
        tok("6", 0.5, {"6": 0.5, "5": 0.5}),
        tok("]]"),
    ]
    start = parse_rating(joined_text(tokens)).span[0]
    assert expected_rating(tokens, start).value == pytest.approx(5.5)


def test_token_that_carries_brackets_and_digit():
    tokens = [tok("Rating: "), tok("[[7", 0.6, {"[[7": 0.6, "[[8": 0.4}), tok("]]")]
    start = parse_rating(joined_text(tokens)).span[0]
    assert expected_rating(tokens, start).value == pytest.approx(7.4)


def test_no_alternatives_means_no_expected_rating():
    assert expected_rating([TokenLogprob("Rating: [[7]]", -0.1, {})], 10) is None
    assert expected_rating(None, 0) is None
