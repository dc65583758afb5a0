"""The tables of the analyses, from :class:`~construct_eval.reports.collect.ScoredItems`:
detection (AUROC, AUPRC, review budgets, with document-bootstrap intervals), calibration out of
fold, paired comparisons with Holm correction, and how a rating scale is used; written as CSV
(every column) and Markdown.
"""

from __future__ import annotations

import csv
import hashlib
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from construct_eval.kinds import Level
from construct_eval.reports.collect import FIELD_PRIOR, ScoredItems, field_key
from construct_eval.reports.reader_tables import read_csv, reader_markdown
from construct_eval.stats import delong
from construct_eval.stats.calibration import (
    METHODS,
    Calibrator,
    PerFieldCalibrator,
    brier,
    calibration_metrics,
    calibrator_name,
    out_of_fold,
    out_of_fold_per_field,
    plan_review,
)
from construct_eval.stats.count_metrics import distinct_scores
from construct_eval.stats.metrics import REVIEW_BUDGETS, auroc, detection_summary
from construct_eval.stats.rating_readings import BaseRate
from construct_eval.types import ScorerId


def within_field_auroc(it: ScoredItems) -> tuple[float, int, int]:
    """Mean of per-field AUROCs weighted by wrong items, and (fields used, fields with one class).

    What a score knows beyond which field an item is: a score that only ranked fields by how
    error-prone they are would reach a high pooled AUROC and 0.5 within fields.
    """

    groups: dict[str, list[int]] = defaultdict(list)
    for i, name in enumerate(it.fields):
        groups[field_key(name)].append(i)
    y, s, _ = it.columns()
    total, weight, used, one_class = 0.0, 0.0, 0, 0
    for idx in groups.values():
        yy = y[idx]
        pos = yy.sum()
        if pos == 0 or pos == len(yy):
            one_class += 1
            continue
        total += pos * auroc(yy, s[idx])
        weight += pos
        used += 1
    return (total / weight if weight else float("nan")), used, one_class


def detection_table(
    items: Sequence[ScoredItems],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    budgets: Sequence[float] = REVIEW_BUDGETS,
    intervals: str = "bootstrap",
) -> list[dict[str, Any]]:
    """One row per scorer and level: AUROC and AUPRC with document-bootstrap intervals (the
    AUROC's by ``intervals``: :func:`construct_eval.stats.metrics.detection_summary`), and cost."""
    rows = []
    for it in items:
        row: dict[str, Any] = {"level": it.level.value, "scorer": it.scorer.name}
        y, s, g = it.columns()
        if it.n and 0 < y.sum() < len(y):
            row.update(detection_summary(y, s, g, budgets=budgets, n_boot=n_boot, seed=seed, intervals=intervals).row())
        else:
            row.update({"n": it.n, "prevalence": float(y.mean()) if it.n else float("nan"), "auroc": float("nan")})
            row["note"] = "one class only: no detection metric" if it.n else "nothing scored"
        n_all = it.n + it.unscored
        row["unscored"] = it.unscored
        row["unscored_rate"] = round(it.unscored / n_all, 4) if n_all else float("nan")
        if it.failed:  # requests that got no answer: neither scored nor unscored
            row["failed_requests"] = it.failed
        sid = it.scorer
        if it.level is Level.FIELD and it.n and sid.family != FIELD_PRIOR:  # the prior is constant within a field
            value, used, one_class = within_field_auroc(it)
            row["auroc_within_field"] = round(value, 4) if value == value else float("nan")
            row["fields_used"] = used
            row["fields_one_class"] = one_class
        if sid.uses_labels:
            row["uses_labels"] = True
        row["left_out"] = sum(it.left_out.values())
        row["left_out_why"] = "; ".join(f"{k}: {v}" for k, v in sorted(it.left_out.items()))
        row["distinct_scores"] = len(set(it.scores))
        if it.n and (use := score_use(it.scorer, it.scores)):
            row["rating_use"] = use
        if it.duplicates_dropped:
            row["duplicates_dropped"] = it.duplicates_dropped
        row.update(calls=it.calls, tokens=it.tokens, seconds=round(it.seconds, 1))
        rows.append(row)
    return rows


