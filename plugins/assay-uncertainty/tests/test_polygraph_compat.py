"""The compatibility layer of issue 28: LM-Polygraph 0.7.0's basic estimators, run live on the same statistics.

The ``lmp_*`` classes read LM-Polygraph's statistic names; assay's ``mc_sequence_entropy`` /
``mc_normalized_sequence_entropy`` read assay's, which ``polygraph_stats.assay_sample_stats``
derives from an LM-Polygraph dictionary (the two projects swap ``sample_log_probs`` and
``sample_log_likelihoods``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from assay.errors import InvalidParameterError
from assay_uncertainty import estimators as est
from assay_uncertainty import estimators_compat as compat
from assay_uncertainty import polygraph_stats as ps


def _greedy(rng, n=12):
    lengths = rng.integers(1, 9, n)
    return {"greedy_log_likelihoods": [np.log(rng.uniform(0.01, 1.0, k)) for k in lengths],
            "entropy": [rng.uniform(0.0, 4.0, k) for k in lengths]}


def _samples(rng, n=10):
    out = {"sample_log_probs": [], "sample_tokens": [], "sample_texts": []}
    for _ in range(n):
        k = int(rng.integers(1, 6))
        toks = [list(rng.integers(0, 50, int(rng.integers(1, 7)))) for _ in range(k)]
        out["sample_tokens"].append(toks)
        out["sample_log_probs"].append([float(np.log(rng.uniform(0.001, 1.0, len(t) + 1)).sum()) for t in toks])
        out["sample_texts"].append([" ".join(map(str, t)) for t in toks])
    return out


@pytest.mark.parametrize(("module", "cls_name"), [
    ("estimators.max_probability", "MaximumSequenceProbability"),
    ("estimators.perplexity", "Perplexity"),
    ("estimators.token_entropy", "MeanTokenEntropy"),
    ("estimators.token_entropy", "TokenEntropy"),
    ("estimators.max_probability", "MaximumTokenProbability"),
])
def test_lmp_class_equals_lm_polygraph(lm_polygraph, module, cls_name):
    stats = _greedy(np.random.default_rng(1))
    theirs = getattr(lm_polygraph(module), cls_name)()(stats)
    ours = getattr(compat, cls_name)()(stats)
    if isinstance(theirs, list):  # token level: one array per example
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, np.asarray(b, dtype=np.float64), rtol=0, atol=1e-6)
            assert a.shape == np.shape(b)
    else:
        np.testing.assert_allclose(ours, np.asarray(theirs, dtype=np.float64), rtol=0, atol=1e-6)


def test_lmp_sequence_classes_equal_assays_own_on_the_mapped_stored_fields():
    rng = np.random.default_rng(2)
    stats = _greedy(rng)
    stored = {"log_probs": stats["greedy_log_likelihoods"], "token_entropies": stats["entropy"]}
    mapped = ps.GreedyLogLikelihoods()(stored)
    np.testing.assert_array_equal(compat.MaximumSequenceProbability()(mapped), est.MaximumSequenceProbability()(stored))
    np.testing.assert_array_equal(compat.Perplexity()(mapped), est.Perplexity()(stored))
    np.testing.assert_array_equal(compat.MeanTokenEntropy()(stats), est.MeanTokenEntropy()(stored))


def test_the_token_classes_leave_out_the_last_step_as_lm_polygraph_does():
    stats = {"greedy_log_likelihoods": [np.log([0.5, 0.25, 0.9])], "entropy": [np.array([1.0, 2.0, 0.1])]}
    np.testing.assert_allclose(compat.MaximumTokenProbability()(stats)[0], [np.log(2), np.log(4)])
    np.testing.assert_allclose(compat.TokenEntropy()(stats)[0], [1.0, 2.0])
    # assay's own: every token, 1 - p
    np.testing.assert_allclose(est.TokenMaxProb()({"log_probs": stats["greedy_log_likelihoods"]})[0], [0.5, 0.75, 0.1])


def test_an_empty_generation_is_nan_with_a_warning():
    with pytest.warns(UserWarning, match="no generated tokens"):
        got = compat.Perplexity()({"greedy_log_likelihoods": [[], [-1.0]]})
    assert np.isnan(got[0]) and got[1] == 1.0


@pytest.mark.parametrize(("module", "cls_name", "ours"), [
    ("estimators.monte_carlo_sequence_entropy", "MonteCarloSequenceEntropy", est.MonteCarloSequenceEntropy),
    ("estimators.monte_carlo_normalized_sequence_entropy", "MonteCarloNormalizedSequenceEntropy",
     est.MonteCarloNormalizedSequenceEntropy),
])
def test_monte_carlo_entropies_equal_lm_polygraph_through_the_sample_mapping(lm_polygraph, module, cls_name, ours):
    stats = _samples(np.random.default_rng(3))
    theirs = getattr(lm_polygraph(module), cls_name)()(stats)
    np.testing.assert_allclose(ours()(ps.assay_sample_stats(stats)), theirs, rtol=0, atol=1e-6)


def test_lexical_similarity_reads_lm_polygraphs_statistic_as_is(lm_polygraph):
    stats = _samples(np.random.default_rng(4))
    stats["sample_texts"] = [t for t in stats["sample_texts"] if len(t) >= 2]
    theirs = lm_polygraph("estimators.lexical_similarity").LexicalSimilarity()(stats)
    np.testing.assert_allclose(est.LexicalSimilarity()(stats), theirs, rtol=0, atol=1e-6)


def test_the_stored_field_calculators():
    out = ps.GreedyLogLikelihoods()({"log_probs": [[-0.5, -1.0], []]})["greedy_log_likelihoods"]
    assert [list(v) for v in out] == [[-0.5, -1.0], []]
    assert ps.GreedyTexts()({"answer": ["Paris", ""]}) == {"greedy_texts": ["Paris", ""]}


def test_sample_mapping_names_what_is_missing():
    with pytest.raises(InvalidParameterError, match="sample_tokens"):
        ps.assay_sample_stats({"sample_log_probs": [[-1.0]]})


def test_warnings_are_not_raised_on_defined_input():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compat.Perplexity()(_greedy(np.random.default_rng(5)))
