"""The paper's own comparison on one run: CONSTRUCT-style scoring against its three baselines.

Goh & Mueller (2026) claim that CONSTRUCT (self-reflection plus sampled-answer consistency) finds
wrong outputs and fields with higher precision and recall than an LLM judge per document, an LLM
judge per field and the generator's token log-probs. This table puts those four methods side by
side at each level, on the items *all of them* scored (so every number of a level is on the same
items and the same document resamples), with:

- AUROC, and precision and recall when reviewing the lowest-scored share of items, each with a
  document-bootstrap interval;
- paired differences, CONSTRUCT-style minus each baseline, in AUROC and in recall at each review
  budget (on the same items and budget, precision moves with recall: both are the wrong items
  found divided by a count the methods share), with two-sided bootstrap p-values Holm-corrected
  over every test of the table, and the ranking they allow.

Which of a run's scorers plays each method is decided by :func:`pick_methods` from the scorers'
identities (the card's recipe for the document judge where the run asked it, else the forced
rating, said in the row). A method the run did not score is listed as not run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from construct_eval.analysis.bias import holm
from construct_eval.analysis.collect import ScoredItems
from construct_eval.analysis.metrics import (
    MIN_CLASS_ITEMS,
    MIN_DOCUMENTS,
    REVIEW_BUDGETS,
    _review_draws,
    detection_summary,
    group_index,
)
from construct_eval.analysis.resampled import resampled_metrics
from construct_eval.scorer_registry import CONSISTENCY, JUDGE_DOC, JUDGE_FIELD, REFLECTION, TOKEN_LOGPROB
from construct_eval.types import Level, ScorerId

CONSTRUCT = "construct"
"""The key of the method every baseline is compared with."""

DEFAULT_BUDGETS = (0.1, 0.2)
"""The review budgets of the table: a tenth and a fifth of the items reviewed, lowest score first."""

_DEFAULT_ORDER = "sec:r-s-o|fields:original"


@dataclass(frozen=True)
class PaperMethod:
    """One of the paper's four methods: its key, its name as the paper gives it, and which of a
    run's scorers plays it at each level (``rank`` gives a candidate's preference, lower first,
    or None when the scorer is not this method there)."""

    key: str
    label: str
    rank: Callable[[ScorerId, Level, str | None], int | None]


def _default_order(sid: ScorerId) -> bool:
    return sid.variant is None or sid.variant.startswith(_DEFAULT_ORDER)


def _asked_free(sid: ScorerId) -> bool:
    return sid.variant is not None and "ask:free" in sid.variant.split("|")


def _construct(sid: ScorerId, level: Level, granularity: str | None) -> int | None:
    if not sid.is_combination or sid.uses_labels or sid.method != "rank-mean":
        return None
    if {m.family for m in sid.members} != {REFLECTION.family, CONSISTENCY.family} or len(sid.members) != 2:
        return None
    return 0 if level is Level.DOCUMENT or granularity == "top" else 1


def _judge_doc(sid: ScorerId, level: Level, granularity: str | None) -> int | None:
    if level is not Level.DOCUMENT or sid.family != JUDGE_DOC.family or sid.value or not _default_order(sid):
        return None
    return 0 if _asked_free(sid) else 1  # the card's recipe (an explanation, then the rating) first


def _judge_field(sid: ScorerId, level: Level, granularity: str | None) -> int | None:
    if sid.family != JUDGE_FIELD.family or sid.value or not _default_order(sid) or _asked_free(sid):
        return None
    if level is Level.DOCUMENT:
        return 0 if sid.aggregate == "min" and sid.granularity in (None, "top") else None
    return 0 if granularity == "top" else 1


def _token_logprob(sid: ScorerId, level: Level, granularity: str | None) -> int | None:
    if sid.family != TOKEN_LOGPROB.family:
        return None
    if level is Level.DOCUMENT:
        return 0 if sid.aggregate is None else None
    return 0 if granularity == "top" else 1


PAPER_METHODS: tuple[PaperMethod, ...] = (
    PaperMethod(CONSTRUCT, "CONSTRUCT-style (reflection + self-consistency)", _construct),
    PaperMethod("judge-doc", "LLM judge per document", _judge_doc),
    PaperMethod("judge-field", "LLM judge per field", _judge_field),
    PaperMethod("token-logprob", "token log-probs", _token_logprob),
)


def how_asked(method: str, sid: ScorerId, level: Level) -> str:
    """The row's note on which of the run's scores plays the method."""
    if method == CONSTRUCT:
        return "rank mean of the reflection ensemble and self-consistency"
    if method == "judge-doc":
        return "the card's recipe: an explanation, then Rating: [[x]]" if _asked_free(sid) else "rating forced"
    if method == "judge-field":
        base = "rating forced, one call per field"
        return f"{base}; a document's least field rating" if level is Level.DOCUMENT else base
    if level is Level.FIELD:
        return "the generator's geometric-mean token probability over the field's value"
    return "the generator's token probabilities: the least over the document's leaf fields"


def pick_methods(items: Sequence[ScoredItems], level: Level) -> dict[str, ScoredItems]:
    """Which of the run's scorers plays each paper method at ``level`` (a method with no
    candidate is absent); field scores over top-level fields are preferred, as the paper scores."""
    chosen: dict[str, tuple[int, str, ScoredItems]] = {}
    for it in items:
        if it.level is not level or not it.n:
            continue
        for m in PAPER_METHODS:
            r = m.rank(it.scorer, level, it.granularity)
            if r is None:
                continue
            best = chosen.get(m.key)
            if best is None or (r, it.scorer.name) < best[:2]:
                chosen[m.key] = (r, it.scorer.name, it)
    return {k: v[2] for k, v in chosen.items()}


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


def _p_two_sided(diffs: np.ndarray) -> float:
    ok = diffs[~np.isnan(diffs)]
    return float(min(1.0, 2 * min((ok <= 0).mean(), (ok >= 0).mean()))) if len(ok) else float("nan")


def _interval(samples: np.ndarray) -> tuple[float, float]:
    ok = samples[~np.isnan(samples)]
    if not len(ok):
        return float("nan"), float("nan")
    lo, hi = np.quantile(ok, [0.025, 0.975])
    return float(lo), float(hi)


def _pct(budget: float) -> str:
    return f"{round(budget * 100)}%"


def paper_comparison(
    items: Sequence[ScoredItems],
    *,
    budgets: Sequence[float] = DEFAULT_BUDGETS,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per (level, paper method): what it finds on the items every method of the level
    scored, and, for the baselines, CONSTRUCT-style minus it (see the module's docstring)."""
    budgets = tuple(float(b) for b in budgets)
    rows: list[dict[str, Any]] = []
    for level in (Level.DOCUMENT, Level.FIELD):
        methods = pick_methods(items, level)
        keys = _common(methods)
        docs = group_index(np.asarray([d for d, _ in keys])) if keys else np.zeros(0, dtype=int)
        draws: dict[str, dict[str, np.ndarray]] = {}
        for m in PAPER_METHODS:
            row: dict[str, Any] = {"level": level.value, "method": m.label, "key": m.key}
            it = methods.get(m.key)
            if it is None:
                whole = m.key == "judge-doc" and level is Level.FIELD
                row["note"] = "no field score: it rates whole documents" if whole else "not run at this level"
                rows.append(row)
                continue
            y, s = _on(it, keys)
            row.update(scorer=it.scorer.name, asked=how_asked(m.key, it.scorer, level), n=len(y))
            row.update(documents=int(docs.max()) + 1 if len(docs) else 0, wrong=int(y.sum()))
            if not 0 < y.sum() < len(y):
                row["note"] = "one class only on the common items: nothing to rank"
                rows.append(row)
                continue
            summary = detection_summary(y, s, docs, budgets=budgets, n_boot=n_boot, seed=seed)
            row.update(auroc=summary.auroc.estimate, auroc_low=summary.auroc.low, auroc_high=summary.auroc.high)
            for b in budgets:
                r, (p_int, r_int) = summary.review[b], (summary.review_intervals or {})[b]
                row.update(
                    {
                        f"precision@{_pct(b)}": r.precision,
                        f"precision@{_pct(b)}_low": p_int.low,
                        f"precision@{_pct(b)}_high": p_int.high,
                        f"recall@{_pct(b)}": r.recall,
                        f"recall@{_pct(b)}_low": r_int.low,
                        f"recall@{_pct(b)}_high": r_int.high,
                    }
                )
            row["underpowered"] = summary.power_note()
            draws[m.key] = resampled_metrics(y, s, docs, n_boot=n_boot, seed=seed, budgets=(*REVIEW_BUDGETS, *budgets))
            rows.append(row)
        _paired(rows, level, draws, budgets)
    return _holm(rows, budgets)


