"""How many documents hold a wrong and a right item of each score: the power rule's second half.

An AUROC's document-bootstrap interval means little when the wrong items sit in a handful of
documents, however many items there are; the paper figures draw a row only where at least ten
documents hold a wrong item and ten a right one (:func:`~construct_eval.paper.figure_data.row_powered`).
``evaluate`` stores the counts as ``metrics/document_classes.csv`` so that the figure layer reads
them: per (level, scorer), over every item (``fields`` empty) and, for a field score whose outputs
can be rebuilt, within each output kind (``fields``: ``value`` or ``null or empty``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from construct_eval.reports.collect import ScoredItems
from construct_eval.reports.output_kinds import KINDS


def _classes(docs: Sequence[str], wrong: Sequence[Any]) -> tuple[int, int]:
    """(documents with a wrong item, documents with a right item)."""
    return len({d for d, w in zip(docs, wrong, strict=True) if w}), len(
        {d for d, w in zip(docs, wrong, strict=True) if not w}
    )


def document_classes_table(items: Sequence[ScoredItems]) -> list[dict[str, Any]]:
    """A row per (level, scorer) over all its labelled items, then, for a field score whose items
    carry their output kinds (:attr:`~construct_eval.reports.collect.ScoredItems.kinds`), a row
    per kind: ``docs_wrong`` and ``docs_right``."""
    rows: list[dict[str, Any]] = []
    for it in items:
        wrong, right = _classes(it.doc_ids, it.wrong)
        rows.append({"level": it.level.value, "scorer": str(it.scorer), "fields": "", "docs_wrong": wrong,
                     "docs_right": right})  # fmt: skip
    for it in items:
        if it.kinds is None or it.level != "field":
            continue
        for kind in KINDS:
            part = it.of_kind(kind)
            wrong, right = _classes(part.doc_ids, part.wrong)
            rows.append({"level": "field", "scorer": str(it.scorer), "fields": kind, "docs_wrong": wrong,
                         "docs_right": right})  # fmt: skip
    return rows
