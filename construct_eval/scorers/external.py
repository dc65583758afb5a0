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
import re
from pathlib import Path
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.fields import DOCUMENT
from construct_eval.jsonl import JsonlError, iter_numbered
from construct_eval.scorer_registry import JUDGE_PREFIX, checked, reserved_families, spec_for
from construct_eval.types import ScorerId

GRANULARITIES = ("top", "leaf")
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


def check_import_name(scorer: str) -> ScorerId:
    """The identity an imported scorer's rows will carry; refused, saying why, if the name does not
    parse under the scorer-name grammar, is more than a family, or is (or starts with) the family of
    one of construct-eval's own scorers (:func:`construct_eval.scorer_registry.reserved_families`),
    whose rows an import would silently replace."""
    family = re.split(r"[:@\[]", scorer, maxsplit=1)[0]
    reserved = reserved_families()
    taken = next((f for f in (*reserved, JUDGE_PREFIX.rstrip("-")) if family.startswith(f)), None)
    if taken is not None:
        spec = spec_for(taken)
        what = f"{spec.label!r} ({taken})" if spec is not None else f"the judge's ({JUDGE_PREFIX}...)"
        raise ExternalScoreError(
            f"scorer name {scorer!r} cannot be imported: it is, or starts with, construct-eval's own scorer {what},"
            f" whose rows its stage writes; choose another name (reserved: {', '.join(reserved)})"
        )
    try:
        sid = checked(scorer)
    except ValueError as exc:
        raise ExternalScoreError(f"scorer {scorer!r} cannot be imported: {exc}") from None
    if sid != ScorerId(sid.family):
        raise ExternalScoreError(
            f"scorer name {scorer!r} cannot be imported: name an imported scorer by its family alone"
            f" ({sid.family!r}), without ':', '@' or '['; field rows give their granularity"
        )
    return sid


def read_external_scores(path: str | os.PathLike[str], run: RunDir, scorer: str) -> list[dict[str, Any]]:
    """Validated score rows of ``scorer`` from an external JSONL file; every problem names its line.

    A document or field that appears twice is refused: which of the two would count is not ours
    to guess.
    """
    check_import_name(scorer)
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
