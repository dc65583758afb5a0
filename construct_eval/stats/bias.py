"""Positional bias of the judge: does the rating change when the same material is shown in another order?

Input is the judge's ratings of the same items (document or field) under several prompt
variants (:class:`construct_eval.judging.prompts.PromptVariant`: section order, field order, target
field position). Everything here is paired: the unit is the item, rated once per variant.

- :func:`pairwise_tests`: per pair of variants, the mean rating shift with a bootstrap
  interval over documents, Wilcoxon signed-rank (``zero_method="pratt"``: ties at zero are
  the rule with 1-10 ratings), a sign test, exact and within-one agreement, quadratic
  weighted kappa, and (with labels) the paired AUROC difference; Holm-corrected p-values.
- :func:`paired_elicitations`: the same pairing across ways of asking (forced rating, free
  recipe) under one prompt order, for the same tests.
- :func:`friedman_test` across more than two variants.
- :func:`position_effect`: regression of the rating on the field's position in the shown
  output, within item (field and document effects removed by demeaning), with a document
  bootstrap interval.
- :func:`debiased_scores`: the mean over K orders, the standard mitigation, whose effect on
  AUROC and ECE and whose cost (K times the calls) :func:`debiasing_report` measures.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from construct_eval import power
from construct_eval.stats.metrics import auroc, compare_aurocs, group_weights
from construct_eval.types import elicitation_of

ItemKey = tuple[str, str]  # (document id, field name or "__doc__")


@dataclass
class PairedRatings:
    """Ratings of the same items under each variant (only items rated under all of them)."""

    variants: list[str]
    items: list[ItemKey]
    ratings: np.ndarray  # (n_items, n_variants)
    dropped: int  # items missing a rating under some variant (unscored or not judged)

    @property
    def doc_ids(self) -> np.ndarray:
        return np.asarray([d for d, _ in self.items])


def paired_ratings(
    judgments: Iterable[Mapping[str, Any]],
    *,
    mode: str,
    variants: Sequence[str] | None = None,
    value: str = "rating",
    elicitation: str | None = None,
) -> PairedRatings:
    """Collect ``value`` (rating or expected_rating) per item and variant for one judge mode.

    ``elicitation`` keeps only judgments asked that way (their ``constrained`` label): a run
    that holds the forced and the free rating under one prompt order must not pair the two.
    """
    rows = (r for r in judgments if elicitation is None or elicitation_of(r) == elicitation)
    return _paired(rows, mode, lambda r: r.get("variant") or "", variants, value, "variant")


def paired_elicitations(
    judgments: Iterable[Mapping[str, Any]],
    *,
    mode: str,
    variant: str,
    elicitations: Sequence[str] | None = None,
    value: str = "rating",
) -> PairedRatings:
    """The same items under one prompt order (``variant``), asked several ways: the forced rating
    against the free recipe. Its ``variants`` are elicitation labels (``grammar:rating-only``,
    ``none``), so :func:`pairwise_tests` reads how the way of asking moves the rating."""
    rows = (r for r in judgments if (r.get("variant") or "") == variant)
    return _paired(rows, mode, elicitation_of, elicitations, value, "elicitation")


def _paired(
    judgments: Iterable[Mapping[str, Any]],
    mode: str,
    column_of: Callable[[Mapping[str, Any]], str],
    chosen: Sequence[str] | None,
    value: str,
    what: str,
) -> PairedRatings:
    table: dict[ItemKey, dict[str, float]] = defaultdict(dict)
    seen: list[str] = []
    for r in judgments:
        if r.get("mode") != mode:
            continue
        column = column_of(r)
        if column not in seen:
            seen.append(column)
        if r.get("status") == "ok" and r.get(value) is not None:
            table[(r["doc_id"], r["field"])][column] = float(r[value])
    chosen = list(chosen) if chosen else seen
    missing = [v for v in chosen if v not in seen]
    if missing:
        raise ValueError(f"no {mode} judgments under {what}(s) {missing}; found {seen}")
    complete = [k for k, row in table.items() if all(v in row for v in chosen)]
    complete.sort()
    ratings = np.array([[table[k][v] for v in chosen] for k in complete], dtype=float).reshape(
        len(complete), len(chosen)
    )
    return PairedRatings(chosen, complete, ratings, len(table) - len(complete))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (step-down, monotone)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()


def _grouped_mean_interval(diff: np.ndarray, groups: np.ndarray, n_boot: int, seed: int) -> tuple[float, float]:
    _, g = np.unique(groups, return_inverse=True)
    n_groups = g.max() + 1
    sums = np.bincount(g, weights=diff, minlength=n_groups)
    counts = np.bincount(g, minlength=n_groups).astype(float)
    w = group_weights(int(n_groups), n_boot, seed)
    means = (w @ sums) / np.maximum(w @ counts, 1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def _wilcoxon_p(diff: np.ndarray) -> float:
    if not np.any(diff != 0):
        return 1.0
    return float(stats.wilcoxon(diff, zero_method="pratt").pvalue)


def _sign_p(diff: np.ndarray) -> float:
    up, down = int((diff > 0).sum()), int((diff < 0).sum())
    if up + down == 0:
        return 1.0
    return float(stats.binomtest(up, up + down, 0.5).pvalue)


def _weighted_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Quadratic weighted kappa of two integer ratings (NaN for continuous values or one category)."""
    from sklearn.metrics import cohen_kappa_score

    both = np.concatenate([a, b])
    if len(np.unique(both)) < 2 or not np.all(both == np.round(both)):
        return float("nan")
    return float(cohen_kappa_score(a.astype(int), b.astype(int), weights="quadratic", labels=list(range(1, 11))))


