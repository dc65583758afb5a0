"""Join a run's scores with its labels, and turn them into the tables the paper's analyses need.

Every scorer ends up as :class:`ScoredItems`: one trust score per document or per field
(higher = more trustworthy), the true label, the document it belongs to, and what the
scorer cost. Sources:

- ``judgments.jsonl`` (the LLM judge): per mode and prompt variant, the verbalized rating
  (``judge-doc``, ``judge-field``, ``judge-joint``) and its log-prob twin (``...:expected``);
  field-level judges also give a document score, the minimum over the document's fields
  (``...:min``);
- ``scores.jsonl`` (other scorers such as ``token_logprob``), at their own granularity.

Items a scorer could not score (unscored replies, outputs without log-probs) and items
without a label are counted and left out of the metrics, never filled in with a number.

One item, one value: when a file holds two rows for the same item of the same scorer (a
judgment made twice, say under two endpoint identities of one server), the latest row wins,
the earlier ones are dropped, and a :class:`DuplicateRowsWarning` says how many; the tables
carry the count (``duplicates_dropped``). Two copies never count as two items, which would
make every interval too narrow.
"""

from __future__ import annotations

import csv
import hashlib
import math
import re
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from construct_eval.analysis.calibration import (
    METHODS,
    calibration_metrics,
    naive_rating_reading,
    out_of_fold,
    out_of_fold_per_field,
    plan_review,
    value_table,
)
from construct_eval.analysis.metrics import REVIEW_BUDGETS, detection_summary
from construct_eval.data.labels import (
    NULL_LIKE_STRINGS,
    DocumentLabels,
    LabelRules,
    judged_field_errors,
    label_rows,
    label_summary,
)
from construct_eval.data.runs import RunDir
from construct_eval.fields import DOCUMENT, parse_path
from construct_eval.judging.prompts import PromptVariant
from construct_eval.types import ScorerId


class DuplicateRowsWarning(UserWarning):
    """Rows for the same item and scorer were found more than once; the latest was kept."""


def latest_per_item(rows: Iterable[Mapping[str, Any]], item_of: Any, what: str) -> tuple[list[Mapping[str, Any]], int]:
    """The last row per item (``item_of(row)``), in first-seen order, and how many were dropped."""
    kept: dict[Any, Mapping[str, Any]] = {}
    dropped = 0
    for r in rows:
        k = item_of(r)
        if k in kept:
            dropped += 1
        kept[k] = r
    if dropped:
        warnings.warn(
            f"{what}: {dropped} row(s) repeat an item already seen; the latest row per item is used",
            DuplicateRowsWarning,
            stacklevel=3,
        )
    return list(kept.values()), dropped


@dataclass
class ScoredItems:
    scorer: str
    level: str  # "document" or "field"
    granularity: str | None = None  # of field-level scores: "leaf", "top", "item"; None for document scores
    doc_ids: list[str] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    wrong: list[int] = field(default_factory=list)
    unscored: int = 0  # the scorer answered, but not with a score (a reply that cannot be read)
    failed: int = 0  # the scorer's request failed (HTTP error, timeout): no answer, not a bad one
    unlabelled: int = 0
    duplicates_dropped: int = 0
    left_out: dict[str, int] = field(default_factory=dict)  # labelled items with no row, by why
    seen: set[tuple[str, str]] = field(default_factory=set, repr=False)  # every (document, field) with a row
    calls: int = 0
    tokens: int = 0
    seconds: float = 0.0

    @property
    def n(self) -> int:
        return len(self.scores)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.asarray(self.wrong, dtype=float), np.asarray(self.scores, dtype=float), np.asarray(self.doc_ids)

    @property
    def key(self) -> str:
        return f"{self.level}:{self.scorer}"


