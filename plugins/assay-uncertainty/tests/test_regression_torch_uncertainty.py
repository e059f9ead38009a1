"""The probabilistic-regression metrics against torch-uncertainty 0.13.0, run live (issue 24, item 3).

``DistributionNLL`` and ``QuantileCalibrationError`` get a ``torch.distributions`` object built from
the same parameter rows assay reads; ``IntervalCoverage``, ``MeanIntervalWidth``, ``IntervalScore``
get the bounds; ``AUSE`` the scores and errors. The peer modules are loaded from their files (the
``torch_uncertainty`` fixture of the root conftest.py). Then: both names load the class, shards
merge to the one-pass value, and ``assay.evaluate`` gives an interval.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import distributions as D

import assay
from assay.errors import InvalidParameterError
from assay.metrics.catalog import resolve_metric
from assay_uncertainty import regression as reg

N = 400


@pytest.fixture(scope="module")
def tu(torch_uncertainty):
    return {"nll": torch_uncertainty("metrics.regression.nll"),
            "qce": torch_uncertainty("metrics.regression.quantile_calibration"),
            "interval": torch_uncertainty("metrics.regression.interval"),
            "ause": torch_uncertainty("metrics.sparsification")}


@pytest.fixture(scope="module", autouse=True)
def float64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def torch_distribution(name: str, params: np.ndarray) -> D.Distribution:
    t = torch.tensor(params)
    if name == "normal":
        return D.Normal(t[:, 0], t[:, 1])
    if name == "laplace":
        return D.Laplace(t[:, 0], t[:, 1])
    if name == "cauchy":
        return D.Cauchy(t[:, 0], t[:, 1])
    return D.StudentT(t[:, 2], t[:, 0], t[:, 1])


def sample(seed: int, n: int = N, *, df: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    loc, scale = rng.normal(0, 3, n), rng.uniform(0.2, 3.0, n)
    y = loc + rng.normal(0, 1, n) * scale * rng.uniform(0.5, 2.0, n)  # miscalibrated on purpose
    cols = [loc, scale] + ([rng.uniform(1.0, 10.0, n)] if df else [])
    return np.column_stack(cols), y


def intervals(seed: int, n: int = N) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centre, half = rng.normal(0, 2, n), rng.uniform(0.1, 2.0, n)
    y = centre + rng.normal(0, 1.5, n)
    return np.column_stack([centre - half, centre + half]), y


@pytest.mark.parametrize("distribution", ["normal", "laplace", "cauchy", "student_t"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("seed", [0, 1])
def test_distribution_nll(tu, distribution, reduction, seed):
    params, y = sample(seed, df=distribution == "student_t")
    m = tu["nll"].DistributionNLL(reduction=reduction)
    m.update(torch_distribution(distribution, params), torch.tensor(y))
    ours = reg.DistributionNLL(distribution=distribution, reduction=reduction).update(params, y).compute()
    assert ours == pytest.approx(float(m.compute()), rel=1e-10)


@pytest.mark.parametrize("distribution", ["normal", "laplace", "cauchy"])
@pytest.mark.parametrize(("num_bins", "norm"), [(15, "l1"), (10, "l2"), (7, "max"), (1, "l1")])
@pytest.mark.parametrize("seed", [0, 1])
def test_quantile_calibration_error(tu, distribution, num_bins, norm, seed):
    params, y = sample(seed)
    m = tu["qce"].QuantileCalibrationError(num_bins=num_bins, norm=norm)
    m.update(torch_distribution(distribution, params), torch.tensor(y))
    ours = reg.QuantileCalibrationError(num_bins=num_bins, norm=norm, distribution=distribution)
    # the peer's levels are a float32 buffer (torch.linspace under register_buffer): gaps agree to ~1e-8
    assert ours.update(params, y).compute() == pytest.approx(float(m.compute()), abs=1e-7)


def test_quantile_calibration_error_ignore_index(tu):
    params, y = sample(3)
    y[::5] = -1.0
    m = tu["qce"].QuantileCalibrationError(ignore_index=-1)
    m.update(torch_distribution("normal", params), torch.tensor(y))
    ours = reg.QuantileCalibrationError(ignore_index=-1).update(params, y).compute()
    assert ours == pytest.approx(float(m.compute()), abs=1e-7)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_interval_metrics(tu, seed):
    iv, y = intervals(seed)
    lo, hi, t = torch.tensor(iv[:, 0]), torch.tensor(iv[:, 1]), torch.tensor(y)
    cov = tu["interval"].IntervalCoverage()
    cov.update(lo, hi, t)
    ours = reg.IntervalCoverage().update(iv, y).compute()
    # the peer divides in float32 (covered.float() / total): the same count, the share to float32's precision
    assert round(ours * N) == round(float(cov.compute()) * N)
    assert ours == pytest.approx(float(cov.compute()), rel=1e-7)
    width = tu["interval"].MeanIntervalWidth()
    width.update(lo, hi)
    assert reg.MeanIntervalWidth().update(iv).compute() == pytest.approx(float(width.compute()), rel=1e-12)
    for coverage in (0.5, 0.9, 0.99):
        score = tu["interval"].IntervalScore(coverage=coverage)
        score.update(lo, hi, t)
        ours = reg.IntervalScore(coverage=coverage).update(iv, y).compute()
        assert ours == pytest.approx(float(score.compute()), rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ause(tu, seed):
    rng = np.random.default_rng(seed)
    errors = rng.exponential(1.0, N)
    scores = errors + rng.normal(0, 0.7, N)  # informative, not perfect
    m = tu["ause"].AUSE()
    m.update(torch.tensor(scores), torch.tensor(errors))
    ours = reg.AUSE().update(scores, errors).compute()
    assert ours == pytest.approx(float(m.compute()), rel=1e-10)
    assert ours > 0


#: (registered name, peer class name, data for one pass)
FAMILY = [("distribution_nll", "DistributionNLL"), ("quantile_calibration_error", "QuantileCalibrationError"),
          ("interval_coverage", "IntervalCoverage"), ("mean_interval_width", "MeanIntervalWidth"),
          ("interval_score", "IntervalScore"), ("ause", "AUSE")]


@pytest.mark.parametrize(("name", "peer_name"), FAMILY)
def test_registered_and_peer_names_load_the_class(name, peer_name):
    assert type(resolve_metric(name)[0]) is type(resolve_metric(peer_name)[0]) is getattr(reg, peer_name)


def test_shards_merge_to_the_one_pass_value_and_get_an_interval():
    params, y = sample(5, 601)
    iv, yi = intervals(5, 601)
    s = np.random.default_rng(5).normal(size=601)
    data = {"distribution_nll": (params, y), "quantile_calibration_error": (params, y),
            "interval_coverage": (iv, yi), "mean_interval_width": (iv, None), "interval_score": (iv, yi),
            "ause": (s, np.abs(yi))}
    cuts = [0, 1, 300, 301, 601]
    for name, (p, r) in data.items():
        one = resolve_metric(name)[0].update(p, r).compute()
        parts = [resolve_metric(name)[0].update(p[a:b], None if r is None else r[a:b]) for a, b in zip(cuts, cuts[1:])]
        assert parts[0].merge(*parts[1:]).compute() == pytest.approx(one, rel=1e-12), name
        res = assay.evaluate(list(p), None if r is None else list(r), [name], n_resamples=200, seed=0)
        g = res.global_scores
        assert g[name] == pytest.approx(one, rel=1e-12), name
        assert g[f"{name}_ci_low"] < one < g[f"{name}_ci_high"], name


def test_bad_inputs_are_errors_naming_the_place():
    with pytest.raises(InvalidParameterError, match="instance 1 .*scale > 0"):
        reg.DistributionNLL().update([[0.0, 1.0], [0.0, 0.0]], [0.0, 1.0])
    with pytest.raises(InvalidParameterError, match="instance 0 has lower bound 2.0 above upper bound 1.0"):
        reg.IntervalCoverage().update([[2.0, 1.0]], [1.5])
    with pytest.raises(InvalidParameterError, match="instance 1 has error -1.0"):
        reg.AUSE().update([0.1, 0.2], [1.0, -1.0])
    with pytest.raises(InvalidParameterError, match="distribution"):
        reg.QuantileCalibrationError(distribution="student_t")  # torch's StudentT has no icdf: not offered
    with pytest.raises(InvalidParameterError, match="instance scores"):
        reg.DistributionNLL(reduction="none")
    with pytest.raises(InvalidParameterError, match="coverage"):
        reg.IntervalScore(coverage=1.0)
    with pytest.warns(assay.errors.UndefinedMetricWarning, match="two instances"):
        assert math.isnan(reg.AUSE().update([0.1], [1.0]).compute())
