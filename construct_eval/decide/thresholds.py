"""Risk-controlled auto-accept thresholds: accept every item whose trust score is at least t.

The risk of a threshold is the share of accepted items that are wrong: accepted documents at the
document level, accepted fields (pooled over documents) at the field level. A threshold is chosen
by Learn-then-Test (:mod:`.bounds`) so that its risk is at most alpha with probability at least
1 - delta over the draw of the labelled calibration documents.

The sampling unit is the document. Fields of one document are not independent, so at the field
level the test is on a bounded per-document loss, never on fields as if they were independent:
with A_d(t) fields of document d accepted, W_d(t) of them wrong and M the most fields a document
has, the loss U_d(t) = (W_d(t) + alpha * (M - A_d(t))) / M lies in [0, 1] and is independent
across documents; its mean exceeds alpha exactly when sum W / sum A (the pooled field risk over
the document population) exceeds alpha, so a p-value for the mean of bounded independent losses
tests the field risk with documents as the unit: the betting p-value of Waudby-Smith and Ramdas
(default; it adapts to the loss's small variance) or Hoeffding-Bentkus. At the document level accepted documents are independent
and the exact binomial tail is used.

Thresholds are tested from the strictest down (fixed-sequence testing). The sequence starts at
the strictest threshold that could pass with no error at all (a function of the scores alone, not
of the labels): a threshold that accepts too few items can never be certified, and starting
there would stop the sequence at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from construct_eval.decide.bounds import (
    binomial_pvalue,
    check_levels,
    clopper_pearson_upper,
    fixed_sequence,
    hb_pvalue,
    upper_bound,
    wsr_pvalue,
)

FIELD_TESTS = ("wsr", "hb")
"""p-values for the field level's bounded per-document loss: betting (WSR) or Hoeffding-Bentkus."""

MAX_GRID = 50
"""At most this many candidate thresholds: the distinct scores, or that many of their quantiles."""

GUARANTEE = {
    "document": (
        "P(risk <= alpha) >= 1 - delta over the draw of the calibration documents, risk = share of"
        " auto-accepted documents that are wrong; documents independent; exact binomial tail per"
        " threshold, fixed-sequence testing from the strictest threshold (Learn-then-Test)"
    ),
    "field": (
        "P(risk <= alpha) >= 1 - delta over the draw of the calibration documents, risk = share of"
        " auto-accepted fields that are wrong, pooled over documents; the document is the sampling"
        " unit: the bounded per-document loss (wrong accepted + alpha * (M - accepted)) / M is tested"
        " with the betting (WSR) or Hoeffding-Bentkus p-value, fixed-sequence testing from the"
        " strictest threshold (Learn-then-Test)"
    ),
}
"""What each level's answer guarantees, stated in every output."""


def threshold_grid(scores: Any, max_grid: int = MAX_GRID) -> np.ndarray:
    """Candidate thresholds, strictest (highest) first: the distinct scores, thinned to
    ``max_grid`` of their quantiles (values that occur) when there are more. Uses no label."""
    s = np.asarray(scores, dtype=float)
    if s.size == 0:
        raise ValueError("no scored items to choose a threshold from")
    values = np.unique(s)
    if len(values) > max_grid:
        values = np.unique(np.quantile(s, np.linspace(0.0, 1.0, max_grid), method="inverted_cdf"))
    return values[::-1].copy()


