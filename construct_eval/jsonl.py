"""JSON Lines files: read with errors that name file and line, replace whole files atomically.

The lowest layer of construct-eval: run folders (:mod:`construct_eval.data.runs`) and users' own
datasets (:mod:`construct_eval.data.datasets.custom`) both read through here and turn
:class:`JsonlError` into their own error types.

Lines are parsed with orjson (several times faster than the standard library on a run's rows:
``benchmarks/bench_read_run.py``); a line orjson refuses (``NaN``, which the standard library writes
for a float that is not a number) is parsed again by the standard library, and so is a line with a
run of 19 or more digits, where orjson would read an integer beyond 64 bits as a float (an account
number an output gave as a number must not lose digits): both read the same files to the same
objects.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson


class JsonlError(ValueError):
    """A line that is not a JSON object; the message names the file and the line."""


def iter_numbered(path: Path, *, skip_torn_tail: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line, numbered from 1.

    ``skip_torn_tail``: a last line without a newline is the torn tail of a killed write
    (run files) and is skipped; in a user's own file it is an ordinary last line.
    """
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if skip_torn_tail and not raw.endswith(b"\n"):
                return
            if not raw.strip():
                continue
            try:
                row = _loads(raw)
            except json.JSONDecodeError as exc:
                raise JsonlError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            except UnicodeDecodeError:
                raise JsonlError(f"{path}:{lineno}: not UTF-8 text") from None
            if not isinstance(row, dict):
                raise JsonlError(f"{path}:{lineno}: expected a JSON object per line")
            yield lineno, row


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
"""19 digits in a row (every digit read as 0): an integer that may not fit 64 bits, which orjson
reads as a float. A translation and a substring test, not a regular expression: five times cheaper."""


def _loads(raw: bytes) -> Any:
    """One line's value: orjson's, or the standard library's where orjson refuses the line or
    would read a long integer as a float."""
    if _LONG_NUMBER not in raw.translate(_DIGITS_AS_ZERO):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw)


def replace_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write ``rows`` to a temporary file and swap it in: readers see the old file or the new one."""
    tmp = path.with_name(f".{path.name}.tmp")
    count = 0
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    os.replace(tmp, path)
    return count
