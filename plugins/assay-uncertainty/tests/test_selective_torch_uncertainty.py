"""torch-uncertainty 0.13.0's risk-coverage classes and their SCOD variants, run live beside assay's (issue 24).

Each torch-uncertainty class gets random inputs without ties in confidence (ties are where the
two differ by design: assay takes the expectation over the orders of tied examples); the peer
runs in float64 (its default dtype set so), so the values agree to rounding. Each family also
checks that shards merged equal one pass, and that ``assay.evaluate`` gives it an interval.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import assay
from assay.errors import InvalidParameterError
from assay_uncertainty import selective as sel


def run_peer(cls, *args, **options) -> float:
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        m = cls(**options)
        m.update(*[torch.as_tensor(a) for a in args])
        return float(m.compute())
    finally:
        torch.set_default_dtype(old)


def probs_and_labels(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(20, 300)), int(rng.integers(2, 6))
    p = rng.dirichlet(np.ones(c) * 0.7, n)
    # labels drawn from the probabilities, so confident examples are more often right
    y = np.array([rng.choice(c, p=row) for row in p])
    return p, y


PROBS = [
    ("AURC", sel.AURCOfProbs, {}),
    ("AUGRC", sel.AUGRCOfProbs, {}),
    ("CovAtxRisk", sel.CovAtxRisk, {"risk_threshold": 0.3}),
    ("CovAtxRisk", sel.CovAtxRisk, {"risk_threshold": 0.12}),
    ("CovAt5Risk", sel.CovAt5Risk, {}),
    ("RiskAtxCov", sel.RiskAtxCov, {"cov_threshold": 0.5}),
    ("RiskAtxCov", sel.RiskAtxCov, {"cov_threshold": 0.95}),
    ("RiskAt80Cov", sel.RiskAt80Cov, {}),
]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(("peer_name", "ours", "options"), PROBS, ids=[f"{p[0]}{p[2]}" for p in PROBS])
def test_probability_classes_match_torch_uncertainty(tu_classification, peer_name, ours, options, seed):
    p, y = probs_and_labels(seed)
    peer = getattr(tu_classification["risk_coverage"], peer_name)
    theirs = run_peer(peer, p, y, **options)
    with np.errstate(all="ignore"):
        mine = ours(**options).update(p, y).compute()
    if np.isnan(theirs):
        assert np.isnan(mine)
    else:
        assert mine == pytest.approx(theirs, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_binary_probabilities_are_read_as_two_columns(tu_classification, seed):
    rng = np.random.default_rng(100 + seed)
    p = rng.random(150)
    y = (rng.random(150) < p).astype(np.int64)
    for peer_name, ours, options in PROBS:
        theirs = run_peer(getattr(tu_classification["risk_coverage"], peer_name), p, y, **options)
        mine = ours(**options).update(p, y).compute()
        assert mine == pytest.approx(theirs, rel=1e-9, abs=1e-12, nan_ok=True), peer_name


SCOD = [
    ("SCODAURC", sel.SCODAURC, {}),
    ("SCODAURC", sel.SCODAURC, {"ood_cost": 0.8}),
    ("SCODAUGRC", sel.SCODAUGRC, {"ood_cost": 0.3}),
    ("SCODCovAtxRisk", sel.SCODCovAtxRisk, {"risk_threshold": 0.2}),
    ("SCODCovAt5Risk", sel.SCODCovAt5Risk, {"ood_cost": 0.05}),
    ("SCODRiskAtxCov", sel.SCODRiskAtxCov, {"cov_threshold": 0.6, "ood_cost": 0.7}),
    ("SCODRiskAt80Cov", sel.SCODRiskAt80Cov, {}),
]


def scod_inputs(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(20, 300))
    is_ood = (rng.random(n) < 0.3).astype(np.int64)
    scores = rng.normal(size=n) + 1.5 * is_ood  # OOD examples score higher on average
    errors = (rng.random(n) < 0.2).astype(np.int64)
    return scores, errors, is_ood


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(("peer_name", "ours", "options"), SCOD, ids=[f"{p[0]}{p[2]}" for p in SCOD])
def test_scod_classes_match_torch_uncertainty(tu_classification, peer_name, ours, options, seed):
    s, e, o = scod_inputs(seed)
    peer = getattr(tu_classification["scod_risk_coverage"], peer_name)
    theirs = run_peer(peer, s, e.astype(bool), o.astype(bool), **options)
    with np.errstate(all="ignore"):
        mine = ours(**options).update(s, e, o).compute()
    assert mine == pytest.approx(theirs, rel=1e-9, abs=1e-12, nan_ok=True)


def test_the_docstring_examples_by_hand():
    # torch-uncertainty's AURC example: conf .8 (right), .7 (right), .6 (wrong): R = 0, 0, 1/3;
    # trapezoid over 1/3, 2/3, 1: (0 + 0)/2/3 + (0 + 1/3)/2/3 = 1/18, divided by 1 - 1/3: 1/12
    assert sel.AURCOfProbs().update([[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]], [0, 1, 0]).compute() == pytest.approx(1 / 12)
    # CovAtxRisk example: conf .9 .8 .7 right, .6 .5 wrong: R_k = 0, 0, 0, 1/4, 2/5 -> k = 4 at risk .3
    m = sel.CovAtxRisk(risk_threshold=0.3)
    m.update([[0.9, 0.1], [0.6, 0.4], [0.8, 0.2], [0.5, 0.5], [0.7, 0.3]], [0, 1, 0, 1, 0])
    assert m.compute() == pytest.approx(0.8)


def test_ties_take_the_expected_order():
    # two examples tied at .8, one right and one wrong, after a right one at .9: R_2 is (0 + 1/2) / 2
    p = [[0.9, 0.1], [0.8, 0.2], [0.8, 0.2]]
    assert sel.RiskAtxCov(cov_threshold=2 / 3).update(p, [0, 0, 1]).compute() == pytest.approx(0.25)
    assert sel.RiskAtxCov(cov_threshold=2 / 3).update(p, [0, 1, 0]).compute() == pytest.approx(0.25)


FAMILIES = [
    (sel.AURCOfProbs, {}), (sel.AUGRCOfProbs, {}), (sel.CovAtxRisk, {"risk_threshold": 0.3}), (sel.CovAt5Risk, {}),
    (sel.RiskAtxCov, {"cov_threshold": 0.5}), (sel.RiskAt80Cov, {}),
]


@pytest.mark.parametrize(("cls", "options"), FAMILIES, ids=[c[0].__name__ for c in FAMILIES])
def test_shards_merged_equal_one_pass_and_intervals_exist(cls, options):
    p, y = probs_and_labels(3)
    one = cls(**options).update(p, y).compute()
    parts = [cls(**options).update(p[a:b], y[a:b]) for a, b in ((0, 7), (7, 50), (50, len(y)))]
    assert parts[0].merge(*parts[1:]).compute() == one
    res = assay.evaluate(list(p), list(y), metrics=[cls(**options)], n_resamples=50, seed=0)
    g = res.global_scores
    assert g[cls.name] == pytest.approx(one)
    assert g[f"{cls.name}_ci_low"] <= one <= g[f"{cls.name}_ci_high"]
    assert g[f"{cls.name}_ci_low"] < g[f"{cls.name}_ci_high"] or one == 1.0  # a coverage of 1 in every resample


def test_scod_shards_merged_equal_one_pass():
    s, e, o = scod_inputs(1)
    for _, cls, options in SCOD:
        one = cls(**options).update(s, e, o).compute()
        a, b = cls(**options).update(s[:9], e[:9], o[:9]), cls(**options).update(s[9:], e[9:], o[9:])
        assert a.merge(b).compute() == pytest.approx(one, nan_ok=True, rel=0, abs=0), cls.__name__


def test_bad_options_and_inputs_are_errors_naming_them():
    with pytest.raises(InvalidParameterError, match="cov_threshold"):
        sel.RiskAtxCov(cov_threshold=0.0)
    with pytest.raises(InvalidParameterError, match="risk_threshold"):
        sel.CovAtxRisk(risk_threshold=1.5)
    with pytest.raises(InvalidParameterError, match="ood_cost"):
        sel.SCODAURC(ood_cost=-0.1)
    with pytest.raises(InvalidParameterError, match=r"is_ood\[1\]"):
        sel.SCODAURC().update([0.1, 0.2], [0, 1], [0, 2])
    with pytest.raises(InvalidParameterError, match="is_ood"):
        sel.SCODAURC().update([0.1, 0.2], [0, 1])
    with pytest.warns(assay.errors.UndefinedMetricWarning):
        assert np.isnan(sel.CovAtxRisk(risk_threshold=0.0).update([[0.9, 0.1]], [1]).compute())