def _metrics(budgets: Sequence[float]) -> list[str]:
    return ["auroc", *(f"recall@{_pct(b)}" for b in budgets)]


def _paired(
    rows: list[dict[str, Any]], level: Level, draws: Mapping[str, Mapping[str, np.ndarray]], budgets: Sequence[float]
) -> None:
    """CONSTRUCT-style minus each baseline of ``level``, on the same resamples."""
    ref = draws.get(CONSTRUCT)
    ref_row = next((r for r in rows if r["level"] == level.value and r["key"] == CONSTRUCT), None)
    for row in rows:
        if row["level"] != level.value or row["key"] == CONSTRUCT or row["key"] not in draws:
            continue
        if ref is None or ref_row is None:
            row.setdefault("note", "CONSTRUCT-style not scored at this level: no paired difference")
            continue
        mine = draws[row["key"]]
        for metric in _metrics(budgets):
            if metric == "auroc":
                d, point = ref["auroc"] - mine["auroc"], ref_row["auroc"] - row["auroc"]
            else:
                b = float(metric.split("@")[1].rstrip("%")) / 100
                d, point = _review_draws(ref, b)[1] - _review_draws(mine, b)[1], ref_row[metric] - row[metric]
            low, high = _interval(d)
            row.update({f"{metric}_diff": point, f"{metric}_diff_low": low, f"{metric}_diff_high": high})
            row[f"{metric}_p"] = _p_two_sided(d)


