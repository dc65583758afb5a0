"""The walk over a ground truth and an output: sections, lists of objects paired by the assignment
that maximises matched fields, every leaf labelled; :func:`label_output` and :func:`label_rows`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from construct_eval.data.labels.records import DocumentLabels, FieldLabel, LabelReason, LabelRules, output_state
from construct_eval.data.labels.values import compare_values, is_null
from construct_eval.fields import MISSING, FieldPath, format_path, get_at, resolve_schema, schema_at


def _is_object_list(v: Any) -> bool:
    return isinstance(v, list) and any(isinstance(x, Mapping) for x in v)


def leaf_paths(value: Any, prefix: FieldPath) -> list[FieldPath]:
    """Leaves below ``prefix`` in one document (the prefix itself for a scalar or scalar list)."""
    if isinstance(value, Mapping) and value:
        return [p for k, v in value.items() for p in leaf_paths(v, (*prefix, k))]
    if _is_object_list(value):
        return [p for i, v in enumerate(value) for p in leaf_paths(v, (*prefix, i))]
    return [prefix]


class _Labeller:
    def __init__(self, schema: Mapping[str, Any] | None, rules: LabelRules):
        self.schema = dict(schema or {})
        self.rules = rules
        self.out: list[FieldLabel] = []

    def _schema_kind(self, t_path: FieldPath) -> str | None:
        if not self.schema:
            return None
        try:
            node = resolve_schema(self.schema, schema_at(self.schema, t_path))
        except (KeyError, IndexError, TypeError, ValueError):
            return None
        kind = node.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), None)
        if kind is None and "properties" in node:
            kind = "object"
        if kind == "array":
            items = resolve_schema(self.schema, node.get("items") or {})
            if items.get("type") == "object" or "properties" in items:
                return "object_list"
        return kind

    def all_wrong(
        self,
        value: Any,
        t_path: FieldPath | None,
        p_path: FieldPath,
        reason: str,
        *,
        side: str,
        in_output: bool = False,
    ) -> None:
        """Every leaf of ``value`` (from the truth or the output side) is wrong.

        Truth-side leaves point at ``p_path`` (the nearest output path); ``in_output`` says
        whether the output has that path (a null section) or not (a dropped list item).
        """
        if side == "truth":
            assert t_path is not None
            for leaf in leaf_paths(value, t_path):
                self.out.append(FieldLabel(format_path(p_path), format_path(leaf), True, reason, in_output=in_output))
            return
        tp = None if t_path is None else format_path(t_path)
        for leaf in leaf_paths(value, p_path):
            self.out.append(FieldLabel(format_path(leaf), tp, True, reason))

    def walk(self, truth: Any, pred: Any, t_path: FieldPath, p_path: FieldPath) -> None:
        kind = self._schema_kind(t_path)
        t_obj, p_obj = isinstance(truth, Mapping), isinstance(pred, Mapping)
        if t_obj or p_obj or (kind == "object" and not (is_null(truth, self.rules) and is_null(pred, self.rules))):
            self._walk_object(truth, pred, t_path, p_path)
            return
        objects = _is_object_list(truth) or _is_object_list(pred) or kind == "object_list"
        if objects and isinstance(truth, list) and isinstance(pred, list) and (truth or pred):
            self._walk_object_list(truth, pred, t_path, p_path)
            return
        key = next((part for part in reversed(t_path) if isinstance(part, str)), None)
        ok, reason = compare_values(truth, pred, key, self.rules)
        if not ok and (_is_object_list(truth) or _is_object_list(pred)):
            # a list of objects against null (or a scalar): every leaf on the non-null side is wrong
            if _is_object_list(truth):
                why = LabelReason.MISSING_SECTION if pred is None or pred is MISSING else reason
                self.all_wrong(truth, t_path, p_path, why, side="truth", in_output=pred is not MISSING)
            if _is_object_list(pred):
                self.all_wrong(
                    pred, t_path if truth is not MISSING else None, p_path, LabelReason.INVENTED_SECTION, side="pred"
                )
            return
        self.out.append(
            FieldLabel(
                format_path(p_path),
                format_path(t_path) if truth is not MISSING else None,
                not ok,
                reason,
                in_output=pred is not MISSING or not t_path,
            )
        )

    def _walk_object(self, truth: Any, pred: Any, t_path: FieldPath, p_path: FieldPath) -> None:
        t_map = truth if isinstance(truth, Mapping) else None
        p_map = pred if isinstance(pred, Mapping) else None
        if t_map is None and p_map is None:
            # null (or a scalar) where an object is expected, on both sides
            ok, reason = compare_values(truth, pred, None, self.rules)
            self.out.append(FieldLabel(format_path(p_path), format_path(t_path), not ok, reason))
            return
        if p_map is None:
            reason = LabelReason.MISSING_SECTION if is_null(pred, self.rules) else LabelReason.TYPE_MISMATCH
            if t_map:
                self.all_wrong(t_map, t_path, p_path, reason, side="truth", in_output=pred is not MISSING)
            else:
                self.out.append(FieldLabel(format_path(p_path), format_path(t_path), True, reason))
            return
        if t_map is None:
            reason = LabelReason.INVENTED_SECTION if is_null(truth, self.rules) else LabelReason.TYPE_MISMATCH
            if p_map:
                self.all_wrong(p_map, t_path, p_path, reason, side="pred")
            else:
                self.out.append(FieldLabel(format_path(p_path), format_path(t_path), True, reason))
            return
        keys: list[str] = []
        if self.schema:
            try:
                node = resolve_schema(self.schema, schema_at(self.schema, t_path))
                keys.extend(node.get("properties", {}))
            except (KeyError, IndexError, TypeError, ValueError):
                pass
        for k in (*t_map, *p_map):
            if k not in keys:
                keys.append(k)
        for k in keys:
            self.walk(t_map.get(k, MISSING), p_map.get(k, MISSING), (*t_path, k), (*p_path, k))

    def _walk_object_list(self, truth: list[Any], pred: list[Any], t_path: FieldPath, p_path: FieldPath) -> None:
        pairs = pair_items(truth, pred, self.rules, t_path, self.schema)
        paired_t = {j for _, j in pairs}
        paired_p = {i for i, _ in pairs}
        for i, j in pairs:
            self.walk(truth[j], pred[i], (*t_path, j), (*p_path, i))
        for j, item in enumerate(truth):
            if j not in paired_t:
                self.all_wrong(item, (*t_path, j), p_path, LabelReason.MISSING_ITEM, side="truth")
        for i, item in enumerate(pred):
            if i not in paired_p:
                self.all_wrong(item, None, (*p_path, i), LabelReason.EXTRA_ITEM, side="pred")


def _matched_fields(truth: Any, pred: Any, rules: LabelRules, t_path: FieldPath, schema: Mapping[str, Any]) -> int:
    sub = _Labeller(schema, rules)
    sub.walk(truth, pred, t_path, t_path)
    return sum(not f.wrong for f in sub.out)


def pair_items(
    truth: Sequence[Any],
    pred: Sequence[Any],
    rules: LabelRules,
    t_path: FieldPath = (),
    schema: Mapping[str, Any] | None = None,
) -> list[tuple[int, int]]:
    """(output index, truth index) pairs maximising the number of matched leaf fields."""
    if not truth or not pred:
        return []
    score = np.zeros((len(pred), len(truth)))
    for i, p in enumerate(pred):
        for j, t in enumerate(truth):
            score[i, j] = _matched_fields(t, p, rules, (*t_path, j), schema or {})
    from scipy.optimize import linear_sum_assignment  # on first use: scipy.optimize costs 0.3 s to import

    rows, cols = linear_sum_assignment(score, maximize=True)
    return [(int(i), int(j)) for i, j in zip(rows, cols, strict=True)]


# --------------------------------------------------------------------------- public


def label_output(
    doc_id: str,
    truth: Any,
    output: Any,
    *,
    schema: Mapping[str, Any] | None = None,
    rules: LabelRules | None = None,
    parse_failed: bool = False,
    not_generated: str | None = None,
) -> DocumentLabels:
    """Per-field labels of one output against its ground truth.

    ``parse_failed``: the generator's reply was not valid JSON; the document is wrong and
    every ground-truth leaf is wrong with reason ``unparsed_output`` (``unparsed_output_null_truth``
    where the truth is null, so rates on non-null truth can leave those out).
    ``not_generated``: there was no reply (the reason); no field labels, and the document is
    neither right nor wrong (``wrong`` is None).
    """
    rules = rules or LabelRules()
    if not_generated:
        return DocumentLabels(doc_id, [], rules_hash=rules.hash, note="not generated", not_generated=not_generated)
    if parse_failed:
        fields = [
            FieldLabel(
                format_path(p),
                format_path(p),
                True,
                LabelReason.UNPARSED_OUTPUT_NULL_TRUTH if get_at(truth, p) is None else LabelReason.UNPARSED_OUTPUT,
                in_output=False,
            )
            for p in leaf_paths(truth, ())
        ]
        return DocumentLabels(doc_id, fields, parse_failed=True, rules_hash=rules.hash, note="output did not parse")
    labeller = _Labeller(schema, rules)
    labeller.walk(rules.prepared(truth), rules.prepared(output), (), ())
    return DocumentLabels(doc_id, labeller.out, rules_hash=rules.hash)


def label_rows(
    records: Mapping[str, Mapping[str, Any]],
    outputs: Iterable[Mapping[str, Any]],
    *,
    rules: LabelRules,
    default_schema: Mapping[str, Any] | None = None,
) -> list[DocumentLabels]:
    """Labels for output rows of a run (``output`` or ``parse_error``) against their records."""
    out = []
    for row in outputs:
        doc_id = row["id"]
        rec = records.get(doc_id)
        if rec is None:
            raise ValueError(f"output for unknown document {doc_id!r}")
        if "ground_truth" not in rec:
            raise ValueError(f"document {doc_id!r} has no ground truth to label against")
        schema = rec.get("schema") or default_schema
        state = output_state(row)
        try:
            out.append(
                label_output(
                    doc_id,
                    rec["ground_truth"],
                    row.get("output"),
                    schema=schema,
                    rules=rules,
                    parse_failed=state == "unparsed",
                    not_generated=str(row.get("parse_error") or "not generated") if state == "not_generated" else None,
                )
            )
        except Exception as exc:
            raise ValueError(f"document {doc_id!r}: cannot label its output: {exc}") from exc
    return out
