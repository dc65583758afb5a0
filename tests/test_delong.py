"""The clustered DeLong interval (Obuchowski 1997): DeLong's own estimator where every document
has one item, its point estimate the package's AUROC, a closed case, and the document bootstrap's
interval on every recorded run's field scores within a stated tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from construct_eval.stats import delong
from construct_eval.stats.metrics import auroc, auroc_interval


def _pairwise(wrong: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong, DeLong and Clarke-Pearson's components written out pair by pair (the reference):
    for each wrong item the share of right items it outranks, for each right item the share of
    wrong items outranking it, a tie a half."""
    pos, neg = -score[wrong == 1], -score[wrong == 0]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    return psi.mean(axis=1), psi.mean(axis=0)


def test_with_one_item_per_document_it_is_delongs_estimator():
    rng = np.random.default_rng(0)
    for n in (20, 200, 2000):
        wrong = (rng.random(n) < 0.3).astype(int)
        score = np.round(rng.normal(size=n) - wrong, 1)  # ties included
        c = delong.components(wrong, score, np.arange(n))
        v10, v01 = _pairwise(wrong, score)
        np.testing.assert_allclose(c.v10[wrong == 1], v10, atol=1e-12)
        np.testing.assert_allclose(c.v01[wrong == 0], v01, atol=1e-12)
        assert c.auroc == pytest.approx(auroc(wrong, score), abs=1e-12) == pytest.approx(v10.mean())
        m, k = len(v10), len(v01)
        a, b = np.sum((v10 - c.auroc) ** 2), np.sum((v01 - c.auroc) ** 2)
        assert delong.covariance(c, c) == pytest.approx(n / (n - 1) * (a / m**2 + b / k**2), rel=1e-12)
        delong_1988 = a / (m * (m - 1)) + b / (k * (k - 1))  # its small-sample factors per class
        assert delong.covariance(c, c) == pytest.approx(delong_1988, rel=3 / min(m, k))


def test_a_perfect_score_has_no_variance_and_a_paired_difference_with_itself_is_zero():
    wrong = np.array([1, 1, 0, 0, 0, 1, 0, 0])
    score = np.where(wrong == 1, 0.1, 0.9) + np.arange(8) / 100
    docs = np.array([0, 0, 0, 1, 1, 2, 2, 3])
    iv = delong.auroc_interval(wrong, score, docs)
    assert (iv.estimate, iv.se, iv.low, iv.high) == (1.0, 0.0, 1.0, 1.0)
    diff, p = delong.paired_difference(wrong, score, score, docs)
    assert (diff.estimate, diff.se, p) == (0.0, 0.0, 1.0)


def test_one_auroc_interval_function_takes_either_estimator_and_auto_follows_the_size_rule():
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(300), 4)
    wrong = (rng.random(len(groups)) < 0.2).astype(int)
    score = rng.normal(size=len(groups)) - wrong
    by_delong = auroc_interval(wrong, score, groups, intervals="delong")
    reference = delong.auroc_interval(wrong, score, groups)
    assert (by_delong.estimate, by_delong.low, by_delong.high, by_delong.n_boot) == (
        reference.estimate, reference.low, reference.high, 0,
    )  # fmt: skip
    boot = auroc_interval(wrong, score, groups, n_boot=200, seed=2)
    assert boot == auroc_interval(wrong, score, groups, n_boot=200, seed=2, intervals="bootstrap")
    assert boot.n_boot == 200 and boot.estimate == pytest.approx(by_delong.estimate, abs=1e-12)
    assert (boot.low, boot.high) != (by_delong.low, by_delong.high)
    # 1,200 items are below auto's size for DeLong: auto keeps the bootstrap
    assert auroc_interval(wrong, score, groups, n_boot=200, seed=2, intervals="auto") == boot
    with pytest.raises(ValueError, match="intervals must be one of"):
        auroc_interval(wrong, score, groups, intervals="jackknife")


def test_documents_that_move_together_widen_the_interval():
    """Copies of each document's items (fields that move together) leave the AUROC as it is; read
    as independent they narrow the interval by about sqrt(copies), read as one document each they
    do not."""
    rng = np.random.default_rng(1)
    n = 300
    wrong = (rng.random(n) < 0.4).astype(int)
    score = rng.normal(size=n) - 0.8 * wrong
    one = delong.auroc_interval(wrong, score, np.arange(n))
    wrong4, score4 = np.tile(wrong, 4), np.tile(score, 4)
    clustered = delong.auroc_interval(wrong4, score4, np.tile(np.arange(n), 4))
    naive = delong.auroc_interval(wrong4, score4, np.arange(4 * n))
    assert clustered.estimate == pytest.approx(one.estimate)
    assert clustered.se == pytest.approx(one.se, rel=0.02)
    assert naive.se == pytest.approx(one.se / 2, rel=0.05)


def test_the_paired_difference_is_the_difference_of_the_aurocs_with_a_smaller_variance_when_they_move_together():
    rng = np.random.default_rng(2)
    n = 1000
    docs = np.repeat(np.arange(250), 4)
    wrong = (rng.random(n) < 0.3).astype(int)
    shared = rng.normal(size=n)
    a, b = shared - wrong, shared - 0.7 * wrong + 0.3 * rng.normal(size=n)
    diff, p = delong.paired_difference(wrong, a, b, docs)
    assert diff.estimate == pytest.approx(auroc(wrong, a) - auroc(wrong, b))
    ia, ib = delong.auroc_interval(wrong, a, docs), delong.auroc_interval(wrong, b, docs)
    assert diff.se < np.hypot(ia.se, ib.se) and 0 <= p < 0.05


