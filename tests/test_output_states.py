"""A request that failed is not a wrong output: parsed, unparsed and not-generated kept apart."""

from __future__ import annotations

import json

from construct_eval.cli import main
from construct_eval.data.datasets import load_dataset
from construct_eval.data.labels import LabelRules, label_output, label_summary, output_state
from construct_eval.data.runs import RunDir
from construct_eval.reports.run_analyses import evaluate_run
from construct_eval.serving.scripted_server import Reply, ScriptedServer, Status


def test_output_state_reads_old_rows_by_their_error():
    assert output_state({"id": "a", "output": {}}) == "parsed"
    assert output_state({"id": "a", "parse_error": "truncated: the reply hit max_tokens"}) == "unparsed"
    assert output_state({"id": "a", "parse_error": "invalid_json: x"}) == "unparsed"
    assert output_state({"id": "a", "parse_error": "request_failed: http_400: context"}) == "not_generated"
    assert output_state({"id": "a", "parse_error": "x", "state": "not_generated"}) == "not_generated"


def test_not_generated_documents_are_out_of_every_rate():
    truth = {"a": "x", "b": None}
    rules = LabelRules()
    right = label_output("d1", truth, {"a": "x", "b": None}, rules=rules)
    unparsed = label_output("d2", truth, None, rules=rules, parse_failed=True)
    missing = label_output("d3", truth, None, rules=rules, not_generated="request_failed: http_400: too long")
    assert missing.wrong is None and missing.fields == []
    assert unparsed.wrong is True
    s = label_summary([right, unparsed, missing])
    assert s["documents"] == 2 and s["documents_wrong"] == 1 and s["document_error_rate"] == 0.5
    assert s["not_generated"] == 1 and s["not_generated_reasons"] == {"request_failed": 1}
    assert s["fields"] == 4 and s["fields_wrong"] == 2
    # non-null truth: the unparsed output's null-truth leaf is not among them
    assert s["nonnull_fields"] == 2 and s["nonnull_fields_wrong"] == 1 and s["nonnull_field_error_rate"] == 0.5


