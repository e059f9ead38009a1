"""Registrations of LM-Polygraph's NLI- and sample-based estimators and the NLI stat calculators.

Entry point ``assay.transformers-polygraph-semantic``. Importing this module is cheap (numpy
and scipy): torch and transformers load with the NLI model, on first use.

The five names that clustered by embedding similarity before issue 28 (``semantic_entropy``,
``num_sem_sets``, ``deg_mat``, ``eccentricity``, ``semantic_eigval_laplacian``) now name
LM-Polygraph's NLI method. Their factory takes ``clustering``: ``"nli"`` (the default) or
``"embedding"`` (the estimator of :mod:`assay_transformers.semantic`, unchanged). A spelling
that passes an option only the embedding estimator has (``similarity``, ``model``,
``threshold``, ``matrix_stat``, ``batch_size``, ``likelihoods``) without ``clustering`` still
loads the embedding estimator, with a ``FutureWarning`` saying what changed. A bare name
cannot give embedding numbers by surprise: the NLI estimators read statistics that only the
``semantic_matrix`` calculator (given an NLI model folder) produces, so a run without it
stops naming the missing statistic.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from assay import hookimpl
from assay.errors import InvalidParameterError
from assay_transformers import polygraph_semantic as ps
from assay_transformers import semantic
from assay_transformers.alternatives import GreedyAlternativesCalculator, GreedyAlternativesNLICalculator
from assay_transformers.cross_encoder import CrossEncoderSimilarityCalculator, GreedyCrossEncoderSimilarityCalculator
from assay_transformers.nli import (
    ConcatGreedySemanticMatrixCalculator,
    GreedySemanticMatrixCalculator,
    SemanticClassesCalculator,
    SemanticMatrixCalculator,
)
from assay_transformers.semantic_entropy_token import SemanticEntropyToken

__all__ = ["CLUSTERINGS", "RENAMED", "clustered"]

#: the clusterings a renamed estimator takes
CLUSTERINGS = ("nli", "embedding")

_UNSET: Any = type("_Unset", (), {"__repr__": lambda self: "<unset>"})()


def _keys(cls: type) -> list[str]:
    return list(inspect.signature(cls).parameters)


def clustered(name: str, nli_cls: type, embedding_cls: type) -> Callable[..., Any]:
    """The factory of a renamed estimator: ``clustering="nli"`` (default) or ``"embedding"`` (module docstring)."""
    nli_keys, emb_keys = _keys(nli_cls), _keys(embedding_cls)
    emb_only = [k for k in emb_keys if k not in nli_keys]
    nli_only = [k for k in nli_keys if k not in emb_keys]

    def factory(**options: Any) -> Any:
        clustering = options.pop("clustering", _UNSET)
        given = {k: v for k, v in options.items() if v is not _UNSET}
        owner = f"estimator {name!r}"
        if clustering is not _UNSET and clustering not in CLUSTERINGS:
            raise InvalidParameterError(f"The 'clustering' of {owner} must be one of "
                                        f"{', '.join(map(repr, CLUSTERINGS))}; got {clustering!r}.")
        emb = sorted(k for k in given if k in emb_only)
        nli = sorted(k for k in given if k in nli_only)
        if clustering == "embedding" or (clustering is _UNSET and emb):
            if nli:
                raise InvalidParameterError(
                    f"{owner} with embedding clustering takes no {', '.join(map(repr, nli))} (LM-Polygraph's NLI "
                    f"options); its options are {', '.join(emb_keys)}.")
            if clustering is _UNSET:
                warnings.warn(
                    f"{name!r} now computes LM-Polygraph's NLI-based {nli_cls.__name__} (issue 28); the option(s) "
                    f"{', '.join(emb)} belong to the embedding-similarity estimator that {name!r} named before, which "
                    f"is loaded. Spell it '{name}[clustering=embedding, ...]' to keep it without this warning.",
                    FutureWarning, stacklevel=2)
            return embedding_cls(**given)
        if emb:
            raise InvalidParameterError(
                f"{owner} with NLI clustering (LM-Polygraph's {nli_cls.__name__}) takes no "
                f"{', '.join(map(repr, emb))}: those are options of '{name}[clustering=embedding]'; its options are "
                f"{', '.join(nli_keys)}.")
        return nli_cls(**given)

    params = [inspect.Parameter("clustering", inspect.Parameter.KEYWORD_ONLY, default=_UNSET)]
    params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=_UNSET)
               for k in dict.fromkeys(nli_keys + emb_keys)]
    factory.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    factory.__name__ = factory.__qualname__ = nli_cls.__name__
    factory.__doc__ = (f"{nli_cls.__doc__}\n\n    ``clustering='embedding'``: the embedding-similarity estimator "
                       f"(:class:`{embedding_cls.__module__}.{embedding_cls.__name__}`) instead.")
    return factory


#: renamed name -> (LM-Polygraph class, embedding estimator)
RENAMED: dict[str, tuple[type, type]] = {
    "semantic_entropy": (ps.SemanticEntropy, semantic.SemanticEntropy),
    "num_sem_sets": (ps.NumSemSets, semantic.NumSemSets),
    "deg_mat": (ps.DegMat, semantic.DegMat),
    "eccentricity": (ps.Eccentricity, semantic.Eccentricity),
    "semantic_eigval_laplacian": (ps.EigValLaplacian, semantic.SemanticEigValLaplacian),
}

# ---------------------------------------------------------------- small statistics for the conformance checks
_RNG = np.random.default_rng(0)
_K = 3
_TEXTS = [["Paris", "It is Paris", "Lyon"], ["42", "42", "forty-two"]]


def _probs(n: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    p = _RNG.dirichlet(np.ones(3), size=(n, _K, _K))
    return [p[i, :, :, 0] for i in range(n)], [p[i, :, :, 2] for i in range(n)]


_E, _C = _probs(2)
_STATS: dict[str, Any] = {
    "sample_texts": _TEXTS,
    "semantic_matrix_entail": _E, "semantic_matrix_contra": _C,
    "semantic_matrix_entail_logits": [np.log(e) for e in _E], "semantic_matrix_contra_logits": [np.log(c) for c in _C],
    "semantic_classes_entail": [np.array([0, 0, 1]), np.array([0, 0, 1])],
    "sample_log_probs": [np.array([-1.0, -2.0, -3.0]), np.array([-0.5, -0.5, -2.5])],
    "sample_log_likelihoods": [[np.array([-0.5, -0.5]), np.array([-1.0, -1.0]), np.array([-3.0])]] * 2,
    "sample_tokens": [[[1, 2], [3, 4], [5]]] * 2,
    "sample_sentence_similarity": [np.full((_K, _K), 0.5)] * 2,
    "sample_token_similarity": [[np.array([0.2, 0.6]), np.array([0.3, 0.1]), np.array([0.5])]] * 2,
    "token_similarity": [np.array([0.2, 0.7]), np.array([0.4])],
    "greedy_log_likelihoods": [np.array([-0.1, -0.4]), np.array([-0.3])],
    "greedy_sentence_similarity": [np.array([0.9, 0.7, 0.1]), np.array([0.8, 0.8, 0.2])],
    "entropy": [np.array([0.5, 1.0]), np.array([0.2])],
    "sample_embeddings": [_RNG.normal(size=(_K, 4)), _RNG.normal(size=(_K, 4))],
    "greedy_tokens": [[7, 8], [9]],
    "greedy_tokens_alternatives": [[[(7, -0.1), (6, -2.5)], [(8, -0.4), (5, -1.2)]], [[(9, -0.3), (4, -1.4)]]],
    "greedy_tokens_alternatives_nli": [
        [[["entail", "contra"], ["contra", ""]], [["entail", "entail"], ["neutral", ""]]],
        [[["entail", "contra"], ["entail", ""]]]],
    **{f"{p}_semantic_matrix_{k}_forward": [_RNG.uniform(0, 0.5, _K), _RNG.uniform(0, 0.5, _K)]
       for p in ("greedy", "concat_greedy") for k in ("contra", "neutral")},
}


@hookimpl
def assay_register_estimators(register: Callable[..., Any]) -> None:
    """LM-Polygraph's NLI- and sample-based estimators (module docstring)."""
    for cls, class_name in ps.ESTIMATORS:
        doc = inspect.getdoc(cls) or ""
        desc = doc.splitlines()[0] if doc else cls.__name__
        examples: list[dict[str, Any]] = [{"stats": _STATS}]
        factory: Any = cls
        if cls.name in RENAMED:
            factory = clustered(cls.name, *RENAMED[cls.name])
            examples.append({"overrides": {"clustering": "embedding", "similarity": "rougeL"},
                             "stats": {"sample_texts": _TEXTS}})
        register(cls.name, factory, other_names=(class_name,), description=desc, level=cls.level, examples=examples)


    register("semantic_entropy_token", SemanticEntropyToken, other_names=("SemanticEntropyToken",),
             description="token level: entropy over sentence-BERT classes of the vocabulary (local models)",
             level="token")


