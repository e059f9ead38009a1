"""Metrics: ``map`` each instance, ``reduce`` any collection, and everything else follows.

How to write a metric
=====================

A metric turns each instance ``(prediction, references, task_data)`` into an
*intermediate* (:meth:`Metric.map`) and any collection of intermediates into named
scores (:meth:`Metric.reduce`). From those two methods assay derives the global score,
per-instance scores, streaming (``update`` / ``compute`` / ``reset`` / ``merge``),
sharded evaluation, bootstrap confidence intervals and paired significance tests.

Pick the simplest base that fits:

``InstanceMetric``
    One score per instance, global = mean (NaN instances left out). Implement
    ``compute_instance(prediction, references, task_data) -> float | dict``::

        class ExactMatch(InstanceMetric):
            main_score = "exact_match"
            prediction_type = str
            def compute_instance(self, prediction, references, task_data=None):
                return float(prediction in references)

``BulkInstanceMetric``
    The same, computed for a batch at once: ``compute_bulk(predictions, references,
    task_data) -> list``.

``GlobalMetric``
    A function of the whole collection: ``compute_global(predictions, references,
    task_data) -> float | dict``. Simple, but confidence intervals re-run it on each
    resample.

``Metric`` with ``additive = True`` (the fast path)
    ``map`` returns a fixed-length vector of sufficient statistics that **sum** over
    instances (correct/total, tp/fp/fn, BLEU n-gram matches and totals), and ``reduce``
    receives their summed vector. Shards merge by addition; a bootstrap resample costs
    a matrix product of resample counts with the statistics (and with few distinct
    statistic rows, no index matrix at all). Set ``vectorized = True`` when ``reduce``
    also accepts a ``(B, n_stats)`` array and returns arrays of shape ``(B,)``::

        class Accuracy(Metric):
            main_score = "accuracy"
            additive = True
            vectorized = True
            n_stats = 2
            def map(self, prediction, references, task_data=None):
                return [float(prediction in references), 1.0]     # correct, total
            def reduce(self, totals):
                return {"accuracy": divide(totals[..., 0], totals[..., 1])}

``Metric`` (non-additive)
    ``reduce`` receives the collection of intermediates itself (a list, or the array
    ``map_batch`` returned); override ``map_batch`` to return an array for speed (ROC
    AUC keeps ``(score, label)`` rows). Set ``per_instance = False`` when the metric is
    undefined on a single instance.

Declared metadata (class attributes): ``main_score``, ``higher_is_better``,
``prediction_type`` (checked before ``map``; the error names the instance),
``ci_scores`` (default ``[main_score]``), ``requirements`` (``{"module": "pip-dist"}``,
checked on first use with an install hint), ``examples`` (sample inputs for the common
conformance suite: a list of dicts with ``predictions``, ``references``, optional
``task_data``, ``overrides`` and ``global_target``), ``needs_references`` (default
``True``: missing references are an error; ``False`` for metrics of the predictions
alone). Anything else a metric class declares must be read by its methods or annotated
as its own option (``tolerance: float = 0``); unknown or misspelt attributes are an error
when the class is created (see ``docs/metrics.md``), and unitxt's attributes
(``reduction_map`` ...) need the assay-unitxt plugin (``docs/unitxt.md``). The
constructor takes keyword-only options and ``score_prefix`` (a ``str``:
``super().__init__(score_prefix=score_prefix)``); the
registry checks catalog overrides (``"f1[average=macro]"``) against that signature.
Zero denominators: use :func:`divide` (NaN, or ``zero_division=``), never a crash.
Override ``proportions(intermediates) -> {score: (successes, trials)}`` for scores that
are proportions of independent trials (accuracy), so ``ci_method="wilson"`` applies.

Register it from a plugin::

    from assay import hookimpl

    @hookimpl
    def assay_register_metrics(register):
        register("exact_match", ExactMatch, description="Share of predictions found among the references")

then ``assay.evaluate(predictions, references, metrics=["exact_match"])`` and test it with
:func:`assay.testing.test_metric`.
"""

from __future__ import annotations

from typing import Any

from assay._relocated import alias_module
from assay.metrics.base import Metric, MetricState, check_prediction_type, divide
from assay.metrics.kinds import BulkInstanceMetric, GlobalMetric, InstanceMetric

__all__ = [
    "BulkInstanceMetric",
    "Copy",
    "GlobalMetric",
    "HuggingfaceMetric",
    "InstanceMetric",
    "ListFieldValues",
    "Metric",
    "MetricPipeline",
    "MetricState",
    "Rename",
    "check_prediction_type",
    "compare",
    "divide",
    "evaluate",
]


#: names that moved to plugins -> the plugin module that defines them now (read on first use)
_MOVED_UNITXT = {"MetricPipeline": "assay_unitxt.pipeline", "Copy": "assay_unitxt.operators",
                 "Rename": "assay_unitxt.operators", "ListFieldValues": "assay_unitxt.operators"}
_MOVED_INTEROP = {"HuggingfaceMetric": "assay_interop.huggingface"}
_unitxt_getattr, _unitxt_dir = alias_module(__name__, _MOVED_UNITXT, "assay-unitxt", own=globals())
_interop_getattr, _interop_dir = alias_module(__name__, _MOVED_INTEROP, "assay-interop")
_API = ("evaluate", "compare", "EvaluationResults", "Comparison")


def __getattr__(name: str) -> Any:
    if name in _API:
        from assay.metrics import api  # evaluate / compare live in assay.metrics.api (imported on use)

        return getattr(api, name)
    if name in _MOVED_UNITXT:
        return _unitxt_getattr(name)
    return _interop_getattr(name)


def __dir__() -> list[str]:
    return sorted({*_unitxt_dir(), *_interop_dir(), *_API})
