"""The one-pass bootstrap (analysis.resampled) against the count-matrix form it replaced, the
hashed group index against np.unique, and the label index against the per-item search."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from construct_eval.data.labels import DocumentLabels, FieldLabel, judged_field_errors
from construct_eval.fields import parse_path
from construct_eval.stats import metrics, resampled

ROOT = Path(__file__).resolve().parents[1]


def _data(kind: str, n: int = 3000, n_groups: int = 400, seed: int = 3) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.2).astype(float)
    noise = rng.normal(0, 1, n)
    s = np.clip(np.round(7 - 2 * y + 2 * noise), 1, 10) if kind == "rating" else noise - y  # rating: ten values
    g = rng.integers(0, n_groups, n)
    return y, s, np.array([f"doc-{i:04d}" for i in g])


@pytest.mark.parametrize("kind", ["rating", "continuous"])
def test_one_pass_equals_the_count_matrices(kind: str) -> None:
    y, s, ids = _data(kind)
    pos, neg = metrics.bootstrap_counts(y, s, ids, n_boot=300, seed=7)  # the former path, 300 x values
    yy, ss, gg = metrics._arrays(y, s, ids)
    draws = resampled.resampled_metrics(yy, ss, gg, n_boot=300, seed=7, budgets=metrics.REVIEW_BUDGETS)
    # AUROC is a ratio of exact integer sums: the same bits; the rest sums quotients in another order
    np.testing.assert_array_equal(draws["auroc"], metrics._auroc_from_counts(pos, neg))
    np.testing.assert_allclose(draws["auprc"], metrics._ap_from_counts(pos, neg), rtol=1e-13, atol=0)
    for j, budget in enumerate(draws["budgets"]):
        precision, recall = metrics._review_from_counts(pos, neg, float(budget))
        np.testing.assert_allclose(draws["precision"][:, j], precision, rtol=1e-13, atol=0)
        np.testing.assert_allclose(draws["recall"][:, j], recall, rtol=1e-13, atol=0)
    weights = metrics.group_weights(int(gg.max()) + 1, 300, 7)
    reference = resampled.resampled_numpy(weights, yy, ss, gg, tuple(draws["budgets"]))
    for k in ("auroc", "auprc", "precision", "recall"):
        np.testing.assert_allclose(draws[k], reference[k], rtol=1e-13, atol=0)


def test_a_resample_without_one_class_is_nan_in_both() -> None:
    y = np.array([1.0, 0, 0, 0, 0, 0])
    s = np.array([1.0, 2, 3, 4, 5, 6])
    g = np.arange(6)
    draws = resampled.resampled_metrics(y, s, g, n_boot=200, seed=0, budgets=(0.5,))
    pos, neg = metrics.bootstrap_counts(y, s, g, n_boot=200, seed=0)
    expected = metrics._auroc_from_counts(pos, neg)
    assert np.isnan(expected).any()  # some resamples drew no wrong item
    np.testing.assert_array_equal(np.isnan(draws["auroc"]), np.isnan(expected))
    np.testing.assert_array_equal(draws["auroc"], expected)


def test_detection_summary_matches_its_former_arithmetic() -> None:
    y, s, ids = _data("rating", n=2000, n_groups=300, seed=11)
    summary = metrics.detection_summary(y, s, ids, n_boot=400, seed=2)
    pos, neg = metrics.bootstrap_counts(y, s, ids, n_boot=400, seed=2)
    expected = metrics._interval(summary.auroc.estimate, metrics._auroc_from_counts(pos, neg), 0.95)
    assert (summary.auroc.low, summary.auroc.high) == (expected.low, expected.high)  # the same bits
    assert summary.auroc.estimate == metrics.auroc(y, s)
    for b in metrics.REVIEW_BUDGETS:
        point = metrics.review_lowest(y, s, b)
        assert summary.review[b] == point
        precision, _ = metrics._review_from_counts(pos, neg, b)
        np.testing.assert_allclose(
            summary.review_intervals[b][0].low, np.quantile(precision[~np.isnan(precision)], 0.025), rtol=1e-12
        )


def test_paired_comparison_reuses_the_same_resamples() -> None:
    y, s, ids = _data("continuous", seed=5)
    other = s + np.random.default_rng(0).normal(0, 1, len(s))
    cmp = metrics.compare_scores(y, s, other, ids, n_boot=300, seed=4)
    pa, na = metrics.bootstrap_counts(y, s, ids, n_boot=300, seed=4)
    pb, nb = metrics.bootstrap_counts(y, other, ids, n_boot=300, seed=4)
    diffs = metrics._auroc_from_counts(pa, na) - metrics._auroc_from_counts(pb, nb)
    expected = metrics._interval(cmp.difference.estimate, diffs, 0.95)
    assert (cmp.difference.low, cmp.difference.high) == (expected.low, expected.high)


def test_group_index_is_np_unique_inverse() -> None:
    rng = np.random.default_rng(0)
    names = np.array([f"d{x}" for x in rng.integers(0, 5000, 20000)] + ["é", "Z", "a b", ""])
    np.testing.assert_array_equal(metrics.group_index(names), np.unique(names, return_inverse=True)[1])
    ints = rng.integers(-5, 90, 100)
    np.testing.assert_array_equal(metrics.group_index(ints), np.unique(ints, return_inverse=True)[1])


def _judged_by_search(labels: DocumentLabels, judged: list[str]) -> dict[str, bool | None]:
    """The former rule, one search over every label per judged field."""
    parsed = [(parse_path(f.path), f) for f in labels.fields]
    out: dict[str, bool | None] = {}
    for name in judged:
        target = parse_path(name)
        hits = [f.wrong for p, f in parsed if p[: len(target)] == target]
        out[name] = any(hits) if hits else None
    return out


def test_label_index_equals_the_search_on_every_recorded_run() -> None:
    files = sorted(ROOT.glob("results/**/labels*.jsonl"))
    assert files, "no recorded labels to check against"
    checked = 0
    for file in files:
        for line in file.read_text().splitlines():
            lab = DocumentLabels.from_dict(json.loads(line))
            paths = {f.path for f in lab.fields}
            judged = sorted(paths | {str(parse_path(p)[0]) for p in paths if p} | {"no_such_field", "a[3].b"})
            assert judged_field_errors(lab, judged) == _judged_by_search(lab, judged), (file, lab.doc_id)
            checked += 1
    assert checked > 100


def test_label_index_follows_new_fields() -> None:
    lab = DocumentLabels("d", [FieldLabel("a.b", "a.b", False, "match")])
    assert judged_field_errors(lab, ["a"]) == {"a": False}
    lab.fields.append(FieldLabel("a.c", "a.c", True, "different_string"))
    assert judged_field_errors(lab, ["a", "a.c", "b"]) == {"a": True, "a.c": True, "b": None}
    lab.fields = [FieldLabel("b", "b", True, "different_string")]
    assert judged_field_errors(lab, ["a", "b"]) == {"a": None, "b": True}


@pytest.mark.parametrize("kind", ["rating", "continuous"])
def test_one_walk_for_several_classes_equals_each_class_on_its_own(kind: str) -> None:
    """The planted-kind table's shared walk: each class of wrong items against the same right ones
    gives the bits its own bootstrap gives (items of a class may belong to another class too)."""
    y, s, ids = _data(kind, n=2500, n_groups=120)
    _, _, g = metrics._arrays(y, s, ids)
    rng = np.random.default_rng(5)
    wrong = np.flatnonzero(y == 1)
    negatives = np.flatnonzero(y == 0)
    classes = [np.sort(rng.choice(wrong, size=size, replace=False)) for size in (len(wrong) // 2, 40, 7)]
    shared = resampled.resampled_aurocs_by_class(s, g, negatives, classes, n_boot=200, seed=11)
    for k, members in enumerate(classes):
        use = np.concatenate([members, negatives])
        yk = np.zeros(len(use))
        yk[: len(members)] = 1
        yy, ss, gg = metrics._arrays(yk, s[use], g[use])
        alone = resampled.resampled_metrics(yy, ss, gg, n_boot=200, seed=11, budgets=())
        np.testing.assert_array_equal(shared[:, k], alone["auroc"])


def test_items_grouped_by_document_and_score_walk_to_the_same_bits() -> None:
    """A rating on many fields per document: its items are walked as (document, score) counts,
    which must give exactly what walking every item gives (the sums are of integers)."""
    y, s, ids = _data("rating", n=4000, n_groups=30)
    yy, ss, gg = metrics._arrays(y, s, ids)
    group, wrong, count, starts = resampled.value_blocks(yy, ss, gg)
    assert len(group) < len(yy) / 5  # grouped
    weights = resampled._drawn(30, 300, 4)
    budgets = np.asarray(sorted(metrics.REVIEW_BUDGETS))
    pos_g = np.bincount(gg, weights=yy, minlength=30).astype(np.float64)
    neg_g = np.bincount(gg, weights=1 - yy, minlength=30).astype(np.float64)
    grouped = resampled._walk_compiled(
        np.ascontiguousarray(weights), group, wrong, count, starts, budgets, pos_g, neg_g
    )
    _, inv = np.unique(ss, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    per_item_starts = np.searchsorted(inv[order], np.arange(inv.max() + 2)).astype(np.int64)
    per_item = resampled._walk_compiled(
        np.ascontiguousarray(weights), gg[order].astype(np.int64), yy[order], np.ones(len(yy)), per_item_starts,
        budgets, pos_g, neg_g,
    )  # fmt: skip
    for a, b in zip(grouped, per_item, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["rating", "continuous"])
def test_the_walk_in_blocks_of_resamples_gives_each_resamples_own_walk_to_the_bit(kind: str) -> None:
    """The walk reads each item once per block of resamples; every resample's sums are its own
    walk's, term for term: the same bits, whatever the block holds (a last block not full, items
    walked one by one or grouped by document and score, counts read as float32)."""
    y, s, ids = _data(kind, n=3000, n_groups=60)
    yy, ss, gg = metrics._arrays(y, s, ids)
    budgets = np.asarray(sorted(metrics.REVIEW_BUDGETS))
    pos_g = np.bincount(gg, weights=yy, minlength=60).astype(np.float64)
    neg_g = np.bincount(gg, weights=1 - yy, minlength=60).astype(np.float64)
    group, wrong, count, starts = resampled.value_blocks(yy, ss, gg)
    for n_boot in (1, resampled.WALK_BLOCK + 3, 203):
        weights = np.ascontiguousarray(resampled._drawn(60, n_boot, 9))
        each = resampled._walk_compiled(weights, group, wrong, count, starts, budgets, pos_g, neg_g)
        for walk in (resampled._walk_blocks_compiled, resampled._walk_blocks_one_thread):
            blocks = walk(
                np.ascontiguousarray(weights.T), group.astype(np.int32), wrong.astype(np.float32),
                count.astype(np.float32), starts, budgets, pos_g, neg_g,
            )  # fmt: skip
            for a, b in zip(each, blocks, strict=True):
                np.testing.assert_array_equal(a, b)


def test_the_walk_of_several_classes_in_blocks_is_each_resamples_own_walk_to_the_bit() -> None:
    """The planted-kind walk over blocks of resamples gives the bits of its walk per resample."""
    y, s, ids = _data("continuous", n=2500, n_groups=80)
    _, _, g = metrics._arrays(y, s, ids)
    rng = np.random.default_rng(2)
    wrong, negatives = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    classes = [np.sort(rng.choice(wrong, size=size, replace=False)) for size in (len(wrong) // 2, 30, 5)]
    entries = np.concatenate([negatives, *classes])
    kind = np.concatenate([np.full(len(negatives), -1), *(np.full(len(c), k) for k, c in enumerate(classes))])
    _, inv = np.unique(s[entries], return_inverse=True)
    order = np.argsort(inv, kind="stable")
    starts = np.searchsorted(inv[order], np.arange(int(inv.max()) + 2)).astype(np.int64)
    neg_g = np.bincount(g[negatives], minlength=80).astype(np.float64)
    pos_g = np.array([np.bincount(g[c], minlength=80) for c in classes], dtype=np.float64)
    group, kinds = g[entries][order].astype(np.int64), kind[order].astype(np.int64)
    for n_boot in (1, resampled.WALK_BLOCK + 5, 150):
        weights = np.ascontiguousarray(resampled._drawn(80, n_boot, 3))
        each = resampled._walk_kinds_compiled(weights, group, kinds, starts, pos_g, neg_g)
        for walk in (resampled._walk_kinds_blocks_compiled, resampled._walk_kinds_blocks_one_thread):
            blocks = walk(np.ascontiguousarray(weights.T), group.astype(np.int32), kinds, starts, pos_g, neg_g)
            np.testing.assert_array_equal(each, blocks)


FORKED_WALK = """
import json

