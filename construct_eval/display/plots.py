"""The one drawing stack: every figure the package makes draws on an ``ax`` with these.

Drawing only: every number arrives already computed. Each function draws on the axes it is
given (scikit-learn's Display pattern: the report objects of :mod:`~construct_eval.reports.report_objects`
and the paper figures of :mod:`~construct_eval.paper.figures` both call them), labels every
scorer with :func:`~construct_eval.display.style.display_name` and tags the artist of each
series with a ``series:`` gid, which the readability checks count. The ``*_figure`` functions
are the per-run figures (a run's ``figures/`` folder): one axes each, the legend below it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.container import Container
from matplotlib.figure import Figure

from construct_eval.display.style import (
    BASELINE_GREY,
    CALIBRATOR_STYLES,
    OKABE_ITO,
    SERIES_GID,
    _sid,
    calibrator_style,
    display_name,
    series_style,
)
from construct_eval.stats.calibrators import NETCAL_METHODS, calibrator_words
from construct_eval.types import ScorerId

MAPS = CALIBRATOR_STYLES
"""The maps of a "what each value means" or reliability panel (colour, line style, marker): the one
calibrator palette of :mod:`construct_eval.display.style`, so a map looks the same in every figure."""
NAIVE_WORDS = "naive: (10 - rating) / 9"
"""The legend of the naive map, the rating read as if it were a probability."""


def map_label(method: str, *, per_value: bool = False) -> str:
    """A map's legend in a "what each value means" or reliability panel: the naive reading, or a
    calibrator fitted out of fold (:func:`~construct_eval.stats.calibrators.calibrator_words`).
    ``per_value``: read at each value as the mean of its items' out-of-fold readings ("isotonic
    (out-of-fold mean)"): each fold's map is monotone, their mean over a value's items, drawn from
    the folds in other shares at another value, need not be."""
    if method == "naive":
        return NAIVE_WORDS
    if per_value:
        return (
            calibrator_words(method).replace(")", ", out-of-fold mean)")
            if method in NETCAL_METHODS
            else (f"{calibrator_words(method)} (out-of-fold mean)")
        )
    return calibrator_words(method, out_of_fold=True)


def tag(artist: Any, key: str) -> Any:
    """Mark ``artist`` as the drawing of series ``key`` (what the readability checks count)."""
    for part in artist if isinstance(artist, Container) else [artist]:  # a bar container: each bar
        part.set_gid(f"{SERIES_GID}{key}")
    return artist


def _labels(names: Sequence[str]) -> dict[str, str]:
    """Display names, never the same for two scorers (their granularity, then their name, added)."""
    out = {n: display_name(n) for n in names}
    for form in (lambda n: display_name(n, granularity=True), str):
        clash = [n for n in names if list(out.values()).count(out[n]) > 1]
        for n in clash:
            out[n] = form(n)
    return out


def labels_for(names: Sequence[str]) -> list[str]:
    """One reader's label per scorer in ``names``, distinct."""
    found = _labels(list(names))
    return [found[n] for n in names]


# --------------------------------------------------------------------------- on an axes


def _line(name: str | ScorerId) -> dict[str, Any]:
    """A run figure's line for scorer ``name``: its series colour and style, drawn thinner and
    lighter for a leaf-field score, so it reads apart from the same score per top-level field."""
    s, sid = series_style(name), _sid(name)  # a name outside the grammar (a user's own curve): drawn as top-level
    leaf = sid is not None and sid.granularity == "leaf"
    return {"color": s.colour, "ls": s.linestyle, "lw": 0.8 if leaf else 1.2, "alpha": 0.55 if leaf else 1.0}


def draw_roc(ax: Any, curves: Mapping[str, tuple[np.ndarray, np.ndarray, float]]) -> Any:
    """``curves``: scorer -> (false-positive rates, true-positive rates, AUROC).

    Points are joined by straight lines: inside a block of tied scores the ROC is the segment
    between its ends (a flat judge is the diagonal, as its AUROC of 0.5 says), not a step.
    """
    names = _labels(list(curves))
    for name, (fpr, tpr, auc) in curves.items():
        (line,) = ax.plot(fpr, tpr, label=f"{names[name]} ({auc:.2f})", **_line(name))
        tag(line, name)
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    ax.set(xlabel="right items flagged (FPR)", ylabel="wrong items flagged (TPR)", xlim=(0, 1), ylim=(0, 1.01))
    return ax


