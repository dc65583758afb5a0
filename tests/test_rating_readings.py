"""Naive, isotonic and Platt readings of a written rating, scored on the same items."""

from __future__ import annotations

import numpy as np
import pytest

from construct_eval.stats.rating_readings import rating_readings, value_ece


def test_value_ece_bins_by_rating_value():
    values = np.array([2, 2, 2, 2, 9, 9])
    wrong = np.array([1, 0, 1, 0, 0, 0])
    p = np.array([8 / 9] * 4 + [1 / 9] * 2)
    assert value_ece(p, wrong, values) == pytest.approx((4 * abs(8 / 9 - 0.5) + 2 * (1 / 9)) / 6)


def test_fitted_readings_beat_the_naive_one_when_the_scale_means_something_else():
    """Rating 2 is wrong half the time (naive: 89%), rating 9 never (naive: 11%)."""
    rng = np.random.default_rng(0)
    ratings = np.repeat([2.0, 9.0], 200)
    wrong = np.concatenate([rng.random(200) < 0.5, np.zeros(200, dtype=bool)]).astype(float)
    groups = np.arange(400) // 2  # two items per document
    rows = {r["reading"]: r for r in rating_readings(ratings, wrong, groups, n_boot=200)}
    naive, iso = rows["naive"], rows["isotonic (out of fold)"]
    assert naive["ece_per_value"] > 0.2 and iso["ece_per_value"] < 0.08
    assert iso["brier_minus_naive"] < 0 and iso["diff_high"] < 0  # the interval allows "fitted is better"
    assert naive["brier_low"] <= naive["brier"] <= naive["brier_high"]
    assert iso["documents"] == 200 and iso["n"] == 400


def test_a_flat_rating_or_one_class_has_no_readings():
    assert rating_readings([5, 5, 5, 5], [0, 1, 0, 1], [0, 1, 2, 3]) == []
    assert rating_readings([1, 5, 9, 9], [0, 0, 0, 0], [0, 1, 2, 3]) == []


def test_too_few_items_of_a_class_to_fit_out_of_fold_gives_no_readings_not_an_error():
    """A run still being judged: 16 wrong fields and 1 right one (as part 5 early on)."""
    ratings = [1.0] * 8 + [10.0] * 9
    wrong = [1] * 16 + [0]
    assert rating_readings(ratings, wrong, [i // 3 for i in range(17)]) == []


def test_a_map_that_learnt_only_the_error_rate_ties_with_the_base_rate():
    """Values out of order (1: 3% wrong, 5: 33%, 10: 9%, as the study's field ratings): isotonic
    regression, monotone, can only pool them into the base rate; the table says so by scoring the
    base rate beside it (a difference of about 0), while a reading of the values beats both."""
    rng = np.random.default_rng(1)
    ratings = np.repeat([1.0, 5.0, 10.0], [1400, 300, 400])
    rates = np.repeat([0.03, 0.33, 0.09], [1400, 300, 400])
    wrong = (rng.random(len(ratings)) < rates).astype(float)
    groups = np.arange(len(ratings)) // 7
    rows = {r["reading"]: r for r in rating_readings(ratings, wrong, groups, n_boot=200)}
    base, iso = rows["base rate (out of fold)"], rows["isotonic (out of fold)"]
    assert base["brier"] == pytest.approx(wrong.mean() * (1 - wrong.mean()), abs=0.005)
    assert abs(iso["brier_minus_base_rate"]) < 0.002 and iso["base_diff_low"] <= 0 <= iso["base_diff_high"] + 1e-4
    assert "brier_minus_base_rate" not in base and "ece_low" not in iso
    per_value = rows["per value (out of fold)"]  # no order imposed: the rise and fall is kept
    assert per_value["brier_minus_base_rate"] < 0 and per_value["base_diff_high"] < 0
    assert per_value["brier"] < iso["brier"]


def test_the_per_value_reading_is_each_values_share_wrong_and_the_base_rate_for_a_new_value():
    from construct_eval.stats.rating_readings import PerValue

    fitted = PerValue().fit([1, 1, 5, 5, 5, 10], [0, 1, 1, 1, 0, 0])
    assert fitted.predict([1, 5, 10, 7, 0, 11]).tolist() == pytest.approx([0.5, 2 / 3, 0.0, 0.5, 0.5, 0.5])
