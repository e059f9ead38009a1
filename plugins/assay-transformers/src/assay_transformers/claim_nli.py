"""NLI of each claim against each sampled answer: LM-Polygraph's ``nli_to_sample_texts`` (issue 28).

``claim_to_samples_nli`` (:class:`ClaimToSamplesNLICalculator`, LM-Polygraph's
``SemanticClassesClaimToSamplesCalculator``): per example, per claim, per sampled answer, the NLI
model's probabilities ``{"entail", "contra", "neutral"}`` of (sampled answer, claim text) as
premise and hypothesis. It is what ``frequency_scoring_claim`` reads. Each distinct pair is
scored once; the claims are LM-Polygraph's ``claims`` (their ``claim_text``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from assay.errors import InvalidParameterError
from assay.uncertainty.base import StatCalculator
from assay_transformers.nli import NLIModel, softmax

__all__ = ["ClaimToSamplesNLICalculator"]

_LABELS = (("entail", "ENTAILMENT"), ("contra", "CONTRADICTION"), ("neutral", "NEUTRAL"))


def _claim_text(claim: Any, where: str) -> str:
    text = claim.get("claim_text") if isinstance(claim, Mapping) else getattr(claim, "claim_text", None)
    if not isinstance(text, str):
        raise InvalidParameterError(f"{where}: the claim has no 'claim_text' string (LM-Polygraph's Claim, or a "
                                    f"mapping with that key); claims made from claim_spans have none.")
    return text


class ClaimToSamplesNLICalculator(StatCalculator):
    """``claims``, ``sample_texts`` -> ``nli_to_sample_texts`` (module docstring).

    Parameters
    ----------
    nli_model : path of a local NLI model folder (as :class:`~assay_transformers.nli.SemanticMatrixCalculator`)
    batch_size, device : as for the NLI model (LM-Polygraph's ``Deberta.batch_size``, default 10)
    """

    name = "claim_to_samples_nli"
    stats = ("nli_to_sample_texts",)
    dependencies = ("claims", "sample_texts")

    def __init__(self, nli_model: str | os.PathLike[str], batch_size: int = 10, device: str | None = None) -> None:
        self.nli = NLIModel(nli_model, batch_size=batch_size, device=device, owner=f"stat calculator {self.name!r}")
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        pairs: list[tuple[str, str]] = []
        for i, (claims, samples) in enumerate(zip(stats["claims"], stats["sample_texts"])):
            for j, claim in enumerate(claims):
                text = _claim_text(claim, f"stat calculator {self.name!r}, example {i}, claim {j}")
                pairs.extend((str(s), text) for s in samples)
        unique = list(dict.fromkeys(pairs))
        scores: dict[tuple[str, str], dict[str, float]] = {}
        if unique:
            probs = softmax(self.nli.logits(unique))
            for pair, p in zip(unique, probs):
                scores[pair] = {label: float(p[self.nli.label2id[upper]]) for label, upper in _LABELS}
        out, k = [], 0
        for claims, samples in zip(stats["claims"], stats["sample_texts"]):
            per_claim = []
            for _ in claims:
                per_claim.append([dict(scores[pairs[k + s]]) for s in range(len(samples))])
                k += len(samples)
            out.append(per_claim)
        return {"nli_to_sample_texts": out}
