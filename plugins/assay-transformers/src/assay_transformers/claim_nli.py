"""The claim-level NLI statistics of LM-Polygraph's claim estimators (issue 28), on a local NLI model folder.

``claim_to_samples_nli`` (:class:`ClaimToSamplesNLICalculator`, LM-Polygraph's
``SemanticClassesClaimToSamplesCalculator``)
    ``nli_to_sample_texts``: per example, per claim, per sampled answer, the NLI model's
    probabilities ``{"entail", "contra", "neutral"}`` of (sampled answer, claim text) as premise
    and hypothesis; what ``frequency_scoring_claim`` reads. The claims' ``claim_text`` is needed.
``greedy_alternatives_fact_pref_nli`` (:class:`GreedyAlternativesFactPrefNLICalculator`, LM-Polygraph's)
    ``greedy_tokens_alternatives_fact_pref_nli``: per example, per claim, per claim token ``i``
    (of the claim's tokens ``c_1..c_n``), a square matrix over the token's alternatives whose
    row and column 0 hold the most probable NLI class between the claim's prefix
    ``decode(c_1..c_i)`` and the same prefix ending in alternative ``j``,
    ``decode(c_1..c_{i-1}, a_j)`` (both ways); the other cells are None. What
    ``claim_conditioned_probability_claim`` reads with ``nli_context="fact_pref"``.

Each distinct pair is scored once (LM-Polygraph scores a set of pairs too).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from assay.errors import InvalidParameterError
from assay.uncertainty.base import StatCalculator
from assay_transformers.cross_encoder import load_tokenizer
from assay_transformers.nli import NLIModel, softmax

__all__ = ["ClaimToSamplesNLICalculator", "GreedyAlternativesFactPrefNLICalculator"]

_LABELS = (("entail", "ENTAILMENT"), ("contra", "CONTRADICTION"), ("neutral", "NEUTRAL"))


def _claim_text(claim: Any, where: str) -> str:
    text = claim.get("claim_text") if isinstance(claim, Mapping) else getattr(claim, "claim_text", None)
    if not isinstance(text, str):
        raise InvalidParameterError(f"{where}: the claim has no 'claim_text' string (LM-Polygraph's Claim, or a "
                                    f"mapping with that key); claims made from claim_spans have none.")
    return text


def claim_ids(claim: Any, where: str) -> list[int]:
    """A claim's ``aligned_token_ids`` (LM-Polygraph's Claim attribute, or a mapping's key)."""
    ids = claim.get("aligned_token_ids") if isinstance(claim, Mapping) else getattr(claim, "aligned_token_ids", None)
    if ids is None:
        raise InvalidParameterError(f"{where}: a claim must have 'aligned_token_ids'; got {type(claim).__name__}.")
    return [int(t) for t in ids]


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
        scores = _scores(self.nli, pairs)
        out, k = [], 0
        for claims, samples in zip(stats["claims"], stats["sample_texts"]):
            per_claim = []
            for _ in claims:
                per_claim.append([dict(scores[pairs[k + s]]) for s in range(len(samples))])
                k += len(samples)
            out.append(per_claim)
        return {"nli_to_sample_texts": out}


def _scores(nli: NLIModel, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], dict[str, float]]:
    unique = list(dict.fromkeys(pairs))
    out: dict[tuple[str, str], dict[str, float]] = {}
    if unique:
        for pair, p in zip(unique, softmax(nli.logits(unique))):
            out[pair] = {label: float(p[nli.label2id[upper]]) for label, upper in _LABELS}
    return out


class GreedyAlternativesFactPrefNLICalculator(StatCalculator):
    """``greedy_tokens_alternatives``, ``greedy_tokens``, ``claims`` -> ``greedy_tokens_alternatives_fact_pref_nli``.

    Parameters
    ----------
    nli_model : path of a local NLI model folder
    tokenizer : the language model's folder or tokenizer (decodes the claim prefixes)
    batch_size, device : as for the NLI model
    """

    name = "greedy_alternatives_fact_pref_nli"
    stats = ("greedy_tokens_alternatives_fact_pref_nli",)
    dependencies = ("greedy_tokens_alternatives", "greedy_tokens", "claims")

    def __init__(self, nli_model: str | os.PathLike[str], tokenizer: Any, batch_size: int = 10,
                 device: str | None = None) -> None:
        owner = f"stat calculator {self.name!r}"
        self.nli = NLIModel(nli_model, batch_size=batch_size, device=device, owner=owner)
        self.tokenizer = load_tokenizer(tokenizer, owner)
        super().__init__()

    def _prefix_pairs(self, alternatives: Any, tokens: Any, claim: Any, where: str) -> list[list[tuple[str, str]]]:
        """Per claim token, the (prefix, prefix ending in alternative j) pairs, j over its alternatives."""
        ids = [int(tokens[t]) for t in claim_ids(claim, where)]
        alts = [alternatives[t] for t in claim_ids(claim, where)]
        out = []
        for i in range(len(ids)):
            text1 = self.tokenizer.decode(ids[: i + 1])
            row = []
            for alt, _lp in alts[i]:
                if isinstance(alt, str):
                    raise InvalidParameterError(f"{where}: the alternatives must be token ids (LM-Polygraph decodes "
                                                f"the claim prefix with them); got the word {alt!r}.")
                row.append((text1, self.tokenizer.decode(ids[:i] + [int(alt)])))
            out.append(row)
        return out

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        per_example = []
        for i, (alternatives, tokens, claims) in enumerate(zip(stats["greedy_tokens_alternatives"],
                                                               stats["greedy_tokens"], stats["claims"])):
            per_example.append([self._prefix_pairs(alternatives, tokens, claim,
                                                   f"stat calculator {self.name!r}, example {i}, claim {j}")
                                for j, claim in enumerate(claims)])
        pairs = [p for ex in per_example for claim in ex for row in claim for a, b in row for p in ((a, b), (b, a))]
        scores = _scores(self.nli, pairs)

        def cls(pair: tuple[str, str]) -> str:
            d = scores[pair]
            return max(d, key=d.__getitem__)

        out = []
        for ex in per_example:
            matrices = []
            for claim in ex:
                per_token = []
                for row in claim:
                    m: list[list[str | None]] = [[None] * len(row) for _ in row]
                    for j, (a, b) in enumerate(row):
                        m[0][j] = cls((a, b))
                        m[j][0] = cls((b, a))
                    per_token.append(m)
                matrices.append(per_token)
            out.append(matrices)
        return {"greedy_tokens_alternatives_fact_pref_nli": out}
