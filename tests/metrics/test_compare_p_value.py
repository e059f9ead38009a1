"""The verdict of ``assay.compare`` and the p-value printed beside it come from one test.

``Comparison.p_value`` inverts the paired percentile-bootstrap interval that decides the
verdict: the interval at level ``c`` excludes 0 exactly when ``p_value < 1 - c``. The
expected values here are derived by hand (the quantile rule read backwards) or from
bootstrap draws written out in the test, never from the code under test.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from assay_metric_samples import SampleAccuracy, SampleMedianAE

import assay
from assay.metrics.intervals import percentile_interval, percentile_p_value
from assay.metrics.significance import format_p_value


def hand_p(d):
    """The documented formula: ``min(1, p_lo, p_hi)``, ``p_lo = 2 h / (B - 1)`` at the position ``h`` of 0."""
    d = np.sort(np.asarray(d, dtype=float))
    B = len(d)
    if B == 1:
        return 0.0 if d[0] != 0 else 1.0

    def side(x):
        x = np.sort(x)
        k = int(np.count_nonzero(x <= 0))
        if k == 0:
            return 0.0
        if k == B:
            return 2.0
        h = (k - 1) + (0 - x[k - 1]) / (x[k] - x[k - 1])
        return 2 * h / (B - 1)

    return min(1.0, side(d), side(-d))


def excludes(d, level):
    lo, hi, _ = percentile_interval(d, level)
    return lo > 0 or hi < 0


def levels_around(p):
    """Confidence levels whose ``1 - c`` lies on either side of ``p``, at the nearest floats."""
    out, below, above = [1 - p], 1 - p, 1 - p
    for _ in range(4):
        below, above = math.nextafter(below, 0), math.nextafter(above, 1)
        out += [below, above]
    return [c for c in out if 0 < c < 1]


# --------------------------------------------------------------------------- the p-value by hand
@pytest.mark.parametrize("boot,expected", [
    # B = 5, one value <= 0: 0 sits at position h = 0 + (0 - -1) / (1 - -1) = 0.5 of 4: p = 2 * 0.5 / 4
    ([-1, 1, 2, 3, 4], 0.25),
    ([4, 3, -1, 2, 1], 0.25),                      # order of the draws does not matter
    ([-4, -3, -2, -1, 1], 0.25),                   # the mirror image
    # ties at 0: the last 0 is at position 1 of 3, so the interval excludes 0 once alpha / 2 * 3 > 1
    ([0, 0, 1, 1], 2 / 3),
    ([-2, 0, 0, 3], 1.0),                          # the median is 0: no interval excludes 0
    ([0, 0, 0], 1.0),
    ([0.5, 1, 2], 0.0),                            # all on one side: every interval excludes 0
    ([-3.0], 0.0),
    ([0.0], 1.0),
    # B = 11, 2 values below 0: h = 1 + (0 - -1) / (2 - -1) = 4 / 3, p = 2 * (4 / 3) / 10
    ([-5, -1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 4 / 15),
])
def test_percentile_p_value_by_hand(boot, expected):
    p = percentile_p_value(np.array(boot, dtype=float))
    assert p == pytest.approx(expected, abs=1e-15)
    assert p == pytest.approx(hand_p(boot), abs=1e-15)


def test_the_hand_example_is_the_boundary_of_the_interval():
    boot = np.array([-1, 1, 2, 3, 4], dtype=float)
    # at alpha = 0.25 the lower bound is q(0.125) = -1 + 0.5 * 2 = 0: 0 is inside; any larger alpha excludes it
    assert percentile_interval(boot, 0.75)[0] == 0.0
    assert percentile_interval(boot, 0.7)[0] > 0
    assert not excludes(boot, 0.8) and excludes(boot, 0.7)


@pytest.mark.parametrize("bad", [[np.nan, 1.0], [np.inf, 1.0, 2.0], []])
def test_undefined_draws_give_nan_like_the_interval(bad):
    assert math.isnan(percentile_p_value(np.array(bad, dtype=float)))
    lo, hi, why = percentile_interval(np.array(bad, dtype=float), 0.95)
    assert math.isnan(lo) and math.isnan(hi) and why


# --------------------------------------------------------------------------- the equivalence, exactly
def _draws(rng, kind, B):
    if kind == 0:
        return rng.normal(rng.normal(0, 0.5), 1, B)
    if kind == 1:  # an accuracy difference: few distinct values, many exact zeros
        return rng.integers(-3, 5, B) / 20
    if kind == 2:
        return rng.choice([-1.0, 0.0, 1.0], B)
    if kind == 3:  # 0 placed exactly on a draw
        d = np.sort(rng.normal(0, 1, B))
        return d - d[int(rng.integers(0, B))]
    return rng.choice([-1e-300, 5e-324, -5e-324, 0.0, 1e300], B)  # subnormals and huge values


@pytest.mark.parametrize("seed", range(8))
def test_interval_excludes_zero_iff_p_below_alpha(seed):
    rng = np.random.default_rng(seed)
    checked = 0
    for t in range(150):
        kind, B = t % 5, int(rng.integers(1, 120))
        d = _draws(rng, kind, B)
        p = percentile_p_value(d)
        assert 0 <= p <= 1
        if kind != 4:  # the formula in floats; the subnormal case is exact only on the interval's own floats
            assert p == pytest.approx(hand_p(d), abs=1e-12)
        levels = levels_around(p) + [0.5, 0.8, 0.9, 0.95, 0.99, 0.999, *rng.random(5)]
        for c in levels:
            assert excludes(d, c) == (p < 1 - c), (kind, B, p, c)
            checked += 1
    assert checked > 1500


def test_every_interval_of_integer_positions_agrees():
    # B - 1 = 40 and alpha / 2 * 40 an integer for alpha = 0.05, 0.1, ...: 0 exactly on a draw, at the boundary
    for k in range(1, 40):
        d = np.arange(41, dtype=float) - k
        p = percentile_p_value(d)
        assert p == pytest.approx(2 * k / 40 if k <= 20 else 2 * (40 - k) / 40, abs=1e-15)
        for c in levels_around(p):
            assert excludes(d, c) == (p < 1 - c)


# --------------------------------------------------------------------------- compare uses it
def _poisson_indices(n, n_resamples, seed):
    """assay's Poisson bootstrap (n <= 4096), written out: weights Poisson(1) per position from the uniforms of
    ``Philox(SeedSequence([seed, 0, 0]))`` (row-major ``(R, 4096)``) through the Poisson(1) CDF; empty left out."""
    from scipy.stats import poisson

    u = np.random.Generator(np.random.Philox(np.random.SeedSequence([seed, 0, 0]))).random((n_resamples, 4096))
    w = np.searchsorted(poisson(1.0).cdf(np.arange(30)), u, side="right")[:, :n]
    return [np.repeat(np.arange(n), row) for row in w if row.sum()]


def test_compare_p_value_counts_the_bootstrap_draws_by_hand():
    # a non-additive metric (median absolute error): every replicate re-runs it on the drawn instances
    rng = np.random.default_rng(7)
    n = 60
    truth = rng.normal(0, 1, n)
    pa = truth + rng.normal(0, 1.0, n)
    pb = truth + rng.normal(0, 0.8, n)
    refs = [[float(x)] for x in truth]
    ra = assay.evaluate(pa.tolist(), refs, metrics=[SampleMedianAE()], n_resamples=0)
    rb = assay.evaluate(pb.tolist(), refs, metrics=[SampleMedianAE()], n_resamples=0)
    c = assay.compare(ra, rb, n_resamples=400, seed=11)
    ea, eb = np.abs(pa - truth), np.abs(pb - truth)
    boot = np.array([np.median(eb[i]) - np.median(ea[i]) for i in _poisson_indices(n, 400, 11)])
    assert (c.ci_low, c.ci_high) == pytest.approx(tuple(np.percentile(boot, [2.5, 97.5])), abs=1e-12)
    # the p-value: where 0 falls among the sorted draws, read through the linear quantile rule
    srt = np.sort(boot)
    k = int(np.count_nonzero(srt <= 0))
    assert 0 < k < len(srt)
    h = (k - 1) + (0 - srt[k - 1]) / (srt[k] - srt[k - 1])
    p_lo = 2 * h / (len(srt) - 1)
    m = int(np.count_nonzero(srt >= 0))
    h_hi = (m - 1) + srt[len(srt) - m] / (srt[len(srt) - m] - srt[len(srt) - m - 1])
    p_hi = 2 * h_hi / (len(srt) - 1)
    assert c.p_value == c.p_value_percentile == pytest.approx(min(1.0, p_lo, p_hi), abs=1e-12)
    assert c.significant == (c.p_value < 0.05)
    # roughly twice the share of draws beyond 0
    assert c.p_value == pytest.approx(2 * min(k, m) / len(srt), abs=2 / len(srt) + 1e-9)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_significant_is_exactly_p_below_alpha_over_seeds(seed, level):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(15, 60))
    a = (rng.random(n) < 0.6).astype(int)
    b = np.where(rng.random(n) < 0.15 + 0.02 * seed, 1 - a, a)
    refs = [[1]] * n
    ra = assay.evaluate(a.tolist(), refs, metrics=[SampleAccuracy()], n_resamples=0)
    rb = assay.evaluate(b.tolist(), refs, metrics=[SampleAccuracy()], n_resamples=0)
    c = assay.compare(ra, rb, n_resamples=int(rng.integers(50, 400)), confidence_level=level, seed=seed)
    assert c.significant == (c.ci_low > 0 or c.ci_high < 0) == (c.p_value < 1 - level)
    assert (c.better is not None) == c.significant
    _assert_line_agrees(c)


def _assert_line_agrees(c):
    """The verdict, as printed, quotes a p-value and alpha that compare as its decision says."""
    for text in (c.verdict, str(c), c.to_dict()["verdict"]):
        m = re.search(r"p = ([0-9.e+-]+) (<|>=) ([0-9.e+-]+)\)", text)
        assert m, text
        p, op, alpha = float(m.group(1)), m.group(2), float(m.group(3))
        assert (op == "<") == c.significant == (p < alpha)
        assert ("is better" in text) == c.significant
    shown = re.search(r"p-value: ([0-9.e+-]+) \(inverts that interval", str(c))
    assert shown and (float(shown.group(1)) < 1 - c.confidence_level) == c.significant


def test_a_p_value_just_below_alpha_is_not_printed_as_alpha():
    # 0.0499999 would print as 0.050 with 3 decimals, beside "excludes 0": the digits grow until they compare right
    assert format_p_value(0.04999999, 0.05) == ("0.04999999", "0.05")
    assert format_p_value(0.05, 0.05) == ("0.05", "0.05")
    assert format_p_value(0.012, 1 - 0.95) == ("0.012", "0.05")
    alpha = 1 - 0.95  # 0.050000000000000044 in floating point
    p = math.nextafter(alpha, 0)
    ps, als = format_p_value(p, alpha)
    assert float(ps) < float(als) and float(ps) == p
    ps, als = format_p_value(alpha, alpha)
    assert float(ps) >= float(als)
    assert format_p_value(0.0, 0.05) == ("0", "0.05")


def test_headline_p_value_is_the_interval_one_and_the_others_are_labelled():
    a = [0, 0, 1] + [1] * 17
    b = [1, 1, 0] + [1] * 17
    refs = [[1]] * 20
    ra = assay.evaluate(a, refs, metrics=[SampleAccuracy()], n_resamples=0)
    rb = assay.evaluate(b, refs, metrics=[SampleAccuracy()], n_resamples=0)
    c = assay.compare(ra, rb, n_resamples=300, seed=0)
    d = c.to_dict()
    assert d["p_value"] == d["p_value_percentile"] == c.p_value
    assert {"p_value_bootstrap", "p_value_randomization"} <= set(d)
    text = str(c)
    assert "second tests, not deciding" in text and "(approximate randomization)" in text
    assert "(shifted bootstrap)" in text
    _assert_line_agrees(c)
