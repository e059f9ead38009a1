"""unitxt's ``BertScore`` (``metrics.bert_score.*``): BERTScore computed by the ``bert-score``
package on a local model folder, through assay-transformers' ``BertScoreMetric``.

unitxt scores each prediction against all its references with ``BERTScorer(model_type=<Hub id>,
num_layers=model_layer)``: bert-score takes, for each of precision, recall and F1, the largest
value over the references. ``model_layer`` None is bert-score's tuned layer for that Hub id
(``bert_score.utils.model2layers``: 40 for ``microsoft/deberta-xlarge-mnli``), which assay uses
for the local folder too, so a folder holding the Hub model gives unitxt's values. unitxt caps a
tokenizer's absurd ``model_max_length`` (DeBERTa's) at the model's ``max_position_embeddings``;
so does assay. No IDF weighting, no baseline rescaling (unitxt's settings).

Scores: ``f1`` (main), ``precision``, ``recall`` per instance, their means globally, an interval
for each (unitxt's ``MapReduceMetric`` bootstraps every score). The folder: see
:mod:`assay_unitxt.catalog.models`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import InvalidParameterError
from assay.plugins.deps import require
from assay.validation import check_int
from assay_unitxt.catalog.model_metric import ModelEntryMetric
from assay_unitxt.catalog.models import SharedModel

__all__ = ["BertScore"]

#: unitxt caps a tokenizer's model_max_length above this at the model's max_position_embeddings
_ABSURD_LENGTH = 1_000_000


def references_of(references: Sequence[Any], owner: str) -> list[list[str]]:
    """Each instance's references as a list, an empty one an error naming the instance."""
    out = []
    for i, refs in enumerate(references):
        refs = list(refs)
        if not refs:
            raise InvalidParameterError(f"Metric {owner!r}: references[{i}] is empty; it needs one reference or more.")
        out.append(refs)
    return out


class BertScore(ModelEntryMetric):
    """unitxt's ``BertScore`` on a local model folder (module docstring).

    Parameters
    ----------
    model_name : str
        The Hub id of the entry's model (``"microsoft/deberta-xlarge-mnli"``): names the folder
        under ``ASSAY_HF_MODELS_PATH`` and bert-score's default layer.
    model_layer : int or None
        The layer whose embeddings are matched (None: bert-score's layer for ``model_name``).
    model : str or path, optional
        The local folder of the model (else found from ``model_name``).
    batch_size : int
    device : str or None
        ``"cpu"``, ``"cuda"`` ... (None: bert-score's choice, CUDA when available).
    entry : str
        The catalog entry's name, for messages.
    """

    main_score = "f1"
    score_names = ["f1", "precision", "recall"]
    ci_scores = ["f1", "precision", "recall"]
    requirements = {"bert_score": "bert-score", "assay_transformers": "assay-transformers"}

    def __init__(self, *, model_name: str, model_layer: int | None = None, batch_size: int = 32, model: Any = None,
                 device: str | None = None, entry: str = "bert_score", score_prefix: str = "") -> None:
        super().__init__(entry=entry, model_name=model_name, model=model, score_prefix=score_prefix)
        self.model_layer = None if model_layer is None else check_int(model_layer, "model_layer", low=0, owner=entry)
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=entry)
        self.device = device
        self._scorer = SharedModel()

    def layer(self, folder: str) -> int:
        """``model_layer``, else bert-score's layer for the Hub id; checked against the folder's layers."""
        from transformers import AutoConfig  # deferred: transformers is heavy (installed with assay-transformers)

        layer = self.model_layer
        if layer is None:
            utils = require("bert_score.utils", package="bert-score", purpose=f"metric {self.entry!r}")
            layer = utils.model2layers.get(self.folder.hub_id)
            if layer is None:
                raise InvalidParameterError(
                    f"{self.entry}: bert-score knows no layer for {self.folder.hub_id!r}; give model_layer= "
                    f"({self.entry}[model_layer=N]).")
        try:
            available = AutoConfig.from_pretrained(folder, local_files_only=True).num_hidden_layers
        except (OSError, ValueError) as exc:
            raise InvalidParameterError(f"{self.entry}: cannot read the model config in {folder!r}: {exc}") from None
        if layer > available:
            raise InvalidParameterError(
                f"{self.entry} uses layer {layer} of {self.folder.hub_id!r} (bert-score's layer for it, or "
                f"model_layer), but the model in {folder!r} has {available} layers: is it that model?")
        return int(layer)

    def scorer(self) -> Any:
        """bert-score's ``BERTScorer`` on the folder, loaded on first use by assay-transformers."""
        folder = self.folder.path()
        layer = self.layer(folder)

        def load() -> Any:
            require("assay_transformers", package="assay-transformers", purpose=f"metric {self.entry!r}")
            # deferred: an optional plugin, which loads torch and the model
            from transformers import AutoConfig

            from assay_transformers.bertscore import BertScoreMetric

            scorer = BertScoreMetric(model=folder, num_layers=layer, batch_size=self.batch_size,
                                     device=self.device).scorer()
            tokenizer = scorer._tokenizer  # bert-score keeps it there (unitxt caps it the same way)
            if tokenizer.model_max_length > _ABSURD_LENGTH:
                config = AutoConfig.from_pretrained(folder, local_files_only=True)
                tokenizer.model_max_length = getattr(config, "max_position_embeddings", 512)
            return scorer

        return self._scorer.get((folder, layer, self.batch_size, self.device), load)

    def compute_bulk(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                     task_data: Sequence[Any] | None) -> list[dict[str, float]]:
        refs = references_of(references or [], self.entry)
        if not predictions:
            return []
        precision, recall, f1 = self.scorer().score(cands=list(predictions), refs=refs, batch_size=self.batch_size)
        return [{"precision": p, "recall": r, "f1": f}
                for p, r, f in zip(precision.tolist(), recall.tolist(), f1.tolist())]
