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


def p_value(p: float) -> str:
    """A p-value as the prose writes it: ``= 0.114``, or ``< 0.0005`` where three decimals would
    write 0.

    >>> p_value(0.1142), p_value(0.0001)
    ('= 0.114', '< 0.0005')
    """
    return "< 0.0005" if p < 0.0005 else f"= {p:.3f}"


def p_bound(p: float) -> str:
    """A p-value at the bootstrap's floor as a bound: three decimals, rounded up, never below it.

    >>> p_bound(0.004997501249375312)
    '<= 0.005'
    """
    return f"<= {math.ceil(round(p * 1000, 6)) / 1000:.3f}"


def at_resample_floor(p: float, tests: int, resamples: float) -> bool:
    """Whether a Holm-adjusted bootstrap p is the smallest its resamples allow: 2 / (B + 1) times
    the m tests (no resample fell on the far side of 0), so the bound is all it says."""
    if not (resamples == resamples and resamples > 0):
        return False
    return math.isclose(p, min(1.0, tests * 2 / (resamples + 1)), rel_tol=1e-9)


def holm_p(p: float, tests: int, resamples: float) -> str:
    """A Holm-adjusted p with its family, the one wording of the findings and the captions:
    ``p = 0.145 after Holm over 30 tests``, or ``p <= 0.005 after Holm over 5 tests`` at the floor.

    >>> holm_p(0.2817, 5, 2000), holm_p(0.004997501249375312, 5, 2000)
    ('p = 0.282 after Holm over 5 tests', 'p <= 0.005 after Holm over 5 tests')
    """
    family = f"{tests} test{'' if tests == 1 else 's'}"
    return f"p {p_bound(p) if at_resample_floor(p, tests, resamples) else p_value(p)} after Holm over {family}"
