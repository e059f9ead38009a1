"""The torch path (issue 24, item 2): the sort-based, calibration and ensemble metrics take tensors as they are.

Each metric is run twice on the same data: on numpy arrays (the reference path, itself tested
against the peers elsewhere) and on CPU tensors with every way a tensor turns into a numpy
array patched to raise (``Tensor.numpy``, ``__array__``, ``__dlpack__``; ``tolist`` and ``cpu``
of more than a tally's worth of values), so a pass means the tensor path never copied the scores out of
torch. Values: bit-for-bit where the arithmetic is the same (integer counts, cumulative sums,
bincount tallies), within a few ulps of 1.0 where the last step is a float reduction (numpy's
pairwise sum against torch's), within float32 rounding for float32 ensemble inputs.
"""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import InvalidParameterError
from assay_uncertainty._curves import group_ends
from assay_uncertainty.calibration import ECE, MCE, RMSCE, CalibrationUEMetric
from assay_uncertainty.ensemble import Disagreement, Entropy, MutualInformation, VariationRatio
from assay_uncertainty.ranking import PRAUC, ROCAUC, FPRAtRecall
from assay_uncertainty.rejection import PRR
from assay_uncertainty.risk_coverage import (
    AUGRC,
    AURC,
    EAUGRC,
    EAURC,
    RCCAUC,
    CoverageAtRisk,
    RiskAtCoverage,
)

#: absolute tolerance where the last step is a float reduction: a few ulps of 1.0 (the scores' scale)
ULPS = 16 * np.spacing(1.0)
#: a tally's worth of values may go to the host (ECE's 2 x (n_bins + 1), a batch's (sum, count))
TALLY = 64


