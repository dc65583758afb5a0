"""One writer per run folder: a second writer is refused (or waits), a killed holder frees the run.

The writers are real processes: ``construct-eval`` commands started with ``subprocess`` against
the scripted server, or a small holder process that takes the lock and waits. The server holds
the first writer's first call until the second writer has been refused (or has said it waits),
so the two overlap for certain, not by timing luck.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from construct_eval.cli import build_parser, main
from construct_eval.cli.common import LOCKED_BY, Writes, written_folder
from construct_eval.data import runs as runs_module
from construct_eval.data.runs import RunDir
from construct_eval.runlock import EXIT_LOCKED, LOCK_NAME, RunLock, RunLocked, read_holder
from construct_eval.serving.scripted_server import Reply, ScriptedServer, default_judge
from tests.conftest import env_without_proxy, make_run

HOLD = (
    "import sys\n"
    "from construct_eval.runlock import RunLock\n"
    "RunLock(sys.argv[1], 'holder-for-test').acquire()\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
)


class Holder:
    """Another process holding a run's lock until it is stopped or killed."""

    def __init__(self, folder: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout.readline().strip() == "held"

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(10)


@pytest.fixture
def holder_of():
    held: list[Holder] = []

    def start(folder: Path) -> Holder:
        held.append(Holder(folder))
        return held[-1]

    yield start
    for h in held:
        if h.proc.poll() is None:
            h.kill()


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and p.name != LOCK_NAME}


# -- the lock itself ------------------------------------------------------------------------


def test_the_lock_file_names_its_holder_and_a_second_process_is_refused_with_it(tmp_path, holder_of):
    run = make_run(tmp_path / "run", 1)
    holder = holder_of(run.path)
    said = read_holder(run.path)
    assert said.pid == holder.proc.pid and said.command == "holder-for-test"
    assert said.host == socket.gethostname() and said.since.endswith("Z")
    started = time.monotonic()
    with pytest.raises(RunLocked) as refused:
        RunLock(run.path, "second").acquire()
    assert time.monotonic() - started < 1.0, "no wait without wait="
    message = str(refused.value)
    assert f"pid {holder.proc.pid}" in message and "holder-for-test" in message and "--wait" in message
    with pytest.raises(RunLocked, match=r"waited 0\.\d s"):
        RunLock(run.path).acquire(wait=0.3)


def test_a_killed_holder_frees_the_run_at_once(tmp_path, holder_of):
    run = make_run(tmp_path / "run", 1)
    holder = holder_of(run.path)
    holder.kill()  # kill -9: no cleanup runs, the kernel closes its files
    started = time.monotonic()
    with RunLock(run.path, "next") as lock:
        assert lock.held and read_holder(run.path).pid == os.getpid()
    assert time.monotonic() - started < 1.0
    assert read_holder(run.path) is None, "a free run names no holder"


def test_a_waiting_writer_gets_the_lock_when_the_holder_ends(tmp_path, holder_of):
    run = make_run(tmp_path / "run", 1)
    holder = holder_of(run.path)
    told: list[RunLocked] = []
    threading.Timer(0.3, holder.stop).start()
    lock = RunLock(run.path, "waiter").acquire(wait=True, on_wait=told.append)
    try:
        assert [t.holder.pid for t in told] == [holder.proc.pid], "told once who it waits for"
        assert read_holder(run.path).command == "waiter"
    finally:
        lock.release()


def test_the_lock_is_reentrant_within_a_process(tmp_path):
    run = make_run(tmp_path / "run", 2)
    with run.lock("outer"), run.lock("inner"):
        run.append("extra", [{"id": "doc-000"}])  # a write under the held lock takes it again
        assert read_holder(run.path).command == "outer"
    assert read_holder(run.path) is None


def test_a_write_while_another_process_holds_the_run_is_refused_and_writes_nothing(tmp_path, holder_of, monkeypatch):
    monkeypatch.setattr(runs_module, "WRITE_WAIT_S", 0.2)
    run = make_run(tmp_path / "run", 2)
    run.append("scores", [{"id": "doc-000", "field": "__doc__", "scorer": "a", "score": 0.5}])
    before = _snapshot(run.path)
    holder_of(run.path)
    with pytest.raises(RunLocked):
        run.append("judgments", [{"doc_id": "doc-000"}])
    with pytest.raises(RunLocked):
        run.replace_scorers([{"id": "doc-000", "field": "__doc__", "scorer": "b", "score": 0.1}], {"b"})
    with pytest.raises(RunLocked):
        run.write_meta("x", 1)
    assert _snapshot(run.path) == before
    assert run.read("scores")  # reading needs no lock


