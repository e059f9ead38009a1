"""``smooth_ece`` against torch-uncertainty 0.13.0's ``SmoothCalibrationError``, run live (issue 24).

Both kernels, a fixed bandwidth and the ``"auto"`` search, multiclass and binary inputs. The
peer runs with float64 as its default dtype but casts its last sum to float32, so the values
agree to float32 rounding (relative 1e-6; they differ from each other by 1e-7 or less); the
selected bandwidths agree exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import assay
from assay.errors import InvalidParameterError
from assay_uncertainty import smooth_ece as sm
from assay_uncertainty.smooth_ece import SmoothCalibrationError


def peer(module, p, y, **options):
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        m = module.SmoothCalibrationError(**options)
        m.update(torch.as_tensor(p), torch.as_tensor(y))
        return float(m.compute()), m.final_bandwidth
    finally:
        torch.set_default_dtype(old)


def inputs(seed: int, binary: bool = False):
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(50, 250))
    if binary:
        p = rng.random(n)
        return p, (rng.random(n) < p ** 1.5).astype(np.int64)
    c = int(rng.integers(2, 6))
    p = rng.dirichlet(np.ones(c) * 0.5, n)
    return p, np.array([rng.choice(c, p=row) for row in p])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kernel_type", ["logit", "reflected"])
@pytest.mark.parametrize("bandwidth", ["auto", 0.1, 0.03])
def test_matches_torch_uncertainty(tu_classification, seed, kernel_type, bandwidth):
    p, y = inputs(seed, binary=seed == 2)
    theirs, h = peer(tu_classification["smooth_calibration_error"], p, y, kernel_type=kernel_type,
                     bandwidth=bandwidth)
    ours = SmoothCalibrationError(kernel_type=kernel_type, bandwidth=bandwidth).update(p, y).compute()
    assert ours == pytest.approx(theirs, rel=1e-6)
    if bandwidth == "auto":
        rows = SmoothCalibrationError().map_batch(p, y)
        assert sm.search_bandwidth(rows[:, 0], rows[:, 1], kernel_type=kernel_type, eps=0.001, mesh_pts=200,
                                   refine_steps=10) == h


def test_a_calibrated_predictor_scores_lower_than_an_overconfident_one():
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.5, 1.0, 4000)
    right = (rng.random(4000) < conf).astype(np.int64)  # calibrated: P(right) = conf
    p = np.column_stack([conf, 1 - conf])
    calibrated = SmoothCalibrationError(bandwidth=0.05).update(p, 1 - right).compute()
    over = np.column_stack([np.sqrt(conf), 1 - np.sqrt(conf)])  # more confident than the outcomes say
    overconfident = SmoothCalibrationError(bandwidth=0.05).update(over, 1 - right).compute()
    assert calibrated < 0.02 < overconfident


def test_shards_merged_equal_one_pass_and_intervals_exist():
    p, y = inputs(1)
    one = SmoothCalibrationError(bandwidth=0.1).update(p, y).compute()
    a = SmoothCalibrationError(bandwidth=0.1).update(p[:20], y[:20])
    b = SmoothCalibrationError(bandwidth=0.1).update(p[20:], y[20:])
    assert a.merge(b).compute() == one
    g = assay.evaluate(list(p), list(y), metrics=[SmoothCalibrationError(bandwidth=0.1)], n_resamples=30,
                       seed=0).global_scores
    assert g["smooth_ece"] == pytest.approx(one)
    assert g["smooth_ece_ci_low"] < one < g["smooth_ece_ci_high"]


def test_options_are_checked():
    with pytest.raises(InvalidParameterError, match="kernel_type"):
        SmoothCalibrationError(kernel_type="box")
    with pytest.raises(InvalidParameterError, match="bandwidth"):
        SmoothCalibrationError(bandwidth="fixed")
    with pytest.raises(InvalidParameterError, match="bandwidth"):
        SmoothCalibrationError(bandwidth=0.0)
    with pytest.raises(InvalidParameterError, match="probs"):
        SmoothCalibrationError().update([[2.0, -1.0]], [0])  # logits: torch-uncertainty softmaxes them
