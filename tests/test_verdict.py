"""P(correct) from the yes/no answer token's log-probs: per field and per document, resumable."""

from __future__ import annotations

import math

import pytest

from construct_eval.cli import main
from construct_eval.data.runs import RunDir
from construct_eval.judging.verdict import YES_NO_GRAMMAR, p_correct
from construct_eval.llm.logprobs import TokenLogprob
from construct_eval.serving.scripted_server import Reply, ScriptedServer
from tests.conftest import make_run


def test_p_correct_sums_case_and_space_variants_and_reports_mass():
    tok = TokenLogprob(
        "Yes", math.log(0.5), {"Yes": math.log(0.5), " yes": math.log(0.1), "No": math.log(0.2), "x": -1}
    )
    value, mass, reason = p_correct(tok)
    assert reason is None and value == pytest.approx(0.6 / 0.8) and mass == pytest.approx(0.8)
    assert p_correct(TokenLogprob("Maybe", -0.1, {"Maybe": -0.1, "Sure": -3}))[0] is None
    assert p_correct(None)[2].startswith("no_logprobs")


class VerdictJudge:
    """Says yes (P 0.9) to every field except 'total' (P(yes) 0.2); the document gets 0.7."""

    def __init__(self):
        self.calls = 0
        self.grammars = set()

    def __call__(self, req):
        self.calls += 1
        self.grammars.add(req.body.get("grammar"))
        text = req.body["messages"][-1]["content"].split("[Instruction]")[-1]
        p = 0.2 if "`total`" in text else 0.7 if "as a whole" in text else 0.9
        top = [{"token": "yes", "logprob": math.log(p)}, {"token": " No", "logprob": math.log(1 - p) - 0.1}]
        chosen = top[0] if p > 0.5 else top[1]  # the answer token is one of the alternatives
        return Reply(chosen["token"].strip(), logprobs=[{**chosen, "top_logprobs": top}])


def test_verdict_command_scores_documents_and_fields_and_resumes(tmp_path):
    run = make_run(tmp_path / "run", 3)
    judge = VerdictJudge()
    with ScriptedServer(judge) as server:
        args = ["verdict", "--run", str(run.path), "--base-url", server.base_url, "--model", "v"]
        args += ["--backend", "llamacpp", "--quiet", "--no-cache"]
        assert main(args) == 0
        assert judge.calls == 3 * 5  # a document and its 4 top-level fields
        assert main(args) == 0
        assert judge.calls == 15  # resumed: nothing asked twice
    assert judge.grammars == {YES_NO_GRAMMAR}
    scores = {(r["id"], r["field"]): r for r in RunDir(run.path).read("scores")}
    total = scores[("doc-000", "total")]
    expected = 0.2 / (0.2 + 0.8 * math.exp(-0.1))
    assert total["score"] == pytest.approx(expected) and total["scorer"] == "p-correct"
    assert scores[("doc-000", "__doc__")]["calls"] == 5
    assert scores[("doc-000", "invoice_id")]["score"] > 0.9


def test_verdicts_asked_a_few_documents_at_a_time_keep_every_documents_scores(tmp_path):
    """A study judges one document at a time (``--ids``): each call's score rows are remade from
    every verdict of the configuration, whatever documents and modes the call asked for; a
    verdict on an output since regenerated scores nothing."""
    run = make_run(tmp_path / "run", 3)
    with ScriptedServer(VerdictJudge()) as server:
        args = ["verdict", "--run", str(run.path), "--base-url", server.base_url, "--model", "v"]
        args += ["--backend", "llamacpp", "--quiet", "--no-cache"]
        assert main([*args, "--ids", "doc-000"]) == 0
        assert main([*args, "--ids", "doc-001", "--mode", "doc"]) == 0

        def scored() -> set[tuple[str, str]]:
            return {(r["id"], r["field"]) for r in RunDir(run.path).read("scores") if r["scorer"] == "p-correct"}

        assert {d for d, _ in scored()} == {"doc-000", "doc-001"} and len(scored()) == 5 + 1
        outputs = RunDir(run.path).read("outputs")
        outputs[0]["output"] = {**outputs[0]["output"], "total": -1}  # doc-000's output regenerated
        RunDir(run.path).replace("outputs", outputs)
        assert main([*args, "--ids", "doc-002", "--mode", "doc"]) == 0
        assert scored() == {("doc-001", "__doc__"), ("doc-002", "__doc__")}


def test_verdict_coverage_reports_the_yes_no_mass_per_level(tmp_path):
    run = make_run(tmp_path / "run", 3)
    with ScriptedServer(VerdictJudge()) as server:
        args = ["verdict", "--run", str(run.path), "--base-url", server.base_url, "--model", "v"]
        assert main([*args, "--backend", "llamacpp", "--quiet", "--no-cache"]) == 0
    from construct_eval.reports.run_analyses import verdict_coverage

    rows = {r["level"]: r for r in verdict_coverage(RunDir(run.path))}
    assert rows["document"]["calls"] == 3 and rows["field"]["calls"] == 12
    masses = [r["mass"] for r in RunDir(run.path).read("verdicts") if r["field"] != "__doc__"]
    assert rows["field"]["mass_mean"] == pytest.approx(sum(masses) / len(masses), abs=1e-4)
    assert 0 < rows["field"]["mass_min"] <= rows["field"]["mass_median"] <= 1
    assert verdict_coverage(make_run(tmp_path / "empty", 1)) == []


def test_a_resumed_verdict_run_asks_failed_calls_again_and_scores_them(tmp_path):
    from construct_eval.serving.scripted_server import Status

    run = make_run(tmp_path / "run", 2)
    judge, down = VerdictJudge(), {"now": True}
    with ScriptedServer(lambda req: Status(500) if down["now"] else judge(req)) as server:
        args = ["verdict", "--run", str(run.path), "--base-url", server.base_url, "--model", "v"]
        args += ["--backend", "llamacpp", "--quiet", "--no-cache", "--max-retries", "0"]
        main(args)  # every call fails: the rows say so
        failed = RunDir(run.path).read("verdicts")
        assert len(failed) == 10 and all(r["reason"].startswith("request_failed") for r in failed)
        down["now"] = False
        assert main(args) == 0
        assert judge.calls == 10  # each failed call asked again, once
    scores = [r for r in RunDir(run.path).read("scores") if r["scorer"] == "p-correct"]
    assert len(scores) == 10 and all(r["score"] is not None and "reason" not in r for r in scores)
    assert {r["calls"] for r in scores if r["field"] == "__doc__"} == {5}
