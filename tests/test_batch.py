"""Offline judging through batch files: export the calls, run them elsewhere, import the replies.

The results files are written in the documented output formats of OpenAI's Batch API and of
vLLM's ``run-batch``, with the replies the scripted judge gives live, so a batch import must
give the same judgments as a live run (apart from ``via`` and the reply's model)."""

from __future__ import annotations

import json

import pytest

from construct_eval.cli import main
from construct_eval.llm.batch_api import reply_of
from construct_eval.serving.scripted_server import (
    Reply,
    Request,
    ScriptedServer,
    completion_body,
    default_judge,
    messages_hash,
)

COMPARE = ("key", "doc_id", "field", "mode", "status", "reason", "rating", "expected_rating", "output_hash")


def _run(tmp_path, name):
    run_dir = tmp_path / name
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "5", "--error-seed", "3"]) == 0
    return run_dir


def _rows(run_dir):
    path = run_dir / "judgments.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _results(requests_path, *, vllm: bool, fail: int | None = None):
    """What a batch runner writes back: one line per request, the scripted judge's reply."""
    out = []
    for i, line in enumerate(json.loads(x) for x in requests_path.read_text().splitlines()):
        action = default_judge(Request(line["url"], line["body"], 1, messages_hash(line["body"]["messages"])))
        assert isinstance(action, Reply)
        body = completion_body(line["body"], action) | {"model": "m-2026-11", "system_fingerprint": "fp_1"}
        if vllm:  # vLLM run-batch: id "vllm-...", request_id "vllm-batch-...", error null
            row = {
                "id": f"vllm-{i}",
                "custom_id": line["custom_id"],
                "response": {"status_code": 200, "request_id": f"vllm-batch-{i}", "body": body},
                "error": None,
            }
        else:  # OpenAI Batch API output file
            row = {
                "id": f"batch_req_{i}",
                "custom_id": line["custom_id"],
                "response": {"status_code": 200, "request_id": f"req_{i}", "body": body},
                "error": None,
            }
        if i == fail:
            row = {
                "id": f"batch_req_{i}",
                "custom_id": line["custom_id"],
                "response": None,
                "error": {"code": "server_error", "message": "the runner failed this line"},
            }
        out.append(row)  # fmt: skip
    path = requests_path.with_name(requests_path.stem + ("-vllm" if vllm else "-openai") + ".results.jsonl")
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    return path


@pytest.mark.parametrize("vllm", [False, True], ids=["openai", "vllm"])
def test_a_batch_import_gives_the_live_judgments_and_resumes_what_failed(tmp_path, capsys, vllm):
    live, offline = _run(tmp_path, "live"), _run(tmp_path, "offline")
    with ScriptedServer() as server:
        opts = ["--mode", "doc,fields", "--base-url", server.base_url, "--model", "m", "--backend", "generic"]
        opts += ["--constrained", "none", "--endpoint-id", "the-endpoint", "--quiet", "--no-cache"]
        assert main(["score", "--run", str(live), *opts]) == 0
        live_calls = len(server.requests)
        requests = tmp_path / "requests.jsonl"
        assert main(["batch", "export", "--run", str(offline), "--out", str(requests), *opts]) == 0
        assert len(server.requests) == live_calls, "exporting calls nothing"
        lines = [json.loads(x) for x in requests.read_text().splitlines()]
        assert len(lines) == live_calls and len({x["custom_id"] for x in lines}) == live_calls
        assert all(x["url"] == "/v1/chat/completions" and x["body"]["messages"] for x in lines)

        results = _results(requests, vllm=vllm, fail=2)
        capsys.readouterr()
        assert main(["batch", "import", "--run", str(offline), "--results", str(results), *opts]) == 0
        out = capsys.readouterr().out
        assert "1 lines failed" in out and "the runner failed this line" in out
        assert len(_rows(offline)) == len(_rows(live)) - 1
        assert main(["batch", "import", "--run", str(offline), "--results", str(results), *opts]) == 0
        assert len(_rows(offline)) == len(_rows(live)) - 1, "importing twice writes nothing twice"

        before = len(server.requests)
        assert main(["score", "--run", str(offline), *opts]) == 0  # the failed line, live
        assert len(server.requests) == before + 1
    by_key = {r["key"]: r for r in _rows(live)}
    batch_rows = [r for r in _rows(offline) if r.get("via") == "batch"]
    assert len(batch_rows) == len(_rows(live)) - 1
    for r in _rows(offline):
        assert {k: r[k] for k in COMPARE} == {k: by_key[r["key"]][k] for k in COMPARE}
    assert all(r["reply_model"] == "m-2026-11" and r["system_fingerprint"] == "fp_1" for r in batch_rows)
    assert "via" not in _rows(live)[0], "live rows are as they were"


