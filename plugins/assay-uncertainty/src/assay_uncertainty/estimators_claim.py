"""LM-Polygraph 0.7.0's claim-level estimators, on given claims (issue 28).

A claim is a part of the generated answer (an atomic fact) with the indices of the generated
tokens it is made of. LM-Polygraph's ``claims`` statistic holds, per example, a list of its
``Claim`` objects (``claim_text``, ``sentence``, ``aligned_token_ids``); here a claim is any
object with an ``aligned_token_ids`` attribute or a mapping with that key (a claim read from
JSON), and :class:`ClaimsFromSpans` makes them from assay's ``claim_spans`` (``[start, end)``
token ranges). Extracting claims from a text (LM-Polygraph's ``ClaimsExtractor``) needs a hosted
OpenAI model and is not part of assay.

Each class reads LM-Polygraph's statistic names with LM-Polygraph's meanings, takes its options
under LM-Polygraph's argument names and returns what LM-Polygraph's class of the same name
returns on the same dictionary (tests/test_polygraph_claim.py runs both): per example, one value
per claim (higher = more uncertain). Notation, per example: ``l_t = log p(y_t | y_<t, x)``
(``greedy_log_likelihoods``), ``C`` a claim's token indices. Deviations, each stated in the
class: a claim with no tokens is NaN with a warning (LM-Polygraph: NaN or an exception from
numpy), and the input statistics are never changed (LM-Polygraph's
PointwiseMutualInformationClaim writes 0 into ``greedy_lm_log_likelihoods``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import EXAMPLE_POSITIONS, Estimator, StatCalculator, nan_with_warning
from assay_uncertainty.estimators_info import BoostedProbSequence, _model_config, _unpad

__all__ = [
    "AttentionScoreClaim", "BoostedProbClaim", "ClaimConditionedProbabilityClaim", "ClaimsFromSpans",
    "FrequencyScoringClaim", "MaxTokenEntropyClaim", "MaximumClaimProbability", "PTrueClaim",
    "PerplexityClaim", "PointwiseMutualInformationClaim", "RandomBaselineClaim", "SelfCertaintyClaim",
    "TokenSARClaim", "claim_token_ids", "combine_nli",
]


def claim_token_ids(claim: Any, where: str) -> np.ndarray:
    """A claim's ``aligned_token_ids`` as an integer array (an object's attribute or a mapping's key)."""
    ids = claim.get("aligned_token_ids") if isinstance(claim, Mapping) else getattr(claim, "aligned_token_ids", None)
    if ids is None:
        raise InvalidParameterError(f"{where}: a claim must have 'aligned_token_ids' (LM-Polygraph's Claim, or a "
                                    f"mapping with that key); got {type(claim).__name__}.")
    arr = np.asarray(ids)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
        raise InvalidParameterError(f"{where}: 'aligned_token_ids' must be a list of token indices; got {ids!r:.80}.")
    return arr.astype(np.int64)


class _ClaimEstimator(Estimator):
    """Per example and claim, ``reduce(per_token[C])`` of a per-token array the subclass computes."""

    level = "claim"

    def _per_token(self, stats: Mapping[str, Any], i: int) -> np.ndarray:
        raise NotImplementedError

    def _reduce(self, x: np.ndarray) -> float:
        raise NotImplementedError

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        out = []
        for i, claims in enumerate(stats["claims"]):
            vals = []
            per = self._per_token(stats, i) if len(claims) else np.zeros(0)
            for j, claim in enumerate(claims):
                where = f"estimator {self.name!r}, example {i}, claim {j}"
                ids = claim_token_ids(claim, where)
                if ids.size == 0:
                    vals.append(nan_with_warning(f"{where} has no tokens; NaN.", stacklevel=3))
                    continue
                if ids.max() >= per.size or ids.min() < -per.size:
                    raise InvalidParameterError(f"{where}: token index {int(ids.max())} is past the example's "
                                                f"{per.size} generated tokens.")
                vals.append(self._reduce(per[ids]))
            out.append(np.asarray(vals, dtype=np.float64))
        return out


