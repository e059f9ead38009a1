"""Uncertainty estimators over stored model outputs (higher = more uncertain).

Definitions follow LM-Polygraph (Fadeeva et al. 2023) where it has the estimator, and
torch-uncertainty / Malinin & Gales 2021 for the ensemble ones. ``T`` is the number of
generated tokens, ``log p_t`` the log-probability of token ``t``, ``H_t`` its entropy;
``S`` sampled answers with log-likelihoods ``log P(s)`` and lengths ``|s|``. An example
whose estimator is undefined (no tokens, fewer than two samples) gets NaN; the manager's
NaN policy then applies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.plugins.deps import require
from assay.uncertainty.base import Estimator
from assay.validation import check_choice
from assay_uncertainty import ensemble as _ens
from assay_uncertainty.gen_metrics import normalize_text

__all__ = [
    "ClaimProbability", "Disagreement", "EigValLaplacian", "ExpectedEntropy", "LexicalSimilarity",
    "MaxTokenEntropy", "MaximumSequenceProbability", "MeanTokenEntropy", "MonteCarloNormalizedSequenceEntropy",
    "MonteCarloSequenceEntropy", "MutualInformation", "NumDistinctAnswers", "Perplexity", "PredictiveEntropy",
    "LEXICAL_METRICS", "TokenEntropy", "TokenMaxProb", "VariationRatio", "rouge_l",
]


def _per_example(col, fn) -> np.ndarray:
    return np.array([fn(np.asarray(v, dtype=np.float64)) for v in col], dtype=np.float64)


class MaximumSequenceProbability(Estimator):
    r"""``-sum_t log p_t``: minus the log-probability of the generated sequence (LM-Polygraph MSP)."""

    name, level, dependencies = "msp", "sequence", ("log_probs",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return _per_example(stats["log_probs"], lambda lp: -lp.sum())


class Perplexity(Estimator):
    r"""``-mean_t log p_t`` (the log of the perplexity); NaN for an empty generation."""

    name, level, dependencies = "perplexity", "sequence", ("log_probs",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return _per_example(stats["log_probs"], lambda lp: -lp.mean() if lp.size else math.nan)


class MeanTokenEntropy(Estimator):
    r"""``mean_t H_t``; NaN for an empty generation."""

    name, level, dependencies = "mean_token_entropy", "sequence", ("token_entropies",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return _per_example(stats["token_entropies"], lambda h: h.mean() if h.size else math.nan)


class MaxTokenEntropy(Estimator):
    r"""``max_t H_t``; NaN for an empty generation."""

    name, level, dependencies = "max_token_entropy", "sequence", ("token_entropies",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return _per_example(stats["token_entropies"], lambda h: h.max() if h.size else math.nan)


class MonteCarloSequenceEntropy(Estimator):
    r"""``-mean_s log P(s)`` over the sampled answers (LM-Polygraph); NaN without samples."""

    name, level, dependencies = "mc_sequence_entropy", "sequence", ("sample_log_likelihoods",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return _per_example(stats["sample_log_likelihoods"], lambda ll: -ll.mean() if ll.size else math.nan)


class MonteCarloNormalizedSequenceEntropy(Estimator):
    r"""``-mean_s log P(s) / |s|`` (length-normalised); NaN without samples or with an empty sample."""

    name, level = "mc_normalized_sequence_entropy", "sequence"
    dependencies = ("sample_log_likelihoods", "sample_lengths")

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for ll, n in zip(stats["sample_log_likelihoods"], stats["sample_lengths"]):
            ll, n = np.asarray(ll, dtype=np.float64), np.asarray(n, dtype=np.float64)
            out.append(-np.mean(ll / n) if ll.size and np.all(n > 0) else math.nan)
        return np.array(out)


def rouge_l(a: str, b: str) -> float:
    """ROUGE-L F1 of two texts on lower-cased whitespace tokens (longest common subsequence)."""
    x, y = a.casefold().split(), b.casefold().split()
    if not x or not y:
        return 1.0 if not x and not y else 0.0
    prev = [0] * (len(y) + 1)
    for tx in x:
        cur = [0]
        for j, ty in enumerate(y, start=1):
            cur.append(prev[j - 1] + 1 if tx == ty else max(prev[j], cur[j - 1]))
        prev = cur
    lcs = prev[-1]
    if lcs == 0:
        return 0.0
    p, r = lcs / len(x), lcs / len(y)
    return 2 * p * r / (p + r)


def _exact(a: str, b: str) -> float:
    return float(normalize_text(a) == normalize_text(b))


#: the similarities :class:`LexicalSimilarity` accepts
LEXICAL_METRICS = ("rougeL", "rouge1", "rouge2", "rougeL-whitespace", "exact")


def _rouge_score(kind: str) -> Any:
    """``f(a, b)``: rouge-score's ``kind`` F-measure with the Porter stemmer, as LM-Polygraph scores samples."""
    # deferred: rouge-score imports nltk's stemmer and absl, which only this estimator needs
    rouge_scorer = require("rouge_score.rouge_scorer", package="rouge-score",
                           purpose=f"lexical_similarity[metric={kind}]")
    # the tokenizer rouge-score would build itself, given: without one it logs through absl, whose first
    # message calls logging.basicConfig() and so configures the application's root logger
    tokenizer = rouge_scorer.tokenizers.DefaultTokenizer(use_stemmer=True)
    scorer = rouge_scorer.RougeScorer([kind], use_stemmer=True, tokenizer=tokenizer)
    return lambda a, b: float(scorer.score(a, b)[kind].fmeasure)


