"""unitxt's ``Reward`` (``metrics.reward.deberta_v3_large_v2``): a reward model's score of each
prediction as the answer to its first reference, on a local model folder.

unitxt runs transformers' ``pipeline("text-classification", model=<Hub id>)`` on the pairs
``{"text": references[0], "text_pair": prediction}`` and keeps each result's ``score`` (the top
label's probability: the sigmoid of the logit for a one-label reward model, the softmax
maximum otherwise). assay runs the same pipeline on the model and tokenizer loaded from the
folder (``local_files_only=True``, no remote code). Score ``reward_score`` per instance, its mean
globally, with an interval (unitxt's ``MapReduceMetric`` bootstraps it). The folder: see
:mod:`assay_unitxt.catalog.models`.

No assay-transformers class runs a sequence-classification pipeline, so the pipeline is built
here from transformers' own (a dependency of assay-transformers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import InvalidParameterError
from assay.validation import check_int
from assay_unitxt.catalog.bert_score import references_of
from assay_unitxt.catalog.model_metric import ModelEntryMetric
from assay_unitxt.catalog.models import SharedModel

__all__ = ["Reward"]


class Reward(ModelEntryMetric):
    """unitxt's ``Reward`` on a local folder (module docstring).

    Parameters
    ----------
    model_name : str
        The Hub id of the entry's model (names the folder under ``ASSAY_HF_MODELS_PATH``).
    model : str or path, optional
        The local folder of the reward model (else found from ``model_name``).
    batch_size : int
    device : str or None
        ``"cpu"``, ``"cuda"`` ... (None: CUDA when available, else CPU, as unitxt).
    entry : str
        The catalog entry's name, for messages.
    """

    main_score = "reward_score"
    ci_scores = ["reward_score"]
    requirements = {"transformers": "transformers", "torch": "torch"}

    def __init__(self, *, model_name: str, batch_size: int = 32, model: Any = None, device: str | None = None,
                 entry: str = "reward", score_prefix: str = "") -> None:
        super().__init__(entry=entry, model_name=model_name, model=model, score_prefix=score_prefix)
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=entry)
        self.device = device
        self._pipeline = SharedModel()

    def pipeline(self) -> Any:
        """transformers' text-classification pipeline on the folder's model (loaded on first use)."""
        folder = self.folder.path()

        def load() -> Any:
            import torch  # deferred: torch and transformers load with the model
            from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

            try:
                tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
                model = AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True,
                                                                           trust_remote_code=False)
            except (OSError, ValueError) as exc:
                raise InvalidParameterError(
                    f"{self.entry}: cannot load the reward model in {folder!r}: {exc}") from None
            device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
            return pipeline("text-classification", model=model, tokenizer=tokenizer, device=device)

        return self._pipeline.get((folder, self.device), load)

    def compute_bulk(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                     task_data: Sequence[Any] | None) -> list[float]:
        refs = references_of(references or [], self.entry)
        if not predictions:
            return []
        pairs = [{"text": r[0], "text_pair": p} for p, r in zip(predictions, refs)]
        return [float(out["score"]) for out in self.pipeline()(pairs, batch_size=self.batch_size)]