def _row(stats: Mapping[str, Any], key: str, i: int) -> np.ndarray:
    return np.asarray(stats[key][i], dtype=np.float64).reshape(-1)


class _LogLikelihoodClaim(_ClaimEstimator):
    """A claim estimator on LM-Polygraph's ``greedy_log_likelihoods`` of the claim's tokens."""

    def _per_token(self, stats: Mapping[str, Any], i: int) -> np.ndarray:
        return _row(stats, "greedy_log_likelihoods", i)


class MaximumClaimProbability(_LogLikelihoodClaim):
    r"""``-sum_{t in C} l_t``: minus the log-probability of the claim's tokens (LM-Polygraph's MaximumClaimProbability).

    assay's older ``claim_probability`` gives ``1 - prod_{t in C} p_t`` from ``claim_spans``; this
    one is LM-Polygraph's value on its ``claims``.
    """

    name, dependencies = "maximum_claim_probability", ("greedy_log_likelihoods", "claims")

    def _reduce(self, x: np.ndarray) -> float:
        return float(-np.sum(x))


class PerplexityClaim(_LogLikelihoodClaim):
    r"""``-mean_{t in C} l_t`` (LM-Polygraph's PerplexityClaim): the log perplexity of the claim's tokens."""

    name, dependencies = "perplexity_claim", ("greedy_log_likelihoods", "claims")

    def _reduce(self, x: np.ndarray) -> float:
        return float(-np.mean(x))


class MaxTokenEntropyClaim(_ClaimEstimator):
    r"""``max_{t in C} H_t`` over LM-Polygraph's ``entropy`` (LM-Polygraph's MaxTokenEntropyClaim)."""

    name, dependencies = "max_token_entropy_claim", ("entropy", "claims")

    def _per_token(self, stats: Mapping[str, Any], i: int) -> np.ndarray:
        return _row(stats, "entropy", i)

    def _reduce(self, x: np.ndarray) -> float:
        return float(np.max(x))


class PointwiseMutualInformationClaim(_ClaimEstimator):
    r"""``-sum_{t in C} (l_t - m_t)`` with ``m_1 = 0`` (LM-Polygraph's PointwiseMutualInformationClaim).

    ``m_t = log p(y_t | y_<t)`` without the prompt (``greedy_lm_log_likelihoods``); the first
    token's is taken as 0 (LM-Polygraph sets it to 0 in the statistics themselves; here the input
    is left unchanged).
    """

    name, dependencies = ("pointwise_mutual_information_claim",
                          ("greedy_log_likelihoods", "greedy_lm_log_likelihoods", "claims"))

    def _per_token(self, stats: Mapping[str, Any], i: int) -> np.ndarray:
        lp, lm = _row(stats, "greedy_log_likelihoods", i), _row(stats, "greedy_lm_log_likelihoods", i).copy()
        if lm.size != lp.size:
            raise InvalidParameterError(f"estimator {self.name!r}: example {i} has {lm.size} "
                                        f"greedy_lm_log_likelihoods for {lp.size} greedy_log_likelihoods.")
        if lm.size:
            lm[0] = 0.0
        return lp - lm

    def _reduce(self, x: np.ndarray) -> float:
        return float(-np.sum(x))


class SelfCertaintyClaim(_ClaimEstimator):
    r"""``-mean_{t in C} (-mean_{v in F_t} z_{t,v} - log |F_t|)`` (LM-Polygraph's SelfCertaintyClaim).

    Per token ``KL(uniform || p_t)`` over the finite entries ``F_t`` of its log-probability
    vector ``z_t`` (``greedy_log_probs``), as :class:`~assay_uncertainty.estimators_info.SelfCertainty`;
    the claim's value is minus their mean.
    """

    name, dependencies = "self_certainty_claim", ("greedy_log_probs", "claims")

    def _per_token(self, stats: Mapping[str, Any], i: int) -> np.ndarray:
        z = np.asarray(stats["greedy_log_probs"][i], dtype=np.float64)
        if z.ndim != 2:
            raise InvalidParameterError(f"estimator {self.name!r}: greedy_log_probs[{i}] must be a (T, V) array; "
                                        f"got shape {z.shape}.")
        keep = ~np.isinf(z)
        n = keep.sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return -np.where(keep, z, 0.0).sum(-1) / n - np.log(n)

    def _reduce(self, x: np.ndarray) -> float:
        return float(-np.mean(x))


