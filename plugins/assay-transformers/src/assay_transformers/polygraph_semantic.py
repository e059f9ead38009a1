r"""LM-Polygraph 0.7.0's NLI-based and sample-based estimators, on LM-Polygraph's statistics.

Each class computes what the LM-Polygraph class of the same name computes, from the
statistics dictionary LM-Polygraph's manager passes (its statistic names and meanings, its
constructor arguments), so that ``ours(stats) == theirs(stats)`` to floating-point
rounding (the tests compare both, live). The maths is written here with numpy / scipy
(vectorised, NaN with a warning where LM-Polygraph would divide by zero or crash on an
empty example); nothing of LM-Polygraph is imported.

Statistics (per example ``i``; ``K`` sampled answers):

``semantic_matrix_entail`` / ``semantic_matrix_contra``
    ``(K, K)``: the NLI model's entailment / contradiction probability of the pair
    (premise = answer ``a``, hypothesis = answer ``b``) at ``[a, b]``.
    ``semantic_matrix_entail_logits`` / ``semantic_matrix_contra_logits``: the logits.
``semantic_classes_entail``
    The classes of the samples (answers entailing each other both ways, LM-Polygraph's
    greedy assignment). Either LM-Polygraph's layout (one mapping
    ``{"sample_to_class": {i: {j: c}}, "class_to_sample": {i: [[j, ...], ...]}}`` for the
    batch) or assay's column layout (one ``(K,)`` integer array of class ids per example,
    what :class:`assay_transformers.nli.SemanticClassesCalculator` produces).
``sample_log_probs``
    A sample's log-probability: LM-Polygraph stores the per-sample sum; assay's model
    backend stores each sample's token log-probabilities, which are summed here (both
    layouts give the same value).
``sample_log_likelihoods`` (SAR)
    Per sample, its token log-probabilities (LM-Polygraph's meaning). assay-uncertainty's
    ``sample_log_likelihoods`` calculator stores per-sample *sums* under that name; SAR
    then reads the token log-probabilities from ``sample_log_probs`` (assay's layout), and
    is an error naming both when neither holds them.
``sample_sentence_similarity``, ``token_similarity``, ``sample_token_similarity``,
``greedy_sentence_similarity``
    Cross-encoder scores (:class:`assay_transformers.nli.CrossEncoderSimilarityCalculator`).

References: LM-Polygraph ``estimators/{semantic_entropy, num_sem_sets, deg_mat,
eccentricity, eig_val_laplacian, kernel_language_entropy, luq, sar, token_sar,
sentence_sar, claim_conditioned_probability, eigenscore, semantic_density, cocoa}.py``
(Fadeeva et al. 2023; Vashurin et al. 2025).
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import Estimator
from assay.validation import check_bool, check_choice, check_number
from assay_uncertainty.estimators_claim import combine_nli

__all__ = [
    "SAR", "ClaimConditionedProbability", "CocoaMSP", "CocoaMTE", "CocoaPPL", "DegMat", "Eccentricity",
    "EigValLaplacian", "EigenScore", "KernelLanguageEntropy", "LUQ", "NumSemSets", "SemanticDensity",
    "SemanticEntropy", "SentenceSAR", "TokenSAR", "jaccard_matrix",
]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- statistics access
def _arr(stats: Mapping[str, Any], key: str, i: int) -> np.ndarray:
    return np.asarray(stats[key][i], dtype=np.float64)


def _stacked(stats: Mapping[str, Any], key: str) -> np.ndarray | None:
    """``stats[key]`` as one float array ``(B, ...)`` when every example's value has the same shape, else None."""
    col = stats[key]
    if isinstance(col, np.ndarray) and col.dtype != object:
        return col.astype(np.float64, copy=False)
    try:
        out = np.asarray(col, dtype=np.float64)
    except (TypeError, ValueError):  # ragged: one shape per example
        return None
    return out if out.ndim >= 2 and len(out) == len(col) else None


def _sequence_log_prob(value: Any) -> float:
    """A sample's log-probability from LM-Polygraph's per-sample sum or assay's token log-probabilities."""
    v = np.asarray(value, dtype=np.float64)
    return float(v) if v.ndim == 0 else float(v.sum())


def _sample_log_probs(stats: Mapping[str, Any], i: int) -> np.ndarray:
    return np.array([_sequence_log_prob(v) for v in stats["sample_log_probs"][i]], dtype=np.float64)


