"""LM-Polygraph 0.7.0's information-based white-box estimators, on LM-Polygraph's statistics (issue 28).

Each class reads LM-Polygraph's statistic names with LM-Polygraph's meanings, takes its options
under LM-Polygraph's argument names, and returns what LM-Polygraph's class of the same name
returns on the same dictionary (tests/test_polygraph_info.py runs both). Notation, per example:
``T`` generated tokens, ``l_t = log p(y_t | y_<t, x)`` (``greedy_log_likelihoods``),
``m_t = log p(y_t | y_<t)`` without the prompt (``greedy_lm_log_likelihoods``), ``H_t`` the
step's entropy (``entropy``), ``z_t`` the step's log-probability vector over the vocabulary of
size ``V`` (``greedy_log_probs``, one ``(T, V)`` array).

Where LM-Polygraph's class needs a statistic that only a model produces (``attention_all``,
``forwardpass_attention_weights``, ``attention_weights_eliciting_prompt``, ``p_true``,
``greedy_lm_log_likelihoods``) the estimator here works on that statistic however it was made;
the ones that call the model themselves (``PTrueEmpirical``, ``Verbalized2S``) call
``stats["model"].generate_texts`` with LM-Polygraph's arguments, as its manager passes the model.
Deviations, each stated in the class: an undefined value (no tokens, no regex match) is NaN
with a warning, and an option LM-Polygraph would fail on later is rejected when it is given.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import Estimator, nan_with_warning

__all__ = [
    "CSL", "RAUQ", "AttentionScore", "BoostedProbSequence", "ConditionalPointwiseMutualInformation",
    "FisherRao", "LabelProb",
    "Linguistic1S", "MeanConditionalPointwiseMutualInformation", "MeanPointwiseMutualInformation",
    "PTrue", "PTrueEmpirical", "PTrueSampling", "PointwiseMutualInformation", "RenyiNeg", "SelfCertainty",
    "Verbalized1S", "Verbalized2S",
]


def _vec(v: Any) -> np.ndarray:
    return np.asarray(v, dtype=np.float64).reshape(-1)


def _mean(x: np.ndarray, who: str, index: int) -> float:
    if x.size == 0:
        return nan_with_warning(f"estimator {who!r}: example {index} has no generated tokens; NaN.", stacklevel=4)
    return float(np.mean(x))


def _need(stats: Mapping[str, Any], key: str, who: str, why: str) -> Any:
    if key not in stats:
        raise InvalidParameterError(f"estimator {who!r} needs {key!r} in the statistics ({why}); have: "
                                    f"{', '.join(sorted(map(str, stats))) or 'none'}.")
    return stats[key]


def _model_config(stats: Mapping[str, Any], who: str, option: str) -> Any:
    model = _need(stats, "model", who, f"give {option} or pass the model, whose config tells them")
    cfg = model.model.config
    return getattr(cfg, "text_config", cfg)


def _softmax(x: np.ndarray) -> np.ndarray:
    """Row softmax as scipy.special.softmax computes it (``exp(x - max) / sum``); numpy only at import."""
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------------------------------------------------
# pointwise mutual information
# ---------------------------------------------------------------------------------------------------------

def _flat(col: Any, lengths: np.ndarray | None = None) -> np.ndarray:
    """The examples' values end to end (each cut to ``lengths[i]`` when given)."""
    rows = [_vec(v) for v in col]
    if lengths is not None:
        rows = [r[:n] for r, n in zip(rows, lengths)]
    return np.concatenate(rows) if rows else np.zeros(0)