class BoostedProbClaim(_ClaimEstimator):
    r"""``-mean_{t in C} b_t``, the boosted probability of the claim's tokens (LM-Polygraph's BoostedProbClaim).

    ``b_t`` as :class:`~assay_uncertainty.estimators_info.BoostedProbSequence` computes it (the
    dominant tokens' mass when the generated token is dominant, else its probability), from
    ``greedy_log_probs`` and each example's own ``greedy_tokens``. LM-Polygraph's class passes
    the whole batch's ``greedy_tokens`` to ``boostedprob`` for every example, which fails in
    torch (``gather`` on a 2-D tensor with a 3-D index) for any batch; the value here is the one
    its docstring describes, checked against ``boostedprob.calculate_boostedprob`` called per
    example (tests/test_polygraph_claim.py).
    """

    name, dependencies = "boosted_prob_claim", ("greedy_log_probs", "greedy_tokens", "claims")

    def _per_token(self, stats: Mapping[str, Any], i: int) -> np.ndarray:
        z = np.asarray(stats["greedy_log_probs"][i], dtype=np.float64)
        target = np.asarray(stats["greedy_tokens"][i], dtype=np.int64).reshape(-1)
        if z.ndim != 2 or target.size != len(z):
            raise InvalidParameterError(f"estimator {self.name!r}: example {i} needs a (T, V) greedy_log_probs and "
                                        f"T greedy_tokens; got shape {z.shape} and {target.size} tokens.")
        return BoostedProbSequence.boosted(z, target)

    def _reduce(self, x: np.ndarray) -> float:
        return float(-np.mean(x))


class TokenSARClaim(_ClaimEstimator):
    r"""``sum_{t in C} -l_t R_t / sum_s R_s`` with ``R_t = 1 - token_similarity_t`` (LM-Polygraph's TokenSARClaim).

    Duan et al. 2024, "Shifting Attention to Relevance" (token relevance from a cross-encoder;
    ``token_similarity`` as assay-transformers' ``cross_encoder_similarity`` computes it).
    LM-Polygraph's class reads ``claims`` without declaring it; here it is declared.
    """

    name, dependencies = "token_sar_claim", ("token_similarity", "greedy_log_likelihoods", "claims")

    def _per_token(self, stats: Mapping[str, Any], i: int) -> np.ndarray:
        lp, sim = _row(stats, "greedy_log_likelihoods", i), _row(stats, "token_similarity", i)
        if lp.size != sim.size:
            raise InvalidParameterError(f"estimator {self.name!r}: example {i} has {sim.size} token_similarity "
                                        f"values for {lp.size} greedy_log_likelihoods.")
        r = 1.0 - sim
        return -lp * (r / r.sum())

    def _reduce(self, x: np.ndarray) -> float:
        return float(np.sum(x))


