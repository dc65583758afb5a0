"""When a row of a table can rank scores: the project's one power rule.

A detection row (an AUROC over items with its document-bootstrap interval) is *underpowered*
where it has too few wrong or right items, too few documents to resample, or an interval too
wide to rank anything by. Every table that flags rows, every figure that draws a row hollow and
every notebook that says "underpowered" reads the rule here, so the three cannot drift apart.

>>> reasons(wrong=4, right=50, documents=30, width=0.12)
['4 wrong / 50 right (< 10 of a class)']
>>> reasons(wrong=40, right=400, documents=51, width=0.33)
['AUROC interval 0.33 wide (> 0.3)']
>>> too_wide(0.376, 0.704), too_wide(float("nan"), float("nan"))
(True, False)
"""

from __future__ import annotations

import math

MIN_CLASS_ITEMS = 10
"""A detection row with fewer wrong (or right) items than this is flagged underpowered."""
MIN_DOCUMENTS = 10
"""A document bootstrap over fewer documents than this is not an interval: no ranking rests on it."""
MAX_INTERVAL_WIDTH = 0.3
"""... and so is one whose AUROC interval is wider than this."""
MAX_DROPPED_SHARE = 0.05
"""Resamples without both classes are dropped from an interval; above this share of them the
interval is not printed (the remaining resamples are no longer the bootstrap distribution)."""


def too_wide(low: float, high: float) -> bool:
    """An interval wider than :data:`MAX_INTERVAL_WIDTH` (one with a bound that is not a number
    is no interval, and not too wide: the other reasons say why it is missing)."""
    return not (math.isnan(low) or math.isnan(high)) and high - low > MAX_INTERVAL_WIDTH


def reasons(*, wrong: int, right: int, documents: int, width: float = math.nan, documents_why: str = "") -> list[str]:
    """Why a row with ``wrong`` and ``right`` items over ``documents`` documents and an AUROC
    interval ``width`` wide cannot rank (empty if it can); ``documents_why`` follows the document
    rule's bound in its reason (": the document bootstrap is coarse")."""
    why = []
    if min(wrong, right) < MIN_CLASS_ITEMS:
        why.append(f"{wrong} wrong / {right} right (< {MIN_CLASS_ITEMS} of a class)")
    if documents < MIN_DOCUMENTS:
        why.append(f"{documents} documents (< {MIN_DOCUMENTS}{documents_why})")
    if width == width and width > MAX_INTERVAL_WIDTH:
        why.append(f"AUROC interval {width:.2f} wide (> {MAX_INTERVAL_WIDTH})")
    return why
