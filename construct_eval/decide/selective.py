"""Selective prediction: accept the most trusted items first and watch the error rate among them.

The risk-coverage curve gives, for every number k of accepted items, the share of them that are
wrong; the area under it (AURC, Geifman et al. 2019) is its mean over k = 1..n. Ties (a rating has
ten values) are broken as the average over random orders: within a group of equal scores the
expected errors grow linearly. Beside a scorer's curve: the oracle (every right item first, the
lowest AURC any score can reach on these labels) and a random order (risk = the base rate at every
coverage); E-AURC = AURC - oracle AURC. Intervals resample documents (a document's fields move
together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from construct_eval.display.style import series_style, wrap
from construct_eval.stats.metrics import risk_coverage


def aurc(scores: Any, wrong: Any) -> float:
    """Area under the risk-coverage curve: the mean over k of the risk among the k most trusted
    (:func:`~construct_eval.stats.metrics.risk_coverage` at every item)."""
    return float(np.mean(risk_coverage(wrong, scores, per_item=True)[1]))


def oracle_aurc(wrong: Any) -> float:
    """The AURC of the best possible order: every right item before every wrong one."""
    y = np.asarray(wrong, dtype=float)
    n, right = len(y), int(len(y) - y.sum())
    k = np.arange(1, n + 1, dtype=float)
    return float(np.mean(np.maximum(0.0, k - right) / k))


@dataclass(frozen=True)
class RiskCoverage:
    """A scorer's risk-coverage curve and its AURC with a document-bootstrap interval."""

    scorer: str
    level: str
    n: int
    documents: int
    base_rate: float
    coverage: np.ndarray
    risk: np.ndarray
    oracle_risk: np.ndarray
    aurc: float
    aurc_low: float
    aurc_high: float
    oracle: float
    eaurc_low: float
    eaurc_high: float
    uses_labels: bool = False

    @classmethod
    def measure(
        cls,
        scorer: str,
        level: str,
        scores: Any,
        wrong: Any,
        doc_ids: Any,
        *,
        n_boot: int = 1000,
        seed: int = 0,
        level_ci: float = 0.95,
        uses_labels: bool = False,
    ) -> RiskCoverage:
        """The curve at every item (:func:`~construct_eval.stats.metrics.risk_coverage`), AURC,
        oracle, and percentile intervals over documents resampled with replacement."""
        s = np.asarray(scores, dtype=float)
        y = np.asarray(wrong, dtype=float)
        g = np.asarray(doc_ids)
        if not len(s):
            raise ValueError(f"{scorer}: no scored, labelled items")
        coverage, risk = risk_coverage(y, s, per_item=True)
        k = np.arange(1, len(s) + 1)
        right = len(y) - y.sum()
        docs, inverse = np.unique(g, return_inverse=True)
        members = np.split(np.argsort(inverse, kind="stable"), np.cumsum(np.bincount(inverse))[:-1])
        rng = np.random.default_rng(seed)
        a_boot, e_boot = np.empty(n_boot), np.empty(n_boot)
        for b in range(n_boot):
            idx = np.concatenate([members[d] for d in rng.integers(0, len(docs), len(docs))])
            a_boot[b] = aurc(s[idx], y[idx])
            e_boot[b] = a_boot[b] - oracle_aurc(y[idx])
        q = ((1 - level_ci) / 2, (1 + level_ci) / 2)
        a_lo, a_hi = np.quantile(a_boot, q) if n_boot else (np.nan, np.nan)
        e_lo, e_hi = np.quantile(e_boot, q) if n_boot else (np.nan, np.nan)
        return cls(
            scorer=scorer,
            level=level,
            n=len(s),
            documents=len(docs),
            base_rate=float(y.mean()),
            coverage=coverage,
            risk=risk,
            oracle_risk=np.maximum(0.0, k - right) / k,
            aurc=float(np.mean(risk)),
            aurc_low=float(a_lo),
            aurc_high=float(a_hi),
            oracle=oracle_aurc(y),
            eaurc_low=float(e_lo),
            eaurc_high=float(e_hi),
            uses_labels=uses_labels,
        )

    @property
    def eaurc(self) -> float:
        return self.aurc - self.oracle

    def to_row(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "scorer": self.scorer,
            "n": self.n,
            "documents": self.documents,
            "error_rate": round(self.base_rate, 4),
            "aurc": round(self.aurc, 4),
            "aurc_low": round(self.aurc_low, 4),
            "aurc_high": round(self.aurc_high, 4),
            "aurc_random": round(self.base_rate, 4),
            "aurc_oracle": round(self.oracle, 4),
            "eaurc": round(self.eaurc, 4),
            "eaurc_low": round(self.eaurc_low, 4),
            "eaurc_high": round(self.eaurc_high, 4),
            "risk_at_50%": round(_risk_at(self, 0.5), 4),
            "risk_at_80%": round(_risk_at(self, 0.8), 4),
            "uses_labels": self.uses_labels or None,
        }


