"""Registrations of LM-Polygraph's density-based estimators and text generation metrics (entry point
``assay.uncertainty-density``).

Importing this module is cheap: the estimator and metric modules import numpy and assay;
scikit-learn, rouge-score and sacreBLEU are imported when an estimator fits or a metric
first scores.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from assay import hookimpl
from assay_uncertainty import estimators_density as dens
from assay_uncertainty.gen_metrics_text import TEXT_GENERATION_METRICS


def _example_stats(seed: int, n_train: int, n: int, dim: int = 3) -> tuple[dict[str, Any], dict[str, Any]]:
    """Small training statistics (the ``train_stats`` override) and evaluated statistics for the conformance checks."""
    rng = np.random.default_rng(seed)
    mix = np.array([[1.0, 0.3, 0.0], [0.0, 1.0, 0.5], [0.2, 0.0, 1.0]])[:dim, :dim]
    train = {
        "train_embeddings_decoder": (rng.normal(size=(n_train, dim)) @ mix).round(3).tolist(),
        "background_train_embeddings_decoder": rng.normal(size=(n_train, dim)).round(3).tolist(),
        "train_greedy_log_likelihoods": [(-rng.random(int(k)) * 2).round(3).tolist()
                                         for k in rng.integers(1, 5, n_train)],
    }
    stats = {
        "embeddings_decoder": (rng.normal(size=(n, dim)) * 1.5).round(3).tolist(),
        "greedy_log_likelihoods": [(-rng.random(int(k)) * 2).round(3).tolist() for k in rng.integers(1, 5, n)],
    }
    return train, stats


def _examples(cls: type) -> list[dict[str, Any]]:
    keep = {"train_embeddings_decoder"}
    if cls is dens.RelativeMahalanobisDistanceSeq:
        keep.add("background_train_embeddings_decoder")
    if cls is dens.PPLMDSeq:
        keep.add("train_greedy_log_likelihoods")
    train, stats = _example_stats(0, 40, 8)
    if cls is not dens.PPLMDSeq:
        stats = {"embeddings_decoder": stats["embeddings_decoder"]}
    return [{"overrides": {"train_stats": {k: v for k, v in train.items() if k in keep}}, "stats": stats}]


@hookimpl
def assay_register_estimators(register: Callable[..., Any]) -> None:
    for cls, desc in (
        (dens.MahalanobisDistanceSeq, "Mahalanobis distance of the embedding from the training embeddings (fit on "
                                      "train_embeddings_<type>)"),
        (dens.RelativeMahalanobisDistanceSeq, "Mahalanobis distance from the training set minus that from a "
                                              "background set"),
        (dens.RDESeq, "robust density estimation: Mahalanobis distance in an RBF kernel-PCA space, robust covariance"),
        (dens.PPLMDSeq, "mean of the perplexity's and the Mahalanobis distance's ranks among training examples"),
    ):
        register(cls.name, cls, other_names=(cls.__name__,), description=desc, level="sequence",
                 examples=_examples(cls))


@hookimpl
def assay_register_generation_metrics(register: Callable[..., Any]) -> None:
    for name, (cls, lm_polygraph_name, desc) in TEXT_GENERATION_METRICS.items():
        register(name, cls, other_names=(lm_polygraph_name,), level="sequence", description=desc)
