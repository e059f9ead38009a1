"""BERTScore as a generation metric: LM-Polygraph's ``BertScoreMetric``, with a local model folder.

LM-Polygraph 0.7.0 scores ``BERTScorer(lang="en").score(greedy_texts, target_texts)[0]``:
the BERTScore *precision* (Zhang et al. 2020) of each answer against its reference, with
bert-score's default English model (roberta-large, downloaded). assay never downloads: the
model is a local Hugging Face folder (``model=``), run by the ``bert-score`` package
itself (``BERTScorer(model_type=<folder>, num_layers=...)``), so the value is
bert-score's. ``score="precision"`` (LM-Polygraph's), ``"recall"`` or ``"f1"``.

``num_layers``: the hidden layer whose token embeddings are matched; bert-score knows a
tuned layer for the models it lists, and needs it for a folder: the default (None) is the
folder's last layer (``num_hidden_layers`` of its ``config.json``). No IDF weighting and
no baseline rescaling (bert-score's and LM-Polygraph's defaults).

Texts as :mod:`assay_uncertainty.gen_metrics_text` reads them: ``greedy_texts`` or
``answer``; ``target_texts``, ``references`` or ``reference`` (the largest value over
several references). bert-score and its model are loaded at the first call
(``pip install bert-score``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.plugins.deps import require
from assay.uncertainty.base import GenerationMetric
from assay.validation import check_choice, check_int, check_str
from assay_transformers.loading import model_folder_option
from assay_uncertainty.gen_metrics_text import answers_and_references

__all__ = ["BertScoreMetric"]

_SCORES = ("precision", "recall", "f1")


class BertScoreMetric(GenerationMetric):
    """BERTScore of the answer against the best reference, computed by the ``bert-score`` package (module docstring).

    Parameters
    ----------
    model : str or path
        A local Hugging Face model folder (weights, config and tokenizer). Required when the
        metric scores; None only builds an object that says so when called.
    lang : str
        LM-Polygraph's argument, passed to ``BERTScorer`` (it only picks bert-score's
        default model, which ``model`` replaces, and the rescaling baseline, which is off).
    score : {"precision", "recall", "f1"}
        Which of bert-score's three values; LM-Polygraph's is the precision.
    num_layers : int or None
        The layer used (None: the folder's last layer).
    batch_size : int
    device : str or None
    """

    name = "bert_score"
    level = "sequence"

    def __init__(self, lang: str = "en", *, model: Any = None, score: str = "precision", num_layers: int | None = None,
                 batch_size: int = 64, device: str | None = None) -> None:
        owner = f"generation metric {self.name!r}"
        self.lang = check_str(lang, "lang", owner=owner, allow_empty=False)
        self.model = model_folder_option(model, owner)
        self.score = check_choice(score, "score", _SCORES, owner=owner)
        self.num_layers = None if num_layers is None else check_int(num_layers, "num_layers", low=1, owner=owner)
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=owner)
        self.device = None if device is None else check_str(device, "device", owner=owner, allow_empty=False)
        self._scorer: Any = None
        super().__init__()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_scorer": None}  # the model is loaded again where the metric is used

    def _layers(self, folder: str) -> int:
        if self.num_layers is not None:
            return self.num_layers
        config = Path(folder) / "config.json"
        try:
            layers = json.loads(config.read_text(encoding="utf-8"))["num_hidden_layers"]
        except (OSError, ValueError, KeyError) as exc:
            raise InvalidParameterError(f"generation metric {self.name!r}: cannot read num_hidden_layers from "
                                        f"{str(config)!r} ({exc}); give num_layers=.") from None
        return int(layers)

    def scorer(self) -> Any:
        """bert-score's ``BERTScorer`` on the model folder (built on first use)."""
        if self.model is None:
            raise InvalidParameterError(
                f"generation metric {self.name!r} needs a local model folder: bert_score[model=/path/to/folder] "
                "(LM-Polygraph's default, roberta-large, would be downloaded; assay downloads nothing).")
        if self._scorer is None:
            # deferred: bert-score imports torch and transformers, and loads the model
            bert_score = require("bert_score", package="bert-score", purpose=f"generation metric {self.name!r}")
            folder = self.model
            self._scorer = bert_score.BERTScorer(model_type=folder, num_layers=self._layers(folder), lang=self.lang,
                                                 batch_size=self.batch_size, device=self.device)
        return self._scorer

    def __call__(self, stats: Mapping[str, Any], target_texts: Sequence[Any] | None = None) -> np.ndarray:
        texts, refs = answers_and_references(stats, target_texts, f"generation metric {self.name!r}")
        if not texts:
            return np.zeros(0)
        flat_hyp = [t for t, rs in zip(texts, refs) for _ in rs]
        flat_ref = [r for rs in refs for r in rs]
        values = self.scorer().score(flat_hyp, flat_ref)[_SCORES.index(self.score)]
        values = np.asarray(values.numpy() if hasattr(values, "numpy") else values, dtype=np.float64)
        out, start = np.empty(len(texts)), 0
        for i, rs in enumerate(refs):
            out[i] = np.max(values[start:start + len(rs)])
            start += len(rs)
        return out