class AttentionScoreClaim(_ClaimEstimator):
    r"""``-(1 / H) sum_h sum_{t in C} log A^{(layer,h)}_{t,t}`` over the generated block (LM-Polygraph's).

    LM-Polygraph's AttentionScoreClaim (Sriramanan et al. 2024, LLM-Check). Per example the
    forward pass's attention ``forwardpass_attention_weights`` (``(L, H, S, S)``, NaN-padded as
    LM-Polygraph pads a batch), cut to the block of the ``T`` generated tokens
    (``[-T:, -T:]``, ``T = len(greedy_tokens)``); the claim's tokens' attention to themselves.
    ``layer`` is ``num_hidden_layers // 2`` of the model config in the local folder ``model_name``
    (``transformers.AutoConfig``, as LM-Polygraph reads it); without ``model_name``, of
    ``stats["model"]``'s config. ``layer`` may also be given directly (assay's addition).
    """

    name, dependencies = "attention_score_claim", ("forwardpass_attention_weights", "greedy_tokens", "claims")

    def __init__(self, model_name: str | None = None, layer: int | None = None) -> None:
        self.model_name = model_name
        if layer is None and model_name is not None:
            if not os.path.isdir(model_name):
                raise InvalidParameterError(f"{self.name}: 'model_name' must be a local model folder (its config.json "
                                            f"gives the layers; assay never downloads one); got {model_name!r}.")
            # transformers is deferred: a heavy optional dependency, needed only to read a config folder
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(model_name, local_files_only=True, trust_remote_code=False)
            layer = getattr(config, "text_config", config).num_hidden_layers // 2
        self.layer = None if layer is None else int(layer)
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        self._layer = self.layer if self.layer is not None else _model_config(
            stats, self.name, "model_name or layer").num_hidden_layers // 2
        return super().__call__(stats)

    def _per_token(self, stats: Mapping[str, Any], i: int) -> np.ndarray:
        el = _unpad(np.asarray(stats["forwardpass_attention_weights"][i], dtype=np.float64))
        if el.ndim == 5:
            el = el[:, 0]
        if el.ndim != 4:
            raise InvalidParameterError(f"estimator {self.name!r}: forwardpass_attention_weights[{i}] must be "
                                        f"(L, H, S, S) or (L, 1, H, S, S); got shape {el.shape}.")
        n = len(stats["greedy_tokens"][i])
        heads = el[self._layer][:, -n:, -n:]
        with np.errstate(divide="ignore"):
            logs = np.log(np.diagonal(heads, axis1=-2, axis2=-1))  # (H, T)
        return logs.sum(0) / heads.shape[0]

    def _reduce(self, x: np.ndarray) -> float:
        return float(-np.sum(x))


class PTrueClaim(Estimator):
    r"""``-p_true_claim``: minus the log-probability of "True" after each claim's P(True) prompt (LM-Polygraph's).

    Kadavath et al. 2022. ``p_true_claim`` is LM-Polygraph's statistic: the batch's claims' values
    end to end (its layout, one value per claim in order) or, assay's per-example layout, one list
    per example. Computing it needs the model (a prompt per claim): with a Hugging Face model the
    backend computes it for the batch's ``claims`` (assay-transformers' ``ClaimPTruePrompt``), one
    list per example.
    """

    name, level, dependencies = "p_true_claim", "claim", ("p_true_claim", "claims")

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        claims, col = stats["claims"], list(stats["p_true_claim"])
        counts = [len(c) for c in claims]
        nested = len(col) == len(claims) and all(isinstance(v, (Sequence, np.ndarray)) for v in col)
        if nested:
            rows = [np.asarray(v, dtype=np.float64).reshape(-1) for v in col]
            bad = [i for i, (r, n) in enumerate(zip(rows, counts)) if r.size != n]
            if bad:
                raise InvalidParameterError(f"estimator {self.name!r}: example {bad[0]} has {rows[bad[0]].size} "
                                            f"p_true_claim values for {counts[bad[0]]} claims.")
            return [-r for r in rows]
        flat = np.asarray(col, dtype=np.float64).reshape(-1)
        if flat.size != sum(counts):
            raise InvalidParameterError(f"estimator {self.name!r}: p_true_claim has {flat.size} values for the "
                                        f"batch's {sum(counts)} claims (one per claim, in order).")
        return [-part for part in np.split(flat, np.cumsum(counts)[:-1])]


