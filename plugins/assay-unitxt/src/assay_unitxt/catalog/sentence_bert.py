"""unitxt's ``SentenceBert`` (``metrics.sentence_bert.*``, ``metrics.qa.open.recommended_local_gpu``) on a
local sentence-transformers folder, through assay-transformers' embedding model.

unitxt embeds every prediction and reference with ``SentenceTransformer(<Hub id>)`` and scores an
instance with the largest cosine similarity between the prediction and one of its references:
assay-transformers' :func:`~assay_transformers.sbert.best_reference_cosine` on the folder (loaded
with ``local_files_only=True``). Score ``sbert_score`` per instance, its mean globally, with an
interval (unitxt's ``MapReduceMetric`` bootstraps it). The folder: see
:mod:`assay_unitxt.catalog.models`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.validation import check_int
from assay_unitxt.catalog.bert_score import references_of
from assay_unitxt.catalog.model_metric import ModelEntryMetric

__all__ = ["SentenceBert"]


class SentenceBert(ModelEntryMetric):
    """unitxt's ``SentenceBert`` on a local folder (module docstring).

    Parameters
    ----------
    model_name : str
        The Hub id of the entry's model (names the folder under ``ASSAY_HF_MODELS_PATH``).
    model : str or path, optional
        The local sentence-transformers folder (else found from ``model_name``).
    batch_size : int
    device : str or None
    entry : str
        The catalog entry's name, for messages.
    """

    main_score = "sbert_score"
    ci_scores = ["sbert_score"]
    requirements = {"sentence_transformers": "sentence-transformers", "assay_transformers": "assay-transformers"}

    def __init__(self, *, model_name: str, batch_size: int = 32, model: Any = None, device: str | None = None,
                 entry: str = "sentence_bert", score_prefix: str = "") -> None:
        super().__init__(entry=entry, model_name=model_name, model=model, score_prefix=score_prefix)
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=entry)
        self.device = device

    def compute_bulk(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                     task_data: Sequence[Any] | None) -> list[float]:
        refs = references_of(references or [], self.entry)
        if not predictions:
            return []
        # deferred: an optional plugin, which loads torch and sentence-transformers
        from assay_transformers.embeddings import get_embedding_model
        from assay_transformers.sbert import best_reference_cosine

        model = get_embedding_model(self.folder.path(), device=self.device)
        return best_reference_cosine(model, list(predictions), refs, batch_size=self.batch_size).tolist()
