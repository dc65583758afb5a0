"""The paper's comparison: which scorer plays each method, the common items, the paired tests,
and the table a run gets from ``construct-eval paper-comparison``."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from construct_eval.cli import main
from construct_eval.kinds import Level
from construct_eval.reports.collect import ScoredItems
from construct_eval.reports.paper_comparison import (
    CONSTANT_NOTE,
    CONSTRUCT,
    FORCED,
    display_rows,
    how_asked,
    method_of,
    paper_comparison,
    pick_methods,
)
from construct_eval.stats.bias import holm
from construct_eval.stats.metrics import compare_aurocs
from construct_eval.types import ScorerId
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
        _items("construct", "document", construct_strength, seed=1),
        _items("combo:rank-mean[consistency:mean+reflection]", "document", 0.4, seed=11),
        _items("judge-doc", "document", 0.1, seed=2),
        _items("judge-doc[sec:r-s-o|fields:original|ask:free]", "document", 0.3, seed=3),
        _items("judge-field:min", "document", 0.3, seed=4),
        _items("token_logprob", "document", 0.5, seed=5),
        _items("construct@top", "field", construct_strength, granularity="top"),
        _items("combo:rank-mean[consistency@top+reflection@top]@top", "field", 0.4, granularity="top", seed=12),
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
        CONSTRUCT: "construct",  # the authors' method, not the package's rank combination
        "rank-combination": "combo:rank-mean[consistency:mean+reflection]",  # not the fitted one: it uses the labels
        "judge-doc": "judge-doc[sec:r-s-o|fields:original|ask:free]",  # the card's recipe before the forced rating
        "judge-field": "judge-field:min",
        "token-logprob": "token_logprob",
    }
    field = {k: v.scorer.name for k, v in pick_methods(items, Level.FIELD).items()}
    assert field == {  # top-level fields only; no document judge per field
        CONSTRUCT: "construct@top",
        "rank-combination": "combo:rank-mean[consistency@top+reflection@top]@top",
        "judge-field": "judge-field",
        "token-logprob": "token_logprob@top",
    }
    # without the free recipe the forced rating plays the document judge
    forced_only = [i for i in items if "ask:free" not in i.scorer.name]
    assert pick_methods(forced_only, Level.DOCUMENT)["judge-doc"].scorer.name == "judge-doc"


@pytest.mark.parametrize(
    ("name", "level", "granularity"),
    [
        ("judge-doc[sec:o-s-r|fields:original]", "document", None),  # another prompt order
        ("judge-doc:expected", "document", None),  # a log-prob reading, not the written rating
        ("judge-field:expected:min", "document", None),
        ("judge-field@leaf:min", "document", None),
        ("judge-field@leaf", "field", "leaf"),  # the paper scores top-level fields
        ("token_logprob@leaf", "field", "leaf"),
        ("combo:rank-mean[consistency:min+reflection]", "document", None),  # the paper averages the samples
        ("combo:rank-mean[consistency@leaf+reflection@top]@top", "field", "top"),  # members of two granularities
        ("combo:rank-mean[consistency:mean+reflection+token_logprob]", "document", None),
        ("reflection", "document", None),  # the package's reflection ensemble alone is no paper method
        ("construct:min", "document", None),  # CONSTRUCT's document score is its own, not its least field
        ("consistency:mean", "document", None),
    ],
)
def test_scores_that_are_not_a_paper_method_play_none(name, level, granularity):
    sid = ScorerId.parse(name)
    assert method_of(sid, Level(level), granularity, FORCED) is None


def test_how_the_judge_was_asked_comes_from_the_run_not_the_name():
    """A run whose judge was first asked the card's way keeps the plain name for that recipe."""
    free_first = [
        _items("judge-doc", "document", 0.3, seed=2),  # asked first: the free recipe, the plain name
        _items("judge-doc[sec:r-s-o|fields:original|ask:grammar:rating-only]", "document", 0.1, seed=3),
        _items("token_logprob", "document", 0.5, seed=5),
    ]
    picked = pick_methods(free_first, Level.DOCUMENT, primary="none")
    assert picked["judge-doc"].scorer.name == "judge-doc"
    rows = paper_comparison(free_first, primary="none", n_boot=100)
    judge = next(r for r in rows if r["key"] == "judge-doc")
    assert judge["asked"] == "the paper's recipe: an explanation, then Rating: [[x]]"
    forced = ScorerId.parse("judge-doc[sec:r-s-o|fields:original|ask:grammar:rating-only]")
    assert how_asked("judge-doc", forced, Level.DOCUMENT, "none") == "the rating forced alone"
    assert how_asked("judge-doc", ScorerId.parse("judge-doc"), Level.DOCUMENT, FORCED) == "the rating forced alone"
    field_min = how_asked("judge-field", ScorerId.parse("judge-field:min"), Level.DOCUMENT, FORCED)
    assert field_min == "the rating forced alone, one call per top-level field; the document's least field rating"