def _recorded_field_scores():
    from pathlib import Path

    from construct_eval.data.runs import RunDir
    from construct_eval.reports.collect import collect

    runs = Path(__file__).resolve().parents[1] / "results" / "runs"
    for folder in sorted(p for p in runs.iterdir() if (p / "metrics" / "detection.csv").exists()):
        for it in collect(RunDir(folder, create=False)):
            y, s, g = it.arrays()
            if len(np.unique(s)) > 1 and delong.preferred(y, g) == "delong":
                yield folder.name, str(it.key), y, s, g


DELONG_BOOTSTRAP_TOLERANCE = 0.01
"""How far the DeLong interval's ends may lie from the document bootstrap's (1,000 resamples) where
the guard's rule offers DeLong: the bootstrap's ends carry a Monte Carlo error of about 0.005 at
these sizes, and the two estimators' own small-sample differences add about as much again: 0.0062 at
most on the recorded runs (79 scores)."""


@pytest.mark.slow
def test_the_interval_agrees_with_the_document_bootstrap_on_every_recorded_run():
    worst, checked = (0.0, ""), 0
    for run, key, y, s, g in _recorded_field_scores():
        d = delong.auroc_interval(y, s, g)
        b = auroc_interval(y, s, g, n_boot=1000, seed=0)
        gap = max(abs(d.low - b.low), abs(d.high - b.high))
        worst = max(worst, (gap, f"{run} {key}"))
        assert gap < DELONG_BOOTSTRAP_TOLERANCE, (run, key, (d.low, d.high), (b.low, b.high))
        checked += 1
    assert checked >= 30, checked
    print(f"largest gap {worst[0]:.4f} ({worst[1]}) over {checked} scores")


def test_evaluate_and_paired_take_delong_on_request_and_keep_the_bootstrap_by_default_at_recorded_sizes(tmp_path):
    """``--intervals delong`` puts DeLong's AUROC interval in the detection and paired tables;
    ``auto`` (the default) keeps the bootstrap's below 100,000 items, so stored tables are unchanged."""
    import csv

    from construct_eval.cli import main
    from tests.conftest import injected_run

    run = injected_run(tmp_path / "run", 240, 0.4)

    def detection(out: str) -> dict[str, dict[str, str]]:
        with open(tmp_path / out / "metrics" / "detection.csv") as fh:
            return {f"{r['level']}:{r['scorer']}": r for r in csv.DictReader(fh)}

    assert main(["evaluate", "--run", str(run.path), "--out", str(tmp_path / "auto"), "--figures", "none"]) == 0
    assert main(["evaluate", "--run", str(run.path), "--out", str(tmp_path / "boot"), "--figures", "none",
                 "--intervals", "bootstrap"]) == 0  # fmt: skip
    assert main(["evaluate", "--run", str(run.path), "--out", str(tmp_path / "dl"), "--figures", "none",
                 "--intervals", "delong"]) == 0  # fmt: skip
    auto, boot, dl = detection("auto"), detection("boot"), detection("dl")
    assert auto == boot
    key = "field:plausibility@leaf"
    y = [r for r in run.read("plausibility") if r.get("granularity") == "leaf"]
    assert y and dl[key]["auroc"] == boot[key]["auroc"] and dl[key]["auroc_low"] != boot[key]["auroc_low"]
    assert abs(float(dl[key]["auroc_low"]) - float(boot[key]["auroc_low"])) < 0.05


def test_the_tables_by_planted_and_output_kind_take_delong_on_request_and_keep_the_bootstrap_by_default(tmp_path):
    """``--intervals delong`` reaches the by-kind tables (each row it draws says ``delong``, and the
    table's title says what that means); ``auto`` keeps them as the bootstrap writes them, byte for
    byte, below 100,000 items."""
    import csv

    from construct_eval.cli import main
    from tests.conftest import injected_run

    run = injected_run(tmp_path / "run", 240, 0.4)
    for name, extra in (("auto", []), ("boot", ["--intervals", "bootstrap"]), ("dl", ["--intervals", "delong"])):
        args = ["evaluate", "--run", str(run.path), "--out", str(tmp_path / name), "--figures", "none", *extra]
        assert main(args) == 0
    for table in ("detection_by_planted_kind", "detection_by_output_kind"):
        metrics = {name: tmp_path / name / "metrics" for name in ("auto", "boot", "dl")}
        for suffix in (".csv", ".md"):
            assert (metrics["auto"] / f"{table}{suffix}").read_text() == (
                metrics["boot"] / f"{table}{suffix}"
            ).read_text()
        assert "rows marked delong" in (metrics["dl"] / f"{table}.md").read_text()
        with open(metrics["boot"] / f"{table}.csv") as fh:
            boot = list(csv.DictReader(fh))
        with open(metrics["dl"] / f"{table}.csv") as fh:
            dl = list(csv.DictReader(fh))
        drawn = [(b, d) for b, d in zip(boot, dl, strict=True) if d.get("auroc")]
        assert drawn and all(d["intervals"] == "delong" for _, d in drawn), table
        for b, d in drawn:
            assert d["auroc"] == b["auroc"], (table, b)
            wrong = int(b.get("wrong") or b.get("n_wrong"))
            if wrong >= delong.MIN_CLASS_ITEMS:  # where the guard's rule would offer DeLong
                assert abs(float(d["auroc_low"]) - float(b["auroc_low"])) < 0.05, (table, b, d)
