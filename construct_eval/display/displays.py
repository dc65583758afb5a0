"""Detection and calibration from plain arrays, in scikit-learn's Display style.

A researcher with a score column, a wrong/right column and document ids gets the package's
numbers without building a run folder::

    >>> import numpy as np
    >>> from construct_eval import DetectionDisplay, RatingCalibration
    >>> rng = np.random.default_rng(0)
    >>> docs = np.repeat(np.arange(60), 5)                # 60 documents, 5 fields each
    >>> wrong = rng.random(300) < 0.3
    >>> rating = np.where(wrong, rng.integers(3, 9, 300), rng.integers(6, 11, 300))
    >>> found = DetectionDisplay.from_predictions(wrong, rating, groups=docs, name="judge rating")
    >>> round(found.auroc.estimate, 3), found.auroc.low < found.auroc.estimate < found.auroc.high
    (0.848, True)
    >>> meaning = RatingCalibration.from_predictions(wrong, rating, groups=docs)
    >>> [r["reading"] for r in meaning.readings]
    ['naive', 'isotonic (out of fold)', 'platt (out of fold)', 'per value (out of fold)', 'base rate (out of fold)']

Each object holds its numbers (computed by :mod:`construct_eval.stats`: the document bootstrap,
out-of-fold fits grouped by document) and draws them with ``.plot(ax=...)`` on the package's
one drawing stack (:mod:`.plots`). Nothing is written: saving a figure is the caller's
``fig.savefig``. A score is read as the package reads every score: a *low* score flags an item
as likely wrong (a rating of 2 is more suspect than a 9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from construct_eval.display import plots
from construct_eval.stats.calibration import naive_rating_reading, value_table
from construct_eval.stats.metrics import (
    REVIEW_BUDGETS,
    DetectionSummary,
    Interval,
    detection_summary,
    pr_points,
    roc_points,
)
from construct_eval.stats.rating_readings import rating_maps, rating_readings

N_RESAMPLES = 2000
"""Document resamples behind every interval (the package's paired tables use the same number)."""


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(4.0, 3.6), layout="constrained")[1]


@dataclass(frozen=True)
class DetectionDisplay:
    """How well one score finds wrong items: AUROC and AUPRC with document-bootstrap
    intervals, precision and recall at review budgets, and the curves to draw.

    Build it with :meth:`from_predictions`; ``summary`` is the
    :class:`~construct_eval.stats.metrics.DetectionSummary` the run tables print a row of.
    """

    name: str
    summary: DetectionSummary
    roc: tuple[np.ndarray, np.ndarray]
    pr: tuple[np.ndarray, np.ndarray]

    @classmethod
    def from_predictions(
        cls,
        wrong: Any,
        score: Any,
        *,
        groups: Any | None = None,
        name: str = "score",
        n_resamples: int = N_RESAMPLES,
        seed: int = 0,
    ) -> DetectionDisplay:
        """``wrong``: 1/True where the item is wrong; ``score``: higher means more trusted;
        ``groups``: the document of each item (the bootstrap resamples documents, so the
        fields of one document move together); without it every item is its own document."""
        summary = detection_summary(wrong, score, groups, budgets=REVIEW_BUDGETS, n_boot=n_resamples, seed=seed)
        return cls(name=name, summary=summary, roc=roc_points(wrong, score), pr=pr_points(wrong, score))

    @property
    def auroc(self) -> Interval:
        return self.summary.auroc

    @property
    def auprc(self) -> Interval:
        return self.summary.auprc

    @property
    def underpowered(self) -> str:
        """Why no ranking should rest on this score's numbers ("" when nothing is wrong)."""
        return self.summary.power_note()

    def __str__(self) -> str:
        s = self.summary
        note = f"; underpowered: {self.underpowered}" if self.underpowered else ""
        return f"{self.name}: AUROC {s.auroc} (n={s.n} items, {s.positives} wrong, {s.n_groups} documents){note}"

    def plot(self, ax: Any = None, *, kind: str = "roc") -> Any:
        """Draw the ROC curve (``kind="roc"``) or the precision-recall curve (``"pr"``, with
        the share wrong as its chance line) on ``ax`` (a new one when None); returns the axes."""
        ax = _axes(ax)
        if kind == "roc":
            fpr, tpr = self.roc
            return plots.draw_roc(ax, {self.name: (fpr, tpr, self.auroc.estimate)})
        if kind == "pr":
            recall, precision = self.pr
            return plots.draw_pr(ax, {self.name: (recall, precision, self.auprc.estimate)}, [self.summary.prevalence])
        raise ValueError(f"kind must be 'roc' or 'pr', not {kind!r}")


@dataclass(frozen=True)
class RatingCalibration:
    """What each value of a 1-10 rating means as an error rate.

    ``values``: one row per rating value (items, wrong, the observed error rate with its
    Wilson interval, the naive reading (10 - r) / 9, and the isotonic and Platt maps fitted out
    of fold, grouped by document). ``readings``: one row per reading (naive, isotonic, Platt,
    the base rate) with its out-of-fold Brier score and document-bootstrap interval; empty when
    the rating takes one value, the items have one class, or there are too few documents to
    fit out of fold (a rating with one value is not calibrated).
    """

    values: list[dict[str, Any]]
    readings: list[dict[str, Any]]
    base_rate: float

    @classmethod
    def from_predictions(
        cls, wrong: Any, rating: Any, *, groups: Any, n_resamples: int = N_RESAMPLES, seed: int = 0
    ) -> RatingCalibration:
        """``wrong``: 1/True where wrong; ``rating``: the judge's rating (any numbers whose
        distinct values are few); ``groups``: each item's document (folds never split one)."""
        r = np.asarray(rating, dtype=float)
        y = np.asarray(wrong, dtype=float)
        if r.shape != y.shape or len(np.asarray(groups)) != len(y):
            raise ValueError(f"wrong, rating and groups must have one length, got {len(y)}, {len(r)}, {len(groups)}")
        maps = rating_maps(r, y, groups, seed=seed)
        fitted = {m: np.array([maps[float(v)][m] for v in r]) for m in ("isotonic", "platt")} if maps else {}
        values = value_table(r, y, fitted=fitted, naive=naive_rating_reading)
        readings = rating_readings(r, y, groups, n_boot=n_resamples, seed=seed)
        return cls(values=values, readings=readings, base_rate=float(y.mean()) if len(y) else float("nan"))

    @property
    def best(self) -> str | None:
        """The reading with the lowest out-of-fold Brier score (None when nothing was fitted)."""
        return min(self.readings, key=lambda row: row["brier"])["reading"] if self.readings else None

    def plot(self, ax: Any = None, *, counts_ax: Any = None) -> Any:
        """The observed error rate per value with the naive reading and the fitted maps over it;
        ``counts_ax`` gets the items per value. Returns the axes."""
        ax = _axes(ax)
        maps = ["naive", *(["isotonic", "platt"] if self.readings else [])]
        plots.draw_meaning(ax, self.values, maps, counts_ax=counts_ax)
        ax.set(xlabel="rating", ylabel="share wrong")
        return ax
