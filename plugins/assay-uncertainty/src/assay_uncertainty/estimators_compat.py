"""LM-Polygraph 0.7.0's basic white-box estimators, on LM-Polygraph's statistics (issue 28).

assay's own ``msp``, ``perplexity``, ``mean_token_entropy``, ``token_entropy`` and
``token_max_prob`` read assay's stored-output schema (``log_probs``, ``token_entropies``) and
stay as they are. The classes here read LM-Polygraph's statistic names, so that called on the
dictionary LM-Polygraph's manager passes they return what its classes of the same names return
(``greedy_log_likelihoods``: the log-probability of each generated token, the EOS step
included; ``entropy``: the entropy of each step's full distribution). On stored outputs
``polygraph_stats`` derives ``greedy_log_likelihoods`` from ``log_probs``.

Where LM-Polygraph's definition differs from assay's estimator of the nearest name, the
docstring says so: its token-level ``TokenEntropy`` and ``MaximumTokenProbability`` leave out
the last step (``[:-1]``, the EOS step when the model generated one), and
``MaximumTokenProbability`` is ``-log p_t`` where assay's ``token_max_prob`` is ``1 - p_t``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.uncertainty.base import Estimator, nan_with_warning

__all__ = ["MaximumSequenceProbability", "MaximumTokenProbability", "MeanTokenEntropy", "Perplexity", "TokenEntropy"]


def _rows(col: Any) -> list[np.ndarray]:
    return [np.asarray(v, dtype=np.float64).reshape(-1) for v in col]


def _mean_or_nan(x: np.ndarray, who: str, index: int) -> float:
    if x.size == 0:
        return nan_with_warning(f"estimator {who!r}: example {index} has no generated tokens; NaN.", stacklevel=4)
    return float(np.mean(x))


class MaximumSequenceProbability(Estimator):
    r"""``-sum_t log p(y_t | y_<t, x)`` over ``greedy_log_likelihoods`` (LM-Polygraph's MaximumSequenceProbability).

    The value of assay's ``msp``, which reads the same numbers as ``log_probs``.
    Fadeeva et al. 2023, "LM-Polygraph: Uncertainty Estimation for Language Models".
    """

    name, level, dependencies = "lmp_maximum_sequence_probability", "sequence", ("greedy_log_likelihoods",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return np.array([-float(np.sum(ll)) for ll in _rows(stats["greedy_log_likelihoods"])])


class Perplexity(Estimator):
    r"""``-mean_t log p(y_t | y_<t, x)`` over ``greedy_log_likelihoods`` (LM-Polygraph's Perplexity).

    The log of the perplexity, as LM-Polygraph and assay's ``perplexity`` define it; an empty
    generation is NaN with a warning (LM-Polygraph: numpy's NaN of an empty mean).
    """

    name, level, dependencies = "lmp_perplexity", "sequence", ("greedy_log_likelihoods",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        rows = _rows(stats["greedy_log_likelihoods"])
        return np.array([-_mean_or_nan(ll, self.name, i) for i, ll in enumerate(rows)])


class MeanTokenEntropy(Estimator):
    r"""``mean_t H_t`` over ``entropy``, the full distribution's entropy at each step (LM-Polygraph's MeanTokenEntropy).

    Empty generation: NaN with a warning.
    """

    name, level, dependencies = "lmp_mean_token_entropy", "sequence", ("entropy",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return np.array([_mean_or_nan(h, self.name, i) for i, h in enumerate(_rows(stats["entropy"]))])


class TokenEntropy(Estimator):
    r"""Token level: ``H_t`` for ``t = 1 .. T-1`` (LM-Polygraph's TokenEntropy: ``entropy[:-1]``).

    LM-Polygraph leaves out the last step (the EOS step when the model generated EOS); assay's
    ``token_entropy`` keeps every stored token. One array per example, ``T - 1`` long.
    """

    name, level, dependencies = "lmp_token_entropy", "token", ("entropy",)

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        return [h[:-1] for h in _rows(stats["entropy"])]


class MaximumTokenProbability(Estimator):
    r"""Token level: ``-log p(y_t | y_<t, x)`` for ``t = 1 .. T-1`` (LM-Polygraph's MaximumTokenProbability).

    ``-greedy_log_likelihoods[:-1]``: LM-Polygraph leaves out the last step. assay's
    ``token_max_prob`` is another quantity, ``1 - p_t`` over every token.
    """

    name, level, dependencies = "lmp_maximum_token_probability", "token", ("greedy_log_likelihoods",)

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        return [-ll[:-1] for ll in _rows(stats["greedy_log_likelihoods"])]

