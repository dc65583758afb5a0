"""Results as objects: evaluate and calibrate return reports with their tables, ``plot(ax=)``
drawing on an axes the caller owns, and ``save(dir)`` writing tables and figures."""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pytest
from matplotlib.figure import Figure

from construct_eval.cli import main
from construct_eval.data.runs import RunDir
from construct_eval.display.readability import series_per_panel
from construct_eval.reports.report_objects import CalibrationReport, EvaluationReport
from construct_eval.reports.run_analyses import calibrate_run, evaluate_run


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("runs") / "synthetic"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "60", "--error-seed", "0"]) == 0
    assert main(["label", "--run", str(run_dir)]) == 0
    run = RunDir(run_dir)
    rng = np.random.default_rng(0)
    rows = []
    for lab in run.read("labels"):
        wrong = any(f["wrong"] for f in lab["fields"])
        rows.append(
            {"id": lab["id"], "scorer": "token_logprob", "field": "__doc__", "score": float(rng.random() - wrong)}
        )
        rows.append({"id": lab["id"], "scorer": "reflection", "field": "__doc__", "score": float(rng.random())})
    run.append("scores", rows)
    return run


def test_evaluate_returns_a_report_that_plots_on_a_given_axes_and_saves(run, tmp_path):
    report = evaluate_run(run, tmp_path / "first", n_boot=50)
    assert isinstance(report, EvaluationReport)
    assert report["rows"] is report.rows and "rows" in report and report.get("missing") is None
    # the two imported scores, and the label-free plausibility checks every labelled run has
    assert {r["scorer"] for r in report.rows if r["level"] == "document"} == {
        "token_logprob",
        "reflection",
        "plausibility",
    }
    ax = Figure().add_subplot()
    assert report.plot("roc", "document", ax=ax) is ax
    assert series_per_panel(ax.figure) == [3]
    labels = {label.split(" (")[0] for label in ax.get_legend_handles_labels()[1]}
    assert labels == {
        "token log-probs",
        "reflection ensemble",
        "plausibility checks",
    }  # reader's names, not internal ones
    ax = Figure().add_subplot()
    report.plot("review", "document", ax=ax, scorers=["reflection"])
    assert series_per_panel(ax.figure) == [1]
    written = report.save(tmp_path / "again")
    names = {p.name for p in written}
    assert {"detection.csv", "roc_document.png", "pr_document.png", "review_document.png"} <= names
    assert all(p.exists() for p in written)
    with pytest.raises(ValueError):
        report.plot("histogram")


def test_calibrate_returns_a_report_with_reliability_and_values(run, tmp_path):
    report = calibrate_run(run, tmp_path, methods=("isotonic", "platt"))
    assert isinstance(report, CalibrationReport)
    key = "document:token_logprob"
    assert key in report.reliability and report.rows
    ax = Figure().add_subplot()
    assert report.plot(key, ax=ax) is ax
    assert len({line.get_gid() for line in ax.lines if line.get_gid()}) == len(report.reliability[key])
    with pytest.raises(KeyError, match="no reliability bins"):
        report.plot("document:nothing")
    assert any(p.name.startswith("reliability_") for p in report.figures)


