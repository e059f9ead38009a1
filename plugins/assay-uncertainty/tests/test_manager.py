"""assay.uncertainty core: dependency graph, input schema, UEManager (hand-derived values)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from assay.uncertainty import Estimator, StatCalculator, StatDependencyError, plan_calculators
from assay_uncertainty.manager import UEDataError, UEManager, load_ue_data


class Calc(StatCalculator):
    def __init__(self, name, stats, deps, log=None):
        self.name = name
        self.log = log if log is not None else []
        super().__init__(stats, deps)

    def __call__(self, stats):
        self.log.append(self.name)
        return {s: [1] for s in self.stats}


def test_graph_orders_by_dependencies_and_skips_given_stats():
    a = Calc("a", ["x"], ["raw"])
    b = Calc("b", ["y"], ["x"])
    c = Calc("c", ["z"], ["y", "x"])
    unused = Calc("u", ["w"], ["raw"])
    order = plan_calculators({"z": ["estimator 'e'"]}, ["raw"], [c, unused, b, a])
    assert [k.name for k in order] == ["a", "b", "c"]
    assert plan_calculators(["z"], ["raw", "z"], [c, b, a]) == []


def test_graph_missing_producer_and_cycle_errors_name_the_stats():
    with pytest.raises(StatDependencyError, match=r"No statistic 'y' \(needed by stat calculator 'b'\)"):
        plan_calculators({"x2": ["e"]}, [], [Calc("b", ["x2"], ["y"])])
    with pytest.raises(StatDependencyError, match=r"cycle.*'p'.*'q'"):
        plan_calculators(["p"], [], [Calc("P", ["p"], ["q"]), Calc("Q", ["q"], ["p"])])


RECORDS = [
    {"id": "a", "log_probs": [-0.1, -0.2], "correct": 1, "claim_spans": [[0, 1], [1, 2]], "claim_correct": [1, 0]},
    {"id": "b", "log_probs": [-1.0], "correct": 0, "claim_spans": [[0, 1]], "claim_correct": [0]},
    {"id": "c", "log_probs": [-0.5, -0.5, -0.5], "correct": 1, "claim_spans": [[0, 3]], "claim_correct": [1]},
]


class CountingMSP(Estimator):
    name, level, dependencies = "counting", "sequence", ("total_lp",)

    def __call__(self, stats):
        return -np.asarray(stats["total_lp"])


class TotalLP(StatCalculator):
    name, stats, dependencies = "total_lp", ("total_lp",), ("log_probs",)
    calls = 0

    def __init__(self):
        super().__init__()

    def __call__(self, stats):
        TotalLP.calls += 1
        return {"total_lp": [float(sum(v)) for v in stats["log_probs"]]}


def test_manager_hand_values_keys_and_shared_stats():
    TotalLP.calls = 0
    calc = TotalLP()
    man = UEManager(RECORDS, estimators=["msp", CountingMSP(), "claim_probability"],
                    gen_metrics=["accuracy", "claim_accuracy"], ue_metrics=["prr", "roc_auc"],
                    stat_calculators=[calc])
    man()
    # msp = -sum log p: .3, 1.0, 1.5
    np.testing.assert_allclose(man.estimations[("sequence", "msp")], [0.3, 1.0, 1.5])
    np.testing.assert_allclose(man.estimations[("sequence", "counting")], [0.3, 1.0, 1.5])
    assert TotalLP.calls == 1
    # order by msp: correct 1, 0, 1 -> M = 1, 1/2, 2/3 -> raw 13/18; oracle 1, 1, 2/3 -> 8/9; random 2/3
    assert man.metrics[("sequence", "msp", "accuracy", "prr")] == pytest.approx(13 / 18)
    normalized = (13 / 18 - 2 / 3) / (8 / 9 - 2 / 3)
    assert man.metrics[("sequence", "msp", "accuracy", "prr_normalized")] == pytest.approx(normalized)
    # the failure (u=1.0) is above one of two successes -> 1/2
    assert man.metrics[("sequence", "msp", "accuracy", "roc_auc")] == pytest.approx(0.5)
    # claim level: 1 - exp(sum of span log p): [1-e^-.1, 1-e^-.2], [1-e^-1], [1-e^-1.5]
    claims = man.estimations[("claim", "claim_probability")]
    assert [len(c) for c in claims] == [2, 1, 1]
    np.testing.assert_allclose(claims[0], [1 - math.exp(-0.1), 1 - math.exp(-0.2)])
    # no cross-level pairs
    assert ("sequence", "msp", "claim_accuracy", "prr") not in man.metrics
    assert ("claim", "claim_probability", "claim_accuracy", "roc_auc") in man.metrics


def test_save_load_rescore_roundtrip(tmp_path):
    man = UEManager(RECORDS, estimators=["msp", "claim_probability"], gen_metrics=["accuracy", "claim_accuracy"],
                    ue_metrics=["prr[max_rejection=0.5]"])
    man()
    man.save(tmp_path / "run")
    assert not list(tmp_path.glob("**/*.pkl"))
    again = UEManager.load(tmp_path / "run")
    assert again.metrics == pytest.approx(man.metrics)
    np.testing.assert_allclose(again.estimations[("claim", "claim_probability")][0],
                               man.estimations[("claim", "claim_probability")][0])
    new = again.rescore(["rcc_auc"])
    # msp order: correct 1, 0, 1 -> risks 0, 1, 0: R_k = 0, 1/2, 1/3 -> mean 5/18
    assert new[("sequence", "msp", "accuracy", "rcc_auc")] == pytest.approx(5 / 18)


def test_nan_policy_drop_and_raise():
    recs = [dict(r) for r in RECORDS] + [{"id": "d", "log_probs": [], "correct": 1, "claim_spans": [],
                                          "claim_correct": []}]
    man = UEManager(recs, estimators=["perplexity"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"])
    with pytest.warns(RuntimeWarning, match="dropped 1"):
        man()
    assert man.dropped[("sequence", "perplexity", "accuracy")] == 1
    # perplexity .15, 1.0, .5 on the three others: failure highest -> 1.0
    assert man.metrics[("sequence", "perplexity", "accuracy", "roc_auc")] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="perplexity.*NaN at sequence 3"):
        UEManager(recs, estimators=["perplexity"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"],
                  nan_policy="raise")()


def test_binary_only_metrics_are_skipped_for_continuous_quality():
    recs = [{"log_probs": [-0.1], "quality": 0.9}, {"log_probs": [-2.0], "quality": 0.2}]
    man = UEManager(recs, estimators=["msp"], gen_metrics=["quality"], ue_metrics=["roc_auc", "rcc_auc"])
    man()
    assert ("sequence", "msp", "quality", "roc_auc") not in man.metrics
    assert any("roc_auc skipped" in n for n in man.notes)
    # msp .1, 2.0; normalised quality 1, 0 -> risks 0, 1 in msp order: R = 0, 1/2 -> mean 1/4
    assert man.metrics[("sequence", "msp", "quality", "rcc_auc")] == pytest.approx(0.25)


def test_input_errors_name_record_and_field(tmp_path):
    bad = [{"id": "a", "log_probs": [-0.1]}, {"id": "b", "log_probs": [0.5]}]
    with pytest.raises(UEDataError, match=r"record 1 \(id 'b'\): field 'log_probs'"):
        UEManager(bad)
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"log_probs": [-0.1], "token_correct": [1, 0]}) + "\n")
    with pytest.raises(UEDataError, match=r"d.jsonl: record 0: field 'token_correct' must have one entry per token"):
        load_ue_data(path)
    with pytest.raises(UEDataError, match="lacks field 'correct'"):
        UEManager([{"correct": 1}, {"answer": "x"}])


def test_npz_input_with_ragged_fields(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, log_probs=np.array([-0.1, -0.2, -1.0]), log_probs__lengths=np.array([2, 1]),
             correct=np.array([1, 0]))
    recs = load_ue_data(path)
    assert recs[0]["log_probs"] == [-0.1, -0.2] and recs[1]["correct"] == 0
    man = UEManager(path, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["roc_auc"])
    man()
    assert man.metrics[("sequence", "msp", "accuracy", "roc_auc")] == pytest.approx(1.0)


def test_cli_ue_writes_manager_table_and_plots(tmp_path):
    import matplotlib  # noqa: F401 - the plot extra, installed by make test; a missing one must fail

    from assay.cli import main

    recs = [{"log_probs": [-0.1], "correct": 1}, {"log_probs": [-2.0], "correct": 0},
            {"log_probs": [-0.5, -0.5], "correct": 1}]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (tmp_path / "c.yaml").write_text("data: d.jsonl\nestimators: [msp]\ngen_metrics: [accuracy]\n"
                                     "ue_metrics: [prr, roc_auc]\nsave_path: out\n")
    assert main(["ue", str(tmp_path / "c.yaml")]) == 0
    out = tmp_path / "out"
    table = (out / "table.md").read_text()
    # msp .1, 2.0, 1.0 -> order correct 1, 1, 0: the failure is the most uncertain -> ROC-AUC 1
    assert "| msp |" in table and "1.0000" in table
    assert UEManager.load(out).metrics[("sequence", "msp", "accuracy", "roc_auc")] == 1.0
    assert {p.name for p in out.glob("*.png")} >= {"risk_coverage_sequence_accuracy.png",
                                                    "rejection_sequence_accuracy.png"}
    (tmp_path / "bad.yaml").write_text("data: d.jsonl\nestimators: [msp]\ngen_metrics: [accuracy]\nue_metric: [prr]\n")
    assert main(["ue", str(tmp_path / "bad.yaml")]) == 2


def test_calibration_ue_metric_skips_estimators_outside_unit_interval():
    recs = [{"log_probs": [-0.1], "correct": 1}, {"log_probs": [-2.0], "correct": 0}]
    man = UEManager(recs, estimators=["msp", "token_max_prob"], gen_metrics=["accuracy"], ue_metrics=["ece"])
    man()
    # msp = .1, 2.0 leaves [0, 1]: skipped; token level has no generation metric here
    assert ("sequence", "msp", "accuracy", "ece") not in man.metrics
    assert any("ece skipped for estimator 'msp'" in n for n in man.notes)


class ShortTokens(Estimator):
    name, level, dependencies = "short", "token", ("log_probs",)

    def __call__(self, stats):
        return [np.zeros(max(0, len(v) - 1)) for v in stats["log_probs"]]


def test_token_level_lengths_are_checked_when_paired_with_a_token_level_metric():
    # record a has 2 tokens; the estimator returns 1 value for it
    recs = [{**r, "token_correct": [1] * len(r["log_probs"])} for r in RECORDS]
    with pytest.raises(ValueError, match=r"Estimator 'short' and generation metric 'token_accuracy' disagree on the "
                                         r"number of tokens in example 0: 1 and 2"):
        UEManager(recs, estimators=[ShortTokens()], gen_metrics=["token_accuracy"], ue_metrics=["prr"])()


def test_a_token_level_estimator_with_its_own_tokens_runs_as_in_lm_polygraph():
    # LM-Polygraph's token-level classes (TokenEntropy, PointwiseMutualInformation ...) leave out the last step;
    # its manager stores them and pairs them only with a same-level generation metric of the same length
    man = UEManager(RECORDS, estimators=["msp", ShortTokens()], gen_metrics=["accuracy"], ue_metrics=["prr"])
    man()
    assert [v.size for v in man.estimations[("token", "short")]] == [1, 0, 2]
    assert ("sequence", "msp", "accuracy", "prr") in man.metrics
    assert not any(k[0] == "token" for k in man.metrics)
