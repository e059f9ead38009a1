"""Registrations of LM-Polygraph 0.7.0's claim-level estimators and Focus (entry point ``assay.uncertainty_claim``).

Each estimator is registered under a snake_case name and, with ``other_names``, under
LM-Polygraph's class name (both load the same class). The table of names, statistics and tests
is docs/polygraph/claim.md. Importing this module imports numpy and assay only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from assay import hookimpl
from assay_uncertainty import estimators_claim as ec
from assay_uncertainty import estimators_focus as ef
from assay_uncertainty.samples_polygraph import STATISTICS

_LN = math.log

#: the conformance sample: the three generations of samples_polygraph (3, 1 and 2 tokens) with claims
CLAIM_STATISTICS: dict[str, Any] = {
    **{k: STATISTICS[k] for k in ("greedy_log_probs", "greedy_tokens", "greedy_log_likelihoods",
                                  "greedy_lm_log_likelihoods", "entropy", "forwardpass_attention_weights")},
    "claims": [[{"aligned_token_ids": [0, 1]}, {"aligned_token_ids": [2]}], [{"aligned_token_ids": [0]}],
               [{"aligned_token_ids": [0, 1]}]],
    "token_similarity": [np.array([0.2, 0.7, 0.1]), np.array([0.4]), np.array([0.5, 0.3])],
    "p_true_claim": [[_LN(0.9), _LN(0.4)], [_LN(0.2)], [_LN(0.6)]],
    "nli_to_sample_texts": [
        [[{"entail": 0.8, "neutral": 0.1, "contra": 0.1}, {"entail": 0.1, "neutral": 0.1, "contra": 0.8}],
         [{"entail": 0.1, "neutral": 0.7, "contra": 0.2}, {"entail": 0.2, "neutral": 0.1, "contra": 0.7}]],
        [[{"entail": 0.9, "neutral": 0.05, "contra": 0.05}, {"entail": 0.6, "neutral": 0.3, "contra": 0.1}]],
        [[{"entail": 0.2, "neutral": 0.2, "contra": 0.6}, {"entail": 0.1, "neutral": 0.8, "contra": 0.1}]],
    ],
    "greedy_tokens_alternatives": [
        [[(0, _LN(0.6)), (1, _LN(0.3))], [(0, _LN(0.5)), (2, _LN(0.4))], [(0, _LN(0.9)), (3, _LN(0.05))]],
        [[(2, _LN(0.5)), (1, _LN(0.2))]],
        [[(1, _LN(0.7)), (0, _LN(0.2))], [(3, _LN(0.95)), (2, _LN(0.01))]],
    ],
    "greedy_tokens_alternatives_nli": [
        [[["", "entail"], ["entail", ""]], [["", "contra"], ["neutral", ""]], [["", "neutral"], ["contra", ""]]],
        [[["", "contra"], ["contra", ""]]],
        [[["", "entail"], ["neutral", ""]], [["", "contra"], ["entail", ""]]],
    ],
}

_CLASSES = (
    (ec.MaximumClaimProbability, "-sum of the claim's token log-probabilities (greedy_log_likelihoods)", None),
    (ec.PerplexityClaim, "-mean of the claim's token log-probabilities", None),
    (ec.MaxTokenEntropyClaim, "max of LM-Polygraph's 'entropy' over the claim's tokens", None),
    (ec.PointwiseMutualInformationClaim, "-sum over the claim's tokens of log p(y|x) - log p(y) (first: log p)",
     None),
    (ec.SelfCertaintyClaim, "-mean over the claim's tokens of KL(uniform || p_t)", None),
    (ec.BoostedProbClaim, "-mean boosted probability of the claim's tokens", None),
    (ec.TokenSARClaim, "sum over the claim's tokens of TokenSAR's relevance-weighted -log p", None),
    (ec.AttentionScoreClaim, "-mean over heads of sum log diag(attention) over the claim's tokens", {"layer": 1}),
    (ec.PTrueClaim, "-p_true_claim (log-probability of 'True' after each claim's P(True) prompt)", None),
    (ec.FrequencyScoringClaim, "#contradicting - #entailing sampled answers (NLI) per claim", None),
    (ec.ClaimConditionedProbabilityClaim, "-claim-conditioned probability (CCP) of the claim's tokens", None),
    (ec.RandomBaselineClaim, "a uniform random number per claim (a reference line)", None),
)


def _examples(cls: type, overrides: dict[str, Any] | None) -> list[dict[str, Any]]:
    deps = cls(**(overrides or {})).dependencies
    example: dict[str, Any] = {"stats": {k: CLAIM_STATISTICS[k] for k in deps}}
    if overrides:
        example["overrides"] = overrides
    return [example]


@hookimpl
def assay_register_estimators(register):
    for cls, desc, overrides in _CLASSES:
        register(cls.name, cls, other_names=(cls.__name__,), description=f"claim level: {desc}", level="claim",
                 examples=_examples(cls, overrides))
    # Focus needs a spaCy pipeline, a tokenizer and an IDF table (local files given as options): no sample here;
    # tests/test_polygraph_focus.py checks both against LM-Polygraph on folders it builds
    register(ef.Focus.name, ef.Focus, other_names=("Focus",), level="sequence",
             description="mean Focus score (IDF-weighted surprise + entropy + attention-propagated share) of keywords")
    register(ef.FocusClaim.name, ef.FocusClaim, other_names=("FocusClaim",), level="claim",
             description="claim level: mean Focus score of the claim's tokens")


@hookimpl
def assay_register_stat_calculators(register):
    register(ec.ClaimsFromSpans.name, ec.ClaimsFromSpans,
             description="claim_spans -> claims (LM-Polygraph's name; aligned_token_ids of each [start, end) span)",
             examples=[{"stats": {"claim_spans": [[[0, 2], [2, 3]], [[0, 1]]]}}])
