"""assay-unitxt: unitxt's metric code runs on assay with only its imports changed.

- :class:`~assay_unitxt.pipeline.MetricPipeline` and unitxt's field operators
  (:class:`~assay_unitxt.operators.Copy`, :class:`~assay_unitxt.operators.Rename`,
  :class:`~assay_unitxt.operators.ListFieldValues` ...);
- unitxt's class attributes on assay's ``InstanceMetric`` / ``BulkInstanceMetric`` /
  ``GlobalMetric`` (``compute(self, references, prediction, task_data)``, ``reduction_map``
  with ``max`` / ``median`` / ``weighted_win_rate`` / ``group_mean``, ``subgroup_column``,
  ``process_single_instances``, ``_requirements_list``), honoured through assay's
  class-attribute handlers (:mod:`assay_unitxt.attributes`);
- the ``group_mean`` aggregations (:mod:`assay_unitxt.group_aggregations`);
- unitxt's ``metrics.*`` catalog names (:mod:`assay_unitxt.catalog`) and its ``Task``
  (:class:`~assay_unitxt.task.Task`).

The old paths (``assay.metrics.MetricPipeline``, ``assay.metrics.operators.Copy`` ...) keep
importing these. See ``docs/unitxt.md`` and ``docs/unitxt-catalog.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay_unitxt.operators import Copy, CopyFields, ListFieldValues, Rename, RenameFields
    from assay_unitxt.pipeline import MetricPipeline
    from assay_unitxt.task import Task

__all__ = ["Copy", "CopyFields", "ListFieldValues", "MetricPipeline", "Rename", "RenameFields", "Task"]

# the plugin's entry point (assay_unitxt.plugin) imports this package: it stays cheap, the names load on first use
_WHERE = {"MetricPipeline": "assay_unitxt.pipeline", "Task": "assay_unitxt.task", **dict.fromkeys(
    ["Copy", "CopyFields", "ListFieldValues", "Rename", "RenameFields"], "assay_unitxt.operators")}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'assay_unitxt' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
