"""The paper's own comparison on one run: CONSTRUCT against its three baselines.

Goh & Mueller (2026) claim that CONSTRUCT finds wrong outputs and fields with higher precision and
recall than an LLM judge per document, an LLM judge per field and the generator's token log-probs.
CONSTRUCT here is the ``construct`` scorer: the authors' open-source code (TLM 0.0.3) as
:mod:`construct_eval.scorers.construct` computes it, one absolute score per output and field.
This table puts it beside the baselines at each level, on the items *all of them* scored (so
every number of a level is on the same items, the same labels and the same document resamples),
with:

- AUROC, and precision and recall when reviewing the lowest-scored share of items, each with a
  document-bootstrap interval;
- paired differences, CONSTRUCT minus each other row, in AUROC and in recall at each review
  budget, with two-sided bootstrap p-values and the ranking they allow. Holm corrects them in two
  families fixed before any number is seen (:data:`PRIMARY_COMPARISONS`): the paper's claim,
  CONSTRUCT's AUROC against its three baselines at each level, and every other test (recall at a
  budget, the rows beside the paper's methods); each test's family is in ``<metric>_holm_family``. At one budget on the same items, every method reviews the same number of
  items and the items hold the same number of wrong ones, so in every resample precision is recall
  times one factor shared by the methods: the two differences have the same sign and p-value, and
  recall alone is tested.

Beside the paper's four methods the table keeps, where the run has them: CONSTRUCT with the
generator's own samples and token probability as TLM's other parts (``construct-gen``), the per-
field judge with its rating forced alone when the card's way (an explanation, then the rating)
also ran, and this package's batch rank combination of its reflection ensemble and
self-consistency, named as what it is (it ranks the items of a run; it is not CONSTRUCT).

Which of a run's scorers plays each method is decided by :func:`pick_methods` from the scorers'
identities and how the run's judge was asked (the card's recipe, an explanation then the rating,
before the rating forced alone): document scores, and field scores over top-level fields, as the
paper scores them, in the judge's default prompt order. A method the run did not score is listed
as not run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from construct_eval.kinds import Level
from construct_eval.numbers import interval
from construct_eval.power import MIN_CLASS_ITEMS, MIN_DOCUMENTS
from construct_eval.reports.collect import ScoredItems
from construct_eval.reports.tables import is_rating, rating_use
from construct_eval.scorer_labels import elicitation_label
from construct_eval.scorer_registry import CONSTRUCT as CONSTRUCT_SPEC
from construct_eval.scorer_registry import CONSTRUCT_GEN, JUDGE_DOC, JUDGE_FIELD, JUDGE_JOINT, TOKEN_LOGPROB
from construct_eval.stats.bias import holm
from construct_eval.stats.metrics import (
    REVIEW_BUDGETS,
    _interval,
    _review_draws,
    detection_summary,
    group_index,
    paired_p_value,
    review_lowest,
)
from construct_eval.stats.resampled import resampled_metrics
from construct_eval.types import ScorerId

CONSTRUCT = "construct"
"""The key of the method every other row is compared with."""
FORCED_FIELD_JUDGE = "judge-field-forced"
"""The per-field judge with its rating forced alone, kept beside the card's way where both ran."""

DEFAULT_BUDGETS = (0.1, 0.2)
"""The review budgets of the table: a tenth and a fifth of the items reviewed, lowest score first."""

CONSTANT_NOTE = (
    "one value on every item: it cannot order them, so it finds what reviewing at random finds"
    " (its AUROC is 0.5 by construction)"
)
"""The note of a method whose score is the same on every common item (a judge that rates every
document 10): its numbers are the base rate's, not a measure of the method. Its ``one_value``
column holds that score ("10"; empty for a method whose scores vary)."""

FORCED = "grammar:rating-only"
"""A judgment's ``constrained`` when the rating was forced alone, with no explanation before it."""