@hookimpl
def assay_register_stat_calculators(register: Callable[..., Any]) -> None:
    """``semantic_matrix`` (``nli_model``: a local folder), ``semantic_classes``, the cross-encoder similarities."""
    register("semantic_matrix", SemanticMatrixCalculator, other_names=("SemanticMatrixCalculator",),
             description="sample_texts -> NLI entailment / contradiction matrices of the samples (local NLI model)")
    register("semantic_classes", SemanticClassesCalculator, other_names=("SemanticClassesCalculator",),
             description="semantic_matrix_classes -> semantic_classes_entail (LM-Polygraph's greedy NLI classes)",
             examples=[{"stats": {"sample_texts": _TEXTS,
                                  "semantic_matrix_classes": [np.array([[2, 2, 0], [2, 2, 0], [0, 1, 2]])] * 2,
                                  "entailment_id": [2, 2]}}])
    register("cross_encoder_similarity", CrossEncoderSimilarityCalculator,
             other_names=("CrossEncoderSimilarityMatrixCalculator",),
             description="samples and greedy tokens -> cross-encoder sentence and token similarities (SAR; local "
                         "cross-encoder)")
    register("greedy_cross_encoder_similarity", GreedyCrossEncoderSimilarityCalculator,
             other_names=("GreedyCrossEncoderSimilarityMatrixCalculator",),
             description="greedy answer vs samples -> greedy_sentence_similarity (CoCoA; local cross-encoder)")
    register("greedy_semantic_matrix", GreedySemanticMatrixCalculator,
             other_names=("GreedySemanticMatrixCalculator",),
             description="greedy answer vs samples -> NLI probabilities both ways (semantic density; local NLI model)")
    register("concat_greedy_semantic_matrix", ConcatGreedySemanticMatrixCalculator,
             other_names=("ConcatGreedySemanticMatrixCalculator",),
             description="as greedy_semantic_matrix with the question prepended (semantic density's default)")
    register("greedy_alternatives", GreedyAlternativesCalculator,
             description="greedy_log_probs -> greedy_tokens_alternatives (top tokens of each step, greedy first; CCP)",
             examples=[{"stats": {"greedy_log_probs": [np.log([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])],
                                  "greedy_tokens": [[0, 2]]}, "overrides": {"n_alternatives": 2}}])
    register("greedy_alternatives_nli", GreedyAlternativesNLICalculator,
             other_names=("GreedyAlternativesNLICalculator",),
             description="greedy_tokens_alternatives -> their NLI classes against the greedy word (CCP; local NLI "
                         "model)")
