"""Every detection metric of every document resample in one pass over the items.

:func:`~construct_eval.stats.metrics.bootstrap_counts` builds, per resample, the positives
and negatives at each distinct score, a ``(n_boot, n_values)`` matrix each, and every metric is
then a few passes over them: for a continuous score on 200,000 items that is 1.6 GB per matrix
and most of an analysis' time. Here each resample walks the items once, lowest score first,
holding only running sums, and leaves its AUROC, average precision and, per review budget,
precision and recall: ``(n_boot,)`` numbers per metric, whatever the number of items.

The arithmetic is the matrix form's, step by step: counts are sums of integer weights (exact in
any order), AUROC's numerator is a sum of products of integers and halves (exact), and average
precision, precision and recall are the same quotients summed in another order (agreeing to
about 1e-16). With numba the walk is compiled and split over resamples; without it the same
numbers come from the matrix form in blocks of resamples (:func:`resampled_numpy`), the
reference the tests hold the compiled walk to.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from construct_eval.stats.count_metrics import ap_from_counts, auroc_from_counts, distinct_scores, review_from_counts

try:  # the compiled walk; the matrix form below gives the same numbers without it
    import numba
except ImportError:  # pragma: no cover - numba is a dependency; kept importable without it
    numba = None

if numba is not None and not os.environ.get("NUMBA_THREADING_LAYER"):
    # The calibration fits run in forked workers after the walks have run here on numba's threads:
    # with GNU OpenMP (numba's first choice where TBB is absent) a forked child is terminated at
    # the fork, and the pool starts another in its place, forever. A fork-safe layer (TBB, else
    # numba's own work queue) is chosen before any walk runs; the numbers do not depend on it.
    numba.config.THREADING_LAYER = "forksafe"


DRAW_CHUNK = 64


_ONE_THREAD = False


def use_threads(n: int) -> None:
    """Walk the resamples on ``n`` threads: 1 walks them with the walks compiled without threads
    (a forked worker: numba's OpenMP threads may not be started again after a fork, and two
    workers share the cores anyway), more with numba's threads as usual. The numbers do not
    depend on it."""
    global _ONE_THREAD
    _ONE_THREAD = n <= 1


def iter_group_draws(n_groups: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """Resampled group indices in blocks of ``(<= DRAW_CHUNK, n_groups)``.

    Every implementation draws through this, so the same seed gives the same resamples.
    """
    rng = np.random.default_rng(seed)
    for start in range(0, n_boot, DRAW_CHUNK):
        yield rng.integers(0, n_groups, size=(min(DRAW_CHUNK, n_boot - start), n_groups))


def group_weights(n_groups: int, n_boot: int, seed: int) -> np.ndarray:
    """How often each group is drawn in each resample, ``(n_boot, n_groups)``: the one document
    bootstrap every interval of the package uses (the same seed, the same resamples)."""
    return _drawn(n_groups, n_boot, seed).astype(float)


@lru_cache(maxsize=8)
def _drawn(n_groups: int, n_boot: int, seed: int) -> np.ndarray:
    """:func:`group_weights` as float32 (counts of at most ``n_groups``: exact), drawn once per
    process for each number of documents, size and seed. Every table over the same number of
    documents shares them, as it did when each drew its own from the same seed."""
    out = np.empty((n_boot, n_groups), dtype=np.float32)
    start = 0
    for block in iter_group_draws(n_groups, n_boot, seed):
        offsets = (np.arange(len(block)) * n_groups)[:, None]
        counts = np.bincount((block + offsets).ravel(), minlength=len(block) * n_groups)
        out[start : start + len(block)] = counts.reshape(len(block), n_groups)
        start += len(block)
    out.flags.writeable = False
    return out


def resampled_metrics(
    y: np.ndarray, s: np.ndarray, g: np.ndarray, *, n_boot: int, seed: int, budgets: Sequence[float]
) -> dict[str, np.ndarray]:
    """AUROC, AUPRC and review precision and recall at each of ``budgets`` for each document
    resample, of checked arrays (wrong 0/1, score, groups 0..n-1). Kept per process by content:
    a detection row, its within-kind twin and every paired comparison of the same items read the
    same numbers from the same resamples, computed once. ``budgets`` lists the review budgets
    (columns of ``precision`` and ``recall``, in the order of ``out["budgets"]``)."""
    wanted = tuple(sorted({float(b) for b in budgets}))
    digest = hashlib.blake2b(digest_size=16)
    for a in (y, s, g):
        digest.update(str((a.dtype.str, a.shape)).encode())
        digest.update(np.ascontiguousarray(a).data)
    key = (digest.hexdigest(), n_boot, seed, wanted)
    hit = _RESAMPLED.get(key)
    if hit is None:
        n_groups = int(g.max()) + 1 if len(g) else 0
        hit = resampled(_drawn(n_groups, n_boot, seed), y, s, g, wanted)
        hit["budgets"] = np.asarray(wanted)
        if len(_RESAMPLED) >= _RESAMPLED_MAX:
            _RESAMPLED.pop(next(iter(_RESAMPLED)))
        _RESAMPLED[key] = hit
    return hit


def _transposed(weights: np.ndarray) -> np.ndarray:
    """``weights`` as ``(groups, resamples)``, made once per drawn matrix (the walks read it so)."""
    key = id(weights)
    hit = _TRANSPOSED.get(key)
    if hit is None or hit[0] is not weights:
        hit = (weights, np.ascontiguousarray(weights.T))
        _TRANSPOSED.clear()  # the draws of one size at a time: a few MB
        _TRANSPOSED[key] = hit
    return hit[1]


_TRANSPOSED: dict[int, tuple[np.ndarray, np.ndarray]] = {}


_RESAMPLED: dict[tuple[Any, ...], dict[str, np.ndarray]] = {}
_RESAMPLED_MAX = 512  # a few kB per entry: (2 + 2 x budgets) numbers per resample


def value_blocks(y: np.ndarray, s: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Items ordered by score (ascending, ties kept together) as ``(group, wrong, count, starts)``:
    the entries of the v-th distinct score are ``starts[v]:starts[v + 1]``, each one item
    (``count`` 1, ``wrong`` 0/1) or, where a document holds several items of one score, all of
    them (``count`` items, ``wrong`` of them wrong): a resample's sums at a score are sums of
    integers, the same in any grouping, and a rating scored on 60 fields per document walks a
    tenth of its items."""
    values, inv = distinct_scores(s)
    n_groups = int(g.max()) + 1 if len(g) else 1
    key = inv.astype(np.int64) * n_groups + g
    pairs, at, count = np.unique(key, return_inverse=True, return_counts=True)
    if len(pairs) > 0.8 * len(key):  # few repeats: the items themselves
        order = np.argsort(inv, kind="stable")
        starts = np.searchsorted(inv[order], np.arange(len(values) + 1))
        ones = np.ones(len(order))
        return g[order].astype(np.int64), y[order].astype(np.float64), ones, starts.astype(np.int64)
    wrong = np.bincount(at, weights=y, minlength=len(pairs))
    block = pairs // n_groups
    starts = np.searchsorted(block, np.arange(len(values) + 1))
    return (pairs % n_groups).astype(np.int64), wrong, count.astype(np.float64), starts.astype(np.int64)


