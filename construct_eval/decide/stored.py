"""The stored decision tables of a run (``metrics/decision_*.csv/.md``) and their figures.

For every scorer and level of a labelled run: the auto-accept answer at alpha = 2, 5, 10%
(``decision_thresholds``), its validity over random document splits beside the naive rule
(``decision_validity``), AURC with oracle and random (``decision_aurc``), PPI against the
classical interval over repeated draws (``decision_ppi``), held-out calibration learning curves
(``decision_learning``) and the smooth ECE beside the binned ones (``decision_smooth_ece``). All
from the run's stored files; no model call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from construct_eval.blas import one_blas_thread
from construct_eval.csv_tables import read_rows
from construct_eval.data.runs import RunDir
from construct_eval.decide.few_labels import document_targets, repeated_draws
from construct_eval.decide.learning import (
    learning_curve,
    plot_learning_curves,
    plot_smooth_reliability,
    smooth_ece_rows,
)
from construct_eval.decide.selective import RiskCoverage, plot_risk_coverage, scorer_label
from construct_eval.decide.thresholds import GUARANTEE, LossTable, choose_threshold
from construct_eval.decide.validity import split_validity, validity_rows
from construct_eval.display.plots import save
from construct_eval.display.style import wrap
from construct_eval.reports.collect import ScoredItems, collect, load_labels
from construct_eval.reports.tables import MIN_DISTINCT_TO_FIT, file_slug, write_table
from construct_eval.types import ScorerId

ALPHAS = (0.02, 0.05, 0.10)
DELTA = 0.1
MIN_DOCUMENTS = 100
"""A run needs this many labelled documents for the stored decision tables."""

TABLES = ("thresholds", "validity", "aurc", "ppi", "learning", "smooth_ece")


def labelled_documents(run: RunDir) -> int:
    return sum(1 for lab in load_labels(run).values() if lab.wrong is not None)


def judge_elicitation(run: RunDir) -> str | None:
    """How the run's judge was asked for its ratings (the most common ``constrained`` of its
    judgments: ``grammar:rating-only`` is the forced rating), so that the decision figures name a
    judge's rating as the notebooks and paper figures do; None where no judge ran."""
    from collections import Counter

    if not run.file("judgments").exists():
        return None
    asked = Counter(str(r["constrained"]) for r in run.iter_rows("judgments") if r.get("constrained"))
    return asked.most_common(1)[0][0] if asked else None


def _uses_labels(name: str) -> bool:
    return ScorerId.of(name).uses_labels


