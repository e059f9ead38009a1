"""Downstream tasks for uncertainty maps (the ValUES workflow).

Many prediction models x uncertainty types x aggregations x seeds, each evaluated on
several downstream tasks registered by plugins (``assay-segmentation`` registers OoD
detection, failure detection, calibration, ambiguity modelling, segmentation
performance and AL improvement), written as nested JSON result trees::

    from assay.downstream import run_experiments
    summary = run_experiments("examples/segmentation.yaml", executor="processes[workers=4]")

Then ``assay table RESULTS`` and ``assay plot RESULTS --along pred_model`` (see
:mod:`assay.report`).
"""

from __future__ import annotations

from assay.downstream.config import ConfigError, load_config, validate_config
from assay.downstream.data import ImageData, list_images, load_image
from assay.downstream.grid import ExperimentVersion, build_grid
from assay.downstream.results import MANIFEST, read_json, read_manifest, write_json_atomic
from assay.downstream.runner import RunSummary, run_experiments
from assay.downstream.task import MetricInfo, Task, TaskContext, mean_tree

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
