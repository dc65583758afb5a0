"""Field-level detection within output kinds: fields the output left null or empty, and fields
with a value.

A pooled field AUROC mixes two populations that a score can read very differently. A judge that
rates every empty entity list 1 ("nothing extracted") and every filled one 10 ranks the empty
fields first; when most empty fields are right (the sentence names no such entity) that pooled
AUROC falls below 0.5 although, within filled fields, the same ratings may still find the wrong
ones. The table says how much of a pooled number is this mix, with intervals per kind, and
:func:`output_kind_pairs` compares scorers within each kind, paired, on the same fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np

from construct_eval.fields import FieldPath, get_at, is_empty, parse_path
from construct_eval.reports.collect import FIELD_PRIOR, ScoredItems
from construct_eval.reports.tables import compare_scorers, holm_rankings, score_use
from construct_eval.stats import delong
from construct_eval.stats.count_metrics import mid_ranks
from construct_eval.stats.metrics import auroc_interval

EMPTY = "null or empty"
VALUE = "value"
KINDS = (EMPTY, VALUE)


def output_kind(value: Any) -> str:
    """``"null or empty"`` for a missing key, ``null``, ``""``, ``[]`` or ``{}``; else ``"value"``."""
    return EMPTY if is_empty(value) else VALUE


def kinds_of(
    it: ScoredItems, outputs: Mapping[str, Any], known: dict[tuple[str, str], str | None] | None = None
) -> list[str | None]:
    """The output kind of each of ``it``'s items (``None`` where the document has no output).

    ``known`` keeps the kind of each (document, field) already read: the scorers of a run share
    their items, so a table reads each once (and each distinct path is parsed once)."""
    known = {} if known is None else known
    out: list[str | None] = []
    for item in zip(it.doc_ids, it.fields, strict=True):
        kind = known.get(item, _UNREAD)
        if kind is _UNREAD:
            doc_id, path = item
            kind = output_kind(get_at(outputs[doc_id], _parsed(path))) if doc_id in outputs else None
            known[item] = kind
        out.append(kind)
    return out


_UNREAD: Any = object()


def attach_kinds(items: Sequence[ScoredItems], outputs: Mapping[str, Any]) -> None:
    """Give each field-level item set its items' output kinds (:attr:`ScoredItems.kinds`), read
    from ``outputs`` (each document's output) once per (document, field) for all of them."""
    known: dict[tuple[str, str], str | None] = {}
    for it in items:
        if it.level == "field" and it.n:
            it.kinds = np.array([k or "" for k in kinds_of(it, outputs, known)])


@lru_cache(maxsize=1 << 16)
def _parsed(path: str) -> FieldPath:
    return parse_path(path)


def output_kind_table(
    items: Sequence[ScoredItems], *, n_boot: int = 1000, seed: int = 0, intervals: str = "bootstrap"
) -> list[dict[str, Any]]:
    """One row per field-level scorer and kind (``all``, then each kind): n, wrong share,
    AUROC with its document-bootstrap interval, and for a rating how it uses the scale within
    the kind. A kind with one class only has no AUROC. Last per scorer, the exploratory
    :data:`RANKED_WITHIN_KIND` row, with its paired difference from the field prior (a baseline
    that uses the labels) on the same fields where the table holds one at that granularity.
    Each field-level item set carries its items' kinds (:func:`attach_kinds`). ``intervals``: the
    AUROC intervals and paired differences by the document bootstrap, or by the clustered DeLong
    estimator where :func:`construct_eval.stats.delong.choose` takes it for a row's items (the row
    then says ``intervals: delong`` and draws no resamples)."""
    priors = {i.granularity: i for i in items if i.level == "field" and i.n and i.scorer.family == FIELD_PRIOR}
    rows: list[dict[str, Any]] = []
    for it in items:
        if it.level != "field" or not it.n:
            continue
        y, s, g = it.columns()
        item_kinds = it.read_kinds()
        for kind in ("all", *KINDS):
            mask = np.ones(len(y), dtype=bool) if kind == "all" else item_kinds == kind
            use = {"rating_use": u} if (u := score_use(it.scorer, s[mask].tolist())) else {}
            rows.append(
                _auroc_row(it, kind, y[mask], s[mask], g[mask], use, n_boot=n_boot, seed=seed, intervals=intervals)
            )
        prior = priors.get(it.granularity)
        rows.append(_ranked_within_kind(it, y, s, g, item_kinds, prior, n_boot=n_boot, seed=seed, intervals=intervals))
    return rows


def _auroc_row(
    it: ScoredItems,
    fields: str,
    y: np.ndarray,
    s: np.ndarray,
    g: np.ndarray,
    extra: Mapping[str, Any],
    *,
    n_boot: int,
    seed: int,
    intervals: str = "bootstrap",
) -> dict[str, Any]:
    """A table row for ``it``'s items ``y, s, g`` (one kind, or all): n, wrong, ``extra``, then the
    AUROC with its interval (:func:`output_kind_table`'s ``intervals``), or why there is none."""
    row: dict[str, Any] = {
        "scorer": it.scorer.name,
        "granularity": it.granularity or "",
        "fields": fields,
        "n": len(y),
        "wrong": int(y.sum()),
        **extra,
    }
    if row["n"] and 0 < row["wrong"] < row["n"]:
        method = delong.choose(intervals, y, g)
        found = auroc_interval(y, s, g, n_boot=n_boot, seed=seed, intervals=method)
        row.update(
            prevalence=round(float(y.mean()), 4),
            auroc=round(found.estimate, 4),
            auroc_low=round(found.low, 4),
            auroc_high=round(found.high, 4),
        )
        if method == "delong":
            row["intervals"] = "delong"
    else:
        row.update(prevalence=round(float(y.mean()), 4) if row["n"] else float("nan"))
        row["note"] = "one class only: no AUROC" if row["n"] else "no items"
    return row


RANKED_WITHIN_KIND = "all, ranked within kind"
"""The exploratory row: each score replaced by its percentile among fields of its own kind."""


def within_kind_percentiles(scores: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    """Each score's mid-rank percentile among the items of its kind (ties share one): a label-free
    reading (the kind comes from the output) that puts each kind's least trusted fields first
    together, instead of one kind's whole range before the other's."""
    out = np.full(len(scores), np.nan)
    for kind in np.unique(kinds):
        mask = kinds == kind
        out[mask] = (mid_ranks(scores[mask]) - 0.5) / mask.sum()
    return out


def _ranked_within_kind(
    it: ScoredItems,
    y: np.ndarray,
    s: np.ndarray,
    g: np.ndarray,
    kinds: np.ndarray,
    prior: ScoredItems | None,
    *,
    n_boot: int,
    seed: int,
    intervals: str = "bootstrap",
) -> dict[str, Any]:
    """The pooled AUROC of the within-kind percentiles, and its paired difference from the
    pooled AUROC of the raw score on the same fields, and from the field prior's (``prior``,
    which knows each field's error rate from the labels) where given and ``it`` uses no labels
    itself: a label-free reading has to beat the label-using baseline to say more than which
    field an item is. Exploratory:
    this reading was chosen after the split showed a judge that reads empty fields differently."""
    from construct_eval.stats.metrics import compare_scores, group_index

    known = kinds != ""
    y, s, g = y[known], s[known], g[known]
    ranked = within_kind_percentiles(s, kinds[known])
    row = _auroc_row(it, RANKED_WITHIN_KIND, y, ranked, g, {}, n_boot=n_boot, seed=seed, intervals=intervals)
    if "auroc" not in row:
        return row
    if row.get("intervals") == "delong":
        diff: Any = delong.paired_difference(y, ranked, s, g)[0]
    else:
        diff = compare_scores(y, ranked, s, g, n_boot=n_boot, seed=seed).difference
    row |= {
        "minus_pooled": round(diff.estimate, 4),
        "minus_pooled_low": round(diff.low, 4),
        "minus_pooled_high": round(diff.high, 4),
    }
    uses_labels = it.scorer.uses_labels
    if prior is not None and not uses_labels:
        keep = np.flatnonzero(known)
        ranked_items = replace(
            it,
            doc_ids=[it.doc_ids[i] for i in keep],
            fields=[it.fields[i] for i in keep],
            wrong=[it.wrong[i] for i in keep],
            scores=ranked.tolist(),
        )
        ranked_items.set_columns(y.astype(float), ranked.astype(float), group_index(g))  # g: the kept items' codes
        against = compare_scorers(ranked_items, prior, n_boot=n_boot, seed=seed, intervals=intervals)
        if "difference" in against and against["n"] == len(keep):
            row |= {
                "minus_prior": round(against["difference"], 4),
                "minus_prior_low": round(against["low"], 4),
                "minus_prior_high": round(against["high"], 4),
            }
    row["note"] = "exploratory: chosen after seeing the split; the ranking within kind uses no labels" + (
        "; the scorer itself does" if uses_labels else ""
    )
    return row


def output_kind_pairs(
    items: Sequence[ScoredItems],
    reference: str,
    *,
    scorers: Sequence[str] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Each field-level scorer against ``reference`` within each output kind: the paired AUROC
    difference on the fields of that kind both scored, Holm across the whole table (every kind
    and scorer one family), and the ranking it allows. A pooled difference can hide opposite
    ones within the kinds; a claim about filled fields needs this table, not two AUROCs. Each
    field-level item set carries its items' kinds (:func:`attach_kinds`)."""
    by_name = {i.scorer: i for i in items if i.level == "field" and i.n}
    if reference not in by_name:
        raise ValueError(f"no field-level scorer {str(reference)!r}; have {[s.name for s in sorted(by_name)]}")
    names = [n for n in (scorers or sorted(by_name)) if n != reference and n in by_name]
    split = {name: {kind: by_name[name].of_kind(kind) for kind in KINDS} for name in [reference, *names]}
    rows = [
        {"fields": kind, **compare_scorers(split[name][kind], split[reference][kind], n_boot=n_boot, seed=seed)}
        for kind in KINDS
        for name in names
    ]
    return holm_rankings(rows)