def test_a_refused_request_is_counted_apart_end_to_end(tmp_path, capsys):
    """The user's story: a document too long for the context is refused (HTTP 400)."""
    ds = load_dataset("synthetic", n=3, seed=5)
    long_text = ds.records[0].text

    def script(req):
        user = req.body["messages"][-1]["content"]
        if long_text in user:
            return Status(400, message="requested 7696 tokens, 4096 allowed")
        rec = next(r for r in ds.records if r.text in user)
        return Reply(json.dumps(rec.ground_truth))

    run_dir = tmp_path / "run"
    with ScriptedServer(script) as server:
        args = ["generate", "--run", str(run_dir), "--dataset", "synthetic", "--n", "3", "--seed", "5"]
        assert main([*args, "--base-url", server.base_url, "--model", "g", "--quiet", "--no-cache"]) == 0
    rows = RunDir(run_dir).read("outputs")
    assert sorted(r["state"] for r in rows) == ["not_generated", "parsed", "parsed"]
    capsys.readouterr()
    assert main(["label", "--run", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "2 documents: 0 wrong (0.0%), 0 unparsed" in out
    assert "1 more documents were not generated (request_failed: 1)" in out
    run = RunDir(run_dir)
    run.replace_scorers([{"id": r.id, "scorer": "s", "field": "__doc__", "score": 0.5} for r in ds.records[1:]], {"s"})
    report = evaluate_run(run, None, n_boot=50)
    assert report["not_generated"] == {"request_failed": 1} and report["unparsed"] == 0
    assert (
        "1 documents not generated (request_failed 1) are left out"
        in (run.path / "metrics" / "detection.md").read_text()
    )


def test_failed_judge_requests_are_not_unscored_replies(tmp_path):
    from construct_eval.reports.collect import collect, label_run
    from tests.conftest import make_run

    run = make_run(tmp_path / "run", 4)
    truth = {r["id"]: r["output"] for r in run.read("outputs")}
    run.replace("records", [{**r, "ground_truth": truth[r["id"]]} for r in run.read("records")])
    label_run(run)
    base = {"mode": "doc", "field": "__doc__", "variant": "sec:r-s-o|fields:original", "call_id": "c"}
    run.append(
        "judgments",
        [
            {**base, "doc_id": "doc-000", "status": "ok", "rating": 7, "reason": None, "call_id": "1"},
            {**base, "doc_id": "doc-001", "status": "unscored", "rating": None, "reason": "no_rating", "call_id": "2"},
            {
                **base,
                "doc_id": "doc-002",
                "status": "unscored",
                "rating": None,
                "reason": "request_failed",
                "call_id": "3",
            },
        ],
    )
    doc = next(i for i in collect(run) if i.scorer == "judge-doc")
    assert (doc.n, doc.unscored, doc.failed) == (1, 1, 1)


def _quarter(text: str) -> int:
    return len(text) // 4


def test_long_document_policy_skips_or_truncates_and_says_so():
    from construct_eval.llm.prompt_size import LongDocumentPolicy

    text = "x" * 400  # 100 "tokens"
    assert LongDocumentPolicy(200).apply(text, _quarter) == (text, None)
    skipped, note = LongDocumentPolicy(50).apply(text, _quarter)
    assert skipped is None and note == {"policy": "skip", "document_tokens": 100, "max_document_tokens": 50}
    kept, note = LongDocumentPolicy(50, "truncate").apply(text, _quarter)
    assert kept == "x" * 203 and _quarter(kept) == 50 and note["kept_characters"] == 203


def _generate(tmp_path, server, *extra):
    args = ["generate", "--run", str(tmp_path / "run"), "--dataset", "synthetic", "--n", "3", "--seed", "5"]
    return main([*args, "--base-url", server.base_url, "--model", "g", "--quiet", "--no-cache", *extra])


def test_a_prompt_that_cannot_fit_is_reported_at_once_and_not_sent(tmp_path, capsys):
    ds = load_dataset("synthetic", n=3, seed=5)
    sizes = sorted(len(r.text) for r in ds.records)

    def script(req):
        rec = next(r for r in ds.records if r.text in req.body["messages"][-1]["content"])
        return Reply(json.dumps(rec.ground_truth))

    longest = max(ds.records, key=lambda r: len(r.text))
    # a context that fits every prompt but the longest one (estimated at 4 characters a token)
    system = len(ds.generator_messages(longest)[0]["content"])
    limit = (system + (sizes[-1] + sizes[-2]) // 2) // 4 + 20 + 100
    with ScriptedServer(script) as server:
        assert _generate(tmp_path, server, "--max-context", str(limit), "--max-tokens", "100") == 0
        sent = [r.body["messages"][-1]["content"] for r in server.requests]
    out = capsys.readouterr().out
    assert f"not sent: document {longest.id!r}: not_sent: prompt" in out and "(estimated)" in out
    assert not any(longest.text in s for s in sent) and len(sent) == 2
    rows = RunDir(tmp_path / "run").read("outputs")
    assert [r["state"] for r in rows if r["id"] == longest.id] == ["not_generated"]
    # a rerun with room retries what was not generated; the latest row is the document's output
    with ScriptedServer(script) as server:
        assert _generate(tmp_path, server, "--max-tokens", "100") == 0
        assert len(server.requests) == 1
    run = RunDir(tmp_path / "run")
    assert sorted(r["state"] for r in run.outputs()) == ["parsed"] * 3
    assert main(["label", "--run", str(run.path)]) == 0
    assert "3 documents: 0 wrong" in capsys.readouterr().out


def test_truncated_documents_are_recorded_on_their_row(tmp_path):
    ds = load_dataset("synthetic", n=3, seed=5)

    def script(req):
        return Reply(json.dumps(ds.records[0].ground_truth))

    with ScriptedServer(script) as server:
        assert _generate(tmp_path, server, "--max-document-tokens", "40", "--long-documents", "truncate") == 0
        sent = [r.body["messages"][-1]["content"] for r in server.requests]
    rows = RunDir(tmp_path / "run").read("outputs")
    notes = [r["document_truncated"] for r in rows]
    assert all(n["policy"] == "truncate" and n["max_document_tokens"] == 40 for n in notes)
    assert all(r.text[:100] in "".join(sent) and r.text not in "".join(sent) for r in ds.records)


def test_non_null_truth_leaves_out_sections_and_items_only_the_output_has():
    truth = {"a": "x", "sec": None, "items": [{"k": 1}]}
    out = {"a": "x", "sec": {"p": 1, "q": 2}, "items": [{"k": 1}, {"k": 9}]}
    lab = label_output("d", truth, out, rules=LabelRules())
    reasons = sorted(f.reason for f in lab.fields if f.wrong)
    assert reasons == ["extra_item", "invented_section", "invented_section"]
    s = label_summary([lab])
    assert s["nonnull_fields"] == 2 and s["nonnull_fields_wrong"] == 0  # "a" and items[0].k
