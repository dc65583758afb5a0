"""What a label is: the comparison rules, a field's label and its reason, a document's labels,
and the state of an output row (parsed, unparsed, not generated)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

from construct_eval.digest import sha256_hex
from construct_eval.fields import FieldPath

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
