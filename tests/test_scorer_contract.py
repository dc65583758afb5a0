"""A model-calling scorer added in this one file, and nothing else edited, runs end to end.

The scorer below (a 1-10 "is this field right?" question per top-level field and one for the
whole output, read from ``Rating: [[x]]``) declares itself with the scorer contract
(:class:`construct_eval.judging.stage.ModelScorer`). Registered, it is a command of the command
line that writes the run under its lock, plans its calls, resumes, prices a dry run, and its
rows reach ``evaluate``, ``calibrate``, the figures, the cost ledger and ``repair``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from construct_eval.cli import build_parser, main
from construct_eval.fields import DOCUMENT, field_paths, format_path, get_at
from construct_eval.judging.stage import ModelScorer, forget_model_scorer, model_scorer
from construct_eval.kinds import Level
from construct_eval.llm.client import ChatRequest, ChatResult
from construct_eval.parsing import parse_rating
from construct_eval.scorer_registry import ScorerSpec, spec_for
from construct_eval.serving.scripted_server import ScriptedServer
from construct_eval.types import JudgeInput
from tests.conftest import injected_run


@dataclass(frozen=True)
class FieldQuestion:
    item: JudgeInput
    field: str
    key: str


class FieldCheck(ModelScorer):
    """Asks, for the whole output and for each top-level field, how right it is (1-10)."""

    spec = ScorerSpec(
        "field-check", "field check (a test's scorer)", "#117733", (Level.FIELD, Level.DOCUMENT), ("top",),
        cost_in="field_checks", cost_label="field checks",
    )  # fmt: skip
    command = "field-check"
    summary = "a test's scorer: one 1-10 question per output and per top-level field"

    @classmethod
    def add_options(cls, parser: Any) -> None:
        parser.add_argument("--max-tokens", type=int, default=32)

    @classmethod
    def options_from(cls, args: Any) -> dict[str, Any]:
        return {"max_tokens": args.max_tokens}

    def plan(self, items: Sequence[JudgeInput]) -> list[FieldQuestion]:
        tasks = []
        for item in items:
            for name in [DOCUMENT, *(format_path(p) for p in field_paths(item.schema, item.output, granularity="top"))]:
                key = f"{item.doc_id}|{item.output_hash}|{name}|{self.options['max_tokens']}"
                tasks.append(FieldQuestion(item, name, key))
        return tasks

    def request_for(self, task: FieldQuestion) -> ChatRequest:
        what = "the whole output" if task.field == DOCUMENT else f"the field {task.field}"
        value = task.item.output if task.field == DOCUMENT else get_at(task.item.output, (task.field,))
        text = (
            f"Document:\n{task.item.request}\n\nValue of {what}:\n{json.dumps(value)}\n\nHow right is it? Rating: [[x]]"
        )
        return ChatRequest(messages=[{"role": "user", "content": text}], max_tokens=self.options["max_tokens"])

    def row_for(self, task: FieldQuestion, result: ChatResult) -> dict[str, Any]:
        parsed = parse_rating(result.text) if result.ok else None
        return {
            "id": task.item.doc_id, "output_hash": task.item.output_hash, "field": task.field, "key": task.key,
            "rating": parsed.rating if parsed else None, "reason": None if result.ok else "request_failed",
            "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
            "latency_s": result.latency_s, "model": self.client.endpoint.model,
        }  # fmt: skip

    def score_rows(self, rows: Sequence[Mapping[str, Any]], **_: Any) -> list[dict[str, Any]]:
        out = []
        for r in rows:
            row = {"id": r["id"], "scorer": self.spec.family, "field": r["field"], "score": r["rating"]}
            if r["rating"] is None:
                row["reason"] = "unscored: no rating in the reply"
            if r["field"] != DOCUMENT:
                row["granularity"] = "top"
            out.append(row)
        return out


@pytest.fixture
def registered():
    model_scorer(FieldCheck)
    yield FieldCheck
    forget_model_scorer(FieldCheck.command)


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 0
    return capsys.readouterr().out


def test_a_scorer_declared_in_one_file_runs_through_every_stage(tmp_path, capsys, registered):
    run = injected_run(tmp_path / "run", 24, 0.4)
    capsys.readouterr()
    n_docs = len(run.read("outputs"))
    with ScriptedServer() as server:
        endpoint = ["--base-url", server.base_url, "--model", "m", "--no-cache"]
        priced = _run(["field-check", "--run", str(run.path), *endpoint, "--dry-run"], capsys)
        assert "dry run (field-check): nothing called" in priced
        assert not run.file("field_checks").exists()

        first = _run(["field-check", "--run", str(run.path), *endpoint], capsys)
        calls = run.read("field_checks")
        assert len(calls) > n_docs and f"{len(calls)} field-check calls written" in first
        again = _run(["field-check", "--run", str(run.path), *endpoint], capsys)
        assert "0 field-check calls written" in again  # resumed: nothing called twice

        # repair names the command that remakes the calls file, and a rerun makes only the lost call
        lines = run.file("field_checks").read_text().splitlines()
        run.file("field_checks").write_text("\n".join([*lines[:-1], lines[-1][:20]]) + "\n")
        repaired = _run(["repair", "--run", str(run.path)], capsys)
        assert "made again by: field-check (it resumes)" in repaired
        remade = _run(["field-check", "--run", str(run.path), *endpoint], capsys)
        assert "1 field-check calls written" in remade

    scores = [r for r in run.read("scores") if r["scorer"] == "field-check"]
    assert {r["field"] == DOCUMENT for r in scores} == {True, False} and len(scores) == len(calls)
    provenance = [json.loads(line) for line in run.file("provenance").read_text().splitlines()]
    assert any(p.get("command") == "field-check" for p in provenance)  # a writer: recorded under the lock
    wait = build_parser()._subparsers._group_actions[0].choices["field-check"]  # type: ignore[union-attr]
    assert any(a.dest == "wait" for a in wait._actions)

    _run(["evaluate", "--run", str(run.path)], capsys)
    detection = (run.path / "metrics" / "detection.csv").read_text()
    assert detection.count("field-check") >= 2  # a document row and a field row
    _run(["calibrate", "--run", str(run.path)], capsys)
    assert "field-check" in (run.path / "metrics" / "calibration.csv").read_text()

    from matplotlib.figure import Figure

    from construct_eval.reports.run_analyses import evaluate_run

    ax = Figure().add_subplot()
    evaluate_run(run, tmp_path / "report", n_boot=50).plot("roc", "document", ax=ax, scorers=["field-check"])
    assert any(label.startswith("field check (a test's scorer)") for label in ax.get_legend_handles_labels()[1])

    cost = _run(["cost", "--run", str(run.path)], capsys)
    assert "field checks" in cost


def test_a_scorer_forgotten_is_no_command_and_no_family(registered):
    assert spec_for("field-check") is not None
    forget_model_scorer("field-check")
    assert spec_for("field-check") is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["field-check", "--run", "x"])
    model_scorer(FieldCheck)  # the fixture forgets it again


def test_a_model_scorer_needs_a_calls_file():
    class NoCalls(ModelScorer):
        spec = ScorerSpec("no-calls", "no calls", "#000000")
        command = "no-calls"

    with pytest.raises(ValueError, match="cost_in"):
        model_scorer(NoCalls)
    assert spec_for("no-calls") is None


def test_the_built_in_scorers_commands_keep_their_place_whatever_was_imported_first():
    """The help lists construct, reflect, verdict in that order even when an earlier import (a
    test, a plugin) registered verdict first: a full test run once reordered the help."""
    import subprocess
    import sys

    code = (
        "import construct_eval.judging.verdict\n"
        "from construct_eval.cli import build_parser\n"
        "names = list(build_parser()._subparsers._group_actions[0].choices)\n"
        "i = names.index('construct'); print(names[i:i + 3])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "['construct', 'reflect', 'verdict']", out.stderr
