"""The statistics a paper figure or table pairs at draw time, from a run's items.

Every other number a paper figure draws is read from a stored run table
(:mod:`construct_eval.paper.figure_data`). These are computed when the figure is drawn because
which scores they pair depends on what it draws: a review panel's scores recomputed on the items
all of them rated (:func:`common_review_rows`), two scores that rated different items compared on
the items both rated (:func:`paired_on_common`, within an output kind where asked,
:func:`kind_items`), and a LaTeX table's best score against its runner-up on the items both
scored (:func:`best_marks`, Holm across the table). Storing them as run tables would mean
computing every pair a figure might draw, most of which none does. They live here, with the run
reports, so that :mod:`construct_eval.paper` reads no run folder and calls no statistics itself
(an import contract holds it to that): it hands this module the rows it draws and gets rows back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from construct_eval.power import MIN_CLASS_ITEMS as MIN_CLASS
from construct_eval.types import ScorerId


def common_review_rows(
    run_dir: Path, rows: Sequence[Mapping[str, Any]], least: int, *, n_boot: int = 1000
) -> list[dict[str, Any]]:
    """The review rows of one dataset's panel (:func:`review_rows`, one level), with the scores
    that rated at least ``least`` items (the panel's reference count: a judge on a part, the
    generator's log-probs on all) recomputed on the items all of them rated, where they rated
    different items: a recall at a budget depends on the share wrong, so curves on different items
    cannot be compared. A score on fewer items (a judge score asked on a part of the reference's
    items) and a rating constant on the panel (not drawn) are left as they are and do not shrink
    the common items. Each recomputed row keeps its score's flat note and carries ``common_of``:
    the most items a score of the panel rated, and ``all_n``, ``all_positives``, ``all_recall``
    (``_low``, ``_high``): its own items' count, wrong count and recall, as the run's table has them. The rows as given where those scores rate the same
    items, where the items cannot be rebuilt, or where the common items hold fewer than
    :data:`MIN_CLASS` wrong or right. Document-bootstrap intervals (``n_boot`` resamples, seed 0,
    as :func:`~construct_eval.stats.metrics.detection_summary`)."""
    same = [dict(r) for r in rows]
    pick = list(dict.fromkeys(r["scorer"] for r in rows if r["n"] >= least and r.get("flat_note") != "constant"))
    if len({(r["n"], r["positives"]) for r in rows if r["scorer"] in pick}) <= 1:
        return same
    from construct_eval.data.runs import RunDir, RunError
    from construct_eval.reports.collect import collect
    from construct_eval.stats.metrics import detection_summary

    level = rows[0]["level"]
    try:
        found = {it.scorer.name: it for it in collect(RunDir(run_dir)) if it.level.value == level}
    except RunError:
        return same
    if not set(pick) <= set(found):
        return same
    keys = {s: list(zip(found[s].doc_ids, found[s].fields, strict=True)) for s in pick}
    common = set.intersection(*(set(k) for k in keys.values()))
    budgets = sorted({int(r["budget"]) for r in rows})
    summaries = {}
    for s in pick:
        it = found[s]
        keep = [i for i, k in enumerate(keys[s]) if k in common]
        y = [bool(it.wrong[i]) for i in keep]
        if min(sum(y), len(y) - sum(y)) < MIN_CLASS:
            return same
        summaries[s] = detection_summary(y, [it.scores[i] for i in keep], [it.doc_ids[i] for i in keep],
                                         budgets=[b / 100 for b in budgets], n_boot=n_boot, seed=0)  # fmt: skip
    most = max(int(r["n"]) for r in rows)
    out: list[dict[str, Any]] = []
    for r in same:
        summary = summaries.get(r["scorer"])
        if summary is None:
            out.append(r)
            continue
        b = int(r["budget"]) / 100
        outcome, (precision, recall) = summary.review[b], summary.review_intervals[b]  # type: ignore[index]
        out.append({
            **r, **{f"all_{k}": r[k] for k in ("n", "positives", "recall", "recall_low", "recall_high")},
            "n": summary.n, "positives": summary.positives, "prevalence": summary.prevalence,
            "underpowered": bool(summary.power_note()), "common_of": most,
            "precision": outcome.precision, "precision_low": precision.low, "precision_high": precision.high,
            "recall": outcome.recall, "recall_low": recall.low, "recall_high": recall.high,
        })  # fmt: skip
    return out


def _labels_key(run_dir: Path) -> tuple[str, float] | None:
    """What the items below are memoised on: the run and its labels' modification time (None:
    the run has no labels, so there is nothing to count)."""
    labels = run_dir / "labels.jsonl"
    return (str(run_dir.resolve()), labels.stat().st_mtime) if labels.exists() else None


_KINDS: dict[tuple[str, float], dict[tuple[str, str], tuple[list[str], list[str], list[bool], list[float]]]] = {}


def kind_items(run_dir: Path) -> dict[tuple[str, str], tuple[list[str], list[str], list[bool], list[float]]]:
    """Each field scorer's labelled items within each output kind (``value``: fields the output
    filled; ``null or empty``: fields it left null or empty, as
    :mod:`~construct_eval.reports.output_kinds` splits them): (scorer, kind) -> (documents,
    fields, wrong, scores); empty where the run has no labels or its outputs cannot be rebuilt."""
    run_dir = Path(run_dir)
    key = _labels_key(run_dir)
    if key is None:
        return {}
    if key not in _KINDS:
        from construct_eval.data.runs import RunDir
        from construct_eval.reports.collect import collect
        from construct_eval.reports.output_kinds import KINDS
        from construct_eval.reports.run_analyses import with_output_kinds
        from construct_eval.reports.within_kind import items_of_kind

        run = RunDir(run_dir)
        items = [it for it in collect(run) if it.level.value == "field"]
        if not with_output_kinds(run, items):  # the outputs cannot be rebuilt here
            return {}
        found: dict[tuple[str, str], tuple[list[str], list[str], list[bool], list[float]]] = {}
        for it in items:
            if it.kinds is None:
                continue
            for kind in KINDS:
                found[(str(it.scorer), kind)] = items_of_kind(it, kind)
        _KINDS[key] = found
    return _KINDS[key]


def paired_on_common(
    run_dir: Path, level: str, a: str, b: str, *, kind: str = "", n_boot: int = 2000
) -> dict[str, Any] | None:
    """Scores ``a`` and ``b`` of one run compared on the items both rated (at ``level``, within
    the fields of output ``kind`` where one is given): their AUROCs and the paired difference
    a - b with its document-bootstrap 95% interval (``n_boot`` resamples, seed 0, as the run's
    paired tables). Two AUROCs on different items (a judge asked on part of the outputs, the
    generator's log-probs on all) cannot be compared by their intervals: a share wrong and which
    items are hard differ. None where either score is missing, the items cannot be rebuilt, or the
    common items hold one class only."""
    from construct_eval.stats.metrics import compare_scores

    found: dict[str, tuple[list[str], list[str], list[bool], list[float]]] = {}
    if kind:
        found = {s: v for (s, k), v in kind_items(run_dir).items() if k == kind and s in (a, b)}
    else:
        from construct_eval.data.runs import RunDir, RunError
        from construct_eval.reports.collect import collect

        try:
            items = [it for it in collect(RunDir(run_dir)) if it.level.value == level and str(it.scorer) in (a, b)]
        except RunError:
            return None
        found = {str(it.scorer): (list(it.doc_ids), list(it.fields), [bool(w) for w in it.wrong],
                                  [float(s) for s in it.scores]) for it in items}  # fmt: skip
    if set(found) != {a, b}:
        return None
    where = {k: i for i, k in enumerate(zip(found[b][0], found[b][1], strict=True))}
    pairs = [(i, where[k]) for i, k in enumerate(zip(found[a][0], found[a][1], strict=True)) if k in where]
    y = [found[a][2][i] for i, _ in pairs]
    if not 0 < sum(y) < len(y):
        return None
    docs = [found[a][0][i] for i, _ in pairs]
    cmp = compare_scores(y, [found[a][3][i] for i, _ in pairs], [found[b][3][j] for _, j in pairs], docs,
                         n_boot=n_boot, seed=0)  # fmt: skip
    return {
        "dataset": Path(run_dir).name, "level": level, "fields": kind, "a": a, "b": b, "n": len(pairs),
        "positives": int(sum(y)), "documents": len(set(docs)), "auroc_a": cmp.value_a, "auroc_b": cmp.value_b,
        "difference": cmp.difference.estimate, "low": cmp.difference.low, "high": cmp.difference.high,
        "p": cmp.p_value,
    }  # fmt: skip


BEST_ALPHA = 0.05
"""Family-wise error rate of the best marks of one table (Holm across its comparisons)."""
BEST_N_BOOT = 2000
"""Document resamples of the best-score test."""


@dataclass(frozen=True)
class BestMark:
    dataset: str
    level: str
    group: str  # granularity: scorers are only compared on the same items
    metric: str
    top: ScorerId
    runner_up: ScorerId
    n: int  # items both scored
    difference: float
    low: float
    high: float
    p: float
    p_holm: float = math.nan

    @property
    def is_best(self) -> bool:
        return self.p_holm < BEST_ALPHA and (self.low > 0 or self.high < 0)


def best_marks(
    candidates: Mapping[tuple[str, str, str], Sequence[tuple[ScorerId, float, bool]]],
    items_of: Mapping[str, Sequence[Any]],
    *,
    metric: str,
    n_boot: int = BEST_N_BOOT,
    seed: int = 0,
) -> dict[tuple[str, str, str], BestMark]:
    """For each (dataset, level, granularity): the top label-free scorer against the runner-up,
    paired on the items both scored.

    ``candidates`` maps (dataset, level, granularity) to (scorer, estimate, underpowered), label-free
    only; underpowered rows are left out of the ranking (their intervals cannot rank). ``items_of``
    maps a dataset to its :class:`~construct_eval.reports.collect.ScoredItems`. Holm runs across every
    comparison given, i.e. across one table.
    """
    from construct_eval.reports.tables import compare_scorers
    from construct_eval.stats.bias import holm

    marks: dict[tuple[str, str, str], BestMark] = {}
    for (dataset, level, group), ranked in candidates.items():
        ordered = sorted((r for r in ranked if not r[2] and not math.isnan(r[1])), key=lambda r: -r[1])
        if len(ordered) < 2:
            continue
        by_name = {i.scorer: i for i in items_of[dataset] if i.level == level}
        top, runner = ordered[0][0], ordered[1][0]
        if top not in by_name or runner not in by_name:
            continue
        row = compare_scorers(by_name[top], by_name[runner], n_boot=n_boot, seed=seed, metric=metric)
        if "p" not in row:
            continue
        marks[(dataset, level, group)] = BestMark(
            dataset, level, group, metric, top, runner, row["n"], row["difference"], row["low"], row["high"], row["p"]
        )
    keys = list(marks)
    for key, p_adj in zip(keys, holm([marks[k].p for k in keys]), strict=True):
        marks[key] = BestMark(**{**vars(marks[key]), "p_holm": p_adj})
    return marks


def items_of(run_dirs: Sequence[Path]) -> dict[str, Any]:
    """Each run's labelled items (:func:`~construct_eval.reports.collect.collect`), by run name:
    what :func:`best_marks` pairs."""
    from construct_eval.data.runs import RunDir
    from construct_eval.reports.collect import collect

    return {Path(r).name: collect(RunDir(r)) for r in run_dirs}
