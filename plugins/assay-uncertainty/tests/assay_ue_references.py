"""Second implementations for the UE metric tests (a module on sys.path: its metric pickles by reference)."""

from __future__ import annotations

import math

import numpy as np

from assay.uncertainty import UEMetric


# --------------------------------------------------------------------------- second implementations
def ref_auc(u, q):
    """P(u_fail > u_ok) + P(u_fail = u_ok) / 2 over all failure / success pairs; NaN for one class."""
    fail, ok = u[q == 0], u[q == 1]
    if not len(fail) or not len(ok):
        return math.nan
    d = fail[:, None] - ok[None, :]
    return float(((d > 0) + 0.5 * (d == 0)).mean())


def ref_prr(u, q):
    """LM-Polygraph's PRR for distinct u and binary q, max_rejection 1: (raw, normalized)."""
    n = len(u)
    k = np.arange(1, n + 1)
    raw = np.mean(np.cumsum(q[np.argsort(u)]) / k)
    oracle = np.mean(np.cumsum(np.sort(q)[::-1]) / k)
    random = q.mean()
    return raw, (raw - random) / (oracle - random)


def ref_indices(n, n_resamples, seed):
    """The replicates of assay's Poisson bootstrap for a small problem (n <= 4096, one block), as index arrays.

    Written out from the documented scheme: per-position weights Poisson(1), the uniforms of
    ``Philox(SeedSequence([seed, 0, 0]))`` (row-major ``(R, 4096)``) inverted through the Poisson(1)
    CDF (scipy's); replicate ``b`` repeats item ``i`` ``w_bi`` times; replicates that drew no item are
    left out.
    """
    from scipy.stats import poisson

    u = np.random.Generator(np.random.Philox(np.random.SeedSequence([seed, 0, 0]))).random((n_resamples, 4096))
    w = np.searchsorted(poisson(1.0).cdf(np.arange(30)), u, side="right")[:, :n]
    return [np.repeat(np.arange(n), row) for row in w if row.sum()]


def percentile(values, level=0.95):
    values = np.asarray(values)
    if not np.all(np.isfinite(values)):
        return math.nan, math.nan
    a = 1 - level
    lo, hi = np.percentile(values, [100 * a / 2, 100 * (1 - a / 2)])
    return float(lo), float(hi)


def percentile_p(values):
    """The p-value of 0 that inverts :func:`percentile`, written out: sorted draws ``d``, ``k = #{d <= 0}``,
    ``0`` sits at position ``h = (k - 1) + (0 - d[k-1]) / (d[k] - d[k-1])`` of ``B - 1`` (the linear quantile
    rule read backwards), ``p_lo = 2 h / (B - 1)`` (0 when ``k = 0``, 2 when ``k = B``); the same on ``-d``;
    ``min(1, p_lo, p_hi)``."""
    d = np.sort(np.asarray(values, dtype=float))
    B = len(d)

    def side(x):
        x = np.sort(x)
        k = int(np.count_nonzero(x <= 0))
        if k in (0, B):
            return 0.0 if k == 0 else 2.0
        return 2 * ((k - 1) + (0 - x[k - 1]) / (x[k] - x[k - 1])) / (B - 1)

    return min(1.0, side(d), side(-d))


def data(n=40, seed=3):
    rng = np.random.default_rng(seed)
    q = np.array([0, 1] * (n // 2), dtype=float)
    u = rng.normal(size=n) - 0.8 * q  # failures a little more uncertain
    return u, q


class MeanUncertainty(UEMetric):
    """A custom UE metric with an extra score: the mean uncertainty of failures and of successes."""

    name = "mean_u_fail"
    extra_scores = ("mean_u_ok",)

    def _scores(self, u, q):
        return {"mean_u_fail": float(u[q == 0].mean()) if (q == 0).any() else math.nan,
                "mean_u_ok": float(u[q == 1].mean()) if (q == 1).any() else math.nan}
