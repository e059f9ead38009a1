r"""Semantic uncertainty estimators over sampled answers, from a similarity of the answers.

LM-Polygraph computes these estimators from an NLI model (DeBERTa entailment and
contradiction probabilities between every pair of sampled answers). Here the pairwise
similarity is a parameter: by default the **cosine similarity of sentence embeddings**
(the packaged all-MiniLM-L6-v2, or any local sentence-transformers folder), so each
estimator is an embedding-similarity analogue of LM-Polygraph's NLI original, and is
documented as such. ``similarity="rougeL"`` uses the ROUGE-L F1 of
:func:`assay_uncertainty.estimators.rouge_l`; a callable ``f(texts) -> (K, K) array``
supplies any other similarity; ``matrix_stat="similarity_matrix"`` reads precomputed
``K x K`` matrices from a statistic (NLI entailment probabilities computed elsewhere,
or ``sample_embedding_similarity`` from the registered stat calculator), so the NLI
variants stay possible.

Notation: one example has ``K`` sampled answers and a similarity matrix ``S`` (``S_ij``
the similarity of answer ``i`` to answer ``j``). The graph estimators use the weights
``W = max(0, (S + S^T) / 2)`` (symmetrised as LM-Polygraph does for NLI scores; a
negative cosine becomes 0, since graph weights must be non-negative and NLI
probabilities are), the degrees ``D = diag(W 1)`` and the normalised Laplacian
``L = I - D^{-1/2} W D^{-1/2}`` (a node of degree 0 contributes an identity row). Two
answers are *equivalent* when ``S_ij >= threshold`` and ``S_ji >= threshold`` (the
analogue of LM-Polygraph's "entailment both ways").

An example without samples gives NaN (the manager's NaN policy applies); a similarity
matrix of the wrong shape or with NaN / infinite values is an error naming the example.

References
----------
Lin, Trivedi & Sun (2023), *Generating with Confidence: Uncertainty Quantification for
Black-box Large Language Models*, arXiv:2305.19187 (NumSemSets, EigValLaplacian,
DegMat, Eccentricity). Kuhn, Gal & Farquhar (2023), *Semantic Uncertainty*,
arXiv:2302.09664 (semantic entropy); Farquhar et al. (2024), Nature 630 (discrete
semantic entropy). LM-Polygraph ``estimators/{num_sem_sets, semantic_entropy,
eig_val_laplacian, deg_mat, eccentricity}.py``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import Estimator, StatCalculator
from assay.validation import check_bool, check_choice, check_int, check_number, check_str
from assay_transformers.embeddings import EmbeddingModel, cosine_matrix, get_embedding_model
from assay_transformers.sbert import check_model_option

__all__ = ["DegMat", "Eccentricity", "NumSemSets", "SampleEmbeddingSimilarity", "SemanticEigValLaplacian",
           "SemanticEntropy", "degree_uncertainty", "eccentricity", "eigval_laplacian", "equivalence_classes",
           "normalized_laplacian", "num_semantic_sets", "similarity_matrices"]

SIMILARITIES = ("embedding", "rougeL")


# --------------------------------------------------------------------------- similarity sources
def _embedding_matrices(sample_texts: Sequence[Sequence[str]], model: EmbeddingModel,
                        batch_size: int | None) -> list[np.ndarray]:
    flat = [t for texts in sample_texts for t in texts]
    emb = model.embed(flat, batch_size=batch_size)  # one call: every distinct text of the batch once
    out, start = [], 0
    for texts in sample_texts:
        k = len(texts)
        out.append(cosine_matrix(emb[start:start + k]))
        start += k
    return out


def _rouge_matrix(texts: Sequence[str]) -> np.ndarray:
    from assay_uncertainty.estimators import rouge_l

    k = len(texts)
    s = np.eye(k)
    for i in range(k):
        for j in range(i + 1, k):
            s[i, j] = s[j, i] = rouge_l(texts[i], texts[j])
    return s


def _check_matrix(s: Any, k: int | None, index: int, owner: str) -> np.ndarray:
    try:
        m = np.asarray(s, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{owner}: the similarity matrix of example {index} is not numeric.") from None
    if m.size == 0 and (k is None or k == 0):
        return m.reshape(0, 0)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or (k is not None and m.shape[0] != k):
        want = f"({k}, {k}) for its {k} samples" if k is not None else "square (K, K)"
        raise InvalidParameterError(
            f"{owner}: the similarity matrix of example {index} has shape {m.shape}; expected {want}."
        )
    if not np.all(np.isfinite(m)):
        i, j = (int(x) for x in np.argwhere(~np.isfinite(m))[0])
        raise InvalidParameterError(
            f"{owner}: the similarity matrix of example {index} holds {float(m[i, j])!r} at [{i}, {j}]; similarities "
            "must be finite."
        )
    return m


def similarity_matrices(sample_texts: Sequence[Sequence[str]], similarity: Any = "embedding", *,
                        model: Any = None, batch_size: int | None = None,
                        owner: str = "similarity") -> list[np.ndarray]:
    """The ``K x K`` similarity matrix of each example's sampled answers.

    Parameters
    ----------
    sample_texts : sequence of sequences of str
        The sampled answers of each example.
    similarity : {"embedding", "rougeL"} or callable
        ``"embedding"``: cosine of sentence embeddings (``model``); ``"rougeL"``: ROUGE-L
        F1 (diagonal 1); a callable takes the list of an example's answers and returns
        its ``(K, K)`` matrix.
    model, batch_size
        The embedding model (see :class:`~assay_transformers.embeddings.EmbeddingModel`).
    """
    texts = []
    for i, s in enumerate(sample_texts):
        if isinstance(s, str) or not isinstance(s, (list, tuple, np.ndarray)):
            raise InvalidParameterError(
                f"{owner}: sample_texts[{i}] must be a list of sampled answers (str); got {type(s).__name__}."
            )
        s = list(s)
        for j, t in enumerate(s):
            if not isinstance(t, str):
                raise InvalidParameterError(
                    f"{owner}: sample_texts[{i}][{j}] must be a str; got {type(t).__name__}: {t!r:.60}."
                )
        texts.append(s)
    if callable(similarity):
        return [_check_matrix(similarity(s), len(s), i, owner) for i, s in enumerate(texts)]
    if similarity == "rougeL":
        return [_rouge_matrix(s) for s in texts]
    if similarity == "embedding":
        return _embedding_matrices(texts, get_embedding_model(model), batch_size)
    raise InvalidParameterError(  # pragma: no cover - the estimators validate first
        f"The 'similarity' of {owner} must be one of {SIMILARITIES} or a callable; got {similarity!r}."
    )


# --------------------------------------------------------------------------- kernels (one example)
def graph_weights(s: np.ndarray) -> np.ndarray:
    """``W = max(0, (S + S^T) / 2)``."""
    return np.clip((s + s.T) / 2.0, 0.0, None)


def normalized_laplacian(w: np.ndarray) -> np.ndarray:
    """``L = I - D^{-1/2} W D^{-1/2}``, ``D = diag(W 1)``; a zero degree gives an identity row."""
    d = w.sum(axis=1)
    inv = np.where(d > 0, 1.0 / np.sqrt(np.where(d > 0, d, 1.0)), 0.0)
    return np.eye(len(w)) - inv[:, None] * w * inv[None, :]


def _equivalent(s: np.ndarray, threshold: float) -> np.ndarray:
    return (s >= threshold) & (threshold <= s.T)


def num_semantic_sets(s: np.ndarray, threshold: float) -> int:
    """Connected components of the graph with an edge where two answers are equivalent (scipy)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    n, _ = connected_components(csr_matrix(_equivalent(s, threshold).astype(np.int8)), directed=False)
    return int(n)


