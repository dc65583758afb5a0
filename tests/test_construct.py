"""``construct`` as a stage and as one call: score rows, resume, unscored with reasons, the generator's
parts, and the readings of TLM's reply formats (the equivalence with TLM itself is
``test_construct_equivalence``)."""

from __future__ import annotations

import json

import pytest

from construct_eval.cli import main
from construct_eval.data.runs import RunDir
from construct_eval.llm.endpoint import Endpoint
from construct_eval.scorers import construct_method as cm
from construct_eval.scorers.construct import mean_token_probability, trust
from construct_eval.serving.scripted_server import ScriptedServer
from tests.conftest import SCHEMA, make_item, make_run
from tests.construct_replies import RecordingJudge


def _rows(run_dir, name="scores"):
    return [json.loads(x) for x in (run_dir / f"{name}.jsonl").read_text().splitlines()]


def test_construct_stage_writes_rows_and_resumes(tmp_path):
    run = make_run(tmp_path / "run", 4)
    with ScriptedServer(RecordingJudge()) as server:
        opts = ["--run", str(run.path), "--base-url", server.base_url, "--model", "m", "--backend", "generic"]
        assert main(["construct", *opts, "--quiet", "--no-cache"]) == 0
        made = len(server.requests)
        assert made == 4 * 5  # five reflection templates per output at the default preset
        assert main(["construct", *opts, "--quiet", "--no-cache"]) == 0
        assert len(server.requests) == made, "a rerun makes no call"
    calls = _rows(run.path, "construct")
    assert len(calls) == 20 and {c["template"] for c in calls} == set(cm.TEMPLATE_IDS)
    rows = [r for r in _rows(run.path) if r["scorer"] == "construct"]
    docs = [r for r in rows if r["field"] == "__doc__"]
    assert len(docs) == 4 and all(0 < r["score"] < 1 and r["calls"] == 5 for r in docs)
    fields = [r for r in rows if r["field"] != "__doc__"]
    assert {r["field"] for r in fields} == set(SCHEMA["properties"]), "top-level fields only"
    assert all(r["granularity"] == "top" and 0 < r["score"] < 1 for r in fields)


def test_an_unreadable_reply_leaves_the_output_unscored_naming_the_template(tmp_path):
    run = RunDir(tmp_path / "run")
    (run.path / "schema.json").write_text(json.dumps(SCHEMA))
    item = make_item(1)
    item["output"]["invoice_id"] = "unreadable:per-field-certainty"  # the scripted judge breaks that reply
    run.append("records", [{"id": item["id"], "request": item["request"]}])
    run.append("outputs", [{"id": item["id"], "output": item["output"]}])
    with ScriptedServer(RecordingJudge()) as server:
        opts = ["--run", str(run.path), "--base-url", server.base_url, "--model", "m", "--backend", "generic"]
        assert main(["construct", *opts, "--quiet", "--no-cache"]) == 0
    doc = next(r for r in _rows(run.path) if r["scorer"] == "construct" and r["field"] == "__doc__")
    assert doc["score"] is None and doc["reason"].startswith("per-field-certainty: unreadable")


def test_trust_scores_one_output_in_real_time():
    item = make_item(2)
    with ScriptedServer(RecordingJudge()) as server:
        ep = Endpoint(base_url=server.base_url, model="m", backend="generic")
        result = trust(item["request"], SCHEMA, item["output"], endpoint=ep, cache=False)
        assert len(server.requests) == 5
    assert result.reason is None and 0 < result.score < 1 and result.calls == 5
    assert set(result.fields) == set(item["output"]) and result.explanation
    assert result.parts["self_reflection"] is not None and result.parts["consistency"] is None


