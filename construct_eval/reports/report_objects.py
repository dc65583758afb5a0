"""Results as objects: what ``evaluate``, ``calibrate`` and ``bias`` return.

In the manner of scikit-learn's Display classes (``CalibrationDisplay``, ``RocCurveDisplay``):
a report holds its tables (lists of rows) and what the figures need, computed once;
``plot(ax=...)`` draws one of its figures on an axes the caller owns (a notebook cell, a paper
panel) and ``save(dir)`` writes its tables (``metrics/``) and figures (``figures/``) into a run
folder. Drawing goes through :mod:`~construct_eval.display.plots`, the package's one plotting
stack. For code written against the former dict results, ``report["rows"]``, ``"key" in
report`` and ``report.get(key)`` still read the fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from construct_eval.display import plots
from construct_eval.reports.tables import file_slug, write_table

LEVELS = ("document", "field")
FIGURE_SETS = ("none", "main", "all")
"""Which figures a report draws: ``none`` (tables only), ``main`` (``evaluate``: the ROC, PR,
risk-coverage and review curves per level; ``calibrate``: the reliability diagrams) or ``all``
(``main`` and the rating histograms, the planted-kind heat maps and the value figures)."""


def check_figure_set(which: str) -> None:
    if which not in FIGURE_SETS:
        raise ValueError(f"figures must be one of {FIGURE_SETS}, not {which!r}")


class _Fields:
    """Read-only dict access to a dataclass's fields (the former results were dicts)."""

    def __getitem__(self, key: str) -> Any:
        if key not in self:
            raise KeyError(key)
        return getattr(self, key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in {f.name for f in fields(self)} and getattr(self, key) is not None  # type: ignore[arg-type]

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in self else default

    def keys(self) -> list[str]:
        return [f.name for f in fields(self) if getattr(self, f.name) is not None]  # type: ignore[arg-type]


def _write(rows: list[dict[str, Any]], stem: Path, title: str) -> Path:
    """A table as CSV and Markdown (:func:`~construct_eval.reports.tables.write_table`); the CSV's path."""
    write_table(rows, stem, title)
    return stem.with_suffix(".csv")


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=(5.0, 4.0), layout="constrained").add_subplot()


# --------------------------------------------------------------------------- evaluate


