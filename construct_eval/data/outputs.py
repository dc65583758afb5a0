"""Outputs to judge that no generator LLM made here: ground truth with planted errors
(:func:`inject_run`), and documents with outputs made elsewhere (:func:`import_items`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from construct_eval.data.datasets import Dataset
from construct_eval.data.generate import prepare_run
from construct_eval.data.inject import InjectionConfig, inject_rows
from construct_eval.data.labels import LabelRules
from construct_eval.data.near_miss import NEAR_MISS_KINDS
from construct_eval.data.runs import RunDir, RunError, iter_jsonl


def inject_run(run: RunDir, dataset: Dataset, config: InjectionConfig) -> list[dict[str, Any]]:
    """Controlled-error outputs for every document of ``dataset`` into ``run`` (a new folder, or
    one this made before: then nothing is added). Returns the rows written."""
    prepare_run(run, dataset)
    have = {r["id"] for r in run.iter_rows("outputs")}
    if have and len(have) < len(dataset.records):
        raise RunError(f"{run.path} already holds some controlled-error outputs; use a new run folder")
    if have:
        return []
    try:
        rows = inject_rows(dataset.records, dataset.schema_for, LabelRules.from_dict(dataset.label_rules), config)
    except RuntimeError as exc:  # a document whose planted errors the labels do not confirm (named)
        raise RunError(f"{run.path}: {exc}") from exc
    run.append("outputs", rows)
    meta: dict[str, Any] = {"kind": "controlled_errors", "config": config.signature()}
    if config.near_miss_share is not None:  # what the draw gave: the share is a probability per error
        planted = Counter(op["kind"] for row in rows for op in row["ops"])
        near = sum(n for kind, n in planted.items() if kind in NEAR_MISS_KINDS)
        meta["planted"] = {
            "errors": sum(planted.values()),
            "documents": sum(bool(row["ops"]) for row in rows),
            "by_kind": dict(sorted(planted.items())),
            "near_misses": near,
            "near_miss_share": round(near / sum(planted.values()), 4) if planted else None,
        }
    run.write_meta("generator", meta)
    return rows


def import_items(run: RunDir, items: str | Path, schema: str | Path | None = None) -> int:
    """Documents and outputs from a JSONL of ``{id, request, output, schema?, ground_truth?}``
    into ``run`` (ids it already holds are skipped); returns how many were added. A row without
    a request or an output is refused, naming its document, before anything is written."""
    have = {r["id"] for r in run.iter_rows("records")}
    records: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    rows: Sequence[dict[str, Any]] = list(iter_jsonl(Path(items)))
    for number, row in enumerate(rows, start=1):
        doc_id = str(row.get("id", number))
        if "request" not in row or "output" not in row:
            raise RunError(f"{items} (document {doc_id!r}): needs 'request' and 'output'")
        if doc_id in have:
            continue
        have.add(doc_id)
        record = {"id": doc_id, "request": row["request"]}
        record.update({k: row[k] for k in ("schema", "ground_truth") if k in row})
        records.append(record)
        outputs.append({"id": doc_id, "output": row["output"]})
    if schema:
        (run.path / "schema.json").write_text(Path(schema).read_text())
    run.append("records", records)
    run.append("outputs", outputs)
    return len(records)
