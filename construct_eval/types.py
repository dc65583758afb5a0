"""Plain data shared by every layer: what a judge (or any scorer) is shown about one document.

It lives below the storage and judging layers so that a run folder can hand documents to a
scorer without importing the judge (the storage layer imports no domain code).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def output_hash(output: Any) -> str:
    """The first 16 hex digits of the SHA-256 of the output's canonical JSON: part of every resume
    key, so it must never change (tests/test_recorded_runs_resume.py)."""
    canonical = json.dumps(output, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


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
