"""The downstream-task protocol that ``assay_register_tasks`` plugins implement (the contract; the runner that
calls it is the ValUES workflow of the ``assay-segmentation`` plugin, :mod:`assay_segmentation.downstream`).

A task turns the images of one experiment version and split into a nested result tree
``{image_id: {unc_type: {aggregation: {"metrics": {...}}}}, "mean": {...}}`` (levels a
metric does not depend on are left out; set-level metrics have only ``"mean"``).

The runner (:func:`assay_segmentation.downstream.run_experiments`) calls, for every version:

1. when ``fit_split`` is set: :meth:`Task.fit_image` on each image of that split (in
   parallel), then :meth:`Task.fit` on the gathered values; the result is ``ctx.fitted``;
2. :meth:`Task.image_metrics` on each image of each dataset split (in parallel over
   images, through an executor; the task object and context are sent once per worker);
3. :meth:`Task.reduce` with ``{image_id: image_metrics result}`` (keys are
   ``"split/image_id"`` for tasks with ``combine_splits``), which returns the tree the
   runner writes atomically to ``OUTPUT/pred_model/version/split/FILE`` (or
   ``OUTPUT/pred_model/version/FILE`` when splits are combined).

Task objects and what ``image_metrics`` returns must be picklable (module-level attrs
classes and plain data).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import attrs
import numpy as np

from assay.errors import InvalidParameterError

__all__ = ["ExperimentVersion", "ImageData", "MetricInfo", "Task", "TaskContext", "mean_tree"]

LEVELS = ("unc_type", "aggregation")


@attrs.frozen
class ExperimentVersion:
    """One experiment version: a prediction model with one value of every iterated parameter.

    ``data_dir`` holds the version's splits (``data_dir / split``); results go to
    ``output_dir / split``. ``aggregations`` maps the name used in results to the
    registered aggregation spec (``"patch_max[patch_size=10]"``).
    """

    experiment: str
    pred_model: str
    params: dict[str, Any]
    version_name: str
    unc_types: tuple[str, ...]
    aggregations: dict[str, str]
    data_dir: Path
    output_dir: Path
    references: str | None = None
    settings: dict[str, Any] = attrs.field(factory=dict)

    @property
    def key(self) -> str:
        """A stable identifier: ``pred_model/version_name``."""
        return f"{self.pred_model}/{self.version_name}"

    def group_params(self, over: str = "seed") -> dict[str, Any]:
        """The parameters without ``over``: versions with equal group params differ only in ``over``."""
        return {k: v for k, v in self.params.items() if k != over}

    def reference_dir(self, split: str, base_path: str) -> Path | None:
        if self.references is None:
            return None
        return Path(self.references.format(split=split, base_path=base_path, **self.params))

    def to_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.experiment, "pred_model": self.pred_model, "params": self.params,
            "version_name": self.version_name, "unc_types": list(self.unc_types),
            "aggregations": dict(self.aggregations), "data_dir": str(self.data_dir),
            "output_dir": str(self.output_dir),
        }


@attrs.frozen
class ImageData:
    """The arrays of one image of one experiment version and split (what tasks receive)."""

    image_id: str
    split: str
    pred_seg: np.ndarray | None = None
    pred_samples: np.ndarray | None = None
    ref_segs: np.ndarray | None = None
    uncertainty: dict[str, np.ndarray] = attrs.field(factory=dict)
    aggregated: dict[str, dict[str, float]] = attrs.field(factory=dict)

    def require(self, kind: str) -> np.ndarray:
        value = self.uncertainty.get(kind) if kind not in ("pred_seg", "pred_samples", "ref_segs") \
            else getattr(self, kind)
        if value is None:
            raise InvalidParameterError(f"Image {self.image_id!r} of split {self.split!r} has no {kind!r} array.")
        return value


@attrs.frozen
class MetricInfo:
    """A metric a task writes: its key, orientation, and the levels it depends on.

    ``levels`` is a subset of ``("unc_type", "aggregation")`` (every metric depends on
    the prediction model); ``per_image`` tells whether per-image entries exist.
    """

    name: str
    higher_is_better: bool
    levels: tuple[str, ...] = ()
    per_image: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "higher_is_better": self.higher_is_better, "levels": list(self.levels),
                "per_image": self.per_image}


@attrs.frozen
class TaskContext:
    """What a task knows about the version and split it is working on."""

    version: ExperimentVersion
    split: str
    splits: tuple[str, ...]
    aggregations: dict[str, dict[str, Callable[[Any], float]]]
    base_path: str
    output_dir: Path
    fitted: Any = None


class Task:
    """Base class of downstream tasks; see the module docstring for the protocol."""

    #: the registered name, and the stem of the result file (``NAME.json``)
    name: ClassVar[str] = ""
    #: the metrics this task writes
    metrics: ClassVar[tuple[MetricInfo, ...]] = ()
    #: dataset splits used when the config gives no ``datasets``
    default_datasets: ClassVar[tuple[str, ...]] = ("id",)
    #: arrays loaded per image: "pred_seg", "pred_samples", "ref_segs", "uncertainty", "aggregated"
    needs: ClassVar[frozenset[str]] = frozenset()
    #: one result over all dataset splits together (e.g. OoD detection: id vs ood)
    combine_splits: ClassVar[bool] = False
    #: a split to fit on before evaluating (e.g. "val" for Platt scaling), or None
    fit_split: ClassVar[str | None] = None

    @property
    def file_name(self) -> str:
        return f"{self.name}.json"

    def fit_image(self, image: ImageData, ctx: TaskContext) -> Any:  # pragma: no cover - optional
        return None

    def fit(self, per_image: dict[str, Any], ctx: TaskContext) -> Any:  # pragma: no cover - optional
        return None

    def image_metrics(self, image: ImageData, ctx: TaskContext) -> Any:
        """Per-image values (picklable); ``None`` when the task works on the set only."""
        return None

    def reduce(self, per_image: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
        """The nested result tree of one version and split."""
        raise NotImplementedError(f"{type(self).__name__} must implement reduce(per_image, ctx)")


def _finite_mean(values: list[float], where: str) -> float:
    finite = [v for v in values if v is not None and not math.isnan(v)]
    if len(finite) < len(values):
        warnings.warn(f"{where}: {len(values) - len(finite)} of {len(values)} images have no value (NaN); "
                      "the mean is over the others.", RuntimeWarning, stacklevel=3)
    return math.fsum(finite) / len(finite) if finite else float("nan")


def mean_tree(per_image: dict[str, dict[str, Any]], *, where: str = "mean") -> dict[str, Any]:
    """The leaf-wise mean of per-image trees of identical shape (NaN leaves skipped, with a warning).

    >>> mean_tree({"a": {"u": {"metrics": {"x": 1.0}}}, "b": {"u": {"metrics": {"x": 3.0}}}})
    {'u': {'metrics': {'x': 2.0}}}
    """
    trees = list(per_image.values())
    if not trees:
        return {}

    def walk(nodes: list[Any], path: str) -> Any:
        first = nodes[0]
        if isinstance(first, dict):
            return {k: walk([n[k] for n in nodes if isinstance(n, dict) and k in n], f"{path}.{k}") for k in first}
        return _finite_mean([float(n) for n in nodes], path)

    return walk(trees, where)
