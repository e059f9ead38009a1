"""The three kinds of metric of unitxt's design, built on :class:`~assay.metrics.Metric`.

- :class:`InstanceMetric`: a score per instance; the global score is their mean
  (NaN instance scores are left out of the mean, as unitxt does). Additive: the
  statistics are ``(sum of values, number of non-NaN values)`` per score.
- :class:`BulkInstanceMetric`: the same, but instance scores are computed for a whole
  batch at once (a model, a vectorized formula).
- :class:`GlobalMetric`: the score is a function of the whole collection (corpus
  BLEU, ROC AUC); ``reduce`` re-runs it on any subset, instance scores run it on one
  instance.

unitxt's own spellings on these bases (``compute(self, references, prediction,
task_data)``, ``reduction_map`` with ``max`` / ``median`` / ``weighted_win_rate`` /
``group_mean``, ``process_single_instances``, ``_requirements_list``) and
``MetricPipeline`` are the assay-unitxt plugin's: it honours them through class-attribute
handlers (:mod:`assay.metrics._attributes`) and, for reductions other than the mean, an
:class:`InstanceReduction` set on the class.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol

from assay._relocated import alias_module
from assay.deferred import np
from assay.errors import EvaluationError
from assay.metrics.base import Metric, divide, metric_name

__all__ = ["BulkInstanceMetric", "GlobalMetric", "InstanceMetric", "InstanceReduction", "MetricPipeline"]  # noqa: F822

# assay.metrics.kinds.MetricPipeline, an older path: the class is assay-unitxt's now
__getattr__, __dir__ = alias_module(__name__, {"MetricPipeline": "assay_unitxt.pipeline"}, "assay-unitxt",
                                    own=globals())


class InstanceReduction(Protocol):
    """How the instance scores of an instance or bulk metric become global scores, when not their mean.

    Set as the class attribute ``instance_reduction`` (by a plugin's class-attribute handler:
    assay-unitxt's ``reduction_map``). The rows it receives are an instance's scores followed
    by their "is defined" flags (``2k`` floats for ``k`` score names).

    ``additive``: the global scores are still the means (the rows are summed statistics;
    only :meth:`score_names` applies). Otherwise :meth:`reduce` receives the gathered
    intermediates (what :meth:`attach` made of the rows).
    """

    additive: bool

    def score_names(self, metric: Any) -> tuple[str, ...] | None:
        """The instance score names (``None``: ``score_names`` or ``[main_score]``)."""

    def attach(self, rows: np.ndarray, task_data: Sequence[Any] | None, metric: Any) -> Any:
        """The intermediates of a batch from its rows (and its task_data, e.g. a group key per row)."""

    def rows(self, intermediates: Any) -> Any:
        """The rows back from intermediates (what :meth:`attach` made)."""

    def reduce(self, intermediates: Any, metric: Any) -> dict[str, Any]:
        """The global scores of gathered intermediates (non-additive reductions)."""

    def reduction_of(self, name: str) -> str:
        """The reduction of score ``name`` (``"mean"`` scores may be proportions: Wilson intervals)."""

    def resample_groups_by(self) -> str | None:
        """A task_data key whose groups the intervals resample as units, or None."""


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
    flags. With the mean (the default) the rows are additive statistics; a class whose
    ``instance_reduction`` is not additive gathers the rows (with what its
    :meth:`InstanceReduction.attach` adds) and reduces the collection.
    """

    additive = True
    vectorized = True
    #: names of the per-instance scores (default: ``[main_score]``)
    score_names: Sequence[str] | None = None
    #: how instance scores become global scores when not their mean (None: the mean); see :class:`InstanceReduction`
    instance_reduction: ClassVar[InstanceReduction | None] = None

    @property
    def resample_groups_by(self) -> str | None:
        """A task_data key whose groups the intervals resample as units (unitxt's ``fixed_`` group_mean), or None."""
        r = self.instance_reduction
        return r.resample_groups_by() if r is not None else None

    @property
    def names(self) -> tuple[str, ...]:
        if self.score_names:
            return tuple(self.score_names)
        r = self.instance_reduction
        names = r.score_names(self) if r is not None else None
        return tuple(names) if names else (self.main_score,)

    @property
    def n_stats(self) -> int:  # type: ignore[override]
        return 2 * len(self.names)

    def _grouped(self, rows: np.ndarray, task_data: Sequence[Any] | None) -> Any:
        """The intermediates of a batch: its rows, or what the reduction attaches to them."""
        r = self.instance_reduction
        return rows if r is None else r.attach(rows, task_data, self)

    def _plain_rows(self, intermediates: Any) -> np.ndarray:
        r = self.instance_reduction
        if r is not None:
            intermediates = r.rows(intermediates)
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
        r = self.instance_reduction
        if r is not None and not r.additive:
            return r.reduce(totals, self)
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
        r = self.instance_reduction
        for j, name in enumerate(self.names):
            if r is not None and r.reduction_of(name) != "mean":
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

    Annotated options are constructor keywords. unitxt's spelling (``compute(self,
    references, prediction, task_data)``, ``reduction_map``) runs as written with the
    assay-unitxt plugin (``docs/unitxt.md``).
    """

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
    ``compute(self, references, predictions, task_data)`` returning a list runs as written
    with the assay-unitxt plugin.
    """

    def compute_bulk(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                     task_data: Sequence[Any] | None) -> Sequence[float | Mapping[str, float]]:
        raise NotImplementedError(f"{type(self).__name__} must implement compute_bulk()")

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> np.ndarray:
        row: np.ndarray = self.map_batch([prediction], [references], [task_data])[0]
        return row

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
        rows: np.ndarray = self._grouped(self._rows(scores), task_data)
        return rows


class GlobalMetric(Metric):
    """A metric defined on the whole collection (corpus BLEU, ROC AUC, correlations).

    Implement :meth:`compute_global`, returning a float (the ``main_score``) or a
    dict of named scores. The intermediate of an instance is the triple
    ``(prediction, references, task_data)``; confidence intervals re-run
    ``compute_global`` on every resample, so prefer an additive :class:`Metric` when the
    score is a function of summed statistics.

    ``single_reference_per_prediction`` and ``n_resamples = 0`` are options of every
    metric. unitxt's spelling (``compute(self, references, predictions, task_data)``,
    ``process_single_instances``, ``_requirements_list``) runs as written with the
    assay-unitxt plugin.
    """

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
