"""Notebook 04's tables, formatted from bias report pair rows (positional_notebook)."""

from __future__ import annotations

from construct_eval.studies import positional_notebook as pn

PAIR = {
    "variant_a": "sec:r-s-o|fields:original", "variant_b": "sec:o-s-r|fields:original", "n": 200,
    "mean_shift": 0.39, "shift_low": 0.225, "shift_high": 0.575, "wilcoxon_p_holm": 0.00001,
    "share_changed": 0.05, "weighted_kappa": 0.9, "wrong": 67,
    "auroc_diff": 0.023, "auroc_diff_low": -0.02, "auroc_diff_high": 0.06,
}  # fmt: skip


def test_a_pairs_table_reads_each_order_in_words_and_marks_an_underpowered_difference():
    weak = {**PAIR, "variant_b": "sec:r-s-o|fields:reversed", "auroc_underpowered": "4 wrong"}
    rating = pn.pairs_table([PAIR, weak], "rating").splitlines()
    head = "| order | n | shift, rating points [95% CI] | Wilcoxon p (Holm) | ratings changed | weighted kappa"
    assert rating[0].startswith(head)
    assert (
        rating[2]
        == "| output first | 200 | +0.390 [0.225, 0.575] | < 0.0001 | 5.0% | 0.900 | 67 | +0.023 [-0.020, 0.060] |"
    )
    assert rating[3].endswith("| underpowered (4 wrong) |") and "fields reversed" in rating[3]
    expected = pn.pairs_table([PAIR], "expected_rating").splitlines()
    assert "ratings changed" not in expected[0] and expected[2].count("|") == 7


def test_the_study_pairs_say_where_a_mean_shift_comes_from():
    report = {"paired": type("P", (), {"items": list(range(200))})(), "pairs": [PAIR]}
    text = pn.study_pairs({"rating": report, "expected_rating": report})
    assert text.startswith("**Written rating**, 200 outputs") and "**Expected rating**, 200 outputs" in text
    assert text.endswith(
        "from the 10 of 200 outputs whose written rating changes (5.0%), each by +7.8 points on average."
    )


def test_the_way_of_asking_reads_each_ways_use_of_the_scale_in_words():
    pair = {**PAIR, "variant_a": "forced", "variant_b": "free", "auroc_a": 0.501, "auroc_b": 0.58,
            "use_a": "flat (5:96%)", "use_b": "varying (1:45% 3:16% 5:11% 10:24%)"}  # fmt: skip
    text = pn.way_of_asking(pair)
    assert "flat (5 for 96%)" in text and "varying (1 for 45%, 3 for 16%, 5 for 11%, 10 for 24%)" in text


def test_a_small_run_whose_order_moves_the_rating_the_other_way_from_the_study_says_so():
    from construct_eval.studies.positional_notebook import direction_against

    def pair(variant, shift, low, high, n=30):
        return {"variant_b": variant, "mean_shift": shift, "shift_low": low, "shift_high": high, "n": n}

    study = [pair("sec:o-s-r|fields:original", 0.186, 0.126, 0.254, 200), pair("fields:rev", 0.102, 0.064, 0.143, 200)]
    small = [pair("sec:o-s-r|fields:original", -0.143, -0.186, -0.098), pair("fields:rev", 0.056, 0.034, 0.077)]
    said = direction_against(small, study)
    assert said.startswith("Output first moves the rating down here (-0.143 [-0.186, -0.098], 30 outputs) but up")
    assert "+0.186 [0.126, 0.254], 200 outputs" in said and "ields reversed" not in said  # same direction: not said
    assert direction_against([pair("fields:rev", -0.01, -0.05, 0.03)], study) == ""  # its interval holds 0
