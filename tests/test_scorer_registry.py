"""The scorer registry: a trust score declared once is seen everywhere; the names it reserves are refused.

The first test is the contract a new scorer is held to: everything about it (its declaration,
its rows, its calls) is in this one file, and ``evaluate``, ``calibrate``, the figures and the
cost ledger take it up with no other module edited.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from construct_eval import scorer_registry
from construct_eval.cli import main
from construct_eval.data.runs import RunDir
from construct_eval.display import style
from construct_eval.fields import DOCUMENT
from construct_eval.kinds import Level
from construct_eval.paper.figure_set import run_files
from construct_eval.paper.figures import build_figures
from construct_eval.reports.cost import cost_ledger
from construct_eval.reports.run_analyses import calibrate_run, evaluate_run
from construct_eval.scorer_labels import display_name
from construct_eval.scorer_registry import ScorerSpec, register, reserved_families, unregister
from construct_eval.scorers.external import ExternalScoreError, read_external_scores
from construct_eval.types import ScorerId

ROOT = Path(__file__).resolve().parents[1]
FAMILY = "house-rater"
SPEC = ScorerSpec(
    FAMILY,
    "house rater",
    "#117733",
    levels=(Level.DOCUMENT, Level.FIELD),
    granularities=("top",),
    cost_in="house_rater_calls",
    cost_label="house rater",
    marker="*",
)


@pytest.fixture
def house_rater():
    register(SPEC)
    yield SPEC
    unregister(FAMILY)


@pytest.fixture
def labelled(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "24"]) == 0
    assert main(["label", "--run", str(run_dir)]) == 0
    return RunDir(run_dir, create=False)


def _rate(run: RunDir) -> int:
    """The new scorer's rows: a noisy view of the truth per document and top-level field; its calls."""
    rows, calls = [], []
    for i, lab in enumerate(run.iter_rows("labels")):
        if lab.get("wrong") is None:
            continue
        rows.append(
            {"id": lab["id"], "scorer": FAMILY, "field": DOCUMENT, "score": 0.3 if lab["wrong"] else 0.6 + i % 3 / 10}
        )
        for f in lab["fields"]:
            if f.get("in_output") and f.get("path") and "." not in f["path"] and "[" not in f["path"]:
                score = 0.2 + i % 2 / 10 if f["wrong"] else 0.7 + i % 3 / 10
                rows.append(
                    {"id": lab["id"], "scorer": FAMILY, "granularity": "top", "field": f["path"], "score": score}
                )
        calls.append({"id": lab["id"], "usage": {"prompt_tokens": 100, "completion_tokens": 7}})
    run.replace_scorers(rows, {FAMILY})
    run.append("house_rater_calls", calls)
    return len(calls)


def test_a_scorer_declared_in_one_file_is_seen_by_evaluate_calibrate_figures_and_cost(house_rater, labelled):
    run = labelled
    n_calls = _rate(run)
    field_name = ScorerId(FAMILY, granularity="top")

    evaluate_run(run, n_boot=50)
    with (run.path / "metrics" / "detection.csv").open() as fh:
        detection = {(r["level"], r["scorer"]): r for r in csv.DictReader(fh)}
    assert float(detection[("document", FAMILY)]["auroc"]) > 0.9
    assert ("field", field_name.name) in detection

    calibrate_run(run, methods=("isotonic", "platt"))
    with (run.path / "metrics" / "calibration.csv").open() as fh:
        calibrated = {(r["scorer"], r["method"]) for r in csv.DictReader(fh)}
    assert {(FAMILY, "isotonic"), (field_name.name, "platt")} <= calibrated

    assert style.colour(FAMILY) == SPEC.colour and style.display_name(FAMILY) == "house rater"
    shown = [
        t.get_text()
        for f in build_figures([run.path])
        for ax in f.figure.axes
        for t in ax.get_yticklabels() + ax.get_xticklabels()
    ]
    assert any("house rater" in text for text in shown), "the new scorer is in the paper figures"
    assert "house_rater_calls.jsonl" in run_files()

    ledger = {r["source"]: r for r in cost_ledger(run, price_in=1.0, price_out=2.0)}
    assert ledger["house rater"]["calls"] == n_calls
    assert ledger["house rater"]["prompt_tokens"] == 100 * n_calls

    assert display_name(field_name) == "house rater, top-level fields"
    assert FAMILY in scorer_registry.describe()[-1]
    # adding this scorer touched one file: this one
    mentions = [
        p for p in (*ROOT.glob("construct_eval/**/*.py"), *ROOT.glob("tests/**/*.py")) if FAMILY in p.read_text()
    ]
    assert mentions == [Path(__file__).resolve()]