def _classes(stats: Mapping[str, Any], i: int, k: int, owner: str) -> tuple[list[list[int]], list[int]]:
    """``(class_to_sample, sample_to_class)`` of example ``i`` from either layout (module docstring)."""
    sc = stats["semantic_classes_entail"]
    if isinstance(sc, Mapping) and "sample_to_class" in sc:
        s2c_i = sc["sample_to_class"][i]
        s2c = [int(s2c_i[j]) for j in range(k)]
        return [list(map(int, c)) for c in sc["class_to_sample"][i]], s2c
    s2c = [int(c) for c in np.asarray(sc[i]).reshape(-1)]
    if len(s2c) != k:
        raise InvalidParameterError(f"{owner}: semantic_classes_entail[{i}] assigns {len(s2c)} samples a class; "
                                    f"example {i} has {k} sampled answers.")
    c2s: list[list[int]] = [[] for _ in range(max(s2c) + 1 if s2c else 0)]
    for j, c in enumerate(s2c):
        c2s[c].append(j)
    return c2s, s2c


def _nan(owner: str, i: int, why: str) -> float:
    warnings.warn(f"{owner}: example {i} {why}; its value is NaN.", RuntimeWarning, stacklevel=3)
    return math.nan


# --------------------------------------------------------------------------- graph kernels
def jaccard_matrix(answers: Sequence[str]) -> np.ndarray:
    """LM-Polygraph's Jaccard similarity of lower-cased whitespace word sets; diagonal 1, empty union 0."""
    sets = [set(a.lower().split()) for a in answers]
    k = len(sets)
    w = np.eye(k)
    for a in range(k):
        for b in range(a + 1, k):
            union = len(sets[a] | sets[b])
            w[a, b] = w[b, a] = len(sets[a] & sets[b]) / union if union else 0.0
    return w


def _laplacian(w: np.ndarray) -> np.ndarray | None:
    """``I - D^{-1/2} W D^{-1/2}``; None when a degree is not positive (LM-Polygraph's inverse fails)."""
    d = w.sum(axis=1)
    if not np.all(d > 0):
        return None
    inv = 1.0 / np.sqrt(d)
    return np.eye(len(w)) - inv[:, None] * w * inv[None, :]


class _Graph(Estimator):
    """``similarity_score`` / ``affinity`` as LM-Polygraph's DegMat, Eccentricity and EigValLaplacian."""

    level = "sequence"

    def __init__(self, similarity_score: str = "NLI_score", affinity: str = "entail", verbose: bool = False) -> None:
        owner = f"estimator {self.name!r}"
        self.similarity_score = check_choice(similarity_score, "similarity_score", ("NLI_score", "Jaccard_score"),
                                             owner=owner)
        self.affinity = check_choice(affinity, "affinity", ("entail", "contra"), owner=owner)
        self.verbose = check_bool(verbose, "verbose", owner=owner)
        if self.similarity_score == "NLI_score":
            deps: tuple[str, ...] = (f"semantic_matrix_{self.affinity}", "sample_texts")
        else:
            deps = ("sample_texts",)
        super().__init__(dependencies=deps)

    def weights(self, stats: Mapping[str, Any], i: int) -> np.ndarray:
        """The symmetric weight matrix of example ``i``."""
        if self.similarity_score == "Jaccard_score":
            return jaccard_matrix(list(stats["sample_texts"][i]))
        w = _arr(stats, f"semantic_matrix_{self.affinity}", i)
        if self.affinity == "contra":
            w = 1.0 - w
        return (w + w.T) / 2.0

    def _value(self, w: np.ndarray, i: int) -> float:
        raise NotImplementedError

    def _spectral(self, lam: np.ndarray, vec: np.ndarray) -> np.ndarray | None:
        """The values of a batch from its Laplacians' eigenvalues ``(B, K)`` and eigenvectors; None: per example."""
        return None

    def _batched(self, stats: Mapping[str, Any]) -> np.ndarray | None:
        """All examples at once (same ``K``, NLI similarity, positive degrees), by batched ``numpy.linalg.eigh``."""
        m = _stacked(stats, f"semantic_matrix_{self.affinity}") if self.similarity_score == "NLI_score" else None
        if self.verbose or m is None or m.ndim != 3 or m.shape[1] == 0:
            return None
        w = 1.0 - m if self.affinity == "contra" else m
        w = (w + w.transpose(0, 2, 1)) / 2.0
        d = w.sum(axis=2)
        if not np.all(d > 0):
            return None
        inv = 1.0 / np.sqrt(d)
        lam, vec = np.linalg.eigh(np.eye(w.shape[1]) - inv[:, :, None] * w * inv[:, None, :])
        return self._spectral(lam, vec)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        batched = self._batched(stats)
        if batched is not None:
            return batched
        out = []
        for i, answers in enumerate(stats["sample_texts"]):
            if self.verbose:
                log.debug("generated answers: %s", answers)
            out.append(self._value(self.weights(stats, i), i) if len(answers) else math.nan)
        return np.array(out, dtype=np.float64)


