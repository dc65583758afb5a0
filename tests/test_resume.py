"""A rerun never pays twice and never counts twice: endpoint identity, legacy keys, duplicates."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from construct_eval.data.runs import RunDir
from construct_eval.judging.judge import Judge, JudgeConfig, endpoint_from_env
from construct_eval.judging.scoring import score_run
from construct_eval.llm.client import (
    EMBEDDED_PREFIX,
    ChatRequest,
    Endpoint,
    ResponseCache,
    cache_key,
    identify,
    make_client,
    request_kwargs,
)
from construct_eval.reports.collect import DuplicateRowsWarning, collect, label_run
from construct_eval.serving.scripted_server import ScriptedServer
from tests.conftest import make_run

REPO = Path(__file__).resolve().parents[1]
IDENTITY = EMBEDDED_PREFIX + "m:sha256=abc:n_ctx=4096:llama-cpp-python=0.3.36:patches=test"
CONFIG = JudgeConfig(constrained="none", max_tokens=64)


def _score(run: RunDir, server: ScriptedServer, **kw) -> object:
    async def go():
        async with make_client(Endpoint(server.base_url, "m"), cache=False, max_retries=0) as client:
            return await score_run(run, Judge(client, CONFIG), ["doc", "field"], progress=False, **kw)

    return asyncio.run(go())


def test_cache_key_of_a_url_endpoint_is_unchanged():
    """Keys of hosted endpoints did not move: the identity of a URL endpoint is its URL."""
    ep = Endpoint("http://h/v1/", "m")
    kw = request_kwargs(ep, ChatRequest(messages=[{"role": "user", "content": "x"}]))
    old = hashlib.sha256(json.dumps({"url": "http://h/v1", "kw": kw}, sort_keys=True).encode()).hexdigest()
    assert cache_key(ep, kw) == old
    assert cache_key(Endpoint("http://127.0.0.1:1/v1", "m", endpoint_id="x"), kw) == cache_key(
        Endpoint("http://127.0.0.1:2/v1", "m", endpoint_id="x"), kw
    )


def test_embedded_server_restarted_on_another_port_resumes_with_zero_calls(tmp_path):
    run = make_run(tmp_path / "run", 3)
    with ScriptedServer(info={"identity": IDENTITY, "slots": 1}) as first:
        s1 = _score(run, first)
        assert s1.calls_made > 0 and s1.judgments_written == s1.calls_made
    with ScriptedServer(info={"identity": IDENTITY, "slots": 1}) as second:
        assert second.port != first.port
        s2 = _score(run, second)
        assert len(second.requests) == 0
    assert s2.calls_made == 0 and s2.judgments_written == 0 and s2.tasks_skipped_done == s1.tasks_planned
    rows = run.read("judgments")
    assert len(rows) == s1.judgments_written
    assert {r["endpoint_id"] for r in rows} == {IDENTITY}


def test_a_plain_server_on_another_port_is_another_endpoint_unless_named(tmp_path):
    run = make_run(tmp_path / "run", 2)
    with ScriptedServer() as a:
        first = _score(run, a)
    with ScriptedServer() as b:
        again = _score(run, b)  # a URL is the identity of a server that does not report one
    assert again.calls_made == first.calls_made

    named = make_run(tmp_path / "named", 2)

    def go(server: ScriptedServer):
        async def inner():
            ep = Endpoint(server.base_url, "m", endpoint_id="my-vllm-pod")
            async with make_client(ep, cache=False) as client:
                return await score_run(named, Judge(client, CONFIG), ["doc"], progress=False)

        return asyncio.run(inner())

    with ScriptedServer() as a:
        assert go(a).calls_made == 2
    with ScriptedServer() as b:
        assert go(b).calls_made == 0


def test_legacy_port_keyed_judgments_count_as_done_for_the_embedded_server(tmp_path):
    """Rows written before identities (keyed on http://127.0.0.1:PORT/v1) resume under the new key."""
    run = make_run(tmp_path / "run", 2)
    with ScriptedServer() as old:  # no identity: keys are made of the URL, as before
        made = _score(run, old)
    legacy = run.read("judgments")
    for r in legacy:  # what a row looked like before it carried an identity
        r.pop("endpoint_id")
        r.pop("config_hash")
    run.replace("judgments", legacy)
    with ScriptedServer(info={"identity": IDENTITY, "slots": 1}) as new:
        again = _score(run, new)
        assert len(new.requests) == 0
    assert again.tasks_skipped_done == made.tasks_planned and again.judgments_written == 0


def test_legacy_rows_of_another_configuration_are_not_done(tmp_path):
    run = make_run(tmp_path / "run", 2)
    with ScriptedServer() as old:
        _score(run, old)
    legacy = run.read("judgments")
    for r in legacy:
        r.pop("endpoint_id")
    run.replace("judgments", legacy)

    async def go(server):
        async with make_client(Endpoint(server.base_url, "m"), cache=False) as client:
            other = JudgeConfig(constrained="none", max_tokens=65)
            return await score_run(run, Judge(client, other), ["doc"], progress=False)

    with ScriptedServer(info={"identity": IDENTITY, "slots": 1}) as new:
        assert asyncio.run(go(new)).calls_made == 2


def test_progress_total_is_known_before_the_first_call(tmp_path, monkeypatch):
    import construct_eval.llm.engine as engine

    totals = []
    real = engine.progress_bar

    def spy(total, enabled, desc, unit="call"):
        totals.append(total)
        return real(total, False, desc, unit)

    monkeypatch.setattr(engine, "progress_bar", spy)
    run = make_run(tmp_path / "run", 4)
    with ScriptedServer() as server:
        summary = _score(run, server)
    assert totals == [summary.calls_made] and summary.calls_made == 4 * 5  # doc + 4 top-level fields each


def test_duplicate_judgments_count_once_with_a_warning(tmp_path):
    run = make_run(tmp_path / "run", 4)
    truth = {r["id"]: r["output"] for r in run.read("outputs")}
    run.replace("records", [{**r, "ground_truth": truth[r["id"]]} for r in run.read("records")])
    label_run(run)
    with ScriptedServer() as server:
        _score(run, server)
    rows = run.read("judgments")
    n_doc = sum(r["mode"] == "doc" for r in rows)
    run.append("judgments", [dict(r, base_url="http://127.0.0.1:9/v1", key="other-" + r["key"]) for r in rows])
    with pytest.warns(DuplicateRowsWarning, match=rf"{len(rows) - n_doc} row"):
        items = {i.key: i for i in collect(run)}
    doc = items["document:judge-doc"]
    assert doc.n + doc.unscored == n_doc == 4
    assert doc.duplicates_dropped == n_doc
    field = items["field:judge-field"]
    assert field.n + field.unscored + field.unlabelled == 16


def test_scores_and_labels_duplicates_are_dropped_too(tmp_path):
    run = make_run(tmp_path / "run", 3)
    truth = {r["id"]: r["output"] for r in run.read("outputs")}
    run.replace("records", [{**r, "ground_truth": truth[r["id"]]} for r in run.read("records")])
    label_run(run)
    run.append("labels", run.read("labels")[:1])
    rows = [{"id": f"doc-{i:03d}", "scorer": "s", "field": "__doc__", "score": 0.5} for i in range(3)]
    run.replace("scores", rows + rows[:2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        items = {i.key: i for i in collect(run)}
    assert items["document:s"].n == 3 and items["document:s"].duplicates_dropped == 2
    assert sum(issubclass(w.category, DuplicateRowsWarning) for w in caught) == 2  # labels and scores


def test_cache_is_private_and_tightened_on_open(tmp_path):
    folder = tmp_path / "c"
    cache = ResponseCache(folder / "responses.sqlite")
    from construct_eval.llm.client import ChatResult

    cache.put("k", ChatResult(text="x"))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = list(folder.iterdir())
    assert {f.name for f in files} >= {"responses.sqlite", "responses.sqlite-wal", "responses.sqlite-shm"}
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files), [(f.name, oct(f.stat().st_mode)) for f in files]
    cache.close()
    for f in [folder, *folder.iterdir()]:
        os.chmod(f, 0o755 if f.is_dir() else 0o644)
    ResponseCache(folder / "responses.sqlite").close()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in folder.iterdir())


def test_cache_command_reports_and_clears(tmp_path):
    from construct_eval.cli import main
    from construct_eval.llm.client import ChatResult

    path = tmp_path / "c" / "r.sqlite"
    cache = ResponseCache(path)
    cache.put("a", ChatResult(text="x"))
    cache.close()
    assert main(["cache", "--cache", str(path)]) == 0
    assert main(["cache", "--cache", str(path), "--clear"]) == 0
    assert len(ResponseCache(path)) == 0


def test_make_client_defaults_follow_the_server(tmp_path):
    with ScriptedServer(info={"identity": IDENTITY, "slots": 1}) as server:
        client = make_client(Endpoint(server.base_url, "m", backend="llamacpp"), cache=False)
        assert client.endpoint.identity == IDENTITY and client.concurrency == 1 and client.timeout_s == 1800
    with ScriptedServer() as server:
        client = make_client(Endpoint(server.base_url, "m"), cache=False)
        assert client.endpoint.identity == server.base_url and client.concurrency == 4 and client.timeout_s == 120
        assert make_client(Endpoint(server.base_url, "m"), cache=False, concurrency=7).concurrency == 7


def test_identify_keeps_an_explicit_id_and_skips_hosted_apis():
    ep = Endpoint("http://127.0.0.1:9/v1", "m", endpoint_id="mine")
    assert identify(ep) is ep
    hosted = Endpoint("https://api.openai.com/v1", "gpt")
    assert identify(hosted) is hosted


def test_explicit_backend_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv("CONSTRUCT_EVAL_BACKEND", "llamacpp")
    assert endpoint_from_env("http://h/v1", "m", backend="generic").backend == "generic"
    assert endpoint_from_env("http://h/v1", "m").backend == "llamacpp"


def test_run_json_keeps_every_judge_configuration(tmp_path):
    run = make_run(tmp_path / "run", 2)
    with ScriptedServer() as server:

        async def go(variant: str):
            from construct_eval.judging.prompts import PromptVariant

            async with make_client(Endpoint(server.base_url, "m"), cache=False) as client:
                cfg = JudgeConfig(constrained="none", variant=PromptVariant.parse(variant))
                return await score_run(run, Judge(client, cfg), ["doc"], progress=False)

        for v in ("default", "reversed", "o-s-r"):
            asyncio.run(go(v))
    history = run.meta()["judges"]
    assert len(history) == 3
    assert {h["config"]["variant"] for h in history} == {
        "sec:r-s-o|fields:original",
        "sec:r-s-o|fields:reversed",
        "sec:o-s-r|fields:original",
    }
    hashes = {r["config_hash"] for r in run.read("judgments")}
    assert hashes == {h["config_hash"] for h in history}


def test_demo_writes_only_to_an_ignored_folder_by_default():
    """`make demo` leaves a clone's tracked files alone: its default folder is ignored by git."""
    from construct_eval.demo import main as demo_main  # noqa: F401  (the default is read from its parser)

    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    proc = subprocess.run(
        [sys.executable, "-m", "construct_eval.demo", "--help"], capture_output=True, text=True, cwd=REPO
    )
    assert "default runs/demo" in proc.stdout
    ignored = subprocess.run(["git", "check-ignore", "-q", "runs/demo/generated/outputs.jsonl"], cwd=REPO)
    assert ignored.returncode == 0
    assert "--out runs/demo" in (REPO / "Makefile").read_text()


def test_offline_run_without_data_dir_says_which_flag_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run = RunDir(tmp_path / "run")
    run.append("records", [{"id": "insurance_claims-00000", "text_hash": "x"}])
    run.write_meta("dataset", {"source": {"kind": "cleanlab", "name": "insurance_claims", "hf_repo": "Cleanlab/x"}})
    from construct_eval.data.runs import RunError

    with pytest.raises(RunError, match=r"run.*insurance_claims.*--data-dir"):
        run.records()


def test_recomputing_derived_scores_leaves_scores_jsonl_byte_identical(tmp_path):
    run = RunDir(tmp_path / "run")
    rows = {
        name: [{"id": f"d{i}", "scorer": name, "field": "__doc__", "score": i / 10} for i in range(3)]
        for name in ("a", "b", "c")
    }
    for name in ("a", "b", "c"):
        run.replace_scorers(rows[name], {name})
    first = run.file("scores").read_bytes()
    run.replace_scorers(rows["a"], {"a"})  # a rerun that finds the same values
    assert run.file("scores").read_bytes() == first
    run.replace_scorers([{**r, "score": 0.9} for r in rows["b"]], {"b"})
    assert [r["scorer"] for r in run.iter_rows("scores")] == ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    assert {r["score"] for r in run.iter_rows("scores") if r["scorer"] == "b"} == {0.9}
    run.replace_scorers(rows["c"][:1], {"c", "d"})  # fewer rows, and a scorer not there yet
    assert len(run.read("scores")) == 7