def test_a_pr_panel_whose_scores_rate_different_items_spans_their_shares_wrong(run, tmp_path):
    """A judge on a subset and a score on every document have different no-skill precisions; one dashed line at
    the first score's share would misplace the other's, so the panel draws a band and says why."""
    report = evaluate_run(run, tmp_path / "pr", n_boot=50)
    ax = Figure().add_subplot()
    report.plot("pr", "document", ax=ax, scorers=["token_logprob", "reflection"])
    labels = ax.get_legend_handles_labels()[1]
    share = float(np.mean(next(it for it in report.usable("document") if str(it.scorer) == "token_logprob").wrong))
    assert f"share wrong {share:.2f}" in labels  # both scores rate every document: one line

    shutil.copytree(run.path, tmp_path / "subset")
    subset = RunDir(tmp_path / "subset", create=False)
    right = [lab["id"] for lab in run.read("labels") if not any(f["wrong"] for f in lab["fields"])]
    dropped = set(right[: len(right) // 2])  # reflection skips half the right documents: its share wrong rises
    subset.replace("scores", [r for r in run.read("scores") if r["scorer"] != "reflection" or r["id"] not in dropped])
    report = evaluate_run(subset, tmp_path / "pr-subset", n_boot=50)
    shares = sorted(report.shares_wrong("document", ["token_logprob", "reflection"]))
    assert shares[1] > shares[0] + 0.05
    ax = Figure().add_subplot()
    report.plot("pr", "document", ax=ax, scorers=["token_logprob", "reflection"])
    labels = ax.get_legend_handles_labels()[1]
    assert f"share wrong {shares[0]:.2f} to {shares[1]:.2f} (scores rate different items)" in labels
    assert not any(label.startswith("share wrong") and "to" not in label for label in labels)


def test_a_saved_run_figure_grows_to_hold_a_legend_wider_than_its_axes(tmp_path):
    """Long score names make the legend wider than the figure; saved, nothing may touch the edge."""
    from construct_eval.display import plots
    from construct_eval.display.readability import png_border_ink

    x = np.array([0.0, 0.5, 1.0])
    names = [f"combo:rank-mean[judge-doc[sec:r-s-o|fields:original]:expected+reflection+variant{i}]" for i in range(6)]
    fig = plots.pr_figure({n: (x, x, 0.5) for n in names}, [0.2, 0.5], "A title that is long enough to reach " * 2)
    path = plots.save(fig, tmp_path / "wide.png")
    assert png_border_ink(path) == 0


def _plain_columns(seed: int = 1, n_docs: int = 80, per_doc: int = 4):
    rng = np.random.default_rng(seed)
    docs = np.repeat([f"doc-{i}" for i in range(n_docs)], per_doc)
    wrong = rng.random(len(docs)) < 0.3
    rating = np.where(wrong, rng.integers(2, 9, len(docs)), rng.integers(5, 11, len(docs))).astype(float)
    return docs, wrong, rating


def test_detection_from_plain_arrays_agrees_with_scikit_learn_and_draws_one_curve():
    from sklearn.metrics import average_precision_score, roc_auc_score

    from construct_eval import DetectionDisplay

    docs, wrong, rating = _plain_columns()
    found = DetectionDisplay.from_predictions(wrong, rating, groups=docs, name="judge rating", n_resamples=300)
    assert found.auroc.estimate == pytest.approx(roc_auc_score(wrong, -rating))  # low rating flags wrong
    assert found.auprc.estimate == pytest.approx(average_precision_score(wrong, -rating))
    assert found.auroc.low < found.auroc.estimate < found.auroc.high
    assert (found.summary.n, found.summary.n_groups, found.summary.positives) == (320, 80, int(wrong.sum()))
    assert found.underpowered == ""
    assert str(found).startswith(f"judge rating: AUROC {found.auroc}")
    ax = Figure().add_subplot()
    found.plot(ax)
    assert ax.get_legend_handles_labels()[1] == [f"judge rating ({found.auroc.estimate:.2f})"]
    with pytest.raises(ValueError, match="kind"):
        found.plot(ax, kind="histogram")
    few = DetectionDisplay.from_predictions(wrong[:12], rating[:12], groups=docs[:12], n_resamples=100)
    assert "documents" in few.underpowered  # 3 documents: said, not hidden


def test_rating_calibration_from_plain_arrays_reads_each_value_out_of_fold():
    from construct_eval import RatingCalibration

    docs, wrong, rating = _plain_columns()
    meaning = RatingCalibration.from_predictions(wrong, rating, groups=docs, n_resamples=200)
    for row in meaning.values:
        at = rating == row["value"]
        assert (row["n"], row["wrong"]) == (int(at.sum()), int(wrong[at].sum()))
        assert row["naive"] == pytest.approx((10 - row["value"]) / 9, abs=1e-4)
    isotonic = [row["isotonic"] for row in meaning.values]
    assert all(a >= b - 1e-9 for a, b in itertools.pairwise(isotonic))  # a higher rating never reads as more wrong
    assert meaning.base_rate == pytest.approx(wrong.mean())
    assert meaning.best == min(meaning.readings, key=lambda r: r["brier"])["reading"]
    ax = Figure().add_subplot()
    meaning.plot(ax)
    assert {"observed (Wilson 95%)", "base rate (share wrong)"} <= set(ax.get_legend_handles_labels()[1])

    flat = RatingCalibration.from_predictions(wrong, np.full(len(wrong), 9.0), groups=docs)
    assert flat.readings == [] and flat.best is None  # one value: nothing is calibrated
    with pytest.raises(ValueError, match="one length"):
        RatingCalibration.from_predictions(wrong, rating[:-1], groups=docs)


def test_calibrators_have_one_palette_apart_from_the_scores_colours():
    """One palette for calibrators (style.CALIBRATOR_STYLES): the package's meaning and reliability
    panels read it, and no calibrator is drawn in a score's colour."""
    from construct_eval.display import plots, style

    assert plots.MAPS is style.CALIBRATOR_STYLES
    scores = ["judge-doc", "judge-doc[ask:free]", "judge-doc:expected", "p-correct", "token_logprob",
              "consistency", "reflection", "tlm", "construct", "plausibility", "contact_rule"]  # fmt: skip
    taken = {style.series_style(s).colour.upper() for s in scores} | set(style.OKABE_ITO)
    for name, (colour, _, _) in style.CALIBRATOR_STYLES.items():
        assert colour.upper() not in taken, name
    assert style.calibrator_style("isotonic") == style.CALIBRATOR_STYLES["isotonic"]