def _scores_file(tmp_path, run: RunDir) -> Path:
    rows = [{"id": r["id"], "field": DOCUMENT, "score": 0.5} for r in run.iter_rows("labels")]
    path = tmp_path / "ext.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("name", [*reserved_families(), "judge", "judge-doc", "p-correct2", "consistency_v2"])
def test_an_import_may_not_take_a_name_of_construct_evals_own_scorers(tmp_path, labelled, name):
    with pytest.raises(ExternalScoreError, match="construct-eval's own scorer"):
        read_external_scores(_scores_file(tmp_path, labelled), labelled, name)


def test_import_scores_p_correct_is_refused_and_leaves_the_verdict_rows_alone(tmp_path, labelled, capsys):
    run = labelled
    verdict_rows = [{"id": "doc-000", "scorer": "p-correct", "field": DOCUMENT, "score": 0.8}] * 1
    run.replace_scorers(verdict_rows, {"p-correct"})
    before = run.file("scores").read_bytes()
    args = ["import-scores", "--run", str(run.path), "--scores", str(_scores_file(tmp_path, run))]
    assert main([*args, "--scorer", "p-correct"]) == 2
    assert "'P(correct)' (p-correct)" in capsys.readouterr().err
    assert main([*args, "--scorer", "field-prior-uses-labels"]) == 2
    assert run.file("scores").read_bytes() == before


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("tlm:v2", "unknown part ':v2'"),
        ("tlm@top", "by its family alone"),
        ("tlm:expected", "by its family alone"),
        ("tlm v2", "must match"),
        ("tlm[x]", "combines no scorers"),
        ("newscore[x]", "by its family alone"),
    ],
)
def test_an_imported_name_must_be_a_family_under_the_grammar(tmp_path, labelled, capsys, name, why):
    args = ["import-scores", "--run", str(labelled.path), "--scores", str(_scores_file(tmp_path, labelled))]
    assert main([*args, "--scorer", name]) == 2
    err = capsys.readouterr().err
    assert "cannot be imported" in err and why in err
    assert not labelled.file("scores").exists() or name not in labelled.file("scores").read_text()


def test_the_registry_refuses_a_taken_family_and_a_judge_prefix():
    with pytest.raises(ValueError, match="already registered"):
        register(ScorerSpec("p-correct", "another", "#000000"))
    with pytest.raises(ValueError, match="kept for judge ratings"):
        register(ScorerSpec("judge-mine", "mine", "#000000"))
    with pytest.raises(ValueError, match="construct-eval's own"):
        unregister("consistency")
    with pytest.raises(ValueError, match="need granularities"):
        ScorerSpec("x", "x", "#000000", levels=(Level.FIELD,))


def test_a_scorer_whose_rows_live_in_its_own_file_is_collected(labelled):
    """``rows_in`` is read, not decorative: a spec naming another rows file has its rows collected."""
    from construct_eval.reports.collect import collect

    spec = ScorerSpec("own-file", "own file", "#117733", rows_in="own_file_scores")
    register(spec)
    try:
        rows = [{"id": lab["id"], "scorer": "own-file", "field": DOCUMENT, "score": 0.2 if lab["wrong"] else 0.8}
                for lab in labelled.iter_rows("labels") if lab.get("wrong") is not None]  # fmt: skip
        labelled.append("own_file_scores", rows)
        found = [i for i in collect(labelled) if i.scorer.family == "own-file"]
    finally:
        unregister("own-file")
    assert len(found) == 1 and found[0].n == len(rows)