class _PMIBase(Estimator):
    conditional = False

    def __init__(self, tau: float = 0.0656, lambd: float = 3.599) -> None:
        self.tau, self.lambd = float(tau), float(lambd)
        super().__init__()

    def _scores(self, stats: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """All examples' ``s_t`` end to end and each example's length.

        ``s_t = l_t - c_t m_t`` with ``c_1 = 0`` and for ``t > 1`` ``c_t = 1`` (PMI) or
        ``lambd [H_t >= tau]`` (CPMI); one vectorised pass over every token of the batch.
        """
        lps = [_vec(v) for v in stats["greedy_log_likelihoods"]]
        n = np.array([len(v) for v in lps], dtype=np.int64)
        lp = np.concatenate(lps) if lps else np.zeros(0)
        lm = _flat(stats["greedy_lm_log_likelihoods"], n)
        if lm.size != lp.size:
            raise InvalidParameterError(f"estimator {self.name!r}: greedy_lm_log_likelihoods must have a value for "
                                        "every token of greedy_log_likelihoods (one per generated token).")
        starts = np.cumsum(n) - n
        take = np.ones(lp.size, dtype=bool)
        take[starts[n > 0]] = False
        lam = 1.0
        if self.conditional:
            take &= _flat(stats["entropy"], n) >= self.tau
            lam = self.lambd
        return lp - np.where(take, lam * lm, 0.0), n

    def _means(self, stats: Mapping[str, Any]) -> np.ndarray:
        s, n = self._scores(stats)
        out = np.empty(len(n))
        for i in np.flatnonzero(n == 0):
            out[i] = _mean(np.zeros(0), self.name, int(i))
        full = n > 0
        if full.any():
            out[full] = -np.add.reduceat(s, (np.cumsum(n) - n)[full]) / n[full]
        return out

    def _tokens(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        s, n = self._scores(stats)
        return [-part[:-1] for part in np.split(s, np.cumsum(n)[:-1])]


class MeanPointwiseMutualInformation(_PMIBase):
    r"""``-mean_t s_t`` with ``s_1 = l_1`` and ``s_t = l_t - m_t`` for ``t > 1``.

    LM-Polygraph's MeanPointwiseMutualInformation.

    Pointwise mutual information of each generated token and the prompt (Takayama & Arase 2019,
    "Relevant and Informative Response Generation using Pointwise Mutual Information").
    No tokens: NaN with a warning.
    """

    name, level, dependencies = ("mean_pointwise_mutual_information", "sequence",
                                 ("greedy_log_likelihoods", "greedy_lm_log_likelihoods"))

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return self._means(stats)


class PointwiseMutualInformation(_PMIBase):
    r"""Token level: ``-s_t`` for ``t = 1 .. T-1`` (LM-Polygraph's PointwiseMutualInformation, ``[:-1]``).

    ``s_t`` as in :class:`MeanPointwiseMutualInformation`. LM-Polygraph returns the tokens of all
    examples concatenated into one array; assay's token level gives one array per example.
    """

    name, level, dependencies = ("pointwise_mutual_information", "token",
                                 ("greedy_log_likelihoods", "greedy_lm_log_likelihoods"))

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        return self._tokens(stats)


class MeanConditionalPointwiseMutualInformation(_PMIBase):
    r"""``-mean_t s_t``, ``s_t = l_t - lambd m_t [t > 1, H_t >= tau]``.

    LM-Polygraph's MeanConditionalPointwiseMutualInformation.

    Conditional PMI of van der Poel, Cotterell & Meister 2022, "Mutual Information Alleviates
    Hallucinations in Abstractive Summarization" (EMNLP): the prompt-free term counts only at
    uncertain steps. ``tau=0.0656``, ``lambd=3.599`` (the paper's best). No tokens: NaN with a warning.
    """

    name, level = "mean_conditional_pointwise_mutual_information", "sequence"
    dependencies = ("greedy_log_likelihoods", "greedy_lm_log_likelihoods", "entropy")
    conditional = True

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return self._means(stats)


class ConditionalPointwiseMutualInformation(_PMIBase):
    r"""Token level: ``-s_t`` (CPMI) for ``t = 1 .. T-1`` (LM-Polygraph's ConditionalPointwiseMutualInformation).

    ``s_t`` as in :class:`MeanConditionalPointwiseMutualInformation`; one array per example
    (LM-Polygraph: all examples concatenated).
    """

    name, level = "conditional_pointwise_mutual_information", "token"
    dependencies = ("greedy_log_likelihoods", "greedy_lm_log_likelihoods", "entropy")
    conditional = True

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        return self._tokens(stats)


# ---------------------------------------------------------------------------------------------------------
# divergences of the step distribution from uniform
# ---------------------------------------------------------------------------------------------------------

class _StepDistribution(Estimator):
    level = "sequence"
    dependencies: tuple[str, ...] = ("greedy_log_probs",)

    def _steps(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        out = []
        for i, z in enumerate(stats["greedy_log_probs"]):
            z = np.asarray(z, dtype=np.float64)
            if z.ndim != 2:
                raise InvalidParameterError(f"estimator {self.name!r}: greedy_log_probs[{i}] must be a (T, V) array of "
                                            f"log-probabilities; got shape {z.shape}.")
            out.append(z)
        return out


class RenyiNeg(_StepDistribution):
    r"""``mean_t D_alpha(q_t || u)``: Rényi divergence of the tempered step distribution from uniform.

    LM-Polygraph's RenyiNeg.

    ``q_t = softmax(z_t / temperature)``, ``u`` uniform over ``V``. As LM-Polygraph computes it:
    ``(log sum_v q_v^alpha - (alpha - 1) log V) / (alpha - 1)`` for ``alpha != 1``, which is the
    Rényi divergence ``D_alpha(q_t || u)`` minus ``2 log V`` (the sign of the ``log V`` term is
    flipped; a constant shift for a fixed vocabulary, so rankings are the divergence's; kept for
    LM-Polygraph's values), and at ``alpha = 1`` the KL divergence ``sum_v q_v log q_v + log V``.
    Darrin et al. 2023, "Rainproof: An Umbrella
    to Shield Text Generators from Out-of-Distribution Data" (EMNLP). ``alpha=0.5``,
    ``temperature=2``. ``verbose`` is accepted as LM-Polygraph accepts it; neither uses it.
    At ``alpha = 1`` a zero-probability entry contributes 0 (LM-Polygraph: ``0 * log 0``, NaN).
    No tokens: NaN with a warning.
    """

    name = "renyi_neg"

    def __init__(self, verbose: bool = False, alpha: float = 0.5, temperature: float = 2) -> None:
        self.verbose, self.alpha, self.temperature = bool(verbose), float(alpha), float(temperature)
        if not math.isfinite(self.temperature) or self.temperature <= 0:
            raise InvalidParameterError(f"renyi_neg: 'temperature' must be > 0; got {temperature!r}.")
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for i, z in enumerate(self._steps(stats)):
            q = _softmax(z / self.temperature)
            v = q.shape[-1]
            if self.alpha == 1:
                with np.errstate(divide="ignore", invalid="ignore"):
                    per = np.where(q > 0, q * np.log(q), 0.0).sum(-1) + np.log(v)
            else:
                per = (np.log((q ** self.alpha).sum(-1)) - (self.alpha - 1) * np.log(v)) / (self.alpha - 1)
            out.append(_mean(per, self.name, i))
        return np.array(out)


class FisherRao(_StepDistribution):
    r"""``mean_t (2 / pi) arccos(sum_v sqrt(q_{t,v} / V))``.

    The Fisher-Rao distance of the tempered step distribution from uniform.

    LM-Polygraph's FisherRao (Darrin et al. 2023, "Rainproof"), ``q_t = softmax(z_t / temperature)``,
    ``temperature=2``; ``verbose`` accepted and unused, as there. The arccos argument is clipped
    to ``[-1, 1]``: rounding can push it past 1 for a near-uniform step, where LM-Polygraph gives NaN.
    No tokens: NaN with a warning.
    """

    name = "fisher_rao"

    def __init__(self, verbose: bool = False, temperature: float = 2) -> None:
        self.verbose, self.temperature = bool(verbose), float(temperature)
        if not math.isfinite(self.temperature) or self.temperature <= 0:
            raise InvalidParameterError(f"fisher_rao: 'temperature' must be > 0; got {temperature!r}.")
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for i, z in enumerate(self._steps(stats)):
            q = _softmax(z / self.temperature)
            bc = np.clip(np.sqrt(q).sum(-1) * np.sqrt(1.0 / q.shape[-1]), -1.0, 1.0)
            out.append(_mean(2.0 / np.pi * np.arccos(bc), self.name, i))
        return np.array(out)


class SelfCertainty(_StepDistribution):
    r"""``-mean_t (-mean_{v in F_t} z_{t,v} - log |F_t|)`` over the finite entries ``F_t``.

    LM-Polygraph's SelfCertainty.

    Per step, ``KL(uniform || p_t)`` over the vocabulary entries with a finite log-probability
    (``-inf`` and ``+inf`` left out, as LM-Polygraph does); the estimate is minus its mean.
    Kang et al. 2025, "Scalable Best-of-N Selection for Large Language Models via Self-Certainty".
    No tokens: NaN with a warning.
    """

    name = "self_certainty"

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for i, z in enumerate(self._steps(stats)):
            keep = ~np.isinf(z)
            n = keep.sum(-1)
            with np.errstate(divide="ignore", invalid="ignore"):
                per = -np.where(keep, z, 0.0).sum(-1) / n - np.log(n)
            out.append(-_mean(per, self.name, i))
        return np.array(out)


class BoostedProbSequence(_StepDistribution):
    r"""``-mean_t b_t``, the boosted probability of each generated token (LM-Polygraph's BoostedProbSequence).

    Dinh & Niehues 2025, "Don't Ignore the Tail: Decoupling top-K Probabilities for Efficient
    Language Model Uncertainty Estimation" (BoostedProb, EMNLP), with the defaults LM-Polygraph
    calls ``boostedprob.calculate_boostedprob`` with (``sum_dominant_mass``, ``difference_jump``,
    ``p_jump=0.3``, ``epsilon=0.005``, last cut point). Per step: sort the ``K = min(1024, V)``
    most probable tokens, ``s_1 >= s_2 >= ...``; the dominant tokens are the first ``c`` where
    ``c`` is the last ``i < K`` with ``s_i - s_{i+1} > 0.3 s_i`` and ``> 0.005`` (none if no such
    ``i``); ``b_t`` is the dominant tokens' total probability if the generated token ``y_t`` is
    dominant, else ``p(y_t)``. Written here in numpy (the package needs torch); reads
    ``greedy_tokens`` as LM-Polygraph's class does (it declares only ``greedy_log_probs``).
    No tokens: NaN with a warning.
    """

    name, dependencies = "boosted_prob_sequence", ("greedy_log_probs", "greedy_tokens")

    @staticmethod
    def boosted(z: np.ndarray, target: np.ndarray) -> np.ndarray:
        """``b_t`` of each step of one example: ``z`` ``(T, V)`` log-probabilities, ``target`` ``(T,)`` token ids."""
        p = np.exp(z)
        k = min(1024, p.shape[-1])
        order = np.argsort(-p, axis=-1, kind="stable")[:, :k]
        s = np.take_along_axis(p, order, axis=-1)
        diff = s[:, :-1] - s[:, 1:]
        jump = (diff > 0.3 * s[:, :-1]) & (diff > 0.005)
        has = jump.any(-1)
        cut = np.where(has, jump.shape[-1] - 1 - np.argmax(jump[:, ::-1], axis=-1), -1) if k > 1 else -np.ones(
            len(p), dtype=np.int64)
        dominant = np.arange(k)[None, :] <= cut[:, None]
        is_dominant = ((order == target[:, None]) & dominant).any(-1)
        mass = np.where(dominant, s, 0.0).sum(-1)
        return np.where(is_dominant, mass, p[np.arange(len(p)), target])

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for i, (z, toks) in enumerate(zip(self._steps(stats), stats["greedy_tokens"])):
            target = np.asarray(toks, dtype=np.int64).reshape(-1)
            if target.size != len(z):
                raise InvalidParameterError(f"estimator {self.name!r}: example {i} has {target.size} greedy_tokens "
                                            f"for {len(z)} rows of greedy_log_probs.")
            out.append(-_mean(self.boosted(z, target), self.name, i))
        return np.array(out)


# ---------------------------------------------------------------------------------------------------------
# semantic classes, attention
# ---------------------------------------------------------------------------------------------------------

def _class_ids(value: Any) -> np.ndarray | None:
    """``value`` as a non-empty 1-D array of non-negative integer class ids, else None."""
    if isinstance(value, (Mapping, str)):
        return None
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0:
        return None
    return arr.astype(np.int64)


class LabelProb(Estimator):
    r"""``1 - max_c |C_c| / K``: one minus the share of the ``K`` samples in the largest semantic class.

    LM-Polygraph's LabelProb.

    Reads LM-Polygraph's ``semantic_classes_entail`` (``{"class_to_sample": {i: [[sample ids], ...]},
    "sample_to_class": {i: {sample id: class}}}``, the NLI clustering of the samples), in the order
    of its ``class_to_sample`` keys, as LM-Polygraph does; or, as assay's statistics are one value
    per example, a list with one ``{"class_to_sample": [...], "sample_to_class": {...}}`` per example,
    or a list with one ``(K,)`` array of class ids per example (what assay-transformers'
    ``semantic_classes`` calculator gives in a model run).
    """

    name, level, dependencies = "label_prob", "sequence", ("semantic_classes_entail",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        classes = stats["semantic_classes_entail"]
        keys = {"class_to_sample", "sample_to_class"}
        if isinstance(classes, Mapping) and keys <= set(classes):  # LM-Polygraph's layout: one dict for the batch
            pairs = [(groups, classes["sample_to_class"][i]) for i, groups in classes["class_to_sample"].items()]
        elif not isinstance(classes, Mapping) and all(isinstance(c, Mapping) and keys <= set(c) for c in classes):
            pairs = [(c["class_to_sample"], c["sample_to_class"]) for c in classes]  # one dict per example
        elif not isinstance(classes, Mapping) and all(_class_ids(c) is not None for c in classes):
            pairs = []  # one (K,) array of class ids per example
            for c in classes:
                ids = _class_ids(c)
                assert ids is not None
                pairs.append(([np.flatnonzero(ids == k) for k in np.unique(ids)], dict(enumerate(ids))))
        else:
            raise InvalidParameterError("estimator 'label_prob': 'semantic_classes_entail' must be LM-Polygraph's dict "
                                        "with 'class_to_sample' and 'sample_to_class', a list of one such dict per "
                                        "example, or a list of one array of class ids per example.")
        return np.array([1.0 - max(len(s) for s in groups) / len(s2c) for groups, s2c in pairs])


class CSL(Estimator):
    r"""``-sum_t w_t l_t`` with ``w = a / sum a``, ``a`` the eliciting prompt's attention averaged over its first axis.

    LM-Polygraph's CSL, contextualized sequence likelihood (Lin, Trivedi & Sun 2024, "Contextualized
    Sequence Likelihood: Enhanced Confidence Scores for Natural Language Generation", EMNLP).
    Reads ``attention_weights_eliciting_prompt`` (per example, an ``(H, T)`` array: the attention
    each generated token gets from a prompt that asks about the answer's correctness).
    """

    name, level, dependencies = "csl", "sequence", ("greedy_log_likelihoods", "attention_weights_eliciting_prompt")

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for ll, att in zip(stats["greedy_log_likelihoods"], stats["attention_weights_eliciting_prompt"]):
            w = np.asarray(att, dtype=np.float64).mean(0)
            w = w / w.sum()
            out.append(-float(np.sum(_vec(ll) * w)))
        return np.array(out)


class RAUQ(Estimator):
    r"""``max_{layer} (1 - mean_t log c_t)``, a recurrent attention-weighted confidence (LM-Polygraph's RAUQ).

    Vazhentsev et al. 2025, "Uncertainty-Aware Attention Heads: Efficient Unsupervised Uncertainty
    Quantification for LLMs" (arXiv:2505.20045). For each layer ``L`` of the middle third
    (``n_layers // 3 .. ceil(2 n_layers / 3)``), the head ``h`` whose attention to the previous
    token is highest on average; ``c_1 = p_1``, ``c_t = alpha p_t + (1 - alpha) a_{L,h,t} c_{t-1}``
    with ``a_{L,h,t}`` the attention of token ``t`` to token ``t - 1`` (``attention_all``: per
    example ``(n_layers * n_heads, S, S)`` or any shape that reshapes to ``(n_layers, n_heads, S, S)``).
    ``p_t = exp(l_t)``, or with ``use_entropy`` ``p_t = max(H) - H_t + 1e-10``, ``max(H) = log V``.
    ``alpha`` defaults to 0.2 (0.8 with entropy; 0.5 / 0.9 for ``instruct`` models).
    ``n_layers`` / ``n_heads`` default to ``stats["model"].model.config``'s, as LM-Polygraph
    reads them. With ``use_entropy`` it also declares ``greedy_log_probs`` (it reads ``V`` there;
    LM-Polygraph reads it without declaring it). A middle layer past the model's last is an error
    (LM-Polygraph: an IndexError).
    """

    name, level = "rauq", "sequence"

    def __init__(self, alpha: float | None = None, n_layers: int | None = None, n_heads: int | None = None,
                 use_entropy: bool = False, instruct: bool = False) -> None:
        self.use_entropy, self.instruct = bool(use_entropy), bool(instruct)
        default = (0.9 if self.use_entropy else 0.5) if self.instruct else (0.8 if self.use_entropy else 0.2)
        self.alpha = float(default if alpha is None else alpha)
        self.n_layers, self.n_heads = n_layers, n_heads
        deps = ("attention_all", "greedy_log_likelihoods") + (("entropy", "greedy_log_probs") if use_entropy else ())
        super().__init__(dependencies=deps)

    @staticmethod
    def middle_layers(n_layers: int) -> list[int]:
        return list(range(n_layers // 3, int(np.ceil(n_layers / 3 * 2) + 1)))

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        n_layers = self.n_layers if self.n_layers is not None else _model_config(
            stats, self.name, "n_layers").num_hidden_layers
        n_heads = self.n_heads if self.n_heads is not None else _model_config(
            stats, self.name, "n_heads").num_attention_heads
        layers = self.middle_layers(n_layers)
        if layers[-1] >= n_layers:
            raise InvalidParameterError(f"estimator 'rauq': the middle layers {layers} of n_layers={n_layers} run past "
                                        "the last layer (LM-Polygraph's choice of layers needs n_layers >= 3).")
        if self.use_entropy:
            max_entropy = math.log(len(stats["greedy_log_probs"][0][0]))
        out = []
        for idx, (att, ll) in enumerate(zip(stats["attention_all"], stats["greedy_log_likelihoods"])):
            att = np.asarray(att, dtype=np.float64)
            att = att.reshape(n_layers, n_heads, att.shape[-2], att.shape[-1])
            prev = np.diagonal(att, offset=-1, axis1=2, axis2=3)
            if self.use_entropy:
                logp = np.log(max_entropy - _vec(stats["entropy"][idx]) + 1e-10)
            else:
                logp = _vec(ll)
            p = np.exp(logp)
            # every chosen layer at once: its head with the highest mean attention to the previous token
            heads = prev[layers].mean(-1).argmax(-1)
            a = prev[layers, heads]  # (layers, S - 1)
            conf = np.empty((len(layers), p.size))
            conf[:, 0] = p[0]
            for j in range(1, p.size):
                conf[:, j] = self.alpha * p[j] + (1 - self.alpha) * a[:, j - 1] * conf[:, j - 1]
            out.append(float(np.max(1.0 - np.log(conf).mean(-1))))
        return np.array(out)


def _unpad(el: np.ndarray) -> np.ndarray:
    """LM-Polygraph's unpadding of a NaN-padded ``(L, H, S, S)`` / ``(L, 1, H, S, S)`` attention array."""
    if not np.isnan(el).any():
        return el
    if el.ndim == 5:
        el = el[:, 0]
    if el.ndim != 4:
        return el
    n = int((~np.isnan(el)[0][0][0]).sum())
    return el[~np.isnan(el)].reshape(el.shape[0], el.shape[1], n, n)


class AttentionScore(Estimator):
    r"""``-(1 / H) sum_h sum_t log(A^{(layer,h)}_{t,t} + 1e-12)``.

    The attention of each token to itself; LM-Polygraph's AttentionScore.

    Sriramanan et al. 2024, "LLM-Check: Investigating Detection of Hallucinations in Large Language
    Models" (NeurIPS). Reads ``forwardpass_attention_weights`` (per example the attention of a
    forward pass over prompt and answer, ``(L, H, S, S)`` or ``(L, 1, H, S, S)``, NaN-padded as
    LM-Polygraph pads a batch) and, with ``gen_only``, ``greedy_tokens``: only the block of the
    generated tokens but the last (``[-T:-1, -T:-1]``). ``layer`` defaults to half the model's
    ``num_hidden_layers`` (``stats["model"].model.config``). An array of any other shape counts
    0, as in LM-Polygraph, with a warning.
    """

    name, level, dependencies = "attention_score", "sequence", ("forwardpass_attention_weights", "greedy_tokens")

    def __init__(self, layer: int | None = None, gen_only: bool = False) -> None:
        self.layer, self.gen_only = layer, bool(gen_only)
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        layer = self.layer if self.layer is not None else _model_config(
            stats, self.name, "layer").num_hidden_layers // 2
        out = []
        for k, raw in enumerate(stats["forwardpass_attention_weights"]):
            el = np.asarray(raw, dtype=np.float64)
            if el.ndim not in (4, 5):
                warnings.warn(f"attention_score: forwardpass_attention_weights[{k}] has shape {el.shape}, neither "
                              "(L, H, S, S) nor (L, 1, H, S, S); it counts 0.", stacklevel=2)
                out.append(0.0)
                continue
            el = _unpad(el)
            heads = el[layer] if el.ndim == 4 else el[layer, 0]
            total = 0.0
            n_gen = len(stats["greedy_tokens"][k])
            for attn in heads:
                if self.gen_only:
                    attn = attn[-n_gen:-1, -n_gen:-1]
                if attn.ndim == 2 and attn.shape[0] == attn.shape[1]:
                    total += float(np.sum(np.log(np.diag(attn) + 1e-12)))
                else:
                    warnings.warn(f"attention_score: example {k}'s attention block has shape {attn.shape}; it counts "
                                  "0 (LM-Polygraph skips it too).", stacklevel=2)
            out.append(total / heads.shape[0])
        return -np.array(out)


# ---------------------------------------------------------------------------------------------------------
# P(True) and verbalized confidence
# ---------------------------------------------------------------------------------------------------------

class PTrue(Estimator):
    r"""``-p_true``: minus the log-probability of "True" after the P(True) prompt (LM-Polygraph's PTrue).

    Kadavath et al. 2022, "Language Models (Mostly) Know What They Know" (arXiv:2207.05221).
    ``p_true`` is LM-Polygraph's statistic (per example, the log-probability the model gives
    the token "True" after "Question: {q} Possible answer: {a} Is the possible answer: (A) True
    (B) False The possible answer is:").
    """

    name, level, dependencies = "p_true", "sequence", ("p_true",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return -np.asarray(stats["p_true"], dtype=np.float64).reshape(-1)


class PTrueSampling(Estimator):
    r"""``-p_true_sampling``: P(True) with the sampled answers listed as brainstormed ideas.

    LM-Polygraph's PTrueSampling.

    Kadavath et al. 2022. ``p_true_sampling`` is LM-Polygraph's statistic of that name.
    """

    name, level, dependencies = "p_true_sampling", "sequence", ("p_true_sampling",)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return -np.asarray(stats["p_true_sampling"], dtype=np.float64).reshape(-1)


def _generate(stats: Mapping[str, Any], who: str, inputs: list[Any], **kwargs: Any) -> list[str]:
    model = _need(stats, "model", who, "it asks the model a follow-up question")
    return list(model.generate_texts(inputs, **kwargs))


class PTrueEmpirical(Estimator):
    r"""``1 - (1 / n) #{sampled one-token verdicts containing "True"}`` (LM-Polygraph's PTrueEmpirical).

    For each prompt ``q`` and answer ``a``, the model samples ``num_samples`` one-token replies to
    "Question:\n\n{q}\n\nProposed Answer: {a}\n\nIs the proposed answer:\n\tTrue or\n\tFalse?\nThe
    proposed answer is: " (``stats["model"].generate_texts(..., min_new_tokens=1, max_new_tokens=1,
    num_return_sequences=num_samples, do_sample=True)``, LM-Polygraph's call). Kadavath et al. 2022.
    """

    name, level, dependencies = "p_true_empirical", "sequence", ("input_texts", "greedy_texts")

    def __init__(self, num_samples: int = 10) -> None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples < 1:
            raise InvalidParameterError("p_true_empirical: 'num_samples' must be an integer >= 1; "
                                        f"got {num_samples!r}.")
        self.num_samples = num_samples
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for prompt, guess in zip(stats["input_texts"], stats["greedy_texts"]):
            text = (f"Question:\n\n{prompt}\n\nProposed Answer: {guess}\n\nIs the proposed answer:\n\tTrue or\n\t"
                    "False?\nThe proposed answer is: ")
            replies = _generate(stats, self.name, [text], min_new_tokens=1, max_new_tokens=1,
                                num_return_sequences=self.num_samples, do_sample=True)
            out.append(1.0 - float(np.mean([1 if "True" in r else 0 for r in replies])))
        return np.array(out)


def _regex(confidence_regex: str, who: str) -> re.Pattern[str]:
    try:
        pattern = re.compile(confidence_regex)
    except re.error as exc:
        raise InvalidParameterError(f"{who}: 'confidence_regex' {confidence_regex!r} is not a regular expression: "
                                    f"{exc}.") from None
    if pattern.groups < 1:
        raise InvalidParameterError(f"{who}: 'confidence_regex' {confidence_regex!r} must capture the confidence in "
                                    "a group, e.g. r'Confidence: ([0-9.]+)' (LM-Polygraph reads group 1; its default, "
                                    "'', has none and fails on every answer).")
    return pattern


def _confidences(pattern: re.Pattern[str], texts: list[str], who: str) -> np.ndarray:
    out = []
    for i, text in enumerate(texts):
        match = pattern.search(text)
        if match is None:
            out.append(nan_with_warning(f"{who}: example {i}: no confidence matches {pattern.pattern!r}; NaN.",
                                        stacklevel=4))
            continue
        try:
            out.append(1.0 - float(match.groups()[0]))
        except (TypeError, ValueError):
            raise InvalidParameterError(f"{who}: example {i}: the confidence {match.groups()[0]!r} that "
                                        f"{pattern.pattern!r} captured is not a number.") from None
    return np.array(out, dtype=np.float64)


class Verbalized1S(Estimator):
    r"""``1 - c``, the confidence ``c`` that ``confidence_regex`` captures in the answer (LM-Polygraph's Verbalized1S).

    Tian et al. 2023, "Just Ask for Calibration" (EMNLP): the model is prompted to state its
    confidence with its answer. No match: NaN with a warning (LM-Polygraph: NaN). A regex without
    a group is rejected when given. ``name_postfix`` is LM-Polygraph's display suffix, kept as
    ``postfix``; it does not change the values.
    """

    name, level, dependencies = "verbalized_1s", "sequence", ("greedy_texts",)

    def __init__(self, confidence_regex: str = "", name_postfix: str = "") -> None:
        self.confidence_regex, self.postfix = confidence_regex, str(name_postfix)
        self._pattern = _regex(confidence_regex, self.name)
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return _confidences(self._pattern, list(stats["greedy_texts"]), self.name)


class Verbalized2S(Estimator):
    r"""``1 - c``, the confidence the model states when asked ``confidence_prompt`` after its answer.

    LM-Polygraph's Verbalized2S.

    Tian et al. 2023. Per example the chat [user: prompt, assistant: answer, user:
    confidence_prompt] goes to ``stats["model"].generate_texts(chats, min_new_tokens=2,
    max_new_tokens=max_new_tokens, num_return_sequences=1)`` (LM-Polygraph's call) and
    ``confidence_regex`` reads the reply. No match: NaN with a warning.
    """

    name, level, dependencies = "verbalized_2s", "sequence", ("input_texts", "greedy_texts")

    def __init__(self, confidence_prompt: str, confidence_regex: str = "", max_new_tokens: int = 10,
                 name_postfix: str = "") -> None:
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 2:
            raise InvalidParameterError(f"verbalized_2s: 'max_new_tokens' must be an integer >= 2 (the call asks for "
                                        f"at least 2 new tokens); got {max_new_tokens!r}.")
        self.confidence_prompt, self.confidence_regex = str(confidence_prompt), confidence_regex
        self.max_new_tokens, self.postfix = max_new_tokens, str(name_postfix)
        self._pattern = _regex(confidence_regex, self.name)
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        chats = [[{"role": "user", "content": p}, {"role": "assistant", "content": g},
                  {"role": "user", "content": self.confidence_prompt}]
                 for p, g in zip(stats["input_texts"], stats["greedy_texts"])]
        replies = _generate(stats, self.name, chats, min_new_tokens=2, max_new_tokens=self.max_new_tokens,
                            num_return_sequences=1)
        return _confidences(self._pattern, replies, self.name)


class Linguistic1S(Estimator):
    r"""``1 - c(e)`` for the first expression ``e`` of ``expressions`` found in the answer.

    LM-Polygraph's Linguistic1S.

    Tian et al. 2023: the model states its confidence in words ("Highly Likely", "Probable", ...);
    ``expressions`` maps each to a number, tried in the mapping's order, substring match as in
    LM-Polygraph. No expression found: NaN with a warning.
    """

    name, level, dependencies = "linguistic_1s", "sequence", ("greedy_texts",)

    def __init__(self, expressions: Mapping[str, float], name_postfix: str = "") -> None:
        if not isinstance(expressions, Mapping) or not expressions:
            raise InvalidParameterError("linguistic_1s: 'expressions' must be a non-empty mapping of expression -> "
                                        f"confidence; got {expressions!r}.")
        self.expressions = {str(k): float(v) for k, v in expressions.items()}
        self.postfix = str(name_postfix)
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for i, answer in enumerate(stats["greedy_texts"]):
            found = next((c for e, c in self.expressions.items() if e in answer), None)
            out.append(1.0 - found if found is not None else nan_with_warning(
                f"linguistic_1s: example {i}: none of the expressions appears in the answer; NaN.", stacklevel=3))
        return np.array(out, dtype=np.float64)
