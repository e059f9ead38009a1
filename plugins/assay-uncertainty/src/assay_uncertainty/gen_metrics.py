"""Generation metrics: quality of stored outputs, one value per example.

Registered by this plugin (kind ``generation_metric``, hook
``assay_register_generation_metrics``), so ``UEManager(gen_metrics=["accuracy"])`` and
``assay ue`` find them by name; any :class:`~assay.uncertainty.GenerationMetric` instance
may be passed instead. They read labels and texts stored with the model outputs (see
:mod:`assay.uncertainty.inputs`):

``accuracy`` (sequence)
    The stored ``correct`` label (1 / 0) if present; else the exact match of ``answer``
    with ``reference`` (or any of ``references``) after stripping and case folding; else
    ``argmax(mean ensemble_probs) == label``.
``quality`` (sequence)
    The stored continuous ``quality`` (higher = better).
``claim_accuracy`` (claim)
    The stored ``claim_correct`` labels, one per claim.
``token_accuracy`` (token)
    The stored ``token_correct`` labels, one per token.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import GenerationMetric

__all__ = ["GENERATION_METRICS", "Accuracy", "ClaimAccuracy", "StoredQuality", "TokenAccuracy", "normalize_text"]


def normalize_text(text: str) -> str:
    """Whitespace-collapsed, case-folded text (the exact-match normalisation)."""
    return " ".join(str(text).split()).casefold()


class Accuracy(GenerationMetric):
    """Binary correctness per example (see the module docstring for the fields it reads)."""

    name = "accuracy"
    level = "sequence"

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        if "correct" in stats:
            return np.asarray(stats["correct"], dtype=np.float64)
        if "answer" in stats and ("reference" in stats or "references" in stats):
            answers = stats["answer"]
            refs = stats["references"] if "references" in stats else [[r] for r in stats["reference"]]
            return np.array([float(normalize_text(a) in {normalize_text(r) for r in rs})
                             for a, rs in zip(answers, refs)])
        if "ensemble_probs" in stats and "label" in stats:
            return np.array([float(np.argmax(np.mean(np.asarray(p), axis=0)) == int(y))
                             for p, y in zip(stats["ensemble_probs"], stats["label"])])
        raise InvalidParameterError(
            "Generation metric 'accuracy' needs the field 'correct', or 'answer' with 'reference' / 'references', "
            f"or 'ensemble_probs' with 'label'; the data has: {', '.join(sorted(stats)) or 'nothing'}."
        )


class _Stored(GenerationMetric):
    field = ""

    def __call__(self, stats: Mapping[str, Any]):
        if self.field not in stats:
            raise InvalidParameterError(
                f"Generation metric {self.name!r} reads the field {self.field!r}, which the data lacks; "
                f"it has: {', '.join(sorted(stats)) or 'nothing'}."
            )
        col = stats[self.field]
        if self.level == "sequence":
            return np.asarray(col, dtype=np.float64)
        return [np.asarray(v, dtype=np.float64) for v in col]


class StoredQuality(_Stored):
    """The stored continuous ``quality`` of each example."""

    name, level, field = "quality", "sequence", "quality"


class ClaimAccuracy(_Stored):
    """The stored ``claim_correct`` labels (claim level)."""

    name, level, field = "claim_accuracy", "claim", "claim_correct"


class TokenAccuracy(_Stored):
    """The stored ``token_correct`` labels (token level)."""

    name, level, field = "token_accuracy", "token", "token_correct"


#: name -> class, what this plugin registers as generation metrics
GENERATION_METRICS: dict[str, type[GenerationMetric]] = {
    "accuracy": Accuracy,
    "quality": StoredQuality,
    "claim_accuracy": ClaimAccuracy,
    "token_accuracy": TokenAccuracy,
}
