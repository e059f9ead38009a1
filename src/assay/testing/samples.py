"""Sample inputs for the conformance checks of ``assay check-plugin``: declared by the plugin, else generated.

A plugin declares sample inputs for any registered name with ``examples``: a list of
dicts, given either as registration metadata (``register("my_metric", MyMetric,
examples=[...])``) or as an ``examples`` attribute of the factory (the class). The key
``overrides`` (constructor keywords) is understood for every kind; the other keys
depend on the kind:

==================  =================================================================
kind                keys of one example
==================  =================================================================
metric              ``predictions``, ``references``, ``task_data``, ``global_target``
                    (expected scores), ``atol``
ue_metric           ``uncertainty``, ``quality`` (one value per example); the
                    registration may also declare ``orientation`` and ``tie_aware``
                    (:mod:`assay.testing.metric_checks`)
estimator           ``stats`` (statistic name -> one value per example)
stat_calculator     ``stats``
sentence_evaluator  ``items`` (pool items), ``w_vector``
data_format         ``text`` (a whole document) or ``items`` (what ``parse`` returns); binary
                    formats (``binary = True``, one array per file) ``array``
aggregation         ``map`` (a 2-D or 3-D uncertainty map)
executor, task      only ``overrides``
==================  =================================================================

Where a plugin declares none, the checks use generated inputs: metrics get
predictions of their declared ``prediction_type`` (``int``, ``float``, ``bool``,
``str``, ``list[str]``, ``Hashable``) and one reference of the same type per
instance; UE metrics get distinct random uncertainties and binary quality (and a
sample of tie groups for the tie check); aggregations get random maps. A check that
needs a sample and has none is reported by ``assay check-plugin`` as SKIP with the
reason, and fails the common suite (:mod:`assay.testing.suite`).
"""

from __future__ import annotations

import typing
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from assay.metrics._attributes import _resolve_type
from assay.plugins.registry import Entry

__all__ = ["declared_examples", "generate_metric_sample", "random_map", "ue_sample"]

_WORDS = ("the", "cat", "sat", "on", "a", "mat", "dog", "ran")


def declared_examples(entry: Entry) -> list[Mapping[str, Any]]:
    """The examples a plugin declared for ``entry`` (metadata first, then the factory's attribute)."""
    examples = entry.metadata.get("examples")
    if examples is None:
        examples = getattr(entry.factory, "examples", None)
    if examples is None:
        return []
    if not isinstance(examples, (list, tuple)) or not all(isinstance(x, Mapping) for x in examples):
        raise AssertionError(f"examples of {entry.kind} {entry.name!r} must be a list of dicts; "
                             f"got {type(examples).__name__}")
    return list(examples)


def _labels(tp: Any, rng: np.random.Generator, n: int) -> list[Any] | None:
    """``n`` random values of the type ``tp``, or None when assay cannot make one up."""
    if tp is bool:
        return [bool(v) for v in rng.integers(0, 2, n)]
    if tp is int or tp is Hashable:
        return [int(v) for v in rng.integers(0, 3, n)]
    if tp is float:
        return [round(float(v), 3) for v in rng.normal(size=n)]
    if tp is str:
        return [" ".join(rng.choice(_WORDS, size=int(k))) for k in rng.integers(1, 4, n)]
    if typing.get_origin(tp) is list and typing.get_args(tp) == (str,):
        return [list(rng.choice(_WORDS, size=int(k))) for k in rng.integers(1, 4, n)]
    return None


def generate_metric_sample(metric: Any, *, n: int = 12, seed: int = 0) -> dict[str, Any] | None:
    """An example for ``metric`` made from its ``prediction_type``, or None when the type is not one assay generates.

    The references agree with the predictions on about half of the instances, more often
    towards the end, so the scores are neither all perfect nor all zero and the thirds of
    the data (the shards of the shard-then-merge check) score differently.
    """
    try:
        tp = _resolve_type(getattr(metric, "prediction_type", None))
    except Exception:  # noqa: BLE001 - an unknown type is just one assay cannot generate
        return None
    rng = np.random.default_rng(seed)
    predictions = _labels(tp, rng, n)
    if predictions is None:
        return None
    if not getattr(metric, "needs_references", True):
        return {"predictions": predictions, "references": None}
    others = _labels(tp, rng, n) or predictions
    keep = rng.random(n) < np.linspace(0.1, 0.9, n)  # agreement grows along the data: shards score differently
    references = [[p if k else o] for p, o, k in zip(predictions, others, keep)]
    return {"predictions": predictions, "references": references}


def ue_sample(*, n: int = 40, seed: int = 0) -> dict[str, Any]:
    """Random uncertainty in [0, 1] rounded to one decimal (so there are ties) and binary quality."""
    rng = np.random.default_rng(seed)
    quality = rng.integers(0, 2, n).astype(float)
    quality[:2] = (0.0, 1.0)  # both outcomes present
    uncertainty = np.round(rng.random(n), 1)
    return {"uncertainty": uncertainty, "quality": quality}


def random_map(shape: tuple[int, ...], *, seed: int = 0) -> np.ndarray:
    """A random uncertainty map in [0, 1)."""
    return np.random.default_rng(seed).random(shape)
