"""The depth metrics against torch-uncertainty 0.13.0's classes, run live (issue 24, item 3).

Each class of ``torch_uncertainty/metrics/regression/depth.py`` is loaded from its file (the
``torch_uncertainty`` fixture of the root conftest.py) and given the same random depths as assay's
metric, in float64; the values agree to rounding. Then: the registered name and the peer's class
name load the same class, shards merge to the one-pass value, and ``assay.evaluate`` gives an
interval around it.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import assay
from assay.errors import InvalidParameterError
from assay.metrics.catalog import resolve_metric
from assay_classic import depth

N = 300


@pytest.fixture(scope="module")
def tu(torch_uncertainty):
    return torch_uncertainty("metrics.regression.depth")


@pytest.fixture(scope="module", autouse=True)
def float64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # the peer's states are tensors of the default dtype
    yield
    torch.set_default_dtype(old)


def depths(seed: int, n: int = N) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    target = rng.uniform(0.5, 80.0, n)
    pred = target * np.exp(rng.normal(0.0, 0.3, n))  # within a few factors of 1.25 of the truth
    return pred, target


def peer(cls, pred: np.ndarray, target: np.ndarray, **options) -> float:
    m = cls(**options)
    m.update(torch.tensor(pred), torch.tensor(target))
    return float(m.compute())


#: (assay class, peer class name, options)
CASES = [
    (depth.SILog, "SILog", {}),
    (depth.SILog, "SILog", {"sqrt": True}),
    (depth.SILog, "SILog", {"lmbda": 0.5}),
    (depth.SILog, "SILog", {"sqrt": True, "lmbda": 0.85}),
    (depth.Log10, "Log10", {}),
    (depth.ThresholdAccuracy, "ThresholdAccuracy", {"power": 1}),
    (depth.ThresholdAccuracy, "ThresholdAccuracy", {"power": 2}),
    (depth.ThresholdAccuracy, "ThresholdAccuracy", {"power": 3, "lmbda": 1.1}),
    (depth.MeanGTRelativeAbsoluteError, "MeanGTRelativeAbsoluteError", {}),
    (depth.MeanGTRelativeSquaredError, "MeanGTRelativeSquaredError", {}),
    (depth.MeanGTRelativeSquaredError, "MeanGTRelativeSquaredError", {"squared": False}),
    (depth.MeanSquaredLogError, "MeanSquaredLogError", {}),
    (depth.MeanSquaredLogError, "MeanSquaredLogError", {"squared": False}),
    (depth.MeanAbsoluteErrorInverse, "MeanAbsoluteErrorInverse", {}),
    (depth.MeanAbsoluteErrorInverse, "MeanAbsoluteErrorInverse", {"unit": "m"}),
    (depth.MeanAbsoluteErrorInverse, "MeanAbsoluteErrorInverse", {"unit": "mm"}),
    (depth.MeanSquaredErrorInverse, "MeanSquaredErrorInverse", {}),
    (depth.MeanSquaredErrorInverse, "MeanSquaredErrorInverse", {"unit": "m", "squared": False}),
    (depth.MeanSquaredErrorInverse, "MeanSquaredErrorInverse", {"unit": "mm"}),
]


@pytest.mark.parametrize(("cls", "peer_name", "options"), CASES, ids=lambda v: str(v) if isinstance(v, dict) else
                         getattr(v, "__name__", v))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_torch_uncertainty(tu, cls, peer_name, options, seed):
    pred, target = depths(seed)
    theirs = peer(getattr(tu, peer_name), pred, target, **options)
    ours = cls(**options).update(pred, target).compute()
    assert ours == pytest.approx(theirs, rel=1e-10, abs=1e-14)


def test_the_peers_docstring_examples(tu):
    # the numbers torch-uncertainty's docstrings print
    assert depth.SILog(sqrt=True).update([1.5, 2.0, 3.5, 5.0], [1.4, 2.2, 3.3, 5.2]).compute() == pytest.approx(
        0.0686, abs=5e-5)
    assert depth.ThresholdAccuracy(power=2).update([2.0, 3.0, 5.0, 8.0, 20.0],
                                                   [2.1, 2.5, 4.5, 10.0, 10.0]).compute() == pytest.approx(0.8)
    assert depth.MeanGTRelativeAbsoluteError().update([2.5, 1.0, 2.0, 8.0], [3.0, 1.5, 2.0, 7.0]).compute() == \
        pytest.approx(0.1607142984867096, rel=1e-7)
    assert depth.Log10().update([10.0, 100.0, 1000.0], [12.0, 95.0, 1020.0]).compute() == pytest.approx(
        0.03668594, rel=1e-6)


@pytest.mark.parametrize(("cls", "peer_name"), sorted({(c, p) for c, p, _ in CASES}, key=lambda t: t[1]))
def test_registered_and_peer_names_load_the_class(cls, peer_name):
    for name in (peer_name, resolve_metric(peer_name)[0].main_score):
        metric = resolve_metric(name)[0]
        assert type(metric) is cls, name


def test_shards_merge_to_the_one_pass_value_and_get_an_interval(tu):
    pred, target = depths(7, 601)
    for cls, peer_name, options in CASES:
        one = cls(**options).update(pred, target).compute()
        cuts = [0, 1, 250, 251, 601]
        parts = [cls(**options).update(pred[a:b], target[a:b]) for a, b in zip(cuts, cuts[1:])]
        merged = parts[0].merge(*parts[1:]).compute()
        assert merged == pytest.approx(one, rel=1e-12), (peer_name, options)
        assert merged == pytest.approx(peer(getattr(tu, peer_name), pred, target, **options), rel=1e-10)
    res = assay.evaluate(pred.tolist(), target.tolist(), ["silog", "abs_rel", "threshold_accuracy"],
                         n_resamples=200, seed=0)
    g = res.global_scores
    for name in ("silog", "abs_rel", "threshold_accuracy"):
        assert g[f"{name}_ci_low"] < g[name] < g[f"{name}_ci_high"], name


def test_non_positive_depths_are_an_error_naming_the_instance():
    with pytest.raises(InvalidParameterError, match="instance 2 .* strictly positive"):
        depth.SILog().update([1.0, 2.0, 0.0], [1.0, 1.0, 1.0])
    with pytest.raises(InvalidParameterError, match="unit"):
        depth.MeanSquaredErrorInverse(unit="cm")
    with pytest.raises(InvalidParameterError, match="power"):
        depth.ThresholdAccuracy(power=-1)