def _calibratable(n: int, wrong: np.ndarray, groups: np.ndarray) -> bool:
    """Enough items of each class, and documents, to calibrate out of fold."""
    return n >= 10 and min(wrong.sum(), len(wrong) - wrong.sum()) >= 2 and len(np.unique(groups)) >= 2


def calibration_table(
    items: Sequence[ScoredItems],
    *,
    methods: Sequence[str | Calibrator] = METHODS,
    n_splits: int = 5,
    seed: int = 0,
    target_recall: float = 0.9,
    workers: int | None = None,
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], np.ndarray]]:
    """Out-of-fold calibration of each scorer by each method (a registered name or a calibrator
    instance, reported under :func:`calibrator_name`); metrics rows and the predictions.

    Each (scorer, method) is one fit with its row, independent of the others: with more than a
    few hundred thousand items in all they are made in ``workers`` processes (default: the cores
    this process may use, :func:`fit_workers`), the largest first; the numbers are the same."""
    layout: list[dict[str, Any] | int] = []  # a finished row, or the index of a fit
    fits: list[_Fit] = []
    for it in items:
        y, s, g = it.columns()  # documents as codes in the ids' order: the same folds, no string sorting
        if not _calibratable(it.n, y, g):
            continue
        distinct = len(distinct_scores(s)[0])
        if distinct < MIN_DISTINCT_TO_FIT:
            # one value: any calibrator returns the base rate and its ECE looks better than any
            # real score's; two or three: read the error rate per value, do not fit a curve
            why = "undefined: constant score" if distinct == 1 else f"not fitted: {distinct} distinct scores"
            layout.append(
                {
                    "level": it.level.value,
                    "scorer": it.scorer.name,
                    "method": why,
                    "n": it.n,
                    "prevalence": round(float(y.mean()), 4),
                }
            )
            continue
        candidates: list[str | Calibrator] = list(methods)
        if it.level is Level.FIELD:
            candidates.append(PerFieldCalibrator.name)
        for candidate in candidates:
            layout.append(len(fits))
            fits.append(_Fit(it, candidate, calibrator_name(candidate), n_splits, seed, target_recall))
    results = _run_fits(fits, workers)
    rows: list[dict[str, Any]] = []
    predictions: dict[tuple[str, str], np.ndarray] = {}
    for entry in layout:
        if isinstance(entry, dict):
            rows.append(entry)
            continue
        fit = fits[entry]
        p, row = results[entry]
        predictions[(fit.items.key, fit.method)] = p
        rows.append(row)
    return rows, predictions


@dataclass(frozen=True)
class _Fit:
    """One out-of-fold fit of the calibration table and its row."""

    items: ScoredItems
    candidate: str | Calibrator
    method: str
    n_splits: int
    seed: int
    target_recall: float

    def run(self) -> tuple[np.ndarray, dict[str, Any]]:
        it = self.items
        y, s, g = it.columns()
        if self.method == PerFieldCalibrator.name:
            p = out_of_fold_per_field(s, y, g, it.fields, n_splits=self.n_splits, seed=self.seed)
        else:
            p = out_of_fold(self.candidate, s, y, g, n_splits=self.n_splits, seed=self.seed)
        plan = plan_review(p, g, target_recall=self.target_recall, wrong=y)
        recall = self.target_recall
        row = {
            "level": it.level.value,
            "scorer": it.scorer.name,
            "method": self.method,
            "n": it.n,
            "prevalence": round(float(y.mean()), 4),
            **{k: round(v, 4) for k, v in calibration_metrics(p, y).items()},
            f"review_share_items@{recall:.0%}": round(plan.share_items, 4),
            f"review_share_documents@{recall:.0%}": round(plan.share_documents, 4),
            "realised_recall": round(plan.realised_recall, 4) if plan.realised_recall is not None else None,
        }
        return p, row


PARALLEL_ITEMS = 300_000
"""Fits over fewer items than this in all are made in this process (a worker costs a fork)."""


def fit_workers() -> int:
    """How many processes the calibration fits may use: ``CONSTRUCT_EVAL_WORKERS`` if set (1: none
    but this one), else the cores this process may run on."""
    import os

    told = os.environ.get("CONSTRUCT_EVAL_WORKERS", "").strip()
    if told:
        return max(1, int(told))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


_FORKED: list[Callable[[], Any]] = []  # the tasks a forked worker runs (inherited, not pickled)