@dataclass(frozen=True)
class LossTable:
    """Per document and candidate threshold: how many items are accepted and how many of them are
    wrong. Everything a threshold rule needs, so splits of documents are sums of rows."""

    level: str
    thresholds: np.ndarray  # (T,), strictest first
    accepted: np.ndarray  # (D, T)
    wrong: np.ndarray  # (D, T)
    items: np.ndarray  # (D,) items of each document
    errors: np.ndarray  # (D,) wrong items of each document
    doc_ids: np.ndarray  # (D,)
    max_items: int  # M: the most items a document has
    field_test: str = "wsr"

    @classmethod
    def build(
        cls,
        scores: Any,
        wrong: Any,
        doc_ids: Any,
        level: str,
        *,
        thresholds: Any | None = None,
        max_grid: int = MAX_GRID,
        field_test: str = "wsr",
    ) -> LossTable:
        if field_test not in FIELD_TESTS:
            raise ValueError(f"field_test must be one of {FIELD_TESTS}, got {field_test!r}")
        if level not in ("document", "field"):
            raise ValueError(f"level must be 'document' or 'field', got {level!r}")
        s = np.asarray(scores, dtype=float)
        y = np.asarray(wrong, dtype=int)
        g = np.asarray(doc_ids)
        if not (s.shape == y.shape == g.shape) or s.ndim != 1:
            raise ValueError("scores, wrong and doc_ids need one entry per item")
        if np.isnan(s).any():
            raise ValueError("a score is NaN: leave unscored items out first")
        grid = threshold_grid(s, max_grid) if thresholds is None else np.sort(np.asarray(thresholds, float))[::-1]
        docs, inverse = np.unique(g, return_inverse=True)
        if level == "document" and len(docs) != len(s):
            raise ValueError("document-level items need one item per document")
        # item i is accepted from the first (strictest) threshold <= its score on
        first = np.searchsorted(-grid, -s, side="left")
        start_acc = np.zeros((len(docs), len(grid) + 1))
        start_wrong = np.zeros((len(docs), len(grid) + 1))
        np.add.at(start_acc, (inverse, first), 1.0)
        np.add.at(start_wrong, (inverse, first), y.astype(float))
        items = np.bincount(inverse, minlength=len(docs)).astype(float)
        errors = np.bincount(inverse, weights=y, minlength=len(docs)).astype(float)
        return cls(
            level,
            grid,
            np.cumsum(start_acc, axis=1)[:, :-1],
            np.cumsum(start_wrong, axis=1)[:, :-1],
            items,
            errors,
            docs,
            int(items.max()),
            field_test,
        )

    @property
    def n_documents(self) -> int:
        return len(self.doc_ids)

    def sums(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float, int]:
        """Accepted and wrong accepted per threshold, total items and documents, over ``rows``."""
        if rows is None:
            return self.accepted.sum(0), self.wrong.sum(0), float(self.items.sum()), self.n_documents
        return self.accepted[rows].sum(0), self.wrong[rows].sum(0), float(self.items[rows].sum()), len(rows)

    def pvalues(
        self, alpha: float, rows: np.ndarray | None = None, *, errors_zero: bool = False, delta: float = 0.1
    ) -> np.ndarray:
        """The p-value of "risk > alpha" at each threshold (with ``errors_zero``: what it would be
        if no accepted item were wrong, a function of the scores alone). ``delta`` tunes the bets of
        the betting p-value (it stays valid at every level)."""
        acc, wr, _, n = self.sums(rows)
        if errors_zero:
            wr = np.zeros_like(wr)
        if self.level == "document" or self.field_test == "hb":
            return self.pvalues_of_sums(alpha, acc, wr, n)
        rows = self.default_order() if rows is None else rows
        wrong_rows = np.zeros_like(self.wrong[rows]) if errors_zero else self.wrong[rows]
        return wsr_pvalue(self.losses(alpha, rows, wrong_rows), alpha, delta=delta)

    def pvalues_of_sums(self, alpha: float, acc: np.ndarray, wr: np.ndarray, n: int) -> np.ndarray:
        """The p-values of the tests that read sums alone (the document level's binomial tail, the
        field level's Hoeffding-Bentkus) from accepted and wrong accepted items summed over ``n``
        documents, element by element (one row of sums per split in :func:`ltt_indices`)."""
        if self.level == "document":
            return binomial_pvalue(wr, acc, alpha)
        if self.field_test != "hb":
            raise ValueError("the betting p-value reads the documents in order, not their sums")
        m = self.max_items
        return hb_pvalue((wr + alpha * (m * n - acc)) / (m * n), n, alpha)

    def split_sums(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`sums` for many sets of documents at once: ``rows`` holds one set per row (document
        indices, repeats counted), and each set's accepted and wrong accepted items per threshold
        (splits x thresholds) and its items come back. A product of each set's document counts with
        the per-document counts: sums of whole numbers, so the same numbers as :meth:`sums` gives
        one set at a time, whatever order they are added in."""
        counts = document_counts(rows, self.n_documents)
        return counts @ self.accepted, counts @ self.wrong, counts @ self.items

    def default_order(self) -> np.ndarray:
        """A fixed order of the documents that does not depend on the labels (seeded permutation)."""
        return np.random.default_rng(0).permutation(self.n_documents)

    def losses(self, alpha: float, rows: np.ndarray, wrong_rows: np.ndarray | None = None) -> np.ndarray:
        """The field level's per-document loss (W + alpha (M - A)) / M in [0, 1], rows x thresholds."""
        m = self.max_items
        w = self.wrong[rows] if wrong_rows is None else wrong_rows
        return (w + alpha * (m - self.accepted[rows])) / m


@dataclass
class ThresholdAnswer:
    """The answer for one scorer, level, alpha and delta: a threshold with its coverage and bound,
    or none, with the number of labelled documents that would be needed."""

    level: str
    alpha: float
    delta: float
    n_documents: int
    n_items: int
    threshold: float | None
    coverage: float  # share of calibration items accepted (0 without a threshold)
    accepted: int
    risk: float | None  # the calibration risk at the threshold
    bound: float | None  # a pointwise 1 - delta upper confidence bound on the risk at the threshold
    tested: int  # thresholds tested before the sequence stopped
    reason: str = ""
    documents_needed: int | None = None  # when no threshold holds: about how many would do
    coverage_if_enough: float | None = None  # the coverage that many documents would allow
    more_labels: str = ""  # when no threshold holds: would help, would not help, beyond the limit
    guarantee: str = field(default="", repr=False)

    @property
    def holds(self) -> bool:
        return self.threshold is not None

    def sentence(self) -> str:
        """The answer in one sentence."""
        unit = "documents" if self.level == "document" else "fields"
        if self.holds:
            return (
                f"accept {unit} scored >= {self.threshold:g}: {100 * self.coverage:.1f}% of {unit} auto-accepted;"
                f" risk <= {100 * self.alpha:g}% with probability >= {100 * (1 - self.delta):g}%"
                f" (calibration risk {100 * (self.risk or 0):.1f}%, pointwise upper bound {100 * (self.bound or 0):.1f}%;"
                f" n = {self.n_documents} labelled documents)"
            )
        text = f"no threshold meets alpha = {100 * self.alpha:g}% at this n ({self.n_documents} labelled documents)"
        if self.reason:
            text += f": {self.reason}"
        return text

    def to_row(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "alpha": self.alpha,
            "delta": self.delta,
            "n_documents": self.n_documents,
            "n_items": self.n_items,
            "threshold": self.threshold,
            "coverage": round(self.coverage, 4),
            "accepted": self.accepted,
            "calibration_risk": None if self.risk is None else round(self.risk, 4),
            "risk_bound": None if self.bound is None else round(self.bound, 4),
            "thresholds_tested": self.tested,
            "documents_needed": self.documents_needed,
            "coverage_if_enough": None if self.coverage_if_enough is None else round(self.coverage_if_enough, 4),
            "more_labels": self.more_labels or None,
            "answer": self.sentence(),
        }


def ltt_index(table: LossTable, alpha: float, delta: float, rows: np.ndarray | None = None) -> tuple[int | None, int]:
    """The index of the Learn-then-Test threshold (None if none holds) and how many were tested."""
    if table.level == "field" and table.field_test == "wsr":
        return _ltt_index_betting(table, alpha, delta, rows)
    possible = table.pvalues(alpha, rows, errors_zero=True, delta=delta) <= delta
    if not possible.any():
        return None, 0
    start = int(np.argmax(possible))
    p = table.pvalues(alpha, rows, delta=delta)[start:]
    k = fixed_sequence(p, delta)
    tested = min(k + 1, len(p))
    return (start + k - 1 if k else None), tested


def _ltt_index_betting(table: LossTable, alpha: float, delta: float, rows: np.ndarray | None) -> tuple[int | None, int]:
    """:func:`ltt_index` with the betting p-values of the labels computed one threshold at a time,
    only as far as the sequence goes (the same answer as computing them all, at less cost)."""
    rows = table.default_order() if rows is None else rows
    acc, wr, m = table.accepted[rows], table.wrong[rows], table.max_items
    possible = wsr_pvalue(alpha * (m - acc) / m, alpha, delta=delta) <= delta
    if not possible.any():
        return None, 0
    start = int(np.argmax(possible))
    k = 0
    for j in range(start, acc.shape[1]):
        if not wsr_pvalue((wr[:, j] + alpha * (m - acc[:, j])) / m, alpha, delta=delta)[0] <= delta:
            break
        k += 1
    tested = min(k + 1, acc.shape[1] - start)
    return (start + k - 1 if k else None), tested


def document_counts(rows: np.ndarray, n_documents: int) -> np.ndarray:
    """How often each document occurs in each row of ``rows`` (sets x documents, as floats)."""
    rows = np.asarray(rows)
    sets = rows.shape[0]
    flat = (np.arange(sets)[:, None] * n_documents + rows).ravel()
    return np.bincount(flat, minlength=sets * n_documents).reshape(sets, n_documents).astype(float)


def ltt_indices(table: LossTable, alpha: float, delta: float, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`ltt_index` for many calibration sets at once, one per row of ``rows`` (splits x
    documents, each row in the order the test reads it): the index of each set's Learn-then-Test
    threshold (-1 where none holds) and how many thresholds it tested. Every p-value is the one
    :func:`ltt_index` computes for that set alone; only the loop over sets is gone."""
    rows = np.asarray(rows)
    if table.level == "field" and table.field_test == "wsr":
        return _betting_sequences(table, alpha, delta, rows)
    acc, wr, _ = table.split_sums(rows)
    n = rows.shape[1]
    possible = table.pvalues_of_sums(alpha, acc, np.zeros_like(wr), n) <= delta
    return _sequences(possible, table.pvalues_of_sums(alpha, acc, wr, n), delta)


def _betting_sequences(table: LossTable, alpha: float, delta: float, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_ltt_index_betting` for every set of documents (a row of ``rows``) at once: one
    threshold at a time, strictest first, each set's betting p-values computed only while its
    sequence runs (looking for the first threshold that could pass with no error, then testing
    from there until one fails), so the sets together cost what the loop over them did, less
    the loop. The losses are formed as :func:`_ltt_index_betting` forms them."""
    sets = rows.shape[0]
    n_thresholds, m = table.accepted.shape[1], table.max_items
    start = np.full(sets, -1)
    passed = np.zeros(sets, dtype=int)
    running = np.ones(sets, dtype=bool)  # still looking for a start, or still passing
    by_threshold = np.ascontiguousarray(table.accepted.T), np.ascontiguousarray(table.wrong.T)
    read = np.ascontiguousarray(rows.T)  # documents x sets: each set a column, read down its rows
    for j in range(n_thresholds):
        active = np.flatnonzero(running)
        if not len(active):
            break
        order = read[:, active]
        acc, wr = by_threshold[0][j][order], by_threshold[1][j][order]
        looking = start[active] < 0
        if looking.any():
            free = wsr_pvalue(alpha * (m - acc[:, looking]) / m, alpha, delta=delta) <= delta
            start[active[looking][free]] = j
        testing = start[active] >= 0
        if testing.any():
            ok = wsr_pvalue((wr[:, testing] + alpha * (m - acc[:, testing])) / m, alpha, delta=delta) <= delta
            passed[active[testing][ok]] += 1
            running[active[testing][~ok]] = False
    index = np.where(passed > 0, start + passed - 1, -1)
    tested = np.where(start >= 0, np.minimum(passed + 1, n_thresholds - start), 0)
    return index, tested


def _sequences(possible: np.ndarray, p: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The fixed-sequence test of :func:`ltt_index` on each row: from the first threshold that
    could pass, the thresholds rejected before the first that is not (a NaN p-value is not)."""
    n_thresholds = p.shape[1]
    start = np.argmax(possible, axis=1)
    fails = ~(p <= delta) & (np.arange(n_thresholds) >= start[:, None])
    stop = np.where(fails.any(axis=1), np.argmax(fails, axis=1), n_thresholds)
    k = stop - start
    index = np.where(k > 0, start + k - 1, -1)
    tested = np.minimum(k + 1, n_thresholds - start)
    none = ~possible.any(axis=1)
    index[none], tested[none] = -1, 0
    return index, tested


def naive_indices(acc: np.ndarray, wr: np.ndarray, alpha: float) -> np.ndarray:
    """:func:`naive_index` from each set's sums (sets x thresholds, :meth:`LossTable.split_sums`):
    the most permissive threshold whose risk is at most alpha, -1 where there is none."""
    ok = (acc > 0) & (wr <= alpha * acc + 1e-12)
    last = ok.shape[1] - 1 - np.argmax(ok[:, ::-1], axis=1)
    return np.where(ok.any(axis=1), last, -1)


def risks_and_coverages(
    index: np.ndarray, acc: np.ndarray, wr: np.ndarray, total: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`risk_and_coverage` per set: each set's threshold ``index`` (-1: none) read on its own
    sums (sets x thresholds, and items per set); risk and coverage 0 where nothing is accepted."""
    sets = np.arange(len(index))
    held = index >= 0
    a = np.where(held, acc[sets, np.maximum(index, 0)], 0.0)
    w = np.where(held, wr[sets, np.maximum(index, 0)], 0.0)
    total = np.broadcast_to(total, a.shape)
    risk = np.divide(w, a, out=np.zeros_like(a), where=a > 0)
    coverage = np.divide(a, total, out=np.zeros_like(a), where=held & (total > 0))
    return risk, coverage


def naive_index(table: LossTable, alpha: float, rows: np.ndarray | None = None) -> int | None:
    """The most permissive threshold whose calibration risk is at most alpha (no bound): the rule
    that the validity check sets beside the bounded one."""
    acc, wr, _, _ = table.sums(rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = (acc > 0) & (wr <= alpha * acc + 1e-12)
    idx = np.flatnonzero(ok)
    return int(idx[-1]) if len(idx) else None


def risk_and_coverage(table: LossTable, index: int | None, rows: np.ndarray | None = None) -> tuple[float, float]:
    """Risk (0 when nothing is accepted) and coverage of a threshold on ``rows``."""
    if index is None:
        return 0.0, 0.0
    acc, wr, total, _ = table.sums(rows)
    a, w = float(acc[index]), float(wr[index])
    return (w / a if a else 0.0), (a / total if total else 0.0)


def _bound_at(table: LossTable, index: int, delta: float) -> float:
    acc, wr, _, n = table.sums()
    a, w = float(acc[index]), float(wr[index])
    if table.level == "document":
        return clopper_pearson_upper(w, a, delta)
    m = table.max_items
    if table.field_test == "hb":
        return upper_bound(lambda lv: float(hb_pvalue((w + lv * (m * n - a)) / (m * n), n, lv)), delta)
    rows = table.default_order()
    return upper_bound(lambda lv: float(wsr_pvalue(table.losses(lv, rows)[:, index], lv, delta=delta)[0]), delta)


NEED_LIMIT = 100  # documents_needed looks as far as this many times the labels held


def documents_needed(table: LossTable, alpha: float, delta: float) -> tuple[int | None, float | None, str]:
    """About how many labelled documents would let the test certify a threshold, if documents kept
    coming as the ones held did: the test itself (:func:`ltt_index`, its fixed sequence and its
    p-value) is run on the held documents repeated, in the order the test reads them, for a growing
    number of documents. Returns that number, the coverage of the threshold it then certifies, and
    whether more labels help at all: ``"would help"`` (the number is given), ``"would not help"``
    (the observed risk is >= alpha at every threshold, so no number of such documents certifies
    one) or ``"beyond the limit"`` (not within :data:`NEED_LIMIT` times the labels held). Replaying
    the test keeps the estimate consistent with it: a count at or below the labels held, where the
    test has failed, cannot come out."""
    acc, wr, total, n = table.sums()
    if not any(a > 0 and w / a < alpha for a, w in zip(acc, wr, strict=True)):
        return None, None, "would not help"
    order = table.default_order()
    if (held := ltt_index(table, alpha, delta)[0]) is not None:
        return n, float(acc[held] / total), "would help"

    def certified(big_n: int) -> int | None:
        return ltt_index(table, alpha, delta, np.resize(order, big_n))[0]

    lo, hi = n, 2 * n
    while certified(hi) is None:
        lo, hi = hi, 2 * hi
        if lo >= NEED_LIMIT * n:
            return None, None, "beyond the limit"
    while hi - lo > max(1, lo // 200):  # to about 0.5%: an estimate, not a promise
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if certified(mid) is not None else (mid, hi)
    index = certified(hi)
    assert index is not None
    rows = np.resize(order, hi)
    a_hi, _, total_hi, _ = table.sums(rows)
    return hi, float(a_hi[index] / total_hi), "would help"


def rests_on_one_item(coverage_if_enough: float, n_items: int) -> bool:
    """Whether a :func:`documents_needed` estimate extrapolates from fewer than two of the items
    held (the score's single most trusted item, a right one): then the count follows from the number
    of items, not from the score, and is not worth quoting."""
    return coverage_if_enough * n_items < 1.5


def quoted_need(documents: float) -> int:
    """A :func:`documents_needed` estimate as prose quotes it: to two significant figures (7,406 ->
    7,400), since it extrapolates the score's share wrong at its most trusted items and its last
    digits mean nothing.

    >>> [quoted_need(n) for n in (7406, 362, 95, 12_345)]
    [7400, 360, 95, 12000]
    """
    n = round(documents)
    if n < 100:
        return n
    step = 10 ** (len(str(n)) - 2)
    return round(n / step) * step


def choose_threshold(table: LossTable, alpha: float, delta: float) -> ThresholdAnswer:
    """The most permissive threshold that Learn-then-Test certifies, or why there is none."""
    check_levels(alpha, delta)
    acc, wr, total, n = table.sums()
    index, tested = ltt_index(table, alpha, delta)
    common: dict[str, Any] = {
        "level": table.level,
        "alpha": alpha,
        "delta": delta,
        "n_documents": n,
        "n_items": int(total),
        "tested": tested,
        "guarantee": GUARANTEE[table.level],
    }
    if index is not None:
        return ThresholdAnswer(
            threshold=float(table.thresholds[index]),
            coverage=float(acc[index] / total),
            accepted=int(acc[index]),
            risk=float(wr[index] / acc[index]),
            bound=_bound_at(table, index, delta),
            **common,
        )
    need, cov, more = documents_needed(table, alpha, delta)
    if tested == 0:
        reason = "even with no error, no threshold accepts enough items for the bound"
    else:
        reason = f"the strictest testable threshold's risk bound is above alpha (stopped after {tested} tested)"
    if more == "would not help":
        reason += "; the observed risk is >= alpha at every threshold, so more labels alone will not help"
    elif more == "beyond the limit":
        reason += f"; not even {NEED_LIMIT} times as many labelled documents, drawn as these were, would do"
    else:
        reason += f"; about {need} labelled documents would be needed (at {100 * (cov or 0):.1f}% coverage)"
    return ThresholdAnswer(
        threshold=None,
        coverage=0.0,
        accepted=0,
        risk=None,
        bound=None,
        reason=reason,
        documents_needed=need,
        coverage_if_enough=cov,
        more_labels=more,
        **common,
    )
