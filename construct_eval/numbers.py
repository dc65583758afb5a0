"""Numbers as the project writes them in text: one interval formatter.

Every table, report and notebook that writes an estimate with its interval goes through
:func:`interval`, so "0.553 [0.503, 0.605]" reads the same everywhere and a bound that is not a
number never prints as ``nan``.

>>> interval(0.5532, 0.5026, 0.6053)
'0.553 [0.503, 0.605]'
>>> interval(-0.32, -0.381, -0.263, spec="+.3f")
'-0.320 [-0.381, -0.263]'
>>> interval(0.079, 0.034, 0.123, spec="+.3f", bounds="+.3f")
'+0.079 [+0.034, +0.123]'
>>> interval(0.433, float("nan"), float("nan"))
'0.433'
"""

from __future__ import annotations

import math


def interval(value: float, low: float, high: float, *, spec: str = ".3f", bounds: str | None = None) -> str:
    """``value [low, high]``, the value formatted by ``spec`` and the bounds by ``bounds`` (the
    value's spec without its sign unless named: a difference reads ``+0.079 [0.034, 0.123]``);
    the value alone where either bound is not a number (no interval was drawn)."""
    if math.isnan(float(low)) or math.isnan(float(high)):
        return f"{value:{spec}}"
    bound = bounds if bounds is not None else spec.lstrip("+")
    return f"{value:{spec}} [{low:{bound}}, {high:{bound}}]"