def test_the_generator_parts_enter_with_tlms_weights():
    reflections = [cm.Reflection("argument", 0.6)]
    alone = cm.score_output('{"a": 1}', reflections)
    assert alone.trust == pytest.approx(0.6)
    both = cm.score_output('{"a": 1}', reflections, samples=['{"a": 1}', "{'a': 2}"], perplexity=0.9)
    parts = both.parts
    w = cm.weights_for(None, perplexity=True)  # TLM's default model's weights
    want = (parts["consistency"] * w["consistency"] + parts["indicator"] * w["indicator"] + 0.6 * w["self_reflection"]
            + 0.9 * w["perplexity"]) / (w["consistency"] + w["indicator"] + w["self_reflection"] + w["perplexity"])  # fmt: skip
    assert both.trust == pytest.approx(want) and parts["indicator"] == 0.5
    assert mean_token_probability([["{", 0.0], ["a", -1.0]]) == pytest.approx((1 + 2.718281828**-1) / 2)


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("<think>\nmaybe wrong\n</think>\n\n<score>\n73\n</score>", 0.73),
        ("<score>abc</score>", 0.5),  # a score that is no number: TLM's mapping gives 0.5
        ("I would say 40, or maybe 45", 0.05),  # no tags: TLM's greedy pattern keeps the last digit only
        ("no number at all", None),
    ],
)
def test_the_argument_template_is_read_with_tlms_patterns(reply, score):
    got = cm.read_reflection(cm.template("argument"), reply, '{"a": 1}')
    assert got.score == (pytest.approx(score) if score is not None else None)


def test_incorrect_fields_and_per_field_readings():
    answer = '{"a": 1, "b": 2}'
    listed = json.dumps({"explanation": "x", "incorrect_fields": [{"field_name": "b", "explanation": "b off"}],
                         "rating": 7})  # fmt: skip
    r = cm.read_reflection(cm.template("knowledge-gap"), listed, answer)
    assert r.score == pytest.approx(0.7) and r.fields["a"].score == 0.9 and r.fields["b"].score == 0.1
    per = json.dumps({"a": {"explanation": "", "confidence": "certain"}, "b": {"explanation": "?", "confidence": 3}})
    with pytest.raises(cm.Unreadable, match="cannot read"):
        cm.read_reflection(cm.template("per-field-correctness"), per, answer)
    with pytest.raises(cm.ConstructConfigError, match="JSON object"):
        cm.reflection_requests([{"role": "user", "content": "x"}], cm.response_format(None), "[1, 2]", cm.Config())


def test_a_dry_run_prices_constructs_calls_and_calls_nothing(tmp_path, capsys):
    """The README's hosted-endpoint line: CONSTRUCT's calls counted and priced, none made."""
    run = make_run(tmp_path / "run", 3)
    with ScriptedServer(RecordingJudge()) as server:
        opts = ["--run", str(run.path), "--base-url", server.base_url, "--model", "m", "--no-cache"]
        assert main(["construct", *opts, "--dry-run", "--price-in", "2.5", "--price-out", "10"]) == 0
        assert not server.requests
    printed = capsys.readouterr().out
    assert "calls to make: 15" in printed and "cost: at most" in printed, printed  # 3 outputs x 5 calls, priced
    assert not (run.path / "construct.jsonl").exists()


def test_the_names_the_command_line_offers_are_tlms():
    """Presets, reasoning efforts and the five templates' order, as TLM 0.0.3 defines them."""
    from construct_eval.scorers import tlm_source

    t = tlm_source.tlm()
    assert set(tlm_source.PRESETS) == {p.value for p in t.presets.QualityPreset}
    assert set(tlm_source.REASONING_EFFORTS) == {e.value for e in t.presets.ReasoningEffort}
    so = t.templates.SELF_REFLECTION_TEMPLATES_BY_WORKFLOW[t.presets.WorkflowType.STRUCTURED_OUTPUT_SCORING]
    assert list(tlm_source.TEMPLATE_IDS) == [cls.__name__ for cls in so]


def test_no_text_of_tlms_is_in_the_repository():
    """TLM's prompts are read from its package, never copied in: no tracked file holds a line of
    any of its five structured-output templates (a line of 40 characters or more). The recorded
    runs' JSONL files are left out: they keep the models' replies as written, and a small judge
    may echo its prompt."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    lines = {line.strip() for t in cm.templates() for line in t.prompt.splitlines() if len(line.strip()) >= 40}
    assert len(lines) > 20
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    found = []
    for name in tracked:
        path = root / name
        recorded = name.startswith("results/") and path.suffix == ".jsonl"
        if recorded or path.suffix in {".png", ".pdf", ".gguf", ".whl"} or not path.is_file():
            continue
        text = path.read_text(errors="ignore")
        found += [(name, line[:60]) for line in lines if line in text]
    assert not found, found[:5]
