"""The training statistics LM-Polygraph's density estimators fit on, from a Hugging Face model.

A module of its own: it builds an :class:`~assay_transformers.generation.HFModel`, whose
calculators import :mod:`assay_transformers.whitebox_stats` (no import cycle).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay_transformers.generation import HFModel
from assay_transformers.whitebox_stats import HiddenStateEmbeddings

__all__ = ["training_stats"]


def training_stats(model: Any, prompts: Sequence[str], *, max_new_tokens: int = 100,
                   generation_params: Mapping[str, Any] | None = None) -> dict[str, np.ndarray | list]:
    """The training statistics the density estimators fit on, from ``model`` run on ``prompts``.

    Returns ``train_embeddings_decoder`` (``(N, D)``), for a seq2seq model
    ``train_embeddings_encoder`` too, and ``train_greedy_log_likelihoods`` (PPL-MD): pass it
    as ``train_stats=`` to ``mahalanobis_distance``, ``relative_mahalanobis_distance``
    (with a ``background_train_embeddings_<type>`` of your own), ``rde`` or ``ppl_md``.
    ``model``: an :class:`~assay_transformers.generation.HFModel` or what it accepts.
    """
    hf = model if isinstance(model, HFModel) else HFModel(model)
    prompts = list(prompts)
    if not prompts:
        raise InvalidParameterError("training_stats: 'prompts' is empty; the density estimators fit on at least one "
                                    "training example (in practice many more than the hidden size).")
    gens = hf.generate(prompts, max_new_tokens=max_new_tokens, generation_params=generation_params, rows=False)
    tokens = [g[0].tokens for g in gens]
    emb = HiddenStateEmbeddings(hf)({"input_texts": prompts, "greedy_tokens": tokens})
    out: dict[str, np.ndarray | list] = {f"train_{k}": np.stack(v) for k, v in emb.items()}
    out["train_greedy_log_likelihoods"] = [g[0].token_log_probs for g in gens]
    return out
