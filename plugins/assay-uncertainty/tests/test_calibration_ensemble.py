"""Calibration and ensemble metrics against hand derivations, scikit-learn and torch-uncertainty's example."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.errors import UndefinedMetricWarning
from assay_uncertainty.calibration import ECE, MCE, NLL, RMSCE, AdaptiveECE, BrierScore, CalibrationUEMetric
from assay_uncertainty.ensemble import Disagreement, Entropy, MutualInformation, VariationRatio


def test_binary_ece_mce_rmsce():
    # 2 bins; p = .9, .8 in bin 1 (conf .85, acc 1/2, gap .35), .3 in bin 0 (conf .3, acc 0, gap .3)
    p, y = [0.9, 0.8, 0.3], [1, 0, 0]
    assert ECE(n_bins=2).update(p, y).compute_scores()["ece"] == pytest.approx(2 / 3 * 0.35 + 1 / 3 * 0.3)
    assert MCE(n_bins=2).update(p, y).compute_scores()["mce"] == pytest.approx(0.35)
    assert RMSCE(n_bins=2).update(p, y).compute() == pytest.approx(math.sqrt(2 / 3 * 0.35**2 + 1 / 3 * 0.09))


def test_multiclass_top_label_ece_and_argmax_tie_to_first_class():
    # conf .7 (pred 0 = label, bin 3 of 5), .65 (pred 1 != 0, bin 3), .5 tie -> pred 0 != 1 (bin 2)
    probs = [[0.7, 0.2, 0.1], [0.35, 0.65, 0.0], [0.5, 0.5, 0.0]]
    labels = [0, 0, 1]
    # bin 3: n 2, acc 1/2, conf .675 -> 2/3 * .175; bin 2: conf .5, acc 0 -> 1/3 * .5
    assert ECE(n_bins=5).update(probs, labels).compute_scores()["ece"] == pytest.approx(2 / 3 * 0.175 + 1 / 3 * 0.5)


def test_confidence_one_goes_to_last_bin_and_merge_equals_one_pass():
    assert ECE(n_bins=10).update([1.0], [1]).compute_scores()["ece"] == pytest.approx(0.0)
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), 300)
    y = rng.integers(0, 4, 300)
    one = ECE().update(p, y).compute_scores()["ece"]
    a, b = ECE().update(p[:100], y[:100]), ECE().update(p[100:], y[100:])
    assert a.merge(b).compute_scores()["ece"] == pytest.approx(one)
    # the per-instance rows (map_batch) sum to the same tallies as the bincount fast path
    rows = ECE().map_batch(p, y)
    assert ECE().reduce(rows.sum(axis=0))["ece"] == pytest.approx(one)


def test_adaptive_ece_equal_mass():
    # binary top-label: conf .9(acc 1) .8(pred 0, y 0: 1) .6(pred 1, y 0: 0) .7(1) .6(pred 0, y 1: 0)
    # sorted: .6 .6 .7 | .8 .9 -> |1 - 1.9| + |2 - 1.7| = 1.2, / 5
    m = AdaptiveECE(n_bins=2)
    assert m.update([0.9, 0.2, 0.6, 0.7, 0.4], [1, 0, 0, 1, 1]).compute_scores()["adaptive_ece"] == pytest.approx(0.24)
    with pytest.raises(ValueError, match="at least n_bins"):
        AdaptiveECE(n_bins=15).update([0.9], [1]).compute()


def test_brier_and_nll_hand_and_sklearn():
    assert BrierScore().update([[0.7, 0.2, 0.1]], [0]).compute_scores()["brier"] == pytest.approx(0.09 + 0.04 + 0.01)
    assert BrierScore().update([0.8], [0]).compute_scores()["brier"] == pytest.approx(0.64)
    assert NLL().update([[0.7, 0.2, 0.1]], [0]).compute_scores()["nll"] == pytest.approx(-math.log(0.7))
    import sklearn.metrics as sk
    rng = np.random.default_rng(1)
    p = rng.random(50)
    y = rng.integers(0, 2, 50)
    assert BrierScore().update(p, y).compute_scores()["brier"] == pytest.approx(sk.brier_score_loss(y, p))
    assert NLL().update(p, y).compute_scores()["nll"] == pytest.approx(sk.log_loss(y, p))


def test_calibration_input_checks_and_empty():
    with pytest.raises(ValueError, match="sum to 1"):
        ECE().update([[0.5, 0.6]], [0])
    with pytest.raises(ValueError, match="labels"):
        ECE().update([[0.5, 0.5]], [2])
    with pytest.raises(ValueError, match="n_bins"):
        ECE(n_bins=0)
    with pytest.warns(UndefinedMetricWarning, match="no data"):
        assert math.isnan(ECE().compute_scores()["ece"])


def test_calibration_as_ue_metric_uses_one_minus_uncertainty():
    # u = 1 - p: same numbers as test_binary_ece_mce_rmsce
    m = CalibrationUEMetric(ECE(n_bins=2))
    assert m([0.1, 0.2, 0.7], [1, 0, 0]) == pytest.approx(2 / 3 * 0.35 + 1 / 3 * 0.3)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        m([1.5, 0.2], [1, 0])


DOC_PROBS = [[[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]], [[0.4, 0.6], [0.5, 0.5], [0.3, 0.7]]]


def test_disagreement_torch_uncertainty_documented_example():
    # example 1: all vote 0 -> 0; example 2: votes 1, 0 (tie -> first), 1 -> 1 - 1/3 = 2/3; mean 1/3
    m = Disagreement(reduction="mean")
    m.update(DOC_PROBS)
    assert round(m.compute_scores()["disagreement"], 4) == 0.3333
    none = Disagreement(reduction="none")
    none.update(DOC_PROBS)
    np.testing.assert_allclose(none.compute(), [0.0, 2 / 3])
    s = Disagreement(reduction="sum").update(DOC_PROBS[:1])
    s2 = Disagreement(reduction="sum").update(DOC_PROBS[1:])
    assert s.merge(s2).compute_scores()["score"] == pytest.approx(2 / 3)


def test_ensemble_errors():
    with pytest.raises(ValueError):
        Disagreement(reduction="max")
    with pytest.raises(ValueError, match=r"shape \(B, N, C\)"):
        Disagreement().update([[0.5, 0.5]])
    with pytest.raises(ValueError, match="sum to 1"):
        Disagreement().update([[[0.5, 0.6], [0.5, 0.5]]])
    with pytest.warns(UndefinedMetricWarning):
        m = Disagreement(reduction="none")
        m.update([[[0.5, 0.5]]])
    assert math.isnan(m.compute()[0])


def test_entropy_mutual_information_variation_ratio():
    ln2 = math.log(2)
    mi = MutualInformation().update([[[1.0, 0.0], [0.0, 1.0]]])  # H(mean) = ln 2, members 0
    assert mi.compute_scores()["mutual_information"] == pytest.approx(ln2)
    ent = Entropy().update([[[0.5, 0.5], [1.0, 0.0]]])  # (ln 2 + 0) / 2
    assert ent.compute_scores()["ensemble_entropy"] == pytest.approx(ln2 / 2)
    probs = [[[0.9, 0.1], [0.4, 0.6], [0.45, 0.55]]]  # mean (.5833, .4167) -> c* = 0; one vote for 0
    assert VariationRatio().update(probs).compute_scores()["score"] == pytest.approx(2 / 3)
    vp = VariationRatio(probabilistic=True).update(probs)
    assert vp.compute_scores()["score"] == pytest.approx(1 - (0.9 + 0.4 + 0.45) / 3)


def test_metric_classes_are_importable_from_the_package():
    import assay_uncertainty

    assert assay_uncertainty.Disagreement is Disagreement
    assert assay_uncertainty.BrierScore is BrierScore
    m = assay_uncertainty.Disagreement(reduction="mean")
    m.update(DOC_PROBS)
    assert round(m.compute_scores()["disagreement"], 4) == 0.3333
    with pytest.raises(AttributeError, match="no attribute 'Disagreements'"):
        assay_uncertainty.Disagreements  # noqa: B018