def test_a_judge_run_only_in_another_prompt_order_is_said_so():
    items = [
        _items("construct", "document", 2.0, seed=1),
        _items("judge-doc[sec:o-s-r|fields:original]", "document", 0.3, seed=2),
    ]
    rows = paper_comparison(items, n_boot=100)
    judge = next(r for r in rows if r["key"] == "judge-doc" and r["level"] == "document")
    assert judge["note"] == "run here only in another prompt order, reading or granularity than the paper's"
    field = next(r for r in rows if r["key"] == "judge-field" and r["level"] == "document")
    assert field["note"] == "not run at this level"


def test_a_strong_construct_score_is_ranked_above_weak_baselines_after_holm():
    items = _study()
    rows = paper_comparison(items, n_boot=1000)  # 21 tests: Holm needs p below 1/420, 2 / (B + 1) at the least
    baselines = [r for r in rows if r["key"] != CONSTRUCT and "auroc" in r]
    assert len(baselines) == 7  # the paper's 5 baselines and the rank combination at both levels
    for r in baselines:
        assert r["auroc_diff"] > 0.2 and r["auroc_diff_low"] > 0
        assert r["auroc_ranking"] == "CONSTRUCT higher"
    construct = next(r for r in rows if r["key"] == CONSTRUCT and r["level"] == "field")
    assert construct["auroc"] > 0.85 and "auroc_diff" not in construct
    # the recall differences are tested too: at a fifth of the fields reviewed CONSTRUCT finds more wrong ones
    judge = next(r for r in rows if r["key"] == "judge-field" and r["level"] == "field")
    assert judge["recall@20%_diff_low"] > 0 and judge["recall@20%_ranking"] == "CONSTRUCT higher"
    # two Holm families fixed beforehand, both levels together: the paper's claim (CONSTRUCT's AUROC
    # against its three baselines: 3 document rows, 2 field ones) and every other test of the table
    tests = [(r, m) for r in rows for m in ("auroc", "recall@10%", "recall@20%") if f"{m}_p" in r]
    assert len(tests) == 21
    primary = [(r, m) for r, m in tests if m == "auroc" and r["key"] in ("judge-doc", "judge-field", "token-logprob")]
    assert len(primary) == 5 and all(r[f"{m}_holm_family"] == "primary" for r, m in primary)
    for family in (primary, [t for t in tests if t not in primary]):
        assert [r[f"{m}_p_holm"] for r, m in family] == holm([r[f"{m}_p"] for r, m in family])
    # the paired AUROC difference is the package's paired comparison on the same items
    logprob = next(r for r in rows if r["key"] == "token-logprob" and r["level"] == "document")
    a, b = items[0], items[5]
    y, sa, g = a.columns()
    ref = compare_aurocs(y, sa, b.columns()[1], g, n_boot=1000, seed=0)
    assert logprob["auroc_diff"] == pytest.approx(ref.difference.estimate)
    assert (logprob["auroc_diff_low"], logprob["auroc_diff_high"]) == pytest.approx(
        (ref.difference.low, ref.difference.high)
    )
    assert logprob["auroc_p"] == ref.p_value


def test_a_weaker_construct_score_is_ranked_below():
    rows = paper_comparison(
        [
            _items("construct", "document", 0.0, seed=1),
            _items("token_logprob", "document", 3.0, seed=2),
        ],
        n_boot=400,
    )
    row = next(r for r in rows if r["key"] == "token-logprob")
    assert row["auroc_ranking"] == "CONSTRUCT lower" and row["auroc_diff_high"] < 0


def test_the_same_score_twice_ranks_nothing():
    same = _items("token_logprob", "document", 1.0, seed=3)
    twin = ScoredItems(
        "construct", "document", doc_ids=same.doc_ids, fields=same.fields,
        scores=same.scores, wrong=same.wrong,
    )  # fmt: skip
    rows = paper_comparison([twin, same], n_boot=300)
    row = next(r for r in rows if r["key"] == "token-logprob" and r["level"] == "document")
    assert row["auroc_diff"] == 0 and row["auroc_diff_low"] == 0 == row["auroc_diff_high"]
    assert row["auroc_ranking"] == "none: the interval holds 0"


