"""Leaf values compared under :class:`~construct_eval.data.labels.records.LabelRules`: strings,
enums, numbers, dates, nulls and lists of scalars (the benchmark's rules, docs/design.md "Labels")."""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import date, datetime
from typing import Any

from construct_eval.data.labels.records import DATE_FORMATS, LabelReason, LabelRules
from construct_eval.fields import MISSING

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


def is_null(v: Any, rules: LabelRules) -> bool:
    if v is None or v is MISSING:
        return True
    if isinstance(v, str):
        return bool(rules.null_like_strings) and v.strip().casefold() in rules.null_like_strings
    if isinstance(v, list) and v and rules.null_like_strings:  # ["null"], ["None", "null"]
        return all(isinstance(x, str) and x.strip().casefold() in rules.null_like_strings for x in v)
    return rules.empty_list_is_null and isinstance(v, list) and not v


def compare_values(truth: Any, pred: Any, key: str | None, rules: LabelRules) -> tuple[bool, str]:
    """(equal, reason) for two leaf values under ``rules``; ``key`` selects enum/date rules."""
    t_null, p_null = is_null(truth, rules), is_null(pred, rules)
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
        truth = [v for v in truth if not is_null(v, rules)]
        pred = [v for v in pred if not is_null(v, rules)]

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
