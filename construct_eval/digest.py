"""The one hash of the package: SHA-256 of UTF-8 text, as hex.

Resume keys, cache keys, prompt and template hashes and dataset fingerprints are all cut from
it (``[:16]``, ``[:24]``); its formula must never change, or every recorded run would be
judged again (``tests/test_recorded_runs_resume.py``).
"""

from __future__ import annotations

import hashlib


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
