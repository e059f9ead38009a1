"""The greedy tokens' alternatives and their NLI classes: the statistics of claim-conditioned probability (CCP).

``greedy_alternatives`` (:class:`GreedyAlternativesCalculator`)
    ``greedy_tokens_alternatives``: per greedy token, the ``n_alternatives`` most probable
    tokens of its step as ``(token id, log-probability)`` pairs from ``greedy_log_probs``,
    the greedy token first (LM-Polygraph's ``GreedyProbsCalculator``: ``np.argpartition``,
    then a stable sort that puts the greedy token first).
``greedy_alternatives_nli`` (:class:`GreedyAlternativesNLICalculator`)
    ``greedy_tokens_alternatives_nli``: per greedy token, a square matrix of NLI classes
    (``"entail"``, ``"neutral"``, ``"contra"``, the most probable) between the greedy word
    (row / column 0) and each alternative word, both ways; the other cells are ``""``.
    Words are the tokens decoded with the language model's tokenizer, stripped of
    punctuation, spaces and newlines (LM-Polygraph's ``GreedyAlternativesNLICalculator``).
    Each distinct pair of an example's token is scored once.
"""

from __future__ import annotations

import os
import string
from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.uncertainty.base import StatCalculator
from assay.validation import check_int
from assay_transformers.cross_encoder import load_tokenizer
from assay_transformers.nli import NLIModel, softmax

__all__ = ["GreedyAlternativesCalculator", "GreedyAlternativesNLICalculator"]


class GreedyAlternativesCalculator(StatCalculator):
    """``greedy_log_probs``, ``greedy_tokens`` -> ``greedy_tokens_alternatives`` (module docstring).

    Parameters
    ----------
    n_alternatives : int
        Alternatives per token, the greedy one included (LM-Polygraph's default 10).
    """

    name = "greedy_alternatives"
    stats = ("greedy_tokens_alternatives",)
    dependencies = ("greedy_log_probs", "greedy_tokens")

    def __init__(self, n_alternatives: int = 10) -> None:
        self.n_alternatives = check_int(n_alternatives, "n_alternatives", low=1, owner=f"stat calculator {self.name!r}")
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        out = []
        for rows, tokens in zip(stats["greedy_log_probs"], stats["greedy_tokens"]):
            rows = np.asarray(rows, dtype=np.float64)
            per_token = []
            for row, token in zip(rows, tokens):
                k = min(self.n_alternatives, len(row))
                best = np.argpartition(row, -k)[len(row) - k:]
                alts = [(int(t), float(row[t])) for t in best]
                greedy = int(token)
                alts.sort(key=lambda pair: pair[0] == greedy, reverse=True)  # stable: the greedy token first
                per_token.append(alts)
            out.append(per_token)
        return {"greedy_tokens_alternatives": out}


_LABELS = (("entail", "ENTAILMENT"), ("contra", "CONTRADICTION"), ("neutral", "NEUTRAL"))


class GreedyAlternativesNLICalculator(StatCalculator):
    """``greedy_tokens_alternatives`` -> ``greedy_tokens_alternatives_nli`` (module docstring).

    Parameters
    ----------
    nli_model : path of a local NLI model folder (as :class:`~assay_transformers.nli.SemanticMatrixCalculator`)
    tokenizer : the language model's folder or tokenizer (decodes the alternative tokens)
    batch_size, device : as for the NLI model
    """

    name = "greedy_alternatives_nli"
    stats = ("greedy_tokens_alternatives_nli",)
    dependencies = ("greedy_tokens_alternatives",)

    def __init__(self, nli_model: str | os.PathLike[str], tokenizer: Any, batch_size: int = 10,
                 device: str | None = None) -> None:
        owner = f"stat calculator {self.name!r}"
        self.nli = NLIModel(nli_model, batch_size=batch_size, device=device, owner=owner)
        self.tokenizer = load_tokenizer(tokenizer, owner)
        super().__init__()

    def _word(self, alt: Any) -> str:
        text = alt if isinstance(alt, str) else self.tokenizer.decode([int(alt)])
        return text.strip(string.punctuation + " \n")

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        out = []
        for example in stats["greedy_tokens_alternatives"]:
            matrices = []
            for alternatives in example:
                words = [self._word(a) for a, _ in alternatives]
                pairs = list(dict.fromkeys(p for w in words for p in ((words[0], w), (w, words[0]))))
                cls: dict[tuple[str, str], str] = {}
                if pairs:
                    probs = softmax(self.nli.logits(pairs))
                    for pair, p in zip(pairs, probs):
                        scores = {label: p[self.nli.label2id[upper]] for label, upper in _LABELS}
                        cls[pair] = max(scores, key=scores.__getitem__)
                m = len(words)
                matrices.append([[cls[words[i], words[j]] if i == 0 or j == 0 else "" for j in range(m)]
                                 for i in range(m)])
            out.append(matrices)
        return {"greedy_tokens_alternatives_nli": out}
