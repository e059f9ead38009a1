"""unitxt's three kinds of metric, and pipelines, built on :class:`~assay.metrics.Metric`.

- :class:`InstanceMetric`: a score per instance; the global score is their mean
  (NaN instance scores are left out of the mean, as unitxt does). Additive: the
  statistics are ``(sum of values, number of non-NaN values)`` per score.
- :class:`BulkInstanceMetric`: the same, but instance scores are computed for a whole
  batch at once (a model, a vectorized formula).
- :class:`GlobalMetric`: the score is a function of the whole collection (corpus
  BLEU, ROC AUC); ``reduce`` re-runs it on any subset, instance scores run it on one
  instance.
- :class:`MetricPipeline` (in :mod:`assay.metrics.pipeline`): pre-processing steps, a wrapped metric, score renames.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import EvaluationError
from assay.metrics._unitxt import (
    REDUCTIONS,
    adapt_compute,
    group_key_of,
    group_reduce,
    group_score_name,
    reduce_rows,
)
from assay.metrics.base import Metric, divide, metric_name
from assay.metrics.pipeline import MetricPipeline  # re-exported: it moved to assay.metrics.pipeline

__all__ = ["BulkInstanceMetric", "GlobalMetric", "InstanceMetric", "MetricPipeline"]


def _as_score_dict(value: Any, names: Sequence[str], metric: Metric) -> dict[str, float]:
    if isinstance(value, Mapping):
        return {k: float(value[k]) if value[k] is not None else math.nan for k in value}
    if len(names) != 1:
        raise EvaluationError(
            f"Metric {metric_name(metric)!r} reports scores {list(names)}; its instance score must be a dict, "
            f"got {type(value).__name__}."
        )
    return {names[0]: float(value) if value is not None else math.nan}


class _MeanOfInstances(Metric):
    """Shared machinery of instance and bulk metrics: a reduction of per-instance scores.

    The intermediate of an instance is its row of scores followed by "is defined"
    flags. With the mean only (the default) the rows are additive statistics; with
    another reduction of ``reduction_map`` (``max``, ``median``, ``weighted_win_rate``)
    the rows are gathered and reduced as a collection.
    """

    additive = True
    vectorized = True
    #: names of the per-instance scores (default: ``[main_score]``)
    score_names: Sequence[str] | None = None
    #: unitxt's spelling: ``{"mean": [score names], "max": [...], ...}`` or ``{"group_mean": {...}}``
    #: (see docs/unitxt.md)
    reduction_map: Mapping[str, Any] | None = None
    #: unitxt's ``group_mean``: the task_data field that splits a group into sub-groups for the aggregation
    subgroup_column: str | None = None
    _supported_reductions = tuple(REDUCTIONS)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        rmap = vars(cls).get("reduction_map")
        if rmap:
            additive = all(REDUCTIONS[how] for how in rmap)
            cls.additive = additive
            cls.vectorized = additive

    @property
    def _group_spec(self) -> Mapping[str, Any] | None:
        return (self.reduction_map or {}).get("group_mean")

    @property
    def resample_groups_by(self) -> str | None:
        """``"group_id"`` when a ``group_mean`` reduction resamples the groups as units (unitxt's ``fixed_``)."""
        spec = self._group_spec
        return "group_id" if spec is not None and spec["agg_func"][2] else None

    @property
    def names(self) -> tuple[str, ...]:
        if self.score_names:
            return tuple(self.score_names)
        spec = self._group_spec
        if spec is not None:
            return tuple(spec.get("score_fields") or (self.main_score,))
        if self.reduction_map:
            return tuple(dict.fromkeys(name for names in self.reduction_map.values() for name in names))
        return (self.main_score,)

    @property
    def n_stats(self) -> int:  # type: ignore[override]
        return 2 * len(self.names)

    def _reduction_of(self) -> dict[str, str]:
        out = dict.fromkeys(self.names, "mean")
        if self._group_spec is not None:
            return dict.fromkeys(self.names, "group_mean")
        for how, names in (self.reduction_map or {}).items():
            out.update(dict.fromkeys(names, how))
        return out

    def _grouped(self, rows: np.ndarray, task_data: Sequence[Any] | None) -> Any:
        """With ``group_mean``: each row with its ``(group, subgroup)`` from ``task_data``; else the rows."""
        if self._group_spec is None:
            return rows
        tds = task_data if task_data is not None else [None] * len(rows)
        owner = metric_name(self)
        return [(row, *group_key_of(td, self.subgroup_column, i, owner)) for i, (row, td) in enumerate(zip(rows, tds))]

    def _plain_rows(self, intermediates: Any) -> np.ndarray:
        if self._group_spec is not None:
            k = len(self.names)
            return np.asarray([item[0] for item in intermediates], dtype=float).reshape(-1, 2 * k)
        return np.asarray(intermediates, dtype=float).reshape(-1, 2 * len(self.names))


    def _rows(self, scores: Sequence[Any]) -> np.ndarray:
        names = self.names
        vals = np.full((len(scores), len(names)), np.nan)
        for i, sc in enumerate(scores):
            d = _as_score_dict(sc, names, self)
            for j, name in enumerate(names):
                if name not in d:
                    raise EvaluationError(
                        f"Metric {metric_name(self)!r} did not report score {name!r} for instance {i}; got {sorted(d)}."
                    )
                vals[i, j] = d[name]
        ok = np.isfinite(vals)
        return np.concatenate([np.where(ok, vals, 0.0), ok.astype(float)], axis=1)

    def reduce(self, totals: np.ndarray) -> dict[str, Any]:
        spec = self._group_spec
        if spec is not None:  # (row, group, subgroup) items: unitxt's group_mean
            # each group score under its own name (the main score) and under unitxt's name,
            # [fixed_]group_<agg>_<score> (a score_prefix goes in front, as for every assay score)
            values = group_reduce(totals, self.names, spec, self.subgroup_column)
            return {**values, **{group_score_name(spec, name): v for name, v in values.items()}}
        if not self.additive:  # gathered rows: reduce the collection (max, median, win rate)
            return reduce_rows(np.asarray(totals, dtype=float), self.names, self._reduction_of())
        totals = np.asarray(totals, dtype=float)
        k = len(self.names)
        sums, counts = totals[..., :k], totals[..., k:]
        means = divide(sums, counts)
        return {name: means[..., j] for j, name in enumerate(self.names)}

    def instance_scores(self, intermediates: Any) -> list[dict[str, float]]:
        names = self.names
        k = len(names)
        arr = self._plain_rows(intermediates)
        vals = np.where(arr[:, k:] > 0, arr[:, :k], np.nan)
        return [dict(zip(names, row)) for row in vals.tolist()]

    def instance_columns(self, intermediates: Any) -> dict[str, np.ndarray] | None:
        names = self.names
        k = len(names)
        arr = self._plain_rows(intermediates)
        out = {}
        for j, name in enumerate(names):
            defined = arr[:, k + j] > 0
            # every instance defined (the common case): a view of the rows, no copy at 10 million instances
            out[name] = arr[:, j] if defined.all() else np.where(defined, arr[:, j], np.nan)
        return out

    def proportions(self, intermediates: Any) -> dict[str, tuple[float, float]]:
        """A mean score whose instance values are all 0 or 1 is a proportion (Wilson applies)."""
        k = len(self.names)
        arr = self._plain_rows(intermediates)
        out: dict[str, tuple[float, float]] = {}
        reduction_of = self._reduction_of()
        for j, name in enumerate(self.names):
            if reduction_of[name] != "mean":
                continue
            ok = arr[:, k + j] > 0
            v = arr[ok, j]
            if np.all((v == 0) | (v == 1)):
                out[name] = (float(v.sum()), float(ok.sum()))
        return out


class InstanceMetric(_MeanOfInstances):
    """A metric scored on each instance alone; the global score is the mean.

    Implement :meth:`compute_instance`, returning a float (the ``main_score``) or a
    dict with every name in ``score_names``. NaN instance scores are excluded from the
    mean; a global score with no valid instance is NaN.

    .. math:: \\text{score} = \\frac{1}{|V|} \\sum_{i \\in V} s_i, \\quad V = \\{i : s_i \\text{ is not NaN}\\}

    Examples
    --------
    >>> class ExactMatch(InstanceMetric):
    ...     main_score = "exact_match"
    ...     def compute_instance(self, prediction, references, task_data=None):
    ...         return float(prediction in references)
    >>> ExactMatch().update(["a", "b"], [["a"], ["c"]]).compute_scores()["exact_match"]
    0.5

    unitxt's spelling runs as written: ``compute(self, references, prediction,
    task_data)`` (moved to ``compute_instance`` when the class is created; ``task_data``
    is ``{}`` when none is given), ``reduction_map = {"mean": [...]}`` (also ``"max"``,
    ``"median"``, ``"weighted_win_rate"``), annotated options as constructor keywords.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        adapt_compute(cls, "instance")
        super().__init_subclass__(**kwargs)

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float | Mapping[str, float]:
        raise NotImplementedError(f"{type(self).__name__} must implement compute_instance()")

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> Any:
        return self.map_batch([prediction], [references], [task_data])[0]

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                  task_data: Sequence[Any] | None) -> Any:
        n = len(predictions)
        refs = references if references is not None else [None] * n
        tds = task_data if task_data is not None else [None] * n
        rows = self._rows([self.compute_instance(p, r, t) for p, r, t in zip(predictions, refs, tds)])
        return self._grouped(rows, task_data)


class BulkInstanceMetric(_MeanOfInstances):
    """Instance scores computed for a batch at once; the global score is their mean.

    Implement :meth:`compute_bulk`, returning one float or dict per instance (as
    :meth:`InstanceMetric.compute_instance` does for one). unitxt's
    ``compute(self, references, predictions, task_data)`` returning a list runs as written.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        adapt_compute(cls, "bulk")
        super().__init_subclass__(**kwargs)

    def compute_bulk(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                     task_data: Sequence[Any] | None) -> Sequence[float | Mapping[str, float]]:
        raise NotImplementedError(f"{type(self).__name__} must implement compute_bulk()")

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> np.ndarray:
        return self.map_batch([prediction], [references], [task_data])[0]

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                  task_data: Sequence[Any] | None) -> np.ndarray:
        scores = self.compute_bulk(predictions, references, task_data)
        if isinstance(scores, np.ndarray) and scores.ndim == 1 and len(self.names) == 1:
            scores = scores.tolist()
        if len(scores) != len(predictions):
            raise EvaluationError(
                f"compute_bulk of metric {metric_name(self)!r} returned {len(scores)} scores for "
                f"{len(predictions)} instances."
            )
        return self._grouped(self._rows(scores), task_data)