class DegMat(_Graph):
    r"""LM-Polygraph's ``DegMat`` (Lin et al. 2023): ``trace(K I - D) / K^2 = 1 - sum_ab W_ab / K^2``.

    ``W`` is ``(E + E^T) / 2`` of the NLI entailment matrix (``affinity="entail"``), of
    ``1 - C`` (``"contra"``), or the Jaccard matrix (``similarity_score="Jaccard_score"``).
    """

    name = "deg_mat"

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        m = _stacked(stats, f"semantic_matrix_{self.affinity}") if self.similarity_score == "NLI_score" else None
        if self.verbose or m is None or m.ndim != 3 or m.shape[1] == 0:
            return super().__call__(stats)
        w = 1.0 - m if self.affinity == "contra" else m  # symmetrising leaves the sum unchanged
        return 1.0 - w.sum(axis=(1, 2)) / m.shape[1] ** 2

    def _value(self, w: np.ndarray, i: int) -> float:
        k = len(w)
        return float(1.0 - w.sum() / (k * k))


class EigValLaplacian(_Graph):
    r"""LM-Polygraph's ``EigValLaplacian``: ``sum_k max(0, 1 - lambda_k)`` of ``L = I - D^{-1/2} W D^{-1/2}``."""

    name = "semantic_eigval_laplacian"

    def _spectral(self, lam: np.ndarray, vec: np.ndarray) -> np.ndarray:
        return np.clip(1.0 - lam, 0.0, None).sum(axis=1)

    def _value(self, w: np.ndarray, i: int) -> float:
        lap = _laplacian(w)
        if lap is None:
            return _nan(f"estimator {self.name!r}", i, "has an answer of degree 0 in the similarity graph")
        import scipy.linalg  # deferred: scipy loads when an estimator runs, not when the plugin registers

        return float(np.clip(1.0 - scipy.linalg.eigh(lap, eigvals_only=True), 0.0, None).sum())


class Eccentricity(_Graph):
    r"""LM-Polygraph's ``Eccentricity``: ``|| U - 1 mean(U) ||_F`` over the eigenvectors of ``L`` below ``thres``."""

    name = "eccentricity"

    def __init__(self, similarity_score: str = "NLI_score", affinity: str = "entail", verbose: bool = False,
                 thres: float = 0.9) -> None:
        self.thres = check_number(thres, "thres", owner=f"estimator {self.name!r}")
        super().__init__(similarity_score=similarity_score, affinity=affinity, verbose=verbose)

    def _spectral(self, lam: np.ndarray, vec: np.ndarray) -> np.ndarray:
        centred = vec - vec.mean(axis=1, keepdims=True)
        return np.sqrt(np.sum(centred ** 2 * (lam < self.thres)[:, None, :], axis=(1, 2)))

    def _value(self, w: np.ndarray, i: int) -> float:
        lap = _laplacian(w)
        if lap is None:
            return _nan(f"estimator {self.name!r}", i, "has an answer of degree 0 in the similarity graph")
        import scipy.linalg  # deferred (see EigValLaplacian)

        lam, vec = scipy.linalg.eigh(lap)
        u = vec[:, lam < self.thres]
        return float(np.sqrt(np.sum((u - u.mean(axis=0, keepdims=True)) ** 2)))