def _leaf_parsers():
    """(name, parser) of every command the parser offers, a subcommand as ``batch import``."""
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        nested = [a for a in p._actions if a.__class__.__name__ == "_SubParsersAction"]
        yield from ((f"{name} {n}", q) for n, q in nested[0].choices.items()) if nested else [(name, p)]


def test_every_command_declares_what_it_writes_and_only_the_lock_holders_wait():
    writes = {name: p.get_default("writes") for name, p in _leaf_parsers()}
    assert all(isinstance(w, Writes) for w in writes.values()), writes
    holders = {name for name, w in writes.items() if w in LOCKED_BY}
    assert {"generate", "score", "label", "batch import", "review", "construct"} <= holders
    assert not holders & {"evaluate", "calibrate", "summary", "figures", "decide", "batch export", "cost"}
    for name, p in _leaf_parsers():
        assert any(a.dest == "wait" for a in p._actions) == (name in holders), name


@pytest.mark.parametrize(
    ("argv", "folder"),
    [
        (["subset", "--run", "a", "--out", "b", "--docs", "x"], "b"),
        (["evaluate", "--run", "a", "--out", "b"], "b"),
        (["evaluate", "--run", "a"], "a"),
        (["review", "--run", "a", "--policy", "p", "--out", "b"], "a"),
        (["batch", "export", "--run", "a", "--out", "requests.jsonl"], "a"),
        (["decide", "--run", "a", "--scorer", "judge-doc", "--out", "b"], None),
        (["summary", "--run", "a"], None),
    ],
)
def test_a_command_is_recorded_in_the_folder_it_writes(argv, folder):
    assert written_folder(build_parser().parse_args(argv)) == folder


# -- two real writers on the scripted server --------------------------------------------------


class Gate:
    """Holds the first call the server receives until opened: its writer is mid-run for certain."""

    def __init__(self) -> None:
        self.first = threading.Event()
        self.opened = threading.Event()

    def __call__(self, req):
        if not self.first.is_set():
            self.first.set()
            self.opened.wait(60)
        return default_judge(req)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "construct_eval.cli", *args]


def _stage_args(stage: str, run: Path, url: str) -> list[str]:
    endpoint = ["--base-url", url, "--model", "m", "--quiet", "--no-cache", "--concurrency", "1"]
    return {
        "score": ["score", "--run", str(run), "--mode", "doc,fields", *endpoint],
        "reflect": ["reflect", "--run", str(run), *endpoint],
        "verdict": ["verdict", "--run", str(run), "--backend", "llamacpp", *endpoint],
        "bias": ["bias", "--run", str(run), "--variants", "default,reversed", "--n-boot", "50", *endpoint],
        "generate": ["generate", "--run", str(run), "--dataset", "synthetic", "--n", "3", *endpoint],
    }[stage]


ROWS = {
    "score": "judgments",
    "reflect": "reflections",
    "verdict": "verdicts",
    "bias": "judgments",
    "generate": "outputs",
}


def _keys(run: Path, stage: str) -> list[str]:
    rows = RunDir(run).read(ROWS[stage])
    return [r.get("key") or r["id"] for r in rows]


SLOW = pytest.mark.slow  # two process start-ups each


@pytest.mark.parametrize(
    "stage", ["score", *(pytest.param(s, marks=SLOW) for s in ("reflect", "verdict", "bias", "generate"))]
)
def test_a_second_writer_stops_at_once_naming_the_first_and_nothing_is_paid_twice(tmp_path, stage):
    run = tmp_path / "run"
    if stage != "generate":
        make_run(run, 3)
    gate = Gate()
    with ScriptedServer(gate) as server:
        args = _stage_args(stage, run, server.base_url)
        first = subprocess.Popen(_cli(*args), env=env_without_proxy(), stderr=subprocess.PIPE, text=True)
        try:
            assert gate.first.wait(60), "the first writer made no call"
            second = subprocess.run(_cli(*args), env=env_without_proxy(), capture_output=True, text=True, timeout=60)
        finally:
            gate.opened.set()
            first.wait(120)
        calls = len(server.requests)
    assert second.returncode == EXIT_LOCKED, second.stderr
    assert f"pid {first.pid}" in second.stderr and f"construct-eval {stage}" in second.stderr
    assert "Traceback" not in second.stderr and second.stdout == ""
    keys = _keys(run, stage)
    assert calls == len(keys) > 0, "every call paid once, by the first writer"
    assert not [k for k, n in Counter(keys).items() if n > 1], "no duplicated rows"
    provenance = [json.loads(line) for line in (run / "provenance.jsonl").read_text().splitlines()]
    assert len(provenance) == 1, "the refused writer did nothing, so it records nothing"


