"""Repairing a run folder whose JSONL files hold unreadable lines, without deleting anything.

A line that is not UTF-8, not JSON or not a JSON object (a disk block of garbage or of NUL
bytes, a file cut mid-line by a full disk or a crash) stops every reader at it, naming the file
and line. :func:`repair_run` moves each such line out of ``<name>.jsonl`` into the side file
``<name>.jsonl.unreadable`` (one JSON line per moved line: its line number and byte offset in
the file as it was, its length, why it could not be read, its exact bytes in base64 and a
readable preview), and keeps every other line byte for byte. The side file is written and
synced before the run file is swapped (atomically), so a crash in between can repeat a moved
line in the side file but never lose one. A run file's torn last line (no newline) is moved
too: otherwise the next append would cut it off.

What the moved lines held is then missing from the run, so the stage that wrote them makes
exactly those again when rerun (resume keys: judgments, reflections, verdicts, outputs), or
rewrites its derived file whole (labels, scores). The report says which.

The run's lock is held while repairing (:mod:`construct_eval.runlock`): a writer running on
the run refuses it.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as _dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.scorer_registry import made_by

SIDE_SUFFIX = ".unreadable"

REMADE_BY = {
    "records": "generate (or inject/import) for the documents lost",
    "outputs": "generate (it resumes: only the documents whose output was lost)",
    "samples": "generate --samples (it resumes)",
    "judgments": "score (it resumes: only the judgments lost)",
    "labels": "label (rewrites labels.jsonl whole)",
    "scores": "the stage that made the scorer's rows (derived scores are rewritten whole)",
    "provenance": "nothing: provenance lines record what ran; they are not remade",
}


def remade_by(name: str) -> str:
    """What makes a run file's lost lines again: the table above, else the scorer registry's
    model-calling scorer whose calls file it is (each resumes)."""
    if name in REMADE_BY:
        return REMADE_BY[name]
    command = made_by(name)
    return f"{command} (it resumes)" if command else "the stage that wrote this file"


@dataclass
class Moved:
    """One line moved aside: where it was and why it could not be read."""

    line: int
    offset: int
    length: int
    reason: str


@dataclass
class FileRepair:
    name: str
    lines: int
    moved: list[Moved] = field(default_factory=list)


@dataclass
class RepairReport:
    run: Path
    files: list[FileRepair] = field(default_factory=list)
    dry_run: bool = False

    @property
    def moved(self) -> int:
        return sum(len(f.moved) for f in self.files)

    def lines(self) -> list[str]:
        checked = f"{len(self.files)} run files checked ({sum(f.lines for f in self.files)} lines)"
        if not self.moved:
            return [f"{self.run}: {checked}; every line is readable, nothing moved"]
        verb = "would move" if self.dry_run else "moved"
        out = [f"{self.run}: {checked}; {verb} {self.moved} unreadable lines"]
        for f in self.files:
            if not f.moved:
                continue
            side = f"{f.name}.jsonl{SIDE_SUFFIX}"
            out.append(f"  {f.name}.jsonl: {len(f.moved)} of {f.lines} lines {verb} to {side}")
            out += [f"    line {m.line} (byte {m.offset}, {m.length} bytes): {m.reason}" for m in f.moved[:20]]
            if len(f.moved) > 20:
                out.append(f"    ... and {len(f.moved) - 20} more (all listed in {side})")
            out.append(f"    made again by: {remade_by(f.name)}")
        return out


def unreadable(raw: bytes) -> str | None:
    """Why the run-file line ``raw`` (with its newline, if it has one) cannot be read, else ``None``."""
    if not raw.endswith(b"\n"):
        return "cut short: the file ends mid-line"
    if not raw.strip():
        return None  # blank lines are skipped by every reader
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text" + (" (NUL bytes)" if b"\x00" in raw else "")
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg})" + (" (NUL bytes)" if "\x00" in text else "")
    if not isinstance(row, dict):
        return "not a JSON object"
    return None


def _scan(path: Path) -> tuple[list[bytes], list[Moved]]:
    kept: list[bytes] = []
    moved: list[Moved] = []
    offset = 0
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            reason = unreadable(raw)
            if reason is None:
                kept.append(raw)
            else:
                moved.append(Moved(lineno, offset, len(raw), reason))
            offset += len(raw)
    return kept, moved


def _side_rows(name: str, path: Path, moved: list[Moved], when: str) -> list[dict[str, Any]]:
    data = path.read_bytes()
    rows = []
    for m in moved:
        raw = data[m.offset : m.offset + m.length]
        rows.append({
            "file": f"{name}.jsonl", "line": m.line, "offset": m.offset, "length": m.length,
            "reason": m.reason, "moved_at": when, "raw_base64": base64.b64encode(raw).decode("ascii"),
            "preview": raw[:200].decode("utf-8", errors="backslashreplace"),
        })  # fmt: skip
    return rows


def _write_synced(path: Path, data: bytes, *, append: bool) -> None:
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(path, flags, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def repair_run(run: RunDir, *, dry_run: bool = False) -> RepairReport:
    """Move every unreadable line of the run's JSONL files to their side files; what was moved.

    ``dry_run``: only report what would move.
    """
    report = RepairReport(run.path, dry_run=dry_run)
    when = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    with contextlib.nullcontext() if dry_run else run.lock("construct-eval repair"):
        for path in sorted(run.path.glob("*.jsonl")):
            name = path.name[: -len(".jsonl")]
            kept, moved = _scan(path)
            report.files.append(FileRepair(name, len(kept) + len(moved), moved))
            if not moved or dry_run:
                continue
            side = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _side_rows(name, path, moved, when))
            _write_synced(path.with_name(path.name + SIDE_SUFFIX), side.encode("utf-8"), append=True)
            tmp = path.with_name(f".{path.name}.repair.tmp")
            _write_synced(tmp, b"".join(kept), append=False)
            os.replace(tmp, path)
    return report


def restore_line(side_row: dict[str, Any]) -> bytes:
    """The exact bytes of a moved line, from its row in a side file (to inspect or put back)."""
    return base64.b64decode(side_row["raw_base64"])
