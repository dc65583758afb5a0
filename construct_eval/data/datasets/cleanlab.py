"""The paper's public benchmark: Cleanlab's structured-output datasets (one CSV each).

Online, the CSVs come from the Hugging Face Hub (``Cleanlab/<repo>``, split ``train``);
offline, from a local folder laid out like ``../shared/data/cleanlab`` (one sub-folder per
dataset) or holding the CSV files directly. ``ground_truth`` is JSON in some rows and a
Python literal in others; anything else is an error naming the file and row.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from construct_eval.data.datasets import prompts
from construct_eval.data.datasets.base import (
    Dataset,
    DatasetError,
    Record,
    check_record,
    infer_schema,
    parse_ground_truth,
    text_hash,
)

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


def locate(spec: DatasetSpec, data_dir: str | Path) -> Path:
    base = Path(data_dir)
    for candidate in (base / spec.folder / spec.filename, base / spec.filename):
        if candidate.is_file():
            return candidate
    raise DatasetError(f"{spec.name}: {spec.filename} not found under {base}")


HUB_HOST = "huggingface.co"


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """Whether the Hugging Face Hub answers at all (one TCP connect; no retries)."""
    import os
    import socket

    if os.environ.get("HF_HUB_OFFLINE") in ("1", "true", "True"):
        return False
    try:
        with socket.create_connection((HUB_HOST, 443), timeout=timeout_s):
            return True
    except OSError:
        return False


def download(spec: DatasetSpec) -> Path:
    """Fetch the CSV from the Hugging Face Hub (online users); fails at once, saying what to pass, offline."""
    if not hub_reachable():
        raise DatasetError(
            f"{spec.name}: the Hugging Face Hub ({HUB_HOST}) cannot be reached to download {spec.hf_repo};"
            f" pass --data-dir DIR with a local copy ({spec.folder}/{spec.filename} under DIR)"
        )
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(repo_id=spec.hf_repo, filename=spec.filename, repo_type="dataset"))


def load(name: str, data_dir: str | Path | None = None, *, limit: int | None = None) -> list[Record]:
    """Rows of a benchmark dataset, from ``data_dir`` when given, else downloaded; errors name the row."""
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
            record = Record(f"{name}-{i:05d}", text, truth, text_hash(text))
            check_record(record, where)
            records.append(record)
    return records


def spec_file(name: str) -> dict[str, Any] | None:
    """The schema, generation prompt and label rules shipped for a dataset (None if not shipped)."""
    res = resources.files("construct_eval.data.datasets") / "specs" / f"{name}.json"
    return json.loads(res.read_text(encoding="utf-8")) if res.is_file() else None


_INFERRED_PROMPT = (
    "You extract structured data from the input. Return one JSON object that follows the given "
    "JSON schema exactly, copying values from the input and using null where a value is absent. "
    "Return only the JSON object."
)


def load_dataset(name: str, data_dir: str | Path | None = None, *, prompt: str | None = None) -> Dataset:
    """A benchmark dataset with its schema, generation prompt and label rules.

    ``prompt`` chooses the generation instruction (:mod:`.prompts`): ``"benchmark"`` (the
    default, the benchmark's own instructions in our words) or ``"package"`` (the package's
    prompt, which every run recorded before the choice existed used). The choice is
    recorded in ``source["prompt"]``. A dataset with no shipped spec gets a schema inferred
    from its ground truth, marked so.
    """
    records = load(name, data_dir)
    spec = spec_file(name)
    source: dict[str, Any] = {"kind": "cleanlab", "name": name, "hf_repo": DATASETS[name].hf_repo}
    if data_dir is not None:  # a hint for later commands on this machine, never a requirement
        source["data_dir_hint"] = str(Path(data_dir).resolve())
    try:
        choice, system_prompt = prompts.system_prompt_for(
            name, spec["system_prompt"] if spec is not None else _INFERRED_PROMPT, prompt
        )
    except prompts.PromptChoiceError as exc:
        raise DatasetError(str(exc)) from None
    source["prompt"] = choice
    if spec is None:
        return Dataset(
            name,
            infer_schema([r.ground_truth for r in records]),
            system_prompt,
            records,
            {},
            {**source, "schema": "inferred from ground truth"},
            embed_documents=False,
            notes="schema inferred from the ground truth; the benchmark's own schema was not available",
        )
    return Dataset(
        name,
        spec["schema"],
        system_prompt,
        records,
        spec.get("label_rules", {}),
        source,
        embed_documents=False,
        notes=spec.get("notes", ""),
    )
