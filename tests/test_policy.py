"""A trust policy: fitted, saved, loaded, applied to new outputs, checked when labels come back;
every bad input named; ``review`` takes the run lock."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from construct_eval.cli import main
from construct_eval.data.runs import RunDir
from construct_eval.decide.calibration_map import calibrated
from construct_eval.decide.policy import Policy, PolicyError, run_outputs
from construct_eval.decide.report import decide, decide_items
from construct_eval.decide.shift import shift_test
from construct_eval.reports.collect import ScoredItems
from construct_eval.runlock import EXIT_LOCKED
from tests.conftest import env_without_proxy, injected_run, make_run


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """A labelled synthetic run with plausibility scores (made by ``label``), 160 documents."""
    return injected_run(tmp_path_factory.mktemp("policy") / "run", 160, 0.4)


def _scorer(run: RunDir) -> str:
    return "plausibility@leaf"


def test_a_policy_round_trips_through_its_file(labelled, tmp_path):
    policy = Policy.fit(labelled, _scorer(labelled), alpha=0.1, delta=0.1)
    path = policy.save(tmp_path / "policy.json")
    assert Policy.load(path) == policy
    data = json.loads(path.read_text())
    assert data["version"] == 1 and data["fitted_on"]["documents"] == 160 and data["package_version"]
    assert data["calibration"]["method"] in ("isotonic", "platt", "base rate") and "base_rate" in data["calibration"]


def test_applied_to_its_own_fitting_run_it_reproduces_the_decision(labelled):
    report = decide(labelled, _scorer(labelled), alpha=0.1, delta=0.1)
    policy = Policy.fit(labelled, _scorer(labelled), alpha=0.1, delta=0.1)
    applied = policy.review_run(labelled, n_perm=99)
    assert policy.threshold == report.answer.threshold
    assert applied.summary["accepted"] == report.answer.accepted
    assert applied.summary["guarantee_holds"] == report.answer.holds
    queue = applied.queue
    assert all(d.decision == "review" for d in queue)
    risks = [d.p_wrong for d in queue if d.p_wrong is not None]
    assert risks == sorted(risks, reverse=True), "the queue is riskiest first"


def test_the_guarantee_holds_in_simulation_within_delta():
    """Scores with a known P(wrong | score): over 200 fitting runs of 300 documents, the chosen
    threshold's true risk exceeds alpha in at most delta of them (with binomial slack)."""
    rng = np.random.default_rng(3)
    alpha, delta, reps, n = 0.1, 0.1, 200, 300

    def p_wrong(s):
        return 0.5 * (1 - s) ** 2

    grid = np.linspace(0, 1, 20001)
    broken = 0
    for r in range(reps):
        s = rng.random(n)
        y = (rng.random(n) < p_wrong(s)).astype(int)
        items = ScoredItems("p-correct", "document", doc_ids=[f"d{i}" for i in range(n)], fields=["__doc__"] * n,
                            scores=s.tolist(), wrong=y.tolist())  # fmt: skip
        t = decide_items(items, alpha=alpha, delta=delta, n_boot=20, seed=r).answer.threshold
        if t is not None:
            above = grid[grid >= t]
            broken += float(p_wrong(above).mean()) > alpha
    assert broken / reps <= delta + 2 * np.sqrt(delta * (1 - delta) / reps), broken


def test_a_shift_is_flagged_and_no_shift_is_not_at_the_stated_rate():
    rng = np.random.default_rng(5)

    def docs(k, shift=0.0):
        return [list(np.clip(rng.normal(0.6 + shift, 0.2, size=4), 0, 1)) for _ in range(k)]

    same = [shift_test(docs(60), docs(60), n_perm=199, seed=i)["p_value"] < 0.05 for i in range(40)]
    moved = [shift_test(docs(60), docs(60, 0.15), n_perm=199, seed=i)["p_value"] < 0.05 for i in range(20)]
    assert sum(same) / len(same) <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 40)
    assert sum(moved) / len(moved) >= 0.9


def test_a_shifted_run_loses_its_bound_in_the_summary(labelled):
    policy = Policy.fit(labelled, _scorer(labelled), alpha=0.1, delta=0.1)
    items = policy.items_of(labelled)
    lowered = ScoredItems(items.scorer, items.level, granularity=items.granularity, doc_ids=items.doc_ids,
                          fields=items.fields, scores=[s * 0.5 for s in items.scores], wrong=items.wrong)  # fmt: skip
    applied = policy.apply(lowered, n_perm=99)
    assert not applied.summary["guarantee_holds"] and "does not carry over" in applied.text()


def test_a_policy_without_a_threshold_sends_everything_to_review(labelled):
    policy = Policy.fit(labelled, _scorer(labelled), alpha=0.001, delta=0.1)
    assert policy.threshold is None and "no guarantee" in policy.guarantee
    applied = policy.review_run(labelled, n_perm=99)
    assert applied.summary["accepted"] == 0 and "everything goes to review" in applied.text()