class NumSemSets(Estimator):
    r"""LM-Polygraph's ``NumSemSets``: connected components of "entailment beats contradiction both ways".

    Answers ``a, b`` are linked when ``E_ab > C_ab`` and ``E_ba > C_ba``; the value is the
    number of connected components (scipy's ``connected_components``).
    """

    name, level = "num_sem_sets", "sequence"
    dependencies = ("semantic_matrix_entail", "semantic_matrix_contra", "sample_texts")

    def __init__(self, verbose: bool = False) -> None:
        self.verbose = check_bool(verbose, "verbose", owner=f"estimator {self.name!r}")
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        e, c = _stacked(stats, "semantic_matrix_entail"), _stacked(stats, "semantic_matrix_contra")
        if not self.verbose and e is not None and c is not None and e.ndim == 3 and e.shape == c.shape \
                and e.shape[1] > 0:
            return self._batched(e > c)
        from scipy.sparse import csr_matrix  # deferred (see EigValLaplacian)
        from scipy.sparse.csgraph import connected_components

        out = []
        for i, answers in enumerate(stats["sample_texts"]):
            if self.verbose:
                log.debug("generated answers: %s", answers)
            link = _arr(stats, "semantic_matrix_entail", i) > _arr(stats, "semantic_matrix_contra", i)
            if link.size == 0:
                out.append(math.nan)
                continue
            n, _ = connected_components(csr_matrix((link & link.T).astype(np.int8)), directed=False)
            out.append(float(n))
        return np.array(out, dtype=np.float64)

    @staticmethod
    def _batched(link: np.ndarray) -> np.ndarray:
        """Components of a batch of same-size graphs: reachability by repeated squaring, ``sum_a 1 / |comp(a)|``."""
        k = link.shape[1]
        reach = (link & link.transpose(0, 2, 1)) | np.eye(k, dtype=bool)
        steps = 1
        while steps < k:
            reach = np.matmul(reach.astype(np.float32), reach.astype(np.float32)) > 0
            steps *= 2
        return np.rint((1.0 / reach.sum(axis=2)).sum(axis=1))


class SemanticEntropy(Estimator):
    r"""LM-Polygraph's ``SemanticEntropy`` (Kuhn et al. 2023) over the NLI classes ``semantic_classes_entail``.

    Class log-probability ``log P(c)``: ``class_probability_estimation="sum"`` the
    log-sum-exp of its members' ``sample_log_probs`` (with ``use_unique_responses`` the
    first member of each distinct text only); ``"frequency"``: ``log(|c| / K)``. Entropy
    ``entropy_estimation="mean"``: ``-1/K sum_j log P(C(j))``; ``"direct"`` (SDLG):
    ``-sum_j log P(C(j)) P(C(j))`` (over the samples ``j``, as LM-Polygraph sums).
    """

    name, level = "semantic_entropy", "sequence"

    def __init__(self, verbose: bool = False, class_probability_estimation: str = "sum",
                 entropy_estimation: str = "mean", use_unique_responses: bool = False) -> None:
        owner = f"estimator {self.name!r}"
        self.class_probability_estimation = check_choice(class_probability_estimation, "class_probability_estimation",
                                                         ("sum", "frequency"), owner=owner)
        self.entropy_estimation = check_choice(entropy_estimation, "entropy_estimation", ("mean", "direct"),
                                               owner=owner)
        self.use_unique_responses = check_bool(use_unique_responses, "use_unique_responses", owner=owner)
        self.verbose = check_bool(verbose, "verbose", owner=owner)
        if self.use_unique_responses and self.class_probability_estimation != "sum":
            raise InvalidParameterError(f"{owner}: use_unique_responses applies to class_probability_estimation='sum' "
                                        f"only; got {self.class_probability_estimation!r}.")
        deps = ("sample_texts", "semantic_classes_entail")
        super().__init__(dependencies=(("sample_log_probs",) + deps) if class_probability_estimation == "sum"
                         else deps)

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        owner = f"estimator {self.name!r}"
        out = []
        for i, hyps in enumerate(stats["sample_texts"]):
            k = len(hyps)
            if k == 0:
                out.append(math.nan)
                continue
            c2s, s2c = _classes(stats, i, k, owner)
            if self.class_probability_estimation == "sum":
                lp = _sample_log_probs(stats, i)
                members = c2s
                if self.use_unique_responses:
                    texts = np.asarray(list(hyps), dtype=object)
                    members = [[c[j] for j in sorted(np.unique(texts[c].astype(str), return_index=True)[1])]
                               for c in c2s]
                class_lp = np.array([np.logaddexp.reduce(lp[c]) for c in members])
            else:
                class_lp = np.log(np.array([len(c) for c in c2s], dtype=np.float64) / k)
            per_sample = class_lp[np.asarray(s2c, dtype=np.intp)]
            if self.entropy_estimation == "mean":
                out.append(float(-per_sample.mean()))
            else:
                out.append(float(-np.sum(per_sample * np.exp(per_sample))))
        return np.array(out, dtype=np.float64)