class GlobalMetric(Metric):
    """A metric defined on the whole collection (corpus BLEU, ROC AUC, correlations).

    Implement :meth:`compute_global`, returning a float (the ``main_score``) or a
    dict of named scores. The intermediate of an instance is the triple
    ``(prediction, references, task_data)``; confidence intervals re-run
    ``compute_global`` on every resample, so prefer an additive :class:`Metric` when the
    score is a function of summed statistics.

    unitxt's spelling runs as written: ``compute(self, references, predictions,
    task_data)`` (note the order; moved to ``compute_global`` when the class is created),
    ``process_single_instances = False`` (no instance scores; ``per_instance`` follows
    it), ``single_reference_per_prediction``, ``n_resamples = 0`` and
    ``_requirements_list``.
    """

    #: unitxt: score each instance alone too (instance scores); ``per_instance`` follows it
    process_single_instances: bool = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        adapt_compute(cls, "global")
        super().__init_subclass__(**kwargs)
        if "process_single_instances" in vars(cls) and "per_instance" not in vars(cls):
            cls.per_instance = bool(vars(cls)["process_single_instances"])

    def compute_global(self, predictions: list[Any], references: list[Any],
                       task_data: list[Any]) -> float | Mapping[str, float]:
        raise NotImplementedError(f"{type(self).__name__} must implement compute_global()")

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> tuple[Any, Any, Any]:
        return (prediction, references, task_data)

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                  task_data: Sequence[Any] | None) -> list[tuple[Any, Any, Any]]:
        n = len(predictions)
        refs = references if references is not None else [None] * n
        tds = task_data if task_data is not None else [None] * n
        return list(zip(predictions, refs, tds))

    def reduce(self, intermediates: Sequence[tuple[Any, Any, Any]]) -> dict[str, float]:
        preds = [t[0] for t in intermediates]
        refs = [t[1] for t in intermediates]
        tds = [t[2] for t in intermediates]
        value = self.compute_global(preds, refs, tds)
        return _as_score_dict(value, (self.main_score,), self)
