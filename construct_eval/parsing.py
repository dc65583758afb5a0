"""Judge reply -> rating, or *unscored* with a reason. Never a made-up number.

Document and per-field replies carry their rating as ``Rating: [[x]]``; the *last* such
occurrence counts (a judge may quote the format while explaining: "Field [[2]] is fine ...
Rating: [[9]]" is 9). Where a reply has no ``Rating:`` prefix at all, the card's recipe is
followed (FastChat's single-answer grading): the first ``[[x]]``, else the first ``[x]``
("I would rate this response as [[4]]" is 4). Only integers 1-10 are ratings. Every parsed
rating names the rule that read it (:class:`ParseRule`), so a table can count or exclude the
fallback readings. Joint per-field replies are a JSON object ``{field: {"explanation", "rating"}}``,
possibly inside code fences or prose.

Reasons for unscored (stable strings, counted in run summaries):

``no_rating``           no ``Rating: [[x]]``, ``[[x]]`` or ``[x]`` in the reply
``not_integer``         the rating is not a whole number (``[[7.5]]``)
``out_of_range``        a whole number outside 1-10
``truncated``           the reply was cut off (``finish_reason == "length"``)
``empty_reply``         nothing to parse
``invalid_json``        no JSON object could be read from a joint reply
``missing_field``       a requested field is absent from a joint reply
``unknown_field``       absent, and the reply rates fields under names not asked for
``bad_field_entry``     a field's entry is not ``{"rating": ...}``
``request_failed``      the call itself failed (set by the judge, not here)
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

RATING_MIN, RATING_MAX = 1, 10

# Bounded quantifiers keep the scan linear on hostile input.
_RATING_RE = re.compile(r"Rating\s{0,8}:\s{0,8}\[\[\s{0,8}([-+]?\d{1,12}(?:\.\d{1,12})?)\s{0,8}\]\]", re.IGNORECASE)
# The recipe's patterns (FastChat ``\[\[(\d+\.?\d*)\]\]``, then ``\[(\d+\.?\d*)\]``), bounded.
_DOUBLE_BRACKET_RE = re.compile(r"\[\[(\d{1,12}(?:\.\d{0,12})?)\]\]")
_SINGLE_BRACKET_RE = re.compile(r"\[(\d{1,12}(?:\.\d{0,12})?)\]")
_FENCE_RE = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)
_MAX_JSON_STARTS = 32


class ParseRule(StrEnum):
    """Which rule read a rating out of a reply (recorded on every judgment as ``parse_rule``)."""

    RATING_PREFIX = "rating_prefix"  # the last ``Rating: [[x]]``
    DOUBLE_BRACKET = "double_bracket"  # no prefix anywhere: the first ``[[x]]`` (the recipe's pattern)
    SINGLE_BRACKET = "single_bracket"  # no prefix, no ``[[x]]``: the first ``[x]`` (the recipe's fallback)
    JSON = "json"  # a JSON reply's ``rating`` (JSON-constrained or joint per-field replies)


class Unscored(StrEnum):
    """Why a reply gave no rating. An unscored judgment carries one of these with a detail, and
    counts as unscored in every table: it never becomes a number."""

    TRUNCATED = "truncated"
    EMPTY_REPLY = "empty_reply"
    NO_RATING = "no_rating"
    NOT_INTEGER = "not_integer"
    OUT_OF_RANGE = "out_of_range"
    INVALID_JSON = "invalid_json"
    UNKNOWN_FIELD = "unknown_field"
    MISSING_FIELD = "missing_field"
    BAD_FIELD_ENTRY = "bad_field_entry"
    REQUEST_FAILED = "request_failed"


def is_request_failure(reason: object) -> bool:
    """Whether a stored row's ``reason`` says its call failed (no answer, not a bad one): judge
    rows store ``request_failed``, verdict and reflection rows ``request_failed: <error>``. A
    resumed stage calls such an item again, and its new row replaces the failed one."""
    return str(reason or "").startswith(Unscored.REQUEST_FAILED)


@dataclass(frozen=True)
class ParsedRating:
    """A rating 1-10, or ``rating is None`` with the reason it is unscored."""

    rating: int | None
    reason: str | None = None
    detail: str | None = None
    span: tuple[int, int] | None = None  # character span of the rating digits in the reply
    explanation: str | None = None
    rule: str | None = None  # the ParseRule whose match was read (None: nothing was found to read)

    @property
    def status(self) -> str:
        return "ok" if self.rating is not None else "unscored"

    @classmethod
    def unscored(cls, reason: str, detail: str | None = None, rule: str | None = None) -> ParsedRating:
        return cls(None, reason, detail, rule=rule)


def _check_value(raw: Any) -> tuple[int | None, str | None, str | None]:
    """Validate a rating value taken from text or JSON."""
    if isinstance(raw, bool) or raw is None:
        return None, Unscored.NOT_INTEGER, f"rating is {raw!r}"
    if isinstance(raw, str):
        text = raw.strip()
        if re.fullmatch(r"[-+]?\d{1,12}", text):
            raw = int(text)
        elif re.fullmatch(r"[-+]?\d{1,12}\.\d{1,12}", text):
            raw = float(text)
        else:
            return None, Unscored.NOT_INTEGER, f"rating is {raw[:40]!r}"
    if isinstance(raw, float):
        if not math.isfinite(raw) or raw != int(raw):
            return None, Unscored.NOT_INTEGER, f"rating is {raw!r}"
        raw = int(raw)
    if not isinstance(raw, int):
        return None, Unscored.NOT_INTEGER, f"rating is {type(raw).__name__}"
    if not RATING_MIN <= raw <= RATING_MAX:
        return None, Unscored.OUT_OF_RANGE, f"rating {raw} outside {RATING_MIN}-{RATING_MAX}"
    return raw, None, None


def parse_rating(reply: str | None, finish_reason: str | None = None) -> ParsedRating:
    """Read the last ``Rating: [[x]]`` of a judge reply; without any, the recipe's first
    ``[[x]]``, then its first ``[x]``. A prefixed rating that is not a valid rating stays
    unscored: the bracket patterns are read only where no prefix exists."""
    if finish_reason == "length":
        return ParsedRating.unscored(Unscored.TRUNCATED, "reply hit the token limit before it finished")
    if reply is None or not reply.strip():
        return ParsedRating.unscored(Unscored.EMPTY_REPLY)
    found = _find_rating(reply)
    if found is None:
        return ParsedRating.unscored(Unscored.NO_RATING, "no 'Rating: [[x]]', '[[x]]' or '[x]' in reply")
    match, rule = found
    value, reason, detail = _check_value(match.group(1))
    if value is None:
        return ParsedRating.unscored(reason or Unscored.NOT_INTEGER, detail, rule=rule)
    explanation = reply[: match.start()].strip() or None
    return ParsedRating(value, span=match.span(1), explanation=explanation, rule=rule)


def _find_rating(reply: str) -> tuple[re.Match[str], ParseRule] | None:
    """The match that holds the rating, and the rule that found it, in the order of the rules."""
    last = None
    for last in _RATING_RE.finditer(reply):  # noqa: B007 - we want the final match
        pass
    if last is not None:
        return last, ParseRule.RATING_PREFIX
    for pattern, rule in (
        (_DOUBLE_BRACKET_RE, ParseRule.DOUBLE_BRACKET),
        (_SINGLE_BRACKET_RE, ParseRule.SINGLE_BRACKET),
    ):
        first = pattern.search(reply)
        if first is not None:
            return first, rule
    return None


def extract_json_object(reply: str) -> tuple[dict[str, Any] | None, str | None]:
    """The first JSON object in a reply: whole text, a fenced block, or embedded in prose."""
    text = reply.strip()
    candidates = [text] + [m.group(1).strip() for m in _FENCE_RE.finditer(reply)]
    decoder = json.JSONDecoder()
    for cand in candidates:
        try:
            obj = json.loads(cand)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(obj, dict):
            return obj, None
    for pos in _top_level_object_starts(text):
        try:
            obj, _end = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(obj, dict):
            return obj, None
    return None, "no JSON object found in reply"


def _top_level_object_starts(text: str) -> list[int]:
    """Positions of ``{`` outside any other brace pair or string, in one linear scan.

    Only these may start the reply's object: an inner object of a broken outer one must
    not be mistaken for the answer.
    """
    starts: list[int] = []
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and depth > 0:
            in_string = True
        elif ch == "{":
            if depth == 0:
                starts.append(i)
                if len(starts) >= _MAX_JSON_STARTS:
                    break
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
    return starts


def _key_lookup(obj: Mapping[str, Any]) -> dict[str, str]:
    """Reply keys by their whitespace-stripped, backtick-stripped form."""
    return {str(k).strip().strip("`").strip(): k for k in obj}


def parse_field_ratings(
    reply: str | None, fields: Sequence[str], finish_reason: str | None = None
) -> tuple[dict[str, ParsedRating], list[str]]:
    """Ratings per requested field from a joint reply, and the unknown keys it contained.

    Every requested field gets a result; a field the reply does not rate is unscored with
    ``missing_field``. Keys must name the requested paths exactly (surrounding spaces or
    backticks aside); anything else is reported as unknown, never guessed.
    """
    if finish_reason == "length":
        return {f: ParsedRating.unscored(Unscored.TRUNCATED, "reply hit the token limit") for f in fields}, []
    if reply is None or not reply.strip():
        return {f: ParsedRating.unscored(Unscored.EMPTY_REPLY) for f in fields}, []
    obj, error = extract_json_object(reply)
    if obj is None:
        return {f: ParsedRating.unscored(Unscored.INVALID_JSON, error) for f in fields}, []
    lookup = _key_lookup(obj)
    wanted = set(fields)
    unknown = [k for k in lookup if k not in wanted]
    results: dict[str, ParsedRating] = {}
    for name in fields:
        if name not in lookup:
            if unknown:  # the judge rated fields under names that were not asked for
                results[name] = ParsedRating.unscored(
                    Unscored.UNKNOWN_FIELD, f"reply keys not requested: {unknown[:5]}"
                )
            else:
                results[name] = ParsedRating.unscored(Unscored.MISSING_FIELD)
            continue
        entry = obj[lookup[name]]
        if isinstance(entry, Mapping):
            if "rating" not in entry:
                results[name] = ParsedRating.unscored(Unscored.BAD_FIELD_ENTRY, "entry has no 'rating'")
                continue
            raw, explanation = entry["rating"], entry.get("explanation")
        else:
            results[name] = ParsedRating.unscored(Unscored.BAD_FIELD_ENTRY, f"entry is {type(entry).__name__}")
            continue
        value, reason, detail = _check_value(raw)
        if value is None:
            results[name] = ParsedRating.unscored(reason or Unscored.NOT_INTEGER, detail, rule=ParseRule.JSON)
        else:
            results[name] = ParsedRating(
                value, explanation=str(explanation) if explanation is not None else None, rule=ParseRule.JSON
            )
    return results, unknown


_JSON_RATING_RE = re.compile(r'"rating"\s{0,8}:\s{0,8}"?([-+]?\d{1,12}(?:\.\d{1,12})?)')


def parse_rating_json(reply: str | None, finish_reason: str | None = None) -> ParsedRating:
    """Read ``{"explanation": ..., "rating": x}``: the form a JSON-constrained judge writes."""
    if finish_reason == "length":
        return ParsedRating.unscored(Unscored.TRUNCATED, "reply hit the token limit before it finished")
    if reply is None or not reply.strip():
        return ParsedRating.unscored(Unscored.EMPTY_REPLY)
    obj, error = extract_json_object(reply)
    if obj is None:
        return ParsedRating.unscored(Unscored.INVALID_JSON, error)
    if "rating" not in obj:
        return ParsedRating.unscored(Unscored.NO_RATING, "JSON reply has no 'rating'")
    value, reason, detail = _check_value(obj["rating"])
    if value is None:
        return ParsedRating.unscored(reason or Unscored.NOT_INTEGER, detail, rule=ParseRule.JSON)
    span = None
    for m in _JSON_RATING_RE.finditer(reply):
        span = m.span(1)
    explanation = obj.get("explanation")
    return ParsedRating(
        value, span=span, explanation=str(explanation) if explanation is not None else None, rule=ParseRule.JSON
    )
