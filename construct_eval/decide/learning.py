"""How many labels calibration needs, and the smooth ECE beside the binned ones.

Learning curves: for m labelled documents (m = 25, 50, ...), a calibrator (isotonic or Platt, the
package's own from :mod:`construct_eval.stats.calibration`) is fitted on the items of m
documents drawn at random and scored on every other document (never seen in fitting); Brier and
equal-width ECE are averaged over repeated draws, with the 2.5-97.5% range of the draws. Beside
them, the base rate of the m documents as a constant prediction: a calibrator that does not beat
it has learned nothing from the score.

Smooth ECE (Blasiok and Nakkiran 2023, arXiv 2309.12236, the ``relplot`` package): the ECE of a
kernel-smoothed reliability diagram with a bandwidth chosen by the data, consistent where binned
ECEs depend on the bins; computed on the out-of-fold predictions of the calibration tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from construct_eval.display.style import calibrator_style
from construct_eval.stats.calibration import brier, ece, make_calibrator, out_of_fold
from construct_eval.stats.calibrators import calibrator_words

LABELLED_DOCUMENTS = (25, 50, 100, 200, 400)
CURVE_METHODS = ("isotonic", "platt")


def learning_curve(
    scores: Any,
    wrong: Any,
    doc_ids: Any,
    *,
    sizes: Sequence[int] = LABELLED_DOCUMENTS,
    methods: Sequence[str] = CURVE_METHODS,
    repeats: int = 50,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Held-out Brier and ECE per method and number of labelled documents (sizes below the run's
    document count only; at least 10 documents are always left to score)."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(wrong, dtype=int)
    docs, inverse = np.unique(np.asarray(doc_ids), return_inverse=True)
    rng = np.random.default_rng(seed)
    rows = []
    for m in sizes:
        if m > len(docs) - 10:
            continue
        results: dict[str, list[tuple[float, float]]] = {k: [] for k in (*methods, "base rate")}
        for _ in range(repeats):
            train_docs = np.zeros(len(docs), dtype=bool)
            train_docs[rng.choice(len(docs), m, replace=False)] = True
            train = train_docs[inverse]
            test = ~train
            yt, ye = y[train], y[test]
            base = np.full(test.sum(), yt.mean())
            results["base rate"].append((brier(base, ye), ece(base, ye)))
            for method in methods:
                p = base if len(np.unique(yt)) < 2 else make_calibrator(method).fit(s[train], yt).predict(s[test])
                results[method].append((brier(p, ye), ece(p, ye)))
        for method, vals in results.items():
            b = np.array([v[0] for v in vals])
            e = np.array([v[1] for v in vals])
            rows.append(
                {
                    "method": method,
                    "labelled_documents": m,
                    "repeats": repeats,
                    "brier": round(float(b.mean()), 4),
                    "brier_low": round(float(np.quantile(b, 0.025)), 4),
                    "brier_high": round(float(np.quantile(b, 0.975)), 4),
                    "ece": round(float(e.mean()), 4),
                    "ece_low": round(float(np.quantile(e, 0.025)), 4),
                    "ece_high": round(float(np.quantile(e, 0.975)), 4),
                }
            )
    return rows


def smooth_ece_rows(
    scores: Any, wrong: Any, doc_ids: Any, *, methods: Sequence[str] = CURVE_METHODS, seed: int = 0
) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """Per method: binned ECEs and the smooth ECE of the out-of-fold P(error); and the predictions."""
    import relplot

    y = np.asarray(wrong, dtype=int)
    rows, preds = [], {}
    for method in methods:
        p = out_of_fold(method, scores, y, doc_ids, seed=seed)
        preds[method] = p
        rows.append(
            {
                "method": method,
                "n": len(y),
                "brier": round(brier(p, y), 4),
                "ece_width": round(ece(p, y, strategy="width"), 4),
                "ece_mass": round(ece(p, y, strategy="mass"), 4),
                "smooth_ece": round(float(relplot.smECE(np.clip(p, 0.0, 1.0), y)), 4),
            }
        )
    return rows, preds


def plot_smooth_reliability(p_error: Any, wrong: Any, ax: Any, *, title: str = "") -> Any:
    """relplot's smoothed reliability diagram of P(error) against the observed errors, on ``ax``.

    relplot draws its bootstrap band from numpy's global random state (its ``BaggingRegressor``
    and ``scipy.stats.bootstrap`` take no seed), so the state is seeded for the call and put back
    after it: the same inputs give the same picture."""
    import relplot

    state = np.random.get_state()
    np.random.seed(0)
    try:
        diagram = relplot.prepare_rel_diagram(
            np.clip(np.asarray(p_error, float), 0, 1), np.asarray(wrong, int), num_bootstrap=50
        )
    finally:
        np.random.set_state(state)
    relplot.plot_rel_diagram(diagram, fig=ax.figure, ax=ax, use_default_style=False)
    if title:
        ax.set_title(title, fontsize=8)
    return ax


def plot_learning_curves(
    rows: Sequence[dict[str, Any]], ax: Any, *, metric: str = "brier", title: str = "", legend: bool = True
) -> Any:
    """Brier (or ECE) against labelled documents, one line per method, with the draws' range
    (``legend=False`` where a figure of several panels gives one legend for all)."""
    for k, method in enumerate(dict.fromkeys(r["method"] for r in rows)):
        rs = [r for r in rows if r["method"] == method]
        m = [float(r["labelled_documents"]) for r in rs]
        c, ls, mk = calibrator_style(method, k)
        ax.plot(
            m, [float(r[metric]) for r in rs], color=c, ls=ls, marker=mk or "o", ms=3, label=calibrator_words(method)
        )
        ax.fill_between(
            m, [float(r[f"{metric}_low"]) for r in rs], [float(r[f"{metric}_high"]) for r in rs], color=c, alpha=0.15
        )
    sizes = sorted({int(float(r["labelled_documents"])) for r in rows})
    ax.set_xscale("log")
    ax.set_xticks(sizes, [str(v) for v in sizes])
    ax.minorticks_off()
    ax.set_xlabel("labelled documents")
    ax.set_ylabel(f"held-out {'Brier score' if metric == 'brier' else metric.upper()}")
    if title:
        ax.set_title(title, fontsize=9)
    if legend:
        ax.legend(fontsize=8)
    return ax