def equivalence_classes(s: np.ndarray, threshold: float) -> list[int]:
    """LM-Polygraph's greedy classes: answer ``i`` joins the first class whose first member it is
    equivalent to, else opens a new class. Returns the class of each answer."""
    eq = _equivalent(s, threshold)
    firsts: list[int] = []
    out = []
    for i in range(len(s)):
        for c, f in enumerate(firsts):
            if eq[f, i]:
                out.append(c)
                break
        else:
            out.append(len(firsts))
            firsts.append(i)
    return out


def eigval_laplacian(s: np.ndarray) -> float:
    """``sum_k max(0, 1 - lambda_k(L))``."""
    lam = np.linalg.eigvalsh(normalized_laplacian(graph_weights(s)))
    return float(np.sum(np.clip(1.0 - lam, 0.0, None)))


def degree_uncertainty(s: np.ndarray) -> float:
    """``trace(K I - D) / K^2 = 1 - sum_ij W_ij / K^2``."""
    k = len(s)
    return float(1.0 - graph_weights(s).sum() / (k * k))


def eccentricity(s: np.ndarray, threshold: float) -> float:
    """``|| U - 1 mean(U) ||_F``, ``U`` the eigenvectors of ``L`` with eigenvalue below ``threshold`` (columns)."""
    lam, vec = np.linalg.eigh(normalized_laplacian(graph_weights(s)))
    u = vec[:, lam < threshold]
    if u.size == 0:
        return 0.0
    return float(np.linalg.norm(u - u.mean(axis=0, keepdims=True)))