# --------------------------------------------------------------------------- kernel language entropy, LUQ
class KernelLanguageEntropy(Estimator):
    r"""LM-Polygraph's ``KernelLanguageEntropy`` (Nikitin et al. 2024): von Neumann entropy of a heat kernel.

    ``W = E' + (2 - E' - C') / 2`` with ``E' = E + E^T``, ``C' = C + C^T``; ``L = diag(W 1) - W``;
    ``K = expm(-t L)``; with ``normalize`` ``K <- K / (sqrt(diag K) sqrt(diag K)^T + ...) / n``
    (LM-Polygraph's ``1e-12`` guard); ``VNE = -sum_{|e| > 1e-8} e log e`` over the
    eigenvalues of ``K + jitter I``; with ``scale`` divided by ``log n``.
    """

    name, level = "kernel_language_entropy", "sequence"
    dependencies = ("semantic_matrix_entail", "semantic_matrix_contra")

    def __init__(self, t: float = 0.3, normalize: bool = True, scale: bool = True, jitter: float = 0) -> None:
        owner = f"estimator {self.name!r}"
        self.t = check_number(t, "t", owner=owner)
        self.normalize = check_bool(normalize, "normalize", owner=owner)
        self.scale = check_bool(scale, "scale", owner=owner)
        self.jitter = check_number(jitter, "jitter", owner=owner)
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for i in range(len(stats["semantic_matrix_entail"])):
            e, c = _arr(stats, "semantic_matrix_entail", i), _arr(stats, "semantic_matrix_contra", i)
            n = len(e)
            if n == 0:
                out.append(math.nan)
                continue
            e, c = e + e.T, c + c.T
            w = e + 0.5 * (2.0 - e - c)
            # expm(-t L) of the symmetric Laplacian by its eigendecomposition (what scipy's expm computes, by Pade)
            lam, vec = np.linalg.eigh(np.diag(w.sum(axis=0)) - w)
            kern = (vec * np.exp(-self.t * lam)) @ vec.T
            if self.normalize:
                d = np.sqrt(np.diag(kern)) + 1e-12
                kern = kern / np.outer(d, d) / n
            eig = np.linalg.eigvalsh((kern + kern.T) / 2.0 + self.jitter * np.eye(n))
            eig = eig[np.abs(eig) > 1e-8]
            with np.errstate(invalid="ignore"):
                h = float(-np.sum(eig * np.log(eig)))
            if self.scale:
                if n == 1:
                    h = _nan(f"estimator {self.name!r}", i, "has one sample (scale divides by log 1 = 0)")
                else:
                    h /= math.log(n)
            out.append(h)
        return np.array(out, dtype=np.float64)


class LUQ(Estimator):
    r"""LM-Polygraph's ``LUQ`` (Zhang et al. 2024), the basic version without sentence splitting.

    ``s_ab = exp(e_ab) / (exp(e_ab) + exp(c_ab))`` from the entailment / contradiction
    logits (computed as ``sigmoid(e_ab - c_ab)``, the same value without overflow);
    ``LUQ = 1 - mean_a mean_{b != a} s_ab``. One sample gives NaN.
    """

    name, level = "luq", "sequence"
    dependencies = ("semantic_matrix_entail_logits", "semantic_matrix_contra_logits")

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        from scipy.special import expit  # deferred (see EigValLaplacian)

        e, c = _stacked(stats, "semantic_matrix_entail_logits"), _stacked(stats, "semantic_matrix_contra_logits")
        if e is not None and c is not None and e.ndim == 3 and e.shape == c.shape and e.shape[1] >= 2:
            s = expit(e - c)
            k = s.shape[1]
            return 1.0 - ((s.sum(axis=2) - np.diagonal(s, axis1=1, axis2=2)) / (k - 1)).mean(axis=1)
        out = []
        for i in range(len(stats["semantic_matrix_entail_logits"])):
            s = expit(_arr(stats, "semantic_matrix_entail_logits", i) - _arr(stats, "semantic_matrix_contra_logits", i))
            k = len(s)
            if k < 2:
                out.append(math.nan)
                continue
            out.append(float(1.0 - np.mean((s.sum(axis=1) - np.diag(s)) / (k - 1))))
        return np.array(out, dtype=np.float64)


