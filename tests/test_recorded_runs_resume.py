"""Every recorded run resumes with zero new model calls: resume keys must never move.

Hours of judging depend on it. For each recorded run with judgments (or reflections), the
same configuration is replayed against the embedded server's identity (as `construct-eval
serve` reports it today, on any port) with no server behind it and no cache: a call that
were made would fail and be written as a new row, so the test counts both calls and rows.
It runs on a copy: a failure can never touch the recorded files.
"""

from __future__ import annotations

import asyncio
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from construct_eval.data.runs import RunDir
from construct_eval.judging.judge import Judge, JudgeConfig
from construct_eval.judging.prompts import PromptVariant
from construct_eval.judging.scoring import score_run
from construct_eval.judging.stage import on_current_outputs
from construct_eval.judging.verdict import SCORER as P_CORRECT
from construct_eval.judging.verdict import VerdictAsker, score_rows
from construct_eval.llm.client import Endpoint, make_client
from construct_eval.scorers.reflection import FAMILY as REFLECTION
from construct_eval.scorers.reflection import PROMPTS, Reflector
from construct_eval.scorers.reflection import score_rows as reflection_scores
from construct_eval.serving.models import MODELS, embedded_identity

RESULTS = Path(__file__).resolve().parents[1] / "results"
JUDGED = sorted(p.parent for p in RESULTS.glob("**/judgments.jsonl") if (p.parent / "run.json").exists())
REFLECTED = sorted(p.parent for p in RESULTS.glob("**/reflections.jsonl"))
VERDICTED = sorted(p.parent for p in RESULTS.glob("**/verdicts.jsonl"))
NOWHERE = "http://127.0.0.1:9/v1"  # nothing listens on port 9: any call would fail and be written


def _endpoint(model: str) -> Endpoint:
    identity = embedded_identity(model, MODELS[model].sha256)
    return Endpoint(NOWHERE, model, backend="llamacpp", endpoint_id=identity, slots=1)


def _copy(run_dir: Path, tmp_path: Path) -> RunDir:
    target = tmp_path / run_dir.name
    shutil.copytree(run_dir, target, ignore=shutil.ignore_patterns("figures", "metrics"))
    return RunDir(target, create=False)


def _needs_data(run: RunDir) -> bool:
    return not all("request" in r for r in run.read("records"))


