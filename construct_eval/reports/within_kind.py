"""What a field score knows within one kind of field: the two tables the paper figures read.

A pooled field AUROC mixes fields an output filled with fields it left null or empty, and fields
the judge rates very differently (:mod:`~construct_eval.reports.output_kinds`). Two questions
follow that no pooled table answers, and ``evaluate`` stores their answers beside the run's other
tables so that the figure layer and the findings only read them:

- ``metrics/within_field.csv`` (:func:`within_field_table`): for each of the judge's label-free
  field scores, per field (top-level, or leaf with its list indices dropped), its AUROC among the
  values the output filled, with a document-bootstrap interval: what the score knows about a
  field's values beyond which field they are in (a score that only ranked fields by how often they
  are wrong finds nothing here).
- ``metrics/values_by_output_kind.csv`` (:func:`values_by_output_kind_table`): for each written
  field rating, what each of its values means as an error rate within the filled fields and
  within the empty ones, with the naive reading and the out-of-fold isotonic and Platt readings
  fitted within that kind (:func:`~construct_eval.stats.rating_readings.rating_maps`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from construct_eval.power import MIN_CLASS_ITEMS
from construct_eval.reports.collect import ScoredItems, field_key
from construct_eval.reports.output_kinds import KINDS, VALUE
from construct_eval.stats.calibration import naive_rating_reading, value_table
from construct_eval.stats.metrics import detection_summary
from construct_eval.stats.rating_readings import rating_maps


def items_of_kind(it: ScoredItems, kind: str) -> tuple[list[str], list[str], list[bool], list[float]]:
    """``it``'s items of one output kind (:meth:`~construct_eval.reports.collect.ScoredItems.of_kind`)
    as plain lists: (documents, fields, wrong, scores), in item order."""
    part = it.of_kind(kind)
    return part.doc_ids, part.fields, [bool(w) for w in part.wrong], [float(s) for s in part.scores]


def _judge_field_scores(items: Sequence[ScoredItems]) -> list[ScoredItems]:
    """The field-level item sets that carry their output kinds."""
    return [it for it in items if it.level == "field" and it.n and it.kinds is not None]


JUDGE_OWN = frozenset({"p-correct"})
"""Families of the judge's own scores beside its ratings (P(correct) from its yes/no verdict)."""


def _judges(it: ScoredItems) -> bool:
    """A label-free score of the judge's own: a rating, its expected rating or field minimum, P(correct)."""
    sid = it.scorer
    return (sid.is_judge or sid.family in JUDGE_OWN) and not sid.uses_labels and not sid.is_combination


def within_field_table(items: Sequence[ScoredItems], *, n_boot: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """Per label-free field score of the judge's own (:func:`_judges`) and field, its AUROC among the values the output filled
    (each item set carries its output kinds, :attr:`~construct_eval.reports.collect.ScoredItems.kinds`).
    ``powered``: at least :data:`~construct_eval.power.MIN_CLASS_ITEMS` wrong and right
    values and as many documents with a wrong one; ``constant``: one score on every value; no AUROC
    where every value is wrong or every one right."""
    rows: list[dict[str, Any]] = []
    for it in _judge_field_scores(items):
        if not _judges(it):
            continue
        docs, fields, wrong, scores = items_of_kind(it, VALUE)
        groups: dict[str, list[int]] = {}
        for i, f in enumerate(fields):
            groups.setdefault(field_key(f), []).append(i)
        mine = []
        for name, idx in groups.items():
            y = [wrong[i] for i in idx]
            s = [scores[i] for i in idx]
            n, w = len(idx), sum(y)
            row: dict[str, Any] = {
                "scorer": str(it.scorer), "field": name, "n": n, "wrong": w, "constant": len(set(s)) == 1,
                "auroc": float("nan"), "auroc_low": float("nan"), "auroc_high": float("nan"),
                "powered": w >= MIN_CLASS_ITEMS and n - w >= MIN_CLASS_ITEMS
                and len({docs[i] for i in idx if wrong[i]}) >= MIN_CLASS_ITEMS,
            }  # fmt: skip
            if 0 < w < n:
                a = detection_summary(y, s, [docs[i] for i in idx], n_boot=n_boot, seed=seed).auroc
                row.update(auroc=a.estimate, auroc_low=a.low, auroc_high=a.high)
            mine.append(row)
        rows += sorted(mine, key=lambda r: r["field"])
    return rows


def values_by_output_kind_table(items: Sequence[ScoredItems], *, seed: int = 0) -> list[dict[str, Any]]:
    """Per written field rating and output kind (``fields``: ``value`` or ``null or empty``), a
    row per rating value: items, wrong, the error rate with its Wilson interval, ``few_items``, the
    naive reading, and the isotonic and Platt readings fitted out of fold within that kind where
    they fit (:func:`~construct_eval.stats.calibration.value_table`, as a run's pooled value table)."""
    rows: list[dict[str, Any]] = []
    for it in _judge_field_scores(items):
        if not it.scorer.is_written_rating:
            continue
        for kind in KINDS:
            docs, _, wrong, scores = items_of_kind(it, kind)
            if not scores:
                continue
            table = value_table(scores, wrong, naive=naive_rating_reading)
            maps = rating_maps(scores, wrong, docs, seed=seed)
            rows += [{"scorer": str(it.scorer), "fields": kind, **r, **maps.get(float(r["value"]), {})} for r in table]
    return rows