def test_calibrated_probabilities_follow_the_map():
    cal = {"method": "isotonic", "x": [0.0, 0.5, 1.0], "y": [0.8, 0.3, 0.1], "base_rate": 0.3}
    assert calibrated(cal, np.array([-1.0, 0.25, 2.0])).tolist() == pytest.approx([0.8, 0.55, 0.1])
    assert calibrated({"method": "base rate", "base_rate": 0.2}, np.array([0.1, 0.9])).tolist() == [0.2, 0.2]


# -- bad input: named, nothing lost


def _saved(labelled, tmp_path, **edits):
    path = Policy.fit(labelled, _scorer(labelled), alpha=0.1, delta=0.1).save(tmp_path / "p.json")
    data = json.loads(path.read_text())
    data.update(edits)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ({"version": 7}, "version 7; this construct-eval reads version 1"),
        ({"threshold": "high"}, "'threshold' must be a number or null"),
        ({"calibration": {"method": "magic"}}, "'calibration.method' must be"),
        ({"surprise": 1}, "unknown field(s) ['surprise']"),
    ],
)
def test_a_policy_file_out_of_shape_is_refused_naming_the_file(labelled, tmp_path, edits, message):
    path = _saved(labelled, tmp_path, **edits)
    with pytest.raises(PolicyError, match=str(path).replace(".", r"\.")) as err:
        Policy.load(path)
    assert message in str(err.value)


def test_a_policy_file_cut_short_is_refused(labelled, tmp_path):
    path = _saved(labelled, tmp_path)
    data = json.loads(path.read_text())
    del data["calibration"]
    path.write_text(json.dumps(data))
    with pytest.raises(PolicyError, match=r"\['calibration'\] missing"):
        Policy.load(path)


def test_outputs_of_another_schema_are_named(labelled):
    policy = Policy.fit(labelled, _scorer(labelled), alpha=0.1, delta=0.1)
    items = policy.items_of(labelled)
    doc = items.doc_ids[0]
    outputs = run_outputs(labelled)
    extra = {**outputs, doc: {**outputs[doc], "surprise_field": 1}}
    with pytest.raises(PolicyError, match=rf"document '{doc}': field\(s\) \['surprise_field'\] the policy never saw"):
        policy.apply(items, outputs=extra, n_perm=19)
    sent = policy.apply(items, outputs=extra, new_fields="review", n_perm=19)
    assert sent.summary["items"] == len(items.seen)
    lacking = {**outputs, doc: {k: v for k, v in list(outputs[doc].items())[1:]}}
    with pytest.raises(PolicyError, match=rf"document '{doc}': field\(s\) .* are missing"):
        policy.apply(items, outputs=lacking, n_perm=19)


def test_scores_made_another_way_are_refused(labelled, tmp_path):
    policy = Policy.fit(labelled, _scorer(labelled), alpha=0.1, delta=0.1)
    policy.scorer = "construct"
    policy.scorer_config = {"model": "qwen2.5-coder-1.5b", "endpoint_id": "e1", "settings": {"preset": "medium"}}
    run = make_run(tmp_path / "new", 2)
    run.write_meta("construct", {"endpoint": {"model": "gpt-4o", "endpoint_id": "e1"}, "preset": "high"})
    want = "model: policy 'qwen2.5-coder-1.5b', run 'gpt-4o'; preset: policy 'medium', run 'high'"
    with pytest.raises(PolicyError, match=re.escape(want)):
        policy.check_config(run)


def test_review_takes_the_run_lock(labelled, tmp_path):
    path = _saved(labelled, tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from construct_eval.runlock import RunLock; "
         "RunLock(sys.argv[1], 'holder').acquire(); print('held', flush=True); time.sleep(60)", str(labelled.path)],
        stdout=subprocess.PIPE, text=True, env=env_without_proxy(),
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        code = main(["review", "--run", str(labelled.path), "--policy", str(path), "--n-perm", "19"])
    finally:
        holder.kill()
        holder.wait()
    assert code == EXIT_LOCKED
    assert main(["review", "--run", str(labelled.path), "--policy", str(path), "--n-perm", "19"]) == 0
    assert (labelled.path / "review" / "review_queue.csv").exists()