# --------------------------------------------------------------------------- SAR family
_SAR_T = 0.001  # LM-Polygraph's fixed temperature of the sentence relevance (self.t, not an argument)


def _token_sar(log_likelihoods: Any, token_similarity: Any) -> float:
    """``sum_t -log p_t R_t / sum R``, ``R_t = 1 - similarity without token t`` (token relevance)."""
    r = 1.0 - np.asarray(token_similarity, dtype=np.float64)
    return float(np.sum(-np.asarray(log_likelihoods, dtype=np.float64) * (r / r.sum())))


def _sentence_sar(p: np.ndarray, sim: np.ndarray) -> float:
    """``mean_a -log(sum_{b != a} p_b S_ab / t + p_a)``."""
    k = len(p)
    relevance = (p[None, :] * sim * (1.0 - np.eye(k))).sum(axis=-1) / _SAR_T
    return float(np.mean(-np.log(relevance + p)))


def _sentence_sar_batch(p: np.ndarray, sim: np.ndarray) -> np.ndarray:
    """:func:`_sentence_sar` of a batch: ``p`` ``(B, K)``, ``sim`` ``(B, K, K)``."""
    k = p.shape[1]
    relevance = (p[:, None, :] * sim * (1.0 - np.eye(k))).sum(axis=-1) / _SAR_T
    return np.mean(-np.log(relevance + p), axis=1)


class TokenSAR(Estimator):
    r"""LM-Polygraph's ``TokenSAR`` (Duan et al. 2024): relevance-weighted ``-log p`` of the greedy tokens."""

    name, level = "token_sar", "sequence"
    dependencies = ("token_similarity", "greedy_log_likelihoods")

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return np.array([_token_sar(ll, ts) for ll, ts in zip(stats["greedy_log_likelihoods"],
                                                               stats["token_similarity"])], dtype=np.float64)


class SentenceSAR(Estimator):
    r"""LM-Polygraph's ``SentenceSAR``: ``mean_a -log(sum_{b != a} P(s_b) S_ab / 0.001 + P(s_a))``."""

    name, level = "sentence_sar", "sequence"
    dependencies = ("sample_sentence_similarity", "sample_log_probs")

    def __init__(self, verbose: bool = False) -> None:
        self.verbose = check_bool(verbose, "verbose", owner=f"estimator {self.name!r}")
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        lp, sim = _stacked(stats, "sample_log_probs"), _stacked(stats, "sample_sentence_similarity")
        if lp is not None and sim is not None and lp.ndim == 2 and sim.shape == lp.shape + lp.shape[1:] \
                and lp.shape[1] > 0:
            return _sentence_sar_batch(np.exp(lp), sim)
        out = []
        for i in range(len(stats["sample_log_probs"])):
            p = np.exp(_sample_log_probs(stats, i))
            out.append(_sentence_sar(p, _arr(stats, "sample_sentence_similarity", i)) if p.size else math.nan)
        return np.array(out, dtype=np.float64)


class SAR(Estimator):
    r"""LM-Polygraph's ``SAR``: SentenceSAR with each sample's probability ``exp(-TokenSAR(sample))``.

    Reads each sample's token log-probabilities from ``sample_log_likelihoods``
    (LM-Polygraph's layout), or from ``sample_log_probs`` where ``sample_log_likelihoods``
    holds per-sample sums (assay's layout; module docstring).
    """

    name, level = "sar", "sequence"
    dependencies = ("sample_sentence_similarity", "sample_log_likelihoods", "sample_token_similarity")

    def __init__(self, verbose: bool = False) -> None:
        self.verbose = check_bool(verbose, "verbose", owner=f"estimator {self.name!r}")
        super().__init__()

    def _token_log_likelihoods(self, stats: Mapping[str, Any], i: int) -> list[Any]:
        samples = list(stats["sample_log_likelihoods"][i])
        if all(np.ndim(s) == 1 for s in samples):
            return samples
        alt = stats.get("sample_log_probs")
        if alt is not None and all(np.ndim(s) == 1 for s in alt[i]):
            return list(alt[i])
        raise InvalidParameterError(
            f"estimator {self.name!r}: example {i} needs each sample's token log-probabilities; "
            "'sample_log_likelihoods' holds one number per sample there and 'sample_log_probs' does not hold them "
            "either.")

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for i, token_sims in enumerate(stats["sample_token_similarity"]):
            lls = self._token_log_likelihoods(stats, i)
            if not lls:
                out.append(math.nan)
                continue
            p = np.exp(-np.array([_token_sar(ll, ts) for ll, ts in zip(lls, token_sims)]))
            out.append(_sentence_sar(p, _arr(stats, "sample_sentence_similarity", i)))
        return np.array(out, dtype=np.float64)