_DEFAULT_ORDER = "sec:r-s-o|fields:original"
_RANK_MEMBERS = {
    Level.DOCUMENT: {ScorerId.parse("reflection"), ScorerId.parse("consistency:mean")},
    Level.FIELD: {ScorerId.parse("reflection@top"), ScorerId.parse("consistency@top")},
}
"""The batch rank combination per level: the package's reflection ensemble and the mean agreement
of the samples, per document and per top-level field."""


@dataclass(frozen=True)
class PaperMethod:
    key: str
    label: str  # as the paper names it


PAPER_METHODS: tuple[PaperMethod, ...] = (
    PaperMethod(CONSTRUCT, "CONSTRUCT (the authors' TLM 0.0.3)"),
    PaperMethod("construct-gen", "CONSTRUCT with the generator's samples and token probability"),
    PaperMethod("judge-doc", "LLM judge per document"),
    PaperMethod("judge-field", "LLM judge per field"),
    PaperMethod(FORCED_FIELD_JUDGE, "LLM judge per field, rating forced alone"),
    PaperMethod("token-logprob", "token log-probs"),
    PaperMethod("rank-combination", "rank combination of reflection ensemble and self-consistency (not CONSTRUCT)"),
)
OPTIONAL = frozenset({"construct-gen", FORCED_FIELD_JUDGE, "rank-combination"})
PRIMARY_COMPARISONS = frozenset({"judge-doc", "judge-field", "token-logprob"})
"""The paper's claim, as a pre-specified Holm family: CONSTRUCT's AUROC against the judge per
document, the judge per field and the generator's token log-probs (at each level a run scores
them). Every other paired test of the table is the secondary family, corrected on its own."""
"""Rows shown only where the run has them (the others say "not run")."""


def asked(sid: ScorerId, primary: str) -> str:
    """How a judge scorer's ratings were asked for (a judgment's ``constrained``): a variant's
    ``ask:`` tag, else the run's own elicitation ``primary``, whose scorers keep their plain names."""
    for part in (sid.variant or "").split("|"):
        if part.startswith("ask:"):
            tag = part.removeprefix("ask:")
            return "none" if tag == "free" else tag
    return primary


def _default_order(sid: ScorerId) -> bool:
    return sid.variant is None or sid.variant.split("|ask:")[0] == _DEFAULT_ORDER


def _judge_rank(sid: ScorerId, primary: str) -> int:
    """The card's recipe first (free text), then an explanation under a grammar or schema, then the
    rating forced alone."""
    how = asked(sid, primary)
    return 0 if how == "none" else 2 if how == FORCED else 1


def method_of(sid: ScorerId, level: Level, granularity: str | None, primary: str) -> tuple[str, int] | None:
    """(the paper method ``sid`` plays at ``level``, its preference: lower first), or None."""
    if level is Level.FIELD and granularity != "top":
        return None  # the paper scores top-level fields; leaves and list items are other items
    if sid.is_combination:
        if sid.uses_labels or sid.method != "rank-mean" or set(sid.members) != _RANK_MEMBERS[level]:
            return None
        return "rank-combination", 0
    if sid.family in (CONSTRUCT_SPEC.family, CONSTRUCT_GEN.family) and sid.aggregate is None and sid.value is None:
        return sid.family, 0
    if sid.family == JUDGE_DOC.family and level is Level.DOCUMENT and sid.value is None and _default_order(sid):
        return "judge-doc", _judge_rank(sid, primary)
    field_judge = sid.family in (JUDGE_FIELD.family, JUDGE_JOINT.family) and sid.value is None and _default_order(sid)
    as_level = sid.aggregate is None if level is Level.FIELD else sid.aggregate == "min"  # a document's least field
    if field_judge and sid.granularity is None and as_level:
        return "judge-field", _judge_rank(sid, primary)
    if sid.family == TOKEN_LOGPROB.family and sid.aggregate is None:
        return "token-logprob", 0
    return None


