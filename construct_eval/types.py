"""Plain data shared by every layer: what a judge (or any scorer) is shown about one document.

It lives below the storage and judging layers so that a run folder can hand documents to a
scorer without importing the judge (the storage layer imports no domain code).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from construct_eval.digest import sha256_hex
from construct_eval.kinds import FAMILY_PATTERN, JUDGE_FAMILIES, USES_LABELS_SUFFIX, JudgeMode, Level, judge_family


def output_hash(output: Any) -> str:
    """The first 16 hex digits of the SHA-256 of the output's canonical JSON: part of every resume
    key, so it must never change (tests/test_recorded_runs_resume.py)."""
    canonical = json.dumps(output, sort_keys=True, ensure_ascii=False)
    return sha256_hex(canonical)[:16]


@dataclass(frozen=True)
class JudgeInput:
    """What the judge sees about one document: the request (with the document), schema, output."""

    doc_id: str
    request: str
    schema: Mapping[str, Any] | None
    output: Any

    @property
    def output_hash(self) -> str:
        return output_hash(self.output)


# --------------------------------------------------------------------------- scorer identities


def elicitation_of(judgment: Mapping[str, Any]) -> str:
    """How a judgment row's rating was asked for: its ``constrained`` label (``grammar:rating-only``
    for the rating forced alone, ``none`` for the free recipe). The same prompt asked two ways
    is two scorers (:mod:`construct_eval.reports.collect`), never paired as one (``bias``)."""
    return str(judgment.get("constrained") or "none")


# --------------------------------------------------------------------------- the name grammar
#
#   family [:method] [[bracket]] [@granularity] [:expected] [:min | :mean]
#
# one order for every scorer, judge or not: the bracket holds a judge's prompt variant or a
# combination's members (joined by "+"), the method says how a combination combines. The
# stored names are all spelt this way; a name with its parts in another order
# ("consistency:min@leaf") is refused, never read as a second spelling of the same scorer.

_WORD = re.compile(r"[a-z][a-z0-9_-]*")
VALUES = ("expected",)
"""Another reading of the same rows: ``expected`` is a judge's log-prob expected rating."""
AGGREGATES = ("min", "mean")
"""How field scores are read as one document score."""
_ORDER = "family[:method][[variant or members]][@granularity][:expected][:min|:mean]"
_SLOTS = ("method", "bracket", "granularity", "value", "aggregate")


