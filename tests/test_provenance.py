"""Every command that writes to a run folder says what made it (provenance.jsonl)."""

from __future__ import annotations

import json

from construct_eval.cli import main
from tests.conftest import injected_run


def _lines(run_dir):
    return [json.loads(line) for line in (run_dir / "provenance.jsonl").read_text().splitlines()]


def test_each_writing_command_appends_what_made_it(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "6"]) == 0
    assert main(["label", "--run", str(run_dir)]) == 0
    assert main(["summary", "--run", str(run_dir)]) == 0  # reads only: no line
    lines = _lines(run_dir)
    assert [line["command"] for line in lines] == ["inject", "label"]
    first = lines[0]
    assert first["argv"][:3] == ["inject", "--run", str(run_dir)]
    assert first["exit_code"] == 0 and first["started"] <= first["ended"]
    assert first["construct_eval"] and "numpy" in first["packages"]
    assert len(first["options_signature"]) == 12 and first["options"]["n"] == 6
    if first["git"]:  # a git checkout: the commit and whether the code had uncommitted changes
        assert len(first["git"]["commit"]) == 40 and isinstance(first["git"]["dirty"], bool)


def test_a_failed_command_is_recorded_with_its_exit_code(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "4"]) == 0
    code = main(["consistency", "--run", str(run_dir)])  # no generator samples: refused
    assert code == 2
    assert _lines(run_dir)[-1]["command"] == "consistency" and _lines(run_dir)[-1]["exit_code"] == 2


def test_the_same_options_give_the_same_signature():
    from construct_eval.provenance import options_signature

    assert options_signature({"a": 1, "b": [2]}) == options_signature({"b": [2], "a": 1})
    assert options_signature({"a": 1}) != options_signature({"a": 2})


def test_evaluate_indexes_each_figure_with_its_scorer_and_command(tmp_path):
    import numpy as np

    run = injected_run(tmp_path / "run", 30, 0.3)
    run_dir = run.path
    rng = np.random.default_rng(0)
    long_name = "external-" + "x" * 90  # a name too long for a file name: the index still names it
    rows = [
        {"id": r["id"], "scorer": s, "field": "__doc__", "score": float(rng.random())}
        for r in run.read("labels")
        for s in ("token_logprob", long_name)
    ]
    run.append("scores", rows)
    assert main(["evaluate", "--run", str(run_dir), "--n-boot", "50"]) == 0
    assert main(["calibrate", "--run", str(run_dir)]) == 0
    index = json.loads((run_dir / "figures" / "index.json").read_text())
    assert {p.name for p in (run_dir / "figures").glob("*.png")} == set(index)
    reliability = [e for name, e in index.items() if name.startswith("reliability_")]
    # the two imported scores, beside the baselines every labelled run has (plausibility, field prior)
    shown = {e["scorer"] for e in reliability}
    baselines = {s for s in shown if s.split("@")[0].split(":")[0] in ("plausibility", "field-prior-uses-labels")}
    assert shown - baselines == {"token_logprob", long_name} and any(s.startswith("plausibility") for s in baselines)
    assert all(e["command"].startswith("construct-eval calibrate --run") for e in reliability)
    assert index["roc_document.png"]["command"].startswith("construct-eval evaluate")
    assert long_name in (run_dir / "figures" / "index.md").read_text()


def test_an_analysis_written_elsewhere_leaves_the_run_s_provenance_alone(tmp_path):
    """``calibrate --out DIR`` writes nothing in the run, so its line goes to DIR's provenance."""
    run = injected_run(tmp_path / "run", 20, 0.3)
    run.append(
        "scores",
        [{"id": r["id"], "scorer": "s", "field": "__doc__", "score": i % 7} for i, r in enumerate(run.read("labels"))],
    )
    before = (run.path / "provenance.jsonl").read_text()
    out = tmp_path / "elsewhere"
    assert (
        main(["calibrate", "--run", str(run.path), "--out", str(out), "--methods", "isotonic", "--figures", "none"])
        == 0
    )
    assert main(["evaluate", "--run", str(run.path), "--out", str(out), "--n-boot", "20", "--figures", "none"]) == 0
    assert (run.path / "provenance.jsonl").read_text() == before
    assert [line["command"] for line in _lines(out)] == ["calibrate", "evaluate"]
    assert (
        main(["evaluate", "--run", str(run.path), "--n-boot", "20", "--figures", "none"]) == 0
    )  # in the run: its line
    assert _lines(run.path)[-1]["command"] == "evaluate"
