"""Risk-coverage metrics: AURC, E-AURC, AUGRC, E-AUGRC, RCC-AUC, risk at coverage, coverage at risk.

Orientation: ``u`` higher = more uncertain, ``q`` higher = better, risk ``r = 1 - q``.
Examples are ordered by increasing ``u`` (most confident first). For the first ``k``:
selective risk ``R_k = sum(r) / k``, coverage ``k / N``, generalized risk
``G_k = sum(r) / N``. Ties in ``u`` are grouped: curve points exist only at the end of a
tie group; where every ``k`` is needed, the cumulative risk is interpolated linearly inside
a tie group (the expectation over the orders of the tied examples). So no value depends
on the input order. Definitions follow CONVENTIONS.md ("Risk-coverage family").

References: Geifman & El-Yaniv 2017 (AURC, E-AURC); Jaeger et al. 2023 / fd-shifts
(AURC conventions); Traub et al. 2024 (AUGRC); Vashurin et al. 2024 / LM-Polygraph (RCC-AUC).
"""

from __future__ import annotations

import math

import numpy as np

from assay.uncertainty.base import UEMetric
from assay.validation import check_choice, check_number, undefined_metric
from assay_uncertainty._curves import cumulative_at, group_ends, is_binary, minmax_normalize
from assay_uncertainty._xp import TensorUEMetric, device, f64, flatnonzero, mean, namespace, scalar

__all__ = [
    "AUGRC", "AUGRC_CONVENTIONS", "AURC", "CONVENTIONS", "EAUGRC", "EAURC", "AURCAchievable", "CoverageAtRisk",
    "EAURCAchievable", "RCCAUC", "RiskAtCoverage", "aurc", "aurc_achievable", "aurc_and_e_aurc", "augrc", "e_aurc",
    "e_aurc_achievable", "e_augrc", "rcc_auc",
]

#: the accepted values of ``convention=`` for AURC / E-AURC
CONVENTIONS = ("fd-shifts", "torch-uncertainty", "values", "lm-polygraph")


def _check_convention(convention: str, allowed: tuple[str, ...] = CONVENTIONS) -> str:
    return check_choice(convention, "convention", allowed)


def _trapezoid(x: np.ndarray, y: np.ndarray) -> float:
    if x.shape[0] < 2:
        return 0.0
    return float(namespace(x, y).sum((x[1:] - x[:-1]) * (y[1:] + y[:-1])) / 2.0)


def _from_zero(x: np.ndarray) -> np.ndarray:
    """``[0.0, *x]`` in float64 (the curve's point at coverage 0)."""
    xp = namespace(x)
    return xp.concat((xp.zeros(1, dtype=xp.float64, device=device(x)), f64(x)))


def _aurc_from_groups(K: np.ndarray, S: np.ndarray, n: int, convention: str) -> float:
    xp = namespace(K, S)
    if convention in ("fd-shifts", "values"):
        risk = S / f64(K)
        first = scalar(risk[0])
        if K.shape[0] == n:  # no ties: points at every k, spacing 1/N
            area = (scalar(xp.sum(risk)) - (first + scalar(risk[-1])) / 2.0) / n if n > 1 else 0.0
        else:
            area = _trapezoid(f64(K) / n, risk)
        if convention == "fd-shifts":
            area += int(K[0]) / n * first  # flat segment from coverage 0 at the first point's risk
        return area
    k = xp.arange(1, n + 1, dtype=xp.float64, device=device(S))
    # no ties: the group ends are k = 1..N and S is already the cumulative risk at every k
    risk_k = (f64(S) if K.shape[0] == n else cumulative_at(k, K, S)) / k
    return _area_per_k(risk_k, n, convention)


