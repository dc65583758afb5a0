"""The response cache: successful replies in SQLite by content address, private, and disposable.

It holds every prompt's reply keyed by a hash of the prompt, and prompts hold documents (PII,
contracts): the folder is created 0700 and its files 0600 (SQLite's ``-wal`` and ``-shm`` too),
and an existing cache with looser modes is tightened on open.

The cache only saves calls; what a run has done is in its own files. So a cache that cannot be
read never stops a run:

* **damaged** (cut short by a full disk or a crash, or overwritten: SQLite's ``SQLITE_CORRUPT``
  or ``SQLITE_NOTADB``, found on open or on any read or write): the file and its side files are
  moved aside to ``<name>.damaged-<UTC time>`` (kept for inspection, modes still 0600), a
  :class:`CacheWarning` says so once with both paths, and a new, empty cache takes its place;
* **cannot be opened for writing** (a read-only folder, no permission, no space):
  :func:`open_cache` warns once and the client runs without a cache (every call is made;
  resume still skips what the run holds). :class:`ResponseCache` itself raises
  :class:`CacheError` naming the path, for callers that want a cache or nothing;
* **a write that fails later** (the disk fills mid-run): warned once, that reply is not kept.

:func:`check_cache` (``construct-eval cache --check``) reports integrity without changing anything.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import sqlite3
import stat
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from construct_eval.llm.chat import ChatResult

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_SQLITE_SIDE_FILES = ("", "-wal", "-shm", "-journal")
_DAMAGE = ("SQLITE_CORRUPT", "SQLITE_NOTADB")
T = TypeVar("T")


class CacheWarning(UserWarning):
    """The response cache was moved aside, or is not used or not written: said once each time."""


class CacheError(RuntimeError):
    """A response cache that cannot be opened (the message names its path and why)."""


def make_private(path: Path) -> None:
    """``path`` (a cache file) and SQLite's side files readable by their owner only; its folder too."""
    with contextlib.suppress(OSError):
        os.chmod(path.parent, PRIVATE_DIR)
    for suffix in _SQLITE_SIDE_FILES:
        side = Path(str(path) + suffix)
        if side.exists() and stat.S_IMODE(side.stat().st_mode) != PRIVATE_FILE:
            os.chmod(side, PRIVATE_FILE)