def label_run(
    run: RunDir, *, data_dir: str | Path | None = None, extra_rules: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Label every output of ``run`` against its ground truth; write labels.jsonl and run.json.

    The rules are the dataset's, recorded in run.json, updated by ``extra_rules``; the rules
    used and their hash are written beside the summary, which is returned.
    """
    records = {r["id"]: r for r in run.records(data_dir=data_dir)}
    stored = (run.meta().get("dataset") or {}).get("label_rules") or {}
    rules = LabelRules.from_dict({**stored, **(extra_rules or {})})
    outputs = run.outputs(records)
    labels = label_rows(records, outputs, rules=rules, default_schema=run.schema())
    run.replace("labels", (d.to_dict() for d in labels))
    summary = label_summary(labels)
    run.write_meta("labels", {"rules": rules.to_dict(), "rules_hash": rules.hash, **summary})
    # the other reading of null-like strings ("null", "", "Unknown"): kept beside, when it differs
    alt_rules = rules.with_null_like(() if rules.null_like_strings else NULL_LIKE_STRINGS)
    alt = label_rows(records, outputs, rules=alt_rules, default_schema=run.schema())
    differ = [a.doc_id for a, b in zip(labels, alt, strict=True) if a.to_dict()["fields"] != b.to_dict()["fields"]]
    if differ:
        run.replace(ALT_LABELS, (d.to_dict() for d in alt))
        alt_summary = label_summary(alt)
        run.write_meta(
            ALT_LABELS,
            {
                "rules": alt_rules.to_dict(),
                "rules_hash": alt_rules.hash,
                "documents_differing": len(differ),
                **alt_summary,
            },
        )
        summary = {
            **summary,
            "other_reading": {"null_like_strings": sorted(alt_rules.null_like_strings), **alt_summary},
        }
    else:
        run.file(ALT_LABELS).unlink(missing_ok=True)
        run.drop_meta(ALT_LABELS)
    return {"rules_hash": rules.hash, **summary}


ALT_LABELS = "labels_other_reading"
"""Labels under the other reading of null-like strings, where it changes any label."""


def load_labels(run: RunDir, name: str = "labels") -> dict[str, DocumentLabels]:
    rows, _ = latest_per_item(run.iter_rows(name), lambda r: r["id"], f"{run.file(name)}")
    return {row["id"]: DocumentLabels.from_dict(row) for row in rows}


def _add(
    items: ScoredItems,
    labels: Mapping[str, DocumentLabels],
    doc_id: str,
    name: str,
    score: float | None,
    *,
    failed: bool = False,
) -> None:
    items.seen.add((doc_id, name))
    if failed:
        items.failed += 1
        return
    if score is None or (isinstance(score, float) and math.isnan(score)):
        items.unscored += 1
        return
    doc_labels = labels.get(doc_id)
    if doc_labels is None:
        items.unlabelled += 1
        return
    if name == DOCUMENT:
        wrong: bool | None = doc_labels.wrong
    else:
        wrong = judged_field_errors(doc_labels, [name])[name]
    if wrong is None:
        items.unlabelled += 1
        return
    items.doc_ids.append(doc_id)
    items.fields.append(name)
    items.scores.append(float(score))
    items.wrong.append(int(wrong))


def _judge_items(rows: Iterable[Mapping[str, Any]], labels: Mapping[str, DocumentLabels]) -> list[ScoredItems]:
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    default = PromptVariant().id
    for r in rows:
        # field ratings judged before granularity was recorded are the judge's default, top-level
        gran = "" if r["mode"] == "doc" else (r.get("granularity") or "top")
        groups[(r["mode"], r.get("variant") or default, gran)].append(r)
    variants = {v for _, v, _ in groups}
    out: list[ScoredItems] = []
    for (mode, variant, gran), all_rows in sorted(groups.items()):
        sid = ScorerId.judge(
            mode,
            granularity=gran if gran not in ("", "top") else None,
            variant=variant if len(variants) > 1 or variant != default else None,
        )
        group, dropped = latest_per_item(all_rows, lambda r: (r["doc_id"], r["field"]), f"judgments of {sid}")
        calls = {r["call_id"]: r for r in group}
        cost = {
            "calls": len(calls),
            "tokens": sum(
                int(r.get("prompt_tokens") or 0) + int(r.get("completion_tokens") or 0) for r in calls.values()
            ),
            "seconds": sum(float(r.get("latency_s") or 0.0) for r in calls.values()),
        }
        level = "document" if mode == "doc" else "field"
        for reading, key in ((None, "rating"), ("expected", "expected_rating")):
            name = replace(sid, value=reading).name
            items = ScoredItems(name, level, granularity=gran or None, duplicates_dropped=dropped, **cost)
            for r in group:
                value = r.get(key) if r.get("status") == "ok" else None
                _add(items, labels, r["doc_id"], r["field"], value, failed=r.get("reason") == "request_failed")
            if items.n or reading is None:
                out.append(items)
            if level == "field":  # document score: the least trusted field
                per_doc: dict[str, list[float | None]] = defaultdict(list)
                for r in group:
                    per_doc[r["doc_id"]].append(r.get(key) if r.get("status") == "ok" else None)
                doc_name = replace(sid, value=reading, aggregate="min").name
                doc_items = ScoredItems(doc_name, "document", duplicates_dropped=dropped, **cost)
                for doc_id, values in per_doc.items():
                    scored = [v for v in values if v is not None]
                    _add(doc_items, labels, doc_id, DOCUMENT, min(scored) if scored else None)
                if doc_items.n or reading is None:
                    out.append(doc_items)
    return out


def _score_items(rows: Iterable[Mapping[str, Any]], labels: Mapping[str, DocumentLabels]) -> list[ScoredItems]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    # a scorer's cost is written once per document, on its document row(s): "consistency:min"
    # and "consistency:mean" carry the cost of the samples that also make "consistency" per field
    doc_cost: dict[tuple[str, str], tuple[int, int, float]] = {}
    for r in rows:
        level = "document" if r["field"] == DOCUMENT else "field"
        name = r["scorer"] if level == "document" else f"{r['scorer']}@{r.get('granularity', 'leaf')}"
        groups[(name, level)].append(r)
        if level == "document":
            doc_cost[(ScorerId.parse(r["scorer"]).family, r["id"])] = _cost(r)
    out = []
    for (name, level), all_rows in sorted(groups.items()):
        group, dropped = latest_per_item(all_rows, lambda r: (r["id"], r["field"]), f"scores of {name}")
        if level == "document":
            costs = [_cost(r) for r in group]
        else:
            family = ScorerId.parse(group[0]["scorer"]).family
            costs = [doc_cost.get((family, doc_id), (0, 0, 0.0)) for doc_id in {r["id"] for r in group}]
        items = ScoredItems(
            name,
            level,
            granularity=None if level == "document" else group[0].get("granularity", "leaf"),
            calls=sum(c[0] for c in costs),
            tokens=sum(c[1] for c in costs),
            seconds=sum(c[2] for c in costs),
            duplicates_dropped=dropped,
        )
        for r in group:
            _add(items, labels, r["id"], r["field"], r.get("score"))
        out.append(items)
    return out


def _cost(row: Mapping[str, Any]) -> tuple[int, int, float]:
    return int(row.get("calls") or 0), int(row.get("tokens") or 0), float(row.get("seconds") or 0.0)


def collect(run: RunDir, labels_name: str = "labels") -> list[ScoredItems]:
    """Every scorer of the run, as labelled items. Needs labels.jsonl (``construct-eval label``);
    ``labels_name`` reads another labels file (:data:`ALT_LABELS`: the other reading)."""
    labels = load_labels(run, labels_name)
    if not labels:
        raise ValueError(f"{run.path}: no labels.jsonl; run `construct-eval label --run {run.path}` first")
    items = _judge_items(run.iter_rows("judgments"), labels) + _score_items(run.iter_rows("scores"), labels)
    items = [i for i in items if i.n or i.unscored]
    for gran in sorted({i.granularity for i in items if i.level == "field" and i.granularity in ("leaf", "top")}):
        items.append(field_prior_items(labels, gran))
    for it in items:
        it.left_out = left_out(it, labels)
    return items


FIELD_PRIOR = "field-prior-uses-labels"
"""The baseline that knows only which field an item is: its error rate in other documents."""


def field_key(path: str) -> str:
    """A field's identity across documents: its path with list positions dropped."""
    return re.sub(r"\[\d+\]", "[]", path)


def field_prior_items(
    labels: Mapping[str, DocumentLabels], granularity: str, *, n_splits: int = 5, seed: int = 0
) -> ScoredItems:
    """Trust = 1 - the field's error rate in the other documents, out of fold (folds of documents).

    It uses the labels, like the fitted combiner, so it is a reference, not a scorer a user
    has at run time: a per-field signal has to beat it to show that it knows more about an
    item than which field it is. Items: every labelled field present in the output, at
    ``granularity`` ("leaf" paths or "top"-level keys); a field unseen in the training folds
    gets the training folds' overall rate.
    """
    per_doc: dict[str, dict[str, bool]] = {}
    for doc_id, lab in labels.items():
        if lab.wrong is None:
            continue
        fields: dict[str, bool] = {}
        for f in lab.fields:
            if not f.in_output or not f.path:
                continue
            name = f.path if granularity == "leaf" else str(parse_path(f.path)[0])
            fields[name] = fields.get(name, False) or f.wrong
        if fields:
            per_doc[doc_id] = fields
    docs = sorted(per_doc)
    rng = np.random.default_rng(seed)
    fold = dict(zip(docs, rng.permutation(len(docs)) % max(1, min(n_splits, len(docs))), strict=True))
    items = ScoredItems(f"{FIELD_PRIOR}@{granularity}", "field", granularity=granularity)
    for k in sorted(set(fold.values())):
        wrong: Counter[str] = Counter()
        total: Counter[str] = Counter()
        for d in docs:
            if fold[d] != k:
                for name, w in per_doc[d].items():
                    total[field_key(name)] += 1
                    wrong[field_key(name)] += int(w)
        overall = sum(wrong.values()) / sum(total.values()) if total else 0.5
        for d in docs:
            if fold[d] != k:
                continue
            for name, w in per_doc[d].items():
                key = field_key(name)
                rate = wrong[key] / total[key] if total[key] else overall
                items.seen.add((d, name))
                items.doc_ids.append(d)
                items.fields.append(name)
                items.scores.append(1.0 - rate)
                items.wrong.append(int(w))
    return items


def within_field_auroc(it: ScoredItems) -> tuple[float, int, int]:
    """Mean of per-field AUROCs weighted by wrong items, and (fields used, fields with one class).

    What a score knows beyond which field an item is: a score that only ranked fields by how
    error-prone they are would reach a high pooled AUROC and 0.5 within fields.
    """
    from construct_eval.analysis.metrics import auroc

    groups: dict[str, list[int]] = defaultdict(list)
    for i, name in enumerate(it.fields):
        groups[field_key(name)].append(i)
    y, s, _ = it.arrays()
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


def _labelled_keys(
    labels: Mapping[str, DocumentLabels], level: str, granularity: str | None
) -> dict[tuple[str, str], tuple[str, int]]:
    """Labelled items at a level and granularity: why a scorer may have no row for each, and how
    many labels it stands for (a dropped list item's leaves all sit at the list's path)."""
    keys: dict[tuple[str, str], tuple[str, int]] = {}
    for doc_id, lab in labels.items():
        if lab.wrong is None:
            continue  # not generated: no verdict to find
        if level == "document":
            keys[(doc_id, DOCUMENT)] = ("not scored", 1)
            continue
        for f in lab.fields:
            path = f.path if granularity == "leaf" else str(parse_path(f.path)[0]) if f.path else f.path
            why = "not in the output (a dropped item or missing field)" if not f.in_output else "not scored"
            old_why, n = keys.get((doc_id, path), (why, 0))
            weight = 1 if granularity == "leaf" or n == 0 else 0
            keys[(doc_id, path)] = ("not scored" if "not scored" in (old_why, why) else why, n + weight)
    return keys


def left_out(it: ScoredItems, labels: Mapping[str, DocumentLabels]) -> dict[str, int]:
    """Labelled items of the scorer's level that it has no row for, counted by reason.

    A leaf scorer cannot score a list item the output dropped (it has no leaf in the output),
    and a scorer run on some documents only has no rows for the rest: both shrink the items an
    AUROC is computed on, so every detection row says how many and why. Item-granularity
    scores are not checked (their item set is not the labels')."""
    if it.level == "field" and it.granularity not in ("leaf", "top"):
        return {}
    docs_seen = {d for d, _ in it.seen}
    out: Counter[str] = Counter()
    for (doc_id, name), (why, n) in _labelled_keys(labels, it.level, it.granularity).items():
        if (doc_id, name) in it.seen:
            continue
        out[why if doc_id in docs_seen else "document not scored"] += n
    return dict(out)


def not_judgeable(run: RunDir) -> int:
    """Outputs that did not parse: wrong documents that no scorer can see."""
    return sum(1 for r in run.iter_rows("labels") if r.get("parse_failed"))


def not_generated(run: RunDir) -> Counter[str]:
    """Documents with no reply to label, by reason: left out of error rates and detection."""
    return Counter(str(r["not_generated"]).split(":")[0] for r in run.iter_rows("labels") if r.get("not_generated"))


# --------------------------------------------------------------------------- tables


def detection_table(
    items: Sequence[ScoredItems], *, n_boot: int = 1000, seed: int = 0, budgets: Sequence[float] = REVIEW_BUDGETS
) -> list[dict[str, Any]]:
    """One row per scorer and level: AUROC and AUPRC with document-bootstrap intervals, and cost."""
    rows = []
    for it in items:
        row: dict[str, Any] = {"level": it.level, "scorer": it.scorer}
        y, s, g = it.arrays()
        if it.n and 0 < y.sum() < len(y):
            row.update(detection_summary(y, s, g, budgets=budgets, n_boot=n_boot, seed=seed).row())
        else:
            row.update({"n": it.n, "prevalence": float(y.mean()) if it.n else float("nan"), "auroc": float("nan")})
            row["note"] = "one class only: no detection metric" if it.n else "nothing scored"
        n_all = it.n + it.unscored
        row["unscored"] = it.unscored
        row["unscored_rate"] = round(it.unscored / n_all, 4) if n_all else float("nan")
        if it.failed:  # requests that got no answer: neither scored nor unscored
            row["failed_requests"] = it.failed
        sid = ScorerId.parse(it.scorer)
        if it.level == "field" and it.n and sid.family != FIELD_PRIOR:  # the prior is constant within a field
            value, used, one_class = within_field_auroc(it)
            row["auroc_within_field"] = round(value, 4) if value == value else float("nan")
            row["fields_used"] = used
            row["fields_one_class"] = one_class
        if sid.uses_labels:
            row["uses_labels"] = True
        row["left_out"] = sum(it.left_out.values())
        row["left_out_why"] = "; ".join(f"{k}: {v}" for k, v in sorted(it.left_out.items()))
        row["distinct_scores"] = len(set(it.scores))
        if is_rating(it.scorer) and it.n:
            row["rating_use"] = rating_use(it.scores)
        if it.duplicates_dropped:
            row["duplicates_dropped"] = it.duplicates_dropped
        row.update(calls=it.calls, tokens=it.tokens, seconds=round(it.seconds, 1))
        rows.append(row)
    return rows


def calibration_table(
    items: Sequence[ScoredItems],
    *,
    methods: Sequence[str] = METHODS,
    n_splits: int = 5,
    seed: int = 0,
    target_recall: float = 0.9,
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], np.ndarray]]:
    """Out-of-fold calibration of each scorer by each method; metrics rows and the predictions."""
    rows: list[dict[str, Any]] = []
    predictions: dict[tuple[str, str], np.ndarray] = {}
    for it in items:
        y, s, g = it.arrays()
        if it.n < 10 or min(y.sum(), len(y) - y.sum()) < 2 or len(np.unique(g)) < 2:
            continue  # too few items of a class to calibrate out of fold
        distinct = len(np.unique(s))
        if distinct < MIN_DISTINCT_TO_FIT:
            # one value: any calibrator returns the base rate and its ECE looks better than any
            # real score's; two or three: read the error rate per value, do not fit a curve
            why = "undefined: constant score" if distinct == 1 else f"not fitted: {distinct} distinct scores"
            rows.append(
                {
                    "level": it.level,
                    "scorer": it.scorer,
                    "method": why,
                    "n": it.n,
                    "prevalence": round(float(y.mean()), 4),
                }
            )
            continue
        candidates = list(methods)
        if it.level == "field":
            candidates.append("platt-per-field")
        for method in candidates:
            if method == "platt-per-field":
                p = out_of_fold_per_field(s, y, g, it.fields, n_splits=n_splits, seed=seed)
            else:
                p = out_of_fold(method, s, y, g, n_splits=n_splits, seed=seed)
            predictions[(it.key, method)] = p
            plan = plan_review(p, g, target_recall=target_recall, wrong=y)
            rows.append(
                {
                    "level": it.level,
                    "scorer": it.scorer,
                    "method": method,
                    "n": it.n,
                    "prevalence": round(float(y.mean()), 4),
                    **{k: round(v, 4) for k, v in calibration_metrics(p, y).items()},
                    f"review_share_items@{target_recall:.0%}": round(plan.share_items, 4),
                    f"review_share_documents@{target_recall:.0%}": round(plan.share_documents, 4),
                    "realised_recall": round(plan.realised_recall, 4) if plan.realised_recall is not None else None,
                }
            )
    return rows, predictions


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
    """The same rows as CSV (every column) and as a Markdown table (``md_columns`` if given)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    columns: list[str] = []
    for r in rows:
        columns.extend(k for k in r if k not in columns)
    with path.with_suffix(".csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    path.with_suffix(".md").write_text(markdown_table(rows, md_columns or columns, title))


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


# --------------------------------------------------------------------------- reports


def _slug(text: str, limit: int = 80) -> str:
    """A file-name-safe form of a scorer name; long names (combinations) keep a hash of the whole."""
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
    if len(slug) <= limit:
        return slug
    return f"{slug[: limit - 9]}_{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def evaluate_run(run: RunDir, out_dir: Path | None = None, *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Detection tables and figures for every scorer of ``run``; returns what it wrote."""
    from construct_eval.analysis import metrics, plots

    out_dir = out_dir or run.path
    items = collect(run)
    rows = detection_table(items, n_boot=n_boot, seed=seed)
    unparsed = not_judgeable(run)
    title = f"Error detection ({run.path.name}); {unparsed} unparsed outputs are wrong documents no scorer saw"
    missing = not_generated(run)
    if missing:
        why = ", ".join(f"{k} {v}" for k, v in missing.items())
        title += f"; {sum(missing.values())} documents not generated ({why}) are left out"
    write_table(rows, out_dir / "metrics" / "detection", title, md_columns=detection_columns(rows))
    other = None
    if run.file(ALT_LABELS).exists():  # null-like strings change labels here: the other reading too
        alt_rules = (run.meta().get(ALT_LABELS) or {}).get("rules") or {}
        other = detection_table(collect(run, ALT_LABELS), n_boot=n_boot, seed=seed)
        alt_title = (
            f"Error detection ({run.path.name}), with the null-like strings"
            f" {alt_rules.get('null_like_strings')} read as null (labels_other_reading.jsonl)"
        )
        write_table(
            other, out_dir / "metrics" / "detection_other_reading", alt_title, md_columns=detection_columns(other)
        )
    for it in items:  # review tables per rating threshold, for scores with few distinct values
        y, s, _ = it.arrays()
        if it.n and 0 < y.sum() < len(y) and len(set(it.scores)) <= 20:
            write_table(
                metrics.threshold_table(y, s),
                out_dir / "metrics" / f"thresholds_{it.level}_{_slug(it.scorer)}",
                f"Review every item scored <= threshold ({it.level}, {it.scorer})",
            )
    figures = []
    for level in ("document", "field"):
        usable = [i for i in items if i.level == level and i.n and 0 < sum(i.wrong) < i.n]
        if not usable:
            continue
        roc, pr, rc, budget = {}, {}, {}, {}
        for it in usable:
            y, s, _ = it.arrays()
            fpr, tpr = metrics.roc_points(y, s)
            roc[it.scorer] = (fpr, tpr, metrics.auroc(y, s))
            recall, precision = metrics.pr_points(y, s)
            pr[it.scorer] = (recall, precision, metrics.auprc(y, s))
            rc[it.scorer] = metrics.risk_coverage(y, s)
            shares = np.linspace(0, 1, 51)
            budget[it.scorer] = (shares, np.array([metrics.review_lowest(y, s, b).recall for b in shares]))
        prevalence = float(np.mean(usable[0].wrong))
        figures.append(plots.save(plots.roc_figure(roc, f"{level}s: ROC"), out_dir / "figures" / f"roc_{level}.png"))
        figures.append(
            plots.save(plots.pr_figure(pr, prevalence, f"{level}s: PR"), out_dir / "figures" / f"pr_{level}.png")
        )
        figures.append(
            plots.save(plots.risk_coverage_figure(rc, f"{level}s"), out_dir / "figures" / f"risk_coverage_{level}.png")
        )
        figures.append(
            plots.save(plots.review_budget_figure(budget, f"{level}s"), out_dir / "figures" / f"review_{level}.png")
        )
        for it in usable:
            sid = ScorerId.parse(it.scorer)
            if sid.is_written_rating and sid.variant is None and sid.aggregate is None:
                y, s, _ = it.arrays()
                fig = plots.score_histogram(s, y, f"{it.scorer} ({level}s)", integer=True)
                figures.append(plots.save(fig, out_dir / "figures" / f"ratings_{level}_{_slug(it.scorer)}.png"))
    return {
        "rows": rows,
        "other_reading": other,
        "figures": figures,
        "unparsed": unparsed,
        "not_generated": dict(missing),
        "items": items,
    }