class LexicalSimilarity(Estimator):
    r"""``-mean_{i<j} sim(s_i, s_j)`` over sampled answers (LM-Polygraph's LexicalSimilarity).

    ``metric="rougeL"`` (default), ``"rouge1"``, ``"rouge2"``: LM-Polygraph's similarity,
    rouge-score's F-measure with stemming (``RougeScorer([metric], use_stemmer=True)``: lower-cased,
    non-alphanumeric characters as separators, Porter-stemmed tokens), so the value is
    LM-Polygraph's (``"Paris."`` / ``"paris"``: -1.0; ``"the cats sat"`` / ``"the cat sat"``: -1.0).
    ``"rougeL-whitespace"``: ROUGE-L F1 on lower-cased whitespace tokens, without stemming
    (:func:`rouge_l`; what ``rougeL`` meant before issue 27: -0.0 and -0.667 on those pairs).
    ``"exact"``: 1 for equal normalised answers. Fewer than two samples gives NaN.
    """

    name, level, dependencies = "lexical_similarity", "sequence", ("sample_texts",)

    def __init__(self, *, metric: str = "rougeL") -> None:
        self.metric = check_choice(metric, "metric", LEXICAL_METRICS, owner=self.name)
        super().__init__()

    def _similarity(self) -> Any:
        if self.metric == "rougeL-whitespace":
            return rouge_l
        if self.metric == "exact":
            return _exact
        return _rouge_score(self.metric)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        sim = None
        for samples in stats["sample_texts"]:
            s = list(samples)
            if len(s) < 2:
                out.append(math.nan)
                continue
            sim = sim or self._similarity()
            sims = [sim(s[i], s[j]) for i in range(len(s)) for j in range(i + 1, len(s))]
            out.append(-float(np.mean(sims)))
        return np.array(out)


