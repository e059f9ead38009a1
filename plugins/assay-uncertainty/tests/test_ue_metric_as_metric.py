"""UE metrics are metrics: the call, streaming, sharding, pickling, intervals and paired comparison.

Expected values come from second implementations written here: ROC-AUC by counting pairs
(Mann-Whitney), PRR by LM-Polygraph's running means, the percentile bootstrap and the
paired tests re-implemented with the resample indices drawn by numpy from the same seed.
"""

from __future__ import annotations

import math
import os
import pickle
import sys
import warnings

import numpy as np
import pytest

import assay
from assay import load_ue_metric
from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.metrics import Metric
from assay.uncertainty import UEMetric

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from assay_ue_references import MeanUncertainty, data, percentile, percentile_p, ref_auc, ref_indices, ref_prr


# --------------------------------------------------------------------------- the metric protocol
def test_a_ue_metric_is_a_metric_and_the_call_still_works():
    u, q = data()
    m = load_ue_metric("roc_auc")
    assert isinstance(m, Metric) and isinstance(m, UEMetric)
    assert m.main_score == "roc_auc" and not m.additive and not m.per_instance
    assert m(u, q) == pytest.approx(ref_auc(u, q))
    assert m(list(u), list(q)) == pytest.approx(ref_auc(u, q))


def test_streaming_equals_one_call():
    u, q = data()
    m = load_ue_metric("roc_auc")
    for start in range(0, 40, 7):
        m.update(u[start:start + 7], q[start:start + 7])
    out = m.compute_scores()
    assert out["roc_auc"] == pytest.approx(ref_auc(u, q))
    assert out["score"] == out["roc_auc"] and out["score_name"] == "roc_auc"
    m.reset()
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(m.compute_scores()["roc_auc"])


def test_shards_merge_in_order_and_states_pickle():
    u, q = data()
    shards = [load_ue_metric("prr").update(u[a:b], q[a:b]) for a, b in ((0, 13), (13, 14), (14, 40))]
    merged = pickle.loads(pickle.dumps(shards[0])).merge(*[pickle.loads(pickle.dumps(s)) for s in shards[1:]])
    raw, normalized = ref_prr(u, q)
    out = merged.compute_scores()
    assert out["prr"] == pytest.approx(raw) and out["prr_normalized"] == pytest.approx(normalized)


def test_named_extra_scores_are_declared_and_returned():
    u, q = data()
    m = load_ue_metric("prr[normalize=true]")
    raw, normalized = ref_prr(u, q)
    assert m.score_names == ("prr", "prr_normalized") == m.score_names_for_ci
    assert m.all_scores(u, q) == pytest.approx({"prr": normalized, "prr_normalized": normalized})
    assert load_ue_metric("prr").all_scores(u, q) == pytest.approx({"prr": raw, "prr_normalized": normalized})


def test_bad_rows_are_errors_naming_the_input():
    m = load_ue_metric("roc_auc")
    with pytest.raises(InvalidParameterError, match="uncertainty"):
        m.update([0.1, math.nan], [1, 0])
    with pytest.raises(InvalidParameterError, match=r"quality\[1\]"):
        m.update([0.1, 0.2], [1, 0.5])  # ROC-AUC needs binary quality
    with pytest.raises(InvalidParameterError, match="references"):
        m.update([0.1, 0.2])  # no quality
    assert m.state.n == 0  # nothing half-added


def test_a_subclass_that_skips_our_init_still_has_a_score_prefix():
    class Bare(UEMetric):
        name = "bare"

        def __init__(self, k=1):
            self.k = k

        def _score(self, u, q):
            return float(self.k)

    m = Bare()
    assert m([0.1], [1]) == 1.0 and m.score_prefix == "" and m.update([0.2], [0]).compute_scores()["bare"] == 1.0


# --------------------------------------------------------------------------- intervals and comparisons
@pytest.mark.parametrize("seed", [0, 11])
def test_evaluate_intervals_are_the_percentile_bootstrap_on_numpy_indices(seed):
    u, q = data()
    B = 200
    res = assay.evaluate(u, q, metrics=[load_ue_metric("roc_auc")], n_resamples=B, seed=seed)
    g = res[0]["score"]["global"]
    idx = ref_indices(len(u), B, seed)
    want = percentile([ref_auc(u[i], q[i]) for i in idx])
    assert g["roc_auc"] == pytest.approx(ref_auc(u, q))
    assert (g["roc_auc_ci_low"], g["roc_auc_ci_high"]) == pytest.approx(want, abs=1e-12)