def _quiet_worker() -> None:
    """Set up a forked worker: no profiler of the parent's (a benchmark's would follow every call),
    and the bootstrap walks on one thread (:func:`~construct_eval.stats.resampled.use_threads`):
    numba's threads, started in the parent before the fork, may not be used again in the child,
    where a walk would abort the worker and the pool would start another in its place, forever."""
    from construct_eval.stats.resampled import use_threads

    sys.setprofile(None)
    use_threads(1)


def _run_forked_task(index: int) -> tuple[int, Any]:
    return index, _FORKED[index]()


def can_fork() -> bool:
    """Worker processes can be forked here (Linux; not from inside a worker, which may not have
    its own)."""
    import multiprocessing

    return (
        "fork" in multiprocessing.get_all_start_methods()
        and sys.platform != "darwin"
        and not multiprocessing.current_process().daemon
    )


class Forked:
    """Tasks running in forked workers (:func:`run_forked`); :meth:`results` waits for them."""

    def __init__(self, tasks: Sequence[Callable[[], Any]], workers: int, order: Sequence[int] | None):
        import gc
        import multiprocessing

        self.results_ = [None] * len(tasks)
        self.serial = workers <= 1 or len(tasks) <= 1 or not can_fork()
        if self.serial:
            self.tasks = list(tasks)
            return
        _FORKED[:] = tasks
        gc.collect()
        gc.freeze()  # the workers share the parent's pages: no collection in them copies them
        try:
            context = multiprocessing.get_context("fork")
            self.pool = context.Pool(min(workers, len(tasks)), initializer=_quiet_worker)
            self.pending = self.pool.imap_unordered(_run_forked_task, order or range(len(tasks)))
        finally:
            gc.unfreeze()

    def results(self) -> list[Any]:
        if self.serial:
            return [task() for task in self.tasks]
        try:
            for index, result in self.pending:
                self.results_[index] = result
        finally:
            self.pool.close()
            self.pool.join()
            _FORKED.clear()
        return list(self.results_)


def run_forked(tasks: Sequence[Callable[[], Any]], workers: int, *, order: Sequence[int] | None = None) -> list[Any]:
    """Each task's result, in the tasks' order, from ``workers`` forked processes: the tasks and
    what they read are inherited, not copied or pickled (only the results come back), started in
    ``order`` (say, the largest first); with one worker (or no fork) in this process."""
    return Forked(tasks, workers, order).results()


def _run_fits(fits: Sequence[_Fit], workers: int | None) -> list[tuple[np.ndarray, dict[str, Any]]]:
    """Every fit's predictions and row, in order: in this process, or (over
    :data:`PARALLEL_ITEMS` items in all) in forked workers, the largest fits first."""
    from construct_eval.stats.out_of_fold import remember_out_of_fold

    workers = fit_workers() if workers is None else max(1, workers)
    if sum(f.items.n for f in fits) < PARALLEL_ITEMS:
        workers = 1
    for f in fits:
        f.items.columns()  # made once, before any fork, for every worker
    if workers > 1:
        _import_before_fork(fits)
    size = [f.items.n * (3 if f.method == PerFieldCalibrator.name else 1) for f in fits]
    order = sorted(range(len(fits)), key=lambda i: -size[i])
    results = run_forked([f.run for f in fits], workers, order=order)
    if workers > 1:
        for f, (p, _) in zip(fits, results, strict=True):  # the rating readings ask for some of them again
            y, s, g = f.items.columns()
            if f.method != PerFieldCalibrator.name:
                remember_out_of_fold(f.candidate, s, y, g, p, n_splits=f.n_splits, seed=f.seed)
    return results


def _import_before_fork(fits: Sequence[_Fit]) -> None:
    """Fit each registered method of ``fits`` once on a few items in this process, so that what a
    fit imports on first use (scikit-learn's isotonic regression, scipy's statistics: over half a
    second) is inherited by every forked worker instead of imported by each. Only a time saving: a
    method that cannot fit so few items is left to its workers."""
    from construct_eval.stats.calibrators import make_calibrator

    score, wrong = np.array([0.1, 0.3, 0.5, 0.7, 0.9, 0.2]), np.array([1, 0, 1, 0, 0, 1])
    for name in dict.fromkeys(f.candidate for f in fits if isinstance(f.candidate, str)):
        if name == PerFieldCalibrator.name:
            continue
        try:
            make_calibrator(name).fit(score, wrong).predict(score)
        except Exception:  # a warm-up only: the workers fit it on the real items
            continue