@one_blas_thread()
def write_decision_tables(
    run: RunDir,
    out: Path | None = None,
    *,
    alphas: Sequence[float] = ALPHAS,
    delta: float = DELTA,
    splits: int = 1000,
    n_boot: int = 1000,
    ppi_draws: int = 500,
    learning_repeats: int = 30,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Every decision table of ``run`` under ``out/metrics`` (default: the run folder) and the
    figures under ``out/figures``; returns the rows by table."""
    import matplotlib

    matplotlib.use("Agg")

    root = out or run.path
    n_docs = labelled_documents(run)
    if n_docs < MIN_DOCUMENTS:
        raise ValueError(f"{run.path}: {n_docs} labelled documents; the decision tables need {MIN_DOCUMENTS}")
    say = progress or (lambda _msg: None)
    items = [it for it in collect(run) if it.n]
    asked = judge_elicitation(run)
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in TABLES}
    curves: dict[str, list[Any]] = {"document": [], "field": []}
    for it in items:
        say(f"{it.level} {it.scorer!s}")
        y, s, g = it.arrays()
        uses = _uses_labels(str(it.scorer)) or None
        head = {"level": it.level, "scorer": str(it.scorer)}
        table = LossTable.build(s, y, g, it.level)
        for alpha in alphas:
            answer = choose_threshold(table, alpha, delta)
            rows["thresholds"].append({**head, **answer.to_row(), "uses_labels": uses})
        results = split_validity(table, alphas, delta=delta, splits=splits, seed=seed)
        rows["validity"].extend(
            {"level": it.level, **r} for r in validity_rows(str(it.scorer), results, uses_labels=bool(uses))
        )
        rc = RiskCoverage.measure(str(it.scorer), it.level, s, y, g, n_boot=n_boot, seed=seed, uses_labels=bool(uses))
        rows["aurc"].append(rc.to_row())
        curves[it.level].append(rc)
        y_doc, f_doc, _ = document_targets(s, y, g)
        for r in repeated_draws(y_doc, f_doc, draws=ppi_draws, seed=seed):
            rows["ppi"].append({**head, "target": _target(it.level), **r.to_row(), "uses_labels": uses})
        if len(np.unique(s)) >= MIN_DISTINCT_TO_FIT:
            for r in learning_curve(s, y, g, repeats=learning_repeats, seed=seed):
                rows["learning"].append({**head, **r})
            sm, preds = smooth_ece_rows(s, y, g, seed=seed)
            rows["smooth_ece"].extend({**head, **r} for r in sm)
            _reliability_figure(root, it, preds, y, asked)
    metrics = root / "metrics"
    _write(rows, metrics, run.path.name, delta)
    figures = root / "figures"
    risk_coverage_figures(figures, run.path.name, curves, asked)
    learning_figures(figures, rows["learning"], asked)
    return rows


def risk_coverage_figures(
    figures: Path, run_name: str, curves: Mapping[str, Sequence[Any]], elicitation: str | None = None
) -> list[Path]:
    """``decision_risk_coverage_<level>.png``: the deployable scores (none that uses the labels),
    one curve where a flat schema makes the leaf and top-level curves the same, the six lowest
    AURCs (at most six series; every score: ``decision_aurc.csv``), titled in a reader's words."""
    import matplotlib.pyplot as plt

    from construct_eval.display.style import dataset_label

    figures.mkdir(parents=True, exist_ok=True)
    out = []
    for level, cs in curves.items():
        if not cs:
            continue
        fig, ax = plt.subplots(figsize=(6.0, 6.0), layout="constrained")
        shown: list[Any] = []
        for c in sorted((c for c in cs if not c.uses_labels), key=lambda c: c.aurc):
            if not any(len(c.risk) == len(o.risk) and np.array_equal(c.risk, o.risk) for o in shown):
                shown.append(c)
        name, how = dataset_label(run_name)
        plot_risk_coverage(
            shown[:6], ax, title=f"{name} ({how}): {level}s, scores that use no labels", elicitation=elicitation
        )
        out.append(figures / f"decision_risk_coverage_{level}.png")
        save(fig, out[-1], dpi=150)
    return out


def redraw_decision_figures(run: RunDir, out: Path | None = None, *, n_boot: int = 1000, seed: int = 0) -> list[Path]:
    """The decision figures of ``run`` again, without the tables: the risk-coverage curves and the
    smooth reliability diagrams recomputed (the same seeds as :func:`write_decision_tables`), the
    learning curves read from the stored ``decision_learning.csv``."""
    import matplotlib

    matplotlib.use("Agg")
    root = out or run.path
    asked = judge_elicitation(run)
    curves: dict[str, list[Any]] = {"document": [], "field": []}
    for it in (it for it in collect(run) if it.n):
        y, s, g = it.arrays()
        uses = _uses_labels(str(it.scorer))
        curves[it.level].append(
            RiskCoverage.measure(str(it.scorer), it.level, s, y, g, n_boot=n_boot, seed=seed, uses_labels=uses)
        )
        if len(np.unique(s)) >= MIN_DISTINCT_TO_FIT:
            _, preds = smooth_ece_rows(s, y, g, seed=seed)
            _reliability_figure(root, it, preds, y, asked)
    written = risk_coverage_figures(root / "figures", run.path.name, curves, asked)
    stored = root / "metrics" / "decision_learning.csv"
    if stored.exists():
        written += learning_figures(root / "figures", read_rows(stored), asked)
    return written


def learning_scorers(rows: Sequence[Mapping[str, Any]], limit: int = 4) -> list[str]:
    """The scorers a learning figure draws, from one level's learning rows: none that uses labels
    (a team could not deploy it), one per family (its lowest Brier), the lowest held-out Brier
    score at the scorer's most labelled documents first, at most ``limit``. So the label-free
    plausibility checks a run recommends are drawn wherever they were scored, not left out
    because the table happened to list four other scorers first."""
    best: dict[str, float] = {}
    most: dict[str, int] = {}
    for r in rows:
        most[r["scorer"]] = max(most.get(r["scorer"], 0), int(float(r["labelled_documents"])))
    for r in rows:
        name = r["scorer"]
        brier = float(r["brier"]) if r.get("brier") not in ("", None) else float("nan")
        if _uses_labels(name) or int(float(r["labelled_documents"])) != most[name] or brier != brier:
            continue
        best[name] = min(best.get(name, float("inf")), brier)
    chosen: dict[str, str] = {}  # family -> scorer
    for name in sorted(best, key=lambda n: best[n]):
        chosen.setdefault(ScorerId.parse(name).family, name)
    return list(chosen.values())[:limit]


def learning_figures(figures: Path, rows: Sequence[dict[str, Any]], elicitation: str | None = None) -> list[Path]:
    """``decision_learning_<level>.png``: the learning curves of up to four scorers per level
    (:func:`learning_scorers`), from :func:`learning_curve` rows or the stored ``decision_learning.csv``."""
    import matplotlib.pyplot as plt

    out = []
    for level in ("document", "field"):
        lrows = [r for r in rows if r["level"] == level]
        if not lrows:
            continue
        scorers = learning_scorers(lrows)
        if not scorers:
            continue
        # two panels a row, so a notebook shows them at a readable size; one legend above them all
        ncols = min(2, len(scorers))
        nrows = -(-len(scorers) // ncols)
        fig, axes = plt.subplots(
            nrows, ncols, figsize=(3.9 * ncols, 3.3 * nrows + 0.4), squeeze=False, layout="constrained"
        )
        for ax, name in zip(axes.flat, scorers, strict=False):
            plot_learning_curves(
                [r for r in lrows if r["scorer"] == name],
                ax,
                title=wrap(scorer_label(name, elicitation), 46),
                legend=False,
            )
        for ax in list(axes.flat)[len(scorers) :]:
            ax.set_visible(False)
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=len(labels), fontsize=9, frameon=False)
        out.append(figures / f"decision_learning_{level}.png")
        save(fig, out[-1], dpi=150)
    return out


def _target(level: str) -> str:
    return "share of documents wrong" if level == "document" else "share of a document's fields wrong (mean)"


def _reliability_figure(
    root: Path, it: ScoredItems, preds: dict[str, np.ndarray], y: np.ndarray, elicitation: str | None = None
) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(preds), figsize=(3.4 * len(preds), 3.2), squeeze=False)
    for ax, (method, p) in zip(axes[0], preds.items(), strict=True):
        plot_smooth_reliability(
            p, y, ax, title=wrap(f"{scorer_label(str(it.scorer), elicitation)}: {method} (out of fold)", 40)
        )
    fig.tight_layout()
    save(fig, root / "figures" / f"decision_smooth_reliability_{it.level}_{file_slug(str(it.scorer))}.png", dpi=120)