import numpy as np
from construct_eval.reports.tables import can_fork, run_forked
from construct_eval.stats import resampled

rng = np.random.default_rng(0)
y = (rng.random(20000) < 0.3).astype(float)
s, g = rng.random(20000), rng.integers(0, 2000, 20000)

def walk():
    out = resampled.resampled(resampled._drawn(2000, 100, 1), y, s, g, (0.2,))
    return float(out["auroc"].mean()), resampled._ONE_THREAD

here = walk()  # numba's threads start here, before the fork
print(json.dumps([can_fork(), here, run_forked([walk, walk], 2)]))
"""


def test_a_forked_worker_walks_after_the_parent_walked_on_numbas_threads() -> None:
    """The calibration fits run in forked workers after the walks ran in the parent: with GNU
    OpenMP as numba's threading layer the child was terminated at the fork and the pool replaced it
    forever (an analysis at paper scale never ended). A fork-safe layer, and one thread a worker."""
    import subprocess
    import sys

    env = {k: v for k, v in __import__("os").environ.items() if k != "NUMBA_THREADING_LAYER"}
    done = subprocess.run([sys.executable, "-c", FORKED_WALK], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    forks, here, there = json.loads(done.stdout.strip().splitlines()[-1])
    if not forks:
        pytest.skip("no fork on this platform: the fits run in one process")
    assert here[1] is False and there == [[here[0], True], [here[0], True]]
