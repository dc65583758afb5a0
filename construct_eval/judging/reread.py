"""Stored judgments read under today's parser: the rating a recorded reply gives, and the rule that read it.

Recorded runs are append-only and their judgment keys must never move, so a parser change
(issue 34: the card's recipe reads ``[[x]]`` and ``[x]`` where no ``Rating:`` prefix exists)
is applied when rows are *read*, not by rewriting ``judgments.jsonl``: every reader of
judgments for analysis goes through :func:`judgment_rows`, which re-parses each stored
reply with :func:`construct_eval.parsing.parse_rating` (or the JSON parser the reply was
asked for) and sets ``rating``, ``status``, ``reason``, ``detail`` and ``parse_rule`` from it.
Nothing is called and nothing is written; the key, the call id and every other field stay
as stored. A row whose reading changed keeps what was stored under ``stored_reading`` and
loses its log-prob twin (``expected_rating``): the token log-probs were never stored with the
row, so the expected rating at the new position cannot be recomputed without a new call.

Rows that carry ``parse_rule`` were parsed by this parser when they were made and are left
as they are; joint per-field rows (one JSON reply for several fields, parsed unchanged) only
get their rule; failed requests and rows without a stored reply have nothing to read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.parsing import ParsedRating, ParseRule, Unscored, parse_rating, parse_rating_json


def reparse(row: Mapping[str, Any]) -> ParsedRating | None:
    """The reading today's parser gives the row's stored reply (None: nothing to re-read)."""
    if row.get("reason") == Unscored.REQUEST_FAILED or row.get("mode") == "fields-joint":
        return None
    if row.get("raw_reply") is None:  # no reply stored (a row made by hand or imported): nothing to read
        return None
    if str(row.get("constrained") or "none") == "json":
        return parse_rating_json(row.get("raw_reply"), row.get("finish_reason"))
    return parse_rating(row.get("raw_reply"), row.get("finish_reason"))


def reread(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with the rating its stored reply gives under today's parser, and ``parse_rule``."""
    out = dict(row)
    if "parse_rule" in row:  # made by this parser
        return out
    parsed = reparse(row)
    if parsed is None:
        scored_joint = row.get("mode") == "fields-joint" and row.get("status") == "ok"
        out["parse_rule"] = ParseRule.JSON.value if scored_joint else None
        return out
    out["parse_rule"] = parsed.rule.value if parsed.rule else None
    if parsed.rating == row.get("rating") and parsed.reason == row.get("reason"):
        return out
    out["stored_reading"] = {k: row.get(k) for k in ("rating", "status", "reason", "detail")}
    out.update(rating=parsed.rating, status=parsed.status, reason=parsed.reason, detail=parsed.detail)
    out["expected_rating"] = None
    out["expected_mass"] = None
    return out


def reread_rows(rows: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    for row in rows:
        yield reread(row)


def judgment_rows(run: RunDir) -> Iterator[dict[str, Any]]:
    """The run's judgments as today's parser reads their stored replies (see the module doc)."""
    return reread_rows(run.iter_rows("judgments"))


def rule_counts(rows: Iterable[Mapping[str, Any]]) -> Counter[tuple[str, str, str]]:
    """How many ratings each rule gave, per (mode, constrained, rule), over re-read rows: rule
    ``unscored`` counts the rows that stay unscored and ``changed`` the rows whose reading moved."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for r in rows:
        mode, constrained = str(r.get("mode")), str(r.get("constrained") or "none")
        counts[(mode, constrained, str(r.get("parse_rule")) if r.get("status") == "ok" else "unscored")] += 1
        if "stored_reading" in r:
            counts[(mode, constrained, "changed")] += 1
    return counts
