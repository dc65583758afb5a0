"""Near-miss errors: the mistakes a good extractor makes, for every field type (issue 34).

The first controlled-error kinds of :mod:`construct_eval.data.inject` change scalars only:
on a dataset whose every field is a list of strings (financial entities) no digit slip or
format change could be planted, so every planted error was an invented value, a substitution
or a dropped item, most of them catchable by a type check. These candidates are the hard
ones, and they apply to strings and to the items of string lists alike:

- ``digit_slip``: a digit changed or two neighbouring digits swapped inside a string
  ("$ 17.9 billion" -> "$ 17.6 billion");
- ``format_change``: a date or amount written another plausible way ("February 21" ->
  "21 February", "$117 billion" -> "$117bn", "USD 117 billion");
- ``span_cut``: a span cut short by its first or last word ("Daiichi Sankyo" -> "Daiichi");
- ``span_extended``: a span that takes in the neighbouring word of the document ("US" ->
  "US President");
- ``neighbour_type``: an entity of a neighbouring type from the same document (a Product as a
  Company, a Company as a Person, an amount of Money as a Quantity).

Every function returns candidate values only; the planter keeps those the label rules count
as wrong. Nothing here draws at random except :func:`digit_slips` (the replacement digit), so
a planter's random stream decides which candidate is used.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from construct_eval.data.datasets.synthetic import MONTHS

NEAR_MISS_KINDS = ("digit_slip", "format_change", "span_cut", "span_extended", "neighbour_type")
"""Kinds counted as near misses (the first two also exist for scalars in the first kinds)."""

NEW_KINDS = ("span_cut", "span_extended", "neighbour_type")
"""Kinds that exist only with near misses on (a run recorded before them never names them)."""

NEIGHBOUR_TYPES: Mapping[str, tuple[str, ...]] = {
    "company": ("product", "person", "location"),
    "product": ("company",),
    "person": ("company",),
    "location": ("company",),
    "money": ("quantity",),
    "quantity": ("money",),
    "date": (),
}
"""Field names (case-insensitive) whose values an extractor confuses with each other's."""

_MONTH_RE = "|".join(MONTHS)  # the month names the synthetic documents write
_MONTH_DAY = re.compile(rf"^(?P<m>{_MONTH_RE})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?P<rest>(?:,?\s+\d{{4}})?)$", re.I)
_DAY_MONTH = re.compile(rf"^(?P<d>\d{{1,2}})\s+(?P<m>{_MONTH_RE})(?P<rest>(?:,?\s+\d{{4}})?)$", re.I)
_AMOUNT = re.compile(
    r"^(?P<cur>US\$|\$|€|£|USD|EUR|GBP)?\s?(?P<num>\d[\d,]*(?:\.\d+)?)\s?"
    r"(?P<scale>billion|million|thousand|trillion|bn|mn|m|b|k)?(?P<rest>.*)$",
    re.I,
)
_SCALE_SHORT = {"billion": "bn", "million": "mn", "thousand": "k", "trillion": "tn"}
_SCALE_LONG = {"bn": "billion", "b": "billion", "mn": "million", "m": "million", "k": "thousand", "tn": "trillion"}
_CURRENCY_CODE = {"$": "USD", "us$": "USD", "€": "EUR", "£": "GBP"}
_WORD = re.compile(r"[\w$€£%][\w$€£%.,'&-]*")
_STOPWORDS = frozenset(["a", "an", "and", "the", "of", "for", "in", "on", "at", "to", "by", "with"])


def digit_slips(value: str, rng: random.Random) -> list[str]:
    """Each digit changed to another, and each pair of unequal neighbouring digits swapped."""
    out = []
    for i, c in enumerate(value):
        if not c.isdigit():
            continue
        d = str((int(c) + rng.randint(1, 9)) % 10)
        out.append(value[:i] + d + value[i + 1 :])
        if i + 1 < len(value) and value[i + 1].isdigit() and c != value[i + 1]:
            out.append(value[:i] + value[i + 1] + c + value[i + 2 :])
    return out