def pick_methods(items: Sequence[ScoredItems], level: Level, primary: str = FORCED) -> dict[str, ScoredItems]:
    """Which of the run's scorers plays each paper method at ``level`` (a method with no candidate
    is absent). ``primary``: the run's own elicitation (``collect.elicitations``' first)."""
    chosen: dict[str, tuple[int, str, ScoredItems]] = {}
    for it in items:
        if it.level is not level or not it.n:
            continue
        found = method_of(it.scorer, level, it.granularity, primary)
        if found is None:
            continue
        key, rank = found
        if key == "judge-field" and rank == 2:  # forced: also a candidate for its own row
            forced = chosen.get(FORCED_FIELD_JUDGE)
            if forced is None or it.scorer.name < forced[1]:
                chosen[FORCED_FIELD_JUDGE] = (rank, it.scorer.name, it)
        best = chosen.get(key)
        if best is None or (rank, it.scorer.name) < best[:2]:
            chosen[key] = (rank, it.scorer.name, it)
    judge, forced = chosen.get("judge-field"), chosen.get(FORCED_FIELD_JUDGE)
    if forced is not None and (judge is None or judge[2] is forced[2]):
        del chosen[FORCED_FIELD_JUDGE]  # the forced judge is the per-field judge itself: one row
    return {k: v[2] for k, v in chosen.items()}


def how_asked(method: str, sid: ScorerId, level: Level, primary: str) -> str:
    """The row's words for which of the run's scores plays the method."""
    where = "per document" if level is Level.DOCUMENT else "per top-level field"
    if method == CONSTRUCT:
        return f"TLM's five reflection templates, self-reflection only (TLM.score as a user calls it), {where}"
    if method == "construct-gen":
        return f"the same reflections, the generator's samples and mean token probability as TLM's other parts, {where}"
    if method == "rank-combination":
        return f"rank mean over the run's items of the reflection ensemble and the samples' mean agreement, {where}"
    if method == "token-logprob":
        if level is Level.FIELD:
            return "the generator's geometric-mean token probability over each top-level field's value"
        return "the generator's token probabilities, the least over the document's leaf fields"
    how = asked(sid, primary)
    words = (
        "the paper's recipe: an explanation, then Rating: [[x]]"
        if how == "none"
        else "the rating forced alone"
        if how == FORCED
        else f"rating asked {elicitation_label(how)}"
    )
    if sid.family == JUDGE_JOINT.family:
        words += ", one call rating every top-level field ({field: {explanation, rating}})"
    elif method in ("judge-field", FORCED_FIELD_JUDGE):
        words += ", one call per top-level field"
        if level is Level.DOCUMENT:
            words += "; the document's least field rating"
    return words


def _common(methods: Mapping[str, ScoredItems]) -> list[tuple[str, str]]:
    keys: set[tuple[str, str]] | None = None
    for it in methods.values():
        these = set(zip(it.doc_ids, it.fields, strict=True))
        keys = these if keys is None else keys & these
    return sorted(keys or ())


