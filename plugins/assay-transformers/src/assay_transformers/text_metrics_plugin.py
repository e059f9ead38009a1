"""Registrations of the model-needing text generation metrics (entry point ``assay.transformers-text-metrics``).

``sbert`` (LM-Polygraph's ``SbertMetric``), ``bert_score`` (``BertScoreMetric``) and ``align_score``
(``AlignScore``): the answer's similarity to, or consistency with, its reference under a local model
folder. Importing this module is cheap: sentence-transformers, bert-score and torch are imported when a
metric first scores.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay import hookimpl
from assay_transformers.alignscore import AlignScoreMetric
from assay_transformers.bertscore import BertScoreMetric
from assay_transformers.sbert import SentenceBertQuality


@hookimpl
def assay_register_generation_metrics(register: Callable[..., Any]) -> None:
    register("sbert", SentenceBertQuality, other_names=("SbertMetric",), level="sequence",
             description="cosine of the answer's and the best reference's sentence embeddings (model=local folder; "
                         "default: the packaged all-MiniLM-L6-v2)")
    register("bert_score", BertScoreMetric, other_names=("BertScoreMetric",), level="sequence",
             description="BERTScore (precision by default, as LM-Polygraph) of the answer against the best reference, "
                         "by the bert-score package on a local model folder (model=...)")
    register("align_score", AlignScoreMetric, other_names=("AlignScore",), level="sequence",
             description="AlignScore (nli_sp) of the reference as a claim against the answer (target_is_claims=True, "
                         "as LM-Polygraph), on a local safetensors model folder (model=...)")
