"""The curves of an uncertainty run, as series for the page's charts.

The numbers are assay-uncertainty's own: :func:`~assay_uncertainty.manager.plots.risk_coverage_curve`,
:func:`~assay_uncertainty.manager.plots.rejection_curve` and
:func:`~assay_uncertainty.manager.plots.reliability_bins` (the functions its PNG plots draw), so
the page and ``assay ue``'s plots show the same curves. Orientation (assay's contract): an
estimation ``u`` is uncertainty (higher = less sure) and the quality ``q`` is higher = better;
the selective risk is ``1 - q``; the model rejects the most uncertain examples first; ties in
``u`` form one step. What this module adds is what the page draws beside them: the oracle's
risk-coverage curve (the same function, given the oracle's ranking), reliability bins without
the empty ones, and the thinning of a long series.

Imported only for a saved UEManager (``assay_report.sources`` defers it): reading one needs
assay-uncertainty already (``pip install 'assay-report[uncertainty]'``).
"""

from __future__ import annotations

import numpy as np

from assay_uncertainty.manager.plots import reliability_bins, risk_coverage_curve

__all__ = ["MAX_POINTS", "oracle_risk_coverage", "reliability", "thin"]

#: a drawn series keeps at most this many points (the tables hold the exact values)
MAX_POINTS = 400


def oracle_risk_coverage(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The oracle's risk-coverage curve: the best examples kept first, one point per example.

    The oracle ranks the examples by quality, best first, with no ties: its uncertainty is that
    rank, so this is :func:`risk_coverage_curve` of the ranks ``0 .. n-1`` over ``q`` sorted from
    best to worst.
    """
    return risk_coverage_curve(np.arange(q.size, dtype=float), np.sort(q)[::-1])


def reliability(conf: np.ndarray, correct: np.ndarray, n_bins: int = 15
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean confidence, accuracy and count of each non-empty bin of :func:`reliability_bins`
    (equal-width bins of ``conf`` in [0, 1], closed on the right like assay's ECE)."""
    _, mean_conf, acc, cnt = reliability_bins(conf, correct, n_bins)
    keep = cnt > 0
    return mean_conf[keep], acc[keep], cnt[keep]


def thin(x: np.ndarray, y: np.ndarray, max_points: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``max_points`` evenly spaced points of a series, the first and last kept."""
    if x.size <= max_points:
        return x, y
    idx = np.unique(np.linspace(0, x.size - 1, max_points).round().astype(int))
    return x[idx], y[idx]
