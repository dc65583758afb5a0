"""What every caption's facts share: how a number, a span of numbers, a run and a part's share
wrong are written, so that the detection, review, meaning, order and CONSTRUCT captions
(:mod:`.messages`, :mod:`.comparison_messages`) word them alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.paper import figure_data as fd


def run_words(d: str) -> str:
    """A run in a sentence: "financial NER with planted errors", "... with the generator's errors"."""
    name, how = dataset_label(d)
    how = how.split(",")[0]
    return f"{name} with {'the ' if how.startswith('generator') else ''}{how}"


def run_model(d: str) -> str:
    """The model a natural-error run generated with (and, in the paper comparison, every method
    scored with), as its makers write it ("Qwen2.5-Coder-1.5B"); "" for a run named otherwise."""
    parts = dataset_label(d)[1].split(", ")
    return parts[1] if len(parts) > 2 and parts[0] == "generator's errors" else ""


def num(value: Any, spec: str = ".3f") -> str:
    """A number as a caption writes it, by ``spec`` (three decimals unless named), from a table's text or a float:
    the one formatter the captions' facts go through."""
    return f"{fd._float(value):{spec}}"


def span(values: Sequence[float], fmt: str = ".3f") -> str:
    lo, hi = min(values), max(values)
    return f"{lo:{fmt}}" if f"{lo:{fmt}}" == f"{hi:{fmt}}" else f"{lo:{fmt}}-{hi:{fmt}}"


def share_facts(wrong: int, n: int, all_wrong: int, all_n: int) -> dict[str, Any]:
    """A part's share wrong beside the whole's, as ``_macros.md.j2``'s ``share_of`` words it ("123
    wrong: 50%, against 35% of all 350"), ``half`` where the part is half wrong (within one item) and
    the whole is not: chosen by label (a natural study judges its documents wrong and right
    alternately, ``studies/balanced_order.py``), so recall and precision on the part are at that
    share, not the run's."""
    return {
        "wrong": num(wrong, ",.0f"),
        "share": fd.pct_of(wrong, n),
        "all_share": fd.pct_of(all_wrong, all_n),
        "all_n": num(all_n, ",.0f"),
        "half": abs(2 * wrong - n) <= 1 and abs(all_wrong / all_n - 0.5) > 0.05 if n and all_n else False,
    }
