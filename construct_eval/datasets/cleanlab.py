"""The paper's public benchmark: Cleanlab's structured-output datasets (one CSV each).

Online, the CSVs come from the Hugging Face Hub (``Cleanlab/<repo>``, split ``train``);
offline, from a local folder laid out like ``../shared/data/cleanlab`` (one sub-folder per
dataset) or holding the CSV files directly. ``ground_truth`` is JSON in some rows and a
Python literal in others; anything else is an error naming the file and row.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

csv.field_size_limit(1 << 30)


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    hf_repo: str
    filename: str
    folder: str
    input_column: str


DATASETS: dict[str, DatasetSpec] = {
    s.name: s
    for s in (
        DatasetSpec(
            "financial_ner",
            "Cleanlab/fire-financial-ner-extraction",
            "fire_financial_ner_extraction.csv",
            "financial_ner",
            "text",
        ),
        DatasetSpec(
            "insurance_claims",
            "Cleanlab/insurance-claims-extraction",
            "insurance_claims_extraction.csv",
            "insurance_claims",
            "claim_text",
        ),
        DatasetSpec("pii", "Cleanlab/pii-extraction", "pii_extraction.csv", "pii", "text"),
        DatasetSpec(
            "data_table_analysis",
            "Cleanlab/data-table-analysis",
            "data_table_analysis.csv",
            "data_table_analysis",
            "table",
        ),
    )
}


class DatasetError(ValueError):
    """A dataset file that cannot be read, naming the file and row."""


@dataclass(frozen=True)
class Record:
    id: str
    text: str
    ground_truth: Any
    source_hash: str  # sha256 of the input text: lets run files refer to a document without copying it


def parse_ground_truth(raw: str, where: str) -> Any:
    """JSON first, then a Python literal (single quotes, None); otherwise an error naming ``where``."""
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


def locate(spec: DatasetSpec, data_dir: str | Path) -> Path:
    base = Path(data_dir)
    for candidate in (base / spec.folder / spec.filename, base / spec.filename):
        if candidate.is_file():
            return candidate
    raise DatasetError(f"{spec.name}: {spec.filename} not found under {base}")


def download(spec: DatasetSpec) -> Path:
    """Fetch the CSV from the Hugging Face Hub (online users)."""
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(repo_id=spec.hf_repo, filename=spec.filename, repo_type="dataset"))


def load(name: str, data_dir: str | Path | None = None, *, limit: int | None = None) -> list[Record]:
    """Rows of a benchmark dataset, from ``data_dir`` when given, else downloaded."""
    if name not in DATASETS:
        raise DatasetError(f"unknown dataset {name!r}; choose from {sorted(DATASETS)}")
    spec = DATASETS[name]
    path = locate(spec, data_dir) if data_dir is not None else download(spec)
    records: list[Record] = []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = {spec.input_column, "ground_truth"} - set(reader.fieldnames or [])
        if missing:
            raise DatasetError(f"{path}: missing column(s) {sorted(missing)}")
        for i, row in enumerate(reader):
            if limit is not None and len(records) >= limit:
                break
            where = f"{path.name} row {i} (id {name}-{i:05d})"
            text = row[spec.input_column]
            if not text:
                raise DatasetError(f"{where}: empty {spec.input_column!r}")
            truth = parse_ground_truth(row["ground_truth"], where)
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            records.append(Record(f"{name}-{i:05d}", text, truth, digest))
    return records
