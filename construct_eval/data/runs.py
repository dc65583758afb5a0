"""The run folder: append-only JSONL files that every stage reads and writes.

::

    runs/<name>/
      run.json          what made the run (commands, endpoints; never keys)
      records.jsonl     one line per document: id, request (with the document), schema, ground truth
      outputs.jsonl     the generator's output per document
      judgments.jsonl   one line per judgment (see construct_eval.judging.judge.Judgment)

Each line is written with a single ``write`` on an append-mode file, so a killed process
leaves at most one torn final line (what ``write`` returned for is in the kernel's page
cache and survives the process; pass ``durable=True`` to also fsync against power loss); readers skip it and the next
append cuts it off before writing. A rerun reads what is there and does only the rest.

One process writes to a run at a time (:mod:`construct_eval.runlock`): every write here holds
the run's lock (re-entrant, so under a command that holds it for its whole length it costs
nothing), and a write while another process holds it waits :data:`WRITE_WAIT_S` seconds at
most, then raises :class:`~construct_eval.runlock.RunLocked`. A stage run from Python that
must not pay twice for calls another process makes holds the lock for its whole length::

    with run.lock("my notebook"):
        judge_run(run, endpoint, "doc")

Reading takes no lock.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from construct_eval.data.inject import apply_ops
from construct_eval.jsonl import JsonlError, iter_numbered, replace_jsonl
from construct_eval.runlock import RunLock
from construct_eval.types import JudgeInput

WRITE_WAIT_S = 5.0
"""How long one write waits for a run that another process holds (a brief write, not a stage)."""


class RunError(ValueError):
    """A run folder whose content cannot be used, with the file, line and document named."""


def iter_jsonl(path: Path, *, skip_torn_tail: bool = False) -> Iterator[dict[str, Any]]:
    """JSON objects, one per line; errors name the file and line (see :func:`jsonl.iter_numbered`)."""
    try:
        for _, row in iter_numbered(path, skip_torn_tail=skip_torn_tail):
            yield row
    except JsonlError as exc:
        raise RunError(str(exc)) from None


class RunDir:
    def __init__(self, path: str | os.PathLike[str], *, create: bool = True, durable: bool = False):
        self.path = Path(path)
        self.durable = durable
        if create:
            self.path.mkdir(parents=True, exist_ok=True)
        elif not self.path.is_dir():
            raise RunError(f"run folder {self.path} does not exist")
        self._repaired: set[str] = set()

    def file(self, name: str) -> Path:
        return self.path / f"{name}.jsonl"

    def lock(self, command: str | None = None, *, wait: bool | float = False) -> RunLock:
        """Take this run's writer lock (see :mod:`construct_eval.runlock`); ``with run.lock(): ...``.

        Raises :class:`~construct_eval.runlock.RunLocked` naming the holder if another process
        has it (``wait=True`` waits for it, ``wait=seconds`` at most that long).
        """
        return RunLock(self.path, command).acquire(wait=wait)

    def _writing(self) -> contextlib.AbstractContextManager[RunLock]:
        """The lock for one write: re-entered if this process holds it, else taken for the write."""
        return RunLock(self.path).acquire(wait=WRITE_WAIT_S)

    # -- reading ----------------------------------------------------------------------

    def iter_rows(self, name: str) -> Iterator[dict[str, Any]]:
        """Complete lines of ``name``.jsonl (a torn final line is skipped).

        Every row read has ``id``, the document's id: judgment rows (written as ``doc_id``, the
        name recorded runs use) get it added, so readers use one key for every file.
        """
        path = self.file(name)
        if path.exists():
            try:
                for row in iter_jsonl(path, skip_torn_tail=True):
                    if "id" not in row and "doc_id" in row:
                        row["id"] = row["doc_id"]
                    yield row
            except RunError as exc:
                raise RunError(
                    f"{exc}; `construct-eval repair --run {self.path}` moves unreadable lines aside"
                ) from None

    def read(self, name: str) -> list[dict[str, Any]]:
        return list(self.iter_rows(name))

    def read_latest(self, name: str, key: str = "key") -> list[dict[str, Any]]:
        """The rows of ``name``.jsonl, the last one per ``key`` in first-seen order: a call made
        again after its request failed appends a row with the same key, which replaces the
        failed one (rows without the key are kept as they are)."""
        latest: dict[Any, dict[str, Any]] = {}
        for i, row in enumerate(self.iter_rows(name)):
            latest[row.get(key) or ("row", i)] = row
        return list(latest.values())

    # -- writing ----------------------------------------------------------------------

    def _repair_tail(self, path: Path) -> None:
        if str(path) in self._repaired or not path.exists():
            self._repaired.add(str(path))
            return
        with path.open("rb+") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            if size:
                fh.seek(max(0, size - 1))
                if fh.read(1) != b"\n":
                    fh.seek(0)
                    data = fh.read()
                    cut = data.rfind(b"\n") + 1
                    fh.truncate(cut)
        self._repaired.add(str(path))

    def append(self, name: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Append rows as complete lines; returns how many were written."""
        path = self.file(name)
        with self._writing():
            self._repair_tail(path)
            count = 0
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                for row in rows:
                    line = json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
                    os.write(fd, line.encode("utf-8"))
                    count += 1
                if self.durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
        return count

    def replace(self, name: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Swap in a whole new ``name``.jsonl (derived files: labels, scores), atomically."""
        with self._writing():
            return replace_jsonl(self.file(name), rows)

    def replace_scorers(self, rows: Iterable[Mapping[str, Any]], scorers: Iterable[str]) -> int:
        """Swap the rows of ``scorers`` in scores.jsonl for ``rows``, keeping every other scorer's (atomic).

        Derived scores (token log-probs, consistency, reflection, combinations) are recomputed
        whole; this is the one way they are written. The new rows take the place of the first
        row they replace (or go last), so recomputing the same rows leaves the file
        byte-identical and a rerun shows no change in git.
        """
        drop = set(scorers)
        before: list[Mapping[str, Any]] = []
        after: list[Mapping[str, Any]] = []
        replaced = False
        with self._writing():  # read and swap under one lock: no other stage's rows are lost between
            for r in self.iter_rows("scores"):
                if r.get("scorer") in drop:
                    replaced = True
                elif replaced:
                    after.append(r)
                else:
                    before.append(r)
            return self.replace("scores", [*before, *rows, *after])

    def copy_subset(
        self, dst: str | os.PathLike[str], ids: Iterable[str], *, files: Iterable[str] | None = None
    ) -> RunDir:
        """A new run folder holding only the documents ``ids`` of this one, with everything made of them.

        Copies run.json and schema.json, and the rows of every JSONL file (or of ``files``
        only, e.g. records, outputs, labels to judge afresh) whose document id (``id`` or
        ``doc_id``) is in ``ids``. Refuses an id this run does not have, and a destination
        that already holds a run.
        """
        wanted = list(dict.fromkeys(ids))
        have = {r["id"] for r in self.iter_rows("records")}
        unknown = [i for i in wanted if i not in have]
        if unknown:
            raise RunError(f"{self.path}: no document {unknown[0]!r} in records.jsonl ({len(unknown)} unknown ids)")
        target = RunDir(dst)
        with target._writing():
            if target.file("records").exists() or (target.path / "run.json").exists():
                raise RunError(f"{target.path} already holds a run; choose a new folder")
            keep = set(wanted)
            for extra in ("run.json", "schema.json"):
                if (self.path / extra).exists():
                    (target.path / extra).write_bytes((self.path / extra).read_bytes())
            names = [p.stem for p in sorted(self.path.glob("*.jsonl"))]
            if files is not None:
                names = [n for n in names if n in set(files)]
            for name in names:
                target.append(name, (r for r in self.iter_rows(name) if r.get("id", r.get("doc_id")) in keep))
            target.write_meta("subset_of", {"run": str(self.path), "documents": wanted})
        return target

    def write_meta(self, key: str, value: Any) -> None:
        """Record ``value`` under ``key`` in run.json (atomic replace)."""
        meta_path = self.path / "run.json"
        with self._writing():
            meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
            meta[key] = value
            tmp = meta_path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
            os.replace(tmp, meta_path)

    def drop_meta(self, key: str) -> None:
        """Remove ``key`` from run.json (atomic replace); nothing if it is not there."""
        with self._writing():
            meta = self.meta()
            if key in meta:
                meta.pop(key)
                tmp = (self.path / "run.json").with_suffix(".json.tmp")
                tmp.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
                os.replace(tmp, self.path / "run.json")

    def meta(self) -> dict[str, Any]:
        meta_path = self.path / "run.json"
        return json.loads(meta_path.read_text()) if meta_path.exists() else {}

    def model(self, role: str) -> str | None:
        """The model stage ``role`` (``generator``, ``judge``, ``construct``, ...) called (None: none)."""
        from construct_eval.provenance import stage_model

        return stage_model(self.meta(), role)

    # -- joined views -----------------------------------------------------------------

    def schema(self) -> dict[str, Any] | None:
        path = self.path / "schema.json"
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise RunError(f"{path}: not valid JSON ({exc.msg})") from None

    def records(self, *, data_dir: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
        """Record rows with request text and ground truth, reloading documents the run only refers to.

        Runs made from third-party data keep only ids and hashes; their text comes back from
        the dataset described in run.json (``data_dir`` for a local copy), checked by hash.
        """
        rows = self.read("records")
        if all("request" in r for r in rows):
            return rows  # complete, or a judge-only run without ground truth
        source = (self.meta().get("dataset") or {}).get("source")
        if not source:
            raise RunError(f"{self.file('records')}: documents are referred to by id only and run.json has no source")
        from construct_eval.data.datasets import DatasetError, hydrate_rows, reload_from_source

        try:
            return hydrate_rows(rows, reload_from_source(source, data_dir=data_dir))
        except DatasetError as exc:
            raise RunError(f"{self.path}: {exc}") from None

    def outputs(self, records: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
        """The latest output row per document, with ``output`` rebuilt from ground truth + ``ops``
        for controlled-error runs. A document not generated on a first try (a failed request)
        and generated on a rerun has two rows; the later one is its output."""
        latest: dict[str, dict[str, Any]] = {}
        for row in self.iter_rows("outputs"):
            latest.pop(row.get("id"), None)  # keep first-seen order of the latest rows
            latest[row.get("id")] = row
        rows = list(latest.values())
        if not any("ops" in r for r in rows):
            return rows
        if records is None:
            records = {r["id"]: r for r in self.records()}
        out = []
        for row in rows:
            if "ops" in row and "output" not in row:
                rec = records.get(row["id"])
                if rec is None or "ground_truth" not in rec:
                    raise RunError(f"document {row['id']!r}: controlled-error output needs its ground truth")
                try:
                    row = {**row, "output": apply_ops(rec["ground_truth"], row["ops"])}
                except (KeyError, IndexError, TypeError, ValueError) as exc:
                    raise RunError(f"document {row['id']!r}: cannot apply its error operations: {exc}") from None
            out.append(row)
        return out

    def judge_inputs(
        self, *, data_dir: str | os.PathLike[str] | None = None
    ) -> tuple[list[JudgeInput], list[dict[str, Any]]]:
        """Items to judge (records joined with outputs) and the outputs that cannot be judged.

        An output that failed to parse is returned in the second list, with its reason, so
        callers can report it instead of silently dropping it.
        """
        run_schema = self.schema()
        records: dict[str, dict[str, Any]] = {}
        for row in self.records(data_dir=data_dir):
            doc_id = row.get("id")
            if not isinstance(doc_id, str) or not doc_id:
                raise RunError(f"{self.file('records')}: a record has no string 'id': {str(row)[:120]}")
            if doc_id in records:
                raise RunError(f"{self.file('records')}: document {doc_id!r} appears twice")
            if not isinstance(row.get("request"), str):
                raise RunError(f"{self.file('records')}: document {doc_id!r} has no 'request' text")
            records[doc_id] = row
        items, skipped = [], []
        for row in self.outputs(records):
            doc_id = row.get("id")
            if doc_id not in records:
                raise RunError(f"{self.file('outputs')}: output for unknown document {doc_id!r}")
            if row.get("parse_error") or "output" not in row:
                skipped.append({"id": doc_id, "reason": row.get("parse_error") or "no output"})
                continue
            record = records[doc_id]
            schema = record.get("schema", run_schema)
            if schema is not None and not isinstance(schema, dict):
                raise RunError(f"document {doc_id!r}: schema must be a JSON object, got {type(schema).__name__}")
            items.append(JudgeInput(doc_id, record["request"], schema, row["output"]))
        return items, skipped