def draw_pr(ax: Any, curves: Mapping[str, tuple[np.ndarray, np.ndarray, float]], shares_wrong: Sequence[float]) -> Any:
    """``curves``: scorer -> (recall, precision, AUPRC). ``shares_wrong``: each curve's share of wrong items,
    the precision of a score that knows nothing. Scores that rate the same items share one no-skill line; where
    they rate different items (a judge on a subset, the generator's log-probs on all), the line would be one
    score's, so a band spans them all and says so."""
    names = _labels(list(curves))
    for name, (recall, precision, ap) in curves.items():
        (line,) = ax.step(recall, precision, where="post", label=f"{names[name]} ({ap:.2f})", **_line(name))
        tag(line, name)
    shares = [float(x) for x in shares_wrong if np.isfinite(x)]
    if shares and max(shares) - min(shares) < 0.005:
        ax.axhline(shares[0], color="grey", lw=0.8, ls="--", label=f"share wrong {shares[0]:.2f}")
    elif shares:
        lo, hi = min(shares), max(shares)
        ax.axhspan(
            lo,
            hi,
            color="grey",
            alpha=0.2,
            lw=0,
            label=f"share wrong {lo:.2f} to {hi:.2f} (scores rate different items)",
        )
    ax.set(xlabel="recall of wrong items", ylabel="precision", xlim=(0, 1), ylim=(0, 1.02))
    return ax