def test_every_method_of_a_level_is_read_on_the_items_all_of_them_scored():
    items = _study()
    items[0] = _items("construct", "document", 2.0, docs=DOCS[:80], seed=1)
    rows = paper_comparison(items, n_boot=200)
    doc_rows = [r for r in rows if r["level"] == "document"]
    assert {r["n"] for r in doc_rows} == {80} and {r["documents"] for r in doc_rows} == {80}
    assert {r["scored"] for r in doc_rows} == {80, 120}
    assert {r["common"] for r in doc_rows} == {"80 items scored by every method; the fewest: construct"}
    field_rows = [r for r in rows if r["level"] == "field" and "n" in r]
    assert {r["n"] for r in field_rows} == {360} and not any("common" in r for r in field_rows)


def test_no_common_item_is_said_so():
    items = [
        _items("construct", "document", 2.0, docs=DOCS[:50], seed=1),
        _items("token_logprob", "document", 1.0, docs=DOCS[50:], seed=2),
    ]
    rows = paper_comparison(items, n_boot=100)
    assert {r.get("note") for r in rows if r["level"] == "document" and "n" in r} == {
        "no item was scored by every method of this level"
    }


def test_methods_whose_labels_differ_on_the_same_items_are_refused():
    a = _items("construct", "document", 2.0, seed=1)
    b = _items("token_logprob", "document", 1.0, seed=2)
    b.wrong = [1 - w for w in b.wrong]
    with pytest.raises(ValueError, match="token_logprob: its labels differ"):
        paper_comparison([a, b], n_boot=100)


def test_without_construct_the_baselines_are_shown_and_nothing_is_paired():
    items = [i for i in _study() if not i.scorer.is_combination and i.scorer.family != "construct"]
    rows = paper_comparison(items, n_boot=200)
    construct = [r for r in rows if r["key"] == CONSTRUCT]
    assert [r["note"] for r in construct] == ["not run at this level"] * 2
    judge = next(r for r in rows if r["key"] == "judge-field" and r["level"] == "document")
    assert "auroc" in judge and "auroc_diff" not in judge and "CONSTRUCT not scored" in judge["note"]
    shown = display_rows(rows)
    assert all(d["CONSTRUCT minus it: AUROC"] == "" for d in shown)


def test_few_wrong_documents_are_underpowered_whatever_the_difference():
    """12 wrong fields in 2 of 120 documents: most resamples miss them; no direction is claimed."""
    wrong_docs = {"d000", "d001"}
    keys = [(d, f) for d in DOCS for f in FIELDS]
    y = [1 if d in wrong_docs else 0 for d, f in keys]
    rng = np.random.default_rng(0)

    def scored(name, strength):
        s = [float(-strength * w + rng.normal()) for w in y]
        return ScoredItems(
            name,
            "field",
            granularity="top",
            doc_ids=[d for d, _ in keys],
            fields=[f for _, f in keys],
            scores=s,
            wrong=y,
        )

    rows = paper_comparison(
        [scored("construct@top", 5.0), scored("token_logprob@top", 0.0)],
        n_boot=300,
    )
    row = next(r for r in rows if r["key"] == "token-logprob" and r["level"] == "field")
    assert "2 documents" in row["underpowered"]
    assert {row[f"{m}_ranking"] for m in ("auroc", "recall@10%", "recall@20%")} == {"none: underpowered"}


def test_other_budgets_and_a_p_value_printed_as_far_as_its_resamples_resolve_it():
    rows = paper_comparison(_study(), budgets=(0.125, 0.3), n_boot=1000)
    row = next(r for r in rows if r["key"] == "judge-field" and r["level"] == "field")
    assert "recall@12.5%_diff" in row and "recall@30%_ranking" in row
    # no resample crosses 0: p is the least 1000 resamples can show, 2 / 1001, and Holm multiplies it
    assert row["auroc_p"] == pytest.approx(2 / 1001) and 2 / 1001 < row["auroc_p_holm"] < 0.05
    # 300 resamples: the 5 tests of the paper's claim can reach 5 * 2 / 301 < 0.05 after Holm; the 16
    # others cannot go below 16 * 2 / 301 > 0.05
    few = paper_comparison(_study(), n_boot=300)
    apart = [r for r in few if r.get("auroc_diff_low", 0) > 0]
    assert {r["auroc_ranking"] for r in apart if r["auroc_holm_family"] == "primary"} == {"CONSTRUCT higher"}
    assert {r["auroc_ranking"] for r in apart if r["auroc_holm_family"] == "secondary"} == {"none after Holm"}
    shown = next(
        d
        for d in display_rows(rows, budgets=(0.125, 0.3))
        if d["method"] == "LLM judge per field" and d["level"] == "field"
    )
    assert f"Holm p {row['auroc_p_holm']:.3f}: CONSTRUCT higher" in shown["CONSTRUCT minus it: AUROC"]
    assert shown["precision / recall, 12.5% reviewed"].count("[") == 2
    with pytest.raises(ValueError, match="not distinct"):
        paper_comparison(_study(), budgets=(0.1, 0.1), n_boot=100)


