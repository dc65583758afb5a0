"""The library functions the thin CLI calls, tested as the library (no argparse): the judge and
generation as stages (``judging.scoring.score``, ``data.generate_stage.generate``), the counts
``summary`` prints, and the one error-to-exit mapping of ``cli/exits.py``."""

from __future__ import annotations

import argparse
import json

import pytest

from construct_eval.cli.exits import FAILED, STOPPED, UsageError, run_command
from construct_eval.data.datasets import load_dataset
from construct_eval.data.generate import GenerationConfig
from construct_eval.data.generate_stage import generate
from construct_eval.data.runs import RunDir, RunError
from construct_eval.judging.judge import JudgeConfig
from construct_eval.judging.scoring import score
from construct_eval.judging.stage import StageOptions
from construct_eval.llm.budget import Budget, BudgetReached
from construct_eval.llm.client import Endpoint, make_client
from construct_eval.llm.engine import StageFailed, StageStopped
from construct_eval.reports.judgment_counts import judgment_counts
from construct_eval.serving.scripted_server import ScriptedServer, Status
from tests.conftest import make_run

CONFIG = JudgeConfig(constrained="none", max_tokens=40)


def _client(server: ScriptedServer, **kw):
    return make_client(Endpoint(server.base_url, "m", backend="generic"), cache=False, **kw)


def test_score_stops_at_the_spending_limit_and_a_rerun_resumes(tmp_path):
    run = make_run(tmp_path / "run", 8)
    with ScriptedServer() as server:
        limited = StageOptions(progress=False, budget=Budget(4.0, 1000, 1000))  # a call costs about 1
        with pytest.raises(StageStopped, match="spending limit"):
            score(run, _client(server), CONFIG, ["doc"], options=limited)
        rows = run.read("judgments")
        assert 0 < len(rows) == len(server.requests) < 8  # every call made is written, none past the limit
        outcome = score(run, _client(server), CONFIG, ["doc"], options=StageOptions(progress=False))
        assert outcome.summary is not None and outcome.summary.judgments_written == 8 - len(rows)
    assert len(run.read("judgments")) == 8 == len({r["doc_id"] for r in run.read("judgments")})
    assert any(line.startswith("judgments written: ") for line in outcome.lines())


def test_a_score_dry_run_plans_and_prices_without_a_call(tmp_path):
    run = make_run(tmp_path / "run", 3)
    with ScriptedServer() as server:
        options = StageOptions(dry_run=True, prices={"price_in": 1.0, "price_out": 2.0})
        outcome = score(run, _client(server), CONFIG, ["doc", "field"], options=options)
        assert not server.requests and not run.file("judgments").exists()
    assert outcome.plan is not None and outcome.plan.documents == 3
    assert outcome.estimate is not None and outcome.estimate.calls == outcome.plan.tasks_planned > 3
    assert outcome.lines()[0].startswith("dry run: 3 documents")


def test_score_failure_names_the_document_and_says_what_is_kept(tmp_path):
    run = make_run(tmp_path / "run", 2)
    with ScriptedServer(lambda req: Status(401)) as server, pytest.raises(StageFailed) as err:
        score(run, _client(server, max_retries=0), CONFIG, ["doc"], options=StageOptions(progress=False))
    assert "refused the credentials" in str(err.value) and "rerun to resume" in str(err.value)
    with pytest.raises(StageFailed, match=r"no output for document\(s\) \['nope'\]"):
        score(run, _client(server), CONFIG, ["doc"], ids=["nope"], options=StageOptions(progress=False))


def test_generate_as_a_stage_dry_run_limit_and_batch(tmp_path):
    dataset = load_dataset("synthetic", n=4, seed=0)
    config = GenerationConfig(samples=1)
    with ScriptedServer() as server:
        dry = generate(RunDir(tmp_path / "dry"), dataset, _client(server), config, dry_run=True, progress=False,
                       prices={"price_in": 1.0, "price_out": 1.0})  # fmt: skip
        assert not server.requests and dry.estimate.calls == 8  # 4 outputs and 4 samples
        limited = RunDir(tmp_path / "limited")
        with pytest.raises(StageStopped):
            generate(limited, dataset, _client(server), config, budget=Budget(3.0, 1000, 1000), progress=False)
        made = len(server.requests)
        assert 0 < made == len(limited.read("outputs")) + len(limited.read("samples")) < 8
        batched = RunDir(tmp_path / "batched")
        report = generate(batched, dataset, _client(server), config, batch=True, batch_poll=0.01, progress=False)
        assert len(server.requests) == made and server.batch.created == 1 and report.imported.replies == 8
    rows = batched.read("outputs") + batched.read("samples")
    assert len(rows) == 8 and all(r["via"] == "batch" for r in rows)


def test_judgment_counts_are_the_rows_of_the_run(tmp_path):
    run = make_run(tmp_path / "run", 3)
    with ScriptedServer() as server:
        score(run, _client(server), CONFIG, ["doc", "field"], options=StageOptions(progress=False))
    rows = run.read("judgments")
    counts = judgment_counts(run)
    assert counts.rows == len(rows) and sum(counts.by_mode.values()) == len(rows)
    assert counts.by_mode[("doc", "ok")] == sum(r["mode"] == "doc" and r["status"] == "ok" for r in rows)
    assert sum(counts.ratings.values()) == sum(r["status"] == "ok" for r in rows)
    assert counts.lines()[0] == f"{len(rows)} judgments in {run.file('judgments')}"
    assert any(line.lstrip().startswith("field ") for line in counts.lines())


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (RunError("run folder x: no labels"), FAILED, "error: run folder x: no labels"),
        (UsageError("--max-cost needs --price-in"), FAILED, "error: --max-cost needs --price-in"),
        (json.JSONDecodeError("bad", "{", 0), FAILED, "error: bad"),
        (FileNotFoundError("no such file: a.csv"), FAILED, "error: no such file: a.csv"),
        (StageFailed("document 'd1': boom"), FAILED, "error: document 'd1': boom"),
        (StageStopped("stopped at the spending limit: x"), STOPPED, "stopped at the spending limit: x"),
        (BudgetReached("the next call could cost"), STOPPED, "stopped at the spending limit: the next call"),
    ],
)
def test_one_mapping_from_errors_to_exit_codes(error, code, message, capsys):
    def command(args):
        raise error

    assert run_command(command, argparse.Namespace()) == code
    assert capsys.readouterr().err.startswith(message)


def test_a_bug_is_not_mapped_to_an_exit_code():
    def command(args):
        raise KeyError("a bug, with its traceback")

    with pytest.raises(KeyError):
        run_command(command, argparse.Namespace())