@dataclass
class EvaluationReport(_Fields):
    """Error detection for every scorer of a run (``evaluate``): the detection table (and the
    other reading of null-like strings), the unparsed and ungenerated documents, the scored
    items behind the curves, and the figures written."""

    run: str
    rows: list[dict[str, Any]]
    items: list[Any]
    unparsed: int = 0
    not_generated: dict[str, int] = field(default_factory=dict)
    other_reading: list[dict[str, Any]] | None = None
    figures: list[Path] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)  # the tables' titles, by file stem
    out_dir: Path | None = None  # where its tables and figures were written (None: not written)

    def lines(self) -> list[str]:
        """What ``evaluate`` prints: one line per detection row (AUROC and its interval), the
        unparsed outputs, and where the tables and figures went."""
        out = []
        for row in self.rows:
            ci = f"[{row.get('auroc_low', float('nan')):.3f}, {row.get('auroc_high', float('nan')):.3f}]"
            out.append(
                f"{row['level']:8s} {row['scorer']:34s} n={row['n']:6d} prev={row['prevalence']:.3f}"
                f" AUROC={row['auroc']:.3f} {ci} unscored={row['unscored']}"
            )
        out.append(f"{self.unparsed} outputs did not parse (wrong documents that no scorer saw)")
        if self.out_dir is not None:
            out.append(f"tables: {self.out_dir / 'metrics'}; figures: {len(self.figures)} (see figures/index.md)")
        return out

    def usable(self, level: str) -> list[Any]:
        """The items of ``level`` with both classes (the ones a curve can be drawn for)."""
        return [i for i in self.items if i.level == level and i.n and 0 < sum(i.wrong) < i.n]

    def shares_wrong(self, level: str, scorers: Any = None) -> list[float]:
        """Each usable score's share of wrong items at ``level`` (only ``scorers`` if given): the precision of a
        score that knows nothing. They differ where scores rate different items."""
        keep = None if scorers is None else set(scorers)
        return [float(np.mean(it.wrong)) for it in self.usable(level) if keep is None or it.scorer in keep]

    def curves(self, kind: str, level: str) -> dict[str, Any]:
        """Per scorer, the points of a ``roc``, ``pr``, ``risk_coverage`` or ``review`` curve."""
        from construct_eval.stats import metrics

        out: dict[str, Any] = {}
        for it in self.usable(level):
            y, s, _ = it.columns()
            if kind == "roc":
                fpr, tpr = metrics.roc_points(y, s)
                out[it.scorer] = (fpr, tpr, metrics.auroc(y, s))
            elif kind == "pr":
                recall, precision = metrics.pr_points(y, s)
                out[it.scorer] = (recall, precision, metrics.auprc(y, s))
            elif kind == "risk_coverage":
                out[it.scorer] = metrics.risk_coverage(y, s)
            elif kind == "review":
                shares = np.linspace(0, 1, 51)
                out[it.scorer] = (shares, np.array([r.recall for r in metrics.review_curve(y, s, shares)]))
            else:
                raise ValueError(f"kind must be roc, pr, risk_coverage or review, not {kind!r}")
        return out

    def plot(self, kind: str = "roc", level: str = "document", *, ax: Any = None, scorers: Any = None) -> Any:
        """Draw one curve kind of one level on ``ax`` (a new axes if None); returns the axes."""
        ax = _axes(ax)
        curves = self.curves(kind, level)
        if scorers is not None:
            curves = {k: v for k, v in curves.items() if k in set(scorers)}
        if kind == "roc":
            return plots.draw_roc(ax, curves)
        if kind == "pr":
            return plots.draw_pr(ax, curves, self.shares_wrong(level, curves))
        if kind == "risk_coverage":
            return plots.draw_risk_coverage(ax, curves)
        return plots.draw_review_budget(ax, curves)

    def save_figures(self, out_dir: Path, which: str = "all", *, workers: int | None = None) -> list[Path]:
        """``figures/``: ROC, PR, risk-coverage and review curves per level, and (``which="all"``)
        the rating histogram of every written rating in its default form (:data:`FIGURE_SETS`).
        Drawn in parallel processes (:func:`save_all`; ``workers``: how many, by default one per
        core)."""
        check_figure_set(which)
        out_dir = Path(out_dir)
        jobs: list[Callable[[], Path]] = []
        for level in LEVELS if which != "none" else ():
            usable = self.usable(level)
            if not usable:
                continue
            for name in ("roc", "pr", "risk_coverage", "review"):
                jobs.append(partial(self._save_curve_figure, name, level, out_dir / "figures" / f"{name}_{level}.png"))
            for it in usable if which == "all" else ():
                sid = it.scorer  # collect's items carry the identity
                if sid.is_written_rating and sid.variant is None and sid.aggregate is None:
                    path = out_dir / "figures" / f"ratings_{level}_{file_slug(it.scorer)}.png"
                    jobs.append(partial(_save_rating_histogram, it, level, path))
        return save_all(jobs, workers)

    def _save_curve_figure(self, name: str, level: str, path: Path) -> Path:
        if name == "roc":
            fig = plots.roc_figure(self.curves("roc", level), f"Finding wrong {level}s: ROC (AUROC in brackets)")
        elif name == "pr":
            pr_curves = self.curves("pr", level)
            title = f"Finding wrong {level}s: precision-recall (AUPRC in brackets)"
            fig = plots.pr_figure(pr_curves, self.shares_wrong(level, pr_curves), title)
        elif name == "risk_coverage":
            title = f"Accepting the most trusted {level}s first"
            fig = plots.risk_coverage_figure(self.curves("risk_coverage", level), title)
        else:
            fig = plots.review_budget_figure(
                self.curves("review", level), f"Reviewing the least trusted {level}s first"
            )
        return plots.save(fig, path)

    def save(self, out_dir: Path) -> list[Path]:
        """The detection table(s) under ``metrics/`` and the figures under ``figures/``."""
        out_dir = Path(out_dir)
        tables = {"detection": self.rows, "detection_other_reading": self.other_reading}
        paths = [
            _write(rows, out_dir / "metrics" / stem, self.titles.get(stem, f"{stem} ({self.run})"))
            for stem, rows in tables.items()
            if rows
        ]
        return [*paths, *self.save_figures(out_dir)]