def is_damage(exc: BaseException) -> bool:
    """Whether a SQLite error says the file is not a sound database (not busy, not read-only)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", None) or ""
    return name.startswith(_DAMAGE) or type(exc) is sqlite3.DatabaseError


def _stamp() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")


def set_aside(path: Path) -> Path:
    """Move the cache file ``path`` and its side files to ``<name>.damaged-<time>`` (0600); the new name."""
    aside = path.with_name(f"{path.name}.damaged-{_stamp()}")
    for suffix in _SQLITE_SIDE_FILES:
        side = Path(str(path) + suffix)
        if side.exists():
            target = Path(str(aside) + suffix)
            os.replace(side, target)
            os.chmod(target, PRIVATE_FILE)
    return aside


class ResponseCache:
    """SQLite store of successful replies by content address; safe across threads/processes.

    Heals itself when its file is damaged (see the module's notes); raises :class:`CacheError`
    when it cannot be opened at all. ``moved_aside`` lists the damaged files it moved.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self._lock = threading.Lock()
        self.moved_aside: list[Path] = []
        self._write_warned = False
        self._inode: int | None = None
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise CacheError(f"response cache {self.path} cannot be opened: {exc}") from None
            self._heal(exc)

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
            # SQLite gives its -wal and -shm files the mode of the database file: create that 0600 first
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, PRIVATE_FILE))
            make_private(self.path)
            self._inode = os.stat(self.path).st_ino
        except OSError as exc:
            raise CacheError(f"response cache {self.path} cannot be opened: {exc.strerror or exc}") from None
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, created REAL, payload TEXT)")
            db.execute("SELECT key FROM responses LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            db.close()
            if is_damage(exc):
                raise
            raise CacheError(f"response cache {self.path} cannot be used: {exc}") from None
        make_private(self.path)
        return db

    def _heal(self, exc: sqlite3.DatabaseError) -> None:
        """Move the damaged file aside (unless another process already has) and start a new one."""
        with contextlib.suppress(sqlite3.Error, AttributeError):
            self._db.close()
        try:
            same = os.stat(self.path).st_ino == self._inode
        except FileNotFoundError:
            same = False
        if same:
            aside = set_aside(self.path)
            self.moved_aside.append(aside)
            warnings.warn(
                CacheWarning(
                    f"response cache {self.path} is damaged ({exc}): moved aside to {aside} (kept for"
                    " inspection); continuing with a new, empty cache"
                ),
                stacklevel=3,
            )
        self._db = self._connect()

    def _run(self, op: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return op(self._db)
            except sqlite3.DatabaseError as exc:
                if not is_damage(exc):
                    raise
                self._heal(exc)
                return op(self._db)

    def get(self, key: str) -> ChatResult | None:
        try:
            row = self._run(lambda db: db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone())
        except sqlite3.OperationalError as exc:  # busy past the timeout, an I/O error: a miss, not a stop
            self._warn_once(f"response cache {self.path} could not be read ({exc}): calling instead")
            return None
        return ChatResult.from_cache(row[0]) if row else None

    def put(self, key: str, result: ChatResult) -> None:
        payload = result.to_cache()
        try:
            self._run(
                lambda db: db.execute(
                    "INSERT OR REPLACE INTO responses (key, created, payload) VALUES (?, ?, ?)",
                    (key, time.time(), payload),
                )
            )
        except sqlite3.OperationalError as exc:  # read-only, disk full, busy: the reply is in the run anyway
            self._warn_once(f"response cache {self.path} cannot be written ({exc}): new replies are not cached")

    def _warn_once(self, message: str) -> None:
        if not self._write_warned:
            self._write_warned = True
            warnings.warn(CacheWarning(message), stacklevel=3)

    def __len__(self) -> int:
        return int(self._run(lambda db: db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def clear(self) -> int:
        """Delete every entry; returns how many there were."""

        def clear(db: sqlite3.Connection) -> int:
            n = int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            db.execute("DELETE FROM responses")
            db.execute("VACUUM")
            return n

        return self._run(clear)


def open_cache(cache: ResponseCache | str | os.PathLike[str] | bool | None) -> ResponseCache | None:
    """The client's cache: ``True`` the default file, a path that file, ``False``/``None`` none.

    A cache that cannot be opened is warned about once and not used: the cache saves calls,
    it must not stop a run.
    """
    if cache is False or cache is None:
        return None
    if isinstance(cache, ResponseCache):
        return cache
    path = default_cache_path() if cache is True else Path(cache)
    try:
        return ResponseCache(path)
    except CacheError as exc:
        warnings.warn(
            CacheWarning(f"{exc}; running without a response cache (every call is made; --no-cache to silence this)"),
            stacklevel=3,
        )
        return None


@dataclass
class CacheCheck:
    """What ``construct-eval cache --check`` reports about a cache file."""

    path: Path
    exists: bool
    entries: int | None = None
    size_bytes: int = 0
    problems: list[str] = field(default_factory=list)
    private: bool = True
    damaged_copies: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.exists and not self.problems

    def lines(self) -> list[str]:
        if not self.exists:
            return [f"no response cache at {self.path}"]
        state = "integrity ok" if not self.problems else "DAMAGED: " + "; ".join(self.problems[:3])
        entries = "?" if self.entries is None else str(self.entries)
        out = [f"{self.path}: {entries} cached replies, {self.size_bytes / 1e6:.1f} MB, {state}"]
        out.append("file modes: owner-only (0600, folder 0700)" if self.private else "file modes: NOT owner-only")
        if self.problems:
            out.append("the next command that uses it moves it aside and starts a new one (nothing is lost but cache)")
        out += [f"damaged copy kept: {p}" for p in self.damaged_copies]
        return out


def check_cache(path: str | os.PathLike[str]) -> CacheCheck:
    """SQLite's integrity check of the cache at ``path``, opened read-only (nothing is changed)."""
    path = Path(path)
    found = CacheCheck(path, path.exists())
    copies = path.parent.glob(f"{path.name}.damaged-*")
    found.damaged_copies = sorted(p for p in copies if not p.name.endswith(_SQLITE_SIDE_FILES[1:]))
    if not found.exists:
        return found
    files = [Path(str(path) + s) for s in _SQLITE_SIDE_FILES if Path(str(path) + s).exists()]
    found.size_bytes = sum(f.stat().st_size for f in files)
    found.private = all(stat.S_IMODE(f.stat().st_mode) == PRIVATE_FILE for f in files) and (
        stat.S_IMODE(path.parent.stat().st_mode) == PRIVATE_DIR
    )
    # without a write-ahead log the file holds everything: read it as immutable, which creates no
    # side files (a read-only connection would leave an empty -wal and -shm behind)
    mode = "mode=ro" if Path(f"{path}-wal").exists() else "immutable=1"
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True, timeout=30)
    except sqlite3.Error as exc:
        found.problems.append(f"cannot be opened: {exc}")
        return found
    try:
        rows = [r[0] for r in db.execute("PRAGMA integrity_check").fetchall()]
        if rows != ["ok"]:
            found.problems += rows
        else:
            found.entries = int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.Error as exc:
        found.problems.append(str(exc))
    finally:
        db.close()
    return found


def cache_root() -> Path:
    """construct-eval's own cache folder (responses, assembled models): ``$CONSTRUCT_EVAL_CACHE``,
    else ``$XDG_CACHE_HOME/construct-eval``, else ``~/.cache/construct-eval``."""
    root = os.environ.get("CONSTRUCT_EVAL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "construct-eval"
    )
    return Path(root)


def default_cache_path() -> Path:
    return cache_root() / "responses.sqlite"


def cache_lines(path: Path, *, clear: bool = False) -> list[str]:
    """Where the response cache at ``path`` is and how big (``clear``: empty it first, and say so)."""
    if not path.exists():
        return [f"no response cache at {path}"]
    cache = ResponseCache(path)  # opening it also tightens its file modes, and sets a damaged one aside
    try:
        if clear:
            return [f"cleared {cache.clear()} cached replies from {path}"]
        size = sum(f.stat().st_size for f in (Path(f"{path}{s}") for s in ("", "-wal", "-shm")) if f.exists())
        return [
            f"{path}: {len(cache)} cached replies, {size / 1e6:.1f} MB (owner-only: mode 0600, folder 0700)",
            "it holds every prompt's reply keyed by a hash of the prompt; clear it with --clear",
        ]
    finally:
        cache.close()