class NumDistinctAnswers(Estimator):
    r"""Number of distinct sampled answers after whitespace and case normalisation (exact-match clusters).

    LM-Polygraph's ``NumSemSets`` clusters with an NLI model; this is its exact-match
    special case, run without a model. No samples gives NaN.
    """

    name, level, dependencies = "num_distinct_answers", "sequence", ("sample_texts",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return np.array([float(len({normalize_text(t) for t in s})) if len(s) else math.nan
                         for s in stats["sample_texts"]])


class EigValLaplacian(Estimator):
    r"""``sum_k max(0, 1 - lambda_k)`` over the eigenvalues of the normalised graph Laplacian (Lin et al. 2023).

    ``W = (S + S^T) / 2`` from the supplied similarity matrix ``S`` of the samples,
    ``D = diag(W 1)``, ``L = I - D^{-1/2} W D^{-1/2}``. An empty matrix gives NaN.
    """

    name, level, dependencies = "eigval_laplacian", "sequence", ("similarity_matrix",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for s in stats["similarity_matrix"]:
            w = np.asarray(s, dtype=np.float64)
            if w.size == 0:
                out.append(math.nan)
                continue
            w = (w + w.T) / 2.0
            d = w.sum(axis=1)
            inv = np.where(d > 0, 1.0 / np.sqrt(np.where(d > 0, d, 1.0)), 0.0)
            lap = np.eye(len(w)) - inv[:, None] * w * inv[None, :]
            lam = np.linalg.eigvalsh(lap)
            out.append(float(np.sum(np.clip(1.0 - lam, 0.0, None))))
        return np.array(out)


class TokenEntropy(Estimator):
    r"""Token level: ``H_t`` for every generated token."""

    name, level, dependencies = "token_entropy", "token", ("token_entropies",)

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        return [np.asarray(h, dtype=np.float64) for h in stats["token_entropies"]]


class TokenMaxProb(Estimator):
    r"""Token level: ``1 - p_t``, one minus the probability of each generated (greedy, maximum-probability) token."""

    name, level, dependencies = "token_max_prob", "token", ("log_probs",)

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        return [1.0 - np.exp(np.asarray(lp, dtype=np.float64)) for lp in stats["log_probs"]]


class ClaimProbability(Estimator):
    r"""Claim level: ``1 - prod_{t in span} p_t`` for each claim's token span ``[start, end)``."""

    name, level, dependencies = "claim_probability", "claim", ("log_probs", "claim_spans")

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        out = []
        for lp, spans in zip(stats["log_probs"], stats["claim_spans"]):
            lp = np.asarray(lp, dtype=np.float64)
            out.append(np.array([1.0 - math.exp(float(lp[a:b].sum())) for a, b in spans]))
        return out


class _EnsembleEstimator(Estimator):
    level, dependencies = "sequence", ("ensemble_probs",)

    def _kernel(self, p: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        col = stats["ensemble_probs"]
        try:
            p = np.asarray(col, dtype=np.float64)
        except ValueError:
            p = None
        if p is not None and p.ndim == 3:
            return self._kernel(_ens.check_ensemble_probs(p, name="ensemble_probs"))
        return np.array([self._kernel(_ens.check_ensemble_probs(np.asarray(v, dtype=np.float64)[None],
                                                               name="ensemble_probs"))[0] for v in col])


class PredictiveEntropy(_EnsembleEstimator):
    r"""``H(mean_n p_n)``: entropy of the ensemble's mean distribution (total uncertainty)."""

    name = "predictive_entropy"

    def _kernel(self, p):
        return _ens.predictive_entropy(p)


class ExpectedEntropy(_EnsembleEstimator):
    r"""``mean_n H(p_n)``: the members' mean entropy (aleatoric part)."""

    name = "expected_entropy"

    def _kernel(self, p):
        return _ens.expected_entropy(p)


class MutualInformation(_EnsembleEstimator):
    r"""``H(mean_n p_n) - mean_n H(p_n)``, clamped at 0 (epistemic part)."""

    name = "mutual_information"

    def _kernel(self, p):
        return _ens.mutual_information(p)


class VariationRatio(_EnsembleEstimator):
    r"""``1 - #{n : argmax p_n = c*} / N`` with ``c* = argmax mean_n p_n``.

    ``probabilistic=True``: ``1 - mean_n p_n[c*]``. The default is ``probabilistic=False``;
    torch-uncertainty's ``VariationRatio`` defaults to ``probabilistic=True`` and reads its
    input members first (:class:`assay_uncertainty.ensemble.VariationRatio` gives the values
    each gives on torch-uncertainty's docstring example).
    """

    name = "variation_ratio"

    def __init__(self, *, probabilistic: bool = False) -> None:
        self.probabilistic = bool(probabilistic)
        super().__init__()

    def _kernel(self, p):
        return _ens.variation_ratio(p, probabilistic=self.probabilistic)


class Disagreement(_EnsembleEstimator):
    r"""``1 - sum_c C(n_c, 2) / C(N, 2)`` over the members' argmax votes."""

    name = "disagreement"

    def _kernel(self, p):
        return _ens.disagreement(p)
