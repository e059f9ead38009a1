"""The curves' numbers, against values derived by hand."""

from __future__ import annotations

import numpy as np
import pytest

from assay_report import curves


def test_risk_coverage_steps_at_tie_group_ends():
    # u sorted: 0.1 (q 1), 0.2 (q 0), 0.2 (q 1), 0.9 (q 0); the two 0.2s are one step
    u = np.array([0.9, 0.2, 0.1, 0.2])
    q = np.array([0.0, 0.0, 1.0, 1.0])
    cov, risk = curves.risk_coverage(u, q)
    assert cov.tolist() == [0.25, 0.75, 1.0]
    # risks 1 - q in that order: 0, 1, 0, 1 -> means over the first 1, 3, 4
    assert risk.tolist() == pytest.approx([0.0, 1 / 3, 0.5])


def test_oracle_risk_coverage_keeps_the_best_first():
    cov, risk = curves.oracle_risk_coverage(np.array([0.0, 1.0, 0.5]))
    assert cov.tolist() == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert risk.tolist() == pytest.approx([0.0, 0.25, 0.5])  # 1 - q of 1, 0.5, 0: 0, 0.5, 1


def test_rejection_curve_model_oracle_and_random():
    u = np.array([0.3, 0.1, 0.2])
    q = np.array([0.0, 1.0, 0.5])
    frac, kept, best, rand = curves.rejection(u, q)
    assert frac.tolist() == pytest.approx([0, 1 / 3, 2 / 3])
    # model order by u: q 1, 0.5, 0; rejecting the most uncertain first keeps 3, 2, 1 of them
    assert kept.tolist() == pytest.approx([0.5, 0.75, 1.0])
    assert best.tolist() == pytest.approx([0.5, 0.75, 1.0])
    assert rand == pytest.approx(0.5)


def test_reliability_bins_leave_out_empty_ones_and_close_the_last():
    conf = np.array([0.05, 0.06, 0.5, 1.0])
    correct = np.array([1.0, 0.0, 1.0, 1.0])
    mean_conf, acc, cnt = curves.reliability(conf, correct, n_bins=10)
    assert cnt.tolist() == [2, 1, 1]
    assert mean_conf.tolist() == pytest.approx([0.055, 0.5, 1.0])
    assert acc.tolist() == pytest.approx([0.5, 1.0, 1.0])


def test_thin_keeps_first_and_last_and_at_most_max_points():
    x = np.arange(1000.0)
    tx, ty = curves.thin(x, x * 2, max_points=50)
    assert tx.size <= 50 and tx[0] == 0 and tx[-1] == 999
    assert (ty == tx * 2).all()
    short = np.arange(10.0)
    assert curves.thin(short, short, max_points=50)[0] is short