class RandomBaselineClaim(Estimator):
    r"""A uniform random number in ``[0, 1)`` per claim (LM-Polygraph's RandomBaselineClaim), a reference line.

    Drawn with numpy's global generator (``np.random.rand()``, one call per claim in order, as
    LM-Polygraph draws them), so seeding numpy gives LM-Polygraph's numbers; ``seed`` (assay's
    addition) leaves the global state alone and draws each example's numbers from its own
    ``np.random.RandomState([seed, position])``, ``position`` being the example's place in the run
    (the model loop's ``example_positions`` statistic; without it, its place in the call). So an
    example gets the same numbers whatever the batch size, the batches around it, or whether a
    run resumed from its cache (``cache_dir``) skipped the examples before it.
    """

    name, level, dependencies = "random_baseline_claim", "claim", ("claims",)

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        claims = stats["claims"]
        if self.seed is None:
            return [np.array([np.random.rand() for _ in c], dtype=np.float64) for c in claims]
        positions = list(stats.get(EXAMPLE_POSITIONS, range(len(claims))))
        if len(positions) != len(claims):
            raise InvalidParameterError(f"estimator {self.name!r}: {EXAMPLE_POSITIONS} has {len(positions)} "
                                        f"positions for {len(claims)} examples of claims.")
        return [np.random.RandomState([self.seed, int(p)]).rand(len(c)).astype(np.float64)
                for p, c in zip(positions, claims)]


class FrequencyScoringClaim(Estimator):
    r"""``#contra - #entail`` over the samples (LM-Polygraph's FrequencyScoringClaim; Mohri & Hashimoto 2024).

    ``nli_to_sample_texts``: per example, per claim, per sampled answer a mapping of NLI class
    (``"entail"``, ``"neutral"``, ``"contra"``) to its probability; each pair's class is the most
    probable one (the first on a tie, as ``max(d, key=d.get)``). As in LM-Polygraph, an example
    has as many values as it has lists in ``nli_to_sample_texts``.
    """

    name, level, dependencies = "frequency_scoring_claim", "claim", ("claims", "nli_to_sample_texts")

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        out = []
        for _claims, per_claim in zip(stats["claims"], stats["nli_to_sample_texts"]):
            vals = []
            for pairs in per_claim:
                hard = [max(d, key=d.get) for d in pairs]
                vals.append(float(hard.count("contra") - hard.count("entail")))
            out.append(np.asarray(vals, dtype=np.float64))
        return out


def combine_nli(forward: str, backward: str) -> str:
    """LM-Polygraph's combination of NLI(x, y) and NLI(y, x): entail or contra if either says so, not both."""
    if forward == backward:
        return forward
    both = {forward, backward}
    if {"entail", "contra"} <= both:
        return "neutral"
    for x in ("entail", "contra"):
        if x in both:
            return x
    return "neutral"


_NLTK_STOPWORDS: frozenset[str] | None = None


def nltk_stopword(t: Any) -> bool:
    """LM-Polygraph's default: ``t`` is in NLTK's English stopwords (its corpus must be installed).

    A token id (an integer, as LM-Polygraph's ``greedy_tokens_alternatives`` hold) is never a
    stopword (LM-Polygraph compares it with the words, and finds none); the corpus is read only
    for a string.
    """
    global _NLTK_STOPWORDS
    if not isinstance(t, str):
        return False
    if _NLTK_STOPWORDS is None:
        # nltk is deferred: needed only when the alternatives are words
        from nltk.corpus import stopwords  # type: ignore[import-untyped]

        try:
            _NLTK_STOPWORDS = frozenset(stopwords.words("english"))
        except LookupError as exc:
            raise InvalidParameterError(
                "claim_conditioned_probability_claim: NLTK's 'stopwords' corpus is not installed (assay never "
                "downloads it); install it (python -m nltk.downloader stopwords) or pass is_stopword=") from exc
    return t in _NLTK_STOPWORDS


