"""Does the guarantee hold? Random document-level calibration/test splits of a labelled run.

Each split puts half of the documents (by default) in a calibration set, chooses a threshold on
it, and measures on the other half the risk among the accepted items (0 when nothing is
accepted) and the coverage. The bounded rule (Learn-then-Test) must exceed alpha on at most a
share delta of the splits; the naive rule (the most permissive threshold whose calibration risk
is at most alpha) is run on the same splits to show what the bound buys.

The candidate thresholds come from all the run's scores (no label): in use, the unlabelled
items' scores are known too.

The test risk is the empirical risk of a finite test half, noisier than the population risk the
guarantee is about: a threshold whose population risk is just below alpha still exceeds alpha on
a small test half now and then. So a second check sits beside it, where the guarantee applies
exactly: the run is the population, each repetition draws a calibration set of the same size
from its documents with replacement (independent draws from the run's distribution), and the
violation is the run's own risk at the chosen threshold above alpha.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from construct_eval.decide.bounds import check_levels
from construct_eval.decide.thresholds import LossTable, ltt_indices, naive_indices, risks_and_coverages


@dataclass(frozen=True)
class SplitResult:
    """One rule at one alpha over many splits."""

    rule: str
    alpha: float
    delta: float
    splits: int
    violations: int
    population_violations: int  # the run's own risk above alpha, calibration drawn with replacement
    mean_coverage: float
    mean_test_risk: float
    share_with_threshold: float

    @property
    def violation_rate(self) -> float:
        return self.violations / self.splits if self.splits else float("nan")

    @property
    def population_violation_rate(self) -> float:
        return self.population_violations / self.splits if self.splits else float("nan")


def split_validity(
    table: LossTable,
    alphas: Sequence[float] = (0.02, 0.05, 0.10),
    *,
    delta: float = 0.1,
    splits: int = 1000,
    calibration_share: float = 0.5,
    seed: int = 0,
) -> list[SplitResult]:
    """The bounded and the naive rule over the same ``splits`` random halvings of the documents.

    Every split is computed at once (issue 79; a loop over the splits took most of the decision
    tables' time): the splits and draws are drawn as the loop drew them, the thresholds' sums of
    all splits come from one product (:meth:`LossTable.split_sums`) and each split's p-values and
    Learn-then-Test sequence are the ones :func:`~construct_eval.decide.thresholds.ltt_index`
    computes for it alone (:func:`~construct_eval.decide.thresholds.ltt_indices`), so the counts
    and means are the loop's to the bit (tests/test_decide.py holds them to it)."""
    for a in alphas:
        check_levels(a, delta)
    n = table.n_documents
    n_cal = round(calibration_share * n)
    if not 0 < n_cal < n:
        raise ValueError(f"a split needs documents on both sides: {n} documents, calibration share {calibration_share}")
    rng = np.random.default_rng(seed)
    perms = np.array([rng.permutation(n) for _ in range(splits)], dtype=np.intp).reshape(splits, n)
    draws = np.array([rng.integers(0, n, n_cal) for _ in range(splits)], dtype=np.intp).reshape(splits, n_cal)
    cal, test = perms[:, :n_cal], perms[:, n_cal:]
    sums = {"cal": table.split_sums(cal), "test": table.split_sums(test), "draw": table.split_sums(draws)}
    acc_all, wr_all, total_all, _ = table.sums()  # the run as the population, the same for every draw
    population = (np.broadcast_to(acc_all, (splits, len(acc_all))), np.broadcast_to(wr_all, (splits, len(wr_all))))
    out = []
    for alpha in alphas:
        indices = {
            "bounded (LTT)": (ltt_indices(table, alpha, delta, cal)[0], ltt_indices(table, alpha, delta, draws)[0]),
            "naive": (naive_indices(*sums["cal"][:2], alpha), naive_indices(*sums["draw"][:2], alpha)),
        }
        for rule, (index, index_pop) in indices.items():
            risk, cov = risks_and_coverages(index, *sums["test"])
            pop_risk, _ = risks_and_coverages(index_pop, *population, np.float64(total_all))
            out.append(
                SplitResult(
                    rule=rule,
                    alpha=alpha,
                    delta=delta,
                    splits=splits,
                    violations=int(np.sum(risk > alpha + 1e-12)),
                    population_violations=int(np.sum(pop_risk > alpha + 1e-12)),
                    mean_coverage=float(cov.mean()),
                    mean_test_risk=float(risk.mean()),
                    share_with_threshold=float(np.mean(index >= 0)),
                )
            )
    return out


def validity_rows(scorer: str, results: Sequence[SplitResult], *, uses_labels: bool = False) -> list[dict[str, Any]]:
    """One table row per alpha: the bounded rule's violation rate and coverage, the naive rule's beside."""
    by = {(r.alpha, r.rule): r for r in results}
    rows = []
    for alpha in sorted({r.alpha for r in results}):
        b, nv = by[(alpha, "bounded (LTT)")], by[(alpha, "naive")]
        rows.append(
            {
                "scorer": scorer,
                "alpha": alpha,
                "delta": b.delta,
                "splits": b.splits,
                "violation_rate": round(b.violation_rate, 4),
                "within_delta": b.violation_rate <= b.delta,
                "violation_rate_run_as_population": round(b.population_violation_rate, 4),
                "mean_coverage": round(b.mean_coverage, 4),
                "share_with_threshold": round(b.share_with_threshold, 4),
                "mean_test_risk": round(b.mean_test_risk, 4),
                "naive_violation_rate": round(nv.violation_rate, 4),
                "naive_violation_rate_run_as_population": round(nv.population_violation_rate, 4),
                "naive_mean_coverage": round(nv.mean_coverage, 4),
                "naive_mean_test_risk": round(nv.mean_test_risk, 4),
                "uses_labels": uses_labels or None,
            }
        )
    return rows