def calibrate_run(
    run: RunDir,
    out_dir: Path | None = None,
    *,
    methods: Sequence[str] = METHODS,
    seed: int = 0,
    target_recall: float = 0.9,
) -> dict[str, Any]:
    """Out-of-fold calibration tables and reliability diagrams for every scorer of ``run``."""
    from construct_eval.analysis import plots
    from construct_eval.analysis.calibration import reliability_table

    out_dir = out_dir or run.path
    items = collect(run)
    rows, predictions = calibration_table(items, methods=methods, seed=seed, target_recall=target_recall)
    write_table(rows, out_dir / "metrics" / "calibration", f"Calibration out of fold ({run.path.name})")
    figures = []
    by_item: dict[str, dict[str, Any]] = defaultdict(dict)
    for (key, method), p in predictions.items():
        it = next(i for i in items if i.key == key)
        y, _, _ = it.arrays()
        by_item[key][method] = reliability_table(p, y, bins=10, strategy="mass")
    bins_rows = [
        {"level": key.split(":", 1)[0], "scorer": key.split(":", 1)[1], "method": method, "bin": i, **vars(b)}
        for key, tables in by_item.items()
        for method, table in tables.items()
        for i, b in enumerate(table)
    ]
    if bins_rows:  # the reliability diagrams' numbers, for the paper figures' grid
        write_table(bins_rows, out_dir / "metrics" / "reliability", f"Reliability bins, out of fold ({run.path.name})")
    for key, tables in by_item.items():
        fig = plots.reliability_figure(tables, f"{key} (equal-mass bins, out of fold)")
        figures.append(plots.save(fig, out_dir / "figures" / f"reliability_{_slug(key)}.png"))
    meanings = {}
    for it in items:
        rating = is_rating(it.scorer)
        if not it.n or len(set(it.scores)) < 2 or not (rating or len(set(it.scores)) < MIN_DISTINCT_TO_FIT):
            continue
        y, s, _ = it.arrays()
        fitted = {m: predictions[(it.key, m)] for m in ("isotonic", "platt") if (it.key, m) in predictions}
        table = value_table(s, y, fitted=fitted, naive=naive_rating_reading if rating else None)
        meanings[it.key] = table
        name = f"values_{_slug(it.key)}"
        write_table(table, out_dir / "metrics" / name, f"What each value of {it.scorer} means ({it.level}, n={it.n})")
        fig = plots.value_figure(table, [*fitted, "naive"] if rating else list(fitted), f"{it.key} (n={it.n})")
        figures.append(plots.save(fig, out_dir / "figures" / f"{name}.png"))
    return {"rows": rows, "figures": figures, "predictions": predictions, "values": meanings}


VARYING_MIN_VALUES = 3
VARYING_MIN_SHARE = 0.05


def rating_use(ratings: Sequence[float]) -> str:
    """ "varying" only if at least 3 rating values each hold at least 5% of the items; else "flat",
    whatever an interval says (a judge that writes two values is a threshold, not a scale)."""
    counts = Counter(ratings)
    common = sorted((v for v, n in counts.items() if n / len(ratings) >= VARYING_MIN_SHARE), key=float)
    shares = " ".join(f"{int(v) if float(v).is_integer() else v}:{counts[v] / len(ratings):.0%}" for v in common)
    kind = "varying" if len(common) >= VARYING_MIN_VALUES else "flat"
    return f"{kind} ({shares})"


def is_rating(scorer: str) -> bool:
    """A judge's 1-10 rating (or the least rating over fields), not its log-prob expectation."""
    return ScorerId.parse(scorer).is_written_rating


def _positions(run: RunDir, rows: Sequence[Mapping[str, Any]]) -> list[float] | None:
    """Position (0 = first, 1 = last) of each judged field's top-level key in the output as shown."""
    from construct_eval.data.runs import RunError
    from construct_eval.fields import parse_path

    try:
        outputs = {r["id"]: r.get("output") for r in run.outputs() if "output" in r}
    except RunError:  # documents referred to by id whose dataset is not available here
        return None
    out: list[float] = []
    for r in rows:
        output = outputs.get(r["doc_id"])
        if not isinstance(output, Mapping) or r["field"] == DOCUMENT:
            return None
        variant = PromptVariant.parse(r.get("variant") or "")
        keys = list(variant.reorder(output))
        top = parse_path(r["field"])[0]
        keys = variant.place_target(keys, top) if isinstance(top, str) else keys
        if top not in keys or len(keys) < 2:
            return None
        out.append(keys.index(top) / (len(keys) - 1))
    return out


def bias_run(
    run: RunDir,
    *,
    mode: str = "doc",
    variants: Sequence[str] | None = None,
    out_dir: Path | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    value: str = "rating",
) -> dict[str, Any]:
    """Positional-bias tables and figures from the judgments of ``run`` under several variants.

    ``value="expected_rating"`` tests the log-prob twin instead of the verbalized rating: a
    judge that writes the same rating under every order can still move its probabilities.
    """
    from construct_eval.analysis import bias, plots

    out_dir = out_dir or run.path
    judgments = [r for r in run.iter_rows("judgments") if r.get("mode") == mode]
    ids = [PromptVariant.parse(v).id for v in variants] if variants else None
    paired = bias.paired_ratings(judgments, mode=mode, variants=ids, value=value)
    tag = mode if value == "rating" else f"{mode}_{value}"
    labels = load_labels(run)
    wrong: dict[tuple[str, str], bool] = {}
    for doc_id, field_name in paired.items:
        lab = labels.get(doc_id)
        if lab is None:
            continue
        w = lab.wrong if field_name == DOCUMENT else judged_field_errors(lab, [field_name])[field_name]
        if w is not None:
            wrong[(doc_id, field_name)] = w
    pairs = bias.pairwise_tests(paired, wrong=wrong or None, base=paired.variants[0], n_boot=n_boot, seed=seed)
    # named by mode and value, as the Friedman and debiasing tables are: the rating's and the
    # expected rating's shifts are two tables, not one overwriting the other
    write_table(
        pairs,
        out_dir / "metrics" / f"bias_pairs_{tag}",
        f"{value} shifts against {paired.variants[0]} ({mode})",
    )
    report: dict[str, Any] = {"paired": paired, "pairs": pairs, "figures": []}
    if len(paired.variants) >= 3:
        report["friedman"] = bias.friedman_test(paired)
        write_table([report["friedman"]], out_dir / "metrics" / f"bias_friedman_{tag}", "Friedman test")
    if wrong:
        report["debiasing"] = bias.debiasing_report(paired, wrong)
        write_table(report["debiasing"], out_dir / "metrics" / f"bias_debiasing_{tag}", "Mean over K orders")
    complete = set(paired.items)
    rows = [
        r
        for r in judgments
        if (r["doc_id"], r["field"]) in complete and r.get("status") == "ok" and r.get(value) is not None
    ]
    positions = _positions(run, rows) if mode != "doc" else None
    if positions is not None and len(set(positions)) > 1:
        try:
            effect = bias.position_effect(
                [r[value] for r in rows], positions, [(r["doc_id"], r["field"]) for r in rows], seed=seed
            )
            report["position"] = effect
            write_table([effect.__dict__], out_dir / "metrics" / f"bias_position_{tag}", "Rating vs position")
        except ValueError:
            pass
    means = paired.ratings.mean(axis=0) if len(paired.items) else np.zeros(len(paired.variants))
    fig = plots.variant_means_figure(paired.variants, means, [r.get("mean_shift") for r in pairs], f"{mode} {value}")
    report["figures"].append(plots.save(fig, out_dir / "figures" / f"bias_{tag}.png"))
    return report


def judge_overview(run: RunDir, *, n_boot: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """What a judge did in a run, one row per mode and prompt variant: the model-comparison view.

    Seconds per call (median over calls not served from the cache), the unscored share and
    its commonest reason, the rating distribution and the share of the commonest rating, and,
    where labels exist, the AUROC (with a document-bootstrap interval) of the rating and of the
    expected rating for finding wrong items at the mode's level.
    """
    labels = load_labels(run)
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for r in run.iter_rows("judgments"):
        groups[(r["mode"], r.get("variant") or PromptVariant().id)].append(r)
    out = []
    for (mode, variant), rows in sorted(groups.items()):
        calls = {r["call_id"]: r for r in rows}
        fresh = [float(r["latency_s"]) for r in calls.values() if not r.get("cached") and r.get("latency_s")]
        ratings = Counter(int(r["rating"]) for r in rows if r["status"] == "ok")
        reasons = Counter(r.get("reason") or "?" for r in rows if r["status"] != "ok")
        row: dict[str, Any] = {
            "run": run.path.name,
            "model": ",".join(sorted({str(r.get("model")) for r in rows})),
            "mode": mode,
            "variant": variant,
            "constrained": ",".join(sorted({str(r.get("constrained") or "none") for r in rows})),
            "judgments": len(rows),
            "calls": len(calls),
            "s_per_call": round(float(np.median(fresh)), 2) if fresh else float("nan"),
            "unscored_rate": round(sum(reasons.values()) / len(rows), 4),
            "top_unscored_reason": reasons.most_common(1)[0][0] if reasons else "",
            "ratings": " ".join(f"{v}:{ratings[v]}" for v in sorted(ratings)),
            "modal_rating_share": round(max(ratings.values()) / sum(ratings.values()), 3) if ratings else float("nan"),
        }
        if labels:
            level = "document" if mode == "doc" else "field"
            items = [i for i in _judge_items(rows, labels) if i.level == level]
            for it, name in zip(items[:2], ("rating", "expected"), strict=False):
                det = detection_table([it], n_boot=n_boot, seed=seed)[0]
                row[f"auroc_{name}"] = det.get("auroc", float("nan"))
                row[f"auroc_{name}_low"] = det.get("auroc_low", float("nan"))
                row[f"auroc_{name}_high"] = det.get("auroc_high", float("nan"))
                row[f"n_{name}"] = it.n
                row[f"wrong_{name}"] = int(sum(it.wrong))
        out.append(row)
    return out


def find_runs(root: str | Path) -> list[RunDir]:
    """Run folders under ``root`` that have labels and something to evaluate (judgments or scores)."""
    found = []
    for path in sorted(Path(root).glob("*/")):
        if (path / "labels.jsonl").exists() and (
            (path / "judgments.jsonl").exists() or (path / "scores.jsonl").exists()
        ):
            found.append(RunDir(path, create=False))
    return found


def compare_scorers(
    a: ScoredItems, b: ScoredItems, *, n_boot: int = 1000, seed: int = 0, metric: str = "auroc"
) -> dict[str, Any]:
    """Paired difference of two scorers' AUROC (or AUPRC) on the items both scored (same level)."""
    from construct_eval.analysis.metrics import compare_scores

    if a.level != b.level:
        raise ValueError(f"cannot pair a {a.level}-level scorer with a {b.level}-level one")
    index_b = {(d, f): i for i, (d, f) in enumerate(zip(b.doc_ids, b.fields, strict=True))}
    pairs = [
        (i, index_b[(d, f)]) for i, (d, f) in enumerate(zip(a.doc_ids, a.fields, strict=True)) if (d, f) in index_b
    ]
    row: dict[str, Any] = {"level": a.level, "a": a.scorer, "b": b.scorer, "n": len(pairs)}
    if not pairs:
        return row
    ia, ib = map(list, zip(*pairs, strict=True))
    y = np.asarray(a.wrong, dtype=float)[ia]
    if not 0 < y.sum() < len(y):
        row["note"] = "one class only"
        return row
    cmp = compare_scores(
        y,
        np.asarray(a.scores)[ia],
        np.asarray(b.scores)[ib],
        np.asarray(a.doc_ids)[ia],
        metric=metric,
        n_boot=n_boot,
        seed=seed,
    )
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
    reference: str,
    *,
    level: str,
    scorers: Sequence[str] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Each scorer against ``reference`` on the items both scored: paired AUROC difference with a
    document-bootstrap interval, its p-value and the Holm-corrected p over the table, and the
    ranking the interval allows ("higher", "lower" or "none: the interval holds 0")."""
    from construct_eval.analysis.bias import holm

    by_name = {i.scorer: i for i in items if i.level == level}
    if reference not in by_name:
        raise ValueError(f"no {level}-level scorer {reference!r}; have {sorted(by_name)}")
    names = [n for n in (scorers or sorted(by_name)) if n != reference]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"no {level}-level scorer(s) {unknown}; have {sorted(by_name)}")
    rows = [compare_scorers(by_name[n], by_name[reference], n_boot=n_boot, seed=seed) for n in names]
    tested = [r for r in rows if "p" in r]
    for r, p_adj in zip(tested, holm([r["p"] for r in tested]), strict=True):
        r["p_holm"] = p_adj
        if r["low"] > 0:
            r["ranking"] = f"{r['a']} higher"
        elif r["high"] < 0:
            r["ranking"] = f"{r['a']} lower"
        else:
            r["ranking"] = "none: the interval holds 0"
    return rows
