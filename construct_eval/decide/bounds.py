"""Valid p-values for "the risk at this threshold exceeds alpha", and the fixed-sequence test.

Learn-then-Test (Angelopoulos, Bates, Candès, Jordan and Lei 2021, arXiv 2110.01052) turns risk
control into multiple testing: for each candidate threshold, the null hypothesis is "its risk is
above alpha"; a valid p-value per threshold and a procedure that controls the family-wise error
rate at delta give a set of thresholds whose risk is at most alpha simultaneously with
probability at least 1 - delta. Two p-values are used here:

- :func:`binomial_pvalue`: errors among n accepted items, each wrong with probability r, are
  Binomial(n, r); under the null r >= alpha, P(Bin(n, alpha) <= k) is a valid p-value (scipy's
  binomial tail). This is the selective-risk test of Geifman and El-Yaniv (arXiv 1705.08500).
- :func:`hb_pvalue`: the Hoeffding-Bentkus p-value for the mean of n independent losses in
  [0, 1] (LTT, Proposition 3 of arXiv 2110.01052): the minimum of Hoeffding's and Bentkus's
  tail bounds. It ignores the losses' variance, so it is weak when they vary little.
- :func:`wsr_pvalue`: the betting p-value of Waudby-Smith and Ramdas (arXiv 2010.09686), which
  LTT also uses: a bettor's capital under the null is a nonnegative supermartingale, so by
  Ville's inequality 1 / (its running maximum) is a valid p-value; it adapts to the variance.

:func:`fixed_sequence` tests the thresholds in an order fixed without looking at the labels
(strictest first) and stops at the first it cannot reject: each test at level delta, the
family-wise error rate is at most delta.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats


def binomial_pvalue(errors: object, n: object, alpha: float) -> np.ndarray:
    """P(Bin(n, alpha) <= errors), elementwise: small when ``errors`` among ``n`` accepted items is
    well below ``alpha * n``. Where nothing is accepted (n = 0) there is nothing to test: 1.0."""
    _check_alpha(alpha)
    k = np.floor(np.asarray(errors, dtype=float) + 1e-9)
    m = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        p = stats.binom.cdf(k, np.maximum(m, 1), alpha)
    return np.where(m > 0, p, 1.0)


def hb_pvalue(mean: object, n: int, alpha: float) -> np.ndarray:
    """Hoeffding-Bentkus p-value of H0: E[loss] >= alpha from the mean of ``n`` independent losses in
    [0, 1], elementwise over ``mean``:
    min(exp(-n h1(min(mean, alpha), alpha)), e * P(Bin(n, alpha) <= ceil(n * mean))),
    with h1(a, b) = a log(a/b) + (1-a) log((1-a)/(1-b)) the Bernoulli relative entropy."""
    _check_alpha(alpha)
    mu = np.asarray(mean, dtype=float)
    if n <= 0:
        return np.ones_like(mu)
    if np.any(mu < -1e-12) or np.any(mu > 1 + 1e-12):
        raise ValueError(f"the Hoeffding-Bentkus p-value needs losses in [0, 1]; a mean is {mu.min()}..{mu.max()}")
    a = np.clip(np.minimum(mu, alpha), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        h1 = np.where(a > 0, a * np.log(a / alpha), 0.0) + np.where(a < 1, (1 - a) * np.log((1 - a) / (1 - alpha)), 0.0)
    hoeffding = np.exp(-n * h1)
    bentkus = math.e * stats.binom.cdf(np.ceil(n * mu - 1e-9), n, alpha)
    return np.minimum(1.0, np.minimum(hoeffding, bentkus))


def wsr_pvalue(losses: object, alpha: float, *, delta: float = 0.1, cap: float = 0.75) -> np.ndarray:
    """Betting p-value of H0: E[loss] >= alpha, per column of ``losses`` (n rows in [0, 1], in an
    order that does not depend on them).

    The capital K_t = prod_{i <= t} (1 - lambda_i (X_i - alpha)) with predictable bets
    lambda_i = min(sqrt(2 log(1/delta) / (n var_{i-1})), cap / (1 - alpha)) stays >= 0 and is a
    supermartingale under H0; p = min(1, 1 / max_t K_t). Running mean and variance start at 1/2
    and 1/4 (Waudby-Smith and Ramdas 2020, section 5).
    """
    _check_alpha(alpha)
    x = np.asarray(losses, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    n = x.shape[0]
    if n == 0:
        return np.ones(x.shape[1])
    if np.any(x < -1e-12) or np.any(x > 1 + 1e-12):
        raise ValueError("the betting p-value needs losses in [0, 1]")
    t = np.arange(1, n + 1, dtype=float)[:, None]
    mu = (0.5 + np.cumsum(x, axis=0)) / (t + 1)
    var = (0.25 + np.cumsum((x - mu) ** 2, axis=0)) / (t + 1)
    var_prev = np.vstack([np.full((1, x.shape[1]), 0.25), var[:-1]])
    lam = np.minimum(np.sqrt(2 * math.log(1 / delta) / (n * var_prev)), cap / (1 - alpha))
    log_k = np.cumsum(np.log1p(-lam * (x - alpha)), axis=0)
    return np.minimum(1.0, np.exp(-np.max(log_k, axis=0)))


def clopper_pearson_upper(errors: float, n: float, delta: float) -> float:
    """The one-sided 1 - delta upper confidence bound on a binomial rate (exact)."""
    if n <= 0:
        return 1.0
    k = math.floor(errors + 1e-9)
    if k >= n:
        return 1.0
    return float(stats.beta.ppf(1 - delta, k + 1, int(n) - k))


def upper_bound(pvalue_at: Callable[[float], float], delta: float, *, tol: float = 1e-5) -> float:
    """The smallest level a in (0, 1) whose null "risk >= a" is rejected at ``delta``: a 1 - delta
    upper confidence bound, found by bisection (the p-values here fall as a grows)."""
    lo, hi = 0.0, 1.0
    if pvalue_at(1.0 - 1e-9) > delta:
        return 1.0
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if pvalue_at(max(mid, 1e-9)) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def fixed_sequence(pvalues: Sequence[float], delta: float) -> int:
    """How many hypotheses, tested in the given order at level ``delta``, are rejected before the
    first that is not (0 when the first is not). Controls the family-wise error rate at delta."""
    for i, p in enumerate(pvalues):
        if not p <= delta:
            return i
    return len(pvalues)


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def check_levels(alpha: float, delta: float) -> None:
    """Both levels in (0, 1), with a clear error otherwise."""
    _check_alpha(alpha)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
