r"""LM-Polygraph's ``SemanticEntropyToken``: entropy of each step's distribution over classes of the vocabulary.

The language model's vocabulary (each token id decoded alone) is clustered once with a
sentence-BERT model (mean-pooled last hidden states over the attention mask), online and
greedily as LM-Polygraph's ``split_classes`` does: each token joins the class whose running
centroid is the most cosine-similar when that similarity is at least 0.85, else opens a new
class; a joining token replaces the centroid by ``(centroid * size + embedding) / (size + 1)``
where ``size`` counts the members *after the first* (LM-Polygraph's counter starts at 0).
For each generated token but the last, the step's probabilities summed per class give
``q_c``, and the value is ``-mean_c q_c log q_c`` (a mean over classes, as LM-Polygraph;
``0 log 0 = 0`` here, where LM-Polygraph's value is NaN).

Both models load from local folders (``local_files_only=True``, no remote code); the classes
are computed on first use, or read from / saved to ``tokenizer_save_path`` as
``<tokenizer folder name>_classes.npy`` (LM-Polygraph's cache file; read with
``allow_pickle=False``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import Estimator
from assay.validation import check_int
from assay_transformers.loading import _check_device, _check_folder

__all__ = ["SemanticEntropyToken", "split_classes"]

_SIM_THRESHOLD = 0.85  # LM-Polygraph's split_classes default (SemanticEntropyToken does not pass another)


def split_classes(tokens: list[str], batch_size: int, semantic_bert_path: str | os.PathLike[str],
                  sim_threshold: float = _SIM_THRESHOLD, device: str | None = None) -> np.ndarray:
    """The class of each text in ``tokens`` (module docstring), with the sentence-BERT model in the folder given."""
    import torch  # deferred: torch and transformers load with the model
    from transformers import AutoModel, AutoTokenizer

    folder = _check_folder(semantic_bert_path)
    device = _check_device(torch, device)
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
    model = AutoModel.from_pretrained(folder, local_files_only=True, trust_remote_code=False).to(device)
    model.eval()
    centroids = np.zeros((0, 0))
    sizes: list[int] = []
    out: list[int] = []
    for start in range(0, len(tokens), batch_size):
        batch = tokenizer(tokens[start:start + batch_size], return_tensors="pt", padding=True).to(device)
        with torch.no_grad():
            state = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(state.dtype)
        emb = ((state * mask).sum(1) / mask.sum(1)).double().cpu().numpy()
        for e in emb:
            if len(sizes):
                sims = (centroids @ e) / (np.linalg.norm(centroids, axis=1) * np.linalg.norm(e))
            if not len(sizes) or sims.max() < sim_threshold:
                centroids = e[None, :].copy() if not len(sizes) else np.vstack([centroids, e])
                out.append(len(sizes))
                sizes.append(0)
            else:
                c = int(sims.argmax())
                centroids[c] = (centroids[c] * sizes[c] + e) / (sizes[c] + 1)
                sizes[c] += 1
                out.append(c)
    return np.array(out, dtype=np.int64)


class SemanticEntropyToken(Estimator):
    """Token level: semantic entropy of each generated token's step (module docstring); LM-Polygraph's arguments.

    Parameters
    ----------
    tokenizer_path : the language model's folder (its tokenizer's vocabulary is clustered)
    tokenizer_save_path : folder for the cached classes, or None (no cache)
    semantic_bert_path : a local sentence-BERT folder (LM-Polygraph's default is
        ``sentence-transformers/bert-base-nli-mean-tokens``; saved locally, never downloaded)
    batch_size : tokens per forward pass of the sentence-BERT model
    """

    name, level, dependencies = "semantic_entropy_token", "token", ("greedy_log_probs",)

    def __init__(self, tokenizer_path: str | os.PathLike[str], tokenizer_save_path: str | os.PathLike[str] | None,
                 semantic_bert_path: str | os.PathLike[str], batch_size: int = 10) -> None:
        owner = f"estimator {self.name!r}"
        self.tokenizer_path = _check_folder(tokenizer_path)
        self.semantic_bert_path = _check_folder(semantic_bert_path)
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=owner)
        if tokenizer_save_path is not None and not Path(tokenizer_save_path).is_dir():
            raise InvalidParameterError(f"{owner}: 'tokenizer_save_path' {str(tokenizer_save_path)!r} is not a folder.")
        self.tokenizer_save_path = Path(tokenizer_save_path) if tokenizer_save_path is not None else None
        self._classes: np.ndarray | None = None
        super().__init__()

    def classes(self) -> np.ndarray:
        """The class of each token id of the language model's vocabulary (computed once, or read from the cache)."""
        if self._classes is not None:
            return self._classes
        from transformers import AutoTokenizer  # deferred (see split_classes)

        tokenizer = AutoTokenizer.from_pretrained(self.tokenizer_path, local_files_only=True, trust_remote_code=False,
                                                  padding_side="left", add_bos_token=True)
        cache = (self.tokenizer_save_path / (str(tokenizer.name_or_path).split("/")[-1] + "_classes.npy")
                 if self.tokenizer_save_path is not None else None)
        if cache is not None and cache.is_file():
            self._classes = np.load(cache, allow_pickle=False)
        else:
            tokens = [str(tokenizer.decode([i])) for i in range(len(tokenizer))]
            self._classes = split_classes(tokens, self.batch_size, self.semantic_bert_path)
            if cache is not None:
                np.save(cache, self._classes, allow_pickle=False)
        return self._classes

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        classes = self.classes()
        out = []
        for rows in stats["greedy_log_probs"]:
            values = []
            for lp in list(rows)[:-1]:
                q = np.bincount(classes, weights=np.exp(np.asarray(lp, dtype=np.float64))[:len(classes)])
                values.append(-np.mean(np.where(q > 0, q * np.log(np.where(q > 0, q, 1.0)), 0.0)))
            out.append(np.array(values, dtype=np.float64))
        return out
