"""Cross-encoder similarities of the answers (SAR and CoCoA statistics), from a local cross-encoder folder.

LM-Polygraph scores answers with ``sentence_transformers.CrossEncoder`` (default
``cross-encoder/stsb-roberta-large``); these calculators do the same with a cross-encoder
saved in a local folder (``local_files_only=True``, no remote code, never a download):

``cross_encoder_similarity`` (LM-Polygraph's ``CrossEncoderSimilarityMatrixCalculator``)
    ``sample_sentence_similarity``: ``(K, K)``, the score of every ordered pair of an
    example's distinct samples (``itertools.product(unique, unique)``), spread back to the
    samples. ``token_similarity``: per greedy token ``t``, the score of (prompt + " " +
    answer, prompt + " " + answer without token ``t``), tokens decoded with the language
    model's tokenizer (``skip_special_tokens=True``); a special token (one of the
    tokenizer's ``added_tokens_decoder``) scores 1; an answer of one token or none scores
    0.5 per token. ``sample_token_similarity``: the same for each sample's tokens.
``greedy_cross_encoder_similarity`` (``GreedyCrossEncoderSimilarityMatrixCalculator``)
    ``greedy_sentence_similarity_forward`` / ``_backward``: ``(K,)``, the score of
    (greedy answer, sample) / (sample, greedy answer); ``greedy_sentence_similarity`` their mean.

The language model's tokenizer is given as ``tokenizer`` (the model's folder, or a loaded
tokenizer object); the cross-encoder loads on first use.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import StatCalculator
from assay.validation import check_int
from assay_transformers.loading import _check_device, _check_folder

__all__ = ["CrossEncoderModel", "CrossEncoderSimilarityCalculator", "GreedyCrossEncoderSimilarityCalculator",
           "load_tokenizer"]


class CrossEncoderModel:
    """``sentence_transformers.CrossEncoder`` loaded from the folder ``path`` on first use."""

    def __init__(self, path: str | os.PathLike[str], *, batch_size: int = 10, device: str | None = None,
                 owner: str = "cross-encoder") -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidParameterError(f"{owner}: 'cross_encoder' must be the path of a local model folder; got "
                                        f"{type(path).__name__}.")
        self.path = _check_folder(path)
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=owner)
        self.device_option = device
        self.owner = owner
        self._model: Any = None

    def predict(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """The cross-encoder's score of each pair (its default activation, as LM-Polygraph calls it)."""
        if self._model is None:
            import torch  # deferred: torch and sentence-transformers load with the model
            from sentence_transformers import CrossEncoder

            device = _check_device(torch, self.device_option)
            try:
                self._model = CrossEncoder(str(self.path), device=device, local_files_only=True,
                                           trust_remote_code=False)
            except (OSError, ValueError) as exc:
                raise InvalidParameterError(f"{self.owner}: cannot load the cross-encoder folder "
                                            f"{str(self.path)!r}: {exc}") from None
        if not pairs:
            return np.zeros(0)
        return np.asarray(self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False),
                          dtype=np.float64)


def load_tokenizer(tokenizer: Any, owner: str) -> Any:
    """The language model's tokenizer: loaded from its folder (offline), or the tokenizer object given."""
    if isinstance(tokenizer, (str, os.PathLike)):
        from transformers import AutoTokenizer  # deferred (see CrossEncoderModel.predict)

        folder = _check_folder(tokenizer)
        try:
            return AutoTokenizer.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
        except (OSError, ValueError) as exc:
            raise InvalidParameterError(f"{owner}: cannot load the tokenizer in {str(folder)!r}: {exc}") from None
    if not callable(getattr(tokenizer, "decode", None)):
        raise InvalidParameterError(f"{owner}: 'tokenizer' must be the language model's folder or a loaded tokenizer; "
                                    f"got {type(tokenizer).__name__}.")
    return tokenizer