def test_error_lines_in_both_formats_say_why():
    assert reply_of({"response": None, "error": {"code": "expired", "message": "batch expired"}}) == (
        None,
        "expired: batch expired",
    )
    vllm_error = {"status_code": 400, "body": {"object": "error", "message": "bad request", "code": 400}}
    assert reply_of({"response": vllm_error, "error": None}) == (None, "http_400: bad request")
    openai_error = {"status_code": 429, "body": {"error": {"message": "rate limited"}}}
    assert reply_of({"response": openai_error, "error": None}) == (None, "http_429: rate limited")
    ok = {"status_code": 200, "body": {"choices": [{"message": {"content": "Rating: [[7]]"}}]}}
    assert reply_of({"response": ok})[1] is None


def _opts(server, *extra):
    opts = ["--mode", "doc,fields", "--base-url", server.base_url, "--model", "m", "--backend", "generic"]
    return [*opts, "--constrained", "none", "--quiet", "--no-cache", "--batch-poll", "0.01", *extra]


def _planned(run_dir, server):
    """How many judgments a full live run of the same documents writes (a fresh copy of the run)."""
    assert main(["score", "--run", str(run_dir), *_opts(server)]) == 0
    return len(_rows(run_dir))


def test_score_batch_submits_polls_and_imports_through_the_batch_api(tmp_path, capsys):
    from construct_eval.serving.scripted_server import BatchAPI

    run_dir, twin = _run(tmp_path, "batch"), _run(tmp_path, "twin")
    api = BatchAPI(default_judge, fail_line=lambda i: i == 1)
    with ScriptedServer(batch=api) as server:
        want = _planned(twin, server)
        live_calls = len(server.requests)
        assert main(["score", "--run", str(run_dir), "--batch", *_opts(server)]) == 0
        out = capsys.readouterr().out
        assert api.created == 1 and len(server.requests) == live_calls, "one batch, no live call"
        assert "1 lines failed" in out and "scripted failure" in out
        assert len(_rows(run_dir)) == want - 1 and all(r["via"] == "batch" for r in _rows(run_dir))
        # the failed line: resubmitted by a rerun, alone in a new batch; nothing else again
        assert main(["score", "--run", str(run_dir), "--batch", *_opts(server)]) == 0
        assert api.created == 2 and api.batches["batch_2"]["request_counts"]["total"] == 1
        calls = len(server.requests)
        assert main(["score", "--run", str(run_dir), "--batch", "--batch-fallback", "live", *_opts(server)]) == 0
        assert api.created == 2 and len(server.requests) == calls, "nothing left to submit or call"
    keys = [r["key"] for r in _rows(run_dir)]
    assert len(keys) == want == len(set(keys))


def test_batches_respect_the_line_limit(tmp_path):
    from construct_eval.data.runs import RunDir
    from construct_eval.judging.batch import JudgeWork
    from construct_eval.judging.judge import Judge, JudgeConfig
    from construct_eval.llm.batch_api import batches_of, run_batches
    from construct_eval.llm.client import Endpoint, make_client

    run_dir = _run(tmp_path, "split")
    with ScriptedServer() as server:
        judge = Judge(make_client(Endpoint(server.base_url, "m", backend="generic"), identify_server=False,
                                  cache=False), JudgeConfig(constrained="none"))  # fmt: skip
        run = RunDir(run_dir, create=False)
        report = run_batches(run, JudgeWork(run, judge, ["doc"]), poll_s=0.0, progress=False, max_lines=2)
        assert report.submitted == 3 and server.batch.created == 3  # 5 documents, 2 lines a batch
        assert all(len(b["custom_ids"]) <= 2 for b in batches_of(RunDir(run_dir)).values())
    assert len(_rows(run_dir)) == 5


