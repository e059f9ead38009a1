"""Downstream tasks for uncertainty maps: the contract a task plugin implements.

A downstream task (registered with ``assay_register_tasks``) is a :class:`Task` that turns
the :class:`ImageData` of one :class:`ExperimentVersion` and split into a nested result
tree, its metrics described by :class:`MetricInfo` (see :mod:`assay.downstream.task`).

The ValUES workflow that runs tasks (experiment configs composed with Hydra, the grid of
versions, result trees, ``assay run``) lives in the ``assay-segmentation`` plugin
(:mod:`assay_segmentation.downstream`); its names still import from here, loaded on first
use, and without the plugin they are a :class:`~assay.errors.MissingDependencyError`
naming ``pip install assay-segmentation``::

    from assay.downstream import run_experiments
    summary = run_experiments("examples/segmentation.yaml", executor="processes[workers=4]")

Then ``assay table RESULTS`` and ``assay plot RESULTS --along pred_model`` (see
:mod:`assay.report`).
"""

from __future__ import annotations

from assay._relocated import alias_module
from assay.downstream.task import ExperimentVersion, ImageData, MetricInfo, Task, TaskContext, mean_tree
from assay.errors import ConfigError

#: the names of the ValUES workflow, now in assay_segmentation.downstream (assay-segmentation)
_MOVED = ("MANIFEST", "RunSummary", "build_grid", "list_images", "load_config", "load_image", "read_json",
          "read_manifest", "run_experiments", "validate_config", "write_json_atomic")

__all__ = [
    "MANIFEST",
    "ConfigError",
    "ExperimentVersion",
    "ImageData",
    "MetricInfo",
    "RunSummary",
    "Task",
    "TaskContext",
    "build_grid",
    "list_images",
    "load_config",
    "load_image",
    "mean_tree",
    "read_json",
    "read_manifest",
    "run_experiments",
    "validate_config",
    "write_json_atomic",
]

__getattr__, __dir__ = alias_module(__name__, "assay_segmentation.downstream", "assay-segmentation", names=_MOVED,
                                    own=globals())