def base_rate_table(items: Sequence[ScoredItems], *, n_splits: int = 5, seed: int = 0) -> list[dict[str, Any]]:
    """The Brier score of the reading that ignores the score, out of fold: every item gets the
    share wrong of the other folds' items (:class:`~construct_eval.stats.rating_readings.BaseRate`),
    on the folds :func:`calibration_table` fits its maps on (same items, documents, splits and seed).
    A map that does not beat it has learnt the error rate, not what the score says. The folds spread
    the classes evenly, so it comes close to the in-sample p(1 - p) (to 3 decimals on the natural run)."""
    rows: list[dict[str, Any]] = []
    for it in items:
        y, s, g = it.columns()
        if not _calibratable(it.n, y, g):
            continue
        p = out_of_fold(BaseRate(), s, y, g, n_splits=n_splits, seed=seed)
        rows.append(
            {
                "level": it.level.value,
                "scorer": it.scorer.name,
                "n": it.n,
                "prevalence": round(float(y.mean()), 4),
                "brier_base_rate": round(brier(p, y), 4),
            }
        )
    return rows


DETECTION_ORDER = (
    "level", "scorer", "n", "documents", "positives", "prevalence", "auroc", "auroc_low", "auroc_high",
    "auroc_within_field", "auprc", "auprc_low", "auprc_high", "precision@5%", "recall@5%", "precision@10%", "recall@10%",
    "precision@20%", "recall@20%", "precision@30%", "recall@30%", "unscored", "failed_requests", "left_out", "left_out_why",
    "distinct_scores", "rating_use", "uses_labels", "underpowered", "boot_dropped", "note", "duplicates_dropped",
    "fields_used", "fields_one_class", "calls", "tokens", "seconds",
)  # fmt: skip
"""Column order of the Markdown detection tables (the CSV has every column too)."""


def detection_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    present = {k for r in rows for k in r}
    return [c for c in DETECTION_ORDER if c in present] + sorted(present - set(DETECTION_ORDER))


MIN_DISTINCT_TO_FIT = 4
"""A score with fewer distinct values is not calibrated: see :func:`calibration_table`."""


