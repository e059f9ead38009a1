"""Confidence intervals from a bootstrap distribution (percentile, BCa) and analytic (Wilson).

Notation: ``theta_hat`` is the score on the data, ``theta_b`` (``b = 1..B``) on the
resamples, ``alpha = 1 - confidence_level``, ``Phi`` the standard normal CDF and ``q(p)``
the ``p``-quantile of the ``theta_b`` with linear interpolation (``numpy.percentile``'s
default, as ``scipy.stats.bootstrap`` uses).

percentile
    ``[q(alpha / 2), q(1 - alpha / 2)]`` (Efron & Tibshirani 1993, ch. 13).
percentile p-value (the inversion of the percentile interval, for the value 0)
    The smallest ``alpha`` at which the percentile interval still contains 0:
    ``p < alpha`` exactly when the interval at level ``1 - alpha`` excludes 0. With the
    ``theta_b`` sorted, ``d_(1) <= ... <= d_(B)``, and ``k = #{theta_b <= 0}``: ``p_lo = 0``
    when ``k = 0``, ``2`` when ``k = B``, else ``2 h / (B - 1)`` with
    ``h = (k - 1) + (0 - d_(k)) / (d_(k+1) - d_(k))`` (the interpolated position of 0, the
    quantile rule above read backwards); ``p_hi`` is the same on ``-theta_b``;
    ``p = min(1, p_lo, p_hi)`` (``B = 1``: 0 when the value is not 0, else 1). So ``p`` is
    about twice the share of resampled values beyond 0; 0 when they all lie on one side
    (the interval excludes 0 at every level).
BCa
    ``z0 = Phi^-1((#{theta_b < theta_hat} + #{theta_b == theta_hat} / 2) / B)``;
    ``a = sum_i (m - theta_(i))^3 / (6 (sum_i (m - theta_(i))^2)^(3/2))`` from the
    jackknife values ``theta_(i)`` (leave one unit out) with mean ``m``;
    ``alpha_1,2 = Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` for ``z = Phi^-1(alpha / 2)`` and
    ``Phi^-1(1 - alpha / 2)``; the interval is ``[q(alpha_1), q(alpha_2)]`` (Efron 1987;
    the formulas scipy.stats.bootstrap implements).
Wilson
    For ``k`` successes in ``n`` trials, ``p = k / n``, ``z = Phi^-1(1 - alpha / 2)``:
    ``(p + z^2 / (2n)) / (1 + z^2 / n) +- z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))``
    (Wilson 1927).

Degenerate cases return NaN bounds with a reason, never a patched value: a resample on
which the score is undefined (NaN); for BCa, all resampled values on one side of
``theta_hat`` (``z0`` infinite) or constant jackknife values (``a`` undefined). When
every resampled value is equal, the percentile interval is that single point, and the
reason says so.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from assay.metrics._params import check_confidence_level

__all__ = ["bca_interval", "percentile_interval", "percentile_p_value", "wilson_interval"]

_N = NormalDist()


def _check_level(confidence_level: float) -> float:
    return 1.0 - check_confidence_level(confidence_level)


def _undefined(theta_b: np.ndarray) -> str | None:
    bad = int(np.count_nonzero(~np.isfinite(theta_b)))
    if bad:
        return f"the score is undefined (NaN) on {bad} of {len(theta_b)} resamples"
    return None


def percentile_interval(theta_b: np.ndarray, confidence_level: float) -> tuple[float, float, str | None]:
    """Percentile interval of the bootstrap values ``theta_b``: ``(low, high, note)``."""
    alpha = _check_level(confidence_level)
    theta_b = np.asarray(theta_b, dtype=float)
    why = _undefined(theta_b)
    if why:
        return math.nan, math.nan, why
    if theta_b.size == 0:
        return math.nan, math.nan, "no resampled values (every resample was empty)"
    lo, hi = _percentile_bounds(theta_b, alpha)
    note = None
    if theta_b.size and np.all(theta_b == theta_b[0]):
        note = f"all {len(theta_b)} resampled values are equal ({theta_b[0]:.6g}): the interval is one point"
    return float(lo), float(hi), note


def _percentile_bounds(theta_b: np.ndarray, alpha: float) -> tuple[float, float]:
    """``(q(alpha / 2), q(1 - alpha / 2))``: the one computation of the percentile bounds.

    :func:`percentile_interval` and :func:`percentile_p_value` both use it, so the p-value
    inverts the very floating-point interval that is reported.
    """
    lo, hi = np.percentile(theta_b, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def _excludes_zero(theta_b: np.ndarray, alpha: float) -> bool:
    lo, hi = _percentile_bounds(theta_b, alpha)
    return lo > 0 or hi < 0


def percentile_p_value(theta_b: np.ndarray) -> float:
    """The p-value of the value 0 that inverts :func:`percentile_interval` (formula above).

    For every ``confidence_level`` ``c``, the interval ``percentile_interval(theta_b, c)``
    excludes 0 (``low > 0`` or ``high < 0``) exactly when ``p < 1 - c``, in floating point
    too: ``p`` is the largest ``alpha`` at which the computed interval still contains 0,
    found by bisection over the floats of ``[0, 1]`` on the interval's own computation (the
    formula above is its value in exact arithmetic, to within an ulp; the bisection relies on
    the computed interval narrowing as ``alpha`` grows, which
    ``tests/metrics/test_compare_p_value.py`` checks at the floats on both sides of ``p``,
    ties and subnormal values included). NaN when some
    ``theta_b`` is undefined (NaN, infinite) or there are none; the interval is then NaN too.
    Our own code: no library inverts a percentile interval.
    """
    x = np.sort(np.asarray(theta_b, dtype=float).ravel())
    if x.size == 0 or not np.all(np.isfinite(x)):
        return math.nan
    if _excludes_zero(x, 0.0):  # all on one side: every interval excludes 0
        return 0.0
    # alpha = 1 - confidence_level is 1.0 in floating point for a level below 2**-54: the top of the range
    if not _excludes_zero(x, 1.0):  # even the narrowest interval (the median) contains 0
        return 1.0
    # the set of alpha that exclude 0 is an upper ray: bisect on the ordered bit patterns of the floats
    lo, hi = 0, int(np.float64(1.0).view(np.int64))  # lo: contains 0; hi: excludes 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _excludes_zero(x, float(np.int64(mid).view(np.float64))):
            hi = mid
        else:
            lo = mid
    return float(np.int64(lo).view(np.float64))


def bca_interval(theta_b: np.ndarray, theta_hat: float, theta_jack: np.ndarray,
                 confidence_level: float) -> tuple[float, float, str | None]:
    """Bias-corrected and accelerated interval: ``(low, high, note)``."""
    alpha = _check_level(confidence_level)
    theta_b = np.asarray(theta_b, dtype=float)
    theta_jack = np.asarray(theta_jack, dtype=float)
    why = _undefined(theta_b)
    if why:
        return math.nan, math.nan, why
    if not math.isfinite(theta_hat):
        return math.nan, math.nan, "the score on the data is undefined (NaN)"
    if not np.all(np.isfinite(theta_jack)):
        return math.nan, math.nan, "the score is undefined on some jackknife subsets (BCa needs them)"
    B = len(theta_b)
    prop = (np.count_nonzero(theta_b < theta_hat) + 0.5 * np.count_nonzero(theta_b == theta_hat)) / B
    if prop <= 0 or prop >= 1:
        return math.nan, math.nan, ("BCa is undefined: all resampled values lie on one side of the score "
                                    "(bias correction z0 is infinite)")
    z0 = _N.inv_cdf(prop)
    d = theta_jack.mean() - theta_jack
    den = 6.0 * float(np.sum(d**2)) ** 1.5
    if den == 0:
        return math.nan, math.nan, "BCa is undefined: the jackknife values are all equal (acceleration is 0/0)"
    a = float(np.sum(d**3)) / den
    out = []
    for z in (_N.inv_cdf(alpha / 2), _N.inv_cdf(1 - alpha / 2)):
        denom = 1 - a * (z0 + z)
        out.append(_N.cdf(z0 + (z0 + z) / denom) if denom > 0 else (0.0 if z < 0 else 1.0))
    lo, hi = np.percentile(theta_b, [100 * out[0], 100 * out[1]])
    return float(lo), float(hi), None


def wilson_interval(successes: float, trials: float, confidence_level: float) -> tuple[float, float, str | None]:
    """Wilson score interval for a proportion ``successes / trials``: ``(low, high, note)``."""
    alpha = _check_level(confidence_level)
    if trials <= 0:
        return math.nan, math.nan, "no trials: the proportion is undefined"
    z = _N.inv_cdf(1 - alpha / 2)
    p = successes / trials
    denom = 1 + z * z / trials
    center = (p + z * z / (2 * trials)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return max(0.0, center - half), min(1.0, center + half), None
