"""Issue 28: every LM-Polygraph estimator of this plugin loads under its snake name and its class name, and the
UEManager runs the LM-Polygraph-named ones on stored outputs through ``polygraph_stats``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import assay
from assay_uncertainty import plugin_polygraph
from assay_uncertainty.estimators_lmp_ensemble import ENSEMBLE_SEQUENCE_CLASSES, ENSEMBLE_TOKEN_CLASSES
from assay_uncertainty.manager import UEManager

CLASSES = [c for c, _ in (*plugin_polygraph._COMPAT, *plugin_polygraph._INFO)]
CLASSES += [*ENSEMBLE_TOKEN_CLASSES.values(), *ENSEMBLE_SEQUENCE_CLASSES.values()]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_snake_name_and_the_class_name_load_the_same_class(cls):
    registry = assay.plugins.get_registry("estimator")
    assert registry.get(cls.__name__).factory is registry.get(cls.name).factory is cls
    assert registry.get(cls.__name__).metadata["alias_of"] == cls.name


def test_the_counts():
    assert len(CLASSES) == 5 + 18 + 22


@pytest.mark.parametrize(("class_name", "snake"), sorted(plugin_polygraph.EXISTING_CLASS_NAMES.items(),
                                                         key=lambda kv: kv[1]))
def test_existing_estimators_carry_lm_polygraphs_class_name(class_name, snake):
    registry = assay.plugins.get_registry("estimator")
    assert registry.get(snake).factory is registry.get(class_name).factory


RECORDS = [
    {"answer": "Paris", "correct": 1, "log_probs": [math.log(0.9), math.log(0.8)],
     "sample_texts": ["Paris", "Paris", "Lyon"], "sample_log_probs": [[-0.1, -0.2], [-0.1], [-2.0, -1.0, -0.5]]},
    {"answer": "Rome", "correct": 0, "log_probs": [math.log(0.3)],
     "sample_texts": ["Rome", "Milan", "Turin"], "sample_log_probs": [[-1.0], [-1.5, -0.1], [-2.0]]},
    {"answer": "Oslo", "correct": 1, "log_probs": [math.log(0.6), math.log(0.5), math.log(0.99)],
     "sample_texts": ["Oslo", "Oslo", "Oslo"], "sample_log_probs": [[-0.5], [-0.4], [-0.6]]},
]


def test_the_manager_runs_class_names_on_stored_outputs():
    names = ["MaximumSequenceProbability", "lmp_perplexity", "MonteCarloSequenceEntropy", "LexicalSimilarity", "msp",
             "perplexity", "mc_sequence_entropy"]
    man = UEManager(RECORDS, estimators=names, gen_metrics=["accuracy"], ue_metrics=["roc_auc"])
    man()
    e = man.estimations
    np.testing.assert_allclose(e[("sequence", "MaximumSequenceProbability")], e[("sequence", "msp")], rtol=0, atol=0)
    np.testing.assert_allclose(e[("sequence", "lmp_perplexity")], e[("sequence", "perplexity")], rtol=0, atol=0)
    np.testing.assert_allclose(e[("sequence", "MaximumSequenceProbability")],
                               [-math.log(0.72), -math.log(0.3), -math.log(0.6 * 0.5 * 0.99)])
    np.testing.assert_allclose(e[("sequence", "MonteCarloSequenceEntropy")], e[("sequence", "mc_sequence_entropy")])
    np.testing.assert_allclose(e[("sequence", "MonteCarloSequenceEntropy")][0], (0.3 + 0.1 + 3.5) / 3)


def test_the_manager_runs_information_estimators_on_columns_passed_in():
    # statistics only a model produces today come in as columns of the records; the manager's values are the
    # direct calls' (which test_polygraph_info.py checks against LM-Polygraph)
    from assay_uncertainty import estimators_info as info

    rng = np.random.default_rng(0)
    recs = []
    for i in range(6):
        t = int(rng.integers(1, 5))
        x = rng.normal(0, 2, (t, 7))
        glp = x - np.log(np.exp(x).sum(-1, keepdims=True))
        toks = glp.argmax(-1)
        att = np.tril(rng.uniform(0.1, 1, (3, 2, t + 1, t + 1)))
        recs.append({"answer": str(i), "correct": i % 2, "log_probs": glp[np.arange(t), toks].tolist(),
                     "greedy_log_probs": glp, "greedy_lm_log_likelihoods": np.log(rng.uniform(0.1, 1, t)).tolist(),
                     "attention_all": (att / att.sum(-1, keepdims=True)).reshape(6, t + 1, t + 1)})
    names = ["RenyiNeg", "fisher_rao", "MeanPointwiseMutualInformation", "rauq[n_layers=3,n_heads=2]"]
    man = UEManager(recs, estimators=names, gen_metrics=["accuracy"], ue_metrics=["roc_auc"])
    man()
    cols = {k: [r[k] for r in recs] for k in ("greedy_log_probs", "greedy_lm_log_likelihoods", "attention_all")}
    cols["greedy_log_likelihoods"] = [r["log_probs"] for r in recs]
    for name, est in zip(names, (info.RenyiNeg(), info.FisherRao(), info.MeanPointwiseMutualInformation(),
                                 info.RAUQ(n_layers=3, n_heads=2))):
        np.testing.assert_allclose(man.estimations[("sequence", name)], est(cols), rtol=0, atol=1e-12)