@SLOW
def test_a_second_writer_with_wait_resumes_after_the_first_with_zero_calls(tmp_path):
    run = make_run(tmp_path / "run", 4).path
    gate = Gate()
    with ScriptedServer(gate) as server:
        args = _stage_args("score", run, server.base_url)
        first = subprocess.Popen(_cli(*args), env=env_without_proxy(), stderr=subprocess.PIPE, text=True)
        second = None
        try:
            assert gate.first.wait(60)
            second = subprocess.Popen(_cli(*args, "--wait"), env=env_without_proxy(), stderr=subprocess.PIPE, text=True)
            said = second.stderr.readline()
            assert said.startswith("waiting: run folder") and f"pid {first.pid}" in said
        finally:
            gate.opened.set()
            first.wait(120)
            if second is not None:
                second.wait(120)
        calls = len(server.requests)
    assert first.returncode == 0 and second.returncode == 0
    keys = _keys(run, "score")
    assert calls == len(keys) == 4 * 5, "a document and its 4 top-level fields, once each"
    assert len(set(keys)) == len(keys)


# -- stages that call no model, and readers --------------------------------------------------


def _offline_commands(tmp_path: Path, run: Path) -> dict[str, list[str]]:
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "x", "request": "r", "output": {"a": 1}}) + "\n")
    scores = tmp_path / "scores.jsonl"
    scores.write_text(json.dumps({"id": "doc-000", "field": "__doc__", "score": 0.3}) + "\n")
    return {
        "label": ["label", "--run", str(run)],
        "import-scores": ["import-scores", "--run", str(run), "--scores", str(scores), "--scorer", "outside"],
        "consistency": ["consistency", "--run", str(run)],
        "logprob-scores": ["logprob-scores", "--run", str(run)],
        "combine": ["combine", "--run", str(run)],
        "inject": ["inject", "--run", str(run), "--dataset", "synthetic", "--n", "3"],
        "import": ["import", "--run", str(run), "--items", str(items)],
    }


@pytest.mark.parametrize(
    "command", ["label", "import-scores", "consistency", "logprob-scores", "combine", "inject", "import"]
)
def test_stages_that_call_no_model_are_refused_too_and_run_once_the_holder_is_killed(
    tmp_path, holder_of, capsys, command
):
    run = tmp_path / "run"
    assert main(["inject", "--run", str(run), "--dataset", "synthetic", "--n", "3"]) == 0
    argv = _offline_commands(tmp_path, run)[command]
    before = _snapshot(run)
    holder = holder_of(run)
    capsys.readouterr()
    assert main(argv) == EXIT_LOCKED
    err = capsys.readouterr().err
    assert f"pid {holder.proc.pid}" in err and "holder-for-test" in err
    assert _snapshot(run) == before, "a refused command changes nothing, provenance included"
    holder.kill()
    assert main(argv) in (0, 2)  # runs now (inject/import into a used folder may refuse the data itself)
    assert "being written by another process" not in capsys.readouterr().err


def test_subset_locks_its_new_folder_and_batch_import_its_run(tmp_path, holder_of):
    run = make_run(tmp_path / "run", 2)
    out = tmp_path / "sub"
    out.mkdir()
    holder_of(out)
    assert main(["subset", "--run", str(run.path), "--out", str(out), "--docs", "doc-000"]) == EXIT_LOCKED
    assert not (out / "records.jsonl").exists()
    holder_of(run.path)
    results = tmp_path / "results.jsonl"
    results.write_text("")
    argv = ["batch", "import", "--run", str(run.path), "--results", str(results), "--base-url", "http://127.0.0.1:9/v1"]
    assert main([*argv, "--model", "m"]) == EXIT_LOCKED


def test_readers_keep_working_on_a_run_being_written(tmp_path, holder_of, capsys):
    run = tmp_path / "run"
    assert main(["inject", "--run", str(run), "--dataset", "synthetic", "--n", "6"]) == 0
    assert main(["label", "--run", str(run)]) == 0
    with ScriptedServer(lambda req: Reply(default_judge(req).text)) as server:
        args = ["score", "--run", str(run), "--mode", "doc", "--base-url", server.base_url, "--model", "m"]
        assert main([*args, "--quiet", "--no-cache"]) == 0
    holder_of(run)
    with (run / "judgments.jsonl").open("a") as fh:
        fh.write('{"doc_id": "half a line of the writer')  # the writer is mid-line
    capsys.readouterr()
    assert main(["evaluate", "--run", str(run), "--n-boot", "20"]) == 0
    assert main(["summary", "--run", str(run)]) == 0
    out = capsys.readouterr().out
    assert "judge" in out and "being written" not in out


def test_the_exit_mapping_holds_the_lock_code():
    """One table of exit codes: the run lock's refusal is in it, with the code the lock module uses."""
    from construct_eval.cli import exits
    from construct_eval.runlock import EXIT_LOCKED

    assert exits.LOCKED == EXIT_LOCKED
    assert f"- {EXIT_LOCKED}:" in (exits.__doc__ or "")
