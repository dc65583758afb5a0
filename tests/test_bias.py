"""Positional bias: a planted effect is found with the right sign and size; no effect, ~5% false alarms."""

from __future__ import annotations

import csv
import hashlib

import numpy as np
import pytest

from construct_eval.cli import main
from construct_eval.judging.prompts import PromptVariant
from construct_eval.serving.scripted_server import Reply, ScriptedServer
from construct_eval.stats import bias


def _noise(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % 3 - 1  # -1, 0 or +1, fixed per document


class OrderSensitiveJudge:
    """Rates one point lower when the output is shown before the document: a planted position effect."""

    def __call__(self, req):
        prompt = req.body["messages"][-1]["content"]
        doc_start = prompt.index("<<<DOCUMENT>>>")
        out_start = prompt.index("<<<OUTPUT>>>")
        base = 7 + _noise(prompt[doc_start : doc_start + 200])
        rating = base - 1 if out_start < doc_start else base
        return Reply(f"Looks fine. Rating: [[{rating}]]")


def test_planted_section_order_effect_is_detected_end_to_end(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "40"]) == 0
    assert main(["label", "--run", str(run_dir)]) == 0
    with ScriptedServer(OrderSensitiveJudge()) as server:
        args = ["bias", "--run", str(run_dir), "--variants", "default,o-r-s,reversed", "--constrained", "none"]
        args += ["--base-url", server.base_url, "--model", "j", "--backend", "generic", "--quiet", "--no-cache"]
        args += ["--n-boot", "500"]
        assert main(args) == 0
    out = capsys.readouterr().out
    assert "40 items rated under all 3 orders" in out
    with (run_dir / "metrics" / "bias_pairs_doc.csv").open() as fh:
        rows = {r["variant_b"]: r for r in csv.DictReader(fh)}
    moved = rows[PromptVariant.parse("o-r-s").id]
    assert float(moved["mean_shift"]) == pytest.approx(-1.0)  # the right sign and size
    assert float(moved["wilcoxon_p_holm"]) < 1e-6 and float(moved["exact_agreement"]) == 0.0
    assert float(moved["sign_p_holm"]) >= float(moved["sign_p"]) and float(moved["sign_p_holm"]) < 1e-6
    same = rows[PromptVariant.parse("reversed").id]  # field order does not matter to this judge
    assert float(same["mean_shift"]) == 0.0 and float(same["wilcoxon_p"]) == 1.0
    assert (run_dir / "figures" / "bias_doc.png").exists()
    assert (run_dir / "metrics" / "bias_friedman_doc.md").exists()


def test_false_positive_rate_is_near_nominal_without_an_effect():
    rejections = 0
    trials = 300
    for seed in range(trials):
        rng = np.random.default_rng(seed)
        truth = rng.integers(5, 10, size=60)
        a = np.clip(truth + rng.integers(-1, 2, size=60), 1, 10)
        b = np.clip(truth + rng.integers(-1, 2, size=60), 1, 10)  # same distribution, exchangeable
        items = [(f"d{i}", "__doc__") for i in range(60)]
        paired = bias.PairedRatings(["a", "b"], items, np.column_stack([a, b]).astype(float), 0)
        (row,) = bias.pairwise_tests(paired, base="a", n_boot=50, seed=seed)
        rejections += row["wilcoxon_p"] < 0.05
    assert 0.02 <= rejections / trials <= 0.09


def test_position_effect_recovers_a_planted_slope():
    rng = np.random.default_rng(0)
    ratings, positions, items = [], [], []
    for d in range(50):
        for f in range(6):
            field_level = rng.normal(7, 1)
            for pos in (0.0, 0.5, 1.0):
                items.append((f"d{d}", f"f{f}"))
                positions.append(pos)
                ratings.append(field_level - 1.5 * pos + rng.normal(0, 0.5))
    effect = bias.position_effect(ratings, positions, items, n_boot=500)
    assert effect.slope == pytest.approx(-1.5, abs=0.15)
    assert effect.low < -1.5 < effect.high


