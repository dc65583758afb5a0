"""Collect a run once per process: the same files give the same items.

``evaluate`` collects a run's scores with their labels, and the figure index of the same
command collects them again for the scorers' names; at a million items each collection reads
and joins a hundred megabytes of JSONL. :func:`memo_by_run_files` keeps the last collection and
hands out copies while the files it read are byte for byte the same (their contents hashed,
not their timestamps, which a rewrite within one clock tick would not move).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

READS = ("judgments", "scores")
"""The run files a collection reads besides its labels file."""


def files_digest(path: Path, names: tuple[str, ...]) -> str:
    """A digest of the named JSONL files of a run folder (a missing file counts as absent)."""
    digest = hashlib.blake2b(digest_size=16)
    for name in names:
        file = path / f"{name}.jsonl"
        digest.update(name.encode() + b"\0")
        if not file.exists():
            digest.update(b"absent\0")
            continue
        with file.open("rb") as fh:
            for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def _copy(items: list[Any]) -> list[Any]:
    """New item objects with their own lists, so a caller that edits one edits no other's."""
    return [
        replace(
            it,
            doc_ids=list(it.doc_ids),
            fields=list(it.fields),
            scores=list(it.scores),
            wrong=list(it.wrong),
            left_out=dict(it.left_out),
            seen=set(it.seen),
        )
        for it in items
    ]


def memo_by_run_files(collect: F) -> F:
    """``collect(run, labels_name="labels")``, remembered for the last run and file contents."""
    last: dict[tuple[str, str, str], list[Any]] = {}

    @functools.wraps(collect)
    def wrapper(run: Any, labels_name: str = "labels") -> list[Any]:
        key = (str(Path(run.path).resolve()), labels_name, files_digest(Path(run.path), (labels_name, *READS)))
        if key not in last:
            items = collect(run, labels_name)
            last.clear()
            last[key] = items
        return _copy(last[key])

    wrapper.cache_clear = last.clear  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
