"""True error labels: compare a generator's output with the ground truth, per field and per document.

The rules follow the insurance-claims scorer of the paper's benchmark (docs/design.md,
"Labels"): strings compared after lower-casing and dropping punctuation and spaces; enum
values lower-cased with runs of ``-``/space turned into ``_``; dates as exact strings;
numbers as ``float(a) == float(b)``; null vs null is right and exactly one null is wrong;
a missing section makes all its ground-truth fields wrong; lists of objects are paired by
the assignment that maximises matched fields (``scipy.optimize.linear_sum_assignment``);
lists of strings are compared as sets. Each rule is a field of :class:`LabelRules`, whose
dict form is written into the run so that a label always says which rules made it.

Labels are per *leaf* of the ground truth or the output. Each carries ``path``, the
nearest path that exists in the output (what a judge rated), and ``in_output``; a judged
field at any granularity is wrong when a label at or under it is wrong
(:func:`judged_field_errors`). A document is wrong when any of its labels is wrong; an
output that does not parse is a wrong document with every ground-truth field wrong.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime
from enum import StrEnum
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from scipy.optimize import linear_sum_assignment

from construct_eval.digest import sha256_hex
from construct_eval.fields import MISSING, FieldPath, format_path, get_at, parse_path, resolve_schema, schema_at

NULL_LIKE_STRINGS = ("", "null", "none", "n/a", "unknown")
"""The placeholder reading: strings generators write where the truth is null (PII: 325 of 979
"invented" values are "null" or "", 5 more "Unknown")."""

DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%m/%d/%Y", "%d.%m.%Y", "%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y")


@dataclass(frozen=True)
class LabelRules:
    """How two values are compared. Recorded in every labels file (``to_dict``)."""

    strings: Literal["normalized", "exact"] = "normalized"
    enum_fields: frozenset[str] = frozenset()  # key names whose values are enum labels
    dates: Literal["exact", "parsed"] = "exact"  # "parsed": equal calendar dates in any known format
    date_key_pattern: str = r"date"  # keys matching this (case-insensitive) hold dates
    numeric_tolerance: float = 0.0  # absolute; 0 means float(a) == float(b)
    string_lists: Literal["set", "ordered"] = "set"
    empty_list_is_null: bool = False
    # Strings that count as null (compared after strip and casefold). Empty by default: the
    # benchmark's insurance-claims scorer (docs/design.md, "Labels") compares null with null
    # only, so the string "null" is a value and, where the truth is null, an invented one.
    # NULL_LIKE_STRINGS is the other reading; tables where the two differ report both.
    null_like_strings: frozenset[str] = frozenset()
    # Dates inside a list of strings (financial entities' "Date": "last week", "Q3 2019") are
    # compared as the list's other strings are (``strings``), not by the ``dates`` rule, which
    # applies to single date fields; "date_rule" applies ``dates`` to them instead.
    dates_in_string_lists: Literal["as_strings", "date_rule"] = "as_strings"
    # Fields read as null where a sibling map gives their key a type: (types, type, fields).
    # Data-table analysis: ("column_types", "str", ("column_max", "column_min")), the benchmark's
    # scorer setting both bounds of every column typed "str" to null, on each side by that side's
    # own column_types, before it compares. None (the default) changes nothing.
    null_by_type: tuple[str, str, tuple[str, ...]] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> LabelRules:
        data = dict(data or {})
        unknown = set(data) - {f for f in cls.__dataclass_fields__}
        if unknown:
            raise ValueError(f"unknown label rule(s) {sorted(unknown)}")
        if "enum_fields" in data:
            data["enum_fields"] = frozenset(data["enum_fields"])
        if "null_like_strings" in data:
            data["null_like_strings"] = frozenset(str(x).strip().casefold() for x in data["null_like_strings"])
        if data.get("null_by_type") is not None:
            rule = data["null_by_type"]
            if not (isinstance(rule, Sequence) and len(rule) == 3 and not isinstance(rule, str)):
                raise ValueError(f"null_by_type must be [types_field, type, [fields...]], not {rule!r}")
            data["null_by_type"] = (str(rule[0]), str(rule[1]), tuple(str(f) for f in rule[2]))
        rules = cls(**data)
        if rules.dates_in_string_lists not in ("as_strings", "date_rule"):
            raise ValueError(
                f"dates_in_string_lists must be 'as_strings' or 'date_rule', not {rules.dates_in_string_lists!r}"
            )
        if rules.strings not in ("normalized", "exact"):
            raise ValueError(f"strings must be 'normalized' or 'exact', not {rules.strings!r}")
        if rules.dates not in ("exact", "parsed"):
            raise ValueError(f"dates must be 'exact' or 'parsed', not {rules.dates!r}")
        if rules.string_lists not in ("set", "ordered"):
            raise ValueError(f"string_lists must be 'set' or 'ordered', not {rules.string_lists!r}")
        if rules.numeric_tolerance < 0:
            raise ValueError("numeric_tolerance must be >= 0")
        return rules

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["enum_fields"] = sorted(self.enum_fields)
        d["null_like_strings"] = sorted(self.null_like_strings)
        if self.null_by_type is None:
            del d["null_by_type"]  # absent when unused: the rules (and hash) of every earlier label stay as they were
        else:
            d["null_by_type"] = [self.null_by_type[0], self.null_by_type[1], list(self.null_by_type[2])]
        return d

    def prepared(self, value: Any) -> Any:
        """``value`` as compared: fields nulled by ``null_by_type`` (a copy; the input is kept)."""
        if self.null_by_type is None or not isinstance(value, Mapping):
            return value
        types_field, kind, fields = self.null_by_type
        types = value.get(types_field)
        if not isinstance(types, Mapping):
            return value
        out = dict(value)
        for name in fields:
            bounds = out.get(name)
            if isinstance(bounds, Mapping):
                out[name] = {**bounds, **{k: None for k, t in types.items() if t == kind}}
        return out

    def with_null_like(self, strings: Iterable[str] = ()) -> LabelRules:
        """The same rules with another set of null-like strings (the other reading)."""
        return replace(self, null_like_strings=frozenset(s.strip().casefold() for s in strings))

    @property
    def hash(self) -> str:
        return sha256_hex(json.dumps(self.to_dict(), sort_keys=True))[:12]


class LabelReason(StrEnum):
    """Why a field is right or wrong (a label row's ``reason``)."""

    MATCH = "match"
    BOTH_NULL = "both_null"
    INVENTED_VALUE = "invented_value"
    MISSING_VALUE = "missing_value"
    MISSING_FIELD = "missing_field"
    TYPE_MISMATCH = "type_mismatch"
    DIFFERENT_VALUE = "different_value"
    DIFFERENT_NUMBER = "different_number"
    DIFFERENT_ENUM = "different_enum"
    DIFFERENT_DATE = "different_date"
    DIFFERENT_STRING = "different_string"
    DIFFERENT_LIST = "different_list"
    MISSING_SECTION = "missing_section"
    INVENTED_SECTION = "invented_section"
    EXTRA_ITEM = "extra_item"
    MISSING_ITEM = "missing_item"
    UNPARSED_OUTPUT = "unparsed_output"
    UNPARSED_OUTPUT_NULL_TRUTH = "unparsed_output_null_truth"


@dataclass(frozen=True)
class FieldLabel:
    path: str  # nearest path present in the output (what a judge rated)
    truth_path: str | None  # where the value sits in the ground truth (None: only in the output)
    wrong: bool
    reason: str  # a LabelReason: "match", "both_null", or why the field is wrong
    in_output: bool = True  # False: the value exists only in the ground truth (dropped item)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


OUTPUT_STATES = ("parsed", "unparsed", "not_generated")
"""What became of a document's generation request. ``parsed``: a JSON output to label.
``unparsed``: the model replied but not with valid JSON (truncated at the token cap,
malformed): the model's failure, a wrong document with every field wrong, as the benchmark
counts it. ``not_generated``: no reply to judge the model by (the request failed after every
retry, was refused, did not fit the context, or was skipped by a length policy): left out of
error rates and detection, with its count and reason shown."""

NOT_GENERATED_PREFIXES = ("request_failed", "not_sent", "skipped")


def output_state(row: Mapping[str, Any]) -> str:
    """The state of an output row (see :data:`OUTPUT_STATES`); rows written before states were
    recorded are read from their ``parse_error``: a failed request is not an unparsed reply."""
    state = row.get("state")
    if state in OUTPUT_STATES:
        return str(state)
    if "output" in row and not row.get("parse_error"):
        return "parsed"
    if str(row.get("parse_error") or "").startswith(NOT_GENERATED_PREFIXES):
        return "not_generated"
    return "unparsed"


@dataclass
class DocumentLabels:
    doc_id: str
    fields: list[FieldLabel]
    parse_failed: bool = False
    rules_hash: str = ""
    note: str | None = None
    not_generated: str | None = None  # why there is no output to label (then ``wrong`` is None)
    # what judged_field_errors reads: every path prefix of the labels, wrong or not; built on
    # first use and rebuilt when ``fields`` is replaced or grows (keyed by the list and its length)
    _error_index: tuple[int, int, dict[FieldPath, bool]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def wrong(self) -> bool | None:
        if self.not_generated:
            return None
        return self.parse_failed or any(f.wrong for f in self.fields)

    @property
    def n_wrong(self) -> int:
        return sum(f.wrong for f in self.fields)

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "id": self.doc_id,
            "wrong": self.wrong,
            "n_fields": len(self.fields),
            "n_wrong": self.n_wrong,
            "parse_failed": self.parse_failed,
            "rules": self.rules_hash,
            "fields": [f.to_dict() for f in self.fields],
        }
        if self.note:
            row["note"] = self.note
        if self.not_generated:
            row["not_generated"] = self.not_generated
        return row

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> DocumentLabels:
        return cls(
            doc_id=row["id"],
            fields=[FieldLabel(**f) for f in row.get("fields", [])],
            parse_failed=bool(row.get("parse_failed")),
            rules_hash=row.get("rules", ""),
            note=row.get("note"),
            not_generated=row.get("not_generated"),
        )


# --------------------------------------------------------------------------- scalars

_NON_ALNUM = re.compile(r"[\W_]+", re.UNICODE)
_ENUM_SEP = re.compile(r"[-\s]+")


def normalize_string(text: str) -> str:
    """Lower-case, NFKC, no punctuation and no whitespace (the benchmark's string rule)."""
    return _NON_ALNUM.sub("", unicodedata.normalize("NFKC", text).casefold())


def normalize_enum(text: str) -> str:
    return _ENUM_SEP.sub("_", text.strip().lower())


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _as_float(v: Any) -> float | None:
    if _is_number(v):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def parse_date(text: str) -> date | None:
    text = text.strip()
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    return None


def _is_null(v: Any, rules: LabelRules) -> bool:
    if v is None or v is MISSING:
        return True
    if isinstance(v, str):
        return bool(rules.null_like_strings) and v.strip().casefold() in rules.null_like_strings
    if isinstance(v, list) and v and rules.null_like_strings:  # ["null"], ["None", "null"]
        return all(isinstance(x, str) and x.strip().casefold() in rules.null_like_strings for x in v)
    return rules.empty_list_is_null and isinstance(v, list) and not v


def compare_values(truth: Any, pred: Any, key: str | None, rules: LabelRules) -> tuple[bool, str]:
    """(equal, reason) for two leaf values under ``rules``; ``key`` selects enum/date rules."""
    t_null, p_null = _is_null(truth, rules), _is_null(pred, rules)
    if t_null and p_null:
        return True, LabelReason.BOTH_NULL
    if t_null:
        return False, LabelReason.INVENTED_VALUE
    if p_null:
        return False, LabelReason.MISSING_VALUE if pred is not MISSING else LabelReason.MISSING_FIELD
    if isinstance(truth, list) or isinstance(pred, list):
        if not (isinstance(truth, list) and isinstance(pred, list)):
            return False, LabelReason.TYPE_MISMATCH
        return _compare_scalar_lists(truth, pred, key, rules)
    if isinstance(truth, bool) or isinstance(pred, bool):
        return (truth == pred, LabelReason.MATCH if truth == pred else LabelReason.DIFFERENT_VALUE)
    if _is_number(truth) or _is_number(pred):
        a, b = _as_float(truth), _as_float(pred)
        if a is None or b is None:
            return False, LabelReason.TYPE_MISMATCH
        ok = abs(a - b) <= rules.numeric_tolerance if rules.numeric_tolerance else a == b
        return ok, LabelReason.MATCH if ok else LabelReason.DIFFERENT_NUMBER
    if not (isinstance(truth, str) and isinstance(pred, str)):
        ok = truth == pred
        return ok, LabelReason.MATCH if ok else LabelReason.TYPE_MISMATCH
    if key is not None and key in rules.enum_fields:
        ok = normalize_enum(truth) == normalize_enum(pred)
        return ok, LabelReason.MATCH if ok else LabelReason.DIFFERENT_ENUM
    if key is not None and re.search(rules.date_key_pattern, key, re.IGNORECASE):
        if truth == pred:
            return True, LabelReason.MATCH
        if rules.dates == "parsed":
            a_d, b_d = parse_date(truth), parse_date(pred)
            if a_d is not None and a_d == b_d:
                return True, LabelReason.MATCH
        return False, LabelReason.DIFFERENT_DATE
    ok = truth == pred if rules.strings == "exact" else normalize_string(truth) == normalize_string(pred)
    return ok, LabelReason.MATCH if ok else LabelReason.DIFFERENT_STRING


def _compare_scalar_lists(truth: list[Any], pred: list[Any], key: str | None, rules: LabelRules) -> tuple[bool, str]:
    dated = (
        rules.dates_in_string_lists == "date_rule"
        and key is not None
        and re.search(rules.date_key_pattern, key, re.IGNORECASE) is not None
    )

    if rules.null_like_strings:  # placeholders among real values are not values either
        truth = [v for v in truth if not _is_null(v, rules)]
        pred = [v for v in pred if not _is_null(v, rules)]

    def norm(v: Any) -> Any:
        if isinstance(v, str) and dated:
            parsed = parse_date(v) if rules.dates == "parsed" else None
            return parsed.isoformat() if parsed else v
        if isinstance(v, str):
            return normalize_string(v) if rules.strings == "normalized" else v
        f = _as_float(v)
        return f if f is not None else json.dumps(v, sort_keys=True)

    if rules.string_lists == "set":
        ok = {norm(v) for v in truth} == {norm(v) for v in pred}
    else:
        ok = [norm(v) for v in truth] == [norm(v) for v in pred]
    return ok, LabelReason.MATCH if ok else LabelReason.DIFFERENT_LIST


# --------------------------------------------------------------------------- structure


def _is_object_list(v: Any) -> bool:
    return isinstance(v, list) and any(isinstance(x, Mapping) for x in v)


def _leaf_paths(value: Any, prefix: FieldPath) -> list[FieldPath]:
    """Leaves below ``prefix`` in one document (the prefix itself for a scalar or scalar list)."""
    if isinstance(value, Mapping) and value:
        return [p for k, v in value.items() for p in _leaf_paths(v, (*prefix, k))]
    if _is_object_list(value):
        return [p for i, v in enumerate(value) for p in _leaf_paths(v, (*prefix, i))]
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
            for leaf in _leaf_paths(value, t_path):
                self.out.append(FieldLabel(format_path(p_path), format_path(leaf), True, reason, in_output=in_output))
            return
        tp = None if t_path is None else format_path(t_path)
        for leaf in _leaf_paths(value, p_path):
            self.out.append(FieldLabel(format_path(leaf), tp, True, reason))

    def walk(self, truth: Any, pred: Any, t_path: FieldPath, p_path: FieldPath) -> None:
        kind = self._schema_kind(t_path)
        t_obj, p_obj = isinstance(truth, Mapping), isinstance(pred, Mapping)
        if t_obj or p_obj or (kind == "object" and not (_is_null(truth, self.rules) and _is_null(pred, self.rules))):
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
            reason = LabelReason.MISSING_SECTION if _is_null(pred, self.rules) else LabelReason.TYPE_MISMATCH
            if t_map:
                self.all_wrong(t_map, t_path, p_path, reason, side="truth", in_output=pred is not MISSING)
            else:
                self.out.append(FieldLabel(format_path(p_path), format_path(t_path), True, reason))
            return
        if t_map is None:
            reason = LabelReason.INVENTED_SECTION if _is_null(truth, self.rules) else LabelReason.TYPE_MISMATCH
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
            for p in _leaf_paths(truth, ())
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


NULL_TRUTH_REASONS = (
    LabelReason.BOTH_NULL,
    LabelReason.INVENTED_VALUE,
    LabelReason.INVENTED_SECTION,
    LabelReason.EXTRA_ITEM,
    LabelReason.UNPARSED_OUTPUT_NULL_TRUTH,
)
"""Label reasons of leaves whose ground truth is null or absent (a section or list item that
only the output has)."""


def label_summary(labels: Sequence[DocumentLabels]) -> dict[str, Any]:
    """Error rates of a labelled run, over the documents that were generated.

    Documents without a reply (``not_generated``) are counted with their reasons and left out
    of every rate: a request that failed is not a wrong output. Field rates are also given on
    fields whose truth is not null (an all-null reply already gets most fields of a sparse
    schema such as PII right); an unparsed output's null-truth leaves are not among them.
    """
    generated = [d for d in labels if not d.not_generated]
    fields = [f for d in generated for f in d.fields]
    nonnull = [f for f in fields if f.reason not in NULL_TRUTH_REASONS]
    docs_wrong = sum(bool(d.wrong) for d in generated)
    wrong = sum(f.wrong for f in fields)
    reasons = Counter(str(d.not_generated).split(":")[0] for d in labels if d.not_generated)
    return {
        "documents": len(generated),
        "not_generated": len(labels) - len(generated),
        "not_generated_reasons": dict(reasons),
        "documents_wrong": docs_wrong,
        "document_error_rate": docs_wrong / len(generated) if generated else 0.0,
        "unparsed": sum(d.parse_failed for d in generated),
        "fields": len(fields),
        "fields_wrong": wrong,
        "field_error_rate": wrong / len(fields) if fields else 0.0,
        "nonnull_fields": len(nonnull),
        "nonnull_fields_wrong": sum(f.wrong for f in nonnull),
        "nonnull_field_error_rate": sum(f.wrong for f in nonnull) / len(nonnull) if nonnull else 0.0,
    }


@lru_cache(maxsize=1 << 16)
def parsed_path(path: str) -> FieldPath:
    """:func:`~construct_eval.fields.parse_path`, once per distinct path text (a run repeats a
    few hundred paths over a million items)."""
    return parse_path(path)


def error_index(labels: DocumentLabels) -> dict[FieldPath, bool]:
    """Every prefix of every label path of a document (the path itself included), and whether a
    label at or under it is wrong: what :func:`judged_field_errors` looks a judged field up in.

    Built once per document (each path parsed once) and kept on ``labels`` while its ``fields``
    list is the same and as long, so scoring many fields of a document costs one lookup each.
    """
    key = (id(labels.fields), len(labels.fields))
    cached = labels._error_index
    if cached is not None and cached[:2] == key:
        return cached[2]
    index: dict[FieldPath, bool] = {}
    for f in labels.fields:
        path = parsed_path(f.path)
        for end in range(len(path) + 1):
            prefix = path[:end]
            index[prefix] = index.get(prefix, False) or f.wrong
    labels._error_index = (*key, index)
    return index


def judged_field_errors(labels: DocumentLabels, judged: Iterable[str]) -> dict[str, bool | None]:
    """For each judged field name (any granularity): True when a label at or under it is wrong.

    Labels of values found only in the ground truth (a dropped list item) sit at their
    container, so they count for a judged field only when it contains that container (a label
    is under a judged field when the field's path is a prefix of the label's). A judged field
    with no label under it gets None (nothing to compare: e.g. an empty section).
    """
    index = error_index(labels)
    return {name: index.get(parsed_path(name)) for name in judged}


__all__ = [
    "DocumentLabels",
    "FieldLabel",
    "LabelRules",
    "compare_values",
    "error_index",
    "judged_field_errors",
    "label_output",
    "label_rows",
    "label_summary",
    "normalize_enum",
    "normalize_string",
    "output_state",
    "pair_items",
    "parsed_path",
]
