"""Plain data shared by every layer: what a judge (or any scorer) is shown about one document.

It lives below the storage and judging layers so that a run folder can hand documents to a
scorer without importing the judge (the storage layer imports no domain code).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from construct_eval.digest import sha256_hex


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


class Level(StrEnum):
    """What an item is: a whole document or one field of it."""

    DOCUMENT = "document"
    FIELD = "field"


class JudgeMode(StrEnum):
    """How the judge is asked (a judgment row's ``mode``)."""

    DOC = "doc"  # one rating for the whole output
    FIELD = "field"  # one call per field, the other fields ignored
    FIELDS_JOINT = "fields-joint"  # one call returning {field: {explanation, rating}}


MODE_ALIASES = {
    "doc": JudgeMode.DOC,
    "document": JudgeMode.DOC,
    "field": JudgeMode.FIELD,
    "fields": JudgeMode.FIELD,
    "fields-joint": JudgeMode.FIELDS_JOINT,
    "joint": JudgeMode.FIELDS_JOINT,
}
"""Every spelling of a judge mode (the CLI's ``--mode doc,fields``; rows and keys say ``field``)."""


def elicitation_of(judgment: Mapping[str, Any]) -> str:
    """How a judgment row's rating was asked for: its ``constrained`` label (``grammar:rating-only``
    for the rating forced alone, ``none`` for the free recipe). The same prompt asked two ways
    is two scorers (:mod:`construct_eval.analysis.collect`), never paired as one (``bias``)."""
    return str(judgment.get("constrained") or "none")


def judge_modes(modes: str | Sequence[str]) -> list[JudgeMode]:
    """The judge modes a comma list or sequence names, in any of their spellings."""
    parts = modes.split(",") if isinstance(modes, str) else list(modes)
    out = []
    for part in (p.strip() for p in parts):
        if part not in MODE_ALIASES:
            raise ValueError(f"unknown mode {part!r}; use doc, fields or fields-joint")
        out.append(MODE_ALIASES[part])
    return out


JUDGE_FAMILIES = {JudgeMode.DOC: "judge-doc", JudgeMode.FIELD: "judge-field", JudgeMode.FIELDS_JOINT: "judge-joint"}
"""The scorer family of each judge mode (another mode ``m`` is ``judge-m``)."""
LABEL_USING_FAMILIES = ("field-prior-uses-labels", "fitted-oof-uses-labels")
"""Baselines fitted on the labels: shown for reference, never a scorer a user has at run time."""
COMBINING_FAMILIES = ("combo", "fitted-oof-uses-labels")
"""Families whose bracket lists member scorers (``combo:rank-mean[a+b]``), not a prompt variant."""
AGGREGATES = ("min", "mean")


def _short_variant(variant: str) -> str:
    """``sec:o-s-r|fields:original`` -> ``o-s-r``: default parts dropped, order keys dropped."""
    kept = []
    for part in variant.split("|"):
        key, _, value = part.partition(":")
        if part in ("sec:r-s-o", "fields:original"):
            continue
        kept.append(value if key in ("sec", "fields") else part)
    return "|".join(kept) or "original"


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


def _split_members(inner: str) -> tuple[str, ...]:
    members, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch == "["
        depth -= ch == "]"
        if ch == "+" and depth == 0:
            members.append(inner[start:i])
            start = i + 1
    members.append(inner[start:])
    return tuple(members)


@dataclass(frozen=True)
class ScorerId:
    """A scorer's identity: what its name string encodes, as fields.

    Names in run files and tables stay the strings they always were (``name`` rebuilds them
    exactly, ``parse`` reads them back), so old run files and tables still read; code asks the
    fields instead of cutting strings. Examples::

        judge-doc                                  the written document rating
        judge-doc[sec:o-s-r|fields:original]:expected   its log-prob expected rating, another order
        judge-field@leaf:expected:min              per-leaf expected ratings, least trusted as document score
        consistency:min    consistency@leaf        a score row's document aggregate / its fields
        combo:rank-mean[consistency@leaf+token_logprob@leaf]@leaf
        field-prior-uses-labels@top                a baseline that uses the labels
    """

    family: str
    method: str | None = None  # how a combination combines ("rank-mean")
    members: tuple[str, ...] = ()  # the scorers a combination combines
    # a judge's prompt-order variant id ("sec:r-s-o|fields:reversed"), with "|ask:free" (or another
    # elicitation) when a run holds the same prompt asked a second way
    variant: str | None = None
    granularity: str | None = None  # which fields are items: "leaf", "top", ...
    value: str | None = None  # "expected": the log-prob expected rating instead of the written one
    aggregate: str | None = None  # "min", "mean": field scores read as one document score

    @property
    def is_judge(self) -> bool:
        return self.family.startswith("judge-")

    @property
    def is_written_rating(self) -> bool:
        """A judge's written 1-10 rating (a value the judge wrote, not a log-prob expectation)."""
        return self.is_judge and self.value is None

    @property
    def uses_labels(self) -> bool:
        return self.family in LABEL_USING_FAMILIES

    @property
    def is_combination(self) -> bool:
        return self.family in COMBINING_FAMILIES

    @property
    def name(self) -> str:
        if self.is_combination:
            body = self.family + (f":{self.method}" if self.method else "")
            return body + f"[{'+'.join(self.members)}]" + (f"@{self.granularity}" if self.granularity else "")
        out = self.family
        if self.is_judge:
            out += f"@{self.granularity}" if self.granularity else ""
            out += f"[{self.variant}]" if self.variant else ""
            out += f":{self.value}" if self.value else ""
            return out + (f":{self.aggregate}" if self.aggregate else "")
        out += f":{self.aggregate}" if self.aggregate else ""
        out += f":{self.value}" if self.value else ""
        return out + (f"@{self.granularity}" if self.granularity else "")

    def __str__(self) -> str:
        return self.name

    @property
    def display(self) -> str:
        """A short label for figures and tables: a combination says how many scorers it combines;
        a prompt variant keeps only what differs from the default prompt (``judge-doc[reversed]``,
        ``judge-doc[o-s-r]``, ``judge-doc[ask:free]``), and the default itself reads ``original``."""
        if self.is_combination:
            return replace(self, members=(f"{len(self.members)} scorers",)).name
        if self.variant and "|" in self.variant:
            return replace(self, variant=_short_variant(self.variant)).name
        return self.name

    @classmethod
    def parse(cls, name: str) -> ScorerId:
        """The identity a name encodes; ``parse(n).name == n`` for every name the package writes."""
        parts = _top_level(name)
        if not parts or parts[0][0] in ":@[":
            raise ValueError(f"a scorer name starts with its family: {name!r}")
        fields: dict[str, Any] = {"family": parts[0]}
        combining = parts[0] in COMBINING_FAMILIES
        for part in parts[1:]:
            if part.startswith("@"):
                fields["granularity"] = part[1:]
            elif part.startswith("["):
                if combining:
                    fields["members"] = _split_members(part[1:-1])
                else:
                    fields["variant"] = part[1:-1]
            elif part.startswith(":"):
                word = part[1:]
                if combining and "members" not in fields:
                    fields["method"] = word
                elif word in AGGREGATES:
                    fields["aggregate"] = word
                elif word == "expected":
                    fields["value"] = word
                else:
                    raise ValueError(f"unknown part {part!r} in scorer name {name!r}")
            else:
                raise ValueError(f"cannot read {part!r} in scorer name {name!r}")
        return cls(**fields)

    @classmethod
    def judge(
        cls,
        mode: str,
        *,
        granularity: str | None = None,
        variant: str | None = None,
        value: str | None = None,
        aggregate: str | None = None,
    ) -> ScorerId:
        """The identity of a judge scorer from a judgment row's mode (``doc``, ``field``, ...)."""
        family = JUDGE_FAMILIES.get(JudgeMode(mode), f"judge-{mode}") if mode in set(JudgeMode) else f"judge-{mode}"
        return cls(family, granularity=granularity, variant=variant, value=value, aggregate=aggregate)
