"""Which generation instruction a dataset gives: the benchmark's own, or the package's.

The paper's benchmark loader gives each of its four datasets a generation instruction
(research notes, section 8) that differs in substance from the prompts this package was first
written with: entity definitions and examples for financial entities, YYYY-MM-DD dates for
claims, every PII field present, the counting and typing rules for data tables. Both are kept:

- ``benchmark``: the benchmark's instructions, written in this package's own words
  (``specs/<dataset>.benchmark.txt``). The default for benchmark datasets: it is the
  paper's setting.
- ``package``: the package's own prompt (``system_prompt`` in ``specs/<dataset>.json``, the
  synthetic set's and a dataset file's prompt). The only prompt of the synthetic set and of
  a user's file, and the prompt of every run recorded before this choice existed.

The choice is recorded in the run's ``dataset.source.prompt`` (and the text in
``dataset.system_prompt``), so a run that refers to documents by id gets back the request
text it was judged on: a ``source`` without ``prompt`` is a run made with the package's
prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

BENCHMARK = "benchmark"
PACKAGE = "package"
CHOICES = (BENCHMARK, PACKAGE)
RECORDED_BEFORE_CHOICE = PACKAGE  # what a run.json without ``source.prompt`` was made with


class PromptChoiceError(ValueError):
    """A prompt choice that does not exist for a dataset (named in the message)."""


def benchmark_instruction(name: str) -> str | None:
    """The benchmark's generation instruction for dataset ``name`` in our words (None if it has none)."""
    res = resources.files("construct_eval.data.datasets") / "specs" / f"{name}.benchmark.txt"
    return res.read_text(encoding="utf-8").strip() if res.is_file() else None


def check_choice(choice: str) -> str:
    if choice not in CHOICES:
        raise PromptChoiceError(f"unknown prompt {choice!r}; choose from {list(CHOICES)}")
    return choice


def system_prompt_for(name: str, package_prompt: str, choice: str | None) -> tuple[str, str]:
    """The choice (``None``: the benchmark's where it has one, else the package's) and its text."""
    bench = benchmark_instruction(name)
    if choice is None:
        choice = BENCHMARK if bench is not None else PACKAGE
    check_choice(choice)
    if choice == PACKAGE:
        return choice, package_prompt
    if bench is None:
        raise PromptChoiceError(
            f"dataset {name!r} has no benchmark instructions (only benchmark datasets do): use --prompt {PACKAGE}"
        )
    return choice, bench


def only_package(name: str, choice: str | None) -> str:
    """The choice for a dataset that has only the package's prompt (synthetic set, a user's file)."""
    if choice not in (None, PACKAGE):
        check_choice(choice)
        raise PromptChoiceError(
            f"dataset {name!r} has no benchmark instructions (only benchmark datasets do): use --prompt {PACKAGE}"
        )
    return PACKAGE


def recorded_choice(meta: Mapping[str, Any]) -> str | None:
    """The prompt choice a run folder's run.json records (None when it records no dataset yet)."""
    dataset = meta.get("dataset")
    if not isinstance(dataset, Mapping):
        return None
    source = dataset.get("source")
    recorded = source.get("prompt") if isinstance(source, Mapping) else None
    return str(recorded) if recorded is not None else RECORDED_BEFORE_CHOICE
