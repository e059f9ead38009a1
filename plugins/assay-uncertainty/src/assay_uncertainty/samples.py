"""Sample inputs of this plugin's registered names, for the conformance suite (``examples=`` on registration).

``STATISTICS`` holds every statistic the estimators and stat calculators read, one
value per example, for four small generations (see ``assay check-plugin`` and
``docs/plugins.md``: estimators get ``{"stats": ...}``). ``COVERAGE_AT_RISK`` sets a
risk level (0.3) at which the coverage differs between a perfect and a shuffled ranking
of the suite's sample (at the default 0.05 only the perfect ranking reaches it).
"""

from __future__ import annotations

import math

__all__ = ["COVERAGE_AT_RISK", "STATISTICS"]

_LN = math.log

STATISTICS = [{"stats": {
    "log_probs": [[_LN(0.9), _LN(0.5), _LN(0.8)], [_LN(0.25)], [_LN(0.6), _LN(0.7)], [_LN(0.3), _LN(0.9), _LN(0.4)]],
    "top_logprobs": [
        [[_LN(0.5), _LN(0.5)], [_LN(0.5), _LN(0.25)], [_LN(0.8)]],
        [[_LN(0.25), _LN(0.25), _LN(0.25), _LN(0.25)]],
        [[_LN(0.6), _LN(0.3)], [_LN(0.7), _LN(0.2)]],
        [[_LN(0.3), _LN(0.3)], [_LN(0.9)], [_LN(0.4), _LN(0.4)]],
    ],
    "token_entropies": [[0.69, 0.64, 0.0], [1.39], [0.64, 0.53], [0.69, 0.0, 0.69]],
    "sample_texts": [["the cat sat", "the cat", "a dog"], ["Paris", " paris ", "Rome"], ["yes", "yes", "yes"],
                     ["one two", "two one", "three"]],
    "sample_log_probs": [[[-1.0, -1.0], [-0.5], [-0.25, -0.25, -0.25, -0.25]], [[-2.0], [-2.0], [-1.0]],
                         [[-0.1], [-0.2], [-0.1]], [[-1.5, -0.5], [-0.7], [-2.0, -1.0]]],
    "sample_log_likelihoods": [[-2.0, -0.5, -1.0], [-2.0, -2.0, -1.0], [-0.1, -0.2, -0.1], [-2.0, -0.7, -3.0]],
    "sample_lengths": [[2, 1, 4], [1, 1, 1], [1, 1, 1], [2, 1, 2]],
    "similarity_matrix": [[[1, 0, 0], [0, 1, 0], [0, 0, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]],
                          [[1, 0.5, 0], [0.5, 1, 0], [0, 0, 1]], [[1, 0.2, 0.2], [0.2, 1, 0.9], [0.2, 0.9, 1]]],
    "claim_spans": [[[0, 2], [2, 3]], [[0, 1]], [[0, 2]], [[0, 1], [1, 3]]],
    "ensemble_probs": [[[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5], [0.5, 0.5]], [[0.9, 0.1], [0.8, 0.2]],
                       [[0.2, 0.8], [0.6, 0.4]]],
}}]

COVERAGE_AT_RISK = [{"overrides": {"risk": 0.3}}]