def write_table(
    rows: Sequence[Mapping[str, Any]], path: Path, title: str = "", md_columns: Sequence[str] | None = None
) -> None:
    """The same rows as CSV (every column, internal names) and as a Markdown table for a reader,
    made from the CSV just written (:mod:`~construct_eval.reports.reader_tables`: the view of the
    table's kind, else ``md_columns`` if given, else every column)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    columns: list[str] = []
    for r in rows:
        columns.extend(k for k in r if k not in columns)
    with path.with_suffix(".csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    stored_columns, stored = read_csv(path.with_suffix(".csv"))
    path.with_suffix(".md").write_text(reader_markdown(path.stem, stored, stored_columns, title, md_columns))


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return " ".join(v.split()).replace("|", "\\|")  # one line per row, pipes escaped
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.3f}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, title: str = "") -> str:
    columns = list(columns or (rows[0].keys() if rows else []))
    lines = [f"## {title}", ""] if title else []
    lines.append("| " + " | ".join(columns) + " |")
    lines.append("|" + "|".join("---" for _ in columns) + "|")
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(c)) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def file_slug(text: str | ScorerId, limit: int = 80) -> str:
    """A file-name-safe form of a scorer name, as the tables' and figures' file names end
    (``values_document_{file_slug(scorer)}.csv``); long names (combinations) keep a hash of the whole."""
    text = str(text)
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
    if len(slug) <= limit:
        return slug
    return f"{slug[: limit - 9]}_{hashlib.sha256(text.encode()).hexdigest()[:8]}"


VARYING_MIN_VALUES = 3


VARYING_MIN_SHARE = 0.05


FLAT_TOP_SHARE = 80
"""The share (whole percent) of the items the largest value must hold for a rating on few values
to be called flat in prose; under it the rating is "split between" its values."""


@dataclass(frozen=True)
class RatingUse:
    """How a judge used its scale on some items: the values that each hold at least 5% of the
    items with their shares, and ``kind``: "varying" only if at least 3 values each hold 5%, else
    "flat", whatever an interval says (a judge that writes two values is a threshold, not a scale).

    Detection tables store it as text, ``flat (5:9% 10:90%)`` (``str``); :meth:`parse` reads that
    text back, so no reader of a table parses it on its own."""

    kind: str
    shares: tuple[tuple[str, int], ...]  # (value as written, whole percent of the items), by value

    @classmethod
    def of(cls, ratings: Sequence[float]) -> RatingUse:
        counts = Counter(ratings)
        common = sorted((v for v, n in counts.items() if n / len(ratings) >= VARYING_MIN_SHARE), key=float)
        shares = tuple(
            (str(int(v) if float(v).is_integer() else v), round(counts[v] / len(ratings) * 100)) for v in common
        )
        return cls("varying" if len(common) >= VARYING_MIN_VALUES else "flat", shares)

    @classmethod
    def parse(cls, text: str) -> RatingUse | None:
        """The rating use a table cell holds (``flat (10:100%)``); None for an empty cell."""
        if not text:
            return None
        kind, _, inside = text.partition(" (")
        if kind not in ("flat", "varying") or not inside.endswith(")"):
            raise ValueError(f"not a rating use: {text!r} (expected e.g. 'flat (5:9% 10:90%)')")
        shares = []
        for part in inside[:-1].split():
            value, _, share = part.partition(":")
            shares.append((value, int(share.rstrip("%"))))
        return cls(kind, tuple(shares))

    def __str__(self) -> str:
        return f"{self.kind} ({' '.join(f'{v}:{p}%' for v, p in self.shares)})"

    def words(self) -> str:
        """The shares as a reader reads them: ``5 for 9%, 10 for 90%``."""
        return ", ".join(f"{v} for {p}%" for v, p in self.shares)

    def described(self) -> str:
        """The use as a reader reads it: ``flat (5 for 9%, 10 for 90%)``, or the kind alone. A
        flat use whose largest value holds under :data:`FLAT_TOP_SHARE` % of the items is "split
        between two values (5 for 43%, 10 for 55%)": a reader does not call that flat."""
        if not self.shares:
            return self.kind
        if self.kind == "flat" and len(self.shares) > 1 and (self.top_share or 0) < FLAT_TOP_SHARE:
            return f"split between {'two' if len(self.shares) == 2 else len(self.shares)} values ({self.words()})"
        return f"{self.kind} ({self.words()})"

    @property
    def top_share(self) -> int | None:
        """The largest share (whole percent), None if no value holds 5% of the items."""
        return max((p for _, p in self.shares), default=None)


def rating_use(ratings: Sequence[float]) -> str:
    """:class:`RatingUse` of ``ratings`` as a detection table stores it: ``flat (5:9% 10:90%)``."""
    return str(RatingUse.of(ratings))


NEAR_CONSTANT_SHARE = 0.95
"""A score that is no rating but gives one value to at least this share of its items (the
plausibility checks on notices they cannot read: 1.0 for 346 of 350) is read as a rating that
barely varies: its values are stored as a rating's are, so figures and tables tag it flat."""


def score_use(scorer: ScorerId | str, scores: Sequence[float]) -> str:
    """The ``rating_use`` cell of a detection row: every written rating's :func:`rating_use`, and a
    near-constant other score's (one value on at least :data:`NEAR_CONSTANT_SHARE` of its items);
    "" for a score that varies or no items."""
    if not len(scores):
        return ""
    if is_rating(scorer):
        return rating_use(scores)
    top = Counter(scores).most_common(1)[0][1]
    return rating_use(scores) if top >= NEAR_CONSTANT_SHARE * len(scores) else ""


def is_rating(scorer: ScorerId | str) -> bool:
    """A judge's 1-10 rating (or the least rating over fields), not its log-prob expectation."""
    return ScorerId.of(scorer).is_written_rating


