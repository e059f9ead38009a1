"""Registrations of ``assay-transformers``' embedding half (entry point ``assay.transformers-embeddings``).

Importing this module is cheap: torch and sentence-transformers are imported when a
model is first used, never at registration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay import hookimpl
from assay_transformers import semantic
from assay_transformers.sbert import SentenceBert

# model-free samples for the conformance checks (ROUGE-L similarity: no model to load)
_SAMPLES = [["Paris", "It is Paris", "Lyon"], ["42", "42"], ["blue sky", "the sky is blue", "green grass", "red"]]


@hookimpl
def assay_register_metrics(register: Callable[..., Any]) -> None:
    """``sentence_bert``: cosine of sentence embeddings with the best reference (unitxt ``SentenceBert``)."""
    register("sentence_bert", SentenceBert,
             description="cosine similarity of sentence embeddings with the best reference (sbert_score)")


@hookimpl
def assay_register_stat_calculators(register: Callable[..., Any]) -> None:
    """``sample_embedding_similarity``: the cosine matrix of each example's sampled answers."""
    register("sample_embedding_similarity", semantic.SampleEmbeddingSimilarity,
             description="sample_texts -> sample_embedding_similarity (cosine of sentence embeddings)",
             examples=[{"stats": {"sample_texts": _SAMPLES}}])