def _top_level(text: str) -> list[str]:
    """``text`` cut before every ``:``, ``@`` and ``[`` outside brackets; a bracket group stays whole."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            if depth == 0 and i > start:
                parts.append(text[start:i])
                start = i
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in scorer name {text!r}")
            if depth == 0:
                parts.append(text[start : i + 1])
                start = i + 1
        elif ch in ":@" and depth == 0 and i > start:
            parts.append(text[start:i])
            start = i
    if depth:
        raise ValueError(f"unbalanced '[' in scorer name {text!r}")
    if start < len(text):
        parts.append(text[start:])
    return parts


def _split_members(inner: str) -> list[str]:
    members, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch == "["
        depth -= ch == "]"
        if ch == "+" and depth == 0:
            members.append(inner[start:i])
            start = i + 1
    members.append(inner[start:])
    return members


@dataclass(frozen=True, eq=False)
class ScorerId:
    """A scorer's identity: what its name encodes, as fields, with one canonical name.

    ``ScorerId.parse(s)`` reads a name, ``.name`` writes it; ``parse(x.name) == x`` for every
    identity and ``parse(s).name == s`` for every name the package writes (the names in the
    recorded tables and run files are the canonical spellings). Code asks the fields, never
    cuts the string. An identity equals its canonical name, as a :class:`StrEnum` member equals
    its value, so a name a user types or a table holds finds its scorer. Examples::

        judge-doc                                        the written document rating
        judge-doc[sec:o-s-r|fields:original]:expected    its log-prob expected rating, another order
        judge-field@leaf:expected:min                    per-leaf expected ratings, least as the document's
        consistency:min    consistency@leaf              a score row's document aggregate / its fields
        combo:rank-mean[consistency@leaf+token_logprob@leaf]@leaf
        field-prior-uses-labels@top                      a baseline that uses the labels
    """

    family: str
    method: str | None = None  # how a combination combines ("rank-mean")
    members: tuple[ScorerId, ...] = ()  # the scorers a combination combines
    # a judge's prompt-order variant id ("sec:r-s-o|fields:reversed"), with "|ask:free" (or another
    # elicitation) when a run holds the same prompt asked a second way
    variant: str | None = None
    granularity: str | None = None  # which fields are items: "leaf", "top", ...
    value: str | None = None  # "expected": the log-prob expected rating instead of the written one
    aggregate: str | None = None  # "min", "mean": field scores read as one document score

    def __post_init__(self) -> None:
        # a combination is of a set of scorers: its members are kept sorted, each once
        members = tuple(sorted({ScorerId.of(m) for m in self.members}))
        object.__setattr__(self, "members", members)
        if not isinstance(self.family, str) or not FAMILY_PATTERN.fullmatch(self.family):
            raise ValueError(f"family {self.family!r} must match {FAMILY_PATTERN.pattern}")
        if self.is_judge and members:
            raise ValueError(f"{self.family!r} is a judge rating: its bracket is a prompt variant, not scorers")
        if self.method is not None and not (self.is_combination and _WORD.fullmatch(self.method)):
            raise ValueError(f"method {self.method!r}: only a combination has one, a lower-case word")
        if self.variant is not None and (not self.is_judge or not self.variant or set(self.variant) & set("[]")):
            raise ValueError(f"variant {self.variant!r}: only a judge has a prompt variant, non-empty, no brackets")
        if self.granularity is not None and not _WORD.fullmatch(self.granularity):
            raise ValueError(f"granularity {self.granularity!r} must be a lower-case word")
        if self.value is not None and self.value not in VALUES:
            raise ValueError(f"value {self.value!r} is not one of {VALUES}")
        if self.aggregate is not None and self.aggregate not in AGGREGATES:
            raise ValueError(f"aggregate {self.aggregate!r} is not one of {AGGREGATES}")

    # -- what the name says (the grammar's rules in :mod:`construct_eval.kinds`; no registry asked)

    @property
    def is_judge(self) -> bool:
        """A judge's rating: its family is one of the judge modes' (``judge-doc``, ...)."""
        return self.family in JUDGE_FAMILIES

    @property
    def judge_mode(self) -> JudgeMode | None:
        return JUDGE_FAMILIES.get(self.family)

    @property
    def is_written_rating(self) -> bool:
        """A judge's written 1-10 rating (a value the judge wrote, not a log-prob expectation)."""
        return self.is_judge and self.value is None

    @property
    def uses_labels(self) -> bool:
        """Fitted on the labels, a reference only: its family ends ``-uses-labels``."""
        return self.family.endswith(USES_LABELS_SUFFIX)

    @property
    def is_combination(self) -> bool:
        """A combination of other scorers: its bracket lists them."""
        return bool(self.members)

    @property
    def level(self) -> Level:
        """Document or field scores: an aggregate reads fields as a document; a granularity, or a
        judge that rates fields, makes field scores; anything else scores documents."""
        if self.aggregate is not None:
            return Level.DOCUMENT
        if self.granularity is not None or self.judge_mode not in (None, JudgeMode.DOC):
            return Level.FIELD
        return Level.DOCUMENT

    @property
    def item_granularity(self) -> str | None:
        """Which fields its items are (``top`` when a field judge's name leaves it out); None for documents."""
        return None if self.level is Level.DOCUMENT else self.granularity or "top"

    # -- the name

    @property
    def name(self) -> str:
        out = self.family + (f":{self.method}" if self.method else "")
        if self.members:
            out += "[" + "+".join(m.name for m in self.members) + "]"
        out += f"[{self.variant}]" if self.variant else ""
        out += f"@{self.granularity}" if self.granularity else ""
        out += f":{self.value}" if self.value else ""
        return out + (f":{self.aggregate}" if self.aggregate else "")

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ScorerId):
            return self.name == other.name
        if isinstance(other, str):
            return self.name == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    def __lt__(self, other: ScorerId) -> bool:
        """Identities sort by name (the order of every table)."""
        return self.name < other.name

    def replace(self, **changes: Any) -> ScorerId:
        """This identity with some fields changed (``sid.replace(value="expected")``)."""
        return replace(self, **changes)

    @property
    def display(self) -> str:
        """A short label for figures and tables: a combination says how many scorers it combines;
        a prompt variant keeps only what differs from the default prompt (``judge-doc[reversed]``,
        ``judge-doc[o-s-r]``, ``judge-doc[ask:free]``), and the default itself reads ``original``.
        (:func:`~construct_eval.scorer_labels.display_name` says the same in a reader's words.)"""
        if self.is_combination:
            count = f"{len(self.members)} scorers"
            body = self.family + (f":{self.method}" if self.method else "") + f"[{count}]"
            return body + (f"@{self.granularity}" if self.granularity else "")
        if self.variant and "|" in self.variant:
            return replace(self, variant=_short_variant(self.variant)).name
        return self.name

    @classmethod
    def of(cls, scorer: ScorerId | str) -> ScorerId:
        """The identity itself, or the one a name encodes: for a function that takes either."""
        return scorer if isinstance(scorer, ScorerId) else cls.parse(scorer)

    @classmethod
    def parse(cls, name: str) -> ScorerId:
        """The identity a name encodes; a name that does not follow the grammar is refused, saying why.
        An identity is not a name: code holds one or the other, and asks an identity its fields."""
        if isinstance(name, ScorerId):
            raise TypeError(f"ScorerId.parse takes a scorer name, not the identity {name.name!r}")
        try:
            return cls._parse(name)
        except ValueError as exc:
            text = str(exc)
            raise ValueError(text if "scorer name" in text else f"scorer name {name!r}: {text}") from None

    @classmethod
    def _parse(cls, name: str) -> ScorerId:
        if not isinstance(name, str):
            raise ValueError(f"a scorer name is a string, not {type(name).__name__}")
        parts = _top_level(name)
        if not parts or parts[0][0] in ":@[":
            raise ValueError(f"a scorer name starts with its family: {name!r}")
        family = parts[0]
        combining = family not in JUDGE_FAMILIES  # a judge's bracket is its prompt variant, any other's its members
        fields: dict[str, Any] = {"family": family}
        last = -1
        for i, part in enumerate(parts[1:], start=1):
            word = part[1:]
            if part.startswith("["):
                slot, key, value = 1, "members" if combining else "variant", part[1:-1]
                if combining:
                    value = tuple(_split_members(value))
            elif part.startswith("@"):
                slot, key, value = 2, "granularity", word
            elif part.startswith(":") and word in VALUES:
                slot, key, value = 3, "value", word
            elif part.startswith(":") and word in AGGREGATES:
                slot, key, value = 4, "aggregate", word
            elif part.startswith(":") and combining and i + 1 < len(parts) and parts[i + 1].startswith("["):
                slot, key, value = 0, "method", word
            else:
                raise ValueError(f"unknown part {part!r} in scorer name {name!r} (the order is {_ORDER})")
            if slot <= last:
                raise ValueError(
                    f"{part!r} is out of place in scorer name {name!r}: the parts go in the order {_ORDER}"
                )
            last = slot
            fields[key] = value
        sid = cls(**fields)
        if sid.name != name:  # e.g. a member spelt in another order
            raise ValueError(f"scorer name {name!r} is not canonical: write {sid.name!r}")
        return sid

    @classmethod
    def judge(
        cls,
        mode: JudgeMode | str,
        *,
        granularity: str | None = None,
        variant: str | None = None,
        value: str | None = None,
        aggregate: str | None = None,
    ) -> ScorerId:
        """The identity of a judge scorer from a judgment row's mode (``doc``, ``field``, ``fields-joint``)."""
        return cls(judge_family(mode), granularity=granularity, variant=variant, value=value, aggregate=aggregate)


def _short_variant(variant: str) -> str:
    """``sec:o-s-r|fields:original`` -> ``o-s-r``: default parts dropped, order keys dropped."""
    kept = []
    for part in variant.split("|"):
        key, _, value = part.partition(":")
        if part in ("sec:r-s-o", "fields:original"):
            continue
        kept.append(value if key in ("sec", "fields") else part)
    return "|".join(kept) or "original"
