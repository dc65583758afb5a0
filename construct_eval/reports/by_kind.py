"""Detection per planted error kind: which errors each field scorer finds and which it misses.

A controlled-error run knows what it planted (``outputs.jsonl`` -> ``ops``, each with its
``kind``). For every field-level scorer and every kind, the wrong fields that hold an error of
that kind are ranked against every correct field of the run: the AUROC of that ranking (with
a document-bootstrap interval), and the recall when the lowest-scored 10% of *all* fields are
reviewed (the share of that kind's errors the review finds). A field with errors of two kinds
counts for both; a wrong field with no planted error (none in a controlled run) is
``unplanted``. The label-using field prior and the label-free plausibility checks are among
the scorers, so a reader sees what knowing the field, or checking the value's shape, finds.
``docs_wrong`` and ``docs_correct`` count the documents that hold the two sides (the bootstrap
resamples documents, so a figure's power rule needs them).

Written by ``evaluate`` into ``metrics/detection_by_planted_kind`` for runs with planted
errors; :func:`planted_kind_figure` draws the AUROC table as a heat map (styled elsewhere).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from construct_eval.data.runs import RunDir
from construct_eval.display.style import PLANTED_LABELS
from construct_eval.fields import FieldPath, parse_path
from construct_eval.reports.collect import ScoredItems
from construct_eval.scorer_labels import display_name
from construct_eval.stats import delong
from construct_eval.stats.metrics import _interval, auroc, auroc_interval, review_lowest

REVIEW_BUDGET = 0.10
"""The share of all fields reviewed, lowest-scored first, for the recall column."""

UNPLANTED = "unplanted"


def planted_errors(run: RunDir) -> dict[str, list[tuple[FieldPath, str]]]:
    """Per document, where each planted error shows in the output and its kind (empty: no
    planted errors in this run). A dropped or duplicated list item shows at its list."""
    latest: dict[str, Mapping[str, Any]] = {}
    for row in run.iter_rows("outputs"):
        latest[row["id"]] = row
    out: dict[str, list[tuple[FieldPath, str]]] = {}
    for doc_id, row in latest.items():
        ops = row.get("ops")
        if not ops:
            continue
        out[doc_id] = [(_shown_at(op), str(op.get("kind") or "?")) for op in ops]
    return out


def _shown_at(op: Mapping[str, Any]) -> FieldPath:
    path = parse_path(op["path"])
    return path if op["op"] == "set" else path[:-1]


def kinds_of(planted: Mapping[str, Sequence[tuple[FieldPath, str]]], doc_id: str, field: str) -> set[str]:
    """The kinds of the planted errors at or under (or above) a field of a document."""
    path = parse_path(field)
    found = set()
    for where, kind in planted.get(doc_id, ()):
        n = min(len(where), len(path))
        if where[:n] == path[:n]:
            found.add(kind)
    return found


def kind_table(
    items: Sequence[ScoredItems],
    planted: Mapping[str, Sequence[tuple[FieldPath, str]]],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    intervals: str = "bootstrap",
) -> list[dict[str, Any]]:
    """One row per field-level scorer and planted kind (see the module doc). ``intervals``: each
    row's AUROC interval by the document bootstrap, or by the clustered DeLong estimator where
    :func:`construct_eval.stats.delong.choose` takes it for the row's items (such a row says
    ``intervals: delong``; no resamples are drawn for it)."""
    rows: list[dict[str, Any]] = []
    known: dict[tuple[str, str], set[str]] = {}  # the scorers share their fields: each read once
    for it in items:
        if it.level != "field" or not it.n or it.granularity not in ("leaf", "top"):
            continue
        y, s, g = it.columns()
        by_kind: dict[str, list[int]] = defaultdict(list)  # the wrong items of each kind, in item order
        for i in np.flatnonzero(y == 1).tolist():
            item = (it.doc_ids[i], it.fields[i])
            found = known.get(item)
            if found is None:
                found = known[item] = kinds_of(planted, *item)
            for k in found or {UNPLANTED}:
                by_kind[k].append(i)
        correct = np.flatnonzero(y == 0)
        method = {k: _method(intervals, g, np.asarray(idx), correct) for k, idx in by_kind.items()}
        resampled = {k: v for k, v in by_kind.items() if method[k] == "bootstrap"}
        shared = _shared_aurocs(s, g, correct, resampled, n_boot=n_boot, seed=seed)
        for kind in sorted(by_kind):
            pos = np.asarray(by_kind[kind])
            row: dict[str, Any] = {
                "scorer": it.scorer,
                "granularity": it.granularity,
                "kind": kind,
                "n_wrong": len(pos),
                "n_correct": len(correct),
                "docs_wrong": len(np.unique(g[pos])),
                "docs_correct": len(np.unique(g[correct])),
            }
            yk = np.zeros(len(y))
            yk[pos] = 1
            row[f"recall_at_{int(REVIEW_BUDGET * 100)}pct"] = round(review_lowest(yk, s, REVIEW_BUDGET).recall, 4)
            if len(correct):
                use = np.concatenate([pos, correct])
                if kind in shared:
                    interval = _interval(auroc(yk[use], s[use]), shared[kind], 0.95)
                else:
                    interval = auroc_interval(yk[use], s[use], g[use], n_boot=n_boot, seed=seed, intervals=method[kind])
                row.update(
                    auroc=round(interval.estimate, 4),
                    auroc_low=round(interval.low, 4),
                    auroc_high=round(interval.high, 4),
                )
                if method[kind] == "delong":
                    row["intervals"] = "delong"
            rows.append(row)
    return rows


def _method(intervals: str, g: np.ndarray, pos: np.ndarray, correct: np.ndarray) -> str:
    """How a kind's AUROC interval is drawn: its wrong items ``pos`` against every correct one."""
    if not len(correct):
        return "bootstrap"
    use = np.concatenate([pos, correct])
    return delong.choose(intervals, np.concatenate([np.ones(len(pos)), np.zeros(len(correct))]), g[use])


