"""The ValUES workflow: experiment configs, the grid of versions, the runner and its result trees.

Many prediction models x uncertainty types x aggregations x seeds, each evaluated on
several downstream tasks (:class:`assay.downstream.Task`, registered with
``assay_register_tasks``: this plugin registers OoD detection, failure detection,
calibration, ambiguity modelling, segmentation performance and AL improvement), written as
nested JSON result trees::

    from assay_segmentation.downstream import run_experiments
    summary = run_experiments("examples/segmentation.yaml", executor="processes[workers=4]")

Then ``assay table RESULTS`` and ``assay plot RESULTS --along pred_model`` (see
:mod:`assay_segmentation.report`). Configs are composed with Hydra and interpolated with
OmegaConf (:mod:`assay_segmentation.downstream.compose`). Moved here from ``assay.downstream``,
where the names still import (lazily) and the task contract stays.
"""

from __future__ import annotations

from assay.downstream import ExperimentVersion, ImageData, MetricInfo, Task, TaskContext, mean_tree
from assay_segmentation.downstream.config import ConfigError, load_config, validate_config
from assay_segmentation.downstream.data import list_images, load_image
from assay_segmentation.downstream.grid import build_grid
from assay_segmentation.downstream.results import MANIFEST, RunSummary, read_json, read_manifest, write_json_atomic
from assay_segmentation.downstream.runner import run_experiments

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