TITLES = {
    "thresholds": "Auto-accept thresholds by Learn-then-Test (delta = {delta})",
    "validity": "Does the guarantee hold? {splits} random document splits (delta = {delta})",
    "aurc": "Risk-coverage: AURC with document-bootstrap 95% intervals, oracle and random",
    "ppi": "Error rate from few labels: PPI++ vs the classical interval (95%), coverage over repeated draws",
    "learning": "Calibration learning curves: held-out Brier and ECE against labelled documents",
    "smooth_ece": "Smooth ECE (relplot) beside the binned ECEs, out-of-fold calibrators",
}


def _write(rows: dict[str, list[dict[str, Any]]], metrics: Path, run_name: str, delta: float) -> None:
    splits = rows["validity"][0]["splits"] if rows["validity"] else 0
    for name in TABLES:
        if not rows[name]:
            continue
        title = f"{TITLES[name].format(delta=delta, splits=splits)} ({run_name})"
        path = metrics / f"decision_{name}"
        write_table(rows[name], path, title=title)
        if name == "thresholds":
            notes = "\n".join(f"- {level} level: {text}" for level, text in GUARANTEE.items())
            path.with_suffix(".md").write_text(path.with_suffix(".md").read_text() + f"\nGuarantee:\n\n{notes}\n")


def read_table(run_path: Path, name: str) -> list[dict[str, str]]:
    """A stored decision table's rows (strings, as in the CSV)."""
    path = Path(run_path) / "metrics" / f"decision_{name}.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path}: not written yet (python -m construct_eval.studies.decisions writes it)")
    return read_rows(path)
