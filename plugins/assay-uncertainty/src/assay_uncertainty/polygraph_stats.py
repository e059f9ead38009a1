"""LM-Polygraph's statistic names over assay's stored outputs (issue 28, the compatibility layer).

The LM-Polygraph estimators (``estimators_compat``, ``estimators_info``, ``estimators_ensemble``)
read LM-Polygraph 0.7.0's statistic names with LM-Polygraph's meanings, so that called on the
dictionary LM-Polygraph's manager passes they return what LM-Polygraph's classes return. With a
Hugging Face model, ``assay-transformers`` produces those statistics itself
(``greedy_log_likelihoods``, ``greedy_log_probs``, ``greedy_tokens``, ``greedy_texts``,
``entropy``; docs/transformers.md). On stored outputs (a JSONL of generations) the calculators
here derive the ones that assay's schema holds under another name:

==========================  ====================  =================================================
LM-Polygraph statistic      from assay's field    calculator (registered name)
==========================  ====================  =================================================
``greedy_log_likelihoods``  ``log_probs``         ``polygraph_greedy_log_likelihoods``
``greedy_texts``            ``answer``            ``polygraph_greedy_texts``
==========================  ====================  =================================================

Not mapped, on purpose:

- ``entropy`` (LM-Polygraph: the entropy of the full-vocabulary distribution at each step): assay's
  stored ``token_entropies`` may come from a top-k ``top_logprobs`` (the truncated distribution's
  entropy), and ``assay-transformers`` registers the producer of ``entropy``
  (``greedy_log_probs -> entropy``); a second producer would make the choice depend on plugin order.
- ``greedy_log_probs`` (the full ``(T, V)`` log-softmax): stored ``top_logprobs`` hold k entries per
  step, and Rényi / Fisher-Rao / self-certainty depend on the vocabulary size ``V``.
- ``sample_log_probs``: the two projects use the name for different things. LM-Polygraph's
  ``sample_log_probs`` is the log-probability of each whole sample (a float per sample) and its
  ``sample_log_likelihoods`` the token log-probabilities; assay's are the other way round
  (``stats.SampleLikelihoods``). :func:`assay_sample_stats` converts an LM-Polygraph dictionary's
  sample statistics to assay's names; assay's ``mc_sequence_entropy`` /
  ``mc_normalized_sequence_entropy`` (``MonteCarloSequenceEntropy`` /
  ``MonteCarloNormalizedSequenceEntropy``) read assay's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import StatCalculator

__all__ = ["GreedyLogLikelihoods", "GreedyTexts", "assay_sample_stats"]


class GreedyLogLikelihoods(StatCalculator):
    """``log_probs`` -> ``greedy_log_likelihoods``: the log-probability of each generated token, as stored."""

    name = "polygraph_greedy_log_likelihoods"
    stats = ("greedy_log_likelihoods",)
    dependencies = ("log_probs",)

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        return {"greedy_log_likelihoods": [np.asarray(v, dtype=np.float64) for v in stats["log_probs"]]}


class GreedyTexts(StatCalculator):
    """``answer`` -> ``greedy_texts``: the generated answer, as stored."""

    name = "polygraph_greedy_texts"
    stats = ("greedy_texts",)
    dependencies = ("answer",)

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        return {"greedy_texts": [str(a) for a in stats["answer"]]}


def assay_sample_stats(polygraph_stats: Mapping[str, Any]) -> dict[str, Any]:
    """An LM-Polygraph dictionary's sample statistics under assay's names.

    ``sample_log_likelihoods`` (assay: one log-probability per sample) is LM-Polygraph's
    ``sample_log_probs``; ``sample_lengths`` is the length of each of LM-Polygraph's
    ``sample_tokens`` (its sampler leaves the EOS token out of ``sample_tokens`` while
    ``sample_log_probs`` includes the EOS step, so the lengths are taken from the tokens, as
    LM-Polygraph's ``MonteCarloNormalizedSequenceEntropy`` takes them). ``sample_texts`` is
    the same in both. A key that is missing is a clear error.
    """
    missing = [k for k in ("sample_log_probs", "sample_tokens") if k not in polygraph_stats]
    if missing:
        raise InvalidParameterError(f"assay_sample_stats: the LM-Polygraph statistics lack {', '.join(missing)} "
                                    f"(have: {', '.join(sorted(polygraph_stats)) or 'none'}).")
    out: dict[str, Any] = {
        "sample_log_likelihoods": [np.asarray(v, dtype=np.float64) for v in polygraph_stats["sample_log_probs"]],
        "sample_lengths": [np.array([len(t) for t in toks], dtype=np.float64)
                           for toks in polygraph_stats["sample_tokens"]],
    }
    if "sample_texts" in polygraph_stats:
        out["sample_texts"] = polygraph_stats["sample_texts"]
    return out
