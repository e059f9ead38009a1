"""Sample statistics (LM-Polygraph's names) for the conformance suite of the ``plugin_polygraph`` estimators.

Three generations of 3, 1 and 2 tokens over a vocabulary of 4, a model of 3 layers and 2 heads;
the ensemble measures' and ``LabelProb``'s statistics in their one-dict-per-example layout.
The estimators that call the model (``PTrueEmpirical``, ``Verbalized2S``) have none: the model
object is not a per-example column (tests/testing/test_common_suite.py exempts them, saying so).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["STATISTICS", "examples_for"]

_LN = math.log


def _log_softmax(rows: list[list[float]]) -> np.ndarray:
    x = np.asarray(rows, dtype=np.float64)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _attention(layers: int, heads: int, size: int, seed: int) -> np.ndarray:
    w = np.random.default_rng(seed).uniform(0.1, 1.0, (layers, heads, size, size))
    w = np.tril(w)
    return w / w.sum(-1, keepdims=True)


_GLP = [_log_softmax([[2.0, 0.5, 0.1, -1.0], [0.3, 0.2, 0.1, 0.0], [3.0, -2.0, 0.0, 0.5]]),
        _log_softmax([[0.0, 0.0, 1.0, 0.0]]),
        _log_softmax([[1.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 5.0]])]
_TOKENS = [[0, 0, 0], [2], [1, 3]]

STATISTICS: dict[str, Any] = {
    "greedy_log_probs": _GLP,
    "greedy_tokens": _TOKENS,
    "greedy_log_likelihoods": [g[np.arange(len(t)), t] for g, t in zip(_GLP, _TOKENS)],
    "greedy_lm_log_likelihoods": [[_LN(0.3), _LN(0.2), _LN(0.6)], [_LN(0.5)], [_LN(0.1), _LN(0.9)]],
    "entropy": [-(np.exp(g) * g).sum(-1) for g in _GLP],
    "greedy_texts": ["Paris. Confidence: 0.9, highly likely", "Rome. Confidence: 0.4", "I am not sure, maybe"],
    "input_texts": ["capital of France?", "capital of Italy?", "capital of Spain?"],
    "attention_weights_eliciting_prompt": [np.full((2, 3), 0.2), np.full((2, 1), 0.5),
                                           np.array([[0.1, 0.3], [0.2, 0.2]])],
    "attention_all": [_attention(3, 2, 3, 0).reshape(6, 3, 3), _attention(3, 2, 1, 1).reshape(6, 1, 1),
                      _attention(3, 2, 2, 2).reshape(6, 2, 2)],
    "forwardpass_attention_weights": [_attention(3, 2, 6, 3), _attention(3, 2, 4, 4), _attention(3, 2, 5, 5)],
    "p_true": [_LN(0.9), _LN(0.2), _LN(0.5)],
    "p_true_sampling": [_LN(0.8), _LN(0.3), _LN(0.5)],
}

def _ensemble_example(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)

    def block() -> dict[str, Any]:
        d: dict[str, Any] = {m: rng.uniform(0, 2, 3) for m in ("total_uncertainty", "data_uncertainty",
                                                                "mutual_information", "rmi", "epkl", "entropy_top5",
                                                                "entropy_top10", "entropy_top15")}
        d["log_probas"] = rng.uniform(-8, -0.1, (2, 3))  # 2 members, 3 beams
        return d

    return {"weights": rng.dirichlet(np.ones(3)), "ep_token_level_scores": block(), "pe_token_level_scores": block()}


# one dict per example (assay's layout of LM-Polygraph's whole-batch statistics)
STATISTICS["ensemble_token_scores"] = [_ensemble_example(s) for s in range(3)]
STATISTICS["semantic_classes_entail"] = [
    {"class_to_sample": [[0, 2], [1]], "sample_to_class": {0: 0, 1: 1, 2: 0}},
    {"class_to_sample": [[0]], "sample_to_class": {0: 0}},
    {"class_to_sample": [[0], [1], [2], [3]], "sample_to_class": {0: 0, 1: 1, 2: 2, 3: 3}},
]

_OVERRIDES: dict[str, dict[str, Any]] = {
    "rauq": {"n_layers": 3, "n_heads": 2},
    "attention_score": {"layer": 1},
    "verbalized_1s": {"confidence_regex": r"Confidence: ([0-9.]+)"},
    "linguistic_1s": {"expressions": {"highly likely": 0.9, "maybe": 0.5}},
}
_NONE = {"p_true_empirical", "verbalized_2s"}


def examples_for(cls: type) -> list[dict[str, Any]]:
    """The conformance sample of one estimator class: the statistics it reads, and the options it needs."""
    name = getattr(cls, "name", "")
    if name in _NONE:
        return []
    deps = cls(**_OVERRIDES.get(name, {})).dependencies
    example: dict[str, Any] = {"stats": {k: STATISTICS[k] for k in deps}}
    if name in _OVERRIDES:
        example["overrides"] = _OVERRIDES[name]
    return [example]