def test_holm_friedman_and_agreement():
    assert bias.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    items = [(f"d{i}", "__doc__") for i in range(30)]
    r = np.tile([5.0, 6.0, 7.0], (30, 1))
    paired = bias.PairedRatings(["x", "y", "z"], items, r, 0)
    assert bias.friedman_test(paired)["p"] < 1e-6
    rows = bias.pairwise_tests(paired, base="x", n_boot=100)
    assert [row["mean_shift"] for row in rows] == [1.0, 2.0]
    assert rows[0]["within_one"] == 1.0 and rows[1]["within_one"] == 0.0
    assert bias.debiased_scores(paired).tolist() == [6.0] * 30


def test_paired_ratings_keep_only_complete_items():
    rows = [
        {"mode": "doc", "variant": "v1", "doc_id": "a", "field": "__doc__", "status": "ok", "rating": 5},
        {"mode": "doc", "variant": "v2", "doc_id": "a", "field": "__doc__", "status": "ok", "rating": 6},
        {"mode": "doc", "variant": "v1", "doc_id": "b", "field": "__doc__", "status": "ok", "rating": 5},
        {"mode": "doc", "variant": "v2", "doc_id": "b", "field": "__doc__", "status": "unscored", "rating": None},
    ]
    paired = bias.paired_ratings(rows, mode="doc")
    assert paired.items == [("a", "__doc__")] and paired.dropped == 1
    with pytest.raises(ValueError, match="no doc judgments under variant"):
        bias.paired_ratings(rows, mode="doc", variants=["v1", "v3"])


def test_paired_ratings_pair_one_elicitation_only():
    """The forced and the free rating of one prompt order are two scorers, not one rating
    overwritten by the other: pairing orders keeps to one way of asking."""
    rows = [
        {
            "mode": "doc",
            "variant": "v1",
            "doc_id": "a",
            "field": "__doc__",
            "status": "ok",
            "rating": 5,
            "constrained": "grammar:rating-only",
        },
        {
            "mode": "doc",
            "variant": "v2",
            "doc_id": "a",
            "field": "__doc__",
            "status": "ok",
            "rating": 6,
            "constrained": "grammar:rating-only",
        },
        {
            "mode": "doc",
            "variant": "v1",
            "doc_id": "a",
            "field": "__doc__",
            "status": "ok",
            "rating": 9,
            "constrained": "none",
        },
    ]
    forced = bias.paired_ratings(rows, mode="doc", elicitation="grammar:rating-only")
    assert forced.ratings.tolist() == [[5.0, 6.0]]
    free = bias.paired_ratings(rows, mode="doc", elicitation="none")
    assert free.variants == ["v1"] and free.ratings.tolist() == [[9.0]]


def test_target_position_variants_move_the_rated_field():
    from construct_eval.judging.prompts import field_prompt

    output = {"a": 1, "b": 2, "c": 3}
    first = field_prompt("req", None, output, ("c",), 3, variant=PromptVariant.parse("target-first"))
    last = field_prompt("req", None, output, ("a",), 1, variant=PromptVariant.parse("target-last"))
    text_first, text_last = first.messages[-1]["content"], last.messages[-1]["content"]
    assert text_first.index('"c"') < text_first.index('"a"')
    assert text_last.index('"a"') > text_last.index('"c"')
    assert "target:first" in first.variant_id


def test_debiasing_report_with_one_wrong_document_reports_auroc_and_says_why_no_ece():
    """A subset with a single wrong document (as the first 20 PII documents): AUROC is defined,
    out-of-fold calibration is not; the report says so instead of failing the bias analysis."""
    rng = np.random.default_rng(0)
    items = [(f"d{i}", "__doc__") for i in range(20)]
    r = rng.integers(4, 7, size=(20, 3)).astype(float)
    paired = bias.PairedRatings(["x", "y", "z"], items, r, 0)
    wrong = {k: k[0] == "d3" for k in items}
    rows = bias.debiasing_report(paired, wrong)
    assert [row["score"] for row in rows] == ["x", "y", "z", "mean of first 2 orders", "mean of first 3 orders"]
    assert all(0.0 <= row["auroc"] <= 1.0 for row in rows)
    assert all(np.isnan(row["ece_platt_oof"]) and "wrong: 1" in row["note"] for row in rows)