@pytest.mark.parametrize("run_dir", JUDGED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_recorded_judgments_resume_with_zero_calls(run_dir, tmp_path, request):
    run = _copy(run_dir, tmp_path)
    data_dir = request.getfixturevalue("shared_data") if _needs_data(run) else None
    base = dict((run.meta().get("judge") or {}).get("config") or {})
    assert base, f"{run_dir}: run.json records no judge configuration"
    # each judge configuration the run used, by the hash its judgment rows carry (the last one
    # used is run.json's "judge"; a run judged two ways holds both)
    recorded = {j["config_hash"]: j["config"] for j in run.meta().get("judges") or [] if j.get("config_hash")}
    groups: dict[tuple[str, str, str, str, str], set[str]] = defaultdict(set)
    per_group: dict[tuple[str, str, str, str, str], int] = defaultdict(int)
    rows = run.read("judgments")
    for r in rows:
        key = (r["model"], r["mode"], r["variant"], r["constrained"], r.get("config_hash") or "")
        groups[key].add(r["doc_id"])
        per_group[key] += 1
    for (model, mode, variant, constrained, config_hash), ids in sorted(groups.items()):
        if config_hash in recorded:
            cfg = {**recorded[config_hash], "variant": PromptVariant.parse(variant)}
        else:  # runs recorded before run.json listed every configuration
            cfg = {**base, "variant": PromptVariant.parse(variant)}
            if constrained == "none":
                cfg.update(constrained="none", explanation_cap=None, max_tokens=300)
        config = JudgeConfig(**cfg)

        async def go(config=config, model=model, mode=mode, ids=ids):
            async with make_client(_endpoint(model), cache=False, max_retries=0, identify_server=False) as client:
                return await score_run(run, Judge(client, config), [mode], ids=ids, progress=False, data_dir=data_dir)

        summary = asyncio.run(go())
        where = f"{run_dir.name} {model} {mode} {variant} {constrained}"
        # every recorded judgment is recognised as done (one judgment per call, but one call a
        # document in fields-joint mode, written as a row a field); a run still being recorded may
        # hold a document whose other fields are not judged yet
        calls = len(ids) if mode == "fields-joint" else per_group[(model, mode, variant, constrained, config_hash)]
        assert summary.tasks_skipped_done == calls, where
        in_progress = summary.tasks_planned - summary.tasks_skipped_done
        assert summary.calls_made == in_progress, f"{where}: {summary.calls_made} new calls"
        assert in_progress <= 8, f"{where}: {in_progress} calls missing in recorded documents"


@pytest.mark.parametrize("run_dir", REFLECTED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_recorded_reflections_resume_with_zero_calls(run_dir, tmp_path, request):
    run = _copy(run_dir, tmp_path)
    data_dir = request.getfixturevalue("shared_data") if _needs_data(run) else None
    audit = run.read("reflections")
    models = {r["model"] for r in audit}
    every, _ = run.judge_inputs(data_dir=data_dir)
    reflected = {r["id"] for r in audit}
    items = [i for i in every if i.doc_id in reflected]
    for model in models:

        async def go(model=model):
            async with make_client(_endpoint(model), cache=False, max_retries=0, identify_server=False) as client:
                reflector = Reflector(client)
                done = reflector.done_keys(audit)
                return [t for t in reflector.plan(items, tuple(PROMPTS)) if t.key not in done], reflector

        todo, reflector = asyncio.run(go())
        unfinished = {t.item.doc_id for t in todo}
        assert len(unfinished) <= 1, f"{run_dir.name}: {len(todo)} reflection calls would be made again"
        own = reflector.own_rows(audit)
        assert len(own) == len(audit)
        # the stored reflection scores are what the reflections give (a document cut short by a stop: not yet)
        remade = [r for r in reflection_scores(on_current_outputs(own, every)) if r["id"] not in unfinished]
        stored = [r for r in run.read("scores") if r["scorer"] == REFLECTION]
        assert remade == stored, f"{run_dir.name}: reflection scores differ from their reflections"


@pytest.mark.parametrize("run_dir", VERDICTED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_recorded_verdicts_resume_with_zero_calls_and_score_as_stored(run_dir, tmp_path, request):
    """Every recorded P(correct) verdict is its configuration's (its key rebuilt from today's code),
    no finished document would be asked again, and the stored p-correct scores are what the
    verdicts give (a document whose verdicts were cut short by a stop is still to be scored)."""
    run = _copy(run_dir, tmp_path)
    data_dir = request.getfixturevalue("shared_data") if _needs_data(run) else None
    audit = run.read_latest("verdicts")
    every, _ = run.judge_inputs(data_dir=data_dir)
    verdicted = {r["id"] for r in audit}
    items = [i for i in every if i.doc_id in verdicted]
    modes = ["doc"] * any(r["field"] == "__doc__" for r in audit) + ["fields"] * any(r["granularity"] for r in audit)
    stored = {(r["id"], r["field"]): r["score"] for r in run.read("scores") if r["scorer"] == P_CORRECT}
    for model in {r["model"] for r in audit}:

        async def go(model=model):
            async with make_client(_endpoint(model), cache=False, max_retries=0, identify_server=False) as client:
                asker = VerdictAsker(client)
                return asker, [r for r in audit if asker.owns(r)]

        asker, own = asyncio.run(go())
        assert len(own) == sum(r["model"] == model for r in audit), f"{run_dir.name}: verdict keys moved"
        done = {r["key"] for r in own}
        todo = {t.item.doc_id for t in asker.plan(items, modes) if t.key not in done}
        assert len(todo) <= 1, f"{run_dir.name}: documents {sorted(todo)} would be asked again"
        remade = {(r["id"], r["field"]): r["score"] for r in score_rows(on_current_outputs(own, every))}
        assert {k: v for k, v in remade.items() if k[0] not in todo} == stored, f"{run_dir.name}: scores differ"


def test_some_recorded_runs_are_checked():
    assert len(JUDGED) >= 8 and len(REFLECTED) >= 2 and len(VERDICTED) >= 2


CONSTRUCTED = sorted(p.parent for p in RESULTS.glob("**/construct.jsonl"))


@pytest.mark.parametrize("run_dir", CONSTRUCTED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_recorded_construct_calls_resume_with_zero_calls(run_dir, tmp_path, request):
    """Every output whose CONSTRUCT calls are recorded as answered plans no call again: its keys are
    all done. A call whose request failed (the server stopped under it) is not answered: a resume
    asks it again, by design, so its output is not counted complete until a later row answers it."""
    from construct_eval.parsing import is_request_failure
    from construct_eval.scorers.construct import FILE, ConstructScorer
    from construct_eval.scorers.construct_method import Config

    run = _copy(run_dir, tmp_path)
    rows = run.read(FILE)
    data_dir = request.getfixturevalue("shared_data") if _needs_data(run) else None  # a benchmark run's documents
    items, _ = run.judge_inputs(data_dir=data_dir)
    for model, preset, reasoning in sorted({(r["model"], r["preset"], r["reasoning_effort"]) for r in rows}):
        mine = [r for r in rows if (r["model"], r["preset"], r["reasoning_effort"]) == (model, preset, reasoning)]
        docs = {r["id"] for r in mine}
        client = make_client(_endpoint(model), cache=False, max_retries=0, identify_server=False)
        scorer = ConstructScorer(client, Config(preset, reasoning))
        tasks = scorer.plan([i for i in items if i.doc_id in docs])
        done = scorer.done_keys(mine)
        answered = [r for r in mine if not is_request_failure(r.get("reason"))]
        complete = {d for d in docs if sum(r["id"] == d for r in answered) >= scorer.config.calls}
        # a refused call not answered since is planned again (one answered by a later resume is done)
        refused = {r["key"] for r in mine if is_request_failure(r.get("reason"))} - done
        assert refused <= {t.key for t in tasks if t.key not in done}  # asked again
        todo = [t for t in tasks if t.item.doc_id in complete and t.key not in done]
        assert not todo, f"{len(todo)} recorded CONSTRUCT call(s) would be made again, e.g. {todo[0].item.doc_id}"
        assert complete, "no output has all its CONSTRUCT calls"
