"""A local model server started by a process that then dies without stopping it ends itself
(``serving.server.watch_parent``): real processes, the owner killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import time
from construct_eval.serving.server import watch_parent
assert watch_parent(interval_s=0.1, grace_s=5.0) is not None
time.sleep(60)
"""

OWNER = """
import os, subprocess, sys, time
from construct_eval.serving.server import PARENT_PID_ENV
env = {**os.environ, PARENT_PID_ENV: str(os.getpid())}
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]], env=env, start_new_session=True)
print(child.pid, flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by init) counts as gone
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def test_a_server_whose_owner_is_killed_ends_itself():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    owner = subprocess.Popen([sys.executable, "-c", OWNER, CHILD], env=env, stdout=subprocess.PIPE, text=True)
    child = int(owner.stdout.readline())
    time.sleep(1.0)
    assert _alive(child), "the server should run while its owner does"
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    gone = not _alive(child)
    if not gone:
        os.kill(child, signal.SIGKILL)
    assert gone, "the orphaned server kept running after its owner was killed"


def test_without_an_owner_recorded_nothing_is_watched(monkeypatch):
    from construct_eval.serving.server import PARENT_PID_ENV, watch_parent

    monkeypatch.delenv(PARENT_PID_ENV, raising=False)
    assert watch_parent() is None