def test_a_construct_policy_decides_on_one_output_in_real_time(tmp_path):
    """Fit a CONSTRUCT policy on a scripted run, then one new output: its calls, and a decision per field."""
    from construct_eval.llm.endpoint import Endpoint
    from construct_eval.serving.scripted_server import ScriptedServer
    from tests.conftest import SCHEMA, make_item
    from tests.construct_replies import RecordingJudge

    run = make_run(tmp_path / "run", 12)
    with ScriptedServer(RecordingJudge()) as server:
        opts = ["--run", str(run.path), "--base-url", server.base_url, "--model", "m", "--backend", "generic"]
        assert main(["construct", *opts, "--quiet", "--no-cache"]) == 0
        run.append("labels", [{"id": r["id"], "dataset": "x", "wrong": i % 3 == 0, "fields": []}
                              for i, r in enumerate(run.read("records"))])  # fmt: skip
        policy = Policy.fit(run, "construct", alpha=0.3, delta=0.2)
        item = make_item(40)
        applied = policy.decide(item["request"], SCHEMA, item["output"],
                                endpoint=Endpoint(server.base_url, "m", backend="generic"), cache=False)  # fmt: skip
    assert applied.summary["construct"]["calls"] == 5 and len(applied.decisions) == 1
    assert applied.decisions[0].decision in ("accept", "review") and applied.decisions[0].p_wrong is not None


def test_review_scores_new_outputs_with_construct_where_an_endpoint_is_given(tmp_path, capsys):
    """``review`` under a CONSTRUCT policy, on a run of new outputs no CONSTRUCT reply scored yet:
    with ``--base-url`` it makes their calls (5 an output at the fitted preset) and decides each;
    run again, it has nothing left to call."""
    from construct_eval.serving.scripted_server import ScriptedServer
    from tests.construct_replies import RecordingJudge

    run = make_run(tmp_path / "run", 12)
    fresh = make_run(tmp_path / "new", 3)
    with ScriptedServer(RecordingJudge()) as server:
        opts = ["--base-url", server.base_url, "--model", "m", "--backend", "generic", "--no-cache"]
        assert main(["construct", "--run", str(run.path), *opts, "--quiet"]) == 0
        run.append("labels", [{"id": r["id"], "dataset": "x", "wrong": i % 3 == 0, "fields": []}
                              for i, r in enumerate(run.read("records"))])  # fmt: skip
        path = Policy.fit(run, "construct", alpha=0.3, delta=0.2).save(tmp_path / "policy.json")
        capsys.readouterr()
        review = ["review", "--run", str(fresh.path), "--policy", str(path), "--n-perm", "19", *opts]
        assert main(review) == 0
        assert "CONSTRUCT: 15 call(s) made for outputs not yet scored" in capsys.readouterr().out
        assert main(review) == 0
        assert "CONSTRUCT: 0 call(s) made" in capsys.readouterr().out
    assert (fresh.path / "review" / "decisions.jsonl").read_text().count("\n") == 3


def test_the_public_decide_is_callable_whichever_import_came_first(tmp_path):
    """``decide`` is the public function and the subpackage it lives in: after the subpackage is
    imported (``Policy`` imports it), ``from construct_eval import decide`` still decides."""
    import subprocess
    import sys

    code = (
        "from construct_eval import Policy\n"  # imports the subpackage first
        "import construct_eval.decide.thresholds as t\n"
        "from construct_eval import decide\n"
        "assert callable(decide) and t.__name__ == 'construct_eval.decide.thresholds'\n"
        "try:\n"
        "    decide()\n"
        "except TypeError as e:\n"
        "    assert 'run' in str(e), e\n"  # the function's own signature answered
        "else:\n"
        "    raise AssertionError('decide() without a run was accepted')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_plausibility_policy_reviews_outputs_no_one_labelled(labelled, tmp_path, capsys):
    """A run of new outputs (documents and outputs only: no labels, no plausibility file) under a
    plausibility policy: ``review`` writes the label-free checks first, then its decisions and
    queue; the family named without a granularity is refused with the two to choose from."""
    with pytest.raises(ValueError, match=r"2 granularities .*plausibility@leaf.*plausibility@top"):
        decide(labelled, "plausibility", level="field", alpha=0.1, delta=0.1)
    path = Policy.fit(labelled, "plausibility@leaf", alpha=0.1, delta=0.1).save(tmp_path / "policy.json")
    ids = [r["id"] for r in labelled.read("records")][:40]
    fresh = labelled.copy_subset(tmp_path / "new", ids, files=["records", "outputs"])
    assert not fresh.file("plausibility").exists() and not fresh.file("labels").exists()
    capsys.readouterr()
    assert main(["review", "--run", str(fresh.path), "--policy", str(path), "--n-perm", "19"]) == 0
    assert "plausibility checks written for 40 outputs" in capsys.readouterr().out
    decisions = (fresh.path / "review" / "decisions.jsonl").read_text().splitlines()
    assert len(decisions) > 40 and (fresh.path / "review" / "review_queue.csv").exists()
    # the command alone writes the same checks the labelled run has for those outputs
    assert main(["plausibility", "--run", str(fresh.path)]) == 0
    mine = {(r["id"], r["field"]): r["score"] for r in fresh.read("plausibility")}
    theirs = {(r["id"], r["field"]): r["score"] for r in labelled.read("plausibility") if r["id"] in set(ids)}
    assert mine == theirs
