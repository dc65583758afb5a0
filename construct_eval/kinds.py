"""The package's kinds of thing, with no imports of its own: what an item is (:class:`Level`), how
a judge is asked (:class:`JudgeMode`, in every spelling), and how a scorer family may be spelt and
what its spelling says (a judge's rating, a baseline that uses the labels). The scorer identity
(:mod:`.types`) reads a name by these rules alone, and the scorer registry declares scorers that
keep them, so they sit below both."""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum


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


def judge_modes(modes: str | Sequence[str]) -> list[JudgeMode]:
    """The judge modes a comma list or sequence names, in any of their spellings."""
    parts = modes.split(",") if isinstance(modes, str) else list(modes)
    out = []
    for part in (p.strip() for p in parts):
        if part not in MODE_ALIASES:
            raise ValueError(f"unknown mode {part!r}; use doc, fields or fields-joint")
        out.append(MODE_ALIASES[part])
    return out


FAMILY_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
"""What a family may be spelt with: none of the grammar's marks ``: @ [ ] + |`` and no space."""


JUDGE_FAMILIES = {
    "judge-doc": JudgeMode.DOC,
    "judge-field": JudgeMode.FIELD,
    "judge-joint": JudgeMode.FIELDS_JOINT,
}
"""The family of each judge mode's ratings: a judge rating is known by its name, and only these
families are judges (the registry refuses any other ``judge-`` family)."""

USES_LABELS_SUFFIX = "-uses-labels"
"""The end of every family fitted on the labels (``field-prior-uses-labels``): a reference a user
never has at run time says so in its name, in every table and file it appears in."""


def judge_family(mode: JudgeMode | str) -> str:
    """The family of a judge mode's ratings (``doc`` -> ``judge-doc``), in any spelling of the mode."""
    wanted = MODE_ALIASES.get(str(mode)) if not isinstance(mode, JudgeMode) else mode
    if wanted is None:
        raise ValueError(f"unknown mode {mode!r}; use doc, fields or fields-joint")
    return next(family for family, m in JUDGE_FAMILIES.items() if m == wanted)