def _area_per_k(risk_k: np.ndarray, n: int, convention: str) -> float:
    """The torch-uncertainty / lm-polygraph area of the selective risks ``R_k``, ``k = 1..N``."""
    xp = namespace(risk_k)
    if convention == "lm-polygraph":
        return float(mean(risk_k))
    # torch-uncertainty: trapezoid over k / N, k = 1..N, divided by (1 - 1/N)
    if n == 1:
        return undefined_metric("aurc[convention=torch-uncertainty]: undefined for one example (1 - 1/N = 0).")
    area = (scalar(xp.sum(risk_k)) - (scalar(risk_k[0]) + scalar(risk_k[-1])) / 2.0) / n
    return area / (1.0 - 1.0 / n)


def aurc(u: np.ndarray, q: np.ndarray, *, convention: str = "fd-shifts") -> float:
    """Area under the selective-risk / coverage curve (lower is better); see :class:`AURC`."""
    r = 1.0 - q
    K, S = group_ends(u, r)
    return _aurc_from_groups(K, S, u.shape[0], convention)


def _binary_optimal_aurc(e: float) -> float:
    # e + (1 - e) ln(1 - e); the limit at e = 1 is 1
    return 1.0 if e >= 1.0 else e + (1.0 - e) * math.log1p(-e)


def e_aurc(u: np.ndarray, q: np.ndarray, *, convention: str = "fd-shifts") -> float:
    """Excess AURC over the optimal ranking; see :class:`EAURC`."""
    return aurc_and_e_aurc(u, q, convention=convention)[1]


def aurc_and_e_aurc(u: np.ndarray, q: np.ndarray, *, convention: str = "fd-shifts") -> tuple[float, float]:
    """``(AURC, E-AURC)`` from one risk-coverage curve (what bench/bench_ue.py times)."""
    r = 1.0 - q
    binary = is_binary(r)
    n = u.shape[0]
    K, S = group_ends(u, r, binary=binary)
    value = _aurc_from_groups(K, S, n, convention)
    if convention == "fd-shifts" and binary:
        return value, value - _binary_optimal_aurc(float(S[-1]) / n)
    if convention == "values":
        xp = namespace(r)
        k = xp.arange(1, n + 1, dtype=xp.float64, device=device(r))
        optimal = float(mean(xp.cumulative_sum(xp.sort(r)) / k))
        return value, value - optimal
    return value, value - _optimal_aurc(r, binary, convention)


def _optimal_aurc(r: np.ndarray, binary: bool, convention: str) -> float:
    """The AURC of the optimal ranking of the risks ``r`` (risks ascending), under ``convention``.

    fd-shifts ranks the examples by confidences ``linspace(1, 0, N)`` assigned to the risks
    sorted ascending: every example is its own curve point, **also where risks are tied**
    (its ``aurc_optimal``). So with tied continuous risks the optimum is evaluated at every
    ``k`` (``R_k = sum of the k smallest risks / k``), and a ranking whose confidence
    plateaus coincide with the risk plateaus can score an E-AURC below 0 (fd-shifts' test
    case ``confid-plateaus_p-plateau``: -0.005709). Binary risk uses the analytic optimum.
    The other conventions group tied risks like any tie group (the optimum is then a ranking
    that cannot tell tied risks apart).
    """
    n = r.shape[0]
    xp = namespace(r)
    if convention == "fd-shifts":
        if binary:
            return _binary_optimal_aurc(float(xp.count_nonzero(r)) / n)
        k = xp.arange(1, n + 1, dtype=xp.int64, device=device(r))
        return _aurc_from_groups(k, xp.cumulative_sum(f64(xp.sort(r))), n, convention)
    if binary:
        # the optimal order puts the n0 = N - nf zero risks first: two tie groups, known without a sort,
        # and the cumulative risk interpolated in the group of ones is exactly max(k - n0, 0) (slope nf / nf = 1)
        nf = int(xp.count_nonzero(r))
        kf = xp.arange(1, n + 1, dtype=xp.float64, device=device(r))
        cum = xp.concat((xp.zeros(n - nf, dtype=xp.float64, device=device(r)),
                         xp.arange(1, nf + 1, dtype=xp.float64, device=device(r))))
        return _area_per_k(cum / kf, n, convention)
    Ko, So = group_ends(r, r, binary=binary)  # the optimal order: risks ascending
    return _aurc_from_groups(Ko, So, n, convention)


