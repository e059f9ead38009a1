"""``metrics.bleu``: the BLEU of Hugging Face evaluate's ``bleu`` module, which unitxt's entry wraps.

unitxt's ``HuggingfaceMetric("bleu")`` fetches that module from the Hub at run time; assay computes
its formula offline (written here: no library ships it). Texts are split with sacreBLEU's
``13a`` tokenizer (the module's default). Over the corpus, with :math:`m_n` the clipped n-gram
matches (each n-gram counted up to its largest count in any one reference) and :math:`t_n` the
prediction n-grams, :math:`p_n = m_n / t_n` (0 when :math:`t_n = 0`, no smoothing),
``bleu`` :math:`= BP \\cdot \\exp(\\frac14 \\sum_n \\log p_n)` (0 when some :math:`p_n = 0`), with
:math:`BP = 1` when the predictions are longer than the references, else :math:`e^{1 - r/c}`
(:math:`c` the predictions' length, :math:`r` the sum of each instance's *shortest* reference
length). Also reported: ``brevity_penalty``, ``length_ratio`` (:math:`c/r`),
``translation_length``, ``reference_length``; the module's list of ``precisions`` is not a score
in assay. Scale 0-1 (assay's own ``bleu`` is sacreBLEU's, 0-100).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from assay.metrics import GlobalMetric
from assay.validation import undefined_metric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["NmtBleu"]


def _ngrams(tokens: list[str], order: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i:i + n]) for n in range(1, order + 1) for i in range(len(tokens) - n + 1))


class NmtBleu(CheckedInputs, GlobalMetric):
    """Corpus BLEU as evaluate's ``bleu`` module computes it (see the module docstring)."""

    input_type = "text"
    examples = [{"predictions": ["the cat sat on the mat", "a dog ran"],
                 "references": [["the cat sat on a mat"], ["a dog ran fast", "the dog ran"]]}]

    main_score = "bleu"
    prediction_type = str
    requirements = {"sacrebleu": "sacrebleu"}

    def __init__(self, *, max_order: int = 4, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.max_order = int(max_order)

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a  # deferred: optional dependency

        tok = Tokenizer13a()
        order = self.max_order
        matches, possible = [0] * order, [0] * order
        ref_len = pred_len = 0
        for pred, refs in zip(predictions, references):
            p = tok(pred).split()
            rs = [tok(r).split() for r in refs]
            ref_len += min(len(r) for r in rs)
            pred_len += len(p)
            merged: Counter[tuple[str, ...]] = Counter()
            for r in rs:
                merged |= _ngrams(r, order)
            for gram, count in (_ngrams(p, order) & merged).items():
                matches[len(gram) - 1] += count
            for n in range(1, order + 1):
                possible[n - 1] += max(len(p) - n + 1, 0)
        if pred_len == 0 or ref_len == 0:
            nan = undefined_metric("metrics.bleu: no prediction or no reference tokens (evaluate's module divides "
                                   "by zero); NaN.")
            return {"bleu": nan, "brevity_penalty": nan, "length_ratio": nan,
                    "translation_length": float(pred_len), "reference_length": float(ref_len)}
        precisions = [m / t if t > 0 else 0.0 for m, t in zip(matches, possible)]
        geo = math.exp(sum(math.log(x) / order for x in precisions)) if min(precisions) > 0 else 0.0
        ratio = pred_len / ref_len
        bp = 1.0 if ratio > 1.0 else math.exp(1 - 1.0 / ratio)
        return {"bleu": geo * bp, "brevity_penalty": bp, "length_ratio": ratio,
                "translation_length": float(pred_len), "reference_length": float(ref_len)}
