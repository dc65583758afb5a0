"""A response cache that cannot be read never stops a run: damaged ones are moved aside (kept,
private) and replaced, one that cannot be opened is not used; ``cache --check`` reports which.

The runs are real ``construct-eval score`` processes on the scripted server, so what is checked
is what a user sees on stderr and what the server was asked.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from construct_eval.cli import main
from construct_eval.llm.cache import CacheWarning, ResponseCache, check_cache
from construct_eval.llm.chat import ChatResult
from construct_eval.serving.scripted_server import ScriptedServer
from tests.conftest import env_without_proxy, make_run

DOCS = 4
CALLS = DOCS * 5  # a document and its 4 top-level fields


def _score(run: Path, url: str, cache: Path, wrap: list[str] | None = None) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "construct_eval.cli", "score", "--run", str(run), "--mode", "doc,fields"]
    argv += ["--base-url", url, "--model", "m", "--quiet", "--cache", str(cache), "--concurrency", "1"]
    return subprocess.run([*(wrap or []), *argv], env=env_without_proxy(), capture_output=True, text=True, timeout=300)


def _damage(path: Path, how: str) -> None:
    for side in ("-wal", "-shm"):
        assert not Path(f"{path}{side}").exists(), "the cache was closed cleanly: one file holds it all"
    if how == "truncated":  # a full disk or a crash mid-write: the file cut short
        with path.open("r+b") as fh:
            fh.truncate(path.stat().st_size // 3)
    else:  # a disk block overwritten: nothing of SQLite's header is left
        path.write_bytes(b"\x8f garbage, not a database \x00" * (path.stat().st_size // 28 + 1))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["truncated", "garbage"])
def test_a_damaged_cache_is_moved_aside_said_once_and_the_run_goes_on(tmp_path, how):
    cache = tmp_path / "cache" / "responses.sqlite"
    with ScriptedServer() as server:
        assert _score(make_run(tmp_path / "first", DOCS).path, server.base_url, cache).returncode == 0
        assert len(server.requests) == CALLS
        _damage(cache, how)
        damaged = _sha(cache)
        assert check_cache(cache).problems, "the damage is real: SQLite's own check finds it"

        second = make_run(tmp_path / "second", DOCS)
        done = _score(second.path, server.base_url, cache)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        said = [line for line in done.stderr.splitlines() if "is damaged" in line]
        assert len(said) == 1, done.stderr  # said once
        (aside,) = [p for p in cache.parent.iterdir() if ".damaged-" in p.name]
        assert str(cache) in said[0] and str(aside) in said[0]
        assert _sha(aside) == damaged, "kept as it was, for inspection"
        assert stat.S_IMODE(aside.stat().st_mode) == 0o600 and stat.S_IMODE(cache.parent.stat().st_mode) == 0o700
        assert len(second.read("judgments")) == CALLS and len(server.requests) == 2 * CALLS  # nothing served from it

        third = _score(make_run(tmp_path / "third", DOCS).path, server.base_url, cache)
        assert third.returncode == 0 and "damaged" not in third.stderr
        assert len(server.requests) == 2 * CALLS, "the new cache serves every call of the same documents"
    assert check_cache(cache).ok and check_cache(cache).damaged_copies == [aside]


def test_damage_found_while_the_cache_is_in_use_is_healed_on_that_read(tmp_path):
    path = tmp_path / "c" / "responses.sqlite"
    cache = ResponseCache(path)
    for i in range(300):
        cache.put(f"k{i}", ChatResult(text="x" * 400 + str(i)))
    cache.close()
    cache = ResponseCache(path)  # the replies are in the database file now, not its write-ahead log
    with path.open("r+b") as fh:  # pages overwritten under the open connection (not yet read by it)
        fh.seek(4096)
        fh.write(b"\xff" * 4096 * 40)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cache.get("k299") is None  # a miss, not an exception
        cache.put("new", ChatResult(text="y"))
        assert cache.get("new").text == "y" and len(cache) == 1
    assert [w.category for w in caught] == [CacheWarning]
    assert len(cache.moved_aside) == 1 and cache.moved_aside[0].exists()
    cache.close()


def test_a_cache_in_a_read_only_folder_is_not_used_and_the_run_goes_on_with_one_warning(tmp_path):
    folder = tmp_path / "readonly"
    folder.mkdir()
    wrap: list[str] = []
    if os.geteuid() == 0:  # root writes through file modes: make the folder a read-only mount instead
        script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
        wrap = ["unshare", "-m", "sh", "-c", script, str(folder)]
        if not shutil.which("unshare") or subprocess.run([*wrap, "true"], capture_output=True).returncode != 0:
            pytest.skip("root without a mount namespace: no way to make a read-only folder")
    else:
        folder.chmod(0o555)
    run = make_run(tmp_path / "run", DOCS)
    try:
        with ScriptedServer() as server:
            done = _score(run.path, server.base_url, folder / "responses.sqlite", wrap)
            calls = len(server.requests)
    finally:
        folder.chmod(0o755)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "running without a response cache" in line]
    assert len(said) == 1 and str(folder / "responses.sqlite") in said[0], done.stderr
    assert calls == CALLS and len(run.read("judgments")) == CALLS
    assert list(folder.iterdir()) == []


def test_cache_check_reports_integrity_and_changes_nothing(tmp_path, capsys):
    path = tmp_path / "c" / "responses.sqlite"
    assert main(["cache", "--check", "--cache", str(path)]) == 0
    assert "no response cache" in capsys.readouterr().out
    cache = ResponseCache(path)
    for i in range(200):
        cache.put(f"k{i}", ChatResult(text="x" * 400))
    cache.close()
    assert main(["cache", "--check", "--cache", str(path)]) == 0
    out = capsys.readouterr().out
    assert "200 cached replies" in out and "integrity ok" in out and "owner-only" in out
    assert sorted(p.name for p in path.parent.iterdir()) == ["responses.sqlite"], "a check leaves no side files"
    for how in ("truncated", "garbage"):
        _damage(path, how)
        before, copies = _sha(path), sorted(path.parent.iterdir())
        assert main(["cache", "--check", "--cache", str(path)]) == 1
        out = capsys.readouterr().out
        assert "DAMAGED" in out and "moves it aside" in out
        assert _sha(path) == before and sorted(path.parent.iterdir()) == copies, "a check moves nothing"
        with pytest.warns(CacheWarning, match="moved aside"):
            ResponseCache(path).close()  # heals: the next check is clean and lists the copy kept
        assert main(["cache", "--check", "--cache", str(path)]) == 0
        assert "damaged copy kept" in capsys.readouterr().out
        cache = ResponseCache(path)
        cache.put("k", ChatResult(text="x" * 40000))
        cache.close()