# --------------------------------------------------------------------------- CCP
class ClaimConditionedProbability(Estimator):
    r"""LM-Polygraph's ``ClaimConditionedProbability`` (Fadeeva et al. 2024), sequence level (CCP).

    Per greedy token: the alternatives that entail the greedy word (the greedy one itself
    included) against those that entail or contradict it, ``log sum_entail p - log
    sum_{entail, contra} p``; the value is ``-exp(sum over tokens)``.
    """

    name, level = "claim_conditioned_probability", "sequence"
    dependencies = ("greedy_tokens", "greedy_tokens_alternatives", "greedy_tokens_alternatives_nli")

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for words, alternatives, nli in zip(stats["greedy_tokens"], stats["greedy_tokens_alternatives"],
                                            stats["greedy_tokens_alternatives_nli"]):
            total = 0.0
            for _word, alts, mat in zip(words, alternatives, nli):
                entail, contra = [], []
                for a, (_alt, logprob) in enumerate(alts):
                    outcome = combine_nli(mat[0][a], mat[a][0])
                    if a == 0 or outcome == "entail":
                        entail.append(float(logprob))
                    elif outcome == "contra":
                        contra.append(float(logprob))
                total += float(np.logaddexp.reduce(entail) - np.logaddexp.reduce(entail + contra))
            out.append(-math.exp(total))
        return np.array(out, dtype=np.float64)


# --------------------------------------------------------------------------- EigenScore, semantic density
class EigenScore(Estimator):
    r"""LM-Polygraph's ``EigenScore`` (Chen et al. 2024): ``mean log eig(X J X^T + alpha I)``.

    ``X`` holds the samples' embeddings (rows, ``sample_embeddings``), ``J = I - 11^T / d``
    centres each embedding over its ``d`` features; eigenvalues that are not positive count
    as ``1e-10``.
    """

    name, level, dependencies = "eigenscore", "sequence", ("sample_embeddings",)

    def __init__(self, alpha: float = 1e-3) -> None:
        self.alpha = check_number(alpha, "alpha", owner=f"estimator {self.name!r}")
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        import scipy.linalg  # deferred (see EigValLaplacian)

        out = []
        for emb in stats["sample_embeddings"]:
            x = np.asarray(emb, dtype=np.float64)
            if x.size == 0:
                out.append(math.nan)
                continue
            xc = x - x.mean(axis=-1, keepdims=True)
            eig = scipy.linalg.eigh(xc @ xc.T + self.alpha * np.eye(len(x)), eigvals_only=True)
            out.append(float(np.mean(np.log(np.where(eig > 0, eig, 1e-10)))))
        return np.array(out, dtype=np.float64)