def draw_risk_coverage(ax: Any, curves: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> Any:
    """``curves``: scorer -> (coverage, risk) when the most trusted items are accepted first."""
    names = _labels(list(curves))
    for name, (coverage, risk) in curves.items():
        (line,) = ax.step(coverage, risk, where="post", label=names[name], **_line(name))
        tag(line, name)
    ax.set(xlabel="share accepted without review", ylabel="error rate among accepted", xlim=(0, 1))
    return ax


def draw_review_budget(ax: Any, curves: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> Any:
    """``curves``: scorer -> (share reviewed, share of errors caught)."""
    names = _labels(list(curves))
    for name, (budget, recall) in curves.items():
        (line,) = ax.plot(budget, recall, label=names[name], **_line(name))
        tag(line, name)
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--", label="random order")
    ax.set(xlabel="share of items reviewed (lowest scores first)", ylabel="share of errors caught")
    ax.set(xlim=(0, 1), ylim=(0, 1.01))
    return ax


def draw_histogram(ax: Any, scores: np.ndarray, wrong: np.ndarray, *, integer: bool = False) -> Any:
    """Scores of right and wrong items side by side (a flat judge shows one tall bar)."""
    right_c, wrong_c = OKABE_ITO[4], OKABE_ITO[5]
    if integer:
        values = np.arange(1, 11)
        right = [np.sum((scores == v) & (wrong == 0)) for v in values]
        bad = [np.sum((scores == v) & (wrong == 1)) for v in values]
        tag(ax.bar(values - 0.2, right, width=0.4, label="right", color=right_c), "right")
        tag(ax.bar(values + 0.2, bad, width=0.4, label="wrong", color=wrong_c), "wrong")
        ax.set_xticks(values)
    else:
        bins = np.histogram_bin_edges(scores, bins=20)
        ax.hist([scores[wrong == 0], scores[wrong == 1]], bins=bins, label=["right", "wrong"], color=[right_c, wrong_c])
        for patch_set, key in zip(ax.containers, ("right", "wrong"), strict=False):
            tag(patch_set, key)
    ax.set(xlabel="score", ylabel="items")
    return ax


def _get(b: Any, key: str) -> float:
    value = b[key] if isinstance(b, Mapping) else getattr(b, key)
    return float(value) if value not in (None, "") else float("nan")


def draw_reliability(ax: Any, tables: Mapping[str, Sequence[Any]], *, ms: float = 3.0) -> Any:
    """``tables``: calibration method -> reliability bins (objects or stored rows with
    mean_predicted, observed and its Wilson interval): the observed error rate per bin of
    out-of-fold P(error) against the diagonal."""
    ax.plot([0, 1], [0, 1], color="grey", lw=0.6, ls="--")
    for k, (method, bins) in enumerate(tables.items()):
        c, ls, mk = calibrator_style(method, k)
        x = np.array([_get(b, "mean_predicted") for b in bins])
        y = np.array([_get(b, "observed") for b in bins])
        lo = np.array([_get(b, "observed_low") for b in bins])
        hi = np.array([_get(b, "observed_high") for b in bins])
        err = np.clip(np.array([y - lo, hi - y]), 0.0, None)
        drawn = ax.errorbar(x, y, yerr=err, color=c, ls=ls, marker=mk or "o", ms=ms, lw=0.9, capsize=1.2,
                            label=map_label(method))  # fmt: skip
        tag(drawn.lines[0], method)
        for part in (*drawn.lines[:1], *drawn.lines[1], *drawn.lines[2]):
            part.set_clip_on(False)  # a point at 0 or 1 is drawn whole, not halved by the spine
    ax.set(xlim=(0, 1), ylim=(0, 1))
    return ax


def _over_the_scale(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The naive reading, a straight line in the value, drawn over the whole 1-10 scale of a
    rating rather than only between the values it used (so every panel shows the same line);
    as given where the values are not on that scale or the reading is not a line."""
    if len(x) < 2 or x.min() < 1 or x.max() > 10 or np.ptp(x) == 0:
        return x, y
    slope, intercept = np.polyfit(x, y, 1)
    if not np.allclose(slope * x + intercept, y, atol=1e-3):  # the tables store 4 decimals
        return x, y
    ends = np.array([1.0, 10.0])
    return ends, slope * ends + intercept


def draw_meaning(ax: Any, rows: Sequence[Mapping[str, Any]], maps: Sequence[str], *, counts_ax: Any = None) -> Any:
    """What each value of a score means: the observed error rate per value (Wilson 95% bars;
    hollow where a value holds few items), the naive reading and the out-of-fold maps drawn
    over it, each with its own colour, line style and marker; ``counts_ax`` (below) gets the
    number of items at each value, so n is read off the figure."""
    x = np.array([_get(r, "value") for r in rows])
    y = np.array([_get(r, "error_rate") for r in rows])
    lo = np.array([_get(r, "error_low") for r in rows])
    hi = np.array([_get(r, "error_high") for r in rows])
    few = np.array([str(r.get("few_items")).lower() == "true" for r in rows])
    for name in maps:
        if name in MAPS and name != "base rate" and rows and all(r.get(name) not in (None, "") for r in rows):
            c, ls, mk = MAPS[name]
            xs, ys = x, np.array([_get(r, name) for r in rows])
            if name == "naive":
                xs, ys = _over_the_scale(x, ys)
            (line,) = ax.plot(xs, ys, color=c, ls=ls, marker=mk, ms=3, lw=1.2, label=map_label(name, per_value=True),
                              zorder=3)  # fmt: skip
            tag(line, name)
    ax.errorbar(x, y, yerr=np.clip([y - lo, hi - y], 0, None), fmt="none", ecolor="black", lw=0.7, capsize=1.2,
                zorder=4)  # fmt: skip
    (dots,) = ax.plot(x[~few], y[~few], "o", color="black", ms=3.2, label="observed (Wilson 95%)", zorder=5)
    tag(dots, "observed")
    if few.any():
        (hollow,) = ax.plot(x[few], y[few], "o", color="black", markerfacecolor="white", ms=3.2,
                            label="observed, < 20 items", zorder=5)  # fmt: skip
        tag(hollow, "observed")
    n_items = np.array([_get(r, "n") for r in rows], dtype=float)
    if n_items.sum() > 0:  # the share wrong over every value: what a map that ignores the rating predicts
        base = float(np.nansum(y * n_items) / n_items.sum())
        c, ls, _ = MAPS["base rate"]
        (line,) = ax.plot([1, 10] if x.min() >= 1 and x.max() <= 10 else [x.min(), x.max()], [base, base],
                          color=c, ls=ls, lw=0.8, label="base rate (share wrong)", zorder=3.5)  # fmt: skip
        tag(line, "base rate")
    ax.set_ylim(-0.03, 1.03)
    if counts_ax is not None:
        n = np.array([_get(r, "n") for r in rows])
        tag(counts_ax.bar(x, n, width=0.6, color=BASELINE_GREY), "items")
        counts_ax.set_ylim(0, max(n.max(), 1) * 1.1)
    return ax


def draw_variant_means(ax: Any, variants: Sequence[str], means: Sequence[float], shifts: Sequence[float | None]) -> Any:
    """Mean rating under each prompt variant (the first is the reference)."""
    y = np.arange(len(variants))
    bars = ax.barh(y, means, color=["#555555"] + [OKABE_ITO[4]] * (len(variants) - 1))
    tag(bars, "means")
    ax.set_yticks(y, [v.replace("|", "\n") for v in variants])
    for i, (m, s) in enumerate(zip(means, [None, *shifts], strict=False)):
        label = f"{m:.2f}" + (f" ({s:+.2f})" if s is not None else "")
        ax.text(m, i, " " + label, va="center", fontsize="small")
    ax.set(xlabel="mean rating", xlim=(0, 12.5))
    ax.invert_yaxis()
    return ax


# --------------------------------------------------------------------------- per-run figures


def _figure(width: float = 5.0, height: float = 4.0) -> tuple[Figure, Any]:
    fig = Figure(figsize=(width, height), dpi=120, layout="constrained")
    return fig, fig.add_subplot()


def _with_legend_below(fig: Figure, ax: Any, title: str) -> Figure:
    """The axes' legend below it, outside (constrained layout makes room), in two columns."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=2 if len(handles) > 3 else len(handles),
                   fontsize=7, frameon=False)  # fmt: skip
    ax.set_title(title, fontsize=9)
    return fig


def _sized(n_series: int, base: float = 4.0) -> tuple[Figure, Any]:
    return _figure(5.5, base + 0.13 * ((n_series + 1) // 2))


def roc_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray, float]], title: str = "") -> Figure:
    fig, ax = _sized(len(curves))
    return _with_legend_below(fig, draw_roc(ax, curves), title or "ROC")


def pr_figure(
    curves: Mapping[str, tuple[np.ndarray, np.ndarray, float]], shares_wrong: Sequence[float], title: str = ""
) -> Figure:
    fig, ax = _sized(len(curves))
    return _with_legend_below(fig, draw_pr(ax, curves, shares_wrong), title or "Precision-recall")


def risk_coverage_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], title: str = "") -> Figure:
    fig, ax = _sized(len(curves))
    return _with_legend_below(fig, draw_risk_coverage(ax, curves), title or "Risk-coverage")


