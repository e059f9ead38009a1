"""The curves behind the pictures, against hand-derived values; a clear error without matplotlib."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from assay.errors import MissingDependencyError
from assay_uncertainty.manager.plots import plot_rejection, rejection_curve, reliability_bins, risk_coverage_curve

U = np.array([0.1, 0.2, 0.3, 0.4])
Q = np.array([1.0, 1.0, 0.0, 1.0])


def test_risk_coverage_curve_groups_ties():
    cov, risk = risk_coverage_curve(U, Q)
    np.testing.assert_allclose(cov, [0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(risk, [0, 0, 1 / 3, 1 / 4])
    cov, risk = risk_coverage_curve(np.array([0.5, 0.5, 0.1, 0.9]), np.array([1.0, 0.0, 1.0, 0.0]))
    np.testing.assert_allclose(cov, [0.25, 0.75, 1.0])  # the tie group at .5 is one point
    np.testing.assert_allclose(risk, [0, 1 / 3, 1 / 2])


def test_rejection_curve_with_oracle_and_random():
    frac, kept, best, rand = rejection_curve(U, Q)
    np.testing.assert_allclose(frac, [0, 0.25, 0.5, 0.75])
    np.testing.assert_allclose(kept, [0.75, 2 / 3, 1.0, 1.0])  # keep the 4, 3, 2, 1 most confident
    np.testing.assert_allclose(best, [0.75, 1.0, 1.0, 1.0])
    assert rand == 0.75


def test_reliability_bins():
    centre, conf, acc, cnt = reliability_bins(np.array([0.9, 0.8, 0.3]), np.array([1.0, 0.0, 0.0]), 2)
    np.testing.assert_allclose(centre, [0.25, 0.75])
    np.testing.assert_allclose(conf, [0.3, 0.85])
    np.testing.assert_allclose(acc, [0.0, 0.5])
    np.testing.assert_allclose(cnt, [1, 2])


def test_missing_matplotlib_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependencyError, match=r"pip install matplotlib"):
        plot_rejection({"msp": (U, Q)}, tmp_path / "x.png")
