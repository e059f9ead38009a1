"""Stat calculators: derived statistics computed once for all estimators.

``token_entropies``
    From ``top_logprobs``: per token, the entropy (nats) of the stored candidate
    distribution renormalised over the stored entries (exact when the full vocabulary
    is stored; with top-k it is the entropy of the truncated distribution).
``sample_log_likelihoods``, ``sample_lengths``
    From ``sample_log_probs``: per sample, the sum of its token log-probabilities and its
    number of tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.uncertainty.base import StatCalculator

__all__ = ["SampleLikelihoods", "TokenEntropies"]


def _entropy_of_logprobs(lp: np.ndarray) -> np.ndarray:
    """Entropy of each row of log-probabilities after renormalisation (log-sum-exp)."""
    if lp.size == 0:
        return np.zeros(lp.shape[0])
    m = lp.max(axis=1, keepdims=True)
    w = np.exp(lp - m)
    z = w.sum(axis=1, keepdims=True)
    p = w / z
    logp = (lp - m) - np.log(z)
    with np.errstate(invalid="ignore"):
        return -np.sum(np.where(p > 0, p * logp, 0.0), axis=1)


class TokenEntropies(StatCalculator):
    """``top_logprobs`` -> ``token_entropies`` (one entropy per generated token)."""

    name = "token_entropies"
    stats = ("token_entropies",)
    dependencies = ("top_logprobs",)

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        out = []
        for rows in stats["top_logprobs"]:
            if len(rows) == 0:
                out.append(np.zeros(0))
                continue
            width = max(len(r) for r in rows)
            lp = np.full((len(rows), width), -np.inf)
            for i, r in enumerate(rows):
                lp[i, : len(r)] = r
            out.append(_entropy_of_logprobs(lp))
        return {"token_entropies": out}


class SampleLikelihoods(StatCalculator):
    """``sample_log_probs`` -> ``sample_log_likelihoods`` and ``sample_lengths``."""

    name = "sample_likelihoods"
    stats = ("sample_log_likelihoods", "sample_lengths")
    dependencies = ("sample_log_probs",)

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        ll, lengths = [], []
        for samples in stats["sample_log_probs"]:
            ll.append(np.array([float(np.sum(s)) for s in samples]))
            lengths.append(np.array([len(s) for s in samples], dtype=np.float64))
        return {"sample_log_likelihoods": ll, "sample_lengths": lengths}
