"""The paper's comparison: which scorer plays each method, the common items, the paired tests,
and the table a run gets from ``construct-eval paper-comparison``."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from construct_eval.analysis.collect import ScoredItems
from construct_eval.analysis.paper_comparison import CONSTRUCT, display_rows, paper_comparison, pick_methods
from construct_eval.cli import main
from construct_eval.types import Level
from tests.conftest import injected_run

DOCS = [f"d{i:03d}" for i in range(120)]
FIELDS = ("a", "b", "c")


def _truth(seed: int = 1) -> tuple[dict[tuple[str, str], int], dict[str, int]]:
    rng = np.random.default_rng(seed)
    wrong_f = {(d, f): int(rng.random() < 0.2) for d in DOCS for f in FIELDS}
    return wrong_f, {d: int(any(wrong_f[d, f] for f in FIELDS)) for d in DOCS}


def _items(name: str, level: str, strength: float, *, docs=DOCS, granularity=None, seed=0) -> ScoredItems:
    """A score whose wrong items sit ``strength`` standard deviations lower than the right ones."""
    wrong_f, wrong_d = _truth()
    rng = np.random.default_rng(seed)
    keys = [(d, "") for d in docs] if level == "document" else [(d, f) for d in docs for f in FIELDS]
    y = [wrong_d[d] if level == "document" else wrong_f[d, f] for d, f in keys]
    scores = [float(-strength * w + rng.normal()) for w in y]
    return ScoredItems(
        name, level, granularity=granularity, doc_ids=[d for d, _ in keys], fields=[f for _, f in keys],
        scores=scores, wrong=y,
    )  # fmt: skip


def _study(construct_strength: float = 2.0) -> list[ScoredItems]:
    return [
        _items("combo:rank-mean[consistency:mean+reflection]", "document", construct_strength, seed=1),
        _items("judge-doc", "document", 0.1, seed=2),
        _items("judge-doc[sec:r-s-o|fields:original|ask:free]", "document", 0.3, seed=3),
        _items("judge-field:min", "document", 0.3, seed=4),
        _items("token_logprob", "document", 0.5, seed=5),
        _items("combo:rank-mean[consistency@top+reflection@top]@top", "field", construct_strength, granularity="top"),
        _items("combo:rank-mean[consistency@leaf+reflection@leaf]@leaf", "field", 0.0, granularity="leaf"),
        _items("fitted-oof-uses-labels[consistency:mean+reflection]", "document", 5.0, seed=6),
        _items("judge-field", "field", 0.3, seed=7),
        _items("token_logprob@leaf", "field", 0.0, granularity="leaf", seed=8),
        _items("token_logprob@top", "field", 0.5, granularity="top", seed=9),
    ]


def test_each_paper_method_is_played_by_the_scorer_the_paper_means():
    items = _study()
    doc = {k: v.scorer.name for k, v in pick_methods(items, Level.DOCUMENT).items()}
    assert doc == {
        CONSTRUCT: "combo:rank-mean[consistency:mean+reflection]",  # not the fitted one: it uses the labels
        "judge-doc": "judge-doc[sec:r-s-o|fields:original|ask:free]",  # the card's recipe before the forced rating
        "judge-field": "judge-field:min",
        "token-logprob": "token_logprob",
    }
    field = {k: v.scorer.name for k, v in pick_methods(items, Level.FIELD).items()}
    assert field == {  # top-level fields before leaves; no document judge per field
        CONSTRUCT: "combo:rank-mean[consistency@top+reflection@top]@top",
        "judge-field": "judge-field",
        "token-logprob": "token_logprob@top",
    }
    # without the free recipe the forced rating plays the document judge
    forced_only = [i for i in items if "ask:free" not in i.scorer.name]
    assert pick_methods(forced_only, Level.DOCUMENT)["judge-doc"].scorer.name == "judge-doc"


def test_a_strong_construct_score_is_ranked_above_weak_baselines_after_holm():
    rows = paper_comparison(_study(), n_boot=400)
    baselines = [r for r in rows if r["key"] != CONSTRUCT and "auroc" in r]
    assert len(baselines) == 5
    for r in baselines:
        assert r["auroc_diff"] > 0.2 and r["auroc_diff_low"] > 0
        assert r["auroc_ranking"] == "CONSTRUCT-style higher"
        assert r["auroc_p_holm"] >= r["auroc_p"]
    construct = next(r for r in rows if r["key"] == CONSTRUCT and r["level"] == "field")
    assert construct["auroc"] > 0.85 and "auroc_diff" not in construct


def test_the_same_score_twice_ranks_nothing():
    same = _items("token_logprob", "document", 1.0, seed=3)
    twin = ScoredItems(
        "combo:rank-mean[consistency:mean+reflection]", "document", doc_ids=same.doc_ids, fields=same.fields,
        scores=same.scores, wrong=same.wrong,
    )  # fmt: skip
    rows = paper_comparison([twin, same], n_boot=300)
    row = next(r for r in rows if r["key"] == "token-logprob" and r["level"] == "document")
    assert row["auroc_diff"] == 0 and row["auroc_diff_low"] == 0 == row["auroc_diff_high"]
    assert row["auroc_ranking"] == "none: the interval holds 0"


def test_every_method_of_a_level_is_read_on_the_items_all_of_them_scored():
    items = _study()
    items[0] = _items("combo:rank-mean[consistency:mean+reflection]", "document", 2.0, docs=DOCS[:80], seed=1)
    rows = paper_comparison(items, n_boot=200)
    doc_rows = [r for r in rows if r["level"] == "document"]
    assert {r["n"] for r in doc_rows} == {80} and {r["documents"] for r in doc_rows} == {80}
    field_rows = [r for r in rows if r["level"] == "field" and "n" in r]
    assert {r["n"] for r in field_rows} == {360}


def test_without_construct_the_baselines_are_shown_and_nothing_is_paired():
    items = [i for i in _study() if not i.scorer.is_combination]
    rows = paper_comparison(items, n_boot=200)
    construct = [r for r in rows if r["key"] == CONSTRUCT]
    assert [r["note"] for r in construct] == ["not run at this level"] * 2
    judge = next(r for r in rows if r["key"] == "judge-field" and r["level"] == "document")
    assert "auroc" in judge and "auroc_diff" not in judge and "CONSTRUCT-style not scored" in judge["note"]
    shown = display_rows(rows)
    assert all(d["CONSTRUCT-style minus it: AUROC"] == "" for d in shown)


def test_an_underpowered_level_says_so_and_claims_no_direction():
    few = DOCS[:8]
    items = [
        _items("combo:rank-mean[consistency:mean+reflection]", "document", 4.0, docs=few, seed=1),
        _items("token_logprob", "document", 0.0, docs=few, seed=2),
    ]
    rows = paper_comparison(items, n_boot=200)
    row = next(r for r in rows if r["key"] == "token-logprob")
    assert row["auroc_ranking"] == "none: underpowered" and "documents" in row["underpowered"]


@pytest.fixture
def scored_run(tmp_path):
    """A synthetic run with planted errors, its own scorers' rows written as its stages write them:
    reflection and self-consistency per document and top-level field, and token log-probs."""
    run = injected_run(tmp_path / "run", 60, 0.4)
    rng = np.random.default_rng(0)
    rows = []
    for label in run.iter_rows("labels"):
        for scorer in ("reflection", "consistency:mean", "token_logprob"):
            score = -float(label["wrong"]) + rng.normal() * (0.5 if scorer == "reflection" else 1.0)
            rows.append({"id": label["id"], "scorer": scorer, "field": "__doc__", "score": score})
        top: dict[str, bool] = {}
        for f in label["fields"]:
            key = f["path"].split(".")[0].split("[")[0]  # the top-level field
            top[key] = top.get(key, False) or f["wrong"]
        for path, wrong in top.items():
            for scorer in ("reflection", "consistency", "token_logprob"):
                score = -float(wrong) + rng.normal()
                rows.append({"id": label["id"], "scorer": scorer, "granularity": "top", "field": path, "score": score})
    run.replace_scorers(rows, {"reflection", "consistency:mean", "token_logprob", "consistency"})
    return run


def test_a_run_gets_the_table_from_the_command_line(scored_run, capsys):
    run = scored_run
    members = "reflection,consistency:mean,reflection@top,consistency@top"  # as natural_study.sh combines them
    assert main(["combine", "--run", str(run.path), "--scorers", members]) == 0
    assert main(["paper-comparison", "--run", str(run.path), "--n-boot", "300"]) == 0
    printed = capsys.readouterr().out
    assert "CONSTRUCT-style (reflection + self-consistency)" in printed
    with (run.path / "metrics" / "paper_comparison.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    doc = {r["key"]: r for r in rows if r["level"] == "document"}
    assert doc[CONSTRUCT]["scorer"] == "combo:rank-mean[consistency:mean+reflection]"
    assert int(doc[CONSTRUCT]["n"]) == 60 and int(doc["token-logprob"]["n"]) == 60
    assert doc["judge-doc"]["note"] == "not run at this level"
    assert doc["token-logprob"]["auroc_p_holm"] != ""
    field = {r["key"]: r for r in rows if r["level"] == "field"}
    assert field[CONSTRUCT]["scorer"] == "combo:rank-mean[consistency@top+reflection@top]@top"
    assert float(field[CONSTRUCT]["auroc"]) > 0.5 and field["token-logprob"]["auroc_diff"] != ""
    md = (run.path / "metrics" / "paper_comparison.md").read_text()
    assert "Holm's correction runs over all" in md and "combo:rank-mean" not in md
