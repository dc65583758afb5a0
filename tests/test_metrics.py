"""Detection metrics: agreement with scikit-learn, exact tie handling, the grouped bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from construct_eval.stats import metrics


@pytest.fixture
def ratings():
    rng = np.random.default_rng(1)
    wrong = (rng.random(400) < 0.3).astype(int)
    score = np.clip(np.round(8 - 2 * wrong + rng.normal(0, 2, 400)), 1, 10)  # heavy ties
    groups = np.repeat(np.arange(100), 4)
    return wrong, score, groups


def test_auroc_and_auprc_agree_with_sklearn_under_ties(ratings):
    wrong, score, _ = ratings
    assert metrics.auroc(wrong, score) == pytest.approx(roc_auc_score(wrong, -score))
    assert metrics.auprc(wrong, score) == pytest.approx(average_precision_score(wrong, -score))


def test_perfect_useless_and_inverted_scores():
    wrong = np.array([1, 1, 0, 0])
    assert metrics.auroc(wrong, [1, 2, 3, 4]) == 1.0
    assert metrics.auroc(wrong, [4, 3, 2, 1]) == 0.0
    assert metrics.auroc(wrong, [5, 5, 5, 5]) == 0.5  # a flat judge is a coin flip, not a failure
    assert metrics.auprc(wrong, [5, 5, 5, 5]) == pytest.approx(0.5)  # = prevalence


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="NaN"):
        metrics.auroc([0, 1], [1.0, float("nan")])
    with pytest.raises(ValueError, match="0/1"):
        metrics.auroc([0, 2], [1, 2])


def test_vectorised_bootstrap_equals_the_sklearn_loop(ratings):
    wrong, score, groups = ratings
    fast = metrics.auroc_interval(wrong, score, groups, n_boot=200, seed=3)
    slow = metrics.auroc_interval_loop(wrong, score, groups, n_boot=200, seed=3)
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=1e-12)
    assert fast.low < fast.estimate < fast.high


def test_grouped_intervals_are_wider_when_fields_of_a_document_move_together():
    rng = np.random.default_rng(0)
    doc_effect = np.repeat(rng.normal(0, 2, 200), 10)
    wrong = (rng.random(2000) < 1 / (1 + np.exp(-(doc_effect - 1)))).astype(int)
    score = -doc_effect + rng.normal(0, 1, 2000)
    groups = np.repeat(np.arange(200), 10)
    by_doc = metrics.auroc_interval(wrong, score, groups, n_boot=400)
    by_item = metrics.auroc_interval(wrong, score, None, n_boot=400)
    assert (by_doc.high - by_doc.low) > 1.5 * (by_item.high - by_item.low)


def test_review_budget_breaks_ties_as_the_average_of_random_orders(ratings):
    wrong, score, _ = ratings
    exact = metrics.review_lowest(wrong, score, 0.15)
    rng = np.random.default_rng(0)
    k = int(0.15 * len(wrong))
    caught = []
    for _ in range(3000):
        order = np.lexsort((rng.random(len(score)), score))
        caught.append(wrong[order[:k]].sum())
    assert exact.reviewed == pytest.approx(k)
    assert exact.recall == pytest.approx(np.mean(caught) / wrong.sum(), abs=0.01)


def test_threshold_table_and_curves(ratings):
    wrong, score, _ = ratings
    table = metrics.threshold_table(wrong, score)
    assert [r["threshold"] for r in table] == sorted(set(score))
    assert table[-1]["share_reviewed"] == 1.0 and table[-1]["recall"] == 1.0
    coverage, risk = metrics.risk_coverage(wrong, score)
    assert coverage[-1] == 1.0 and risk[-1] == pytest.approx(wrong.mean())
    assert risk[0] < wrong.mean()  # the most trusted items are more often right
    fpr, tpr = metrics.roc_points(wrong, score)
    assert np.trapezoid(tpr, fpr) == pytest.approx(metrics.auroc(wrong, score))


def test_paired_comparison_finds_the_better_scorer(ratings):
    wrong, score, groups = ratings
    noise = np.random.default_rng(5).normal(0, 1, len(score))
    cmp = metrics.compare_aurocs(wrong, score, noise, groups, n_boot=300)
    assert cmp.difference.low > 0 and cmp.p_value < 0.05
    same = metrics.compare_aurocs(wrong, score, score, groups, n_boot=100)
    assert same.difference.estimate == 0 and same.difference.low == 0 == same.difference.high


def test_review_budget_intervals_equal_a_loop_over_resampled_documents(ratings):
    wrong, score, groups = ratings
    summary = metrics.detection_summary(wrong, score, groups, n_boot=150, seed=5)
    row = summary.row()
    members = [np.flatnonzero(groups == g) for g in range(groups.max() + 1)]
    for budget in metrics.REVIEW_BUDGETS:
        precision, recall = [], []
        for block in metrics.iter_group_draws(len(members), 150, 5):
            for draw in block:
                idx = np.concatenate([members[i] for i in draw])
                r = metrics.review_lowest(wrong[idx], score[idx], budget)
                precision.append(r.precision)
                recall.append(r.recall)
        pct = round(budget * 100)
        for name, values in (("precision", precision), ("recall", recall)):
            low, high = np.quantile(values, [0.025, 0.975])
            assert row[f"{name}@{pct}%_low"] == pytest.approx(low, abs=1e-4)
            assert row[f"{name}@{pct}%_high"] == pytest.approx(high, abs=1e-4)
            assert row[f"{name}@{pct}%_low"] <= row[f"{name}@{pct}%"] <= row[f"{name}@{pct}%_high"]


def test_a_bootstrap_p_value_is_never_0_and_counts_its_resamples_plus_one():
    assert metrics.paired_p_value(np.full(999, 0.2)) == pytest.approx(2 / 1000)  # none across 0: 2 / (B + 1)
    assert metrics.paired_p_value(np.array([0.2] * 90 + [-0.1] * 9)) == pytest.approx(2 * 10 / 100)
    assert metrics.paired_p_value(np.zeros(50)) == 1.0  # no difference at all
    assert metrics.paired_p_value(np.array([0.1, np.nan, 0.3])) == pytest.approx(2 / 3)  # NaN resamples left out
    assert np.isnan(metrics.paired_p_value(np.array([np.nan])))