def _on(it: ScoredItems, keys: Sequence[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    index = it.item_index()
    at = [index[k] for k in keys]
    y, s, _ = it.columns()
    return y[at], s[at]


def _pct(budget: float) -> str:
    return f"{budget * 100:g}%"


def _tests(budgets: Sequence[float]) -> list[tuple[str, float | None]]:
    """The paired tests of a row: (column prefix, review budget or None for AUROC)."""
    return [("auroc", None), *((f"recall@{_pct(b)}", b) for b in budgets)]


def _power(y: np.ndarray, docs: np.ndarray) -> str:
    """Why the items are too few to rank scores on ("" if they are not): each class needs
    :data:`MIN_CLASS_ITEMS` items in :data:`MIN_DOCUMENTS` documents (the bootstrap resamples
    documents)."""
    wrong, right = int(y.sum()), int(len(y) - y.sum())
    docs_wrong, docs_right = len(np.unique(docs[y == 1])), len(np.unique(docs[y == 0]))
    if min(wrong, right) < MIN_CLASS_ITEMS or min(docs_wrong, docs_right) < MIN_DOCUMENTS:
        return (
            f"{wrong} wrong items in {docs_wrong} documents, {right} right in {docs_right} "
            f"(< {MIN_CLASS_ITEMS} of a class or < {MIN_DOCUMENTS} documents with it)"
        )
    return ""


def paper_comparison(
    items: Sequence[ScoredItems],
    *,
    primary: str = FORCED,
    budgets: Sequence[float] = DEFAULT_BUDGETS,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per (level, paper method): what it finds on the items every method of the level
    scored, and, for every other row, CONSTRUCT minus it (see the module's docstring).
    ``primary`` is how the run's judge was first asked (its plain-named scorers' elicitation)."""
    budgets = tuple(float(b) for b in budgets)
    if len({_pct(b) for b in budgets}) != len(budgets):
        raise ValueError(f"review budgets {budgets} are not distinct at the table's precision")
    rows: list[dict[str, Any]] = []
    for level in (Level.DOCUMENT, Level.FIELD):
        methods = pick_methods(items, level, primary)
        keys = _common(methods)
        docs = group_index(np.asarray([d for d, _ in keys])) if keys else np.zeros(0, dtype=int)
        limiting = min(methods, key=lambda k: methods[k].n) if methods else None
        labels: np.ndarray | None = None
        draws: dict[str, dict[str, np.ndarray]] = {}
        level_rows = []
        for m in PAPER_METHODS:
            row: dict[str, Any] = {"level": level.value, "method": m.label, "key": m.key}
            level_rows.append(row)
            it = methods.get(m.key)
            if it is None and m.key in OPTIONAL:
                level_rows.pop()
                continue
            if it is None:
                whole = m.key == "judge-doc" and level is Level.FIELD
                row["note"] = "no field score: it rates whole documents" if whole else _absent(items, m.key, level)
                continue
            y, s = _on(it, keys)
            if labels is None:
                labels = y
            elif not np.array_equal(y, labels):
                raise ValueError(f"{it.scorer.name}: its labels differ from the other methods' on the same items")
            row.update(scorer=it.scorer.name, asked=how_asked(m.key, it.scorer, level, primary), n=len(y))
            row.update(documents=int(docs.max()) + 1 if len(docs) else 0, wrong=int(y.sum()))
            row.update(scored=it.n, unscored=it.unscored + it.failed, n_boot=n_boot, one_value="")
            if not keys:
                row["note"] = "no item was scored by every method of this level"
                continue
            if not 0 < y.sum() < len(y):
                row["note"] = "one class only on the common items: nothing to rank"
                continue
            summary = detection_summary(y, s, docs, budgets=budgets, n_boot=n_boot, seed=seed)
            hide = summary.hides_intervals
            nan = float("nan")
            row.update(auroc=summary.auroc.estimate)
            row.update(auroc_low=nan if hide else summary.auroc.low, auroc_high=nan if hide else summary.auroc.high)
            for b in budgets:
                r, (p_int, r_int) = summary.review[b], (summary.review_intervals or {})[b]
                for name, value, drawn in (("precision", r.precision, p_int), ("recall", r.recall, r_int)):
                    row[f"{name}@{_pct(b)}"] = value
                    row[f"{name}@{_pct(b)}_low"] = nan if hide else drawn.low
                    row[f"{name}@{_pct(b)}_high"] = nan if hide else drawn.high
            row["underpowered"] = "; ".join(x for x in (_power(y, docs), summary.power_note()) if x)
            row["dropped"] = summary.boot_dropped
            if len(np.unique(s)) == 1:
                row["one_value"] = f"{s[0]:g}"  # what every item got: a reader checks this, not the note
                row["note"] = CONSTANT_NOTE
            if is_rating(it.scorer):  # a written rating's values on the common items: a scale, or a threshold
                row["rating_use"] = rating_use([float(v) for v in s])
            draws[m.key] = resampled_metrics(y, s, docs, n_boot=n_boot, seed=seed, budgets=(*REVIEW_BUDGETS, *budgets))
        if limiting is not None and keys and any(methods[k].n > len(keys) for k in methods):
            for row in level_rows:
                if "n" in row:
                    row["common"] = (
                        f"{len(keys):,} items scored by every method; the fewest: {methods[limiting].scorer.name}"
                    )
        _paired(level_rows, draws, budgets)
        if labels is not None and 0 < labels.sum() < len(labels):
            _perfect(level_rows, labels, docs, budgets, n_boot=n_boot, seed=seed)
        rows += level_rows
    return _holm(rows, budgets)


def _perfect(
    rows: list[dict[str, Any]], y: np.ndarray, docs: np.ndarray, budgets: Sequence[float], *, n_boot: int, seed: int
) -> None:
    """What a perfect score (every wrong item below every right one) finds at each budget on a
    level's common items, with its interval on the same document resamples as the methods':
    ``recall@<b>_perfect`` (``_low``, ``_high``). A figure draws it as the ceiling; since in every
    resample no score finds more than it, no method's interval reaches past this one's."""
    perfect = 1.0 - y.astype(float)
    draws = resampled_metrics(y, perfect, docs, n_boot=n_boot, seed=seed, budgets=(*REVIEW_BUDGETS, *budgets))
    for b in budgets:
        interval = _interval(review_lowest(y, perfect, b).recall, _review_draws(draws, b)[1], 0.95)
        for row in rows:
            if "n" in row:
                row[f"recall@{_pct(b)}_perfect"] = interval.estimate
                row[f"recall@{_pct(b)}_perfect_low"] = interval.low
                row[f"recall@{_pct(b)}_perfect_high"] = interval.high


def _absent(items: Sequence[ScoredItems], key: str, level: Level) -> str:
    """Why no scorer plays ``key`` at ``level``: not run, or run only another way than the paper's."""
    family = {"judge-doc": JUDGE_DOC.family, "judge-field": JUDGE_FIELD.family, CONSTRUCT: CONSTRUCT_SPEC.family}.get(
        key
    )
    if family and any(i.scorer.family == family and i.n for i in items):
        return "run here only in another prompt order, reading or granularity than the paper's"
    return "not run at this level"


def _paired(
    rows: list[dict[str, Any]], draws: Mapping[str, Mapping[str, np.ndarray]], budgets: Sequence[float]
) -> None:
    """CONSTRUCT minus each other row of one level, on the same resamples."""
    ref = draws.get(CONSTRUCT)
    ref_row = next((r for r in rows if r["key"] == CONSTRUCT), None)
    for row in rows:
        if row["key"] == CONSTRUCT or row["key"] not in draws:
            continue
        if ref is None or ref_row is None:
            notes = (row.get("note", ""), "CONSTRUCT not scored at this level: no paired difference")
            row["note"] = "; ".join(x for x in notes if x)
            continue
        mine = draws[row["key"]]
        row["unpowered"] = row["underpowered"] or ref_row["underpowered"]
        for name, budget in _tests(budgets):
            if budget is None:
                d = ref["auroc"] - mine["auroc"]
            else:
                d = _review_draws(ref, budget)[1] - _review_draws(mine, budget)[1]
            interval = _interval(ref_row[name] - row[name], d, 0.95)
            row.update({f"{name}_diff": interval.estimate, f"{name}_diff_low": interval.low})
            row.update({f"{name}_diff_high": interval.high, f"{name}_p": paired_p_value(d)})


def holm_family(row: Mapping[str, Any], name: str) -> str:
    """The Holm family of a row's paired test ``name`` (``auroc``, ``recall@10%``, ...): ``primary``
    for the paper's claim (:data:`PRIMARY_COMPARISONS`, AUROC), ``secondary`` for every other."""
    return "primary" if name == "auroc" and row["key"] in PRIMARY_COMPARISONS else "secondary"


def family_tests(rows: Sequence[Mapping[str, Any]], family: str) -> int:
    """How many paired tests of a stored table's rows Holm corrected in ``family`` (a table made
    before the families has no family column: every test is then one family, ``""``)."""
    return sum(
        1
        for r in rows
        for k, v in r.items()
        if k.endswith("_p_holm")
        and str(v or "").strip()
        and r.get(k.removesuffix("_p_holm") + "_holm_family", "") == family
    )


def _holm(rows: list[dict[str, Any]], budgets: Sequence[float]) -> list[dict[str, Any]]:
    """Holm within each family (:func:`holm_family`, both levels together), and the ranking each
    test allows: a direction only on powered items (:func:`_power`, and an interval whose resamples
    nearly all had both classes), where the interval excludes 0 *and* the Holm p is below 0.05."""
    tests = [(r, name) for r in rows for name, _ in _tests(budgets) if f"{name}_p" in r]
    adjusted: dict[int, float] = {}
    for family in ("primary", "secondary"):
        mine = [i for i, (r, name) in enumerate(tests) if holm_family(r, name) == family]
        ps = [tests[i][0][f"{tests[i][1]}_p"] for i in mine]
        adjusted.update(zip(mine, holm([1.0 if p != p else p for p in ps]), strict=True))
    for i, (r, name) in enumerate(tests):
        p, p_holm = r[f"{name}_p"], adjusted[i]
        r[f"{name}_p_holm"] = p_holm
        r[f"{name}_holm_family"] = holm_family(r, name)
        if r["unpowered"]:
            verdict = "none: underpowered"
        elif p != p:
            verdict = "none: no resample had both classes"
        elif r[f"{name}_diff_low"] <= 0 <= r[f"{name}_diff_high"]:
            verdict = "none: the interval holds 0"
        elif p_holm >= 0.05:
            verdict = "none after Holm"
        else:
            verdict = "CONSTRUCT higher" if r[f"{name}_diff_low"] > 0 else "CONSTRUCT lower"
        r[f"{name}_ranking"] = verdict
    return rows


# --------------------------------------------------------------------------- the reader's table


def _ci(row: Mapping[str, Any], name: str) -> str:
    if name not in row:
        return ""
    low, high = row.get(f"{name}_low", float("nan")), row.get(f"{name}_high", float("nan"))
    return interval(row[name], low, high)


def _p(p: float) -> str:
    """A bootstrap p-value (never 0: :func:`~construct_eval.stats.metrics.paired_p_value`)."""
    return "n/a" if p != p else f"{p:.3f}"


def display_rows(rows: Sequence[Mapping[str, Any]], budgets: Sequence[float] = DEFAULT_BUDGETS) -> list[dict[str, str]]:
    """The table as a reader reads it: one column per quantity, intervals beside their numbers."""
    out = []
    for r in rows:
        d = {
            "level": r["level"],
            "method": r["method"],
            "how it was asked": r.get("asked", ""),
            "items (documents, wrong)": f"{r['n']:,} ({r['documents']:,}, {r['wrong']:,})" if "n" in r else "",
            "AUROC": _ci(r, "auroc"),
        }
        for b in budgets:
            key = f"recall@{_pct(b)}"
            both = f"{_ci(r, f'precision@{_pct(b)}')} / {_ci(r, key)}" if key in r else ""
            d[f"precision / recall, {_pct(b)} reviewed"] = both
        for name, _ in _tests(budgets):
            cell = ""
            if f"{name}_diff" in r:
                low, high = r[f"{name}_diff_low"], r[f"{name}_diff_high"]
                p = _p(r[f"{name}_p_holm"])
                cell = f"{interval(r[f'{name}_diff'], low, high, spec='+.3f', bounds='+.3f')}, Holm p {p}: {r[f'{name}_ranking']}"
            what = "AUROC" if name == "auroc" else name.replace("recall@", "recall at ")
            d[f"CONSTRUCT minus it: {what}"] = cell
        notes = (r.get("underpowered", ""), r.get("note", ""), r.get("common", ""))
        d["note"] = "; ".join(x for x in notes if x)
        out.append(d)
    return out