@pytest.fixture
def no_host_copy(monkeypatch):
    """Every way a tensor becomes a numpy array raises (a small ``tolist`` is the tally's copy)."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("a tensor was converted to numpy")

    original_tolist = torch.Tensor.tolist
    original_cpu = torch.Tensor.cpu
    allowed = {"values": TALLY}

    def small_cpu(self, *args, **kwargs):
        if self.numel() > allowed["values"]:
            raise AssertionError(f".cpu() of {self.numel()} values: the scores went to the host")
        return original_cpu(self, *args, **kwargs)

    def small_tolist(self):
        if self.numel() > allowed["values"]:
            raise AssertionError(f"tolist of {self.numel()} values: the scores went to the host")
        return original_tolist(self)

    monkeypatch.setattr(torch.Tensor, "numpy", refuse)
    monkeypatch.setattr(torch.Tensor, "__array__", refuse)
    monkeypatch.setattr(torch.Tensor, "__dlpack__", refuse)
    monkeypatch.setattr(torch.Tensor, "tolist", small_tolist)
    monkeypatch.setattr(torch.Tensor, "cpu", small_cpu)
    return allowed


def _data(n: int, ties: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    if ties:
        u = np.round(u, 2)  # about 100 tie groups
    return u, (rng.random(n) < 0.7).astype(np.float64), rng.random(n)


def test_the_fixture_catches_a_host_copy(no_host_copy):
    with pytest.raises(AssertionError):
        np.asarray(torch.zeros(3))
    with pytest.raises(AssertionError):
        torch.zeros(3).numpy()
    with pytest.raises(AssertionError):
        torch.zeros(TALLY + 1).tolist()
    with pytest.raises(AssertionError):
        torch.zeros(TALLY + 1).cpu()


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("binary", [False, True])
def test_group_ends_are_bit_for_bit(ties, binary):
    u, qb, qc = _data(5000, ties)
    r = 1.0 - (qb if binary else qc)
    K, S = group_ends(u, r)
    Kt, St = group_ends(torch.from_numpy(u), torch.from_numpy(r))
    assert Kt.dtype == torch.int64 and St.dtype == torch.float64
    assert np.array_equal(K, np.array(Kt.tolist())) and np.array_equal(S, np.array(St.tolist()))
    # float32 uncertainty sorts as its float64 widening does
    K32, S32 = group_ends(u.astype(np.float32).astype(np.float64), r)
    Kt32, St32 = group_ends(torch.from_numpy(u).float(), torch.from_numpy(r))
    assert np.array_equal(K32, np.array(Kt32.tolist())) and np.array_equal(S32, np.array(St32.tolist()))


EXACT = [ROCAUC(), FPRAtRecall(), FPRAtRecall(convention="torch-uncertainty"),
         FPRAtRecall(convention="torch-uncertainty-0.12"), RiskAtCoverage(), CoverageAtRisk(risk=0.6)]
CLOSE = [PRAUC(), *[cls(convention=c) for cls in (AURC, EAURC) for c in
                    ("fd-shifts", "torch-uncertainty", "values", "lm-polygraph")],
         AUGRC(), AUGRC(convention="torch-uncertainty"), EAUGRC(), RCCAUC(), PRR(), PRR(normalize=True)]


def _pairs(metric, ties):
    u, qb, qc = _data(4000, ties, seed=3)
    yield u, qb
    if not metric.requires_binary:
        yield u, qc


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("metric", EXACT, ids=lambda m: f"{m.name}-{getattr(m, 'convention', '')}")
def test_integer_arithmetic_scores_equal_the_numpy_path_exactly(metric, ties, no_host_copy):
    for u, q in _pairs(metric, ties):
        expected = metric(u, q)
        got = metric(torch.from_numpy(u), torch.from_numpy(q))
        assert isinstance(got, float)
        assert got == expected or (math.isnan(got) and math.isnan(expected))


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("metric", CLOSE, ids=lambda m: f"{m.name}-{getattr(m, 'convention', '')}")
def test_float_reduction_scores_equal_the_numpy_path_to_a_few_ulps(metric, ties, no_host_copy):
    for u, q in _pairs(metric, ties):
        expected = metric.all_scores(u, q)
        got = metric.all_scores(torch.from_numpy(u), torch.from_numpy(q))
        assert got.keys() == expected.keys()
        for name, value in expected.items():
            assert abs(got[name] - value) <= ULPS, (name, got[name], value)


def test_hand_derived_values_on_tensors(no_host_copy):
    u = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)
    # AURC (fd-shifts): risks 0 0 1 0 -> selective risk 0, 0, 1/3, 1/4 at coverage 1/4 .. 1:
    # flat 1/4 * 0 + trapezoids (0 + 0 + (0 + 1/3) / 2 + (1/3 + 1/4) / 2) / 4 = 0.114583...
    assert AURC()(u, torch.tensor([1.0, 1.0, 0.0, 1.0])) == pytest.approx(11 / 96, abs=1e-15)
    # ROC-AUC of failure detection: failures at u = 0.3 and 0.4 tied with one success at 0.4:
    # pairs (0.3 > 0.1, 0.2), (0.4 > 0.1, 0.2), (0.4 = 0.4: 1/2) -> 4.5 / (2 * 3)
    u2 = torch.tensor([0.1, 0.2, 0.3, 0.4, 0.4], dtype=torch.float64)
    assert ROCAUC()(u2, torch.tensor([1.0, 1.0, 0.0, 0.0, 1.0])) == 4.5 / 6


def test_float32_tensors_match_the_numpy_path_on_their_float64_widening(no_host_copy):
    u, qb, _ = _data(3000, True, seed=5)
    u32 = u.astype(np.float32)
    for metric in (ROCAUC(), FPRAtRecall()):
        assert metric(torch.from_numpy(u32), torch.from_numpy(qb)) == metric(u32.astype(np.float64), qb)


def test_tensor_inputs_are_checked_on_the_device():
    u = torch.tensor([0.1, float("nan"), 0.3], dtype=torch.float64)
    with pytest.raises(InvalidParameterError, match=r"uncertainty\[1\]"):
        AURC()(u, torch.ones(3))
    with pytest.raises(InvalidParameterError, match="same length"):
        AURC()(torch.rand(3), torch.ones(4))
    with pytest.raises(InvalidParameterError, match=r"quality\[2\].*binary"):
        ROCAUC()(torch.rand(3), torch.tensor([0.0, 1.0, 0.5]))
    with pytest.raises(InvalidParameterError, match="both as tensors"):
        AURC()(torch.rand(3), [1, 0, 1])
    with pytest.raises(InvalidParameterError, match=r"shape \(N,\)"):
        AURC()(torch.rand(3, 2), torch.ones(3))


def test_one_class_and_empty_tensors_are_nan_with_a_warning():
    from assay.errors import UndefinedMetricWarning

    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(ROCAUC()(torch.rand(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64)))
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(AURC()(torch.zeros(0), torch.zeros(0)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("classes", [1, 3, 10])
@pytest.mark.parametrize("metric_cls", [ECE, MCE, RMSCE])
def test_ece_tallies_are_bit_for_bit(metric_cls, classes, dtype, no_host_copy):
    rng = np.random.default_rng(classes)
    n = 3 * (1 << 17) // max(classes, 1) + 17  # several of numpy's chunks, and a partial one
    if classes == 1:
        p = rng.random(n).astype(dtype)
        p[:4] = [0.0, 1.0, 0.3, 2 / 3]  # on and near the bin edges
        y = (rng.random(n) < p).astype(np.int64)
    else:
        x = rng.gamma(0.5, size=(n, classes))
        p = (x / x.sum(1, keepdims=True)).astype(dtype)
        p[:2] = 1.0 / classes  # argmax ties
        y = rng.integers(0, classes, n)
    for n_bins in (15, 3):
        ref = metric_cls(n_bins=n_bins)
        ref.update(p[:1000], y[:1000]).update(p[1000:], y[1000:])
        got = metric_cls(n_bins=n_bins)
        pt, yt = torch.from_numpy(p), torch.from_numpy(y)
        got.update(pt[:1000], yt[:1000]).update(pt[1000:], yt[1000:])
        assert np.array_equal(got.state.totals, ref.state.totals)
        assert got.compute() == ref.compute()
        # the state is the numpy tally: a tensor-fed shard merges with a numpy-fed one
        merged = metric_cls(n_bins=n_bins).update(pt[:1000], yt[:1000])
        merged.merge(metric_cls(n_bins=n_bins).update(p[1000:], y[1000:]))
        assert np.array_equal(merged.state.totals, ref.state.totals)


def test_ece_as_a_ue_metric_on_tensors(no_host_copy):
    rng = np.random.default_rng(9)
    u = rng.random(2000)
    q = (rng.random(2000) < 1 - u).astype(np.float64)
    metric = CalibrationUEMetric(ECE(n_bins=10))
    assert metric(torch.from_numpy(u), torch.from_numpy(q)) == metric(u, q)


def test_ece_takes_host_labels_with_tensor_probabilities():
    p = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    expected = ECE(n_bins=5).update(p, [0, 0, 1]).compute()
    assert ECE(n_bins=5).update(torch.from_numpy(p), [0, 0, 1]).compute() == expected
    assert ECE(n_bins=5).update(torch.from_numpy(p), np.array([0, 0, 1])).compute() == expected


def test_ece_tensor_errors_name_the_bad_value():
    p = torch.tensor([[0.5, 0.5], [0.9, 0.3]], dtype=torch.float64)
    with pytest.raises(InvalidParameterError, match=r"probs\[1"):
        ECE().update(p, torch.tensor([0, 1]))
    with pytest.raises(InvalidParameterError, match="labels"):
        ECE().update(torch.tensor([[0.5, 0.5]]), torch.tensor([2]))
    with pytest.raises(InvalidParameterError, match="labels"):
        ECE().update(torch.tensor([[0.5, 0.5]]), torch.tensor([0, 1]))
    with pytest.raises(InvalidParameterError, match="labels"):
        ECE().update(torch.tensor([[0.5, 0.5]]), [3])
    with pytest.raises(InvalidParameterError, match="labels"):
        ECE().update(torch.tensor([[0.5, 0.5]]), None)


def _ensemble(b, n, c, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.gamma(0.3, size=(b, n, c))
    p = (x / x.sum(-1, keepdims=True)).astype(dtype)
    p[0] = 1.0 / c  # argmax ties
    return p


@pytest.mark.parametrize("shape", [(400, 3, 4), (200, 15, 10), (300, 5, 2)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ensemble_votes_are_bit_for_bit(shape, reduction, no_host_copy):
    if reduction == "none":  # the per-example values are the result: they go to the host, the probabilities not
        no_host_copy["values"] = shape[0]
    p = _ensemble(*shape, np.float64)
    for metric in (Disagreement(reduction=reduction), VariationRatio(reduction=reduction)):
        ref = type(metric)(reduction=reduction).update(p).update(p[:7]).compute()
        t = torch.from_numpy(p)
        got = metric.update(t).update(t[:7]).compute()
        assert np.array_equal(np.asarray(got), np.asarray(ref))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(400, 3, 4), (200, 15, 10), (300, 5, 2)])
def test_ensemble_entropies_match_to_rounding(shape, dtype, no_host_copy):
    no_host_copy["values"] = shape[0]  # reduction="none": the per-example values go to the host
    p = _ensemble(*shape, dtype, seed=1)
    # log differs between numpy's and torch's libm by an ulp; float32 computes in float32 on both paths
    atol = ULPS * 8 if dtype == np.float64 else 1e-5
    t = torch.from_numpy(p)
    for make in (Entropy, MutualInformation, lambda **k: VariationRatio(probabilistic=True, **k)):
        for reduction in ("mean", "none"):
            ref = np.asarray(make(reduction=reduction).update(p).compute())
            got = np.asarray(make(reduction=reduction).update(t).compute())
            assert np.allclose(got, ref, rtol=0, atol=atol)


def test_ensemble_tensor_errors_name_the_position():
    p = torch.full((3, 2, 2), 0.5, dtype=torch.float64)
    p[2, 1] = torch.tensor([0.9, 0.3], dtype=torch.float64)
    with pytest.raises(InvalidParameterError, match=r"probs\[2, 1"):
        Disagreement().update(p)
    with pytest.raises(InvalidParameterError, match=r"shape \(B, N, C\)"):
        Entropy().update(torch.rand(3, 2))


def test_importing_the_metrics_does_not_import_torch():
    code = ("import sys; import assay_uncertainty.ranking, assay_uncertainty.risk_coverage, "
            "assay_uncertainty.rejection, assay_uncertainty.calibration, assay_uncertainty.ensemble; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@settings(max_examples=60, deadline=None)
@given(
    u=st.lists(st.sampled_from([-2.0, -0.5, -0.0, 0.0, 0.1, 0.25, 0.5, 1.0, 3.0]), min_size=1, max_size=40),
    data=st.data(),
)
def test_any_small_input_gives_the_numpy_paths_values(u, data):
    """Ties, negative uncertainty, -0.0, one example, one class: the two paths agree (or raise / NaN alike)."""
    n = len(u)
    binary = data.draw(st.booleans())
    values = st.sampled_from([0.0, 1.0]) if binary else st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0])
    q = np.array(data.draw(st.lists(values, min_size=n, max_size=n)))
    un = np.array(u)
    K, S = group_ends(un, 1.0 - q)
    Kt, St = group_ends(torch.from_numpy(un), torch.from_numpy(1.0 - q))
    assert np.array_equal(K, np.array(Kt.tolist())) and np.array_equal(S, np.array(St.tolist()))
    for metric in EXACT + CLOSE:
        if metric.requires_binary and not binary:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = metric.all_scores(un, q)
            got = metric.all_scores(torch.from_numpy(un), torch.from_numpy(q))
        for name, value in expected.items():
            assert (math.isnan(value) and math.isnan(got[name])) or abs(got[name] - value) <= ULPS, (metric, name)


def test_streaming_and_intervals_on_tensors_keep_the_numpy_rows():
    """``update`` and ``assay.evaluate`` keep a UE metric's rows in numpy (copied once): same scores and intervals."""
    import assay

    u, q, _ = _data(300, True, seed=11)
    metric = assay.load_ue_metric("aurc")
    by_numpy = assay.evaluate(u, q, metrics=[metric], n_resamples=50, seed=1).global_scores
    by_tensor = assay.evaluate(torch.from_numpy(u), torch.from_numpy(q), metrics=[metric], n_resamples=50,
                               seed=1).global_scores
    assert by_tensor == by_numpy
    streamed = assay.load_ue_metric("aurc").update(torch.from_numpy(u[:100]), torch.from_numpy(q[:100]))
    assert streamed.update(u[100:], q[100:]).compute() == metric(u, q)