class SemanticDensity(Estimator):
    r"""LM-Polygraph's ``SemanticDensity`` (Qiu & Miikkulainen 2024): ``-sum p_s k_s / sum p_s``.

    Over the distinct sampled texts ``s`` plus the greedy answer: ``p`` the length-normalised
    probability (``P^(1/T)``), ``k_s = max(0, 1 - (contra_s + neutral_s / 2))`` from the NLI
    probabilities of (greedy, sample) (``concat_input``: with the question prepended,
    ``concat_greedy_semantic_matrix_*_forward``), ``k = 1`` for the greedy answer.
    """

    name, level = "semantic_density", "sequence"

    def __init__(self, verbose: bool = False, concat_input: bool = True) -> None:
        owner = f"estimator {self.name!r}"
        self.verbose = check_bool(verbose, "verbose", owner=owner)
        self.concat_input = check_bool(concat_input, "concat_input", owner=owner)
        prefix = "concat_greedy" if self.concat_input else "greedy"
        self._contra = f"{prefix}_semantic_matrix_contra_forward"
        self._neutral = f"{prefix}_semantic_matrix_neutral_forward"
        super().__init__(dependencies=("greedy_log_likelihoods", "sample_log_probs", "sample_tokens", "sample_texts",
                                       self._contra, self._neutral))

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for i, texts in enumerate(stats["sample_texts"]):
            lp = _sample_log_probs(stats, i)
            tokens = stats["sample_tokens"][i]
            contra, neutral = _arr(stats, self._contra, i), _arr(stats, self._neutral, i)
            _, first = np.unique(np.asarray(list(texts), dtype=str), return_index=True)
            p = np.array([math.exp(lp[j]) ** (1.0 / len(tokens[j])) for j in first])
            dist = contra[first] + neutral[first] / 2.0
            kern = np.where(dist <= 1.0, 1.0 - dist, 0.0)
            greedy = np.asarray(stats["greedy_log_likelihoods"][i], dtype=np.float64)
            g = math.exp(float(greedy.sum())) ** (1.0 / len(greedy))
            out.append(-(float(np.sum(p * kern)) + g) / (float(np.sum(p)) + g))
        return np.array(out, dtype=np.float64)


# --------------------------------------------------------------------------- CoCoA
class _Cocoa(Estimator):
    level = "sequence"

    def _confidence(self, stats: Mapping[str, Any], i: int) -> float:
        raise NotImplementedError

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        sims = _stacked(stats, "greedy_sentence_similarity")
        if sims is not None and sims.ndim == 2:
            dissimilarity = 1.0 - sims.mean(axis=1)
        else:
            dissimilarity = np.array([float(np.mean(1.0 - np.asarray(s, dtype=np.float64)))
                                      for s in stats["greedy_sentence_similarity"]])
        return np.array([self._confidence(stats, i) for i in range(len(dissimilarity))]) * dissimilarity


class CocoaMSP(_Cocoa):
    r"""LM-Polygraph's ``CocoaMSP`` (Vashurin et al. 2025): ``-log P(greedy) * mean_s (1 - sim(greedy, s))``."""

    name, dependencies = "cocoa_msp", ("greedy_sentence_similarity", "greedy_log_likelihoods")

    def _confidence(self, stats: Mapping[str, Any], i: int) -> float:
        return -float(np.sum(stats["greedy_log_likelihoods"][i]))


class CocoaPPL(_Cocoa):
    r"""LM-Polygraph's ``CocoaPPL``: ``-mean_t log p_t * mean_s (1 - sim(greedy, s))``."""

    name, dependencies = "cocoa_ppl", ("greedy_sentence_similarity", "greedy_log_likelihoods")

    def _confidence(self, stats: Mapping[str, Any], i: int) -> float:
        return -float(np.mean(stats["greedy_log_likelihoods"][i]))


class CocoaMTE(_Cocoa):
    r"""LM-Polygraph's ``CocoaMTE``: ``mean_t H_t * mean_s (1 - sim(greedy, s))``."""

    name, dependencies = "cocoa_mte", ("greedy_sentence_similarity", "entropy")

    def _confidence(self, stats: Mapping[str, Any], i: int) -> float:
        return float(np.mean(stats["entropy"][i]))


#: every estimator of this module with its LM-Polygraph class name
ESTIMATORS: tuple[tuple[type[Estimator], str], ...] = (
    (SemanticEntropy, "SemanticEntropy"), (NumSemSets, "NumSemSets"), (DegMat, "DegMat"),
    (Eccentricity, "Eccentricity"), (EigValLaplacian, "EigValLaplacian"),
    (KernelLanguageEntropy, "KernelLanguageEntropy"), (LUQ, "LUQ"), (SAR, "SAR"), (TokenSAR, "TokenSAR"),
    (SentenceSAR, "SentenceSAR"), (ClaimConditionedProbability, "ClaimConditionedProbability"),
    (EigenScore, "EigenScore"), (SemanticDensity, "SemanticDensity"), (CocoaMSP, "CocoaMSP"),
    (CocoaPPL, "CocoaPPL"), (CocoaMTE, "CocoaMTE"),
)