@pytest.fixture
def scored_run(tmp_path):
    """A synthetic run with planted errors, its own scorers' rows written as its stages write them:
    reflection and self-consistency per document and top-level field, and token log-probs."""
    run = injected_run(tmp_path / "run", 60, 0.4)
    rng = np.random.default_rng(0)
    rows = []
    for label in run.iter_rows("labels"):
        for scorer in ("construct", "reflection", "consistency:mean", "token_logprob"):
            score = -float(label["wrong"]) + rng.normal() * (0.5 if scorer in ("construct", "reflection") else 1.0)
            rows.append({"id": label["id"], "scorer": scorer, "field": "__doc__", "score": score})
        top: dict[str, bool] = {}
        for f in label["fields"]:
            key = f["path"].split(".")[0].split("[")[0]  # the top-level field
            top[key] = top.get(key, False) or f["wrong"]
        for path, wrong in top.items():
            for scorer in ("construct", "reflection", "consistency", "token_logprob"):
                score = -float(wrong) + rng.normal()
                rows.append({"id": label["id"], "scorer": scorer, "granularity": "top", "field": path, "score": score})
    run.replace_scorers(rows, {"construct", "reflection", "consistency:mean", "token_logprob", "consistency"})
    return run


def test_a_run_gets_the_table_from_the_command_line(scored_run, capsys):
    run = scored_run
    members = "reflection,consistency:mean,reflection@top,consistency@top"  # as natural_study.sh combines them
    assert main(["combine", "--run", str(run.path), "--scorers", members]) == 0
    assert main(["paper-comparison", "--run", str(run.path), "--n-boot", "300"]) == 0
    printed = capsys.readouterr().out
    assert "CONSTRUCT (the authors' TLM 0.0.3)" in printed and "(not CONSTRUCT)" in printed
    with (run.path / "metrics" / "paper_comparison.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    doc = {r["key"]: r for r in rows if r["level"] == "document"}
    assert doc[CONSTRUCT]["scorer"] == "construct"
    assert doc["rank-combination"]["scorer"] == "combo:rank-mean[consistency:mean+reflection]"
    assert int(doc[CONSTRUCT]["n"]) == 60 and int(doc["token-logprob"]["n"]) == 60
    assert doc["judge-doc"]["note"] == "not run at this level"
    assert doc["token-logprob"]["auroc_p_holm"] != ""
    field = {r["key"]: r for r in rows if r["level"] == "field"}
    assert field[CONSTRUCT]["scorer"] == "construct@top"
    assert float(field[CONSTRUCT]["auroc"]) > 0.5 and field["token-logprob"]["auroc_diff"] != ""
    md = (run.path / "metrics" / "paper_comparison.md").read_text()
    # token log-probs and the rank combination at 2 levels, 3 tests each: the log-probs' AUROC is the paper's claim
    assert "its three baselines (2 tests), and every other test of the table (10)" in md.replace("\n", " ")


def test_a_method_with_one_value_on_every_item_is_said_to_order_nothing():
    """A judge that rates every document the same finds what a random review finds; the table
    says so beside its numbers instead of presenting them as a measurement."""
    construct = _items("construct", "document", 2.0, seed=1)
    flat = ScoredItems(
        "judge-doc", "document", doc_ids=construct.doc_ids, fields=construct.fields,
        scores=np.full(len(construct.scores), 10.0), wrong=construct.wrong,
    )  # fmt: skip
    rows = paper_comparison([construct, flat], n_boot=200)
    judge = next(r for r in rows if r["key"] == "judge-doc" and r["level"] == "document")
    assert judge["auroc"] == 0.5 and judge["note"] == CONSTANT_NOTE and judge["one_value"] == "10"
    assert judge["auroc_ranking"] == "CONSTRUCT higher"  # the comparison itself still stands
    varying = next(r for r in rows if r["key"] == CONSTRUCT and r["level"] == "document")
    assert "note" not in varying and varying["one_value"] == ""


def test_a_perfect_scores_recall_is_stored_with_an_interval_that_bounds_every_methods():
    """The figure draws a perfect score's recall as the ceiling, with its interval from the same
    document resamples: no method finds more wrong items in any resample, so no method's interval
    reaches past the ceiling's, though it can reach past the ceiling's point estimate."""
    rows = paper_comparison(_study(), n_boot=500)
    for level in ("document", "field"):
        mine = [r for r in rows if r["level"] == level and "auroc" in r]
        y = [int(w) for w in _items("x", level, 0.0).wrong]
        perfect = min(1.0, 0.2 * len(y) / sum(y))  # a fifth reviewed, every wrong item first
        for r in mine:
            assert r["recall@20%_perfect"] == pytest.approx(perfect)
            assert r["recall@20%_perfect_low"] <= perfect <= r["recall@20%_perfect_high"]
            assert r["recall@20%_high"] <= r["recall@20%_perfect_high"] + 1e-12
            assert r["recall@20%_perfect_low"] < r["recall@20%_perfect_high"]  # the wrong share moves


def test_the_construct_figure_keeps_its_dataset_title_above_the_panels_titles():
    from construct_eval.display.style import venue_style
    from construct_eval.paper.comparison_plot import paper_comparison_figure

    rows = [{**r, "dataset": "financial_ner-sample200", "scorer": r.get("scorer", r["key"])}
            for r in paper_comparison(_study(), n_boot=200) if "auroc" in r]  # fmt: skip
    for r in rows:
        r.update({k: float(v) for k, v in r.items() if k in ("n", "wrong")})
    fig = paper_comparison_figure(rows, style=venue_style("neurips", "full", ncols=2), interim="interim: a test")
    title = fig.get_suptitle()
    assert "financial NER" in title and "interim: a test" in title and "every method scored" not in title
    assert "per output" in fig.axes[0].get_title() and "per field" in fig.axes[1].get_title()


def test_the_construct_figure_labels_say_what_a_judge_rates_not_a_level_and_every_panel_says_what_it_counts():
    """A per-field judge's row sits in the per-output column too (as each output's least field
    rating), so its label names what the judge rates ("of each field") and never a level ("per
    field" beside a per-output estimate read as a contradiction); at both widths each panel's title
    says its items are those every method scored."""
    from construct_eval.display.style import venue_style
    from construct_eval.paper.comparison_plot import PAPER_LABELS, paper_comparison_figure

    assert not any("per field" in label or "per output" in label for label in PAPER_LABELS.values())
    rows = [{**r, "dataset": "financial_ner-sample200", "scorer": r.get("scorer", r["key"])}
            for r in paper_comparison(_study(), n_boot=200) if "auroc" in r]  # fmt: skip
    for r in rows:
        r.update({k: float(v) for k, v in r.items() if k in ("n", "wrong")})
    for venue, column in (("neurips", "full"), ("icml", "half")):
        fig = paper_comparison_figure(rows, style=venue_style(venue, column, ncols=2))
        for ax, unit in zip(fig.axes[:2], ("outputs", "fields"), strict=True):
            assert f"({unit} every method scored)" in ax.get_title().replace("\n", " ")


def test_the_comparison_is_final_once_construct_was_asked_on_every_planned_output_even_with_unread_replies():
    """An output whose replies TLM's code cannot read is unscored, with its reason: it does not keep
    the comparison interim. Interim while fewer than the planned outputs were asked; once all were,
    the caption says how many were scored and why the rest are not."""
    from construct_eval.paper import comparison_messages
    from construct_eval.paper.figure_data import PAPER_PLANNED

    def row(scored, unscored):
        return {"dataset": "d", "level": "document", "key": "construct", "scored": scored, "unscored": unscored}

    assert comparison_messages.paper_interim([row(165, 16)]) == (
        f"interim: CONSTRUCT asked on 181 of the {PAPER_PLANNED} planned outputs (165 scored)"
    )
    assert comparison_messages.paper_interim([row(PAPER_PLANNED - 18, 18)]) == ""
    assert comparison_messages._unscored([row(PAPER_PLANNED - 18, 18)]).startswith(
        f"CONSTRUCT scored {PAPER_PLANNED - 18} of the {PAPER_PLANNED} outputs it was asked on (18 whose replies"
    )
    assert comparison_messages._unscored([row(PAPER_PLANNED, 0)]) == ""
