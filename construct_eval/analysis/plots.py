"""Figures for the paper's analyses. Drawing only: every number arrives already computed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure


def _figure(width: float = 5.0, height: float = 4.0) -> tuple[Figure, Any]:
    fig = Figure(figsize=(width, height), dpi=120, layout="constrained")
    return fig, fig.add_subplot()


def roc_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray, float]], title: str = "") -> Figure:
    """``curves``: name -> (false-positive rates, true-positive rates, AUROC).

    Points are joined by straight lines: inside a block of tied scores the ROC is the segment
    between its ends (a flat judge is the diagonal, as its AUROC of 0.5 says), not a step.
    """
    fig, ax = _figure()
    for name, (fpr, tpr, auc) in curves.items():
        ax.plot(fpr, tpr, label=f"{name} ({auc:.2f})")
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    ax.set(xlabel="right items flagged (FPR)", ylabel="wrong items flagged (TPR)", title=title or "ROC")
    ax.legend(fontsize=7, loc="lower right")
    return fig


def pr_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray, float]], prevalence: float, title: str = "") -> Figure:
    """``curves``: name -> (recall, precision, AUPRC); the prevalence is the no-skill line."""
    fig, ax = _figure()
    for name, (recall, precision, ap) in curves.items():
        ax.step(recall, precision, where="post", label=f"{name} ({ap:.2f})")
    ax.axhline(prevalence, color="grey", lw=0.8, ls="--", label=f"prevalence {prevalence:.2f}")
    ax.set(xlabel="recall of wrong items", ylabel="precision", ylim=(0, 1.02), title=title or "Precision-recall")
    ax.legend(fontsize=7, loc="upper right")
    return fig


def reliability_figure(tables: Mapping[str, Sequence[Any]], title: str = "") -> Figure:
    """``tables``: name -> reliability bins (mean_predicted, observed, Wilson interval, n)."""
    fig, ax = _figure()
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    for name, bins in tables.items():
        x = np.array([b.mean_predicted for b in bins])
        y = np.array([b.observed for b in bins])
        err = np.array([[b.observed - b.observed_low for b in bins], [b.observed_high - b.observed for b in bins]])
        err = np.clip(err, 0.0, None)
        ax.errorbar(x, y, yerr=err, marker="o", ms=3, capsize=2, lw=1, label=name)
    ax.set(xlabel="predicted P(error)", ylabel="observed error rate", xlim=(0, 1), ylim=(0, 1))
    ax.set_title(title or "Reliability (out of fold, Wilson 95% intervals)", fontsize=9)
    ax.legend(fontsize=7)
    return fig


def score_histogram(scores: np.ndarray, wrong: np.ndarray, title: str = "", *, integer: bool = False) -> Figure:
    """Scores of right and wrong items side by side (a flat judge shows one tall bar)."""
    fig, ax = _figure()
    if integer:
        values = np.arange(1, 11)
        right = [np.sum((scores == v) & (wrong == 0)) for v in values]
        bad = [np.sum((scores == v) & (wrong == 1)) for v in values]
        ax.bar(values - 0.2, right, width=0.4, label="right")
        ax.bar(values + 0.2, bad, width=0.4, label="wrong")
        ax.set_xticks(values)
    else:
        bins = np.histogram_bin_edges(scores, bins=20)
        ax.hist([scores[wrong == 0], scores[wrong == 1]], bins=bins, label=["right", "wrong"])
    ax.set(xlabel="score", ylabel="items", title=title)
    ax.legend(fontsize=8)
    return fig


def risk_coverage_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], title: str = "") -> Figure:
    """``curves``: name -> (coverage, risk) when the most trusted items are accepted first."""
    fig, ax = _figure()
    for name, (coverage, risk) in curves.items():
        ax.step(coverage, risk, where="post", label=name)
    ax.set(xlabel="share accepted without review", ylabel="error rate among accepted", title=title or "Risk-coverage")
    ax.legend(fontsize=7)
    return fig


def review_budget_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], title: str = "") -> Figure:
    """``curves``: name -> (share reviewed, share of errors caught)."""
    fig, ax = _figure()
    for name, (budget, recall) in curves.items():
        ax.plot(budget, recall, label=name)
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--", label="random")
    ax.set(xlabel="share of items reviewed (lowest scores first)", ylabel="share of errors caught")
    ax.set_title(title or "Review budget")
    ax.legend(fontsize=7)
    return fig


def save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def variant_means_figure(
    variants: Sequence[str], means: Sequence[float], shifts: Sequence[float | None], mode: str
) -> Figure:
    """Mean rating under each prompt variant (the first is the reference)."""
    fig, ax = _figure(6.0, 3.5)
    y = np.arange(len(variants))
    ax.barh(y, means, color=["#555"] + ["#4a90d9"] * (len(variants) - 1))
    ax.set_yticks(y, [v.replace("|", "\n") for v in variants], fontsize=7)
    for i, (m, s) in enumerate(zip(means, [None, *shifts], strict=False)):
        label = f"{m:.2f}" + (f" ({s:+.2f})" if s is not None else "")
        ax.text(m, i, " " + label, va="center", fontsize=7)
    ax.set(xlabel="mean rating", xlim=(0, 10.5), title=f"{mode}: mean rating by prompt order")
    ax.invert_yaxis()
    return fig


def value_figure(rows: Sequence[Mapping[str, Any]], maps: Sequence[str], title: str = "") -> Figure:
    """What each score value means: the observed error rate per value (Wilson 95% bars; hollow
    where a value holds few items) with the fitted maps and the naive reading drawn over it."""
    fig, ax = _figure()
    x = np.array([r["value"] for r in rows], dtype=float)
    y = np.array([r["error_rate"] for r in rows], dtype=float)
    err = np.clip(np.array([y - [r["error_low"] for r in rows], [r["error_high"] for r in rows] - y]), 0, None)
    few = np.array([bool(r["few_items"]) for r in rows])
    ax.errorbar(x, y, yerr=err, fmt="none", ecolor="black", capsize=2, lw=1)
    ax.scatter(x[~few], y[~few], color="black", zorder=3, label="observed error rate")
    ax.scatter(x[few], y[few], facecolors="none", edgecolors="black", zorder=3, label="observed (few items)")
    for name in maps:
        if all(name in r for r in rows):
            ax.plot(x, [r[name] for r in rows], marker=".", lw=1, label=name)
    for r in rows:
        ax.annotate(str(r["n"]), (r["value"], r["error_rate"]), textcoords="offset points", xytext=(4, 4), fontsize=6)
    ax.set(xlabel="score value (n items beside each point)", ylabel="P(error)", ylim=(-0.02, 1.02))
    ax.set_title(title or "What each value means", fontsize=9)
    ax.legend(fontsize=7)
    return fig
