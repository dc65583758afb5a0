"""Collect a run once: the same files give the same items, in this process and the next.

``evaluate`` collects a run's scores with their labels, and the figure index of the same
command collects them again for the scorers' names; at a million items each collection reads
and joins a hundred megabytes of JSONL. :func:`memo_by_run_files` keeps the last collection and
hands out copies while the files it read are byte for byte the same (their contents hashed,
not their timestamps, which a rewrite within one clock tick would not move).

Across processes (``evaluate`` then ``calibrate``, or a notebook run again) the collection is
kept beside the run as numpy arrays, ``.analysis_cache/collected-<labels>.npz``: per scorer its
scores, labels, documents and fields as codes into one table of ids and one of fields, and a
JSON header with the counts. It is used only when its key matches: the sizes, modification
times and contents of the files read, and the package's source (another parser or join makes
another collection). ``CONSTRUCT_EVAL_COLLECT_CACHE=0`` turns it off; a folder that cannot be
written is left alone.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

F = TypeVar("F", bound=Callable[..., Any])

READS = ("judgments", "scores", "plausibility")
"""The run files a collection reads besides its labels file."""
CACHE_DIR = ".analysis_cache"
CACHE_VERSION = "1"


def files_digest(path: Path, names: tuple[str, ...]) -> str:
    """A digest of the named JSONL files of a run folder (a missing file counts as absent)."""
    digest = hashlib.blake2b(digest_size=16)
    for name in names:
        file = path / f"{name}.jsonl"
        digest.update(name.encode() + b"\0")
        if not file.exists():
            digest.update(b"absent\0")
            continue
        stat = file.stat()
        digest.update(f"{stat.st_size}:{stat.st_mtime_ns}\0".encode())
        with file.open("rb") as fh:
            for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of the package's source: a collection made by other code is not this code's."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.blake2b(digest_size=16)
    for file in sorted(package.rglob("*.py")):
        digest.update(str(file.relative_to(package)).encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def _copy(items: list[Any]) -> list[Any]:
    """New item objects with their own lists, so a caller that edits one edits no other's; the
    read-only arrays of ``columns()`` go with them (the same items, the same arrays)."""
    out = []
    for it in items:
        new = replace(
            it,
            doc_ids=list(it.doc_ids),
            fields=list(it.fields),
            scores=list(it.scores),
            wrong=list(it.wrong),
            left_out=dict(it.left_out),
            seen=set(it.seen),
        )
        new.adopt_columns(it)
        out.append(new)
    return out


_SMALL = ("level", "granularity", "unscored", "failed", "unlabelled", "duplicates_dropped", "calls", "tokens")


def _codes(values: Any, index: dict[str, int]) -> np.ndarray:
    """Each value's code in ``index`` (new values appended), at C speed: only the distinct values
    are visited in Python."""
    for v in dict.fromkeys(values):
        if v not in index:
            index[v] = len(index)
    return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))


def save_collected(file: Path, key: str, items: list[Any]) -> None:
    """``items`` as arrays in ``file`` (written whole, then moved into place)."""
    docs: dict[str, int] = {}
    names: dict[str, int] = {}
    arrays: dict[str, np.ndarray] = {}
    header = []
    for i, it in enumerate(items):
        if type(it.scorer).parse(it.scorer.name) != it.scorer:
            return  # a name that does not read back as its identity: not cached
        seen_docs, seen_fields = [d for d, _ in it.seen], [f for _, f in it.seen]  # not zip(*seen): a million arguments
        arrays[f"{i}_doc"] = _codes(it.doc_ids, docs)
        arrays[f"{i}_field"] = _codes(it.fields, names)
        arrays[f"{i}_score"] = np.asarray(it.scores, dtype=np.float64)
        arrays[f"{i}_wrong"] = np.asarray(it.wrong, dtype=np.int8)
        arrays[f"{i}_seen_doc"] = _codes(seen_docs, docs)
        arrays[f"{i}_seen_field"] = _codes(seen_fields, names)
        small = {k: getattr(it, k) for k in _SMALL}
        small["level"] = it.level.value
        header.append({"scorer": it.scorer.name, **small, "seconds": it.seconds, "left_out": it.left_out})
    arrays["doc_table"] = np.array(list(docs), dtype=str)
    arrays["field_table"] = np.array(list(names), dtype=str)
    meta = {"version": CACHE_VERSION, "key": key, "items": header}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    file.parent.mkdir(parents=True, exist_ok=True)
    (file.parent / ".gitignore").write_text("*\n")  # a cache, never committed with the run
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, file)


def load_collected(file: Path, key: str, make: Callable[..., Any]) -> list[Any] | None:
    """The items saved in ``file`` under ``key`` (``make(**fields)`` builds one), or None."""
    if not file.exists():
        return None
    with np.load(file, allow_pickle=False) as data:
        meta = json.loads(data["meta"].tobytes().decode())
        if meta.get("version") != CACHE_VERSION or meta.get("key") != key:
            return None
        docs = data["doc_table"]
        names = data["field_table"]
        rank = np.empty(len(docs), dtype=np.int64)  # each document's place in the sorted ids
        rank[np.argsort(docs, kind="stable")] = np.arange(len(docs))
        out = []
        for i, head in enumerate(meta["items"]):
            seen_docs = docs[data[f"{i}_seen_doc"]].tolist() if len(docs) else []
            seen_fields = names[data[f"{i}_seen_field"]].tolist() if len(names) else []
            doc_codes, scores, wrong = data[f"{i}_doc"], data[f"{i}_score"], data[f"{i}_wrong"]
            it = make(
                head["scorer"],
                head["level"],
                head["granularity"],
                doc_ids=docs[doc_codes].tolist() if len(docs) else [],
                fields=names[data[f"{i}_field"]].tolist() if len(names) else [],
                scores=scores.tolist(),
                wrong=wrong.astype(np.int64).tolist(),
                seen=set(zip(seen_docs, seen_fields, strict=True)),
                left_out=head["left_out"],
                seconds=head["seconds"],
                **{k: head[k] for k in _SMALL if k not in ("level", "granularity")},
            )
            present = np.zeros(len(docs), dtype=bool)
            present[rank[doc_codes]] = True
            groups = (np.cumsum(present) - 1)[rank[doc_codes]]  # the ids' group index, from their codes
            it.set_columns(wrong.astype(float), scores.astype(np.float64), groups.astype(np.int64))
            out.append(it)
    return out


def _cache_on() -> bool:
    return os.environ.get("CONSTRUCT_EVAL_COLLECT_CACHE", "1") not in ("0", "", "no", "false")


def memo_by_run_files(collect: F) -> F:
    """``collect(run, labels_name="labels")``, remembered for the last run and file contents, and
    kept beside the run for the next process (see the module doc)."""
    last: dict[tuple[str, str, str], list[Any]] = {}

    @functools.wraps(collect)
    def wrapper(run: Any, labels_name: str = "labels") -> list[Any]:
        folder = Path(run.path)
        digest = files_digest(folder, (labels_name, *READS))
        key = (str(folder.resolve()), labels_name, digest)
        if key not in last:
            items = None
            file = folder / CACHE_DIR / f"collected-{labels_name}.npz"
            stored_key = f"{digest}:{code_digest()}"
            if _cache_on():
                try:
                    items = load_collected(file, stored_key, _item_factory(collect))
                except (OSError, ValueError, KeyError):  # unreadable or from another layout: made again
                    items = None
            if items is None:
                items = collect(run, labels_name)
                if _cache_on() and items:
                    with contextlib.suppress(OSError):  # a folder we may not write: no cache, same items
                        save_collected(file, stored_key, items)
                for it in items:  # made once here, handed on with every copy
                    it.columns()
            last.clear()
            last[key] = items
        return _copy(last[key])

    wrapper.cache_clear = last.clear  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def memo_rows_by_run_files(*reads: str) -> Callable[[F], F]:
    """``rows(run)`` (a JSON-able list of table rows made from the run files ``reads``) kept beside
    the run as ``.analysis_cache/<name>.json`` under the same key as the collection (the files'
    sizes, modification times and contents, and the package's source): a counting pass over a
    million judgments is made once per file contents, not once per ``evaluate``."""

    def decorate(rows: F) -> F:
        @functools.wraps(rows)
        def wrapper(run: Any) -> list[dict[str, Any]]:
            folder = Path(run.path)
            if not _cache_on():
                return rows(run)
            file = folder / CACHE_DIR / f"{rows.__name__}.json"
            key = f"{files_digest(folder, reads)}:{code_digest()}"
            with contextlib.suppress(OSError, ValueError):
                stored = json.loads(file.read_text())
                if stored.get("version") == CACHE_VERSION and stored.get("key") == key:
                    return list(stored["rows"])
            made = rows(run)
            with contextlib.suppress(OSError, TypeError, ValueError):  # not writable or not JSON: no cache
                file.parent.mkdir(parents=True, exist_ok=True)
                (file.parent / ".gitignore").write_text("*\n")
                tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
                tmp.write_text(json.dumps({"version": CACHE_VERSION, "key": key, "rows": made}))
                os.replace(tmp, file)
            return made

        return wrapper  # type: ignore[return-value]

    return decorate


def memo_arrays_by_run_files(*reads: str) -> Callable[[F], F]:
    """``arrays(run, ...)`` (a dict of named numpy arrays made from the run files ``reads``, or
    None) kept beside the run as ``.analysis_cache/<name>.npz`` under the files' key (their sizes,
    modification times and contents) and the package's source, as the collection is: what costs a
    read of every output and record is made once per file contents, not once per command. The
    other arguments must be what the files make (the run's collected items, say): they are not
    part of the key. None is not kept."""

    def decorate(arrays: F) -> F:
        @functools.wraps(arrays)
        def wrapper(run: Any, *args: Any, **kwargs: Any) -> dict[str, np.ndarray] | None:
            folder = Path(run.path)
            if not _cache_on():
                return arrays(run, *args, **kwargs)
            file = folder / CACHE_DIR / f"{arrays.__name__}.npz"
            key = f"{files_digest(folder, reads)}:{code_digest()}"
            with contextlib.suppress(OSError, ValueError, KeyError):
                if file.exists():
                    with np.load(file, allow_pickle=False) as data:
                        meta = json.loads(data["meta"].tobytes().decode())
                        if meta.get("version") == CACHE_VERSION and meta.get("key") == key:
                            return {name: data[f"a{i}"] for i, name in enumerate(meta["names"])}
            made = arrays(run, *args, **kwargs)
            if made is None:
                return None
            with contextlib.suppress(OSError, TypeError, ValueError):  # not writable: no cache
                file.parent.mkdir(parents=True, exist_ok=True)
                (file.parent / ".gitignore").write_text("*\n")
                meta = {"version": CACHE_VERSION, "key": key, "names": list(made)}
                stored = {f"a{i}": np.asarray(a) for i, a in enumerate(made.values())}
                tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp.npz")
                np.savez(tmp, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **stored)
                os.replace(tmp, file)
            return made

        return wrapper  # type: ignore[return-value]

    return decorate


def _item_factory(collect: Any) -> Callable[..., Any]:
    """The item class of the module ``collect`` lives in (``ScoredItems``), without importing it
    here (that module imports this one)."""
    import sys

    return sys.modules[collect.__module__].ScoredItems