def _holm(rows: list[dict[str, Any]], budgets: Sequence[float]) -> list[dict[str, Any]]:
    """Holm over every paired test of the table (both levels, every metric), and the ranking each
    allows: a direction only where the interval excludes 0 *and* the Holm p is below 0.05 on a
    powered row."""
    tests = [(r, m) for r in rows for m in _metrics(budgets) if f"{m}_p" in r]
    for (r, m), adjusted in zip(tests, holm([r[f"{m}_p"] for r, m in tests]), strict=True):
        r[f"{m}_p_holm"] = adjusted
        if min(r["wrong"], r["n"] - r["wrong"]) < MIN_CLASS_ITEMS or r["documents"] < MIN_DOCUMENTS:
            verdict = "none: underpowered"
        elif r[f"{m}_diff_low"] <= 0 <= r[f"{m}_diff_high"]:
            verdict = "none: the interval holds 0"
        elif adjusted >= 0.05:
            verdict = "none after Holm"
        else:
            verdict = "CONSTRUCT-style higher" if r[f"{m}_diff_low"] > 0 else "CONSTRUCT-style lower"
        r[f"{m}_ranking"] = verdict
    return rows


# --------------------------------------------------------------------------- the reader's table


def _ci(row: Mapping[str, Any], name: str, *, signed: bool = False) -> str:
    if name not in row:
        return ""
    fmt = "{:+.3f}" if signed else "{:.3f}"
    low, high = row.get(f"{name}_low", float("nan")), row.get(f"{name}_high", float("nan"))
    point = fmt.format(row[name])
    return point if low != low else f"{point} [{fmt.format(low)}, {fmt.format(high)}]"


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
            d[f"precision / recall, {_pct(b)} reviewed"] = (
                f"{_ci(r, f'precision@{_pct(b)}')} / {_ci(r, f'recall@{_pct(b)}')}" if f"recall@{_pct(b)}" in r else ""
            )
        for m in _metrics(budgets):
            cell = ""
            if f"{m}_diff" in r:
                d_low, d_high = r[f"{m}_diff_low"], r[f"{m}_diff_high"]
                cell = f"{r[f'{m}_diff']:+.3f} [{d_low:+.3f}, {d_high:+.3f}], Holm p {_p(r[f'{m}_p_holm'])}: {r[f'{m}_ranking']}"
            d[f"CONSTRUCT-style minus it: {'AUROC' if m == 'auroc' else m.replace('recall@', 'recall at ')}"] = cell
        d["note"] = "; ".join(x for x in (r.get("underpowered", ""), r.get("note", "")) if x)
        out.append(d)
    return out


def _p(p: float) -> str:
    return "< 0.0005" if p < 0.0005 else f"{p:.3f}"