def _unique_pairs(texts: Any) -> tuple[list[tuple[str, str]], np.ndarray, int]:
    unique, inv = np.unique(np.asarray(list(texts), dtype=str), return_inverse=True)
    return [(str(a), str(b)) for a, b in itertools.product(unique, unique)], inv, len(unique)


class CrossEncoderSimilarityCalculator(StatCalculator):
    """``sample_sentence_similarity``, ``token_similarity``, ``sample_token_similarity`` (module docstring).

    Parameters
    ----------
    cross_encoder : path of a local cross-encoder folder (required)
    tokenizer : the language model's folder or tokenizer (required: the tokens are decoded with it)
    batch_size : pairs per ``predict`` batch (default 10, as LM-Polygraph)
    device : torch device or None (CUDA when available)
    """

    name = "cross_encoder_similarity"
    stats = ("sample_sentence_similarity", "sample_token_similarity", "token_similarity")
    dependencies = ("input_texts", "sample_tokens", "sample_texts", "greedy_tokens")

    def __init__(self, cross_encoder: str | os.PathLike[str], tokenizer: Any, batch_size: int = 10,
                 device: str | None = None) -> None:
        owner = f"stat calculator {self.name!r}"
        self.encoder = CrossEncoderModel(cross_encoder, batch_size=batch_size, device=device, owner=owner)
        self.tokenizer = load_tokenizer(tokenizer, owner)
        super().__init__()

    def _token_scores(self, prompt: str, tokens: Any) -> np.ndarray:
        tokens = [int(t) for t in tokens]
        if len(tokens) <= 1:
            return np.full(len(tokens), 0.5)
        special = np.isin(tokens, list(self.tokenizer.added_tokens_decoder.keys()))
        full = prompt + " " + self.tokenizer.decode(tokens, skip_special_tokens=True)
        pairs = [(full, prompt + " " + self.tokenizer.decode(tokens[:t] + tokens[t + 1:], skip_special_tokens=True))
                 for t in range(len(tokens))]
        scores = self.encoder.predict(pairs)
        scores[special] = 1.0
        return scores

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        sentence = []
        for texts in stats["sample_texts"]:
            pairs, inv, u = _unique_pairs(texts)
            sentence.append(self.encoder.predict(pairs).reshape(u, u)[inv][:, inv])
        prompts = stats["input_texts"]
        return {
            "sample_sentence_similarity": sentence,
            "token_similarity": [self._token_scores(p, t) for p, t in zip(prompts, stats["greedy_tokens"])],
            "sample_token_similarity": [[self._token_scores(p, t) for t in samples]
                                        for p, samples in zip(prompts, stats["sample_tokens"])],
        }


class GreedyCrossEncoderSimilarityCalculator(StatCalculator):
    """``greedy_sentence_similarity`` (and its ``_forward`` / ``_backward`` halves; module docstring).

    Parameters
    ----------
    cross_encoder, batch_size, device
        As for :class:`CrossEncoderSimilarityCalculator`.
    """

    name = "greedy_cross_encoder_similarity"
    stats = ("greedy_sentence_similarity_forward", "greedy_sentence_similarity_backward", "greedy_sentence_similarity")
    dependencies = ("sample_texts", "greedy_texts")

    def __init__(self, cross_encoder: str | os.PathLike[str], batch_size: int = 10, device: str | None = None) -> None:
        self.encoder = CrossEncoderModel(cross_encoder, batch_size=batch_size, device=device,
                                         owner=f"stat calculator {self.name!r}")
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, list[Any]] = {k: [] for k in self.stats}
        for texts, greedy in zip(stats["sample_texts"], stats["greedy_texts"]):
            unique, inv = np.unique(np.asarray(list(texts), dtype=str), return_inverse=True)
            fwd = self.encoder.predict([(str(greedy), str(u)) for u in unique])[inv]
            bwd = self.encoder.predict([(str(u), str(greedy)) for u in unique])[inv]
            out["greedy_sentence_similarity_forward"].append(fwd)
            out["greedy_sentence_similarity_backward"].append(bwd)
            out["greedy_sentence_similarity"].append((fwd + bwd) / 2.0)
        return out