def _dominant(K: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Indices of the curve points on the upper convex hull of the ROC curve (fd-shifts' dominant points).

    Point ``g`` keeps the ``K[g]`` most confident examples, ``S[g]`` of them failures: in ROC
    space (failures as negatives) it is ``(S[g] / n_fail, (K[g] - S[g]) / n_ok)``. The
    dominant points are the vertices of the upper hull from (0, 0) to (1, 1), (0, 0)
    excluded; collinear points are dropped (on a straight ROC segment the failures grow
    linearly with the coverage, so they change no area below). The hull is built on the
    integer counts (Andrew's monotone chain), so no tolerance is involved.
    """
    x = np.concatenate(([0.0], S))  # failures kept (ROC x times n_fail: the hull does not change)
    y = np.concatenate(([0.0], K - S))  # successes kept (ROC y times n_ok)
    hull: list[int] = []
    for i in range(x.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # b is not strictly above the chord a -> i: not a vertex of the upper hull
            if (x[b] - x[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (x[i] - x[a]) >= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    return np.asarray(hull[1:], dtype=np.int64) - 1


def aurc_achievable(u: np.ndarray, q: np.ndarray) -> float:
    """fd-shifts' achievable AURC: the dominant curve points, joined by the expected selective risk.

    Between two points ``(c_1, E_1)`` and ``(c_2, E_2)`` (examples kept, failures among
    them) a classifier that mixes the two thresholds keeps ``c`` examples with ``E(c)``
    failures, linear in ``c``; the area is ``integral of E(c) / c dc / N``:

    ``(E_2 - E_1) + (E_1 c_2 - E_2 c_1) / (c_2 - c_1) * ln(c_2 / c_1)``

    and from coverage 0 to the first point the risk is constant (``E_1``). The points are the
    dominant ones for binary risk (:func:`_dominant`), every tie-group end otherwise.
    """
    r = 1.0 - q
    n = u.size
    binary = is_binary(r)
    K, S = group_ends(u, r, binary=binary)
    if binary:
        if S[-1] in (0.0, float(n)):
            K, S = K[-1:], S[-1:]
        else:
            keep = _dominant(K, S)
            K, S = K[keep], S[keep]
    c = K.astype(np.float64)
    area = float(S[0])
    if c.size > 1:
        c1, c2, e1, e2 = c[:-1], c[1:], S[:-1], S[1:]
        area += float(np.sum((e2 - e1) + (e1 * c2 - e2 * c1) * np.log(c2 / c1) / (c2 - c1)))
    return area / n


def e_aurc_achievable(u: np.ndarray, q: np.ndarray) -> float:
    """fd-shifts' achievable E-AURC: :func:`aurc_achievable` minus fd-shifts' optimal AURC."""
    r = 1.0 - q
    return aurc_achievable(u, q) - _optimal_aurc(r, is_binary(r), "fd-shifts")


#: the accepted values of ``convention=`` for AUGRC
AUGRC_CONVENTIONS = ("fd-shifts", "torch-uncertainty")


def augrc(u: np.ndarray, q: np.ndarray, *, convention: str = "fd-shifts") -> float:
    """Area under the generalized-risk / coverage curve (lower is better); see :class:`AUGRC`."""
    convention = _check_convention(convention, AUGRC_CONVENTIONS)
    r = 1.0 - q
    n = u.shape[0]
    K, S = group_ends(u, r)
    if convention == "fd-shifts":
        return _trapezoid(_from_zero(f64(K) / n), _from_zero(S / n))
    if n == 1:
        return undefined_metric("augrc[convention=torch-uncertainty]: undefined for one example (1 - 1/N = 0).")
    xp = namespace(S)
    g = cumulative_at(xp.arange(1, n + 1, dtype=xp.float64, device=device(S)), K, S) / n  # G_k, k = 1..N
    return (scalar(xp.sum(g)) - (scalar(g[0]) + scalar(g[-1])) / 2.0) / n / (1.0 - 1.0 / n)


def e_augrc(u: np.ndarray, q: np.ndarray) -> float:
    """AUGRC minus its optimum (``e^2 / 2`` for binary risk with error rate ``e``)."""
    r = 1.0 - q
    n = u.shape[0]
    binary = is_binary(r)
    K, S = group_ends(u, r, binary=binary)
    value = _trapezoid(_from_zero(f64(K) / n), _from_zero(S / n))
    if binary:
        e = float(S[-1]) / n
        return value - e * e / 2.0
    Ko, So = group_ends(r, r, binary=False)
    return value - _trapezoid(_from_zero(f64(Ko) / n), _from_zero(So / n))


def rcc_auc(u: np.ndarray, q: np.ndarray) -> float:
    """LM-Polygraph's RCC-AUC: ``mean_k`` selective risk of ``1 - normalize(q)``; see :class:`RCCAUC`."""
    qn = minmax_normalize(q)
    if qn is None:
        return undefined_metric("rcc_auc: quality is constant, so min-max normalisation is undefined; NaN.")
    return _aurc_from_groups(*group_ends(u, 1.0 - qn), u.shape[0], "lm-polygraph")


class AURC(TensorUEMetric):
    r"""Area under the risk-coverage curve (AURC); lower is better.

    ``convention="fd-shifts"`` (default): trapezoid of the selective risk ``R`` over
    coverage through the tie-group end points, plus the flat segment from coverage 0 to
    the first point at the first point's risk.
    ``"torch-uncertainty"``: trapezoid of ``R_k`` over ``k / N`` for ``k = 1..N``, divided
    by ``1 - 1/N`` (NaN with a warning for ``N = 1``).
    ``"values"``: the fd-shifts trapezoid without the segment from 0 (ValUES' legacy curve).
    ``"lm-polygraph"``: ``mean_k R_k``.

    Risk is ``1 - quality``; quality may be binary or continuous. Ties in uncertainty are
    grouped (see the module docstring). Reference: Geifman & El-Yaniv (2017), fd-shifts.

    >>> round(AURC()([0.1, 0.2, 0.3, 0.4], [1, 1, 0, 1]), 6)
    0.114583
    """

    name = "aurc"
    higher_is_better = False

    def __init__(self, *, convention: str = "fd-shifts") -> None:
        self.convention = _check_convention(convention)

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        return aurc(u, q, convention=self.convention)


class EAURC(TensorUEMetric):
    r"""Excess AURC: AURC minus the AURC of the optimal ranking; lower is better.

    ``fd-shifts`` (default): for binary risk with error rate ``e`` the optimum is the
    analytic ``e + (1 - e) ln(1 - e)`` (so E-AURC of a perfect ranking can be slightly
    negative); for continuous risk, the same curve with risks sorted ascending and every
    example its own point, tied risks included (so E-AURC can be negative when confidence
    plateaus match risk plateaus).
    ``values``: ``AURC(values) - mean_k Rsorted_k`` (mean of the ``k`` smallest risks).
    ``torch-uncertainty`` / ``lm-polygraph``: that convention's AURC minus the same
    convention's AURC of the risks sorted ascending.
    """

    name = "e_aurc"
    higher_is_better = False

    def __init__(self, *, convention: str = "fd-shifts") -> None:
        self.convention = _check_convention(convention)

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        return e_aurc(u, q, convention=self.convention)


class AURCAchievable(UEMetric):
    r"""fd-shifts' achievable AURC (``aurc_achievable``); lower is better.

    The area under the risk-coverage curve a selective classifier can reach by mixing two
    thresholds: only the dominant points (the upper convex hull of the ROC curve, for binary
    risk; every tie-group end for continuous risk), joined by the expected selective risk of
    the mixture (non-linear in coverage) instead of a straight line. See
    :func:`aurc_achievable` for the formula. Reference: fd-shifts
    (``RiskCoverageStatsMixin.aurc_achievable``).
    """

    name = "aurc_achievable"
    higher_is_better = False

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        return aurc_achievable(u, q)


class EAURCAchievable(UEMetric):
    r"""fd-shifts' achievable E-AURC: :class:`AURCAchievable` minus fd-shifts' optimal AURC; lower is better."""

    name = "e_aurc_achievable"
    higher_is_better = False

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        return e_aurc_achievable(u, q)


class AUGRC(TensorUEMetric):
    r"""Area under the generalized-risk / coverage curve (Traub et al. 2024); lower is better.

    ``G_k = sum of the risks of the k most confident / N``.
    ``convention="fd-shifts"`` (default, Traub et al.'s reference code): trapezoid over coverage
    through the tie-group ends, starting at (0, 0).
    ``"torch-uncertainty"``: trapezoid of ``G_k`` over ``k / N`` for ``k = 1..N`` (no point at
    coverage 0), divided by ``1 - 1/N`` (``torch_uncertainty.metrics.AUGRC``; NaN with a
    warning for ``N = 1``); inside a tie group ``G_k`` is the expectation over the orders of
    the tied examples (torch-uncertainty takes whatever order its sort gives).
    """

    name = "augrc"
    higher_is_better = False

    def __init__(self, *, convention: str = "fd-shifts") -> None:
        self.convention = _check_convention(convention, AUGRC_CONVENTIONS)

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        return augrc(u, q, convention=self.convention)


class EAUGRC(TensorUEMetric):
    r"""AUGRC minus the optimal AUGRC (``e^2 / 2`` for binary risk; the risks sorted ascending otherwise)."""

    name = "e_augrc"
    higher_is_better = False

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        return e_augrc(u, q)


class RCCAUC(TensorUEMetric):
    r"""LM-Polygraph's RCC-AUC: ``mean_k`` of the selective risk of ``1 - normalize(q)``; lower is better.

    ``normalize`` is min-max over the examples; a constant quality gives NaN with a warning.
    """

    name = "rcc_auc"
    higher_is_better = False

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        return rcc_auc(u, q)


class RiskAtCoverage(TensorUEMetric):
    r"""Selective risk of the ``ceil(N * coverage)`` most confident examples; lower is better.

    Inside a tie group the cumulative risk is interpolated (expected risk over the orders
    of the tied examples). Default coverage 0.8 (torch-uncertainty's ``RiskAt80Cov``).
    """

    name = "risk_at_coverage"
    higher_is_better = False

    def __init__(self, *, coverage: float = 0.8) -> None:
        self.coverage = check_number(coverage, "coverage", low=0.0, high=1.0, closed="right", owner=self.name)

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        n = u.shape[0]
        k = min(n, max(1, math.ceil(n * self.coverage - 1e-9)))
        K, S = group_ends(u, 1.0 - q)
        xp = namespace(S)
        return float(cumulative_at(xp.asarray([float(k)], dtype=xp.float64, device=device(S)), K, S)[0] / k)


class CoverageAtRisk(TensorUEMetric):
    r"""Largest coverage (at a tie-group end) whose selective risk is at most ``risk``; higher is better.

    NaN with a warning when no point qualifies. Default risk 0.05 (torch-uncertainty's ``CovAt5Risk``).
    """

    name = "coverage_at_risk"
    higher_is_better = True

    def __init__(self, *, risk: float = 0.05) -> None:
        self.risk = check_number(risk, "risk", low=0.0, high=1.0, owner=self.name)

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        K, S = group_ends(u, 1.0 - q)
        Kf = f64(K)
        ok = flatnonzero(self.risk * Kf + 1e-12 * Kf >= S)
        if ok.shape[0] == 0:
            return undefined_metric(f"coverage_at_risk: no coverage reaches selective risk <= {self.risk}; NaN.")
        return int(K[ok[-1]]) / u.shape[0]