def _risk_at(rc: RiskCoverage, coverage: float) -> float:
    k = max(1, int(np.ceil(coverage * rc.n)))
    return float(rc.risk[k - 1])


def scorer_label(scorer: str, elicitation: str | None = None) -> str:
    """A scorer as a reader names it (``plausibility checks, leaf fields``; a judge's rating with how
    the run asked for it, ``judge rating (forced), per field``, where ``elicitation`` is given); a
    name outside the grammar (an imported score) as it was given."""
    from construct_eval.scorer_labels import display_name

    try:
        return display_name(scorer, elicitation=elicitation)
    except ValueError:
        return scorer


def _own_items(rc: RiskCoverage, ref: RiskCoverage) -> str:
    """A curve on other items than the first (whose oracle and random order are drawn): its own
    count and random order, "; on 1,400 items, random 0.089", so its AURC is read against its own."""
    if (rc.n, rc.base_rate) == (ref.n, ref.base_rate):
        return ""
    return f"; on {rc.n:,} items, random {rc.base_rate:.3f}"


def plot_risk_coverage(
    curves: list[RiskCoverage], ax: Any = None, *, title: str = "", elicitation: str | None = None
) -> Any:
    """The curves on one axes, with the oracle and the random order of the first; each curve named
    as a reader names its score (:func:`scorer_label`, with the run's ``elicitation``), with its own
    items and random order where they are not the first's (:func:`_own_items`), the legend below
    the axes so it covers no curve."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 4.4), layout="constrained")
    if curves:
        ref = curves[0]
        ax.plot(ref.coverage, ref.oracle_risk, color="0.3", ls=":", label=f"oracle (AURC {ref.oracle:.3f})")
        ax.axhline(ref.base_rate, color="0.6", ls="--", label=f"random order (AURC {ref.base_rate:.3f})")
    drawn: set[tuple[str, Any]] = set()
    for rc in curves:
        st = series_style(rc.scorer)
        # two readings of one family share a colour: each later one gets the next free line style
        ls = next((x for x in (st.linestyle, "-", "--", "-.", ":") if (st.colour, x) not in drawn), st.linestyle)
        drawn.add((st.colour, ls))
        ax.plot(
            rc.coverage,
            rc.risk,
            color=st.colour,
            ls=ls,
            label=wrap(f"{scorer_label(rc.scorer, elicitation)} (AURC {rc.aurc:.3f}{_own_items(rc, curves[0])})", 75),
        )  # no label widens the figure
    ax.set_xlabel("coverage (share auto-accepted, most trusted first)")
    ax.set_ylabel("risk: share of the\naccepted that are wrong")  # two lines: it fits a short axes
    ax.set_xlim(0, 1)
    ax.set_ylim(bottom=0)
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8.5, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=1, frameon=False)
    return ax
