"""Datasets: the paper's public benchmark (Cleanlab), a user's own file, and the project's synthetic set.

:func:`load_dataset` is the one entry point; each loader checks its rows and names the file,
row and document in every error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from construct_eval.data.datasets import cleanlab, custom, prompts, synthetic, table_rebuild
from construct_eval.data.datasets.base import Dataset, DatasetError, Record, hydrate_rows, record_row

BUILTIN = (*cleanlab.DATASETS, "synthetic", table_rebuild.NAME)


def load_dataset(
    name: str,
    *,
    data_dir: str | Path | None = None,
    schema: str | Path | None = None,
    input_col: str = "text",
    truth_col: str = "ground_truth",
    id_col: str | None = None,
    n: int = 40,
    seed: int = 0,
    prompt: str | None = None,
    kinds: list[str] | None = None,
) -> Dataset:
    """A dataset by name (``insurance_claims``, ``pii``, ``financial_ner``, ``data_table_analysis``,
    ``synthetic``, ``data_table_rebuild``) or a file path (CSV/JSONL with ``schema``).

    Benchmark data comes from ``data_dir`` when given, else from the Hugging Face Hub.
    ``n`` and ``seed`` size the synthetic set and the offline rebuild of the data-table set
    (:mod:`.table_rebuild`: not the benchmark's rows). ``prompt`` is the generation instruction
    (:mod:`.prompts`): ``None`` is the benchmark's for benchmark datasets and the package's
    for the others (which have no other); the choice is recorded in ``source["prompt"]``.
    ``kinds`` keeps only those document kinds of the synthetic set (:func:`.synthetic.generate`).
    """
    if kinds is not None and name != "synthetic":
        raise DatasetError(f"{name}: document kinds are a choice of the synthetic set only")
    if name in cleanlab.DATASETS:
        return cleanlab.load_dataset(name, data_dir, prompt=prompt)
    if name == table_rebuild.NAME:  # the data-table set's prompts: benchmark (default) or package
        return table_rebuild.generate(n, seed, prompt=prompt)
    if name == "synthetic":
        try:
            ds = synthetic.generate(n, seed, kinds)
        except ValueError as exc:
            raise DatasetError(str(exc)) from None
    elif Path(name).suffix or schema is not None:
        if schema is None:
            raise DatasetError(f"{name}: a dataset file needs --schema FILE (a JSON schema of the output)")
        ds = custom.load_file(name, schema, input_col=input_col, truth_col=truth_col, id_col=id_col)
    else:
        raise DatasetError(f"unknown dataset {name!r}; choose from {list(BUILTIN)} or give a CSV/JSONL file")
    try:
        ds.source["prompt"] = prompts.only_package(ds.name, prompt)
    except prompts.PromptChoiceError as exc:
        raise DatasetError(str(exc)) from None
    return ds


def reload_from_source(source: dict[str, Any], *, data_dir: str | Path | None = None) -> Dataset:
    """The dataset a run was made from, as its run.json ``source`` describes it.

    A benchmark run's prompt is the one its ``source`` names; a source without ``prompt``
    was recorded before the choice existed, with the package's prompt.
    """
    kind = source.get("kind")
    if kind == "synthetic":
        ds = synthetic.generate(int(source["n"]), int(source["seed"]), source.get("kinds"))
    elif kind == "cleanlab":
        hint = source.get("data_dir_hint")
        if data_dir is None and hint and Path(hint).is_dir():
            data_dir = hint  # where the run's documents were read from when it was made
        ds = cleanlab.load_dataset(
            source["name"], data_dir, prompt=source.get("prompt", prompts.RECORDED_BEFORE_CHOICE)
        )
    elif kind == "table_rebuild":
        ds = table_rebuild.generate(
            int(source["n"]), int(source["seed"]), prompt=source.get("prompt", prompts.RECORDED_BEFORE_CHOICE)
        )
    elif kind == "file":
        ds = custom.load_file(source["path"], source["schema"])
    else:
        raise DatasetError(f"run source {source!r} does not say how to load its documents")
    return ds


__all__ = [
    "BUILTIN",
    "Dataset",
    "DatasetError",
    "Record",
    "hydrate_rows",
    "load_dataset",
    "record_row",
    "reload_from_source",
]
