"""``claim_to_samples_nli`` equals LM-Polygraph 0.7.0's SemanticClassesClaimToSamplesCalculator, run live.

Both run the tiny random NLI model of ``conftest.py`` (a BERT sequence classifier with
ENTAILMENT / NEUTRAL / CONTRADICTION labels saved to a temporary folder; no download) on the same
claims and sampled answers; LM-Polygraph's calculator gets the model and tokenizer loaded from
that folder in place of its ``Deberta`` wrapper (the attributes it reads). Then
``frequency_scoring_claim`` on the result equals LM-Polygraph's FrequencyScoringClaim.
"""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace

import numpy as np
import pytest
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from assay import load_estimator, load_stat_calculator
from assay.errors import InvalidParameterError

WORDS = ["the", "a", "capital", "of", "france", "paris", "is", "what"]  # in conftest's tokenizer vocabulary


def _lp_nli_model(folder, batch_size):
    model = AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True).eval()
    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return SimpleNamespace(deberta=model, deberta_tokenizer=tok, batch_size=batch_size, device="cpu",
                           setup=lambda: None)


def _claim(text):  # LM-Polygraph's Claim's fields
    return SimpleNamespace(claim_text=text, sentence=text, aligned_token_ids=[0])


def _stats(seed):
    rng = np.random.default_rng(seed)

    def text():
        return " ".join(rng.choice(WORDS, int(rng.integers(1, 5))))

    samples = [[text() for _ in range(int(rng.integers(1, 5)))] for _ in range(5)]
    samples[1][0] = samples[0][0]  # a repeated pair is scored once
    claims = [[_claim(text()) for _ in range(int(rng.integers(0, 3)))] for _ in samples]
    claims[0] = [_claim(samples[0][0])] + claims[0]
    claims[1] = [_claim(samples[0][0])]
    return {"claims": claims, "sample_texts": samples}


@pytest.mark.parametrize("batch_size", [10, 3])
def test_claim_to_samples_nli_equals_lm_polygraphs(lpm, nli_dir, batch_size):
    stats = _stats(batch_size)
    ours = load_stat_calculator("SemanticClassesClaimToSamplesCalculator", nli_model=nli_dir, batch_size=batch_size,
                                device="cpu")(stats)["nli_to_sample_texts"]
    calc = lpm("stat_calculators.semantic_classes_claim_to_samples").SemanticClassesClaimToSamplesCalculator(
        _lp_nli_model(nli_dir, batch_size))
    theirs = calc(stats, [], None)["nli_to_sample_texts"]
    assert [[len(c) for c in ex] for ex in ours] == [[len(c) for c in ex] for ex in theirs]
    assert [[len(c) for c in ex] for ex in ours] == [[len(s)] * len(c) for s, c in zip(stats["sample_texts"],
                                                                                       stats["claims"])]
    for o_ex, t_ex in zip(ours, theirs):
        for o_claim, t_claim in zip(o_ex, t_ex):
            for o, t in zip(o_claim, t_claim):
                assert set(o) == {"entail", "contra", "neutral"} == set(t)
                np.testing.assert_allclose([o[k] for k in sorted(o)], [t[k] for k in sorted(t)], rtol=0, atol=1e-6)
    # and the estimator that reads it
    frequency = _frequency_module(lpm)
    full = {**stats, "nli_to_sample_texts": ours}
    got = load_estimator("FrequencyScoringClaim")(full)
    want = frequency.FrequencyScoringClaim()({**stats, "nli_to_sample_texts": theirs})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=0)


def _frequency_module(lpm):
    """LM-Polygraph's frequency_scoring module; its ``extract_claims`` import (OpenAI client) gets a stand-in."""
    key = "lm_polygraph.stat_calculators.extract_claims"
    stand_in = types.ModuleType(key)
    stand_in.Claim = type("Claim", (), {})  # used in type hints only
    sys.modules[key] = stand_in
    try:
        return lpm("estimators.claim.frequency_scoring")
    finally:
        sys.modules.pop(key, None)


def test_a_claim_without_text_is_an_error(nli_dir):
    calc = load_stat_calculator("claim_to_samples_nli", nli_model=nli_dir, device="cpu")
    with pytest.raises(InvalidParameterError, match="example 0, claim 0: the claim has no 'claim_text'"):
        calc({"claims": [[{"aligned_token_ids": [0]}]], "sample_texts": [["paris"]]})


def _ccp_module(lpm):
    """LM-Polygraph's claim CCP module; its ``extract_claims`` import (OpenAI client) gets a stand-in."""
    key = "lm_polygraph.stat_calculators.extract_claims"
    stand_in = types.ModuleType(key)
    stand_in.Claim = type("Claim", (), {})  # used in type hints only
    sys.modules[key] = stand_in
    try:
        return lpm("estimators.claim.claim_conditioned_probability")
    finally:
        sys.modules.pop(key, None)


def test_fact_pref_nli_and_claim_ccp_equal_lm_polygraphs(lpm, nli_dir, tiny_tokenizer):
    tok = tiny_tokenizer()
    rng = np.random.default_rng(12)
    ids = [tok.convert_tokens_to_ids(w) for w in WORDS]
    tokens, alternatives, claims = [], [], []
    for n in (4, 2, 3):
        toks = [int(t) for t in rng.choice(ids, n)]
        alts = []
        for t in toks:
            others = [int(a) for a in rng.choice([i for i in ids if i != t], 3, replace=False)]
            lps = np.log(rng.dirichlet(np.ones(4)))
            alts.append([(a, float(lp)) for a, lp in zip([t, *others], sorted(lps, reverse=True))])
        tokens.append(toks)
        alternatives.append(alts)
        claims.append([SimpleNamespace(claim_text="c", sentence="s",
                                       aligned_token_ids=sorted(rng.choice(n, int(rng.integers(1, n + 1)),
                                                                           replace=False).tolist()))
                       for _ in range(int(rng.integers(1, 3)))])
    deps = {"greedy_tokens_alternatives": alternatives, "greedy_tokens": tokens, "claims": claims}
    ours = load_stat_calculator("GreedyAlternativesFactPrefNLICalculator", nli_model=nli_dir, tokenizer=tok,
                                batch_size=3, device="cpu")(deps)
    theirs = lpm("stat_calculators.greedy_alternatives_nli").GreedyAlternativesFactPrefNLICalculator(
        _lp_nli_model(nli_dir, 3))(deps, [], SimpleNamespace(tokenizer=tok))
    key = "greedy_tokens_alternatives_fact_pref_nli"
    assert ours[key] == theirs[key]
    classes = {c for ex in ours[key] for claim in ex for m in claim for row in m for c in row if c}
    assert len(classes) > 1
    deps.update(ours)
    got = load_estimator("ClaimConditionedProbabilityClaim", nli_context="fact_pref",
                         is_stopword=lambda t: False)(deps)
    want = _ccp_module(lpm).ClaimConditionedProbabilityClaim(nli_context="fact_pref",
                                                            is_stopword=lambda t: False)(deps)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-6)
