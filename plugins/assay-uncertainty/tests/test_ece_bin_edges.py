"""ECE / MCE / RMSCE bins are Guo et al.'s ``((m - 1) / M, m / M]``, on both paths (issue 27, item 1).

Before, the bin was ``floor(M * conf)``, and the product rounds: ``10 * 0.3 == 3.0000000000000004``
put 0.3 into ``(0.3, 0.4]``, ``3 * (2/3) == 2.0`` put 2/3 into ``(2/3, 1]``. The reference here
is a plain loop over the edges (``m / M``, one IEEE division in the input's dtype, the value a
user's ``m / M`` has): the first bin whose upper edge is at least the confidence. Every test runs
on the compiled kernels (numba) and on the numpy path.

The differential test runs torchmetrics live. torchmetrics bins with
``torch.bucketize(conf, torch.linspace(0, 1, M + 1), right=True)``: ``[lo, hi)`` bins whose
edges are ``linspace``'s, plus a bin of its own for a confidence of exactly 1.0. On values off
the edges that is Guo's binning and the numbers agree; on 0.3 and 2/3 (the issue's examples)
its ``linspace`` edges round up past the value, so it agrees too. Where an edge is exact in
binary (0.5 of 2 bins) or the confidence is 1.0, torchmetrics puts the value in the bin above;
assay follows Guo, and the test asserts that difference with the hand-derived numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torchmetrics.functional.classification import binary_calibration_error, multiclass_calibration_error

from assay import compiled
from assay.functional import bin_edges, equal_width_bins
from assay.plugins import load_metric
from assay_uncertainty.calibration import binned_tallies, multiclass_tallies, multiclass_tallies_numpy

NORMS = {"ece": "l1", "mce": "max", "rmsce": "l2"}


@pytest.fixture(params=["numba", "numpy"])
def path(request, monkeypatch):
    if request.param == "numba":
        assert compiled.kernels() is not None, "numba is not importable: install the 'fast' extra (make setup does)"
    else:
        monkeypatch.setattr(compiled, "kernels", lambda: None)
    return request.param


def guo_bin(x: float, n_bins: int, dtype=np.float64) -> int:
    """Index ``m - 1`` of the first bin whose upper edge ``m / M`` (in ``dtype``) is >= x; 0.0 in bin 0."""
    t = np.dtype(dtype).type
    for m in range(1, n_bins + 1):
        if t(x) <= t(m) / t(n_bins):
            return m - 1
    raise AssertionError(f"{x} is above 1")


def guo_scores(conf, acc, n_bins, dtype=np.float64) -> dict[str, float]:
    bins: dict[int, list[tuple[float, float]]] = {}
    for c, a in zip(conf, acc):
        bins.setdefault(guo_bin(c, n_bins, dtype), []).append((float(c), float(a)))
    n = len(conf)
    gaps = {b: abs(sum(a for _, a in v) / len(v) - sum(c for c, _ in v) / len(v)) for b, v in bins.items()}
    return {"ece": sum(len(bins[b]) / n * g for b, g in gaps.items()),
            "mce": max(gaps.values()),
            "rmsce": math.sqrt(sum(len(bins[b]) / n * g * g for b, g in gaps.items()))}


# ----------------------------------------------------------------------------- the issue's cases

@pytest.mark.parametrize("probs, labels, n_bins, expected", [
    ([0.3, 0.25], [1, 0], 10, 0.225),       # both in (0.2, 0.3]: |1/2 - 0.275|
    ([2 / 3, 0.4], [1, 0], 3, 1 / 30),      # both in (1/3, 2/3]: |1/2 - (2/3 + 0.4)/2|
])
def test_the_issues_examples_give_torchmetrics_values(probs, labels, n_bins, expected, path):
    got = load_metric(f"ece[n_bins={n_bins}]").update(probs, labels).compute()
    tm = float(binary_calibration_error(torch.tensor(probs, dtype=torch.float64), torch.tensor(labels),
                                        n_bins=n_bins, norm="l1"))
    assert got == pytest.approx(expected, abs=1e-12)
    assert got == pytest.approx(tm, abs=1e-12)


def test_an_edge_exact_in_binary_and_confidence_one_go_to_the_bin_below(path):
    # Guo: 0.5 is the upper edge of (0, 0.5]; with 0.4 there: gap |1/2 - 0.45| = 0.05.
    # torchmetrics' [lo, hi) bins put 0.5 in [0.5, 1): (0.5 + 0.4) / 2 = 0.45.
    probs, labels = [0.5, 0.4], [1, 0]
    assert load_metric("ece[n_bins=2]").update(probs, labels).compute() == pytest.approx(0.05, abs=1e-12)
    tm = float(binary_calibration_error(torch.tensor(probs, dtype=torch.float64), torch.tensor(labels), n_bins=2))
    assert tm == pytest.approx(0.45, abs=1e-12)
    # 1.0 is in (0.9, 1] with 0.95: |1/2 - 0.975| = 0.475; torchmetrics' own bin for 1.0: (1 + 0.05) / 2
    probs, labels = [1.0, 0.95], [0, 1]
    assert load_metric("ece[n_bins=10]").update(probs, labels).compute() == pytest.approx(0.475, abs=1e-12)
    tm = float(binary_calibration_error(torch.tensor(probs, dtype=torch.float64), torch.tensor(labels), n_bins=10))
    assert tm == pytest.approx(0.525, abs=1e-12)


# ----------------------------------------------------------------------------- vote shares

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("members", [2, 3, 5, 6, 7, 10, 12, 15, 20])
def test_vote_shares_bin_by_the_edges_on_both_paths(members, dtype, path):
    # every vote share k / members of an ensemble, as the (N, 2) rows [k/n, 1 - k/n] and as
    # binary probabilities, against the loop over the edges for several bin counts
    k = np.arange(members + 1)
    share = (k.astype(dtype) / dtype(members)).astype(dtype)
    rng = np.random.default_rng(members)
    labels = rng.integers(0, 2, share.size)
    for n_bins in (2, 3, 4, 5, 6, 10, 15, 20):
        expect = np.array([guo_bin(x, n_bins, dtype) for x in share])
        np.testing.assert_array_equal(equal_width_bins(share, n_bins), expect)
        t = binned_tallies(share, labels.astype(dtype), n_bins)
        np.testing.assert_array_equal(t[0], np.bincount(expect, minlength=n_bins))
        rows = np.stack([share, (1 - share).astype(dtype)], axis=1)
        top = rows.max(axis=1)
        expect_top = np.array([guo_bin(x, n_bins, dtype) for x in top])
        got = multiclass_tallies(rows, labels, n_bins, validate=False)
        np.testing.assert_array_equal(got[0], np.bincount(expect_top, minlength=n_bins))
        ref = guo_scores(share, labels, n_bins, dtype)
        for score in ("ece", "mce", "rmsce"):
            assert load_metric(f"{score}[n_bins={n_bins}]").update(share, labels).compute() == \
                pytest.approx(ref[score], abs=1e-6 if dtype is np.float32 else 1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_bins=st.integers(1, 40), members=st.integers(1, 60))
def test_equal_width_bins_are_the_loop_over_the_edges(seed, n_bins, members):
    rng = np.random.default_rng(seed)
    # values on and next to the edges, and vote shares of another count, in float64 and float32
    edges = bin_edges(n_bins)
    near = np.concatenate([edges, np.nextafter(edges, -1), np.nextafter(edges, 2),
                           np.arange(members + 1) / members, rng.random(20)])
    near = near[(near >= 0) & (near <= 1)]
    for dtype in (np.float64, np.float32):
        x = near.astype(dtype)
        np.testing.assert_array_equal(equal_width_bins(x, n_bins), [guo_bin(v, n_bins, dtype) for v in x])
        # closed="left": the first bin whose upper edge is above the value (1.0 in the last)
        t = np.dtype(dtype).type
        left = [next((m - 1 for m in range(1, n_bins + 1) if v < t(m) / t(n_bins)), n_bins - 1) for v in x]
        np.testing.assert_array_equal(equal_width_bins(x, n_bins, closed="left"), left)


def test_the_kernel_and_the_numpy_path_tally_edge_values_alike():
    # 4 members' vote shares in 3 classes and 10 bins (0.5 and 0.25 sit on edges), many rows: the
    # compiled kernel (asserted loaded) and the numpy reference give the same tallies to the last bit
    assert compiled.kernels() is not None
    rng = np.random.default_rng(7)
    votes = rng.multinomial(4, [0.5, 0.3, 0.2], size=50_000).astype(np.float64) / 4
    y = rng.integers(0, 3, votes.shape[0])
    for n_bins in (4, 8, 10, 15):
        fast = multiclass_tallies(votes, y, n_bins, validate=True)
        ref = multiclass_tallies_numpy(votes, y, n_bins, validate=True)
        np.testing.assert_array_equal(fast, ref)
        expect = np.bincount([guo_bin(x, n_bins) for x in votes.max(axis=1)], minlength=n_bins)
        np.testing.assert_array_equal(fast[0], expect)


# ----------------------------------------------------------------------------- torchmetrics, live

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n_bins", [3, 10, 15])
def test_random_inputs_agree_with_torchmetrics(seed, n_bins, path):
    rng = np.random.default_rng(seed)
    n, c = 500, 4
    # torchmetrics' multiclass path computes in float32 (``confidences.float()``): float32 rows for both
    probs = rng.dirichlet(np.ones(c) * 0.7, n).astype(np.float32)
    labels = rng.integers(0, c, n)
    p_bin = rng.random(n)
    y_bin = rng.integers(0, 2, n)
    for score, norm in NORMS.items():
        tm = float(multiclass_calibration_error(torch.from_numpy(probs), torch.from_numpy(labels), num_classes=c,
                                                n_bins=n_bins, norm=norm))
        assert load_metric(f"{score}[n_bins={n_bins}]").update(probs, labels).compute() == pytest.approx(tm, abs=2e-6)
        tm_b = float(binary_calibration_error(torch.from_numpy(p_bin), torch.from_numpy(y_bin), n_bins=n_bins,
                                              norm=norm))
        assert load_metric(f"{score}[n_bins={n_bins}]").update(p_bin, y_bin).compute() == \
            pytest.approx(tm_b, abs=1e-12)