def compare_scorers(
    a: ScoredItems,
    b: ScoredItems,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    metric: str = "auroc",
    intervals: str = "bootstrap",
) -> dict[str, Any]:
    """Paired difference of two scorers' AUROC (or AUPRC) on the items both scored (same level),
    its interval and p-value from the document bootstrap, or for an AUROC from the clustered
    DeLong estimator where ``intervals`` asks for it (:func:`construct_eval.stats.delong.choose`)."""
    from construct_eval.stats.metrics import compare_scores

    if a.level != b.level:
        raise ValueError(f"cannot pair a {a.level}-level scorer with a {b.level}-level one")
    found = list(map(b.item_index().get, zip(a.doc_ids, a.fields, strict=True)))  # b's position of a's items
    ia = [i for i, j in enumerate(found) if j is not None]
    ib = [found[i] for i in ia]
    row: dict[str, Any] = {"level": a.level.value, "a": a.scorer.name, "b": b.scorer.name, "n": len(ia)}
    if not ia:
        return row
    ya, sa, ga = a.columns()  # documents as codes in the ids' order: the same groups as the ids
    y = ya[ia]
    row.update(positives=int(y.sum()), documents=len(np.unique(ga[ia])))
    if not 0 < y.sum() < len(y):
        row["note"] = "one class only"
        return row
    if metric == "auroc" and delong.choose(intervals, y, ga[ia]) == "delong":
        diff, p = delong.paired_difference(y, sa[ia], b.columns()[1][ib], ga[ia])
        row.update({"auroc_a": diff.estimate + auroc(y, b.columns()[1][ib]), "auroc_b": auroc(y, b.columns()[1][ib]),
                    "difference": diff.estimate, "low": diff.low, "high": diff.high, "p": p, "intervals": "delong"})  # fmt: skip
        return row
    cmp = compare_scores(y, sa[ia], b.columns()[1][ib], ga[ia], metric=metric, n_boot=n_boot, seed=seed)
    row.update(
        {
            f"{metric}_a": cmp.value_a,
            f"{metric}_b": cmp.value_b,
            "difference": cmp.difference.estimate,
            "low": cmp.difference.low,
            "high": cmp.difference.high,
            "p": cmp.p_value,
        }
    )
    return row


def paired_table(
    items: Sequence[ScoredItems],
    reference: ScorerId | str,
    *,
    level: Level | str,
    scorers: Sequence[ScorerId | str] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    intervals: str = "bootstrap",
) -> list[dict[str, Any]]:
    """Each scorer against ``reference`` on the items both scored: paired AUROC difference with a
    document-bootstrap interval (or DeLong's, as ``intervals`` asks), its p-value and the Holm-corrected p over the table, and the
    ranking they allow: "higher" or "lower" only when the interval excludes 0 *and* the Holm p is
    below 0.05, else "none" with the reason."""
    level = Level(level)
    by_name = {i.scorer: i for i in items if i.level is level}
    have = [s.name for s in sorted(by_name)]
    reference = ScorerId.of(reference)
    if reference not in by_name:
        raise ValueError(f"no {level.value}-level scorer {reference.name!r}; have {have}")
    names = [n for n in (map(ScorerId.of, scorers) if scorers else sorted(by_name)) if n != reference]
    unknown = [n.name for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"no {level.value}-level scorer(s) {unknown}; have {have}")
    rows = [
        compare_scorers(by_name[n], by_name[reference], n_boot=n_boot, seed=seed, intervals=intervals) for n in names
    ]
    return holm_rankings(rows)


def holm_rankings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Holm-adjust the p-values of paired-comparison rows (:func:`compare_scorers`) across all of
    them, one family, and say which ranking each allows (see :func:`paired_table`)."""
    from construct_eval.power import MIN_CLASS_ITEMS, MIN_DOCUMENTS
    from construct_eval.stats.bias import holm

    tested = [r for r in rows if "p" in r]
    for r, p_adj in zip(tested, holm([r["p"] for r in tested]), strict=True):
        r["p_holm"] = p_adj
        wrong, right, documents = r["positives"], r["n"] - r["positives"], r["documents"]
        if min(wrong, right) < MIN_CLASS_ITEMS or documents < MIN_DOCUMENTS:
            # a document bootstrap over a handful of documents or wrong items can be arbitrarily narrow
            r["ranking"] = f"none: underpowered ({wrong} wrong / {right} right in {documents} documents)"
        elif r["low"] <= 0 <= r["high"]:
            r["ranking"] = "none: the interval holds 0"
        elif p_adj >= 0.05:  # the table makes several comparisons: one interval alone is not enough
            r["ranking"] = "none after Holm (the unadjusted interval excludes 0)"
        else:
            r["ranking"] = f"{r['a']} {'higher' if r['low'] > 0 else 'lower'}"
    return rows
