"""The library entry point: :func:`decide` returns a :class:`DecisionReport` for one scorer.

The report follows scikit-learn's Display pattern: the numbers are computed once, ``tables()``
returns them as rows, ``plot(ax=...)`` draws on the caller's axes, ``save(folder)`` writes the
tables (CSV and Markdown) and the figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.decide.bounds import check_levels
from construct_eval.decide.selective import RiskCoverage, plot_risk_coverage, scorer_label
from construct_eval.decide.thresholds import LossTable, ThresholdAnswer, choose_threshold
from construct_eval.display.plots import save
from construct_eval.numbers import interval
from construct_eval.reports.collect import ScoredItems, collect
from construct_eval.reports.tables import file_slug, write_table
from construct_eval.types import ScorerId

LEVELS = ("document", "field")


def find_items(items: Sequence[ScoredItems], scorer: str | ScorerId, level: str) -> ScoredItems:
    """The scorer's items at ``level``, matched by identity (:class:`ScorerId`), or an error that
    names the scorers the run has at that level."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    wanted = ScorerId.of(scorer)
    for it in items:
        if it.level == level and it.n and it.scorer == wanted:
            return it
    if level == "field" and wanted.granularity is None:  # a family named without @leaf / @top
        grains = [it for it in items if it.level == level and it.n and it.scorer.replace(granularity=None) == wanted]
        if len(grains) == 1:
            return grains[0]
        if grains:
            named = ", ".join(sorted(str(it.scorer) for it in grains))
            raise ValueError(
                f"{wanted.name!r} has field scores at {len(grains)} granularities ({named}): name one. @leaf scores"
                " each value (a list item, a nested key); @top each top-level field, as the paper's methods score"
                " fields; a policy is applied at the granularity it was fitted on"
            )
    names = sorted(str(it.scorer) for it in items if it.level == level and it.n)
    raise ValueError(f"no {level}-level scorer {wanted.name!r} with labelled items; the run has: {', '.join(names)}")


@dataclass
class DecisionReport:
    """One scorer's auto-accept decision on a run: the threshold answer and its risk-coverage curve."""

    run: str
    scorer: str
    answer: ThresholdAnswer
    curve: RiskCoverage
    extra: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def level(self) -> str:
        return self.answer.level

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """``threshold`` (the answer, with its guarantee) and ``risk_coverage`` (AURC row)."""
        row = {"run": self.run, "scorer": self.scorer, **self.answer.to_row(), "guarantee": self.answer.guarantee}
        return {"threshold": [row], "risk_coverage": [self.curve.to_row()], **self.extra}

    def text(self, title: str | None = None) -> str:
        """The answer in four lines; ``title`` names the run as a reader knows it (default: its folder)."""
        a = self.answer
        lines = [
            f"{title or self.run}: {scorer_label(self.scorer)} ({a.level} level, alpha = {a.alpha:g}, delta = {a.delta:g})",
            a.sentence(),
            f"guarantee: {a.guarantee}",
            f"AURC {interval(self.curve.aurc, self.curve.aurc_low, self.curve.aurc_high, spec='.4f')}"
            f" (oracle {self.curve.oracle:.4f}, random {self.curve.base_rate:.4f})",
        ]
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """The risk-coverage curve, alpha as a line and the chosen coverage marked; the legend
        below the axes (under the figure's x label where the figure lays itself out)."""
        label = scorer_label(self.scorer)
        said = label.endswith("fields") if self.level == "field" else False  # "..., leaf fields" says the level
        ax = plot_risk_coverage([self.curve], ax, title=label if said else f"{label}: {self.level}s")
        ax.axhline(self.answer.alpha, color="C3", lw=0.8, label=f"alpha = {self.answer.alpha:g}")
        if self.answer.holds:
            ax.axvline(self.answer.coverage, color="C2", lw=0.8,
                       label=f"Learn-then-Test threshold: coverage {self.answer.coverage:.2f}")  # fmt: skip
        fig = ax.figure
        engine = fig.get_layout_engine()
        if engine is not None and type(engine).__name__ == "ConstrainedLayoutEngine":
            handles, labels = ax.get_legend_handles_labels()
            if ax.get_legend() is not None:  # the curves' own legend, drawn on the axes
                ax.get_legend().remove()
            fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=8, frameon=False)
        else:  # below the axes and their x label: covers no curve
            ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncols=1, frameon=False)
        return ax

    def save(self, folder: str | Path) -> list[Path]:
        """Tables as ``decide_<level>_<scorer>.csv/.md`` and the figure as ``.png`` in ``folder``."""
        import matplotlib.pyplot as plt

        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        alpha = f"{100 * self.answer.alpha:g}".replace(".", "p")  # no dot: the suffix is the format
        stem = f"decide_{self.level}_{file_slug(self.scorer)}_alpha{alpha}pct"
        rows = [{**self.tables()["threshold"][0], **self.curve.to_row()}]
        write_table(rows, out / stem, title=f"Auto-accept decision ({self.run})")
        fig, ax = plt.subplots(figsize=(5.0, 4.0))
        self.plot(ax)
        fig.tight_layout()
        save(fig, out / f"{stem}.png", dpi=150)
        return [out / f"{stem}.csv", out / f"{stem}.md", out / f"{stem}.png"]


