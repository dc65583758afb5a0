"""Scorers that run outside construct-eval, brought in as ordinary score rows.

Some scorers cannot share construct-eval's environment (Cleanlab's TLM pins numpy 2, netcal
here needs numpy 1) or live in another team's code. They exchange two JSONL files with a
run folder:

* :func:`export_items` writes what each scorer needs per document: the request as the judge
  sees it (instruction and document), the JSON schema and the output, with the output's hash.
* :func:`read_external_scores` reads their answer back, one row per document and field:
  ``{"id", "field", "score"}`` with ``field`` = ``"__doc__"`` for the document's score, a score
  in [0, 1] where higher means more likely correct, or ``"score": null`` with a ``"reason"``
  (unscored, never a number); optional ``"granularity"`` on field rows (default ``"top"``) and
  ``"calls"``, ``"tokens"``, ``"seconds"`` on document rows (the cost of that document).

The rows land in scores.jsonl under the scorer's name, so ``evaluate``, ``calibrate`` and the
notebooks treat the external scorer like any other.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.fields import DOCUMENT
from construct_eval.jsonl import JsonlError, iter_numbered

GRANULARITIES = ("top", "leaf")
RESERVED_SCORERS = ("judge", "reflection", "token_logprob", "consistency", "combo", "fitted")
"""Names (and name prefixes) of construct-eval's own scorers, which an import must not overwrite."""
_COST_KEYS = ("calls", "tokens", "seconds")


class ExternalScoreError(ValueError):
    """An external score file that cannot be taken as it is; the message names line, document and field."""


def export_items(run: RunDir, *, data_dir: str | os.PathLike[str] | None = None) -> tuple[list[dict[str, Any]], int]:
    """One row per judgeable document (id, request, schema, output, output_hash); and how many did not parse."""
    items, skipped = run.judge_inputs(data_dir=data_dir)
    rows = [
        {
            "id": it.doc_id,
            "request": it.request,
            "schema": dict(it.schema) if it.schema is not None else None,
            "output": it.output,
            "output_hash": it.output_hash,
        }
        for it in items
    ]
    return rows, len(skipped)


def _check_row(row: dict[str, Any], where: str, known: set[str]) -> dict[str, Any]:
    doc_id, field = row.get("id"), row.get("field")
    if not isinstance(doc_id, str) or doc_id not in known:
        raise ExternalScoreError(f"{where}: document {doc_id!r} is not in the run")
    if not isinstance(field, str) or not field:
        raise ExternalScoreError(f"{where} (document {doc_id!r}): 'field' must be a field path or {DOCUMENT!r}")
    where = f"{where} (document {doc_id!r}, field {field!r})"
    score = row.get("score")
    out: dict[str, Any] = {"id": doc_id, "field": field}
    if score is None:
        reason = row.get("reason")
        if not isinstance(reason, str) or not reason:
            raise ExternalScoreError(f"{where}: an unscored row (score null) needs a 'reason'")
        out.update(score=None, reason=reason)
    elif isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise ExternalScoreError(f"{where}: score {score!r} is not a finite number")
    elif not 0.0 <= float(score) <= 1.0:
        raise ExternalScoreError(f"{where}: score {score!r} is outside [0, 1] (higher = more likely correct)")
    else:
        out["score"] = float(score)
    if field == DOCUMENT:
        for key in _COST_KEYS:
            value = row.get(key)
            if value is not None:
                if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                    raise ExternalScoreError(f"{where}: {key} {value!r} must be a non-negative number")
                out[key] = value
    else:
        granularity = row.get("granularity", "top")
        if granularity not in GRANULARITIES:
            raise ExternalScoreError(f"{where}: granularity {granularity!r} is not one of {GRANULARITIES}")
        out["granularity"] = granularity
    return out


def read_external_scores(path: str | os.PathLike[str], run: RunDir, scorer: str) -> list[dict[str, Any]]:
    """Validated score rows of ``scorer`` from an external JSONL file; every problem names its line.

    A document or field that appears twice is refused: which of the two would count is not ours
    to guess.
    """
    if not scorer or any(c.isspace() for c in scorer) or scorer.startswith(RESERVED_SCORERS):
        raise ExternalScoreError(
            f"scorer name {scorer!r} must be one word that does not start with one of construct-eval's own"
            f" scorers {RESERVED_SCORERS}"
        )
    known = {r["id"] for r in run.iter_rows("records")}
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str | None]] = set()
    try:
        for number, row in iter_numbered(Path(path)):
            checked = _check_row(row, f"{path}:{number}", known)
            key = (checked["id"], checked["field"], checked.get("granularity"))
            if key in seen:
                raise ExternalScoreError(
                    f"{path}:{number} (document {checked['id']!r}, field {checked['field']!r}): appears twice"
                )
            seen.add(key)
            rows.append({"id": checked.pop("id"), "scorer": scorer, **checked})
    except JsonlError as exc:
        raise ExternalScoreError(str(exc)) from None
    if not rows:
        raise ExternalScoreError(f"{path}: no score rows")
    return rows
