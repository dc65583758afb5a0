"""Results as objects: evaluate and calibrate return reports with their tables, ``plot(ax=)``
drawing on an axes the caller owns, and ``save(dir)`` writing tables and figures."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from construct_eval.analysis.displays import CalibrationReport, EvaluationReport
from construct_eval.analysis.readability import series_per_panel
from construct_eval.analysis.reports import calibrate_run, evaluate_run
from construct_eval.cli import main
from construct_eval.data.runs import RunDir


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