# --------------------------------------------------------------------------- estimators
class _Semantic(Estimator):
    """Shared options: where the similarity comes from, and the embedding model."""

    level = "sequence"
    uses_threshold = False
    default_threshold = 0.8

    def __init__(self, *, similarity: Any = "embedding", matrix_stat: str | None = None, model: Any = None,
                 batch_size: int = 32, threshold: float | None = None) -> None:
        owner = f"estimator {self.name!r}"
        if not callable(similarity):
            check_choice(similarity, "similarity", SIMILARITIES, owner=owner)
        self.similarity = similarity
        self.matrix_stat = (check_str(matrix_stat, "matrix_stat", owner=owner, allow_empty=False)
                            if matrix_stat is not None else None)
        self.model = check_model_option(model, owner) if similarity == "embedding" and matrix_stat is None else model
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=owner)
        if threshold is not None and not self.uses_threshold:
            raise InvalidParameterError(f"{owner} takes no 'threshold'; got {threshold!r}.")
        self.threshold = (check_number(threshold if threshold is not None else self.default_threshold, "threshold",
                                       owner=owner) if self.uses_threshold else None)
        super().__init__(dependencies=self._dependencies())

    def _dependencies(self) -> tuple[str, ...]:
        return (self.matrix_stat,) if self.matrix_stat else ("sample_texts",)

    def matrices(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        """The similarity matrix of each example (computed, or read from ``matrix_stat``)."""
        owner = f"estimator {self.name!r}"
        if self.matrix_stat:
            return [_check_matrix(s, None, i, owner) for i, s in enumerate(stats[self.matrix_stat])]
        return similarity_matrices(stats["sample_texts"], self.similarity, model=self.model,
                                   batch_size=self.batch_size, owner=owner)

    def _value(self, s: np.ndarray, index: int, stats: Mapping[str, Any]) -> float:
        raise NotImplementedError

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return np.array([self._value(s, i, stats) if len(s) else math.nan
                         for i, s in enumerate(self.matrices(stats))], dtype=np.float64)


_COMMON = """
    Parameters
    ----------
    similarity : {"embedding", "rougeL"} or callable
        The pairwise similarity of sampled answers: cosine of sentence embeddings
        (default), ROUGE-L F1, or ``f(texts) -> (K, K) array``.
    matrix_stat : str or None
        Read the ``K x K`` matrices from this statistic instead (e.g. NLI entailment
        probabilities in ``similarity_matrix``, or ``sample_embedding_similarity``).
    model : str, path, EmbeddingModel, loaded SentenceTransformer or None
        The embedding model (default: the packaged all-MiniLM-L6-v2).
    batch_size : int
        Texts per ``encode`` call.
"""
_THRESHOLD = """    threshold : float
        Two answers are equivalent when both ``S_ij`` and ``S_ji`` are at least this
        (default 0.8: a choice for embedding cosine, to tune for another similarity).
"""


class NumSemSets(_Semantic):
    __doc__ = r"""Number of semantic sets: connected components of the equivalence graph of the samples.

    Embedding-similarity analogue of LM-Polygraph's ``NumSemSets`` (Lin et al. 2023), which
    links answers ``i, j`` when the NLI model finds entailment more likely than
    contradiction in both directions; here when ``S_ij >= threshold`` and
    ``S_ji >= threshold``. The value is the number of connected components (scipy's
    ``connected_components``). Higher = more uncertain.
""" + _COMMON + _THRESHOLD

    name = "num_sem_sets"
    uses_threshold = True

    def _value(self, s: np.ndarray, index: int, stats: Mapping[str, Any]) -> float:
        return float(num_semantic_sets(s, self.threshold))


class SemanticEntropy(_Semantic):
    __doc__ = r"""Semantic entropy over similarity clusters of the sampled answers.

    Embedding-similarity analogue of LM-Polygraph's ``SemanticEntropy`` (Kuhn et al. 2023),
    whose classes come from bidirectional NLI entailment. Classes here are LM-Polygraph's
    greedy ones (:func:`equivalence_classes`: each answer joins the first class whose first
    member it is equivalent to). With ``C(j)`` the class of sample ``j`` and ``K`` samples:

    - ``likelihoods=False`` (default, needs no model probabilities): the discrete semantic
      entropy of Farquhar et al. (2024), ``-sum_c p_c log p_c`` with ``p_c = |c| / K``.
    - ``likelihoods=True`` (LM-Polygraph's formula, reads ``sample_log_likelihoods``):
      ``-1/K sum_j log sum_{i in C(j)} P(s_i)``, the class log-probability being the
      log-sum-exp of its members' sequence log-likelihoods.

    Natural logarithm; higher = more uncertain.
""" + _COMMON + _THRESHOLD + """    likelihoods : bool
        Weight classes by the samples' likelihoods (see above).
"""

    name = "semantic_entropy"
    uses_threshold = True

    def __init__(self, *, similarity: Any = "embedding", matrix_stat: str | None = None, model: Any = None,
                 batch_size: int = 32, threshold: float | None = None, likelihoods: bool = False) -> None:
        self.likelihoods = check_bool(likelihoods, "likelihoods", owner=f"estimator {self.name!r}")
        super().__init__(similarity=similarity, matrix_stat=matrix_stat, model=model, batch_size=batch_size,
                         threshold=threshold)

    def _dependencies(self) -> tuple[str, ...]:
        return super()._dependencies() + (("sample_log_likelihoods",) if self.likelihoods else ())

    def _value(self, s: np.ndarray, index: int, stats: Mapping[str, Any]) -> float:
        classes = np.array(equivalence_classes(s, self.threshold))
        k = len(classes)
        if not self.likelihoods:
            p = np.bincount(classes) / k
            return float(-np.sum(p * np.log(p))) + 0.0  # no -0.0
        ll = np.asarray(stats["sample_log_likelihoods"][index], dtype=np.float64)
        if ll.shape != (k,) or not np.all(np.isfinite(ll)):
            raise InvalidParameterError(
                f"estimator {self.name!r}: sample_log_likelihoods[{index}] must hold {k} finite values, one per "
                f"sample; got {ll.tolist()!r:.80}."
            )
        class_lp = np.array([np.logaddexp.reduce(ll[classes == c]) for c in range(classes.max() + 1)])
        return float(-np.mean(class_lp[classes]))


class SemanticEigValLaplacian(_Semantic):
    __doc__ = r"""Sum of the eigenvalues of the graph Laplacian, clipped: ``sum_k max(0, 1 - lambda_k(L))``.

    LM-Polygraph's ``EigValLaplacian`` (Lin et al. 2023) with ``W`` from the chosen
    similarity instead of NLI entailment probabilities; a continuous analogue of the
    number of semantic sets (``c`` disconnected cliques give exactly ``c``). With
    ``matrix_stat="similarity_matrix"`` it equals ``eigval_laplacian`` of
    assay-uncertainty on matrices in ``[0, 1]``. Higher = more uncertain.
""" + _COMMON

    name = "semantic_eigval_laplacian"

    def _value(self, s: np.ndarray, index: int, stats: Mapping[str, Any]) -> float:
        return eigval_laplacian(s)


class DegMat(_Semantic):
    __doc__ = r"""Degree matrix: ``trace(K I - D) / K^2 = 1 - sum_ij W_ij / K^2``.

    LM-Polygraph's ``DegMat`` (Lin et al. 2023) with ``W`` from the chosen similarity
    instead of NLI probabilities: one minus the mean pairwise similarity (self pairs
    included). In ``[0, 1]`` for similarities in ``[0, 1]``; higher = more uncertain.
""" + _COMMON

    name = "deg_mat"

    def _value(self, s: np.ndarray, index: int, stats: Mapping[str, Any]) -> float:
        return degree_uncertainty(s)


class Eccentricity(_Semantic):
    __doc__ = r"""Eccentricity: spread of the answers' spectral embeddings, ``|| U - 1 u_mean^T ||_F``.

    LM-Polygraph's ``Eccentricity`` (Lin et al. 2023) with ``W`` from the chosen similarity:
    ``U`` holds (as columns) the eigenvectors of ``L`` whose eigenvalue is below
    ``threshold`` (LM-Polygraph's ``thres=0.9``); row ``j`` of ``U`` embeds answer ``j``;
    the value is the Frobenius norm of the rows' deviations from their mean. ``c``
    disconnected cliques give ``sqrt(c - 1)``. Higher = more uncertain.
""" + _COMMON + """    threshold : float
        Keep the eigenvectors with eigenvalue below this (default 0.9, as LM-Polygraph).
"""

    name = "eccentricity"
    uses_threshold = True
    default_threshold = 0.9

    def _value(self, s: np.ndarray, index: int, stats: Mapping[str, Any]) -> float:
        return eccentricity(s, self.threshold)


# --------------------------------------------------------------------------- stat calculator
class SampleEmbeddingSimilarity(StatCalculator):
    """``sample_texts`` -> ``sample_embedding_similarity``: the cosine matrix of each example's samples.

    Lets the UEManager store the matrices with the statistics (``save_stats``) and the
    semantic estimators read them with ``matrix_stat="sample_embedding_similarity"``.
    The model loads on first use, not when the manager creates the calculator.

    Parameters
    ----------
    model, batch_size
        As for :class:`NumSemSets`.
    """

    name = "sample_embedding_similarity"
    stats = ("sample_embedding_similarity",)
    dependencies = ("sample_texts",)

    def __init__(self, *, model: Any = None, batch_size: int = 32) -> None:
        owner = f"stat calculator {self.name!r}"
        self.model = check_model_option(model, owner)
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=owner)
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        return {"sample_embedding_similarity": similarity_matrices(
            stats["sample_texts"], "embedding", model=self.model, batch_size=self.batch_size,
            owner=f"stat calculator {self.name!r}")}


ESTIMATORS: tuple[type[_Semantic], ...] = (NumSemSets, SemanticEntropy, SemanticEigValLaplacian, DegMat, Eccentricity)