def test_an_expired_batch_leaves_its_undone_lines_for_the_live_fallback(tmp_path, capsys):
    from construct_eval.serving.scripted_server import BatchAPI

    run_dir, twin = _run(tmp_path, "expiring"), _run(tmp_path, "twin")
    api = BatchAPI(default_judge, expire_after=2)
    with ScriptedServer(batch=api) as server:
        want = _planned(twin, server)
        assert main(["score", "--run", str(run_dir), "--batch", "--batch-fallback", "live", *_opts(server)]) == 0
        out = capsys.readouterr().out
    assert "batch_expired" in out and "expired" in out
    keys = [r["key"] for r in _rows(run_dir)]
    assert len(keys) == want == len(set(keys))
    assert {r.get("via") for r in _rows(run_dir)} == {"batch", None}


@pytest.mark.slow
def test_a_killed_batch_run_resumes_polling_the_same_batch(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from construct_eval.serving.scripted_server import BatchAPI

    run_dir, twin = _run(tmp_path, "killed"), _run(tmp_path, "twin")
    api = BatchAPI(default_judge)
    with ScriptedServer(batch=api) as server:
        want = _planned(twin, server)
        api.hold = True  # the batch stays in progress while the client is killed
        env = {**os.environ, "PYTHONWARNINGS": "ignore"}
        argv = [sys.executable, "-m", "construct_eval.cli", "score", "--run", str(run_dir), "--batch", *_opts(server)]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while '"batch_id"' not in (
            (run_dir / "batches.jsonl").read_text() if (run_dir / "batches.jsonl").exists() else ""
        ):
            assert time.time() < deadline and proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.2)  # polling
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert api.created == 1 and not _rows(run_dir)
        api.hold = False
        assert main(["score", "--run", str(run_dir), "--batch", *_opts(server)]) == 0
        assert api.created == 1, "the rerun polled the batch it found; it submitted none"
    keys = [r["key"] for r in _rows(run_dir)]
    assert len(keys) == want == len(set(keys))


def test_a_failed_batch_lists_its_lines_and_leaves_them_for_a_rerun(tmp_path, capsys):
    from construct_eval.serving.scripted_server import BatchAPI

    run_dir = _run(tmp_path, "failing")
    api = BatchAPI(default_judge, fail_validation=True)
    with ScriptedServer(batch=api) as server:
        assert main(["score", "--run", str(run_dir), "--batch", *_opts(server)]) == 0
        out = capsys.readouterr().out
        assert "batch failed (invalid_request: scripted validation failure)" in out and not _rows(run_dir)
        api.fail_validation = False
        assert main(["score", "--run", str(run_dir), "--batch", *_opts(server)]) == 0  # resubmitted, done
    keys = [r["key"] for r in _rows(run_dir)]
    assert keys and len(keys) == len(set(keys)) and api.created == 2


def test_reflect_and_verdict_through_the_batch_api(tmp_path, capsys):
    run_dir = _run(tmp_path, "stages")
    with ScriptedServer() as server:
        opts = ["--run", str(run_dir), "--base-url", server.base_url, "--model", "m", "--backend", "generic"]
        opts += ["--quiet", "--no-cache", "--batch", "--batch-poll", "0.01"]
        assert main(["reflect", *opts]) == 0
        assert main(["verdict", *opts, "--mode", "doc"]) == 0
        assert not server.requests, "no live call"
        assert server.batch.created == 2
        assert main(["verdict", *opts, "--mode", "doc"]) == 0  # all done: no new batch
        assert server.batch.created == 2
    for name, per_doc in (("reflections", None), ("verdicts", 1)):
        rows = [json.loads(x) for x in (run_dir / f"{name}.jsonl").read_text().splitlines()]
        assert rows and all(r["via"] == "batch" for r in rows) and len({r["key"] for r in rows}) == len(rows)
        if per_doc:
            assert len(rows) == 5
    scores = [json.loads(x) for x in (run_dir / "scores.jsonl").read_text().splitlines()]
    assert {"reflection", "p-correct"} <= {r["scorer"] for r in scores}