class ClaimConditionedProbabilityClaim(Estimator):
    r"""``-exp(sum_{t in C} log CCP_t)`` (LM-Polygraph's ClaimConditionedProbabilityClaim; Fadeeva et al. 2024).

    Per token, over its alternatives ``a`` (``greedy_tokens_alternatives``, the greedy token
    first): ``log CCP_t = log sum_{a: entail} p_a - log sum_{a: entail or contra} p_a``, where
    the greedy token entails itself, every alternative counts as entailing when the greedy token
    ``is_stopword``, and otherwise the class is the combination of NLI both ways
    (``greedy_tokens_alternatives_nli``; with ``nli_context="fact_pref"``, per claim and claim
    token the matrices of ``greedy_tokens_alternatives_fact_pref_nli``, computed with the claim
    as a prefix). ``is_stopword`` defaults to NLTK's English stopwords (:func:`nltk_stopword`).
    """

    name, level = "claim_conditioned_probability_claim", "claim"

    def __init__(self, nli_context: str = "no_context", is_stopword: Callable[[Any], bool] = nltk_stopword) -> None:
        if nli_context not in ("no_context", "fact_pref"):
            raise InvalidParameterError(f"{self.name}: 'nli_context' must be 'no_context' or 'fact_pref'; got "
                                        f"{nli_context!r}.")
        if not callable(is_stopword):
            raise InvalidParameterError(f"{self.name}: 'is_stopword' must be a function of a token; got "
                                        f"{type(is_stopword).__name__}.")
        self.nli_context, self.is_stopword = nli_context, is_stopword
        nli = "greedy_tokens_alternatives_nli" if nli_context == "no_context" else \
            "greedy_tokens_alternatives_fact_pref_nli"
        super().__init__(dependencies=("claims", "greedy_tokens_alternatives", nli))

    def _token_ccp(self, alternatives: Sequence[Any], nli: Sequence[Sequence[str]]) -> float:
        stop = self.is_stopword(alternatives[0][0])
        entail, contra = [], []
        for a, (_word, logprob) in enumerate(alternatives):
            outcome = "entail" if stop or a == 0 else combine_nli(nli[0][a], nli[a][0])
            if outcome == "entail":
                entail.append(float(logprob))
            elif outcome == "contra":
                contra.append(float(logprob))
        return float(np.logaddexp.reduce(entail) - np.logaddexp.reduce(entail + contra))

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        out = []
        nli_col = stats[self.dependencies[2]]
        for i, (alternatives, nli, claims) in enumerate(zip(stats["greedy_tokens_alternatives"], nli_col,
                                                            stats["claims"])):
            vals = []
            if self.nli_context == "no_context":
                ccp = np.array([self._token_ccp(a, m) for a, m in zip(alternatives, nli)]) if claims else np.zeros(0)
                for j, claim in enumerate(claims):
                    where = f"estimator {self.name!r}, example {i}, claim {j}"
                    ids = claim_token_ids(claim, where)
                    vals.append(-math.exp(float(np.sum(ccp[ids]))) if ids.size else
                                nan_with_warning(f"{where} has no tokens; NaN.", stacklevel=2))
            else:
                for j, (claim, mats) in enumerate(zip(claims, nli)):
                    where = f"estimator {self.name!r}, example {i}, claim {j}"
                    ids = claim_token_ids(claim, where)
                    if not ids.size:
                        vals.append(nan_with_warning(f"{where} has no tokens; NaN.", stacklevel=2))
                        continue
                    if len(mats) != ids.size:
                        raise InvalidParameterError(f"estimator {self.name!r}: example {i}, claim {j} has {ids.size} "
                                                    f"tokens and {len(mats)} NLI matrices (one per claim token).")
                    total = sum(self._token_ccp(alternatives[t], m) for t, m in zip(ids, mats))
                    vals.append(-math.exp(total))
            out.append(np.asarray(vals, dtype=np.float64))
        return out


class ClaimsFromSpans(StatCalculator):
    """assay's ``claim_spans`` (``[start, end)`` per claim) -> LM-Polygraph's ``claims`` (``aligned_token_ids``).

    Each claim is a mapping ``{"aligned_token_ids": [start, ..., end - 1]}``, which the claim
    estimators read as LM-Polygraph's ``Claim``; there is no claim text.
    """

    name, stats, dependencies = "polygraph_claims", ("claims",), ("claim_spans",)

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        out = []
        for spans in stats["claim_spans"]:
            out.append([{"aligned_token_ids": list(range(int(s), int(e)))} for s, e in spans])
        return {"claims": out}
