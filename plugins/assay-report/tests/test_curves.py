"""The page's own curve helpers, against values derived by hand (the curves themselves are
assay-uncertainty's, tested in its test_plots.py)."""

from __future__ import annotations

import numpy as np
import pytest

from assay_report import curves


def test_oracle_risk_coverage_keeps_the_best_first():
    cov, risk = curves.oracle_risk_coverage(np.array([0.0, 1.0, 0.5]))
    assert cov.tolist() == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert risk.tolist() == pytest.approx([0.0, 0.25, 0.5])  # 1 - q of 1, 0.5, 0: 0, 0.5, 1


def test_oracle_risk_coverage_has_a_point_per_example_even_with_equal_qualities():
    cov, risk = curves.oracle_risk_coverage(np.array([1.0, 0.0, 1.0, 0.0]))
    assert cov.tolist() == [0.25, 0.5, 0.75, 1.0]
    assert risk.tolist() == pytest.approx([0.0, 0.0, 1 / 3, 0.5])  # kept: 1, 1, 0, 0


def test_reliability_bins_leave_out_empty_ones_and_close_on_the_right():
    # ten bins (0, 0.1], ..., (0.9, 1]; 0.0 in the first; 0.1 lies on an edge: the first bin, not the second
    conf = np.array([0.0, 0.05, 0.1, 0.5, 1.0])
    correct = np.array([0.0, 1.0, 0.0, 1.0, 1.0])
    mean_conf, acc, cnt = curves.reliability(conf, correct, n_bins=10)
    assert cnt.tolist() == [3, 1, 1]
    assert mean_conf.tolist() == pytest.approx([0.05, 0.5, 1.0])
    assert acc.tolist() == pytest.approx([1 / 3, 1.0, 1.0])


def test_thin_keeps_first_and_last_and_at_most_max_points():
    x = np.arange(1000.0)
    tx, ty = curves.thin(x, x * 2, max_points=50)
    assert tx.size <= 50 and tx[0] == 0 and tx[-1] == 999
    assert (ty == tx * 2).all()
    short = np.arange(10.0)
    assert curves.thin(short, short, max_points=50)[0] is short
