"""A researcher's own extraction task: a CSV or JSONL file plus a JSON schema file, no code."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from construct_eval.data.datasets.base import (
    Dataset,
    DatasetError,
    Record,
    check_record,
    check_schema,
    parse_ground_truth,
    text_hash,
)
from construct_eval.jsonl import JsonlError, iter_numbered

DEFAULT_PROMPT = (
    "You extract structured data from the document. Return one JSON object that follows the given "
    "JSON schema exactly. Copy values from the document; use null where the document does not say. "
    "Return only the JSON object."
)


def _rows(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        try:
            yield from iter_numbered(path)
        except JsonlError as exc:
            raise DatasetError(str(exc)) from None
        return
    if path.suffix.lower() in (".csv", ".tsv"):
        csv.field_size_limit(1 << 30)
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh, delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
            yield from enumerate(reader)
        return
    raise DatasetError(f"{path}: use a .csv, .tsv or .jsonl file")


def load_file(
    path: str | Path,
    schema_path: str | Path,
    *,
    input_col: str = "text",
    truth_col: str = "ground_truth",
    id_col: str | None = None,
    system_prompt: str | None = None,
    label_rules: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> Dataset:
    """Documents from ``path`` with ground truth in ``truth_col`` (JSON or a Python literal)."""
    path, schema_path = Path(path), Path(schema_path)
    if not path.is_file():
        raise DatasetError(f"dataset file {path} does not exist")
    try:
        schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"schema file {schema_path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{schema_path}: not valid JSON ({exc.msg})") from None
    check_schema(schema, str(schema_path))
    name = name or path.stem
    records: list[Record] = []
    seen: set[str] = set()
    for index, (i, row) in enumerate(_rows(path)):
        where = f"{path.name} {'line' if path.suffix.lower() in ('.jsonl', '.ndjson') else 'row'} {i}"
        for col in (input_col, truth_col) + ((id_col,) if id_col else ()):
            if col not in row:
                raise DatasetError(f"{where}: no column {col!r} (columns: {sorted(row)})")
        doc_id = str(row[id_col]) if id_col else f"{name}-{index:05d}"
        if doc_id in seen:
            raise DatasetError(f"{where}: document id {doc_id!r} appears twice")
        seen.add(doc_id)
        text = row[input_col]
        if not isinstance(text, str):
            raise DatasetError(f"{where} (document {doc_id}): {input_col!r} must be text")
        truth = parse_ground_truth(row[truth_col], f"{where} (document {doc_id})")
        record = Record(doc_id, text, truth, text_hash(text))
        check_record(record, where)
        records.append(record)
    if not records:
        raise DatasetError(f"{path}: no documents")
    return Dataset(
        name,
        schema,
        system_prompt or DEFAULT_PROMPT,
        records,
        dict(label_rules or {}),
        {"kind": "file", "path": str(path), "schema": str(schema_path), "sha256": text_hash(path.read_text("utf-8"))},
        embed_documents=True,
    )
