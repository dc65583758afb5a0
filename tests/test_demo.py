"""The demo pipeline end to end over real HTTP (scripted server standing in for the local model)."""

from __future__ import annotations

import json

from construct_eval.demo import main
from construct_eval.scripted_server import Reply, ScriptedServer, default_judge


def generator_or_judge(req):
    """Generation requests (the synthetic system prompt) get a JSON object; judge requests a rating."""
    system = req.body["messages"][0]["content"]
    if system.startswith("You extract structured data"):
        text = json.dumps({"invoice_number": "INV-0"})
        return Reply(text, logprobs=[{"token": c, "logprob": -0.1, "top_logprobs": []} for c in text])
    return default_judge(req)


def test_demo_writes_report_with_every_stage(tmp_path):
    out = tmp_path / "demo"
    with ScriptedServer(generator_or_judge) as server:
        argv = ["--out", str(out), "--base-url", server.base_url, "--model", "scripted", "--n", "6"]
        assert main([*argv, "--controlled", "20"]) == 0
        assert main([*argv, "--controlled", "20"]) == 0  # a rerun resumes: nothing is judged twice
    report = (out / "report.md").read_text()
    for heading in ("generated: error detection", "controlled: error detection", "Positional bias"):
        assert heading in report
    judgments = [json.loads(line) for line in (out / "controlled" / "judgments.jsonl").read_text().splitlines()]
    keys = [j["key"] for j in judgments]
    assert len(keys) == len(set(keys))
    assert {j["mode"] for j in judgments} == {"doc", "field"}
    assert {j["constrained"] for j in judgments} == {"none"}  # a generic backend takes no grammar
    assert len({j["variant"] for j in judgments if j["mode"] == "doc"}) == 2
    labels = [json.loads(line) for line in (out / "controlled" / "labels.jsonl").read_text().splitlines()]
    assert sum(r["wrong"] for r in labels) == 5  # 25% of 20
    assert (out / "controlled" / "figures" / "roc_document.png").exists() and "![roc_document]" in report
    assert (out / "generated" / "scores.jsonl").read_text().count("token_logprob") >= 6