def decide_items(
    items: ScoredItems,
    *,
    run_name: str = "",
    alpha: float = 0.05,
    delta: float = 0.1,
    n_boot: int = 1000,
    seed: int = 0,
    field_test: str = "wsr",
) -> DecisionReport:
    """The decision for scored, labelled items (any source)."""
    check_levels(alpha, delta)
    y, s, g = items.arrays()
    table = LossTable.build(s, y, g, items.level, field_test=field_test)
    answer = choose_threshold(table, alpha, delta)
    uses = items.scorer.uses_labels
    curve = RiskCoverage.measure(str(items.scorer), items.level, s, y, g, n_boot=n_boot, seed=seed, uses_labels=uses)
    return DecisionReport(run_name, str(items.scorer), answer, curve)


def decide(
    run: str | Path | RunDir,
    scorer: str | ScorerId,
    *,
    alpha: float = 0.05,
    delta: float = 0.1,
    level: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    field_test: str = "wsr",
) -> DecisionReport:
    """Auto-accept threshold with a risk guarantee for ``scorer`` on a labelled run folder, at
    ``level`` (default: the scorer's own, so ``plausibility@leaf`` decides for fields)."""
    rd = run if isinstance(run, RunDir) else RunDir(run, create=False)
    wanted = ScorerId.of(scorer)
    items = find_items(collect(rd), wanted, level or wanted.level.value)
    return decide_items(
        items, run_name=rd.path.name, alpha=alpha, delta=delta, n_boot=n_boot, seed=seed, field_test=field_test
    )


def label_lines(checked: dict[str, Any], alpha: float) -> list[str]:
    """What labels that came back say (:meth:`~construct_eval.decide.policy.Policy.check`'s result):
    how many, the realised error among accepted ones against ``alpha``, and the prediction-powered
    estimate where some documents are labelled and others not."""
    lines = [f"labels back for {checked['labelled']:,} item(s)"]
    if "realised" in checked:
        verdict = "above alpha beyond chance" if checked["above_alpha"] else "not above alpha beyond chance (p >= 0.05)"
        lines.append(
            f"among {checked['accepted_labelled']:,} accepted labelled items {checked['realised']:.1%} are wrong "
            f"[{checked['low']:.1%}, {checked['high']:.1%}] (alpha {alpha:g}; test of 'at most alpha': p = "
            f"{checked['p_above_alpha']:.3f}): {verdict}"
        )
    if "ppi" in checked:
        ppi = checked["ppi"]
        lines.append(
            f"mean share of a document's items wrong (prediction-powered, {ppi['n_labelled']} labelled and "
            f"{ppi['n_unlabelled']} unlabelled documents; the labelled ones must be a random sample): "
            f"[{ppi['ppi_low']:.1%}, {ppi['ppi_high']:.1%}]"
            f" (labels alone: [{ppi['classical_low']:.1%}, {ppi['classical_high']:.1%}])"
        )
    return lines
