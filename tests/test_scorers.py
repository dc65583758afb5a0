"""Scorers beyond one rating: self-consistency, the reflection ensemble, combinations."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from construct_eval.cli import main
from construct_eval.data.runs import RunDir
from construct_eval.scorers import combine, consistency, reflection
from construct_eval.serving.scripted_server import Reply, ScriptedServer, reply_properties

# ------------------------------------------------------------------ consistency


def test_leaf_agreement_pairs_list_items_and_counts_unparsed_samples():
    output = {"id": "A-1", "items": [{"sku": "x", "qty": 1}, {"sku": "y", "qty": 2}], "note": None}
    same_reordered = {"id": "a 1", "items": [{"sku": "y", "qty": 2}, {"sku": "x", "qty": 1}], "note": None}
    other_qty = {"id": "A-1", "items": [{"sku": "x", "qty": 5}, {"sku": "y", "qty": 2}], "note": "n"}
    agreement = consistency.leaf_agreement(output, [same_reordered, other_qty, None, same_reordered])
    assert agreement == {
        "id": 0.75,
        "items[0].sku": 0.75,
        "items[0].qty": 0.5,
        "items[1].sku": 0.75,
        "items[1].qty": 0.75,
        "note": 0.5,
    }


def _sampling_generator(req):
    """The main output at temperature 0; samples differ in 'total' for odd seeds."""
    seed = req.body.get("seed") or 0
    out = {"invoice_id": "INV-1", "total": 10.0 if seed % 2 == 0 else 99.0, "buyer": {"name": "ACME"}}
    return Reply(json.dumps(out))


def test_consistency_end_to_end_from_generator_samples(tmp_path):
    ds_file = tmp_path / "data.jsonl"
    truth = {"invoice_id": "INV-1", "total": 10.0, "buyer": {"name": "ACME"}}
    ds_file.write_text(
        "".join(json.dumps({"text": f"Invoice INV-1 {i}", "ground_truth": truth}) + "\n" for i in range(3))
    )
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {k: {} for k in truth}}))
    run = tmp_path / "run"
    with ScriptedServer(_sampling_generator) as server:
        args = ["generate", "--run", str(run), "--dataset", str(ds_file), "--schema", str(schema), "--samples", "4"]
        assert main([*args, "--base-url", server.base_url, "--model", "g", "--quiet", "--no-cache"]) == 0
    assert len(RunDir(run).read("samples")) == 12
    assert main(["consistency", "--run", str(run)]) == 0
    rows = RunDir(run).read("scores")
    doc = {r["scorer"]: r["score"] for r in rows if r["field"] == "__doc__" and r["id"].endswith("00000")}
    assert doc == {"consistency:min": 0.5, "consistency:mean": pytest.approx((1 + 0.5 + 1) / 3)}
    top = {r["field"]: r["score"] for r in rows if r.get("granularity") == "top" and r["id"].endswith("00000")}
    assert top == {"invoice_id": 1.0, "total": 0.5, "buyer": 1.0}
    # the samples' cost is the scorer's cost, per document and for its field scores
    samples = RunDir(run).read("samples")
    doc_row = next(r for r in rows if r["scorer"] == "consistency:min" and r["id"].endswith("00000"))
    mine = [x for x in samples if x["id"] == doc_row["id"]]
    assert doc_row["calls"] == 4
    assert doc_row["tokens"] == sum(x["usage"]["prompt_tokens"] + x["usage"]["completion_tokens"] for x in mine) > 0
    assert doc_row["seconds"] == pytest.approx(sum(x["latency_s"] for x in mine), abs=1e-3)
    assert main(["label", "--run", str(run)]) == 0
    from construct_eval.reports.collect import collect

    items = {(i.level, i.scorer): i for i in collect(RunDir(run))}
    assert items[("field", "consistency@top")].calls == items[("document", "consistency:min")].calls == 12
    assert items[("field", "consistency@leaf")].tokens == items[("document", "consistency:mean")].tokens > 0


# ------------------------------------------------------------------ reflection


@pytest.mark.parametrize(
    "prompt_id, text, expected, reason",
    [
        ("reflect-incorrect", '{"incorrect_fields": ["b"]}', {"a": 0.9, "b": 0.1}, None),
        ("reflect-incorrect", '{"incorrect_fields": "b"}', {}, "bad_field_entry"),
        ("reflect-certainty", '{"a": "Probably correct", "b": "unsure"}', {"a": 0.75, "b": 0.5}, None),
        ("reflect-certainty", '{"a": "maybe"}', {}, "missing_field"),
        ("reflect-score100", '{"a": 80, "b": 140}', {"a": 0.8}, None),
        ("reflect-score100", '{"a": "80"}', {}, "out_of_range"),
        ("reflect-argue", '{"argument": "x", "score": 35}', {"__doc__": 0.35}, None),
        ("reflect-argue", "no json here", {}, "invalid_json"),
        ("reflect-argue", "", {}, "empty_reply"),
    ],
)
def test_reflection_replies_parse_or_are_unscored_with_a_reason(prompt_id, text, expected, reason):
    parsed, why = reflection.parse_reflection(prompt_id, text, ["a", "b"])
    assert parsed == expected
    assert (why or "").split(":")[0] == (reason or "")


def test_reflection_combination_is_the_documented_average():
    parsed = {
        "reflect-incorrect": {"a": 0.9, "b": 0.1},
        "reflect-certainty": {"a": 1.0, "b": 0.25},
        "reflect-score100": {"a": 0.8},
        "reflect-argue": {"__doc__": 0.4},
    }
    scores = reflection.combine(parsed, ["a", "b"])
    assert scores["a"] == pytest.approx((0.9 + 1.0 + 0.8) / 3)
    assert scores["b"] == pytest.approx((0.1 + 0.25) / 2)
    assert scores["__doc__"] == pytest.approx((0.1 + 0.25 + 0.8 + 0.4) / 4)
    assert reflection.combine({}, ["a"]) == {"a": None, "__doc__": None}


class ReflectingJudge:
    """Answers each reflection prompt in its format; flags the field 'total' as wrong."""

    def __init__(self):
        self.calls = 0

    def __call__(self, req):
        self.calls += 1
        text = req.body["messages"][-1]["content"]
        names = reply_properties(req.body) or []
        if "incorrect_fields" in text:
            return Reply(json.dumps({"incorrect_fields": ["total"]}))
        if "how certain" in text:
            return Reply(json.dumps({n: "unsure" if n == "total" else "certainly correct" for n in names}))
        if "from 0 (certainly wrong)" in text:
            return Reply(json.dumps({n: 20 if n == "total" else 95 for n in names}))
        return Reply("I refuse to use JSON")  # the argue prompt: unscored


def test_reflect_command_scores_fields_and_resumes(tmp_path):
    from tests.conftest import make_run

    run = make_run(tmp_path / "run", 3)
    judge = ReflectingJudge()
    with ScriptedServer(judge) as server:
        args = ["reflect", "--run", str(run.path), "--base-url", server.base_url, "--model", "r", "--quiet"]
        assert main([*args, "--no-cache"]) == 0
        assert judge.calls == 12
        assert main([*args, "--no-cache"]) == 0
        assert judge.calls == 12  # resumed: every prompt of every document was already answered
    audit = run.read("reflections")
    assert sum(r["status"] == "unscored" for r in audit) == 3
    assert {r["reason"].split(":")[0] for r in audit if r["reason"]} == {"invalid_json"}
    scores = {(r["id"], r["field"]): r["score"] for r in run.read("scores")}
    assert scores[("doc-000", "total")] == pytest.approx((0.1 + 0.5 + 0.2) / 3)
    assert scores[("doc-000", "invoice_id")] == pytest.approx((0.9 + 1.0 + 0.95) / 3)
    doc_row = next(r for r in run.read("scores") if r["field"] == "__doc__")
    assert doc_row["calls"] == 4 and doc_row["unscored_prompts"] == 1


def test_reflections_asked_a_few_documents_at_a_time_keep_every_documents_scores(tmp_path):
    """``reflect --ids`` one document after another (as a study does) keeps every document's
    reflection scores; a reflection on an output since regenerated scores nothing."""
    from tests.conftest import make_run

    run = make_run(tmp_path / "run", 3)
    with ScriptedServer(ReflectingJudge()) as server:
        args = ["reflect", "--run", str(run.path), "--base-url", server.base_url, "--model", "r", "--quiet"]
        for doc in ("doc-000", "doc-001"):
            assert main([*args, "--no-cache", "--ids", doc]) == 0
        assert {r["id"] for r in run.read("scores") if r["field"] == "__doc__"} == {"doc-000", "doc-001"}
        outputs = run.read("outputs")
        outputs[1]["output"] = {**outputs[1]["output"], "total": -1}  # doc-001's output regenerated
        run.replace("outputs", outputs)
        assert main([*args, "--no-cache", "--ids", "doc-002"]) == 0
    assert {r["id"] for r in run.read("scores") if r["field"] == "__doc__"} == {"doc-000", "doc-002"}


def test_a_resumed_reflect_run_asks_failed_calls_again_and_scores_from_the_new_rows(tmp_path):
    from construct_eval.serving.scripted_server import Status
    from tests.conftest import make_run

    run = make_run(tmp_path / "run", 2)
    judge, down = ReflectingJudge(), {"now": True}
    with ScriptedServer(lambda req: Status(500) if down["now"] else judge(req)) as server:
        args = ["reflect", "--run", str(run.path), "--base-url", server.base_url, "--model", "r", "--quiet"]
        main([*args, "--no-cache", "--max-retries", "0"])
        assert all(r["reason"].startswith("request_failed") for r in run.read("reflections"))
        down["now"] = False
        assert main([*args, "--no-cache"]) == 0
        assert judge.calls == 8  # each failed call asked again, once
    assert len(run.read("reflections")) == 16
    doc_rows = [r for r in run.read("scores") if r["field"] == "__doc__"]
    assert [(r["calls"], r["unscored_prompts"]) for r in doc_rows] == [(4, 1), (4, 1)]  # the argue prompt only


def test_reflect_rerun_with_another_model_or_granularity_is_new_work_not_done_work(tmp_path):
    """Resume keys hold the whole configuration; the scores come from one configuration only."""
    from tests.conftest import make_run

    run = make_run(tmp_path / "run", 2)
    judge = ReflectingJudge()
    with ScriptedServer(judge) as server:
        base = ["reflect", "--run", str(run.path), "--base-url", server.base_url, "--quiet", "--no-cache"]
        assert main([*base, "--model", "r"]) == 0
        assert judge.calls == 8
        assert main([*base, "--model", "other"]) == 0
        assert judge.calls == 16  # another model: every call again, none skipped as done
        assert main([*base, "--model", "other", "--granularity", "leaf"]) == 0
        assert judge.calls == 24
        assert main([*base, "--model", "other", "--granularity", "leaf"]) == 0
        assert judge.calls == 24  # the same configuration again: nothing
    audit = run.read("reflections")
    assert len(audit) == 24 and len({r["key"] for r in audit}) == 24
    doc_rows = [r for r in run.read("scores") if r["field"] == "__doc__"]
    assert len(doc_rows) == 2 and all(r["calls"] == 4 for r in doc_rows)  # one configuration's 4 prompts
    fields = {r["field"] for r in run.read("scores") if r["field"] != "__doc__"}
    assert "buyer.city" in fields  # the last configuration's (leaf) fields, not a mixture


def test_legacy_reflection_rows_without_keys_count_as_done(tmp_path):
    from tests.conftest import make_run

    run = make_run(tmp_path / "run", 2)
    judge = ReflectingJudge()
    with ScriptedServer(judge) as server:
        args = ["reflect", "--run", str(run.path), "--base-url", server.base_url, "--model", "r", "--quiet"]
        assert main([*args, "--no-cache"]) == 0
        legacy = [
            {k: v for k, v in r.items() if k not in ("key", "endpoint_id", "base_url", "max_tokens")}
            for r in run.read("reflections")
        ]
        run.replace("reflections", legacy)
        assert main([*args, "--no-cache"]) == 0
        assert judge.calls == 8


# ------------------------------------------------------------------ combinations


def test_rank_average_ignores_scale_and_never_sees_labels():
    a = {("d1", "f"): 1.0, ("d2", "f"): 5.0, ("d3", "f"): 10.0}
    b = {("d1", "f"): 0.2, ("d2", "f"): 0.1, ("d3", "f"): 0.9}
    avg = combine.rank_average({"a": a, "b": b})
    assert avg == {("d1", "f"): 0.25, ("d2", "f"): 0.25, ("d3", "f"): 1.0}
    scaled = combine.rank_average({"a": {k: v * 1000 for k, v in a.items()}, "b": b})
    assert scaled == avg


def test_fitted_combination_is_out_of_fold_and_beats_each_signal_when_they_add_up():
    rng = np.random.default_rng(0)
    n = 600
    wrong = (rng.random(n) < 0.3).astype(int)
    s1 = -wrong + rng.normal(0, 1, n)
    s2 = -wrong + rng.normal(0, 1, n)
    keys = [(f"d{i // 3}", f"f{i % 3}") for i in range(n)]
    signals = {"s1": dict(zip(keys, s1, strict=True)), "s2": dict(zip(keys, s2, strict=True))}
    labels = dict(zip(keys, wrong.tolist(), strict=True))
    fitted = combine.fitted_out_of_fold(signals, labels)
    from construct_eval.stats.metrics import auroc

    y = np.array([labels[k] for k in keys])
    assert auroc(y, [fitted[k] for k in keys]) > max(auroc(y, s1), auroc(y, s2)) + 0.03
    ranked = combine.rank_average(signals)
    assert auroc(y, [ranked[k] for k in keys]) > max(auroc(y, s1), auroc(y, s2)) + 0.03


def test_combine_command_adds_label_free_and_marked_fitted_scores(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "30"]) == 0
    assert main(["label", "--run", str(run_dir)]) == 0
    run = RunDir(run_dir)
    ids = [r["id"] for r in run.read("records")]
    rng = np.random.default_rng(1)
    run.append("scores", [{"id": i, "scorer": "s1", "field": "__doc__", "score": float(rng.random())} for i in ids])
    run.append("scores", [{"id": i, "scorer": "s2", "field": "__doc__", "score": float(rng.random())} for i in ids])
    assert main(["combine", "--run", str(run_dir)]) == 0
    assert main(["evaluate", "--run", str(run_dir), "--n-boot", "100"]) == 0
    with (run_dir / "metrics" / "detection.csv").open() as fh:
        scorers = {r["scorer"] for r in csv.DictReader(fh)}
    assert {"combo:rank-mean[s1+s2]", "fitted-oof-uses-labels[s1+s2]"} <= scorers
    # a named scorer the run does not have is an error, not a smaller combination
    assert main(["combine", "--run", str(run_dir), "--scorers", "s1,s3"]) == 2


def test_combine_pairs_field_signals_of_the_same_granularity_only(tmp_path):
    """A leaf's score and its section's score are different items: never averaged together."""
    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "20"]) == 0
    assert main(["label", "--run", str(run_dir)]) == 0
    run = RunDir(run_dir)
    rng = np.random.default_rng(2)
    rows = []
    for doc in run.read("labels"):
        leaves = list(dict.fromkeys(f["path"] for f in doc["fields"]))  # a dropped item repeats its list path
        tops = sorted({p.split(".")[0].split("[")[0] for p in leaves})
        for scorer in ("s1", "s2"):
            rows += [
                {"id": doc["id"], "scorer": scorer, "field": p, "granularity": "leaf", "score": float(rng.random())}
                for p in leaves
            ]
        rows += [
            {"id": doc["id"], "scorer": "t1", "field": p, "granularity": "top", "score": float(rng.random())}
            for p in tops
        ]
    run.append("scores", rows)
    assert main(["combine", "--run", str(run_dir)]) == 0
    combos = {
        (r["scorer"], r.get("granularity")) for r in run.read("scores") if r["scorer"].startswith(("combo", "fitted"))
    }
    assert combos == {("combo:rank-mean[s1@leaf+s2@leaf]", "leaf"), ("fitted-oof-uses-labels[s1@leaf+s2@leaf]", "leaf")}