def format_changes(value: str) -> list[str]:
    """The same date or amount written another plausible way (empty when ``value`` is neither)."""
    s = value.strip()
    m = _MONTH_DAY.match(s)
    if m:
        month, day, rest = m["m"].capitalize(), m["d"], m["rest"].replace(",", "").strip()
        year = f" {rest}" if rest else ""
        return [f"{day} {month}{year}", f"{month[:3]}. {day}{year}", f"{month} {day}th{year}"]
    m = _DAY_MONTH.match(s)
    if m:
        month, day, rest = m["m"].capitalize(), m["d"], m["rest"].replace(",", "").strip()
        return [f"{month} {day}" + (f", {rest}" if rest else ""), f"{day} {month[:3]}." + (f" {rest}" if rest else "")]
    m = _AMOUNT.match(s)
    if not m or not (m["cur"] or m["scale"] or "%" in m["rest"]):
        return []
    cur, num, scale, rest = m["cur"] or "", m["num"], m["scale"] or "", m["rest"]
    out = []
    if scale:
        low = scale.lower()
        other = _SCALE_SHORT.get(low) or _SCALE_LONG.get(low)
        if other:
            out.append(
                f"{cur}{num} {other}{rest}".replace("  ", " ") if low in _SCALE_SHORT else f"{cur}{num}{other}{rest}"
            )
    if cur:
        code = _CURRENCY_CODE.get(cur.lower())
        if code:
            out.append(f"{code} {num}" + (f" {scale}" if scale else "") + rest)
        out.append(f"{num}" + (f" {scale}" if scale else "") + rest)  # the currency left out
    if "%" in rest:
        out.append(f"{num} percent" + rest.replace("%", "", 1).rstrip())
    return [o.strip() for o in out if o.strip() and o.strip() != s]


def span_cuts(value: str, text: str) -> list[str]:
    """``value`` without its first or its last word (never leaving a lone stopword)."""
    words = value.split()
    if len(words) < 2:
        return []
    out = []
    for cut in (words[:-1], words[1:]):
        while cut and cut[-1].lower() in _STOPWORDS:
            cut = cut[:-1]
        while cut and cut[0].lower() in _STOPWORDS:
            cut = cut[1:]
        short = " ".join(cut)
        if len(short) >= 2 and short != value and short.lower() in text.lower():
            out.append(short)
    return out


def span_extensions(value: str, text: str) -> list[str]:
    """``value`` as it occurs in ``text``, taking in the word before or after it."""
    out = []
    for m in re.finditer(re.escape(value), text):
        before = [w for w in _WORD.finditer(text[: m.start()])]
        after = _WORD.search(text, m.end())
        if before and text[before[-1].end() : m.start()].strip() == "":
            out.append(text[before[-1].start() : m.end()])
        if after and text[m.end() : after.start()].strip() == "":
            out.append(text[m.start() : after.end()].rstrip(".,"))
    return list(dict.fromkeys(o for o in out if o != value))


def neighbour_values(field_name: str | None, truth: Any) -> list[str]:
    """Strings that the document's truth gives to a field of a neighbouring type."""
    if not field_name or not isinstance(truth, Mapping):
        return []
    neighbours = NEIGHBOUR_TYPES.get(field_name.lower(), ())
    out: list[str] = []
    for key, value in truth.items():
        if str(key).lower() not in neighbours:
            continue
        items = value if isinstance(value, list) else [value]
        out += [v for v in items if isinstance(v, str) and v]
    return out


def string_candidates(
    kind: str, value: str, text: str, field_name: str | None, truth: Any, rng: random.Random
) -> list[str]:
    """Near-miss replacements of one string of kind ``kind`` (a field's value or a list item)."""
    if kind == "digit_slip":
        return digit_slips(value, rng)
    if kind == "format_change":
        return format_changes(value)
    if kind == "span_cut":
        return span_cuts(value, text)
    if kind == "span_extended":
        return span_extensions(value, text)
    if kind == "neighbour_type":
        return [v for v in neighbour_values(field_name, truth) if v != value]
    return []


def list_candidates(
    kind: str, items: list[Any], text: str, field_name: str | None, truth: Any, rng: random.Random
) -> list[list[Any]]:
    """The list with one string item replaced by a near miss of it (every item, every candidate).

    ``neighbour_type`` on an empty field (null or ``[]``) puts a neighbouring type's entity
    there: an extractor that files an entity under the wrong type."""
    if kind == "neighbour_type" and not items:
        return [[v] for v in neighbour_values(field_name, truth)]
    out: list[list[Any]] = []
    for i, item in enumerate(items):
        if not isinstance(item, str):
            continue
        for new in string_candidates(kind, item, text, field_name, truth, rng):
            if new not in items:
                out.append([*items[:i], new, *items[i + 1 :]])
    return out
