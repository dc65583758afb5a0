"""One writer per run folder: an exclusive advisory lock on ``<run>/.run.lock``.

Two processes that write to one run (two terminals, two notebook kernels, a scheduler that
retries a job it thinks died) would each plan the same calls and pay for them twice; two
stages that rewrite ``scores.jsonl`` at once would lose one's rows. A writer therefore holds
``fcntl.flock(LOCK_EX)`` on the run's lock file for as long as it writes. The kernel drops
the lock when its holder's file is closed, so a process killed with ``kill -9`` frees the run
at once: there is no PID file to go stale and nothing to guess.

The lock file says who holds it (the command, process id, host, and since when, in UTC), so a
second writer can stop at once with a message naming the holder (:class:`RunLocked`; the CLI
exits with :data:`EXIT_LOCKED`), or wait for it. Readers take no lock: run files are
append-only with whole-line writes, and derived files are swapped in atomically, so a reader
sees what is complete.

Within one process the lock is re-entrant: the CLI takes it around a whole command and every
write under it (:class:`construct_eval.data.runs.RunDir`) finds it held. Flock is per open file,
so a lock taken by a process is not shared with a child it starts with ``exec``; a child made
by a bare ``fork`` shares its parent's (it inherits the open file), as flock(2) says.

Only POSIX systems have ``fcntl``; elsewhere the lock is a no-op with a warning (the rest of
the package does not support them either).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shlex
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".run.lock"
"""The lock file in every run folder that has been written to (ignored by git)."""

EXIT_LOCKED = 75
"""Exit code of a command refused because another process writes to its run (``EX_TEMPFAIL`` of
sysexits.h: a temporary failure, try again later). 2 stays "bad input", 3 "spending limit"."""

POLL_S = 0.05


@dataclass(frozen=True)
class Holder:
    """Who holds a run's lock, as its lock file says."""

    command: str
    pid: int
    host: str
    since: str

    def describe(self) -> str:
        return f"{self.command!r} (pid {self.pid} on {self.host}, since {self.since})"

    @classmethod
    def parse(cls, text: str) -> Holder | None:
        try:
            data = json.loads(text)
            return cls(str(data["command"]), int(data["pid"]), str(data["host"]), str(data["since"]))
        except (ValueError, KeyError, TypeError):
            return None  # being written this instant, or not ours


class RunLocked(RuntimeError):
    """Another process writes to this run folder; the message names it."""

    def __init__(self, folder: Path, holder: Holder | None, *, waited_s: float | None = None):
        self.folder = folder
        self.holder = holder
        self.who = who = holder.describe() if holder else "a process that is just starting"
        waited = f" (waited {waited_s:g} s)" if waited_s is not None else ""
        super().__init__(
            f"run folder {folder} is being written by another process: {who}{waited}. Nothing was"
            " done; run again when it has finished, or add --wait to wait for it"
        )


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def default_command() -> str:
    """This process's command line, as a holder's ``command``."""
    return shlex.join([Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python", *sys.argv[1:]])


class _Held:
    def __init__(self, fd: int, pid: int):
        self.fd = fd
        self.pid = pid
        self.count = 1


_HELD: dict[str, _Held] = {}
_REGISTRY = threading.Lock()


def _forget_after_fork() -> None:
    _HELD.clear()  # a forked child is another writer; its copies of the files stay untouched


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def read_holder(folder: str | os.PathLike[str]) -> Holder | None:
    """What the lock file of ``folder`` says (the last holder's line, even if it has ended)."""
    try:
        return Holder.parse((Path(folder) / LOCK_NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


class RunLock:
    """The writer lock of one run folder; re-entrant within a process.

    ``with RunLock(folder, "my script"):`` takes it and stops at once if another process holds
    it (:class:`RunLocked`); ``acquire(wait=True)`` waits for it, ``wait=seconds`` at most that
    long. The folder must exist.
    """

    def __init__(self, folder: str | os.PathLike[str], command: str | None = None):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self.command = command or default_command()
        self._key = os.path.realpath(self.path)
        self._mine = False

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._mine

    def acquire(self, *, wait: bool | float = False, on_wait: Callable[[RunLocked], None] | None = None) -> RunLock:
        """Take the lock; ``on_wait`` is told once, with who holds it, before waiting begins."""
        if self._mine:
            return self
        with _REGISTRY:
            held = _HELD.get(self._key)
            if held is not None and held.pid == os.getpid():
                held.count += 1
                self._mine = True
                return self
        if fcntl is None:  # pragma: no cover
            warnings.warn("no fcntl on this system: run folders are not locked", stacklevel=2)
            self._mine = True
            return self
        fd = self._open()
        try:
            self._lock(fd, wait, on_wait)
            os.ftruncate(fd, 0)
            info = {"command": self.command, "pid": os.getpid(), "host": socket.gethostname(), "since": _now()}
            os.pwrite(fd, (json.dumps(info, ensure_ascii=False) + "\n").encode("utf-8"), 0)
        except BaseException:
            os.close(fd)
            raise
        with _REGISTRY:
            _HELD[self._key] = _Held(fd, os.getpid())
        self._mine = True
        return self

    def _open(self) -> int:
        if not self.folder.is_dir():
            raise FileNotFoundError(f"run folder {self.folder} does not exist")
        return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)

    def _lock(self, fd: int, wait: bool | float, on_wait: Callable[[RunLocked], None] | None) -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        if wait is False:
            raise RunLocked(self.folder, self._holder())
        if on_wait is not None:
            on_wait(RunLocked(self.folder, self._holder()))
        if wait is True:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return
        started = time.monotonic()
        deadline = started + float(wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise RunLocked(
                        self.folder, self._holder(), waited_s=round(time.monotonic() - started, 1)
                    ) from None
                time.sleep(POLL_S)

    def _holder(self) -> Holder | None:
        for _ in range(20):  # the holder may be writing its line this instant
            holder = read_holder(self.folder)
            if holder is not None:
                return holder
            time.sleep(POLL_S / 5)
        return None

    def release(self) -> None:
        """Give the lock back (the last release in the process unlocks the file)."""
        if not self._mine:
            return
        self._mine = False
        with _REGISTRY:
            held = _HELD.get(self._key)
            if held is None or held.pid != os.getpid():
                return
            held.count -= 1
            if held.count:
                return
            del _HELD[self._key]
        if fcntl is None:  # pragma: no cover
            return
        try:
            os.ftruncate(held.fd, 0)  # a free run names no holder
        except OSError:
            pass
        finally:
            os.close(held.fd)  # closing the file drops the lock

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()