def _auroc_power_note(wrong: int, n: int, documents: int) -> str:
    """Why an AUROC difference on these items cannot rank the two orders ("" if it can), by the
    detection tables' rule (:meth:`~construct_eval.stats.metrics.DetectionSummary.power_note`)."""
    return "; ".join(power.reasons(wrong=wrong, right=n - wrong, documents=documents))


def pairwise_tests(
    paired: PairedRatings,
    *,
    wrong: Mapping[ItemKey, bool] | None = None,
    base: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per pair of variants (or per variant against ``base``), Holm-corrected."""
    pairs = (
        [(base, v) for v in paired.variants if v != base]
        if base is not None
        else list(itertools.combinations(paired.variants, 2))
    )
    groups = paired.doc_ids
    rows = []
    labels = None
    if wrong is not None:
        labels = np.array([wrong.get(k, np.nan) for k in paired.items], dtype=float)
    for a, b in pairs:
        ia, ib = paired.variants.index(a), paired.variants.index(b)
        ra, rb = paired.ratings[:, ia], paired.ratings[:, ib]
        diff = rb - ra
        row: dict[str, Any] = {"variant_a": a, "variant_b": b, "n": len(diff)}
        if not len(diff):
            rows.append(row)
            continue
        lo, hi = _grouped_mean_interval(diff, groups, n_boot, seed)
        row.update(
            mean_a=float(ra.mean()),
            mean_b=float(rb.mean()),
            mean_shift=float(diff.mean()),
            shift_low=lo,
            shift_high=hi,
            share_changed=float((diff != 0).mean()),
            wilcoxon_p=_wilcoxon_p(diff),
            sign_p=_sign_p(diff),
            exact_agreement=float((diff == 0).mean()),
            within_one=float((np.abs(diff) <= 1).mean()),
            weighted_kappa=_weighted_kappa(ra, rb),
        )
        if labels is not None:
            ok = ~np.isnan(labels)
            y = labels[ok]
            if ok.sum() and 0 < y.sum() < len(y):
                cmp = compare_aurocs(y, rb[ok], ra[ok], groups[ok], n_boot=n_boot, seed=seed)
                row.update(auroc_a=cmp.auroc_b, auroc_b=cmp.auroc_a, auroc_diff=cmp.difference.estimate)
                row.update(auroc_diff_low=cmp.difference.low, auroc_diff_high=cmp.difference.high)
            n_wrong = int(y.sum())
            row.update(wrong=n_wrong, auroc_underpowered=_auroc_power_note(n_wrong, len(y), len(set(groups[ok]))))
        rows.append(row)
    tested = [r for r in rows if "wilcoxon_p" in r]
    for r, adj in zip(tested, holm([r["wilcoxon_p"] for r in tested]), strict=True):
        r["wilcoxon_p_holm"] = adj
    signed = [r for r in rows if "sign_p" in r]
    for r, adj in zip(signed, holm([r["sign_p"] for r in signed]), strict=True):
        r["sign_p_holm"] = adj
    return rows


def friedman_test(paired: PairedRatings) -> dict[str, Any]:
    """Friedman test that all variants rate alike (needs 3+ variants)."""
    if len(paired.variants) < 3:
        raise ValueError("Friedman needs at least three variants")
    r = paired.ratings
    if len(r) < 2 or np.all(r == r[:, :1]):
        return {"variants": len(paired.variants), "n": len(r), "statistic": 0.0, "p": 1.0}
    res = stats.friedmanchisquare(*[r[:, j] for j in range(r.shape[1])])
    return {"variants": len(paired.variants), "n": len(r), "statistic": float(res.statistic), "p": float(res.pvalue)}


@dataclass(frozen=True)
class PositionEffect:
    slope: float  # rating change from the first to the last position (positions scaled to 0..1)
    low: float
    high: float
    n: int


def position_effect(
    ratings: Sequence[float],
    positions: Sequence[float],
    items: Sequence[ItemKey],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> PositionEffect:
    """Within-item slope of rating on position (0 = first, 1 = last), document bootstrap interval.

    Each item (a field of a document) is seen at several positions across variants; demeaning
    per item removes field and document effects, so only the position is left to explain.
    """
    y = np.asarray(ratings, dtype=float)
    x = np.asarray(positions, dtype=float)
    keys = [f"{d}\x00{f}" for d, f in items]
    _, item_idx = np.unique(keys, return_inverse=True)
    _, doc_idx = np.unique([d for d, _ in items], return_inverse=True)

    def demean(v: np.ndarray) -> np.ndarray:
        means = np.bincount(item_idx, weights=v) / np.bincount(item_idx)
        return v - means[item_idx]

    yd, xd = demean(y), demean(x)
    denom = float((xd * xd).sum())
    if denom == 0:
        raise ValueError("positions do not vary within items: nothing to estimate")
    slope = float((xd * yd).sum() / denom)
    n_docs = doc_idx.max() + 1
    xy = np.bincount(doc_idx, weights=xd * yd, minlength=n_docs)
    xx = np.bincount(doc_idx, weights=xd * xd, minlength=n_docs)
    w = group_weights(int(n_docs), n_boot, seed)
    boot = (w @ xy) / np.maximum(w @ xx, 1e-12)
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return PositionEffect(slope, float(lo), float(hi), len(y))


def debiased_scores(paired: PairedRatings, variants: Sequence[str] | None = None) -> np.ndarray:
    """Mean rating over the chosen orders (all by default): balanced position calibration."""
    cols = [paired.variants.index(v) for v in (variants or paired.variants)]
    return paired.ratings[:, cols].mean(axis=1)


def debiasing_report(paired: PairedRatings, wrong: Mapping[ItemKey, bool]) -> list[dict[str, Any]]:
    """AUROC and ECE (out of fold, Platt) of each single order and of the mean over K orders."""
    from construct_eval.stats.calibration import ece, out_of_fold

    labels = np.array([wrong.get(k, np.nan) for k in paired.items], dtype=float)
    ok = ~np.isnan(labels)
    y, groups = labels[ok], paired.doc_ids[ok]
    rows = []
    candidates: list[tuple[str, np.ndarray, int]] = [
        (v, paired.ratings[ok, j], 1) for j, v in enumerate(paired.variants)
    ]
    for k in range(2, len(paired.variants) + 1):
        candidates.append((f"mean of first {k} orders", debiased_scores(paired, paired.variants[:k])[ok], k))
    for name, score, k in candidates:
        row: dict[str, Any] = {"score": name, "calls_per_item": k, "n": int(ok.sum())}
        if 0 < y.sum() < len(y):
            row["auroc"] = auroc(y, score)
            try:
                row["ece_platt_oof"] = ece(out_of_fold("platt", score, y, groups), y)
            except ValueError as exc:  # too few wrong (or right) items to calibrate out of fold
                row["ece_platt_oof"] = float("nan")
                row["note"] = str(exc)
        rows.append(row)
    return rows
