"""The package's kinds of thing, with no imports of its own: what an item is (:class:`Level`), how
a judge is asked (:class:`JudgeMode`, in every spelling), and how a scorer family may be spelt.
The scorer registry declares scorers with them and the scorer identity (:mod:`.types`) reads the
registry, so they sit below both."""

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
