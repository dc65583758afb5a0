"""Combinations of a run's scorers, written back as score rows (``construct-eval combine``).

Per level, and for fields per granularity (a leaf's score and its section's are different
items), every label-free scorer of the run (or those named; the plausibility checks, a reference
floor, only when named) is combined two ways: the
label-free rank average (``combo:rank-mean[...]``) and, marked as using labels, a logistic
regression fitted out of fold (``fitted-oof-uses-labels[...]``). Old combination rows are
replaced, so a rerun after adding a scorer leaves no stale combination behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.kinds import Level
from construct_eval.reports.collect import ScoredItems, collect
from construct_eval.scorer_registry import COMBO, FITTED, PLAUSIBILITY
from construct_eval.scorers import combine
from construct_eval.types import ScorerId


@dataclass(frozen=True)
class Combination:
    level: Level
    granularity: str | None
    members: tuple[ScorerId, ...]
    items: int

    def line(self) -> str:
        where = self.level.value + (f"@{self.granularity}" if self.granularity else "")
        names = "+".join(m.name for m in self.members)
        return f"{where}: combined {len(self.members)} signals over {self.items} items: {names}"


def _combinable(
    items: Sequence[ScoredItems], wanted: Sequence[ScorerId | str] | None
) -> dict[tuple[Level, str | None], list[Any]]:
    chosen = {ScorerId.of(w) for w in wanted or ()}
    unknown = sorted(s.name for s in chosen - {i.scorer for i in items})
    if unknown:  # a misspelt or renamed scorer would silently shrink the combination
        raise ValueError(f"no scorer(s) {unknown} in this run; have {sorted({i.scorer.name for i in items})}")
    groups: dict[tuple[Level, str | None], list[Any]] = {}
    for i in items:
        sid = i.scorer
        if sid.is_combination or sid.uses_labels or (chosen and sid not in chosen):
            continue
        if not chosen and sid.family == PLAUSIBILITY.family:  # a reference floor: combined only when named
            continue
        groups.setdefault((i.level, i.granularity), []).append(i)
    return groups


def combine_run(run: RunDir, scorers: Sequence[ScorerId | str] | None = None) -> list[Combination]:
    """Combine the run's scorers (all label-free ones, or ``scorers``); returns what was combined
    (empty: no level had two scorers, and nothing was written)."""
    groups = _combinable(collect(run), scorers)
    out_rows: list[dict[str, Any]] = []
    names: set[str] = set()
    done = []
    for (level, gran), chosen in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        if len(chosen) < 2:
            continue
        signals = {i.scorer: dict(zip(zip(i.doc_ids, i.fields, strict=True), i.scores, strict=True)) for i in chosen}
        wrong = {k: w for i in chosen for k, w in zip(zip(i.doc_ids, i.fields, strict=True), i.wrong, strict=True)}
        members = tuple(sorted(signals))
        averaged = combine.rank_average(signals)
        name = ScorerId(COMBO.family, method="rank-mean", members=members).name
        fitted_name = ScorerId(FITTED.family, members=members).name
        out_rows += combine.as_rows(averaged, name, gran)
        out_rows += combine.as_rows(combine.fitted_out_of_fold(signals, wrong), fitted_name, gran)
        names |= {name, fitted_name}
        done.append(Combination(level, gran, members, len(averaged)))
    if out_rows:
        stale = {
            r.get("scorer") for r in run.iter_rows("scores") if ScorerId.parse(str(r.get("scorer"))).is_combination
        }
        run.replace_scorers(out_rows, names | stale)
    return done