# --------------------------------------------------------------------------- calibrate


@dataclass
class CalibrationReport(_Fields):
    """Out-of-fold calibration of every scorer of a run (``calibrate``): the calibration table,
    the out-of-fold predictions, the reliability bins per (item key, method), what each value of
    a few-valued score means, the three readings of each written rating, the figures written."""

    run: str
    rows: list[dict[str, Any]]
    predictions: dict[tuple[str, str], Any]
    reliability: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    values: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    value_maps: dict[str, list[str]] = field(default_factory=dict)
    readings: list[dict[str, Any]] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What ``calibrate`` prints: one line per calibration row (Brier and the ECEs; a score read
        per value, not fitted, gets its method only), or why there is nothing to calibrate."""
        out = []
        for row in self.rows:
            if "brier" not in row:  # a constant score, or one with 2-3 values: read per value, not fitted
                out.append(f"{row['level']:8s} {row['scorer']:34s} {row['method']}")
                continue
            out.append(
                f"{row['level']:8s} {row['scorer']:34s} {row['method']:16s} brier={row['brier']:.4f}"
                f" ece={row['ece_width']:.4f} ece_mass={row['ece_mass']:.4f} debiased={row['ece_debiased']:.4f}"
            )
        if not self.rows:
            out.append("nothing to calibrate: each scorer needs >= 10 labelled items with both classes")
        return out

    def plot(self, key: str, kind: str = "reliability", *, ax: Any = None, counts_ax: Any = None) -> Any:
        """The reliability diagram (``kind="reliability"``) or what each value means
        (``kind="values"``) of one item key (``"document:judge-doc"``) on ``ax``."""
        ax = _axes(ax)
        if kind == "reliability":
            if key not in self.reliability:
                raise KeyError(f"{self.run}: no reliability bins for {key!r} (not fitted)")
            plots.draw_reliability(ax, self.reliability[key])
            ax.set(xlabel="predicted P(error), out of fold", ylabel="observed error rate")
            return ax
        if kind == "values":
            if key not in self.values:
                raise KeyError(f"{self.run}: no value table for {key!r}")
            plots.draw_meaning(ax, self.values[key], self.value_maps.get(key, []), counts_ax=counts_ax)
            ax.set(xlabel="score value", ylabel="observed error rate")
            return ax
        raise ValueError(f"kind must be 'reliability' or 'values', not {kind!r}")

    def save_figures(self, out_dir: Path, which: str = "all") -> list[Path]:
        """``figures/``: the reliability diagrams and (``which="all"``) what each value means."""
        check_figure_set(which)
        out_dir = Path(out_dir)
        jobs: list[Callable[[], Path]] = []
        for key, tables in self.reliability.items() if which != "none" else ():
            title = f"{_reader_key(key)} (equal-mass bins, out of fold)"
            path = out_dir / "figures" / f"reliability_{file_slug(key)}.png"
            jobs.append(partial(_save_figure, plots.reliability_figure, (tables, title), path))
        for key, table in self.values.items() if which == "all" else ():
            n = sum(int(float(r["n"])) for r in table)
            args = (table, self.value_maps.get(key, []), f"{_reader_key(key)} (n={n})")
            jobs.append(
                partial(_save_figure, plots.value_figure, args, out_dir / "figures" / f"values_{file_slug(key)}.png")
            )
        return save_all(jobs)

    def save(self, out_dir: Path) -> list[Path]:
        out_dir = Path(out_dir)
        paths = [_write(self.rows, out_dir / "metrics" / "calibration", f"Calibration out of fold ({self.run})")]
        for key, table in self.values.items():
            paths.append(
                _write(table, out_dir / "metrics" / f"values_{file_slug(key)}", f"What each value means: {key}")
            )
        if self.readings:
            paths.append(
                _write(self.readings, out_dir / "metrics" / "rating_readings", "Three readings of each rating")
            )
        return [*paths, *self.save_figures(out_dir)]


def _save_figure(draw: Callable[..., Any], args: tuple[Any, ...], path: Path) -> Path:
    return plots.save(draw(*args), path)


def _save_rating_histogram(it: Any, level: str, path: Path) -> Path:
    y, s, _ = it.columns()
    return plots.save(plots.score_histogram(s, y, f"{plots.labels_for([it.scorer])[0]} ({level}s)", integer=True), path)


PARALLEL_FIGURES = 4
"""A report with at least this many figures draws them in worker processes."""


def save_all(jobs: Sequence[Callable[[], Path]], workers: int | None = None) -> list[Path]:
    """Each job draws and saves one figure; the paths, in order. The figures are independent: with
    :data:`PARALLEL_FIGURES` or more they are drawn in forked workers, ``workers`` or one per core
    this process may use (``CONSTRUCT_EVAL_WORKERS``), which read the report they were forked with."""
    from construct_eval.reports.tables import fit_workers, run_forked

    if workers is None:
        workers = fit_workers() if len(jobs) >= PARALLEL_FIGURES else 1
    return list(run_forked(list(jobs), workers))


def _reader_key(key: str) -> str:
    """``document:judge-doc`` -> ``judge rating (forced), documents``."""
    level, _, scorer = key.partition(":")
    return f"{plots.labels_for([scorer])[0]}, {level}s"


# --------------------------------------------------------------------------- bias


@dataclass
class BiasReport(_Fields):
    """Positional bias of a judge across prompt orders (``bias``): the paired ratings, the
    pairwise shift tests, and where they apply the Friedman test, the debiasing table and the
    position effect; the figures written."""

    run: str
    mode: str
    value: str
    paired: Any
    pairs: list[dict[str, Any]]
    friedman: dict[str, Any] | None = None
    debiasing: list[dict[str, Any]] | None = None
    position: Any = None
    figures: list[Path] = field(default_factory=list)

    @property
    def tag(self) -> str:
        return self.mode if self.value == "rating" else f"{self.mode}_{self.value}"

    def means(self) -> np.ndarray:
        if len(self.paired.items):
            return self.paired.ratings.mean(axis=0)
        return np.zeros(len(self.paired.variants))

    def plot(self, *, ax: Any = None) -> Any:
        """The mean rating under each order, the shift against the first beside it."""
        ax = _axes(ax)
        return plots.draw_variant_means(
            ax, self.paired.variants, self.means(), [r.get("mean_shift") for r in self.pairs]
        )

    def save_figures(self, out_dir: Path) -> list[Path]:
        fig = plots.variant_means_figure(
            self.paired.variants, self.means(), [r.get("mean_shift") for r in self.pairs], f"{self.mode} {self.value}"
        )
        return [plots.save(fig, Path(out_dir) / "figures" / f"bias_{self.tag}.png")]

    def save(self, out_dir: Path) -> list[Path]:
        out_dir = Path(out_dir)
        first = self.paired.variants[0]
        paths = [
            _write(
                self.pairs,
                out_dir / "metrics" / f"bias_pairs_{self.tag}",
                f"{self.value} shifts against {first} ({self.mode})",
            )
        ]
        if self.friedman:
            paths.append(_write([self.friedman], out_dir / "metrics" / f"bias_friedman_{self.tag}", "Friedman test"))
        if self.debiasing:
            paths.append(
                _write(self.debiasing, out_dir / "metrics" / f"bias_debiasing_{self.tag}", "Mean over K orders")
            )
        return [*paths, *self.save_figures(out_dir)]
