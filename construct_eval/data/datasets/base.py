"""What every dataset is: documents with exact ground truth, a JSON schema and a generation prompt."""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from construct_eval.digest import sha256_hex


class DatasetError(ValueError):
    """A dataset that cannot be used, naming the file, row or document."""


@dataclass(frozen=True)
class Record:
    id: str
    text: str
    ground_truth: Any
    source_hash: str  # sha256 of the input text: run files refer to a document without copying it
    schema: dict[str, Any] | None = None  # this document's own schema, where a dataset mixes kinds


def text_hash(text: str) -> str:
    return sha256_hex(text)


def parse_ground_truth(raw: Any, where: str) -> Any:
    """JSON first, then a Python literal (single quotes, None); otherwise an error naming ``where``."""
    if isinstance(raw, dict):
        return raw
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        pass
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise DatasetError(
            f"{where}: ground_truth is neither JSON nor a Python literal ({type(exc).__name__})"
        ) from None


def check_record(record: Record, where: str) -> None:
    """The checks every loader applies: text present, ground truth a JSON object."""
    if not isinstance(record.text, str) or not record.text.strip():
        raise DatasetError(f"{where} (document {record.id}): empty input text")
    if not isinstance(record.ground_truth, dict):
        raise DatasetError(
            f"{where} (document {record.id}): ground truth must be a JSON object, "
            f"got {type(record.ground_truth).__name__}"
        )


def check_schema(schema: Any, where: str) -> dict[str, Any]:
    if not isinstance(schema, dict):
        raise DatasetError(f"{where}: the JSON schema must be an object, got {type(schema).__name__}")
    if schema.get("type") not in (None, "object") or ("properties" not in schema and "$ref" not in schema):
        raise DatasetError(f"{where}: the JSON schema must describe an object with 'properties'")
    return schema


def _infer(values: Sequence[Any]) -> dict[str, Any]:
    present = [v for v in values if v is not None]
    nullable = len(present) < len(values)
    if not present:
        return {"type": ["string", "null"]}
    if all(isinstance(v, dict) for v in present):
        keys: list[str] = []
        for v in present:
            keys.extend(k for k in v if k not in keys)
        node: dict[str, Any] = {
            "type": "object",
            "properties": {k: _infer([v.get(k) for v in present]) for k in keys},
            "required": keys,
        }
        return {"anyOf": [node, {"type": "null"}]} if nullable else node
    if all(isinstance(v, list) for v in present):
        items = [x for v in present for x in v]
        node = {"type": "array", "items": _infer(items) if items else {"type": "string"}}
    elif all(isinstance(v, bool) for v in present):
        node = {"type": "boolean"}
    elif all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        node = {"type": "integer"}
    elif all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        node = {"type": "number"}
    else:
        node = {"type": "string"}
    if nullable:
        node["type"] = [node["type"], "null"]
    return node


def infer_schema(truths: Sequence[Any]) -> dict[str, Any]:
    """A JSON schema that every given ground truth fits (used where no schema is published)."""
    schema = _infer(list(truths))
    if "anyOf" in schema:
        schema = schema["anyOf"][0]
    schema["additionalProperties"] = False
    return schema


@dataclass
class Dataset:
    """Documents to extract from, with what a generator is told and how labels compare values.

    ``source`` says how to load the same documents again (written into the run, so a run
    that refers to documents by id and hash can be completed later); ``embed_documents``
    is False where the text must not be copied into run folders (third-party data).
    """

    name: str
    schema: dict[str, Any]
    system_prompt: str
    records: list[Record]
    label_rules: dict[str, Any] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)
    embed_documents: bool = True
    notes: str = ""

    def schema_for(self, record: Record) -> dict[str, Any]:
        return record.schema if record.schema is not None else self.schema

    def generator_messages(self, record: Record) -> list[dict[str, str]]:
        schema_text = json.dumps(self.schema_for(record), ensure_ascii=False)
        system = f"{self.system_prompt}\n\nJSON schema:\n{schema_text}"
        return [{"role": "system", "content": system}, {"role": "user", "content": record.text}]

    def request_text(self, record: Record) -> str:
        """What the user asked, as the judge sees it: the instruction and the document."""
        return f"{self.system_prompt}\n\nDocument:\n{record.text}"

    def by_id(self) -> dict[str, Record]:
        return {r.id: r for r in self.records}

    def only(self, ids: Sequence[str]) -> Dataset:
        """These documents, in the dataset's order. The source is kept: ``ids`` choose which
        documents a stage takes (the self-consistency samples of a study's documents), not where
        they come from, so a run made this way reloads them as before."""
        wanted = set(ids)
        unknown = wanted - {r.id for r in self.records}
        if unknown:
            raise DatasetError(f"{self.name}: {len(unknown)} id(s) not among its documents: {sorted(unknown)[:5]}")
        return replace(self, records=[r for r in self.records if r.id in wanted])

    def select(self, *, limit: int | None = None, sample: int | None = None, seed: int = 0) -> Dataset:
        """The first ``limit`` records, or a fixed random ``sample`` of them (in file order)."""
        records = self.records
        source = dict(self.source)
        if sample is not None:
            if sample > len(records):
                raise DatasetError(f"{self.name}: cannot sample {sample} of {len(records)} documents")
            idx = np.sort(np.random.default_rng(seed).choice(len(records), size=sample, replace=False))
            records = [records[i] for i in idx]
            source.update(sample=sample, seed=seed)
        if limit is not None:
            records = records[:limit]
            source["limit"] = limit
        return Dataset(
            self.name,
            self.schema,
            self.system_prompt,
            records,
            self.label_rules,
            source,
            self.embed_documents,
            self.notes,
        )

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "documents": len(self.records),
            "source": self.source,
            "label_rules": self.label_rules,
            "system_prompt": self.system_prompt,
            "embed_documents": self.embed_documents,
        }


def record_row(dataset: Dataset, record: Record) -> dict[str, Any]:
    """A line of records.jsonl; document text and truth only where the dataset may be copied."""
    row: dict[str, Any] = {"id": record.id, "dataset": dataset.name, "source_hash": record.source_hash}
    if record.schema is not None:
        row["schema"] = record.schema
    if dataset.embed_documents:
        row["request"] = dataset.request_text(record)
        row["ground_truth"] = record.ground_truth
    return row


def hydrate_rows(rows: Sequence[Mapping[str, Any]], dataset: Dataset) -> list[dict[str, Any]]:
    """Fill request and ground truth into rows that refer to documents by id and hash."""
    by_id = dataset.by_id()
    out = []
    for row in rows:
        full = dict(row)
        if "request" not in full or "ground_truth" not in full:
            rec = by_id.get(row["id"])
            if rec is None:
                raise DatasetError(f"document {row['id']!r} is not in dataset {dataset.name!r} as loaded now")
            if row.get("source_hash") and row["source_hash"] != rec.source_hash:
                raise DatasetError(f"document {row['id']!r}: its text changed since the run was made (sha256 differs)")
            full.setdefault("request", dataset.request_text(rec))
            full.setdefault("ground_truth", rec.ground_truth)
        out.append(full)
    return out