def review_budget_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], title: str = "") -> Figure:
    fig, ax = _sized(len(curves))
    return _with_legend_below(fig, draw_review_budget(ax, curves), title or "Review budget")


def score_histogram(scores: np.ndarray, wrong: np.ndarray, title: str = "", *, integer: bool = False) -> Figure:
    fig, ax = _figure()
    return _with_legend_below(fig, draw_histogram(ax, scores, wrong, integer=integer), title)


def reliability_figure(tables: Mapping[str, Sequence[Any]], title: str = "") -> Figure:
    """``tables``: method -> reliability bins (mean_predicted, observed, Wilson interval, n)."""
    fig, ax = _figure(4.5, 4.3)
    draw_reliability(ax, tables)
    ax.set(xlabel="predicted P(error), out of fold", ylabel="observed error rate")
    return _with_legend_below(fig, ax, title or "Reliability (out of fold, Wilson 95% intervals)")


def value_figure(rows: Sequence[Mapping[str, Any]], maps: Sequence[str], title: str = "") -> Figure:
    """What each score value means, with the number of items at each value below."""
    fig = Figure(figsize=(4.5, 4.6), dpi=120, layout="constrained")
    ax, counts = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    draw_meaning(ax, rows, maps, counts_ax=counts)
    ax.set_ylabel("observed error rate")
    counts.set(xlabel="score value", ylabel="items")
    return _with_legend_below(fig, ax, title or "What each value means")


def variant_means_figure(
    variants: Sequence[str], means: Sequence[float], shifts: Sequence[float | None], mode: str
) -> Figure:
    """Mean rating under each prompt variant (the first is the reference)."""
    fig, ax = _figure(6.0, 3.5)
    draw_variant_means(ax, variants, means, shifts)
    ax.set_title(f"{mode}: mean rating by prompt order", fontsize=9)
    return fig


def save(fig: Figure, path: Path, dpi: float | None = None) -> Path:
    """Write ``fig`` to ``path`` and close it: a saved figure is done with (an open one stays in
    pyplot's list, costs memory on a long analysis and is drawn again by a notebook's inline backend).

    The canvas grows to hold every text drawn (``bbox_inches="tight"``): a legend wider than the
    axes, a long title or the last tick label would otherwise be cut at the figure's edge. A run's
    figures are read on screen, not placed in a column of fixed width (the paper figures are, and
    keep their venue's size: :func:`construct_eval.display.style.save_all`)."""
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi if dpi is not None else "figure", bbox_inches="tight", pad_inches=0.08)
    plt.close(fig)
    return path
