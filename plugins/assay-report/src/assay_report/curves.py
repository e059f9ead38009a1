"""The curves of an uncertainty run, as numbers for the page's charts.

Orientation (assay's contract): an estimation ``u`` is uncertainty (higher = less sure) and
the quality ``q`` is higher = better. The definitions are those of assay's own plots
(``UEManager`` plots): the selective risk is ``1 - q``; the model rejects the most uncertain
examples first; ties in ``u`` form one step.

They are computed here rather than imported because the plotting module of the UEManager
is not part of assay's public API (it moves with the UEManager into assay-uncertainty).
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_POINTS", "rejection", "reliability", "risk_coverage", "thin"]

#: a drawn series keeps at most this many points (the tables hold the exact values)
MAX_POINTS = 400


def risk_coverage(u: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coverage ``k / n`` and selective risk (mean ``1 - q`` of the ``k`` least uncertain) at each tie group's end."""
    order = np.argsort(u, kind="stable")
    us, risk = u[order], 1.0 - q[order]
    ends = np.append(np.flatnonzero(us[1:] != us[:-1]), us.size - 1)
    k = ends + 1
    return k / u.size, np.cumsum(risk)[ends] / k


def oracle_risk_coverage(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The oracle's risk-coverage curve: the best examples kept first (one point per example)."""
    k = np.arange(1, q.size + 1)
    return k / q.size, np.cumsum(1.0 - np.sort(q)[::-1]) / k


def rejection(u: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Rejected fraction, mean quality of the kept examples (most uncertain rejected first), the
    oracle's (worst quality rejected first) and the random baseline ``mean(q)``."""
    n = u.size
    k = np.arange(n, 0, -1)
    kept = np.cumsum(q[np.argsort(u, kind="stable")])[k - 1] / k
    best = np.cumsum(np.sort(q)[::-1])[k - 1] / k
    return (n - k) / n, kept, best, float(q.mean())


def reliability(conf: np.ndarray, correct: np.ndarray, n_bins: int = 15
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per non-empty equal-width bin of ``conf`` in [0, 1] (the last bin closed): mean confidence, accuracy, count."""
    b = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    cnt = np.bincount(b, minlength=n_bins).astype(float)
    sums = np.bincount(b, weights=conf, minlength=n_bins)
    hits = np.bincount(b, weights=correct, minlength=n_bins)
    keep = cnt > 0
    return sums[keep] / cnt[keep], hits[keep] / cnt[keep], cnt[keep]


def thin(x: np.ndarray, y: np.ndarray, max_points: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``max_points`` evenly spaced points of a series, the first and last kept."""
    if x.size <= max_points:
        return x, y
    idx = np.unique(np.linspace(0, x.size - 1, max_points).round().astype(int))
    return x[idx], y[idx]
