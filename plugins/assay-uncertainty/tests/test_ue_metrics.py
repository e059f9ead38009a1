"""UE metrics against hand-derived values (derivations in the comments), peers and brute force."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import UndefinedMetricWarning
from assay.plugins import PluginSystem, use_plugin_system
from assay_uncertainty import plugin
from assay_uncertainty.ranking import PRAUC, ROCAUC, RPP, FPRAtRecall, KendallTau, SpearmanR
from assay_uncertainty.rejection import PRR
from assay_uncertainty.risk_coverage import AUGRC, AURC, EAUGRC, EAURC, RCCAUC, CoverageAtRisk, RiskAtCoverage

# Dataset A: u = [.1, .2, .3, .4], q = [1, 1, 0, 1]; risk r = [0, 0, 1, 0]; no ties.
# Selective risks R_k = 0, 0, 1/3, 1/4 at coverages .25, .5, .75, 1.
UA, QA = [0.1, 0.2, 0.3, 0.4], [1, 1, 0, 1]
# Dataset B (ties): u = [.5, .5, .1, .9], q = [1, 0, 1, 0]. Groups by u: {.1: r 0}, {.5: r 0, 1}, {.9: r 1}
# -> group ends K = 1, 3, 4 with cumulative risk S = 0, 1, 2.
UB, QB = [0.5, 0.5, 0.1, 0.9], [1, 0, 1, 0]


@pytest.fixture(scope="module")
def ps():
    system = PluginSystem(entry_points=False)
    system.register_plugin(plugin, name="assay_uncertainty")
    with use_plugin_system(system):
        yield system


def test_aurc_conventions_dataset_a():
    # fd-shifts: trapezoid .25*(0+0)/2 + .25*(0+1/3)/2 + .25*(1/3+1/4)/2 = 11/96, flat segment .25 * 0
    assert AURC()(UA, QA) == pytest.approx(11 / 96)
    assert AURC(convention="values")(UA, QA) == pytest.approx(11 / 96)
    # lm-polygraph: mean_k R_k = (0 + 0 + 1/3 + 1/4) / 4 = 7/48
    assert AURC(convention="lm-polygraph")(UA, QA) == pytest.approx(7 / 48)
    # torch-uncertainty: (1/4)(7/12 - (0 + 1/4)/2) = 11/96, divided by 1 - 1/4 -> 11/72
    assert AURC(convention="torch-uncertainty")(UA, QA) == pytest.approx(11 / 72)


def test_aurc_flat_segment_differs_between_fd_shifts_and_values():
    # u = [.1, .2], q = [0, 1]: R = 1, 1/2 at coverage .5, 1. Trapezoid .5 * 1.5 / 2 = .375; flat .5 * 1
    assert AURC()([0.1, 0.2], [0, 1]) == pytest.approx(0.875)
    assert AURC(convention="values")([0.1, 0.2], [0, 1]) == pytest.approx(0.375)


def test_e_aurc_dataset_a():
    e = 0.25  # error rate; analytic optimum e + (1 - e) ln(1 - e)
    assert EAURC()(UA, QA) == pytest.approx(11 / 96 - (e + (1 - e) * math.log(1 - e)))
    # values: 11/96 - mean of the k smallest risks' means (0, 0, 0, 1/4) = 11/96 - 1/16 = 5/96
    assert EAURC(convention="values")(UA, QA) == pytest.approx(5 / 96)
    # lm-polygraph: 7/48 - mean_k over sorted risks (0, 0, 0, 1/4) = 7/48 - 1/16 = 4/48
    assert EAURC(convention="lm-polygraph")(UA, QA) == pytest.approx(4 / 48)


def test_e_aurc_continuous_risk_uses_sorted_risks():
    # q = [.5, 1, 0] at u = [.1, .2, .3]: r = [.5, 0, 1]. Model R = .5, .25, .5; optimal (r sorted 0, .5, 1): 0, .25, .5
    # fd-shifts model: (1/3)(.5) + (1/3)(.5 + .25)/2 + (1/3)(.25 + .5)/2 = 1/6 + 1/4 = 5/12
    # optimal: 0 + 1/24 + 1/8 = 1/6
    assert AURC()([0.1, 0.2, 0.3], [0.5, 1.0, 0.0]) == pytest.approx(5 / 12)
    assert EAURC()([0.1, 0.2, 0.3], [0.5, 1.0, 0.0]) == pytest.approx(5 / 12 - 1 / 6)


def test_augrc_dataset_a():
    # G = 0, 0, 1/4, 1/4 at coverage .25 .. 1 with (0, 0): .25 * (0 + 1/4)/2 + .25 * (1/4 + 1/4)/2 = 3/32
    assert AUGRC()(UA, QA) == pytest.approx(3 / 32)
    assert EAUGRC()(UA, QA) == pytest.approx(3 / 32 - 0.25**2 / 2)


def test_ties_are_grouped_dataset_b():
    # fd-shifts: points (.25, 0), (.75, 1/3), (1, 1/2): .5*(0+1/3)/2 + .25*(1/3+1/2)/2 = 9/48
    assert AURC()(UB, QB) == pytest.approx(9 / 48)
    # per-k cumulative risk interpolated in the tie group: C = 0, .5, 1, 2 -> R = 0, 1/4, 1/3, 1/2, mean 13/48
    assert AURC(convention="lm-polygraph")(UB, QB) == pytest.approx(13 / 48)


def test_per_k_tie_rule_equals_mean_over_orders_of_tied_examples():
    u = np.array([0.2, 0.5, 0.5, 0.5, 0.9])
    q = np.array([1.0, 0.0, 1.0, 0.3, 0.0])
    tied = [1, 2, 3]
    vals = []
    for perm in itertools.permutations(tied):
        order = [0, *perm, 4]
        r = 1 - q[order]
        vals.append(np.mean(np.cumsum(r) / np.arange(1, 6)))
    assert AURC(convention="lm-polygraph")(u, q) == pytest.approx(np.mean(vals))


def test_prr_dataset_a():
    # M_k = 1, 1, 2/3, 3/4 -> raw 41/48; oracle (1, 1, 1, 0): 15/16; random = mean(q) = 3/4
    m = PRR()
    assert m(UA, QA) == pytest.approx(41 / 48)
    s = m.scores(UA, QA)
    assert (s.oracle, s.random) == (pytest.approx(15 / 16), pytest.approx(0.75))
    assert PRR(normalize=True)(UA, QA) == pytest.approx((41 / 48 - 0.75) / (15 / 16 - 0.75))  # 5/9
    # max_rejection=.5: R = 2 levels, k = 3, 4: raw (2/3 + 3/4)/2 = 17/24; oracle (1 + 3/4)/2 = 7/8 -> -1/3
    assert PRR(max_rejection=0.5)(UA, QA) == pytest.approx(17 / 24)
    assert PRR(max_rejection=0.5, normalize=True)(UA, QA) == pytest.approx(-1 / 3)


def test_prr_ties_and_continuous_quality():
    # B: q in u order: .1 -> 1, tie group {1, 0}, .9 -> 0: C = 1, 1.5, 2, 2 -> M = 1, .75, 2/3, .5 -> 35/48
    # oracle (1, 1, 0, 0): M = 1, 1, 2/3, 1/2 -> 19/24; random .5 -> normalised 11/14
    assert PRR()(UB, QB) == pytest.approx(35 / 48)
    assert PRR(normalize=True)(UB, QB) == pytest.approx(11 / 14)
    # continuous q = [2, 4, 0] (min-max -> [.5, 1, 0]) at u = [.1, .2, .3]: M = .5, .75, .5 -> 7/12;
    # oracle (1, .5, 0): 1, .75, .5 -> 3/4; random 1/2 -> (7/12 - 1/2)/(3/4 - 1/2) = 1/3
    assert PRR()([0.1, 0.2, 0.3], [2.0, 4.0, 0.0]) == pytest.approx(7 / 12)
    assert PRR(normalize=True)([0.1, 0.2, 0.3], [2.0, 4.0, 0.0]) == pytest.approx(1 / 3)


def test_prr_oracle_equals_random_gives_raw():
    # one rejection level (k = N only): raw = oracle = random = mean(q) = 2/3
    assert PRR(max_rejection=0.34, normalize=True)([0.1, 0.2, 0.3], [1, 0, 1]) == pytest.approx(2 / 3)


def test_ranking_metrics_dataset_a():
    # the failure (u=.3) is above 2 of 3 successes
    assert ROCAUC()(UA, QA) == pytest.approx(2 / 3)
    # thresholds high to low: .4 (success), .3 (failure): precision 1/2 at the only recall step
    assert PRAUC()(UA, QA) == pytest.approx(0.5)
    # recall 1 first reached at threshold .3, with 1 of 3 successes flagged
    assert FPRAtRecall()(UA, QA) == pytest.approx(1 / 3)
    # ranks u = 1..4, -q = [-1,-1,0,-1] ranks [2,2,4,2]: cov 1, var 5 and 3 -> 1/sqrt(15)
    assert SpearmanR()(UA, QA) == pytest.approx(1 / math.sqrt(15))
    # C = 2, D = 1, n0 = 6, ties in -q: 3 pairs -> 1 / sqrt(6 * 3)
    assert KendallTau()(UA, QA) == pytest.approx(1 / math.sqrt(18))
    # one pair with u_i < u_j and q_i < q_j: (u=.3, q=0) < (u=.4, q=1); / N^2
    assert RPP()(UA, QA) == pytest.approx(1 / 16)


def test_roc_auc_counts_ties_as_half():
    # failures at u .5, .9; successes at .5, .1: (.5 vs .5) 1/2, the other three pairs 1 -> 3.5 / 4
    assert ROCAUC()(UB, QB) == pytest.approx(0.875)


def test_risk_and_coverage_levels():
    assert RiskAtCoverage(coverage=0.8)(UA, QA) == pytest.approx(0.25)  # ceil(3.2) = 4 -> 1/4
    assert RiskAtCoverage(coverage=0.75)(UA, QA) == pytest.approx(1 / 3)
    assert RiskAtCoverage(coverage=0.5)(UA, QA) == pytest.approx(0.0)
    assert CoverageAtRisk(risk=0.26)(UA, QA) == pytest.approx(1.0)  # R_4 = 1/4
    assert CoverageAtRisk(risk=0.2)(UA, QA) == pytest.approx(0.5)
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(CoverageAtRisk(risk=0.1)([0.1, 0.2], [0, 1]))


def test_rcc_auc_is_lm_polygraph_aurc_of_normalised_quality():
    assert RCCAUC()(UA, QA) == pytest.approx(7 / 48)
    # q = [2, 4, 0] -> normalised [.5, 1, 0], risk [.5, 0, 1]: R = .5, .25, .5 -> mean 5/12
    assert RCCAUC()([0.1, 0.2, 0.3], [2.0, 4.0, 0.0]) == pytest.approx(5 / 12)


def test_all_correct_all_wrong_single_example():
    ones, zeros = [1, 1, 1], [0, 0, 0]
    u = [0.1, 0.2, 0.3]
    assert AURC()(u, ones) == 0.0 and EAURC()(u, ones) == pytest.approx(0.0)
    assert AURC()(u, zeros) == pytest.approx(1.0) and EAURC()(u, zeros) == pytest.approx(0.0)
    # all wrong: G = 1/3, 2/3, 1 with (0, 0): area 1/2 = the optimum e^2 / 2
    assert AUGRC()(u, zeros) == pytest.approx(0.5) and EAUGRC()(u, zeros) == pytest.approx(0.0)
    assert RPP()(u, ones) == 0.0
    for metric in (ROCAUC(), FPRAtRecall(), SpearmanR(), PRR()):
        with pytest.warns(UndefinedMetricWarning):
            assert math.isnan(metric(u, ones))
    assert PRAUC()(u, zeros) == pytest.approx(1.0)  # every flagged example is a failure
    assert AURC()([0.3], [0]) == pytest.approx(1.0)  # the flat segment from 0 at risk 1
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(AURC(convention="torch-uncertainty")([0.3], [0]))


def test_bad_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="same length"):
        AURC()([0.1, 0.2], [1])
    with pytest.raises(ValueError, match=r"`uncertainty\[1\]` is NaN; expected finite"):
        AURC()([0.1, float("nan")], [1, 0])
    with pytest.raises(ValueError, match=r"`quality\[0\]` is 0.5; expected binary quality"):
        ROCAUC()([0.1, 0.2], [0.5, 1])
    with pytest.raises(ValueError, match="convention"):
        AURC(convention="sklearn")
    with pytest.raises(ValueError, match="max_rejection"):
        PRR(max_rejection=0)


def _rng_case(seed, n=60, levels=6, binary=True):
    rng = np.random.default_rng(seed)
    u = rng.integers(0, levels, n) / levels  # many ties
    q = rng.integers(0, 2, n).astype(float) if binary else rng.random(n).round(1)
    return u, q


@pytest.mark.parametrize("seed", range(5))
def test_peer_sklearn_roc_pr_fpr(seed):
    import sklearn.metrics as sk
    u, q = _rng_case(seed)
    fail = (q == 0).astype(int)
    assert ROCAUC()(u, q) == pytest.approx(sk.roc_auc_score(fail, u))
    assert PRAUC()(u, q) == pytest.approx(sk.average_precision_score(fail, u))
    fpr, tpr, _ = sk.roc_curve(fail, u, drop_intermediate=False)
    assert FPRAtRecall(recall=0.9)(u, q) == pytest.approx(fpr[np.searchsorted(tpr, 0.9 - 1e-12)])


@pytest.mark.parametrize("seed", range(5))
def test_rpp_and_fd_shifts_aurc_against_brute_force(seed):
    u, q = _rng_case(seed, binary=False)
    n = len(u)
    brute = sum(1 for i in range(n) for j in range(n) if u[i] < u[j] and q[i] < q[j]) / n**2
    assert RPP()(u, q) == pytest.approx(brute)
    # fd-shifts by definition: one point per distinct u
    vals = np.unique(u)
    cov = np.array([np.mean(u <= v) for v in vals])
    risk = np.array([np.mean(1 - q[u <= v]) for v in vals])
    expected = cov[0] * risk[0] + sum((cov[i] - cov[i - 1]) * (risk[i] + risk[i - 1]) / 2 for i in range(1, len(vals)))
    assert AURC()(u, q) == pytest.approx(expected)


def test_torch_uncertainty_0_12_fpr_nearest_recall_convention():
    # failures at u = .9, .8, .3 (positives); successes at .7, .5, .1. Thresholds high -> low:
    # .9 rec 1/3 fp 0; .8 rec 2/3 fp 0; .7 rec 2/3 fp 1; .5 rec 2/3 fp 2; .3 rec 1 fp 2.
    u = [0.9, 0.8, 0.3, 0.7, 0.5, 0.1]
    q = [0, 0, 0, 1, 1, 1]
    assert FPRAtRecall(recall=0.95)(u, q) == pytest.approx(2 / 3)  # first reaching: .3
    # nearest to .7 is 2/3 at .8, .7 and .5; the lowest threshold wins (fp 2)
    assert FPRAtRecall(recall=0.7, convention="torch-uncertainty-0.12")(u, q) == pytest.approx(2 / 3)
    assert FPRAtRecall(recall=0.7)(u, q) == pytest.approx(2 / 3)  # first reaching .7: .3 (recall 1), fp 2
    assert FPRAtRecall(recall=0.6, convention="torch-uncertainty-0.12")(u, q) == pytest.approx(2 / 3)
    assert FPRAtRecall(recall=0.6)(u, q) == pytest.approx(0.0)  # first reaching .6: .8 with fp 0


UE_NAMES = ["prr", "prr[normalize=true]", "prr[max_rejection=0.5]", "rcc_auc", "roc_auc", "pr_auc", "spearman",
            "kendall", "rpp", "aurc", "aurc[convention=torch-uncertainty]", "aurc[convention=values]",
            "aurc[convention=lm-polygraph]", "e_aurc", "e_aurc[convention=values]", "aurc_achievable",
            "e_aurc_achievable", "augrc", "augrc[convention=torch-uncertainty]", "e_augrc",
            "fpr_at_recall", "fpr_at_recall[convention=torch-uncertainty]",
            "fpr_at_recall[convention=torch-uncertainty-0.12]", "risk_at_coverage",
            "coverage_at_risk[risk=0.5]", "ece", "mce", "rmsce", "adaptive_ece[n_bins=2]", "brier", "nll"]


def test_every_registered_ue_metric_is_in_the_property_test(ps):
    registry = ps.registry("ue_metric")
    own = {e.name for e in registry if "alias_of" not in e.metadata}  # an alias (FPR95) loads a listed name
    assert {n.split("[")[0] for n in UE_NAMES} == own
    assert {e.metadata["alias_of"] for e in registry if "alias_of" in e.metadata} <= own


@pytest.mark.parametrize("name", UE_NAMES)
def test_empty_input_is_nan_with_warning(ps, name):
    metric = ps.load("ue_metric", name)
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(metric([], []))


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_permutation_invariance_of_every_ue_metric(ps, data):
    n = data.draw(st.integers(2, 25))
    u = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=float) / 5
    q = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    perm = np.array(data.draw(st.permutations(range(n))))
    shifted = data.draw(st.booleans())
    if shifted:  # negative uncertainties take the other sort path
        u = u - 0.5
    for name in UE_NAMES:
        metric = ps.load("ue_metric", name)
        if shifted and getattr(metric, "requires_unit_interval", False):
            continue  # calibration metrics need uncertainty = 1 - p in [0, 1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b = metric(u, q), metric(u[perm], q[perm])
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=1e-12), name


@pytest.mark.parametrize("seed", range(4))
def test_three_curve_paths_match_brute_force(seed):
    # packed key sort (binary, u >= 0), stable merge (binary, negative u), argsort (any values)
    from assay_uncertainty._curves import group_ends

    rng = np.random.default_rng(seed)
    u = rng.integers(-3, 4, 80) / 4.0
    v = rng.integers(0, 2, 80).astype(float)
    vals = np.unique(u)
    k_ref = np.array([np.sum(u <= x) for x in vals])
    s_ref = np.array([np.sum(v[u <= x]) for x in vals])
    for shift in (0.0, 1.0):  # with and without negative values
        for binary in (True, False):
            K, S = group_ends(u + shift, v, binary=binary)
            np.testing.assert_array_equal(K, k_ref)
            np.testing.assert_allclose(S, s_ref)
    assert AURC()(u, 1 - v) == pytest.approx(AURC()(u + 1.0, 1 - v))


@pytest.mark.parametrize("n", [5, 50, 200])
@pytest.mark.parametrize("max_rejection", [1.0, 0.5, 0.2])
def test_prr_against_the_direct_definition(n, max_rejection):
    # distinct u (no ties): M_k from a plain cumulative sum in u order; oracle from quality sorted descending
    rng = np.random.default_rng(n)
    u, q = rng.random(n), rng.random(n)
    qn = (q - q.min()) / (q.max() - q.min())
    levels = int(np.floor(max_rejection * n + 1e-9))
    k = np.arange(n - levels + 1, n + 1)
    raw = np.mean(np.cumsum(qn[np.argsort(u)])[k - 1] / k)
    oracle = np.mean(np.cumsum(np.sort(qn)[::-1])[k - 1] / k)
    s = PRR(max_rejection=max_rejection).scores(u, q)
    assert (s.raw, s.oracle, s.random) == (pytest.approx(raw), pytest.approx(oracle), pytest.approx(qn.mean()))
    if levels == 1:  # only k = N: oracle = random = raw, and the convention returns raw
        assert s.normalized == pytest.approx(raw)
    else:
        assert s.normalized == pytest.approx((raw - qn.mean()) / (oracle - qn.mean()))


NAN = float("nan")
LN = math.log
# u = [.1, .2, .3]. All correct: risk 0 everywhere; p_correct = 1 - u = .9, .8, .7 with label 1 (15 bins: one per bin,
# gaps .1 .2 .3). All wrong: risk 1 everywhere; the same p with label 0 (gaps .9 .8 .7).
DEGENERATE = {
    # name: (all correct, all wrong)
    "prr": (NAN, NAN),  # constant quality: min-max normalisation undefined
    "prr[normalize=true]": (NAN, NAN),
    "rcc_auc": (NAN, NAN),
    "roc_auc": (NAN, NAN),  # one class
    "pr_auc": (NAN, 1.0),  # no failure to find / every flagged example is a failure
    "fpr_at_recall": (NAN, NAN),
    "spearman": (NAN, NAN),
    "kendall": (NAN, NAN),
    "rpp": (0.0, 0.0),
    "aurc": (0.0, 1.0),
    "aurc[convention=values]": (0.0, 2 / 3),  # trapezoid of risk 1 from coverage 1/3 to 1
    "aurc[convention=lm-polygraph]": (0.0, 1.0),
    "aurc[convention=torch-uncertainty]": (0.0, 1.0),  # ((3 - 1) / 3) / (1 - 1/3)
    "e_aurc": (0.0, 0.0),  # optimum 0 (e = 0) and 1 (e = 1)
    "e_aurc[convention=values]": (0.0, 2 / 3 - 1.0),
    "aurc_achievable": (0.0, 1.0),  # one class: the single point at coverage 1, constant risk
    "e_aurc_achievable": (0.0, 0.0),
    "augrc": (0.0, 0.5),
    # G_k = k/3 at k = 1..3: trapezoid (1/3)((1/3 + 2/3)/2 + (2/3 + 1)/2) = 4/9, divided by 1 - 1/3
    "augrc[convention=torch-uncertainty]": (0.0, 2 / 3),
    "e_augrc": (0.0, 0.0),
    "risk_at_coverage": (0.0, 1.0),
    "coverage_at_risk[risk=0.5]": (1.0, NAN),
    "ece": (0.2, 0.8),
    "mce": (0.3, 0.9),
    "rmsce": (math.sqrt(0.14 / 3), math.sqrt(1.94 / 3)),
    # top-label, 2 equal-mass bins (.7 .8 | .9): correct |2 - 1.5| + |1 - .9|; wrong |0 - 1.5| + |0 - .9|
    "adaptive_ece[n_bins=2]": (0.6 / 3, 2.4 / 3),
    "brier": (0.14 / 3, 1.94 / 3),
    "nll": (-(LN(0.9) + LN(0.8) + LN(0.7)) / 3, -(LN(0.1) + LN(0.2) + LN(0.3)) / 3),
}


def test_degenerate_table_covers_every_registered_ue_metric(ps):
    own = {e.name for e in ps.registry("ue_metric") if "alias_of" not in e.metadata}  # aliases load listed names
    assert {n.split("[")[0] for n in DEGENERATE} == own


@pytest.mark.parametrize("name", sorted(DEGENERATE))
def test_all_correct_and_all_wrong(ps, name):
    metric = ps.load("ue_metric", name)
    for q, expected in zip(([1, 1, 1], [0, 0, 0]), DEGENERATE[name]):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = metric([0.1, 0.2, 0.3], q)
        if math.isnan(expected):
            assert math.isnan(got), (name, q, got)
            # NaN comes with a warning
            assert any(issubclass(w.category, UndefinedMetricWarning) for w in caught), (name, q)
        else:
            assert got == pytest.approx(expected), (name, q)