def _walk(
    weights: np.ndarray,
    group: np.ndarray,
    wrong: np.ndarray,
    count: np.ndarray,
    starts: np.ndarray,
    budgets: np.ndarray,
    pos_per_group: np.ndarray,
    neg_per_group: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The walk (``budgets`` ascending; per entry ``count`` items, ``wrong`` of them wrong: see
    :func:`value_blocks`). Counts are exact sums of integers; a
    review budget's sums stop at its cut, where the matrix form goes on adding zeros, and add a
    whole block's count where it adds 1.0 x count: the same sums."""
    n_boot, n_budgets, n_values = weights.shape[0], budgets.shape[0], starts.shape[0] - 1
    auroc = np.empty(n_boot)
    ap = np.empty(n_boot)
    precision = np.empty((n_boot, n_budgets))
    recall = np.empty((n_boot, n_budgets))
    for b in numba.prange(n_boot):
        w = weights[b]
        p_tot = 0.0
        n_tot = 0.0
        for h in range(pos_per_group.shape[0]):
            p_tot += w[h] * pos_per_group[h]
            n_tot += w[h] * neg_per_group[h]
        k = np.empty(n_budgets)
        tp_review = np.empty(n_budgets)
        reviewed = np.empty(n_budgets)
        for j in range(n_budgets):
            k[j] = budgets[j] * (p_tot + n_tot)
        cut = 0  # the first budget whose cut is not passed yet
        num = 0.0
        ap_num = 0.0
        tp = 0.0
        fp = 0.0
        for v in range(n_values):  # no data-dependent branch but the cuts: zeros are added, not skipped
            pos = 0.0
            total = 0.0
            for i in range(starts[v], starts[v + 1]):
                c = w[group[i]]
                total += c * count[i]
                pos += wrong[i] * c
            neg = total - pos
            cum_before = tp + fp
            tp += pos
            fp += neg
            num += pos * ((n_tot - fp) + 0.5 * neg)  # wrong items here beat every right one scored higher
            seen = tp + fp
            ap_num += pos * (tp / seen if seen > 0 else 0.0)
            while cut < n_budgets and k[cut] < seen:  # the cut falls inside this tied block (total > 0)
                take = max(k[cut] - cum_before, 0.0)  # how many of the block are reviewed
                tp_review[cut] = (tp - pos) + (take / total) * pos
                reviewed[cut] = cum_before + take
                cut += 1
        for j in range(cut, n_budgets):  # cuts at or past the last item: everything reviewed
            tp_review[j] = tp
            reviewed[j] = tp + fp
        auroc[b] = num / (p_tot * n_tot) if p_tot > 0 and n_tot > 0 else np.nan
        ap[b] = ap_num / p_tot if p_tot > 0 else np.nan
        for j in range(n_budgets):
            precision[b, j] = tp_review[j] / reviewed[j] if reviewed[j] > 0 else np.nan
            recall[b, j] = tp_review[j] / p_tot if p_tot > 0 else np.nan
    return auroc, ap, precision, recall


if numba is not None:
    _walk_compiled = numba.njit(parallel=True, cache=True, nogil=True)(_walk)


WALK_BLOCK = 16
"""Resamples walked together: each item is read once per block, not once per resample."""


def _walk_blocks(
    weights_t: np.ndarray,
    group: np.ndarray,
    wrong: np.ndarray,
    count: np.ndarray,
    starts: np.ndarray,
    budgets: np.ndarray,
    pos_per_group: np.ndarray,
    neg_per_group: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_walk` over :data:`WALK_BLOCK` resamples at a time, from the weights transposed
    (``(groups, resamples)``: a group's weights in the block side by side). Every resample's sums
    are made from the same terms in the same order as its own walk (the same bits); an item is
    read once per block instead of once per resample, and the block's sums are side by side in
    memory, where the processor adds them together."""
    n_boot, n_budgets, n_values = weights_t.shape[1], budgets.shape[0], starts.shape[0] - 1
    block = WALK_BLOCK
    auroc = np.empty(n_boot)
    ap = np.empty(n_boot)
    precision = np.empty((n_boot, n_budgets))
    recall = np.empty((n_boot, n_budgets))
    n_blocks = (n_boot + block - 1) // block
    for blk in numba.prange(n_blocks):
        b0 = blk * block
        m = min(block, n_boot - b0)
        w = np.zeros((weights_t.shape[0], block))  # this block's weights, a group's side by side
        for h in range(weights_t.shape[0]):
            for j in range(m):
                w[h, j] = weights_t[h, b0 + j]
        p_tot = np.zeros(block)
        n_tot = np.zeros(block)
        for h in range(pos_per_group.shape[0]):
            for j in range(block):
                p_tot[j] += w[h, j] * pos_per_group[h]
                n_tot[j] += w[h, j] * neg_per_group[h]
        k = np.empty((block, n_budgets))
        tp_review = np.empty((block, n_budgets))
        reviewed = np.empty((block, n_budgets))
        for j in range(block):
            for c in range(n_budgets):
                k[j, c] = budgets[c] * (p_tot[j] + n_tot[j])
        next_cut = np.empty(block)  # the next cut of each resample (inf when every cut is passed)
        for j in range(block):
            next_cut[j] = k[j, 0] if n_budgets > 0 else np.inf
        cut = np.zeros(block, dtype=np.int64)
        num = np.zeros(block)
        ap_num = np.zeros(block)
        tp = np.zeros(block)
        fp = np.zeros(block)
        pos = np.zeros(block)
        total = np.zeros(block)
        cum_before = np.zeros(block)
        for v in range(n_values):
            for j in range(block):
                pos[j] = 0.0
                total[j] = 0.0
            any_wrong = False
            for i in range(starts[v], starts[v + 1]):
                g = group[i]
                n_i = np.float64(count[i])
                w_i = np.float64(wrong[i])
                if w_i != 0.0:
                    any_wrong = True
                    for j in range(block):
                        c = w[g, j]
                        total[j] += c * n_i
                        pos[j] += w_i * c
                else:  # pos would add exact zeros
                    for j in range(block):
                        total[j] += w[g, j] * n_i
            passed = 0
            if any_wrong:
                for j in range(block):  # no branch: the block's resamples side by side
                    neg = total[j] - pos[j]
                    cum_before[j] = tp[j] + fp[j]
                    tp[j] += pos[j]
                    fp[j] += neg
                    num[j] += pos[j] * ((n_tot[j] - fp[j]) + 0.5 * neg)
                    seen = tp[j] + fp[j]
                    ap_num[j] += pos[j] * (tp[j] / max(seen, 1e-300))  # seen 0: tp and pos 0, the term 0
                    passed += next_cut[j] < seen
            else:  # no wrong item at this score: tp, num and ap_num would add exact zeros
                for j in range(block):
                    cum_before[j] = tp[j] + fp[j]
                    fp[j] += total[j]
                    passed += next_cut[j] < tp[j] + fp[j]
            if passed:  # a cut falls inside this tied block for some resample of the block
                for j in range(m):
                    seen = tp[j] + fp[j]
                    while cut[j] < n_budgets and k[j, cut[j]] < seen:
                        take = max(k[j, cut[j]] - cum_before[j], 0.0)
                        tp_review[j, cut[j]] = (tp[j] - pos[j]) + (take / total[j]) * pos[j]
                        reviewed[j, cut[j]] = cum_before[j] + take
                        cut[j] += 1
                    next_cut[j] = k[j, cut[j]] if cut[j] < n_budgets else np.inf
        for j in range(m):
            for c in range(cut[j], n_budgets):
                tp_review[j, c] = tp[j]
                reviewed[j, c] = tp[j] + fp[j]
            b = b0 + j
            auroc[b] = num[j] / (p_tot[j] * n_tot[j]) if p_tot[j] > 0 and n_tot[j] > 0 else np.nan
            ap[b] = ap_num[j] / p_tot[j] if p_tot[j] > 0 else np.nan
            for c in range(n_budgets):
                precision[b, c] = tp_review[j, c] / reviewed[j, c] if reviewed[j, c] > 0 else np.nan
                recall[b, c] = tp_review[j, c] / p_tot[j] if p_tot[j] > 0 else np.nan
    return auroc, ap, precision, recall


if numba is not None:
    _walk_blocks_compiled = numba.njit(parallel=True, cache=True, nogil=True)(_walk_blocks)
    _walk_blocks_one_thread = numba.njit(cache=True, nogil=True)(_walk_blocks)  # prange read as range


def resampled(
    weights: np.ndarray, y: np.ndarray, s: np.ndarray, g: np.ndarray, budgets: Sequence[float]
) -> dict[str, np.ndarray]:
    """Per resample (the rows of ``weights``, how often each group is drawn): ``auroc``,
    ``auprc``, and ``precision`` and ``recall`` per budget (``(n_boot, len(budgets))``)."""
    b = np.asarray(budgets, dtype=np.float64)
    if numba is None:
        return resampled_numpy(weights, y, s, g, b)
    group, wrong, count, starts = value_blocks(y, s, g)
    n_groups = weights.shape[1]
    pos_g = np.bincount(g, weights=y, minlength=n_groups).astype(np.float64)
    neg_g = np.bincount(g, weights=1 - y, minlength=n_groups).astype(np.float64)
    order = np.argsort(b, kind="stable")  # the walk passes the cuts in ascending order
    if len(count) and count.max() < 2**24:  # counts of items, exact in float32: read so, summed in float64
        wrong, count = wrong.astype(np.float32), count.astype(np.float32)
    walk = _walk_blocks_one_thread if _ONE_THREAD else _walk_blocks_compiled
    auroc, ap, precision, recall = walk(
        _transposed(weights), group.astype(np.int32), wrong, count, starts, b[order], pos_g, neg_g
    )
    back = np.empty_like(order)
    back[order] = np.arange(len(order))
    return {"auroc": auroc, "auprc": ap, "precision": precision[:, back], "recall": recall[:, back]}


def resampled_numpy(
    weights: np.ndarray, y: np.ndarray, s: np.ndarray, g: np.ndarray, budgets: Sequence[float], *, block: int = 64
) -> dict[str, np.ndarray]:
    """The same numbers from the ``(resamples, values)`` count matrices, ``block`` resamples at a time."""
    from scipy import sparse

    _, inv = np.unique(s, return_inverse=True)
    shape = (int(weights.shape[1]), int(inv.max()) + 1 if len(inv) else 0)
    pos_t = sparse.csr_matrix((y, (g, inv)), shape=shape).T.tocsr()
    neg_t = sparse.csr_matrix((1 - y, (g, inv)), shape=shape).T.tocsr()
    n_boot = weights.shape[0]
    out = {
        "auroc": np.empty(n_boot),
        "auprc": np.empty(n_boot),
        "precision": np.empty((n_boot, len(budgets))),
        "recall": np.empty((n_boot, len(budgets))),
    }
    for start in range(0, n_boot, block):
        counts_t = np.asarray(weights[start : start + block], dtype=float).T
        pos, neg = (pos_t @ counts_t).T, (neg_t @ counts_t).T
        rows = slice(start, start + counts_t.shape[1])
        out["auroc"][rows] = auroc_from_counts(pos, neg)
        out["auprc"][rows] = ap_from_counts(pos, neg)
        for j, budget in enumerate(budgets):
            out["precision"][rows, j], out["recall"][rows, j] = review_from_counts(pos, neg, float(budget))
    return out


def _walk_kinds(
    weights: np.ndarray,
    group: np.ndarray,
    kind: np.ndarray,
    starts: np.ndarray,
    pos_per_group: np.ndarray,
    neg_per_group: np.ndarray,
) -> np.ndarray:
    """:func:`_walk`'s AUROC for several positive classes against one negative class in one pass:
    ``kind`` is -1 for a negative entry, else the class of a positive one. Per class the sums are
    the ones its own walk makes (a value with none of its items would add zeros, and is skipped), so
    the numbers are."""
    n_boot, n_kinds, n_values = weights.shape[0], pos_per_group.shape[0], starts.shape[0] - 1
    auroc = np.empty((n_boot, n_kinds))
    for b in numba.prange(n_boot):
        w = weights[b]
        n_tot = 0.0
        p_tot = np.zeros(n_kinds)
        for h in range(neg_per_group.shape[0]):
            n_tot += w[h] * neg_per_group[h]
            for k in range(n_kinds):
                p_tot[k] += w[h] * pos_per_group[k, h]
        tp = np.zeros(n_kinds)
        num = np.zeros(n_kinds)
        pos = np.zeros(n_kinds)
        touched = np.empty(n_kinds, dtype=np.int64)  # the classes with items at this value
        fp = 0.0
        for v in range(n_values):
            neg = 0.0
            n_touched = 0
            for i in range(starts[v], starts[v + 1]):
                c = w[group[i]]
                k = kind[i]
                if k < 0:
                    neg += c
                else:
                    if pos[k] == 0.0:
                        seen_k = False
                        for j in range(n_touched):
                            if touched[j] == k:
                                seen_k = True
                        if not seen_k:
                            touched[n_touched] = k
                            n_touched += 1
                    pos[k] += c
            fp += neg
            for j in range(n_touched):  # a class without items here would add exact zeros: skipped
                k = touched[j]
                tp[k] += pos[k]
                num[k] += pos[k] * ((n_tot - fp) + 0.5 * neg)
                pos[k] = 0.0
        for k in range(n_kinds):
            auroc[b, k] = num[k] / (p_tot[k] * n_tot) if p_tot[k] > 0 and n_tot > 0 else np.nan
    return auroc


if numba is not None:
    _walk_kinds_compiled = numba.njit(parallel=True, cache=True, nogil=True)(_walk_kinds)


def _walk_kinds_blocks(
    weights_t: np.ndarray,
    group: np.ndarray,
    kind: np.ndarray,
    starts: np.ndarray,
    pos_per_group: np.ndarray,
    neg_per_group: np.ndarray,
) -> np.ndarray:
    """:func:`_walk_kinds` over :data:`WALK_BLOCK` resamples at a time, from the weights
    transposed (as :func:`_walk_blocks`): each resample's sums are its own walk's, term for term
    (which classes have items at a value does not depend on the resample)."""
    n_boot, n_kinds, n_values = weights_t.shape[1], pos_per_group.shape[0], starts.shape[0] - 1
    block = WALK_BLOCK
    auroc = np.empty((n_boot, n_kinds))
    n_blocks = (n_boot + block - 1) // block
    for blk in numba.prange(n_blocks):
        b0 = blk * block
        m = min(block, n_boot - b0)
        w = np.zeros((weights_t.shape[0], block))
        for h in range(weights_t.shape[0]):
            for j in range(m):
                w[h, j] = weights_t[h, b0 + j]
        n_tot = np.zeros(block)
        p_tot = np.zeros((n_kinds, block))
        for h in range(neg_per_group.shape[0]):
            for j in range(block):
                n_tot[j] += w[h, j] * neg_per_group[h]
            for k in range(n_kinds):
                for j in range(block):
                    p_tot[k, j] += w[h, j] * pos_per_group[k, h]
        tp = np.zeros((n_kinds, block))
        num = np.zeros((n_kinds, block))
        pos = np.zeros((n_kinds, block))
        fp = np.zeros(block)
        neg = np.zeros(block)
        touched = np.empty(n_kinds, dtype=np.int64)  # the classes with items at this value, first seen first
        mark = np.full(n_kinds, -1, dtype=np.int64)
        for v in range(n_values):
            for j in range(block):
                neg[j] = 0.0
            n_touched = 0
            for i in range(starts[v], starts[v + 1]):
                g = group[i]
                k = kind[i]
                if k < 0:
                    for j in range(block):
                        neg[j] += w[g, j]
                else:
                    if mark[k] != v:
                        mark[k] = v
                        touched[n_touched] = k
                        n_touched += 1
                    for j in range(block):
                        pos[k, j] += w[g, j]
            for j in range(block):
                fp[j] += neg[j]
            for t in range(n_touched):  # a class without items here would add exact zeros: skipped
                k = touched[t]
                for j in range(block):
                    tp[k, j] += pos[k, j]
                    num[k, j] += pos[k, j] * ((n_tot[j] - fp[j]) + 0.5 * neg[j])
                    pos[k, j] = 0.0
        for j in range(m):
            for k in range(n_kinds):
                ok = p_tot[k, j] > 0 and n_tot[j] > 0
                auroc[b0 + j, k] = num[k, j] / (p_tot[k, j] * n_tot[j]) if ok else np.nan
    return auroc


if numba is not None:
    _walk_kinds_blocks_compiled = numba.njit(parallel=True, cache=True, nogil=True)(_walk_kinds_blocks)
    _walk_kinds_blocks_one_thread = numba.njit(cache=True, nogil=True)(_walk_kinds_blocks)


def resampled_aurocs_by_class(
    s: np.ndarray, g: np.ndarray, negatives: np.ndarray, positives: Sequence[np.ndarray], *, n_boot: int, seed: int
) -> np.ndarray:
    """Per document resample, the AUROC of each class of positives (``positives[k]``: indices of
    its items) against the same negatives (indices), ``(n_boot, len(positives))``: what
    :func:`resampled_metrics` gives for each class's items ``[*positives[k], *negatives]`` on its
    own, in one walk. ``g``: the items' documents as 0..n-1, every document holding one of the
    items of every class's call (each class's own call would number them the same way)."""
    n_groups = int(g.max()) + 1 if len(g) else 0
    weights = _drawn(n_groups, n_boot, seed)
    entries = np.concatenate([negatives, *positives]).astype(np.int64)
    kind = np.concatenate([np.full(len(negatives), -1), *(np.full(len(p), k) for k, p in enumerate(positives))])
    _, inv = np.unique(s[entries], return_inverse=True)
    order = np.argsort(inv, kind="stable")
    starts = np.searchsorted(inv[order], np.arange(int(inv.max()) + 2 if len(inv) else 1)).astype(np.int64)
    neg_g = np.bincount(g[negatives], minlength=n_groups).astype(np.float64)
    pos_g = np.zeros((len(positives), n_groups))
    for k, p in enumerate(positives):
        pos_g[k] = np.bincount(g[p], minlength=n_groups)
    group = g[entries][order].astype(np.int64)
    kind = kind[order].astype(np.int64)
    if numba is None:  # pragma: no cover - each class's own walk, the same numbers
        out = np.empty((n_boot, len(positives)))
        for k, p in enumerate(positives):
            use = np.concatenate([p, negatives])
            y = np.zeros(len(use))
            y[: len(p)] = 1
            out[:, k] = resampled_numpy(weights, y, s[use], g[use], ())["auroc"]
        return out
    walk = _walk_kinds_blocks_one_thread if _ONE_THREAD else _walk_kinds_blocks_compiled
    return walk(_transposed(weights), group.astype(np.int32), kind, starts, pos_g, neg_g)
