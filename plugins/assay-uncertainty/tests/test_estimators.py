"""Estimators and stat calculators through UEManager, against hand-derived values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.plugins import PluginSystem, use_plugin_system
from assay_uncertainty import plugin
from assay_uncertainty.manager import UEManager

LN = math.log

RECORDS = [
    {
        "log_probs": [LN(0.9), LN(0.5), LN(0.8)],
        # token 1 full distribution (.5, .5); token 2 truncated (.5, .25) -> renormalised (2/3, 1/3); token 3 one entry
        "top_logprobs": [[LN(0.5), LN(0.5)], [LN(0.5), LN(0.25)], [LN(0.8)]],
        "sample_texts": ["the cat sat", "the cat", "a dog"],
        "sample_log_probs": [[-1.0, -1.0], [-0.5], [-0.25, -0.25, -0.25, -0.25]],
        "similarity_matrix": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
        "claim_spans": [[0, 2], [2, 3]],
        "ensemble_probs": [[1.0, 0.0], [0.0, 1.0]],
        "correct": 1,
    },
    {
        "log_probs": [LN(0.25)],
        "top_logprobs": [[LN(0.25), LN(0.25), LN(0.25), LN(0.25)]],
        "sample_texts": ["Paris", " paris ", "Rome"],
        "sample_log_probs": [[-2.0], [-2.0], [-1.0]],
        "similarity_matrix": [[1, 1, 1], [1, 1, 1], [1, 1, 1]],
        "claim_spans": [[0, 1]],
        "ensemble_probs": [[0.5, 0.5], [0.5, 0.5]],
        "correct": 0,
    },
]


@pytest.fixture(scope="module")
def man():
    system = PluginSystem(entry_points=False)
    system.register_plugin(plugin, name="assay_uncertainty")
    with use_plugin_system(system):
        names = system.registry("estimator").names()
        m = UEManager(RECORDS, estimators=names, gen_metrics=["accuracy"], ue_metrics=["roc_auc"])
        m()
        yield m


def est(man, name, level="sequence"):
    return man.estimations[(level, name)]


def test_all_contract_names_are_registered(man):
    assert set(man.estimator_names) == {
        "msp", "perplexity", "mean_token_entropy", "max_token_entropy", "mc_sequence_entropy",
        "mc_normalized_sequence_entropy", "lexical_similarity", "num_distinct_answers", "eigval_laplacian",
        "token_entropy", "token_max_prob", "claim_probability", "predictive_entropy", "expected_entropy",
        "mutual_information", "variation_ratio", "disagreement",
        # LM-Polygraph's class names of three of them (issue 28: same value on the same statistics)
        "LexicalSimilarity", "MonteCarloSequenceEntropy", "MonteCarloNormalizedSequenceEntropy"}


def test_likelihood_estimators(man):
    # -sum log p: -(ln .9 + ln .5 + ln .8) = -ln .36; -ln .25
    np.testing.assert_allclose(est(man, "msp"), [-LN(0.36), -LN(0.25)])
    np.testing.assert_allclose(est(man, "perplexity"), [-LN(0.36) / 3, -LN(0.25)])


def test_token_entropies_and_their_estimators(man):
    h2 = -(2 / 3 * LN(2 / 3) + 1 / 3 * LN(1 / 3))
    tok = est(man, "token_entropy", "token")
    np.testing.assert_allclose(tok[0], [LN(2), h2, 0.0], atol=1e-12)
    np.testing.assert_allclose(tok[1], [LN(4)])
    np.testing.assert_allclose(est(man, "mean_token_entropy"), [(LN(2) + h2) / 3, LN(4)])
    np.testing.assert_allclose(est(man, "max_token_entropy"), [LN(2), LN(4)])
    np.testing.assert_allclose(est(man, "token_max_prob", "token")[0], [0.1, 0.5, 0.2])


def test_claim_probability(man):
    # spans [0, 2): 1 - .9 * .5; [2, 3): 1 - .8
    claims = est(man, "claim_probability", "claim")
    np.testing.assert_allclose(claims[0], [0.55, 0.2])
    np.testing.assert_allclose(claims[1], [0.75])


def test_sampling_estimators(man):
    # sample log-likelihoods -2, -.5, -1 (lengths 2, 1, 4): -mean = 7/6; per token -1, -.5, -.25 -> 7/12
    np.testing.assert_allclose(est(man, "mc_sequence_entropy"), [3.5 / 3, 5 / 3])
    np.testing.assert_allclose(est(man, "mc_normalized_sequence_entropy"), [1.75 / 3, 5 / 3])
    # ROUGE-L F1: (the cat sat, the cat) = 2 * (2/3 * 1) / (2/3 + 1) = .8; the other pairs 0 -> -.8 / 3
    # (Paris, paris) = 1, the pairs with Rome 0 -> -1/3
    np.testing.assert_allclose(est(man, "lexical_similarity"), [-0.8 / 3, -1 / 3])
    np.testing.assert_allclose(est(man, "num_distinct_answers"), [3, 2])
    # identity similarity: L = 0, eigenvalues 0, 0, 0 -> 3; all-ones: L = I - J/3, eigenvalues 0, 1, 1 -> 1
    np.testing.assert_allclose(est(man, "eigval_laplacian"), [3.0, 1.0], atol=1e-12)


def test_ensemble_estimators(man):
    # [[1, 0], [0, 1]]: mean (.5, .5): H = ln 2; members 0; votes 0, 1
    # [[.5, .5], [.5, .5]]: H = ln 2 everywhere; votes 0, 0 (ties to the first class)
    np.testing.assert_allclose(est(man, "predictive_entropy"), [LN(2), LN(2)])
    np.testing.assert_allclose(est(man, "expected_entropy"), [0.0, LN(2)], atol=1e-12)
    np.testing.assert_allclose(est(man, "mutual_information"), [LN(2), 0.0], atol=1e-12)
    np.testing.assert_allclose(est(man, "variation_ratio"), [0.5, 0.0])
    np.testing.assert_allclose(est(man, "disagreement"), [1.0, 0.0])


def test_metrics_run_for_every_sequence_estimator(man):
    # msp ranks the failure (-ln .25 = 1.386 > -ln .36 = 1.022) above the success -> ROC-AUC 1
    assert man.metrics[("sequence", "msp", "accuracy", "roc_auc")] == 1.0
    assert all(k[0] == "sequence" for k in man.metrics)