def test_extra_scores_get_intervals_from_the_same_resamples():
    u, q = data()
    B = 150
    res = assay.evaluate(u, q, metrics=[MeanUncertainty()], n_resamples=B, seed=5)
    g = res[0]["score"]["global"]
    idx = ref_indices(len(u), B, 5)
    fail = [u[i][q[i] == 0].mean() for i in idx]
    ok = [u[i][q[i] == 1].mean() for i in idx]
    assert (g["mean_u_fail_ci_low"], g["mean_u_fail_ci_high"]) == pytest.approx(percentile(fail), abs=1e-12)
    assert (g["mean_u_ok_ci_low"], g["mean_u_ok_ci_high"]) == pytest.approx(percentile(ok), abs=1e-12)


def test_paired_comparison_of_two_estimators_matches_a_hand_written_paired_bootstrap():
    u, q = data()
    rng = np.random.default_rng(9)
    ub = u + rng.normal(scale=1.5, size=len(u))  # a noisier estimator
    B, seed = 300, 4
    m = load_ue_metric("roc_auc")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ra = assay.evaluate(u, q, metrics=[m], n_resamples=0)
        rb = assay.evaluate(ub, q, metrics=[m], n_resamples=0)
    c = assay.compare(ra, rb, metric="roc_auc", n_resamples=B, seed=seed)
    delta = ref_auc(ub, q) - ref_auc(u, q)
    idx = ref_indices(len(u), B, seed)
    boot = np.array([ref_auc(ub[i], q[i]) - ref_auc(u[i], q[i]) for i in idx])
    p_boot = (1 + np.count_nonzero(np.abs(boot - delta) >= abs(delta))) / (B + 1)
    swap_rng = np.random.default_rng([seed, 1])
    perm = []
    for _ in range(B):
        s = swap_rng.random(len(u)) < 0.5
        perm.append(ref_auc(np.where(s, u, ub), q) - ref_auc(np.where(s, ub, u), q))
    p_perm = (1 + np.count_nonzero(np.abs(perm) >= abs(delta) - 1e-12)) / (B + 1)
    assert c.difference == pytest.approx(delta)
    assert (c.ci_low, c.ci_high) == pytest.approx(percentile(boot), abs=1e-12)
    assert c.p_value_bootstrap == pytest.approx(p_boot)
    assert c.p_value_randomization == pytest.approx(p_perm)
    # the headline p-value inverts the interval of the verdict
    assert c.p_value == c.p_value_percentile == pytest.approx(percentile_p(boot), abs=1e-12)
    assert c.significant == (c.p_value < 0.05)


REGISTERED = ["prr", "prr[normalize=true]", "rcc_auc", "roc_auc", "pr_auc", "spearman", "kendall", "rpp", "aurc",
              "e_aurc", "augrc", "risk_at_coverage", "coverage_at_risk[risk=0.5]", "fpr_at_recall"]


@pytest.mark.parametrize("spec", REGISTERED)
def test_every_registered_metric_streams_and_merges_like_the_call(spec):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    u_all, q_all = data(n=24, seed=8)
    u_all = np.round(u_all, 1)  # ties

    @settings(max_examples=15, deadline=None)
    @given(st.lists(st.integers(0, 24), min_size=0, max_size=4))
    def check(cuts):
        bounds = [0, *sorted(cuts), 24]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            want = load_ue_metric(spec).all_scores(u_all, q_all)
            parts = [load_ue_metric(spec).update(u_all[a:b], q_all[a:b]) for a, b in zip(bounds, bounds[1:])]
            got = pickle.loads(pickle.dumps(parts[0])).merge(*parts[1:]).compute_scores()
        for name, value in want.items():
            assert got[name] == pytest.approx(value, nan_ok=True)
        assert got["score"] == pytest.approx(load_ue_metric(spec)(u_all, q_all), nan_ok=True)

    check()


def test_a_legacy_subclass_that_overrides_the_call_is_still_a_metric():
    class Legacy(UEMetric):
        name = "legacy_mean_u"

        def __call__(self, uncertainty, quality):
            return float(np.mean(uncertainty))

    u, q = data()
    m = Legacy()
    assert m.update(u[:10], q[:10]).update(u[10:], q[10:]).compute_scores()["legacy_mean_u"] == pytest.approx(u.mean())
    res = assay.evaluate(u, q, metrics=[Legacy()], n_resamples=50, seed=2)
    want = percentile([u[i].mean() for i in ref_indices(len(u), 50, 2)])
    g = res[0]["score"]["global"]
    assert (g["legacy_mean_u_ci_low"], g["legacy_mean_u_ci_high"]) == pytest.approx(want, abs=1e-12)