def _shared_aurocs(
    s: np.ndarray, g: np.ndarray, correct: np.ndarray, by_kind: Mapping[str, list[int]], *, n_boot: int, seed: int
) -> dict[str, np.ndarray]:
    """The resampled AUROCs of the kinds whose items (its wrong fields and every correct one) hold
    every document of the table's items, from one walk over the correct fields
    (:func:`~construct_eval.stats.resampled.resampled_aurocs_by_class`): each kind's own
    bootstrap would number those documents alike and draw the same resamples. The other kinds
    (a document whose only fields are wrong ones of other kinds) are left to their own."""
    from construct_eval.stats.resampled import resampled_aurocs_by_class

    if not len(correct) or not by_kind:
        return {}
    wrong = np.asarray(sorted({i for idx in by_kind.values() for i in idx}), dtype=np.int64)
    present = np.unique(g[np.concatenate([correct, wrong])])
    kinds = [k for k in sorted(by_kind) if len(np.unique(g[np.concatenate([by_kind[k], correct])])) == len(present)]
    if not kinds:
        return {}
    codes = np.searchsorted(present, g)  # documents as each kind's own call numbers them
    draws = resampled_aurocs_by_class(
        s, codes, correct, [np.asarray(by_kind[k], dtype=np.int64) for k in kinds], n_boot=n_boot, seed=seed
    )
    return {k: draws[:, j] for j, k in enumerate(kinds)}


def planted_kind_figure(rows: Sequence[Mapping[str, Any]], title: str, *, granularity: str | None = None) -> Any:
    """A heat map of :func:`kind_table`'s AUROC: scorers down, kinds across, each cell with its
    AUROC and n (blank where a kind has no AUROC). Plain styling: a figure module restyles it."""
    import matplotlib.pyplot as plt

    use = [r for r in rows if granularity is None or r["granularity"] == granularity]
    scorers = list(dict.fromkeys(r["scorer"] for r in use))
    kinds = list(dict.fromkeys(sorted(r["kind"] for r in use)))
    grid = np.full((len(scorers), len(kinds)), np.nan)
    counts = np.zeros((len(scorers), len(kinds)), dtype=int)
    for r in use:
        i, j = scorers.index(r["scorer"]), kinds.index(r["kind"])
        grid[i, j] = r.get("auroc", np.nan)
        counts[i, j] = r["n_wrong"]
    labels = [display_name(x) for x in scorers]
    label_width = 0.075 * max((len(x) for x in labels), default=10)
    width = 1.8 + label_width + 1.1 * max(1, len(kinds))
    fig, ax = plt.subplots(figsize=(width, 1.8 + 0.45 * max(1, len(scorers))))
    im = ax.imshow(grid, vmin=0.0, vmax=1.0, cmap="RdBu", aspect="auto")
    ax.set_xticks(range(len(kinds)), [PLANTED_LABELS.get(k, k) for k in kinds], rotation=35, ha="right")
    ax.set_yticks(range(len(scorers)), labels)
    for i in range(len(scorers)):
        for j in range(len(kinds)):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}\nn={counts[i, j]}", ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=ax, label="AUROC")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig
