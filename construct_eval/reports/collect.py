"""Join a run's scores with its labels: every scorer as :class:`ScoredItems`.

One trust score per document or per field (higher = more trustworthy), the true label, the
document it belongs to, and what the scorer cost. Sources:

- ``judgments.jsonl`` (the LLM judge, each stored reply read by today's parser:
  :mod:`construct_eval.judging.reread`): per mode and prompt variant, the verbalized rating
  (``judge-doc``, ``judge-field``, ``judge-joint``) and its log-prob twin (``...:expected``);
  field-level judges also give a document score, the minimum over the document's fields
  (``...:min``);
- ``scores.jsonl`` (other scorers such as ``token_logprob``), at their own granularity;
- the field prior (``field-prior-uses-labels``), a baseline fitted on the labels;
- the plausibility checks (``plausibility``, :mod:`construct_eval.scorers.plausibility`): no
  labels, no calls, written by :func:`label_run` into ``plausibility.jsonl``.

Items a scorer could not score (unscored replies, outputs without log-probs) and items
without a label are counted and left out of the metrics, never filled in with a number.

One item, one value: when a file holds two rows for the same item of the same scorer (a
judgment made twice, say under two endpoint identities of one server), the latest row wins,
the earlier ones are dropped, and a :class:`DuplicateRowsWarning` says how many; the tables
carry the count (``duplicates_dropped``). Two copies never count as two items, which would
make every interval too narrow.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from construct_eval.data.labels import (
    NULL_LIKE_STRINGS,
    DocumentLabels,
    LabelRules,
    judged_field_errors,
    label_rows,
    label_summary,
    parsed_path,
)
from construct_eval.data.runs import RunDir
from construct_eval.fields import DOCUMENT
from construct_eval.judging.prompts import PromptVariant
from construct_eval.judging.reread import judgment_rows
from construct_eval.kinds import JudgeMode, Level
from construct_eval.parsing import is_request_failure
from construct_eval.reports.run_memo import memo_by_run_files
from construct_eval.scorer_registry import FIELD_PRIOR as _FIELD_PRIOR_SPEC
from construct_eval.scorer_registry import checked
from construct_eval.scorers.plausibility import FILE as PLAUSIBILITY_FILE
from construct_eval.scorers.plausibility import plausibility_items, plausibility_rows
from construct_eval.types import ScorerId, elicitation_of


class DuplicateRowsWarning(UserWarning):
    """Rows for the same item and scorer were found more than once; the latest was kept."""


def latest_per_item(rows: Iterable[Mapping[str, Any]], item_of: Any, what: str) -> tuple[list[Mapping[str, Any]], int]:
    """The last row per item (``item_of(row)``), in first-seen order, and how many were dropped.
    A row whose request failed, replaced by the item's later row (the call made again on a
    resume), is not counted as dropped: the retry is how a failed call is meant to end."""
    kept: dict[Any, Mapping[str, Any]] = {}
    dropped = 0
    for r in rows:
        k = item_of(r)
        if k in kept and not is_request_failure(kept[k].get("reason")):
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
    """One scorer's labelled items at one level: its identity, parsed once where the rows are read
    and carried as the type (a name given as a string is parsed here)."""

    scorer: ScorerId
    level: Level
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
    kinds: np.ndarray | None = field(default=None, repr=False, compare=False)
    """Each item's output kind, for field-level items once read from the outputs
    (:func:`~construct_eval.reports.output_kinds.attach_kinds`): ``"value"`` where the output
    filled the field, ``"null or empty"`` where it left it null or empty
    (:func:`construct_eval.fields.is_empty`), ``""`` where its document has no output; None until read."""
    _columns: Any = field(default=None, init=False, repr=False, compare=False)  # see columns()
    _index: Any = field(default=None, init=False, repr=False, compare=False)  # see item_index()

    def __post_init__(self) -> None:
        if not isinstance(self.scorer, ScorerId):
            self.scorer = ScorerId.parse(self.scorer)
        self.level = Level(self.level)
        if self.level is Level.DOCUMENT:
            self.granularity = None
        elif self.granularity is None:  # the scorer's own, "top" when a field judge's name leaves it out
            self.granularity = self.scorer.granularity or "top"
        elif self.scorer.granularity not in (None, self.granularity):
            raise ValueError(
                f"{self.scorer}: items of granularity {self.granularity!r} under a {self.scorer.granularity!r} name"
            )

    @property
    def n(self) -> int:
        return len(self.scores)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.asarray(self.wrong, dtype=float), np.asarray(self.scores, dtype=float), np.asarray(self.doc_ids)

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(wrong, score, document): :meth:`arrays` with each document as its code 0..n-1 in the
        sorted order of the ids (what every table's group index makes of the ids, and of any
        subset of them), made once per item set instead of once per table. Read-only."""
        key = self._columns_key()
        if self._columns is None or self._columns[0] != key:
            from construct_eval.stats.metrics import group_index

            y, s, ids = self.arrays()
            arrays = (y, s, group_index(ids))
            for a in arrays:
                a.flags.writeable = False
            self._columns = (key, arrays)
        return self._columns[1]

    def _columns_key(self) -> tuple[int, int, int, int]:
        return (len(self.scores), id(self.wrong), id(self.scores), id(self.doc_ids))

    def set_columns(self, wrong: np.ndarray, score: np.ndarray, groups: np.ndarray) -> None:
        """Give :meth:`columns` its arrays, made elsewhere from the same items (the run memo
        makes them from the codes it keeps). Read-only from here on."""
        if not len(wrong) == len(score) == len(groups) == len(self.scores):
            raise ValueError("columns must have one entry per item")
        for a in (wrong, score, groups):
            a.flags.writeable = False
        self._columns = (self._columns_key(), (wrong, score, groups))

    def adopt_columns(self, other: ScoredItems) -> None:
        """Share ``other``'s :meth:`columns` arrays, if made: ``self`` holds the same items (a copy)."""
        if other._columns is not None and other._columns[0] == other._columns_key():
            self._columns = (self._columns_key(), other._columns[1])

    def subset(self, keep: Any) -> ScoredItems:
        """The items at positions ``keep`` (in that order), with their columns and output kinds:
        the same scorer on fewer items, each document keeping its group."""
        from construct_eval.stats.metrics import group_index

        keep = np.asarray(keep, dtype=int)
        part = replace(
            self,
            doc_ids=[self.doc_ids[i] for i in keep], fields=[self.fields[i] for i in keep],
            scores=[self.scores[i] for i in keep], wrong=[self.wrong[i] for i in keep],
            kinds=None if self.kinds is None else self.kinds[keep],
        )  # fmt: skip
        y, s, g = self.columns()
        part.set_columns(y[keep], s[keep], group_index(g[keep]))  # the kept documents' codes, in the ids' order
        return part

    def read_kinds(self) -> np.ndarray:
        """:attr:`kinds`, or a clear error where they were not read (``output_kinds.attach_kinds``)."""
        if self.kinds is None:
            raise ValueError(f"{self.key}: its items' output kinds were not read (output_kinds.attach_kinds)")
        return self.kinds

    def of_kind(self, kind: str) -> ScoredItems:
        """The items the output left as ``kind`` (``"value"`` or ``"null or empty"``, :attr:`kinds`)."""
        return self.subset(np.flatnonzero(self.read_kinds() == kind))

    def item_index(self) -> dict[tuple[str, str], int]:
        """Each (document, field) item's position, made once per item set (a paired table joins
        every scorer to the same reference). Not to be edited."""
        key = (len(self.doc_ids), id(self.doc_ids), id(self.fields))
        if self._index is None or self._index[0] != key:
            self._index = (key, {k: i for i, k in enumerate(zip(self.doc_ids, self.fields, strict=True))})
        return self._index[1]

    @property
    def key(self) -> str:
        """``level:name``, the scorer's key in the calibration predictions and its file names."""
        return f"{self.level.value}:{self.scorer.name}"


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
    run.replace(PLAUSIBILITY_FILE, plausibility_rows(plausibility_items(records, outputs, run.schema())))
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


class _Labels(dict):
    """A run's labels by document, remembering each field's verdict once asked: the scorers of a
    run score the same fields, and a verdict is the same whichever scorer asks."""

    def __init__(self, labels: Mapping[str, DocumentLabels]):
        super().__init__(labels)
        self.field_errors: dict[tuple[str, str], bool | None] = {}


_UNJUDGED: Any = object()


class _NoLabels(dict):
    """Labels of a run that has none yet (new outputs a policy decides on): every scored item is
    kept, its ``wrong`` marked -1 (unknown)."""


UNLABELLED: Mapping[str, DocumentLabels] = _NoLabels()
UNKNOWN = -1
"""``wrong`` of an item whose label is not known (:func:`collect_unlabelled`)."""


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
    if labels is UNLABELLED:
        items.doc_ids.append(doc_id)
        items.fields.append(name)
        items.scores.append(float(score))
        items.wrong.append(UNKNOWN)
        return
    doc_labels = labels.get(doc_id)
    if doc_labels is None:
        items.unlabelled += 1
        return
    if name == DOCUMENT:
        wrong: bool | None = doc_labels.wrong
    else:
        known = getattr(labels, "field_errors", None)  # _Labels: each (document, field) judged once
        if known is None:
            wrong = judged_field_errors(doc_labels, [name])[name]
        else:
            wrong = known.get((doc_id, name), _UNJUDGED)
            if wrong is _UNJUDGED:
                wrong = known[(doc_id, name)] = judged_field_errors(doc_labels, [name])[name]
    if wrong is None:
        items.unlabelled += 1
        return
    items.doc_ids.append(doc_id)
    items.fields.append(name)
    items.scores.append(float(score))
    items.wrong.append(int(wrong))


def elicitations(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The elicitations of a run's judgments in order of first appearance: the first is the
    run's own, whose scorers keep their plain names; later ones are tagged (:func:`elicitation_tag`)."""
    seen: dict[str, None] = {}
    for r in rows:
        seen.setdefault(elicitation_of(r), None)
    return list(seen)


def elicitation_tag(constrained: str) -> str:
    """The tag a second elicitation adds to a judge scorer's variant: ``ask:free`` for no
    constraint, ``ask:<label>`` otherwise."""
    return "ask:free" if constrained == "none" else f"ask:{constrained}"


def _judge_items(rows: Iterable[Mapping[str, Any]], labels: Mapping[str, DocumentLabels]) -> list[ScoredItems]:
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    default = PromptVariant().id
    rows = list(rows)
    primary = (elicitations(rows) or ["none"])[0]
    for r in rows:
        # field ratings judged before granularity was recorded are the judge's default, top-level
        gran = "" if JudgeMode(r["mode"]) is JudgeMode.DOC else (r.get("granularity") or "top")
        variant = r.get("variant") or default
        asked = elicitation_of(r)
        if asked != primary:  # the same prompt asked another way is another scorer
            variant += "|" + elicitation_tag(asked)
        groups[(r["mode"], variant, gran)].append(r)
    orders: dict[str, set[str]] = defaultdict(set)  # per mode, the prompt orders of the run's own elicitation
    for mode, variant, _ in groups:
        if "|ask:" not in variant:
            orders[mode].add(variant)
    out: list[ScoredItems] = []
    for (mode, variant, gran), all_rows in sorted(groups.items()):
        named = len(orders[mode]) > 1 or variant != default  # a lone default order keeps the plain name
        sid = ScorerId.judge(
            mode, granularity=gran if gran not in ("", "top") else None, variant=variant if named else None
        )
        group, dropped = latest_per_item(all_rows, lambda r: (r["id"], r["field"]), f"judgments of {sid}")
        calls = {r["call_id"]: r for r in group}
        cost = {
            "calls": len(calls),
            "tokens": sum(
                int(r.get("prompt_tokens") or 0) + int(r.get("completion_tokens") or 0) for r in calls.values()
            ),
            "seconds": sum(float(r.get("latency_s") or 0.0) for r in calls.values()),
        }
        level = sid.level
        for reading, key in ((None, "rating"), ("expected", "expected_rating")):
            items = ScoredItems(sid.replace(value=reading), level, duplicates_dropped=dropped, **cost)
            for r in group:
                value = r.get(key) if r.get("status") == "ok" else None
                _add(items, labels, r["id"], r["field"], value, failed=r.get("reason") == "request_failed")
            if items.n or reading is None:
                out.append(items)
            if level is Level.FIELD:  # document score: the least trusted field
                per_doc: dict[str, list[float | None]] = defaultdict(list)
                for r in group:
                    per_doc[r["id"]].append(r.get(key) if r.get("status") == "ok" else None)
                doc_sid = sid.replace(value=reading, aggregate="min")
                doc_items = ScoredItems(doc_sid, Level.DOCUMENT, duplicates_dropped=dropped, **cost)
                for doc_id, values in per_doc.items():
                    scored = [v for v in values if v is not None]
                    _add(doc_items, labels, doc_id, DOCUMENT, min(scored) if scored else None)
                if doc_items.n or reading is None:
                    out.append(doc_items)
    return out


def _score_items(rows: Iterable[Mapping[str, Any]], labels: Mapping[str, DocumentLabels]) -> list[ScoredItems]:
    groups: dict[tuple[ScorerId, Level], list[Mapping[str, Any]]] = defaultdict(list)
    # a scorer's cost is written once per document, on its document row(s): "consistency:min"
    # and "consistency:mean" carry the cost of the samples that also make "consistency" per field
    doc_cost: dict[tuple[str, str], tuple[int, int, float]] = {}
    parsed: dict[tuple[str, str | None], ScorerId] = {}  # each name parsed once, not once per row
    for r in rows:
        level = Level.DOCUMENT if r["field"] == DOCUMENT else Level.FIELD
        gran = None if level is Level.DOCUMENT else r.get("granularity", "leaf")
        sid = parsed.get((r["scorer"], gran))
        if sid is None:
            sid = parsed[(r["scorer"], gran)] = checked(r["scorer"]).replace(granularity=gran)
        groups[(sid, level)].append(r)
        if level is Level.DOCUMENT:
            doc_cost[(sid.family, r["id"])] = _cost(r)
    out = []
    for (sid, level), all_rows in sorted(groups.items()):
        group, dropped = latest_per_item(all_rows, lambda r: (r["id"], r["field"]), f"scores of {sid}")
        if level is Level.DOCUMENT:
            costs = [_cost(r) for r in group]
        else:
            costs = [doc_cost.get((sid.family, doc_id), (0, 0, 0.0)) for doc_id in {r["id"] for r in group}]
        items = ScoredItems(
            sid,
            level,
            calls=sum(c[0] for c in costs),
            tokens=sum(c[1] for c in costs),
            seconds=sum(c[2] for c in costs),
            duplicates_dropped=dropped,
        )
        for r in group:
            _add(items, labels, r["id"], r["field"], r.get("score"))
        out.append(items)
    return out


def items_from_rows(rows: Iterable[Mapping[str, Any]], labels: Mapping[str, DocumentLabels]) -> list[ScoredItems]:
    """Score rows (the ``scores.jsonl`` format), wherever they were made, joined to a run's labels
    as :func:`collect` joins the run's own: one :class:`ScoredItems` per scorer and level."""
    return _score_items(rows, labels)


def _cost(row: Mapping[str, Any]) -> tuple[int, int, float]:
    return int(row.get("calls") or 0), int(row.get("tokens") or 0), float(row.get("seconds") or 0.0)


@memo_by_run_files  # the same files, collected once per process (evaluate's figure index asks again)
def collect(run: RunDir, labels_name: str = "labels") -> list[ScoredItems]:
    """Every scorer of the run, as labelled items. Needs labels.jsonl (``construct-eval label``);
    ``labels_name`` reads another labels file (:data:`ALT_LABELS`: the other reading)."""
    labels = _Labels(load_labels(run, labels_name))
    if not labels:
        raise ValueError(f"{run.path}: no labels.jsonl; run `construct-eval label --run {run.path}` first")
    items = _judge_items(judgment_rows(run), labels)
    for name in score_files():  # scores.jsonl, plausibility.jsonl (made by label_run), any a scorer declares
        items += _score_items(run.iter_rows(name), labels)
    items = [i for i in items if i.n or i.unscored]
    for gran in sorted({i.granularity for i in items if i.level == "field" and i.granularity in ("leaf", "top")}):
        items.append(field_prior_items(labels, gran))
    keys: dict[tuple[str, str | None], dict[tuple[str, str], tuple[str, int]]] = {}
    for it in items:
        if (it.level, it.granularity) not in keys:
            keys[(it.level, it.granularity)] = _labelled_keys(labels, it.level, it.granularity)
        it.left_out = left_out(it, labels, keys[(it.level, it.granularity)])
    return items


def collect_unlabelled(run: RunDir) -> list[ScoredItems]:
    """Every scorer of a run that has no labels (new outputs), as items whose ``wrong`` is
    :data:`UNKNOWN`; the scores are read as :func:`collect` reads them."""
    items = _judge_items(judgment_rows(run), UNLABELLED)
    for name in score_files():
        items += _score_items(run.iter_rows(name), UNLABELLED)
    return [i for i in items if i.n or i.unscored]


def score_files() -> list[str]:
    """The run files score rows are read from: ``scores``, then every other file a registered
    scorer declares (:attr:`ScorerSpec.rows_in`; judgments are read as judgments, labels make the
    field prior)."""
    from construct_eval.scorer_registry import specs

    declared = {s.rows_in for s in specs()} | {PLAUSIBILITY_FILE}
    return ["scores", *sorted(declared - {"scores", "judgments", "labels"})]


FIELD_PRIOR = _FIELD_PRIOR_SPEC.family
"""The baseline that knows only which field an item is: its error rate in other documents."""


@lru_cache(maxsize=1 << 16)
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
    ``granularity`` ("leaf" paths or "top"-level keys), labelled as every scorer's items are (a
    top-level field is wrong when a label under it is, a value the output left out included); a
    field unseen in the training folds gets the training folds' overall rate.
    """
    per_doc: dict[str, dict[str, bool]] = {}
    for doc_id, lab in labels.items():
        if lab.wrong is None:
            continue
        wrong_at: dict[str, bool] = {}
        present: set[str] = set()
        for f in lab.fields:
            if not f.path or (granularity == "leaf" and not f.in_output):
                continue
            name = f.path if granularity == "leaf" else str(parsed_path(f.path)[0])
            wrong_at[name] = wrong_at.get(name, False) or f.wrong
            if f.in_output:
                present.add(name)
        # a top-level field is wrong when any label under it is, one the output left out included
        # (a dropped list item, a missing key), as every other scorer's label reads it
        # (judged_field_errors); it is an item when the output has something of it
        fields = {name: w for name, w in wrong_at.items() if name in present}
        if fields:
            per_doc[doc_id] = fields
    docs = sorted(per_doc)
    rng = np.random.default_rng(seed)
    fold = dict(zip(docs, rng.permutation(len(docs)) % max(1, min(n_splits, len(docs))), strict=True))
    items = ScoredItems(ScorerId(FIELD_PRIOR, granularity=granularity), Level.FIELD)
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
            path = f.path if granularity == "leaf" else str(parsed_path(f.path)[0]) if f.path else f.path
            why = "not in the output (a dropped item or missing field)" if not f.in_output else "not scored"
            old_why, n = keys.get((doc_id, path), (why, 0))
            weight = 1 if granularity == "leaf" or n == 0 else 0
            keys[(doc_id, path)] = ("not scored" if "not scored" in (old_why, why) else why, n + weight)
    return keys


def left_out(
    it: ScoredItems,
    labels: Mapping[str, DocumentLabels],
    keys: Mapping[tuple[str, str], tuple[str, int]] | None = None,
) -> dict[str, int]:
    """Labelled items of the scorer's level that it has no row for, counted by reason.

    A leaf scorer cannot score a list item the output dropped (it has no leaf in the output),
    and a scorer run on some documents only has no rows for the rest: both shrink the items an
    AUROC is computed on, so every detection row says how many and why. Item-granularity
    scores are not checked (their item set is not the labels'). ``keys``: the labelled items of
    the scorer's level and granularity (:func:`_labelled_keys`), when already made."""
    if it.level == "field" and it.granularity not in ("leaf", "top"):
        return {}
    docs_seen = {d for d, _ in it.seen}
    out: Counter[str] = Counter()
    if keys is None:
        keys = _labelled_keys(labels, it.level, it.granularity)
    for (doc_id, name), (why, n) in keys.items():
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


def find_runs(root: str | Path) -> list[RunDir]:
    """Run folders under ``root`` that have labels and something to evaluate (judgments or scores)."""
    found = []
    for path in sorted(Path(root).glob("*/")):
        if (path / "labels.jsonl").exists() and (
            (path / "judgments.jsonl").exists() or (path / "scores.jsonl").exists()
        ):
            found.append(RunDir(path, create=False))
    return found
