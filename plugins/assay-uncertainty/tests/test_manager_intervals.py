"""UEManager intervals, named extra scores, compare(), tables, and their save / load.

Expected values come from second implementations (pair-counting ROC-AUC, LM-Polygraph's
PRR) resampled with the indices numpy draws from the manager's seed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys

import numpy as np
import pytest

from assay.errors import InvalidParameterError, SaveFormatError
from assay.uncertainty import Estimator, UEMetric
from assay_uncertainty.manager import UEManager

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from assay_ue_references import MeanUncertainty, percentile, percentile_p, ref_auc, ref_indices, ref_prr


def records(n=40, seed=2):
    """msp = -sum log p ranks failures above successes with some overlap; perplexity is noise."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        correct = i % 2
        k = int(rng.integers(1, 4))
        lp = list(-rng.uniform(0.05, 0.6, size=k) - (0.0 if correct else 0.25))
        out.append({"log_probs": lp, "correct": correct})
    return out


def msp_and_quality(recs):
    return np.array([-sum(r["log_probs"]) for r in recs]), np.array([float(r["correct"]) for r in recs])


def ppl(recs):
    return np.array([-np.mean(r["log_probs"]) for r in recs])


KEY = ("sequence", "msp", "accuracy", "roc_auc")


# --------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("kwargs, name", [
    ({"n_resamples": -1}, "n_resamples"), ({"n_resamples": 1.5}, "n_resamples"), ({"n_resamples": True}, "n_resamples"),
    ({"confidence_level": 1.0}, "confidence_level"), ({"confidence_level": 0}, "confidence_level"),
    ({"confidence_level": math.nan}, "confidence_level"), ({"confidence_level": "0.9"}, "confidence_level"),
    ({"seed": -1}, "seed"), ({"seed": 2.0}, "seed"),
])
def test_resampling_parameters_are_validated(kwargs, name):
    with pytest.raises(InvalidParameterError, match=f"'{name}'.*UEManager"):
        UEManager(records(), estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"], **kwargs)


def test_default_is_no_intervals_and_a_fresh_seed_is_kept():
    man = UEManager(records(), estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"])
    man()
    assert man.n_resamples == 0 and man.intervals == {} and KEY in man.metrics
    assert isinstance(UEManager(records(), seed=None).seed, int)


# --------------------------------------------------------------------------- intervals
@pytest.mark.parametrize("seed", [0, 7])
def test_intervals_are_the_percentile_bootstrap_of_every_score(seed):
    recs = records()
    B = 200
    man = UEManager(recs, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["roc_auc", "prr"],
                    n_resamples=B, confidence_level=0.9, seed=seed)
    man()
    u, q = msp_and_quality(recs)
    idx = ref_indices(len(u), B, seed)  # one draw shared by every UE metric of the pair
    assert man.metrics[KEY] == pytest.approx(ref_auc(u, q))
    assert man.intervals[KEY] == pytest.approx(percentile([ref_auc(u[i], q[i]) for i in idx], 0.9), abs=1e-12)
    prr = [ref_prr(u[i], q[i]) for i in idx]
    assert man.intervals[("sequence", "msp", "accuracy", "prr")] == pytest.approx(
        percentile([p[0] for p in prr], 0.9), abs=1e-12)
    assert man.intervals[("sequence", "msp", "accuracy", "prr_normalized")] == pytest.approx(
        percentile([p[1] for p in prr], 0.9), abs=1e-12)
    assert set(man.intervals) == set(man.metrics)


def test_undefined_resamples_give_a_nan_interval_with_a_note():
    recs = [{"log_probs": [-0.1], "correct": 1}, {"log_probs": [-2.0], "correct": 0},
            {"log_probs": [-0.5, -0.5], "correct": 1}]
    man = UEManager(recs, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"], n_resamples=100)
    man()
    lo, hi = man.intervals[KEY]
    assert math.isnan(lo) and math.isnan(hi) and "undefined" in man.interval_notes[KEY]


# --------------------------------------------------------------------------- named extra scores
def test_extra_scores_of_any_metric_are_stored_with_intervals():
    recs = records()
    man = UEManager(recs, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=[MeanUncertainty()],
                    n_resamples=50, seed=1)
    man()
    u, q = msp_and_quality(recs)
    assert man.metrics[("sequence", "msp", "accuracy", "mean_u_fail")] == pytest.approx(u[q == 0].mean())
    assert man.metrics[("sequence", "msp", "accuracy", "mean_u_ok")] == pytest.approx(u[q == 1].mean())
    idx = ref_indices(len(u), 50, 1)
    assert man.intervals[("sequence", "msp", "accuracy", "mean_u_ok")] == pytest.approx(
        percentile([u[i][q[i] == 1].mean() for i in idx]), abs=1e-12)


def test_extra_scores_keep_the_overrides_of_the_metric():
    man = UEManager(records(), estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["prr[max_rejection=0.5]"])
    man()
    assert {k[3] for k in man.metrics} == {"prr[max_rejection=0.5]", "prr_normalized[max_rejection=0.5]"}


def test_two_metrics_reporting_the_same_key_are_an_error():
    class Clash(UEMetric):
        name = "mean_u_ok"

        def _score(self, u, q):
            return 0.0

    with pytest.raises(InvalidParameterError, match="'mean_u_fail' and 'mean_u_ok' both report"):
        UEManager(records(), estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=[MeanUncertainty(), Clash()])


def test_a_plain_function_gets_intervals_too():
    def share_failures_above_median(u, q):
        return float(np.mean(q[u > np.median(u)] == 0))

    recs = records()
    man = UEManager(recs, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=[share_failures_above_median],
                    n_resamples=30, seed=2)
    man()
    u, q = msp_and_quality(recs)
    key = ("sequence", "msp", "accuracy", "function")
    idx = ref_indices(len(u), 30, 2)
    assert man.intervals[key] == pytest.approx(
        percentile([share_failures_above_median(u[i], q[i]) for i in idx]), abs=1e-12)


# --------------------------------------------------------------------------- compare
def test_compare_is_a_paired_bootstrap_on_shared_indices():
    recs = records()
    man = UEManager(recs, estimators=["msp", "perplexity"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"],
                    n_resamples=250, seed=3)
    man()
    c = man.compare(KEY, ("sequence", "perplexity", "accuracy", "roc_auc"))
    ua, q = msp_and_quality(recs)
    ub = ppl(recs)
    delta = ref_auc(ub, q) - ref_auc(ua, q)
    boot = np.array([ref_auc(ub[i], q[i]) - ref_auc(ua[i], q[i]) for i in ref_indices(len(q), 250, 3)])
    assert c.difference == pytest.approx(delta)
    assert (c.ci_low, c.ci_high) == pytest.approx(percentile(boot), abs=1e-12)
    assert c.p_value_bootstrap == pytest.approx((1 + np.count_nonzero(np.abs(boot - delta) >= abs(delta))) / 251)
    assert c.p_value == pytest.approx(percentile_p(boot), abs=1e-12) and c.n == len(q)
    assert c.significant == (c.p_value < 0.05) and (c.better is None) == (c.p_value >= 0.05)
    # the other way round: the same test, the sign flipped
    back = man.compare(("sequence", "perplexity", "accuracy", "roc_auc"), KEY)
    assert back.difference == pytest.approx(-delta) and back.p_value_bootstrap == pytest.approx(c.p_value_bootstrap)


class BigPerplexity(Estimator):
    """The perplexity estimator on another scale: 1000 x perplexity + 7 (the same order)."""

    name, level, dependencies = "big_perplexity", "sequence", ("log_probs",)

    def __call__(self, stats):
        return 1000.0 * np.array([-np.mean(lp) for lp in stats["log_probs"]]) + 7.0


def test_the_randomization_test_swaps_ranks_so_the_scale_of_an_estimator_does_not_matter():
    from scipy.stats import rankdata

    import assay
    from assay.plugins import load_ue_metric

    recs = records(n=60, seed=5)
    man = UEManager(recs, estimators=["msp", "perplexity", BigPerplexity()], gen_metrics=["accuracy"],
                    ue_metrics=["prr"], n_resamples=300, seed=4)
    man()
    key = ("sequence", "msp", "accuracy", "prr")
    small = man.compare(key, ("sequence", "perplexity", "accuracy", "prr"))
    big = man.compare(key, ("sequence", "big_perplexity", "accuracy", "prr"))
    # PRR depends only on the order of the uncertainties: a monotone rescaling changes no verdict
    assert big.difference == pytest.approx(small.difference, abs=1e-12)
    assert big.p_value_randomization == small.p_value_randomization
    assert big.p_value_bootstrap == small.p_value_bootstrap
    assert any("normalized ranks" in note for note in big.notes)
    # and the test is assay.compare on the ranks computed here by scipy
    ua, q = msp_and_quality(recs)
    ub = ppl(recs)
    res = [assay.evaluate(rankdata(u) / len(u), q, metrics=[load_ue_metric("prr")], n_resamples=0) for u in (ua, ub)]
    ref = assay.compare(res[0], res[1], metric="prr", n_resamples=300, seed=4)
    assert small.p_value_randomization == ref.p_value_randomization
    assert (small.ci_low, small.ci_high) == pytest.approx((ref.ci_low, ref.ci_high), abs=1e-12)


def test_a_metric_that_reads_the_values_keeps_the_raw_uncertainties():
    recs = records(n=40, seed=6)
    man = UEManager(recs, estimators=["msp", MeanUncertaintyEstimator()], gen_metrics=["accuracy"],
                    ue_metrics=[MeanUncertainty()], n_resamples=100, seed=1)
    man()
    c = man.compare(("sequence", "msp", "accuracy", "mean_u_fail"),
                    ("sequence", "msp_half", "accuracy", "mean_u_fail"))
    assert not any("ranks" in note for note in c.notes)
    ua, q = msp_and_quality(recs)
    assert c.score_a == pytest.approx(float(ua[q == 0].mean()))
    assert c.score_b == pytest.approx(float(ua[q == 0].mean()) / 2)


class MeanUncertaintyEstimator(Estimator):
    """msp / 2: the same order, another mean."""

    name, level, dependencies = "msp_half", "sequence", ("log_probs",)

    def __call__(self, stats):
        return np.array([-sum(lp) for lp in stats["log_probs"]]) / 2.0


def test_compare_extra_score_and_overrides():
    man = UEManager(records(), estimators=["msp", "perplexity"], gen_metrics=["accuracy"],
                    ue_metrics=["prr"], n_resamples=40)
    man()
    c = man.compare(("sequence", "msp", "accuracy", "prr_normalized"),
                    ("sequence", "perplexity", "accuracy", "prr_normalized"), n_resamples=60, seed=9)
    assert c.score_name == "prr_normalized" and c.n_resamples == 60 and c.seed == 9
    assert c.difference == pytest.approx(man.metrics[("sequence", "perplexity", "accuracy", "prr_normalized")]
                                         - man.metrics[("sequence", "msp", "accuracy", "prr_normalized")])


@pytest.mark.parametrize("b, what", [
    (("sequence", "perplexity", "accuracy", "prr"), "differ in the estimator only"),      # another UE metric
    (("sequence", "msp", "accuracy", "roc_auc"), "the same key"),
    (("sequence", "nope", "accuracy", "roc_auc"), "not a key of 'metrics'"),
    (("sequence", "perplexity", "roc_auc"), "must be a key"),
    ("sequence/perplexity", "must be a key"),
])
def test_compare_rejects_keys_that_differ_in_more_than_the_estimator(b, what):
    man = UEManager(records(), estimators=["msp", "perplexity"], gen_metrics=["accuracy"],
                    ue_metrics=["roc_auc", "prr"])
    man()
    with pytest.raises(InvalidParameterError, match=what):
        man.compare(KEY, b)


def test_compare_rejects_another_generation_metric():
    recs = [dict(r, quality=float(r["correct"])) for r in records()]
    man = UEManager(recs, estimators=["msp", "perplexity"], gen_metrics=["accuracy", "quality"],
                    ue_metrics=["roc_auc"])
    man()
    with pytest.raises(InvalidParameterError, match="they differ in estimator, gen_metric"):
        man.compare(KEY, ("sequence", "perplexity", "quality", "roc_auc"))


def test_compare_uses_the_examples_both_estimators_have():
    recs = records() + [{"log_probs": [], "correct": 1}]  # perplexity is NaN on the empty answer, msp is 0
    man = UEManager(recs, estimators=["msp", "perplexity"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"])
    with pytest.warns(RuntimeWarning, match="dropped 1"):
        man()
    c = man.compare(KEY, ("sequence", "perplexity", "accuracy", "roc_auc"), n_resamples=20)
    assert c.n == 40 and any("40 of 41" in n for n in c.notes)


# --------------------------------------------------------------------------- tables
def test_table_shows_intervals_and_bolds_the_estimators_not_worse_than_the_best():
    # msp ranks every failure above every success (ROC-AUC 1); perplexity the reverse (ROC-AUC 0)
    recs = [{"log_probs": [-0.5], "correct": 1} if i % 2 else {"log_probs": [-0.1] * 10, "correct": 0}
            for i in range(30)]
    man = UEManager(recs, estimators=["msp", "perplexity"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"],
                    n_resamples=100)
    man()
    md = man.table(mark_best=True)
    assert "| msp | **1.0000 [1.0000, 1.0000]** |" in md
    assert "| perplexity | 0.0000 [0.0000, 0.0000] |" in md
    assert "95% percentile bootstrap interval (100 resamples" in md and "Bold: per column" in md
    assert "paired bootstrap" in md
    plain = man.table(intervals=False)
    assert "| msp | 1.0000 |" in plain and "Bold" not in plain
    assert man.table(fmt="text").splitlines()[0].split() == ["estimator", "roc_auc", "(accuracy)"]
    with pytest.raises(InvalidParameterError, match="'digits'"):
        man.table(digits=-1)


# --------------------------------------------------------------------------- save / load / rescore
def test_intervals_and_settings_survive_save_and_load_and_rescore_adds_intervals(tmp_path):
    recs = records()
    man = UEManager(recs, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["prr"], n_resamples=40,
                    confidence_level=0.8, seed=6)
    man()
    man.save(tmp_path / "run")
    again = UEManager.load(tmp_path / "run")
    assert (again.n_resamples, again.confidence_level, again.seed) == (40, 0.8, 6)
    assert again.intervals == man.intervals
    new = again.rescore(["roc_auc"])
    u, q = msp_and_quality(recs)
    assert again.intervals[KEY] == pytest.approx(
        percentile([ref_auc(u[i], q[i]) for i in ref_indices(len(u), 40, 6)], 0.8), abs=1e-12)
    assert set(new) == {KEY}
    again.save(tmp_path / "run")
    assert UEManager.load(tmp_path / "run").intervals == again.intervals


def test_nan_intervals_round_trip(tmp_path):
    recs = [{"log_probs": [-0.1], "correct": 1}, {"log_probs": [-2.0], "correct": 0}]
    man = UEManager(recs, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"], n_resamples=30)
    man()
    man.save(tmp_path / "r")
    again = UEManager.load(tmp_path / "r")
    assert all(math.isnan(x) for x in again.intervals[KEY]) and again.interval_notes == man.interval_notes


def _reseal(run, doc):
    body = {k: v for k, v in doc.items() if k != "content_sha256"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    doc["content_sha256"] = hashlib.sha256(canon.encode()).hexdigest()
    (run / "manager.json").write_text(json.dumps(doc))


def test_an_older_save_without_intervals_loads(tmp_path):
    man = UEManager(records(), estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"], n_resamples=20)
    man()
    man.save(tmp_path / "r")
    doc = json.loads((tmp_path / "r" / "manager.json").read_text())
    del doc["intervals"], doc["resampling"]
    _reseal(tmp_path / "r", doc)
    again = UEManager.load(tmp_path / "r")
    assert again.intervals == {} and again.n_resamples == 0 and again.metrics == man.metrics


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["intervals"][0].update(low="x"), "intervals[0].low"),
    (lambda d: d["intervals"][0].pop("high"), "intervals[0].high"),
    (lambda d: d["intervals"][0].update(estimator="nope"), "intervals[0]"),
    (lambda d: d["intervals"].append(dict(d["intervals"][0])), "intervals[1]"),
    (lambda d: d["intervals"][0].update(note=3), "intervals[0].note"),
    (lambda d: d.update(intervals={}), "intervals"),
    (lambda d: d["resampling"].update(seed=-1), "resampling.seed"),
    (lambda d: d["resampling"].update(confidence_level=1.5), "resampling.confidence_level"),
    (lambda d: d["resampling"].pop("n_resamples"), "resampling.n_resamples"),
    (lambda d: d["resampling"].update(n_resamples=0), "resampling.n_resamples"),
])
def test_damaged_intervals_name_the_field(tmp_path, edit, field):
    man = UEManager(records(), estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"], n_resamples=20)
    man()
    man.intervals[KEY] = (0.1, 0.2)
    man.interval_notes[KEY] = "a note"
    man.save(tmp_path / "r")
    doc = json.loads((tmp_path / "r" / "manager.json").read_text())
    edit(doc)
    _reseal(tmp_path / "r", doc)
    with pytest.raises(SaveFormatError) as info:
        UEManager.load(tmp_path / "r")
    assert info.value.field == field


def test_a_loaded_manager_compares_registered_metrics_and_names_the_ones_it_cannot_load(tmp_path):
    man = UEManager(records(), estimators=["msp", "perplexity"], gen_metrics=["accuracy"],
                    ue_metrics=["roc_auc", MeanUncertainty()], n_resamples=20)
    man()
    man.save(tmp_path / "r")
    again = UEManager.load(tmp_path / "r")
    pk = ("sequence", "perplexity", "accuracy", "roc_auc")
    assert again.compare(KEY, pk).difference == pytest.approx(man.compare(KEY, pk).difference)
    with pytest.raises(InvalidParameterError, match="cannot be loaded again by its name"):
        again.compare(("sequence", "msp", "accuracy", "mean_u_fail"), ("sequence", "perplexity", "accuracy",
                                                                        "mean_u_fail"))
    # the extra score of a metric that cannot be loaded by name is not found at all
    with pytest.raises(InvalidParameterError, match="'mean_u_ok' is not a score of this manager's UE metrics"):
        again.compare(("sequence", "msp", "accuracy", "mean_u_ok"), ("sequence", "perplexity", "accuracy",
                                                                      "mean_u_ok"))


class WrongProbability(Estimator):
    """1 - P(answer) = 1 - exp(sum log p): an uncertainty in [0, 1] (for the calibration UE metrics)."""

    name, level, dependencies = "p_wrong", "sequence", ("log_probs",)

    def __call__(self, stats):
        return np.array([1.0 - math.exp(sum(lp)) for lp in stats["log_probs"]])


def test_every_registered_ue_metric_gets_the_intervals_assay_evaluate_gives():
    import warnings

    import assay
    from assay.errors import UndefinedMetricWarning
    from assay.plugins import get_registry

    names = get_registry("ue_metric").names()
    recs = records(n=60)
    man = UEManager(recs, estimators=[WrongProbability()], gen_metrics=["accuracy"], ue_metrics=names,
                    n_resamples=40, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        man()
    u = np.array([1.0 - math.exp(sum(r["log_probs"])) for r in recs])
    q = np.array([float(r["correct"]) for r in recs])
    for name in names:
        metric = assay.load_ue_metric(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            g = assay.evaluate(u, q, metrics=[metric], n_resamples=40, seed=4)[0]["score"]["global"]
        for score in metric.score_names:
            key = ("sequence", "p_wrong", "accuracy", score)
            assert man.metrics[key] == pytest.approx(g[score], nan_ok=True), key
            assert man.intervals[key] == pytest.approx((g[f"{score}_ci_low"], g[f"{score}_ci_high"]), nan_ok=True), key
