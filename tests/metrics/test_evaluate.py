"""assay.evaluate: unitxt's output contract, catalog names, collisions, intervals, JSON."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from assay_metric_samples import SampleAccuracy, SampleAUC, SampleExactMatch, SampleF1, SampleMedianAE

import assay
from assay.core.result import UndefinedMetricWarning
from assay.errors import InvalidParameterError, UnknownNameError
from assay.metrics.api import load_results


def test_output_contract(samples_system):
    res = assay.evaluate([3, 799, 50], [[5], [800], [50]], metrics=["sample_accuracy"], n_resamples=200, seed=0)
    g = res[0]["score"]["global"]
    assert g is res[2]["score"]["global"] is res.global_scores
    assert g["score"] == g["accuracy"] == pytest.approx(1 / 3) and g["score_name"] == "accuracy"
    assert {"score_ci_low", "score_ci_high", "accuracy_ci_low", "accuracy_ci_high"} <= set(g)
    assert g["score_ci_low"] == g["accuracy_ci_low"] and g["num_of_instances"] == 3
    assert res[0]["score"]["instance"] == {"accuracy": 0.0, "score": 0.0, "score_name": "accuracy"}
    assert res[2]["score"]["instance"]["accuracy"] == 1.0
    assert res[1]["prediction"] == 799 and res[1]["references"] == [800]
    assert res.info["seed"] == 0 and res.info["n_resamples"] == 200


def test_first_metric_is_the_main_score_and_prefix(samples_system):
    preds, refs = [1, 0, 1, 1], [[1], [0], [0], [1]]
    res = assay.evaluate(preds, refs, metrics=["sample_f1[score_prefix=m_]", "sample_accuracy"], n_resamples=0)
    g = res.global_scores
    # tp = 2, fp = 1, fn = 0 -> F1 = 4 / 5; accuracy 3 / 4
    assert g["score_name"] == "m_f1" and g["score"] == pytest.approx(0.8)
    assert g["m_precision"] == pytest.approx(2 / 3) and g["accuracy"] == 0.75
    assert "score_ci_low" not in g  # n_resamples=0: no intervals
    assert res[0]["score"]["instance"]["score_name"] == "m_f1"


def test_two_configurations_show_their_overrides(samples_system):
    preds, refs = [1, 0, 1, 1], [[1], [0], [0], [1]]
    res = assay.evaluate(preds, refs, metrics=["sample_f1", "sample_f1[positive=0]"], n_resamples=0)
    g = res.global_scores
    assert g["f1"] == pytest.approx(0.8)
    # positive = 0: tp = 1, fp = 0, fn = 1 -> F1 = 2 / 3
    assert g["sample_f1[positive=0]/f1"] == pytest.approx(2 / 3)


def test_collisions_are_errors(samples_system):
    first, second = SampleAccuracy(), SampleAccuracy()
    with pytest.raises(InvalidParameterError, match="listed twice .* give it a score_prefix"):
        assay.evaluate([1], [[1]], metrics=[first, second], n_resamples=0)
    assert first.score_prefix == second.score_prefix == ""  # objects are never altered
    with pytest.raises(InvalidParameterError, match="listed twice"):
        assay.evaluate([1], [[1]], metrics=["sample_accuracy", "sample_accuracy"], n_resamples=0)

    class OtherPrecision(SampleAccuracy):
        main_score = "precision"

        def reduce(self, totals):
            return {"precision": totals[..., 0] / totals[..., 1]}

    with pytest.raises(InvalidParameterError, match="both report the score 'precision'"):
        assay.evaluate([1], [[1]], metrics=[SampleF1(), OtherPrecision()], n_resamples=0)
    res = assay.evaluate([1], [[1]], metrics=[SampleF1(), OtherPrecision(score_prefix="o_")], n_resamples=0)
    assert res.global_scores["o_precision"] == 1.0


def test_unknown_metric_and_override(samples_system):
    with pytest.raises(UnknownNameError, match="sample_accuracy"):
        assay.evaluate([1], [[1]], metrics=["sample_acuracy"])
    with pytest.raises(InvalidParameterError, match="Unknown override 'postive'"):
        assay.evaluate([1], [[1]], metrics=["sample_f1[postive=0]"])


def test_each_metric_is_resampled_by_the_documented_scheme():
    # additive accuracy: the per-block Poisson(count) draw; a gathered metric computing the same number:
    # the per-position Poisson(1) weights; each written out independently (assay_interval_samples)
    from assay_interval_samples import reference_totals
    from scipy.stats import poisson

    rng = np.random.default_rng(0)
    refs = [[float(v)] for v in rng.integers(0, 2, 80)]
    preds = [float(r[0]) if rng.random() < 0.7 else 1 - r[0] for r in refs]

    class MeanMatch(SampleMedianAE):
        main_score = "match"

        def compute_global(self, predictions, references, task_data):
            return float(np.mean([p == r[0] for p, r in zip(predictions, references)]))

    res = assay.evaluate(preds, refs, metrics=[SampleAccuracy(), MeanMatch()], n_resamples=300, seed=4)
    g = res.global_scores
    assert g["accuracy"] == g["match"]
    hit = np.array([float(p == r[0]) for p, r in zip(preds, refs)])
    totals = reference_totals(4, 300, np.column_stack([hit, np.ones_like(hit)]))
    lo, hi = np.percentile(totals[:, 0] / totals[:, 1], [2.5, 97.5])
    assert (g["accuracy_ci_low"], g["accuracy_ci_high"]) == pytest.approx((lo, hi), rel=1e-12)
    u = np.random.Generator(np.random.Philox(np.random.SeedSequence([4, 0, 0]))).random((300, 4096))
    w = np.searchsorted(poisson(1.0).cdf(np.arange(30)), u, side="right")[:, :80]
    lo, hi = np.percentile((w @ hit) / w.sum(axis=1), [2.5, 97.5])
    assert (g["match_ci_low"], g["match_ci_high"]) == pytest.approx((lo, hi), rel=1e-12)
    # a metric's interval does not depend on the metrics evaluated beside it
    alone = assay.evaluate(preds, refs, metrics=[SampleAccuracy()], n_resamples=300, seed=4).global_scores
    assert (alone["accuracy_ci_low"], alone["accuracy_ci_high"]) == (g["accuracy_ci_low"], g["accuracy_ci_high"])


def test_interval_of_accuracy_is_close_to_the_normal_approximation():
    n = 2000
    preds = [1] * 1400 + [0] * 600
    res = assay.evaluate(preds, [[1]] * n, metrics=[SampleAccuracy()], n_resamples=4000, seed=0)
    g = res.global_scores
    half = 1.959964 * math.sqrt(0.7 * 0.3 / n)  # the bootstrap of a mean is close to normal here
    assert g["accuracy_ci_low"] == pytest.approx(0.7 - half, abs=0.003)
    assert g["accuracy_ci_high"] == pytest.approx(0.7 + half, abs=0.003)


def test_wilson_for_proportions_and_note_otherwise():
    res = assay.evaluate([1] * 81 + [0] * 182, [[1]] * 263, metrics=[SampleAccuracy()], ci_method="wilson")
    g = res.global_scores
    assert g["accuracy_ci_low"] == pytest.approx(0.2553, abs=1e-4)  # Newcombe (1998)
    res = assay.evaluate(["a", "bb"], [["a"], ["a"]], metrics=[SampleExactMatch()], ci_method="wilson",
                         n_resamples=100)
    assert "Wilson" in res.info["ci_notes"]["len_ratio"]
    assert "em" not in res.info["ci_notes"]  # 0/1 instance scores are a proportion


def test_degenerate_intervals_are_reported():
    res = assay.evaluate([1] * 10, [[1]] * 10, metrics=[SampleAccuracy()], n_resamples=100)
    g = res.global_scores
    assert g["accuracy_ci_low"] == g["accuracy_ci_high"] == 1.0 and "equal" in res.info["ci_notes"]["accuracy"]
    # AUC is undefined on resamples that draw only one class
    with pytest.warns(UndefinedMetricWarning, match=r"undefined \(NaN\) for: auc \(the score is undefined"):
        res = assay.evaluate([0.9, 0.1, 0.2], [[1], [0], [0]], metrics=[SampleAUC()], n_resamples=200, seed=0)
    g = res.global_scores
    assert g["auc"] == 1.0 and math.isnan(g["auc_ci_low"]) and math.isnan(g["score_ci_high"])
    assert "undefined (NaN) on" in res.info["ci_notes"]["auc"]
    with pytest.warns(UndefinedMetricWarning, match="BCa is undefined"):
        res = assay.evaluate([1] * 10, [[1]] * 10, metrics=[SampleAccuracy()], n_resamples=100, ci_method="bca")
    assert math.isnan(res.global_scores["accuracy_ci_low"]) and "BCa is undefined" in res.info["ci_notes"]["accuracy"]


def test_seed_reproducible_and_recorded():
    x = list(np.random.default_rng(1).normal(size=100))
    from assay_metric_samples import SampleAbsError

    a = assay.evaluate(x, [[0.0]] * 100, metrics=[SampleAbsError()], seed=3, n_resamples=100).global_scores
    b = assay.evaluate(x, [[0.0]] * 100, metrics=[SampleAbsError()], seed=3, n_resamples=100).global_scores
    assert a == b
    r = assay.evaluate(x, [[0.0]] * 100, metrics=[SampleAbsError()], seed=None, n_resamples=100)
    again = assay.evaluate(x, [[0.0]] * 100, metrics=[SampleAbsError()], seed=r.info["seed"], n_resamples=100)
    assert again.global_scores == r.global_scores


def test_cluster_bootstrap_is_wider_for_correlated_clusters():
    # 20 clusters of 10 identical outcomes: the cluster bootstrap sees 20 units, not 200
    preds = np.repeat(np.r_[np.ones(10), np.zeros(10)], 10).astype(int).tolist()
    groups = np.repeat(np.arange(20), 10).tolist()
    plain = assay.evaluate(preds, [[1]] * 200, metrics=[SampleAccuracy()], n_resamples=2000, seed=0).global_scores
    clus = assay.evaluate(preds, [[1]] * 200, metrics=[SampleAccuracy()], n_resamples=2000, seed=0,
                          groups=groups).global_scores
    w_plain = plain["accuracy_ci_high"] - plain["accuracy_ci_low"]
    w_clus = clus["accuracy_ci_high"] - clus["accuracy_ci_low"]
    # sd of a mean of 20 Bernoulli(0.5) clusters vs 200 instances: ratio sqrt(10)
    assert w_clus / w_plain == pytest.approx(math.sqrt(10), rel=0.15)


def test_stratified_bootstrap_with_constant_strata_has_no_width():
    # every stratum is constant, so a stratified resample always reproduces the data
    preds = [1] * 30 + [0] * 70
    res = assay.evaluate(preds, [[1]] * 100, metrics=[SampleAccuracy()], n_resamples=200, seed=0,
                         strata=[p for p in preds])
    g = res.global_scores
    assert g["accuracy_ci_low"] == g["accuracy_ci_high"] == 0.3


def test_save_and_load_round_trip(tmp_path, samples_system):
    with pytest.warns(UndefinedMetricWarning, match="len_ratio"):  # resamples of only the empty reference
        res = assay.evaluate(["a", "b", "c"], [["a"], ["x"], [""]], metrics=["sample_em"], n_resamples=50)
    path = res.save(tmp_path / "r.json")
    data = json.loads(path.read_text())
    assert data["format"] == "assay.evaluation/1"
    back = load_results(path)
    assert back.predictions == ["a", "b", "c"] and back.references == [["a"], ["x"], [""]]
    assert back[1]["score"]["instance"]["em"] == 0.0 and math.isnan(back[2]["score"]["instance"]["len_ratio"])
    assert back.global_scores["em_ci_low"] == res.global_scores["em_ci_low"]
    assert "em" in res.summary() and "[" in res.summary()


def test_bad_resampling_arguments():
    with pytest.raises(InvalidParameterError, match="'n_resamples'"):
        assay.evaluate([1], [[1]], metrics=[SampleAccuracy()], n_resamples=-1)
    with pytest.raises(InvalidParameterError, match="'confidence_level'"):
        assay.evaluate([1], [[1]], metrics=[SampleAccuracy()], confidence_level=95)
    with pytest.raises(InvalidParameterError, match="'ci_method'"):
        assay.evaluate([1], [[1]], metrics=[SampleAccuracy()], ci_method="normal")


def test_no_instances_warns_and_gives_nan():
    with pytest.warns(UndefinedMetricWarning, match="no instances"):
        res = assay.evaluate([], [], metrics=[SampleAccuracy()], n_resamples=100)
    g = res.global_scores
    assert math.isnan(g["accuracy"]) and math.isnan(g["accuracy_ci_low"]) and g["num_of_instances"] == 0
    assert res.info["ci_notes"]["accuracy"] == "no instances to resample" and len(res) == 0


def test_bca_for_a_non_additive_metric_matches_a_hand_computation_on_the_same_draw():
    from statistics import NormalDist

    from assay.metrics.resample import Resampler

    rng = np.random.default_rng(3)
    x = rng.exponential(size=40)
    res = assay.evaluate(list(x), [[0.0]] * 40, metrics=[SampleMedianAE()], n_resamples=2000, seed=0,
                         ci_method="bca")
    g = res.global_scores
    # the same draw, replayed: medians of the resamples, and leave-one-out medians for the acceleration
    theta_b = []
    Resampler(40, n_resamples=2000, seed=0).run(None, lambda b, idx: theta_b.append(np.median(x[idx])))
    theta_b = np.array(theta_b)
    jack = np.array([np.median(np.delete(x, i)) for i in range(40)])
    hat = np.median(x)
    nd = NormalDist()
    z0 = nd.inv_cdf((np.sum(theta_b < hat) + 0.5 * np.sum(theta_b == hat)) / 2000)
    d = jack.mean() - jack
    a = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    qs = [nd.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))) for z in (nd.inv_cdf(0.025), nd.inv_cdf(0.975))]
    lo, hi = np.percentile(theta_b, [100 * q for q in qs])
    assert g["median_ae"] == pytest.approx(hat)
    assert g["median_ae_ci_low"] == pytest.approx(lo) and g["median_ae_ci_high"] == pytest.approx(hi)


def test_percentile_interval_of_an_additive_metric_matches_a_replayed_draw():
    from assay_metric_samples import SampleAbsError

    from assay.metrics.resample import Resampler

    x = np.random.default_rng(8).normal(size=300)
    g = assay.evaluate(list(x), [[0.0]] * 300, metrics=[SampleAbsError()], n_resamples=500, seed=2).global_scores
    means = []
    Resampler(300, n_resamples=500, seed=2).run(None, lambda b, idx: means.append(np.abs(x[idx]).mean()))
    lo, hi = np.percentile(means, [2.5, 97.5])
    assert g["abs_error_ci_low"] == pytest.approx(lo, rel=1e-12)
    assert g["abs_error_ci_high"] == pytest.approx(hi, rel=1e-12)
