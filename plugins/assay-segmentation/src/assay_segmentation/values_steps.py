"""ValUES' evaluation functions as assay steps on ValUES' experiment tree (``assay run eval_config_*.yaml``).

Each class does what the ValUES function it stands for does, with the same inputs, result
files, file names and JSON keys (see :mod:`assay_segmentation.downstream.values_runner` for the step
protocol). The ValUES dotted paths resolve to them through the aliases of the registered
names (:mod:`assay_segmentation.plugin`):

=====================================================================  ==========================
ValUES ``_target_``                                                    assay step / aggregation
=====================================================================  ==========================
``evaluation.uncertainty_aggregation.find_threshold.get_foreground_quantile``  :class:`ForegroundQuantile`
``...find_threshold.save_foreground_quantiles``                        :class:`SaveForegroundQuantiles`
``...find_threshold.threshold_images_paths``                           :class:`ThresholdImages`
``...find_threshold.find_threshold``                                   :class:`FindThreshold`
``...aggregate_uncertainties.aggregate_uncertainties``                 :class:`AggregateUncertainties`
``...aggregate_uncertainties.patch_level_aggregation``                 ``patch_max``
``...aggregate_uncertainties.image_level_aggregation``                 ``image_sum`` / ``image_mean``
``...aggregate_uncertainties.threshold_aggregation``                   :class:`ValuesThreshold`
``evaluation.metrics.auroc.ood_detection``                             :class:`OodDetectionStep`
``evaluation.metrics.aurc.main``                                       :class:`FailureDetectionStep`
``evaluation.metrics.ace.main``                                        :class:`CalibrationStep`
``evaluation.metrics.ncc.main``                                        :class:`AmbiguityStep`
``evaluation.metrics.al_improvement.main``                             :class:`AlImprovementStep`
``evaluation.split_file_generation.split_files_second_cycle...``       :class:`SplitFilesStep`
=====================================================================  ==========================

Where ValUES' published code cannot run as written, assay does what it evidently means,
and says so: ``find_threshold`` calls ``calculate_threshold_image`` with two arguments
instead of three (a ``TypeError``); assay takes the quantile of ``quantile_analysis.json``
for the prediction model, as that function would.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from itertools import chain
from pathlib import Path
from typing import Any, ClassVar

import attrs
import numpy as np

from assay.downstream import ImageData
from assay.errors import ConfigError, InvalidParameterError
from assay_segmentation.active_learning import BASELINES
from assay_segmentation.aggregations import ImageMean, ImageSum, PatchMax, ThresholdMean, _as_map
from assay_segmentation.measures import ncc
from assay_segmentation.scores import auroc, fit_platt, platt_confidence, values_ace

__all__ = ["AggregateUncertainties", "AlImprovementStep", "AmbiguityStep", "CalibrationStep", "FailureDetectionStep",
           "FindThreshold", "ForegroundQuantile", "OodDetectionStep", "SaveForegroundQuantiles", "SplitFilesStep",
           "ThresholdImages", "ValuesThreshold", "aggregation_details", "patch_level", "image_level",
           "read_metrics", "threshold_aggregation", "values_aurc"]


# --------------------------------------------------------------------------- aggregations
def patch_level(patch_size: int | list[int] = 10, mean: bool = False) -> PatchMax:
    """ValUES' ``patch_level_aggregation(patch_size, mean=False)``: :class:`PatchMax`."""
    if isinstance(patch_size, (list, tuple)):
        if len(set(patch_size)) != 1:
            raise InvalidParameterError(f"patch_size {list(patch_size)}: assay's patch_max takes one side for every "
                                        "axis; give an integer or equal sides")
        patch_size = int(patch_size[0])
    return PatchMax(patch_size=patch_size, mean=mean)


def image_level(mean: bool = False) -> ImageSum | ImageMean:
    """ValUES' ``image_level_aggregation(mean=False)``: the sum (``image_sum``), or with ``mean`` the mean."""
    return ImageMean() if mean else ImageSum()


@attrs.frozen
class ThresholdSum:
    """The sum of the values at or above ``threshold`` (ValUES' ``threshold_aggregation`` with ``mean=False``)."""

    threshold: float

    def __call__(self, uncertainty_map: Any) -> float:
        u = _as_map(uncertainty_map, "threshold_aggregation")
        return float(u[u >= self.threshold].sum(dtype=np.float64))


@attrs.frozen
class ValuesThreshold:
    """ValUES' ``threshold_aggregation``: the threshold given, or read from ``threshold_path`` per model and type.

    The file is ValUES' ``threshold_analysis.json``: ``{pred_model: {"Mean predictive
    threshold": t, ...}}``; the key takes the first word of the uncertainty type.
    """

    threshold: float | None = None
    threshold_path: str | None = None
    mean: bool = True

    def __attrs_post_init__(self) -> None:
        if self.threshold is None and self.threshold_path is None:
            raise InvalidParameterError("A threshold needs to be provided for threshold aggregation: give threshold "
                                        "or threshold_path")

    def requires(self) -> list[Path]:
        return [Path(self.threshold_path)] if self.threshold is None and self.threshold_path else []

    def bind(self, *, pred_model: str, unc_type: str, read_json: Callable[[Path], Any]) -> ThresholdMean | ThresholdSum:
        threshold = self.threshold
        if threshold is None:
            data = read_json(Path(str(self.threshold_path)))
            key = f"Mean {unc_type.split('_')[0]} threshold"
            try:
                threshold = float(data[pred_model][key])
            except (TypeError, KeyError):
                raise InvalidParameterError(f"{self.threshold_path}: no {key!r} for prediction model {pred_model!r} "
                                            "(written by ValUES' find_threshold for every model on the val "
                                            "split)") from None
        return ThresholdMean(threshold=threshold) if self.mean else ThresholdSum(threshold=threshold)

    def __call__(self, uncertainty_map: Any) -> float:
        raise InvalidParameterError("threshold_aggregation reads its threshold per prediction model and uncertainty "
                                    "type: bind() it first (assay run does)")


def threshold_aggregation(threshold: float | None = None, threshold_path: str | None = None,
                          mean: bool = True) -> ValuesThreshold:
    """ValUES' ``threshold_aggregation(threshold=None, threshold_path=None, mean=True)``."""
    return ValuesThreshold(threshold=threshold, threshold_path=threshold_path, mean=mean)


def _bounding_box(u: np.ndarray, side: int, best: float) -> list[list[int]]:
    """ValUES' ``bounding_box``: per axis ``[first, first + side]`` of the first patch (C order) at the maximum."""
    size = tuple(min(side, n) for n in u.shape)
    sums = np.asarray(u, dtype=np.float64)
    for axis, k in enumerate(size):
        c = np.cumsum(sums, axis=axis)
        pad = [(0, 0)] * c.ndim
        pad[axis] = (1, 0)
        c = np.pad(c, pad)
        n = sums.shape[axis]
        sums = np.take(c, np.arange(k, n + 1), axis=axis) - np.take(c, np.arange(0, n - k + 1), axis=axis)
    first = np.argwhere(np.isclose(sums, best))
    origin = first[0] if len(first) else np.unravel_index(int(np.argmax(sums)), sums.shape)
    return [[int(i), int(i) + side] for i in origin]


def aggregation_details(agg: Any, uncertainty_map: np.ndarray) -> dict[str, Any]:
    """What ValUES writes for one aggregation of one map: ``max_score`` and its extras."""
    value = float(agg(uncertainty_map))
    if isinstance(agg, PatchMax):
        best = value * math.prod(min(agg.patch_size, n) for n in np.shape(uncertainty_map)) if agg.mean else value
        return {"max_score": value, "bounding_box": _bounding_box(np.asarray(uncertainty_map), agg.patch_size, best)}
    if isinstance(agg, (ThresholdMean, ThresholdSum)):
        return {"max_score": value, "threshold": agg.threshold}
    return {"max_score": value}


# --------------------------------------------------------------------------- threshold steps
def _save_path(save_path: str, name: str) -> Path:
    """ValUES: ``save_path`` itself when it is a file, else ``save_path / name``."""
    p = Path(save_path)
    return p if p.is_file() or p.suffix == ".json" else p / name


@attrs.frozen
class ForegroundQuantile:
    """``get_foreground_quantile``: ``1 - foreground fraction`` of every prediction file, per model and version."""

    needs: ClassVar[frozenset[str]] = frozenset({"pred_samples"})

    def image_values(self, image: ImageData, ctx: Any) -> list[float]:
        preds = image.require("pred_samples")
        return [1.0 - np.count_nonzero(p) / p.size for p in preds]

    def accumulate(self, per_image: dict[str, Any], ctx: Any) -> dict[str, Any]:
        values = list(chain.from_iterable(per_image[k] for k in sorted(per_image)))
        return {ctx.version.pred_model: {ctx.version.version_name: values}}


@attrs.frozen
class SaveForegroundQuantiles:
    """``save_foreground_quantiles``: per model the mean of every version's quantiles -> ``quantile_analysis.json``."""

    save_path: str

    def outputs(self) -> list[Path]:
        return [_save_path(self.save_path, "quantile_analysis.json")]

    def postprocess(self, results: dict[str, Any], store: Any) -> dict[Path, Any]:
        tree = {method: float(np.mean(list(chain.from_iterable(versions.values()))))
                for method, versions in results.items()}
        return {self.outputs()[0]: tree}


@attrs.frozen
class ThresholdImages:
    """``threshold_images_paths``: the uncertainty maps of every model, version and type (kept for the quantile)."""

    needs: ClassVar[frozenset[str]] = frozenset({"uncertainty"})

    def image_values(self, image: ImageData, ctx: Any) -> dict[str, np.ndarray]:
        return {unc: np.asarray(image.uncertainty[unc]).ravel() for unc in ctx.version.unc_types}

    def accumulate(self, per_image: dict[str, Any], ctx: Any) -> dict[str, Any]:
        keys = sorted(per_image)
        return {ctx.version.pred_model: {ctx.version.version_name: {
            unc: [per_image[k][unc] for k in keys] for unc in ctx.version.unc_types}}}


@attrs.frozen
class FindThreshold:
    """``find_threshold``: per model and type, the model's foreground quantile of every pooled map value.

    Writes ``threshold_analysis.json`` with ``{"Mean <type> threshold": t}`` per model and a
    ``"Mean"`` entry averaging the models ("Softmax" has no aleatoric / epistemic entry).
    """

    quantile_path: str
    save_path: str

    def outputs(self) -> list[Path]:
        return [_save_path(self.save_path, "threshold_analysis.json")]

    def postprocess(self, results: dict[str, Any], store: Any) -> dict[Path, Any]:
        qpath = _save_path(self.quantile_path, "quantile_analysis.json")
        quantiles = store.read_json(qpath)
        if not isinstance(quantiles, dict):
            raise InvalidParameterError(f"find_threshold reads {qpath}, which does not exist: run the foreground "
                                        "quantile step first (ValUES' QUANTILE entry, before THRESHOLD)")
        tree: dict[str, Any] = {}
        for pred_model, versions in results.items():
            pooled: dict[str, list[np.ndarray]] = {}
            for uncs in versions.values():
                for unc, maps in uncs.items():
                    pooled.setdefault(unc, []).extend(maps)
            if pred_model not in quantiles:
                raise InvalidParameterError(f"{qpath}: no foreground quantile for prediction model {pred_model!r}")
            tree[pred_model] = {f"Mean {unc.split('_')[0]} threshold":
                                float(np.quantile(np.concatenate(maps), float(quantiles[pred_model])))
                                for unc, maps in pooled.items()}
        mean: dict[str, float] = {}
        for kind in ("aleatoric", "epistemic", "predictive"):
            values = [v[f"Mean {kind} threshold"] for k, v in tree.items()
                      if f"Mean {kind} threshold" in v and (kind == "predictive" or k != "Softmax")]
            mean[f"Mean {kind} threshold"] = float(np.mean(values)) if values else math.nan
        tree["Mean"] = mean
        return {self.outputs()[0]: tree}


# --------------------------------------------------------------------------- aggregation step
@attrs.frozen
class AggregateUncertainties:
    """``aggregate_uncertainties``: every defined aggregation of every map -> ``aggregated_<type>.json`` per split."""

    aggregations: dict[str, Any]
    needs: ClassVar[frozenset[str]] = frozenset({"uncertainty"})

    def image_values(self, image: ImageData, ctx: Any) -> dict[str, dict[str, Any]]:
        return {unc: {name: aggregation_details(ctx.aggregations[unc][name], image.uncertainty[unc])
                      for name in self.aggregations} for unc in ctx.version.unc_types}

    def version_files(self, per_image: dict[str, Any], ctx: Any, store: Any) -> dict[Path, Any]:
        end = ctx.version.unc_ending
        return {ctx.dataset_path / f"aggregated_{unc}.json": {f"{k}{end}": per_image[k][unc] for k in sorted(per_image)}
                for unc in ctx.version.unc_types}


# --------------------------------------------------------------------------- OoD detection
#: how a user turns ValUES' pickled split file into the JSON assay reads (run by the user, on a file they trust)
CONVERT_SPLITS = ("python -c \"import json, pickle, sys; d = pickle.load(open(sys.argv[1], 'rb')); "
                  "json.dump(d, open(sys.argv[1][:-4] + '.json', 'w'), default=lambda a: a.tolist())\" SPLITS.pkl")


def read_splits(path: Path) -> Any:
    """A ValUES split file as JSON (``splits.json``: the lists of ``splits.pkl``).

    assay never unpickles a user's file, not even through a restricted unpickler: a
    ``splits.pkl`` is an error that gives the one-line conversion to ``splits.json``
    (:data:`CONVERT_SPLITS`), to run by whoever trusts the file.
    """
    if path.suffix == ".pkl":
        json_twin = path.with_suffix(".json")
        raise InvalidParameterError(
            f"{path}: assay does not unpickle files (a pickle can run code). Convert it once to {json_twin.name} "
            f"beside it, if you trust it: {CONVERT_SPLITS.replace('SPLITS.pkl', str(path))}")
    if not path.is_file():
        raise InvalidParameterError(f"No split file {path} (ValUES: BASE_SPLITS_PATH[/shift]/firstCycle/splits.json, "
                                    "converted from ValUES' splits.pkl).")
    from assay.jsonio import read_json

    splits = read_json(path, what="split file")
    if not isinstance(splits, list) or not splits or not all(isinstance(fold, dict) for fold in splits):
        raise InvalidParameterError(f"{path}: expected a JSON list of folds (objects with train, id_unlabeled_pool "
                                    f"and ood_unlabeled_pool), got {_json_kind(splits)}")
    for i, fold in enumerate(splits):
        for key in ("train", "id_unlabeled_pool", "ood_unlabeled_pool"):
            entries = fold.get(key)
            if not isinstance(entries, list) or not all(
                    isinstance(e, str) or (isinstance(e, list) and e and isinstance(e[0], str)) for e in entries):
                raise InvalidParameterError(
                    f"{path}: fold {i}: {key}: expected a list of file names (or [name, dataset] pairs), got "
                    f"{'nothing' if entries is None else _json_kind(entries)}")
    return splits


def _json_kind(value: Any) -> str:
    """How a JSON value reads in an error message: its type, and a short excerpt."""
    return f"a JSON {type(value).__name__} {json.dumps(value)[:60]}"


def _first_cycle_splits(base: str, shift: Any) -> Any:
    root = Path(base) / str(shift) if shift is not None else Path(base)
    json_file = root / "firstCycle" / "splits.json"
    if json_file.is_file() or not (root / "firstCycle" / "splits.pkl").is_file():
        return read_splits(json_file)
    return read_splits(root / "firstCycle" / "splits.pkl")  # an error with the conversion


def _names(pool: Any) -> list[str]:
    return [str(x[0]) if isinstance(x, (tuple, list)) else str(x) for x in list(pool)]


def _toy_ood(image_id: str) -> bool:
    try:
        return int(image_id.split(".")[0]) <= 20
    except ValueError:
        raise InvalidParameterError(f"Image {image_id!r}: ValUES' toy rule (ids up to 20 are OoD) needs numeric image "
                                    "ids; give base_splits_path for a split file instead") from None


@attrs.frozen
class OodDetectionStep:
    """``ood_detection``: AUROC and the OoD detection rate of the aggregated uncertainty -> ``ood_detection.json``.

    Without ``base_splits_path``, ValUES' toy rule: images with a numeric id up to 20 are
    OoD and the rate divides by 21 (a warning says so when the split holds another number
    of OoD images). With it, the first-cycle split file's ``ood_unlabeled_pool`` of fold
    ``fold`` are the OoD images. The rate is the share of OoD images among the 50 % most
    uncertain (a stable sort, ValUES' order). Written per version to
    ``EXP_PATH/ood_detection.json`` (for several dataset splits, as in ValUES, the last
    one's results stay).
    """

    base_splits_path: str | None = None
    needs: ClassVar[frozenset[str]] = frozenset({"aggregated"})

    def image_values(self, image: ImageData, ctx: Any) -> dict[str, dict[str, float]]:
        return image.aggregated

    def version_files(self, per_image: dict[str, Any], ctx: Any, store: Any) -> dict[Path, Any]:
        keys = sorted(per_image)
        params = ctx.version.params
        if self.base_splits_path is not None:
            splits = _first_cycle_splits(self.base_splits_path, params.get("shift"))
            fold = splits[int(params.get("fold", 0))]
            ood_pool = set(_names(fold["ood_unlabeled_pool"]))
            id_pool = set(_names(fold["id_unlabeled_pool"]))
            labels = {}
            for k in keys:
                name = f"{k}.npy"
                if name not in ood_pool and name not in id_pool:
                    raise InvalidParameterError(f"Image {k!r} of {ctx.version.key} is in neither unlabeled pool of "
                                                f"the split file under {self.base_splits_path}")
                labels[k] = name in ood_pool
            n_ood = len(ood_pool)
        else:
            labels = {k: _toy_ood(k) for k in keys}
            n_ood = 21
            if sum(labels.values()) != 21:
                warnings.warn(f"ood_detection {ctx.version.key}: the split holds {sum(labels.values())} OoD images "
                              "(ids up to 20); ValUES' toy rule divides the detection rate by 21 all the same",
                              RuntimeWarning, stacklevel=2)
        y = np.array([labels[k] for k in keys], dtype=int)
        tree: dict[str, Any] = {"mean": {}}
        for unc in ctx.version.unc_types:
            tree["mean"][unc] = {}
            for agg in ctx.version.aggregations:
                scores = np.array([per_image[k][unc][agg] for k in keys], dtype=np.float64)
                values = scores.tolist()
                order = sorted(range(len(keys)), key=values.__getitem__, reverse=True)
                queried = order[: int(len(keys) * 0.5)]
                rate = sum(int(y[i]) for i in queried) / n_ood
                tree["mean"][unc][agg] = {"metrics": {"ood_detection_rate": rate, "auroc": auroc(scores, y)}}
        return {ctx.exp_path / "ood_detection.json": tree}


# --------------------------------------------------------------------------- metrics.json readers
def read_metrics(path: Path, store: Any) -> dict[str, Any]:
    """ValUES' ``metrics.json`` of a split (per-image and mean Dice from its test scripts)."""
    data = store.read_json(path)
    if not isinstance(data, dict):
        raise InvalidParameterError(f"No metrics file {path} (written by ValUES' test scripts: per-image Dice and "
                                    "'mean'); assay reads the Dice there as ValUES does")
    return data


def _dice_of(entry: dict[str, Any]) -> float:
    return float(entry["dice"] if "dice" in entry else entry["metrics"]["dice"])


def image_dice_from_metrics(metrics: dict[str, Any], image_id: str, where: Path) -> float:
    """ValUES' ``get_dice``: the entry named ``image_id``, else the first whose file stem is ``image_id``."""
    if image_id in metrics:
        return _dice_of(metrics[image_id])
    keys = [k for k in metrics if k.split("/")[-1].split(".")[0] == image_id]
    if not keys:
        raise InvalidParameterError(f"{where}: no entry for image {image_id!r}")
    return _dice_of(metrics[keys[0]])


def mean_dice_from_metrics(metrics: dict[str, Any]) -> float:
    mean = metrics["mean"]
    return float(mean["metrics"]["dice"] if "metrics" in mean else mean["dice"])


def values_aurc(risks: Any, confids: Any) -> tuple[float, float]:
    """``(AURC, E-AURC)`` on ValUES' risk-coverage curve (``evaluation.metrics.aurc``), ties as ValUES has them.

    Examples are removed in ascending confidence (``numpy.argsort``'s default order). The
    curve starts at coverage 1 with the mean risk; after the removal of the ``i``-th
    example (``i = 0 .. n-2``) a point at coverage ``(n-1-i)/n`` with the mean risk of the
    rest is added when ``i = 0`` or that example's confidence differs from the previous
    one's, weighted by the removals since the last point over ``n``; removals left
    without a point add a last point at coverage 0 with the last risk. AURC is the
    trapezoid sum ``sum_j (R_j + R_{j+1}) / 2 * w_j``. Unlike a curve with one point per
    group of tied confidences (``aurc[convention=values]``), a point can fall inside a
    tie group, after the first of its members: ValUES' own numbers, which differ from the
    tie-grouped curve only where confidences tie. E-AURC subtracts the mean over ``k`` of
    the mean of the ``k`` smallest risks.

    >>> values_aurc([0.2, 0.4], [0.9, 0.1])  # remove 0.4 first: R = 0.3, then 0.2; w = 1/2
    (0.125, -0.125)
    """
    r = np.asarray(risks, dtype=np.float64).ravel()
    c = np.asarray(confids, dtype=np.float64).ravel()
    if r.shape != c.shape or r.size == 0:
        raise InvalidParameterError(f"values_aurc: expected risks and confids of one non-zero length, got {r.size} "
                                    f"and {c.size}")
    n = r.size
    order = np.argsort(c)
    rs, cs = r[order], c[order]
    rest = np.cumsum(rs[::-1])[::-1]  # rest[i]: the risks from position i on
    i = np.arange(n - 1)
    added = np.ones(n - 1, dtype=bool)
    added[1:] = cs[1:n - 1] != cs[: n - 2]
    points = i[added]
    risk = np.concatenate([[rest[0] / n], rest[points + 1] / (n - 1 - points)])
    weight = np.diff(np.concatenate([[-1], points])) / n
    tail = (n - 2) - (points[-1] if points.size else -1)
    if tail > 0:
        risk = np.append(risk, risk[-1])
        weight = np.append(weight, tail / n)
    area = float(np.sum((risk[:-1] + risk[1:]) * 0.5 * weight)) if weight.size else 0.0
    optimal = float(np.mean(np.cumsum(np.sort(r)) / np.arange(1, n + 1)))
    return area, area - optimal


@attrs.frozen
class FailureDetectionStep:
    """``aurc.main``: AURC and E-AURC of risk ``1 - Dice`` on ValUES' curve -> ``failure_detection.json``.

    Dice per image from the split's ``metrics.json``; confidence is minus the aggregated
    uncertainty; :func:`values_aurc` computes the scores (ValUES' curve, ties included).
    Keys ``aurc`` and ``eaurc``.
    """

    needs: ClassVar[frozenset[str]] = frozenset({"aggregated"})

    def image_values(self, image: ImageData, ctx: Any) -> dict[str, dict[str, float]]:
        return image.aggregated

    def version_files(self, per_image: dict[str, Any], ctx: Any, store: Any) -> dict[Path, Any]:
        path = ctx.dataset_path / "metrics.json"
        metrics = read_metrics(path, store)
        keys = sorted(per_image)
        dice = np.array([image_dice_from_metrics(metrics, k, path) for k in keys], dtype=np.float64)
        tree: dict[str, Any] = {"mean": {}}
        for unc in ctx.version.unc_types:
            tree["mean"][unc] = {}
            for agg in ctx.version.aggregations:
                u = np.array([per_image[k][unc][agg] for k in keys], dtype=np.float64)
                aurc, eaurc = values_aurc(1.0 - dice, -u)
                tree["mean"][unc][agg] = {"metrics": {"aurc": aurc, "eaurc": eaurc}}
        return {ctx.dataset_path / "failure_detection.json": tree}


# --------------------------------------------------------------------------- calibration, ambiguity
def _correct(image: ImageData, unc: str, ignore_value: Any) -> tuple[np.ndarray, np.ndarray]:
    refs = image.require("ref_segs")
    pred = image.require("pred_seg")
    u = np.asarray(image.require(unc))
    if pred.shape != u.shape:
        u = np.swapaxes(u, 0, 1)  # ValUES: a 2-D map read as (W, H)
    correct = (refs == pred[None]).astype(int)
    u = np.broadcast_to(u, refs.shape)
    if ignore_value is not None:
        keep = refs != ignore_value
        return correct[keep], u[keep]
    return correct.ravel(), u.ravel()


@attrs.frozen
class CalibrationStep:
    """``ace.main``: ValUES' ACE of Platt-scaled uncertainty per image and type -> ``calibration.json``.

    Platt parameters per type: one fit per ``val`` image on ``-u`` against voxel
    correctness (``ref == pred`` for every rater), averaged; read from
    ``EXP_PATH/platt_scale_params.json`` when it exists, else fitted and written there.
    """

    ignore_value: Any = None
    needs: ClassVar[frozenset[str]] = frozenset({"pred_seg", "ref_segs", "uncertainty"})
    fit_split: ClassVar[str] = "val"

    def load_fit(self, ctx: Any, store: Any) -> Any:
        return store.read_json(ctx.exp_path / "platt_scale_params.json")

    def fit_image(self, image: ImageData, ctx: Any) -> dict[str, tuple[float, float]]:
        out = {}
        for unc in ctx.version.unc_types:
            correct, u = _correct(image, unc, self.ignore_value)
            out[unc] = fit_platt(-u, correct)
        return out

    def fit(self, per_image: dict[str, Any], ctx: Any) -> tuple[Any, dict[Path, Any]]:
        if not per_image:
            raise InvalidParameterError(f"calibration: no 'val' images for {ctx.version.key} to fit Platt scaling on")
        params = {unc: {"a": float(np.mean([v[unc][0] for v in per_image.values()])),
                        "b": float(np.mean([v[unc][1] for v in per_image.values()]))}
                  for unc in ctx.version.unc_types}
        return params, {ctx.exp_path / "platt_scale_params.json": params}

    def image_values(self, image: ImageData, ctx: Any) -> dict[str, float]:
        out = {}
        for unc in ctx.version.unc_types:
            correct, u = _correct(image, unc, self.ignore_value)
            p = ctx.fitted[unc]
            out[unc] = values_ace(platt_confidence(u, p["a"], p["b"]), correct, n_bins=20)
        return out

    def version_files(self, per_image: dict[str, Any], ctx: Any, store: Any) -> dict[Path, Any]:
        keys = sorted(per_image)
        tree: dict[str, Any] = {"mean": {}}
        for unc in ctx.version.unc_types:
            for k in keys:
                tree.setdefault(k, {})[unc] = {"metrics": {"ace": per_image[k][unc]}}
            tree["mean"][unc] = {"metrics": {"ace": float(np.mean([per_image[k][unc] for k in keys]))}}
        return {ctx.dataset_path / "calibration.json": tree}


@attrs.frozen
class AmbiguityStep:
    """``ncc.main``: NCC of each map with the raters' per-voxel variance (raw labels) -> ``ambiguity_modeling.json``."""

    needs: ClassVar[frozenset[str]] = frozenset({"ref_segs", "uncertainty"})

    def image_values(self, image: ImageData, ctx: Any) -> dict[str, float]:
        refs = image.require("ref_segs")
        return {unc: ncc(image.require(unc), refs, convention="values") for unc in ctx.version.unc_types}

    def version_files(self, per_image: dict[str, Any], ctx: Any, store: Any) -> dict[Path, Any]:
        keys = sorted(per_image)
        tree: dict[str, Any] = {"mean": {}}
        for unc in ctx.version.unc_types:
            for k in keys:
                tree.setdefault(k, {})[unc] = {"metrics": {"ncc": per_image[k][unc]}}
            tree["mean"][unc] = {"metrics": {"ncc": float(np.mean([per_image[k][unc] for k in keys]))}}
        return {ctx.dataset_path / "ambiguity_modeling.json": tree}


# --------------------------------------------------------------------------- active learning
@attrs.frozen
class AlImprovementStep:
    """``al_improvement.main``: relative Dice gain of uncertainty-based querying over random.

    ``(du / d1 - 1) - (dr / d1 - 1)`` with the mean Dice of this split's ``metrics.json``
    (``d1``) and of the second cycle's
    ``SECOND_CYCLE_PATH/PRED_MODEL/test_results/{UNC/AGG | random/random}/VERSION/SPLIT/metrics.json``;
    aleatoric uncertainty is skipped (ValUES). -> ``al_improvement.json``.
    """

    needs: ClassVar[frozenset[str]] = frozenset()

    def version_files(self, per_image: dict[str, Any], ctx: Any, store: Any) -> dict[Path, Any]:
        v = ctx.version
        if v.second_cycle_path is None:
            raise ConfigError("al_improvement needs second_cycle_path (the second cycle's experiment tree) in the "
                              "config")
        d1 = mean_dice_from_metrics(read_metrics(ctx.dataset_path / "metrics.json", store))

        def second(*query: str) -> float:
            path = v.second_cycle_path.joinpath(v.pred_model, "test_results", *query, v.version_name,
                                                ctx.split or "", "metrics.json")
            return mean_dice_from_metrics(read_metrics(path, store))

        dr = second("random", "random")
        tree: dict[str, Any] = {"mean": {}}
        for unc in v.unc_types:
            if unc == "aleatoric_uncertainty":
                continue
            tree["mean"][unc] = {}
            for agg in v.aggregations:
                du = second(unc, agg)
                tree["mean"][unc][agg] = {"metrics": {"al_improvement": (du / d1 - 1) - (dr / d1 - 1)}}
        return {ctx.dataset_path / "al_improvement.json": tree}


#: ValUES queries half of the unlabeled pool for the second cycle (``acquisition_size=0.5``)
ACQUISITION_SIZE = 0.5


@attrs.frozen
class SplitFilesStep:
    """``split_files_second_cycle(_random).generate_split_file``: the second cycle's split files, as JSON.

    Reads ``BASE_SPLITS_PATH[/shift]/firstCycle/splits.json`` afresh for every file and
    moves half of fold 0's unlabeled images (``int(n * 0.5)``, ID and OoD pools together)
    into ``train``, in query order, as ValUES does:

    * without ``random_types`` (``split_files_second_cycle``), per uncertainty type and
      aggregation, the most uncertain images by the aggregated score (a stable sort,
      descending) -> ``secondCycle/<pred_model>/<uncertainty>/<aggregation>/splits_seed<seed>.json``;
    * with ``random_types`` (``split_files_second_cycle_random``), per type, numpy's legacy
      generator seeded with the version's ``seed`` (``np.random.seed`` as ValUES, so the
      same draws): ``random`` draws from both pools, ``best`` takes every OoD image and draws
      the rest from the ID pool, ``worst`` draws only ID images ->
      ``secondCycle/<pred_model>/random/<type>/splits_seed<seed>.json``.

    assay's own ``al_split_files`` task (:mod:`assay_segmentation.active_learning`) draws
    with numpy's new generator and one split per file; this step keeps ValUES' legacy draws
    and list of folds so that the files equal ValUES'. Where ValUES writes
    ``splits_seed<seed>.pkl``, assay writes the same lists as JSON
    (assay never writes or reads pickles). ValUES prints and goes on for a queried image
    that is in neither pool (then fails an assertion); assay says which image and file.
    Entries that are ``[name, dataset]`` pairs (GTA) are matched by name; ValUES' ``in``
    test on such arrays matches any element, which the published code does not mean.
    """

    base_splits_path: str
    random_types: tuple[str, ...] = ()

    @property
    def needs(self) -> frozenset[str]:
        return frozenset() if self.random_types else frozenset({"aggregated"})

    def __attrs_post_init__(self) -> None:
        unknown = [t for t in self.random_types if t not in BASELINES]
        if unknown:
            raise ConfigError(f"split_files_second_cycle_random: unknown random_types {unknown}; "
                              f"ValUES defines {list(BASELINES)}")

    def image_values(self, image: ImageData, ctx: Any) -> dict[str, dict[str, float]]:
        return image.aggregated if not self.random_types else {}

    def version_files(self, per_image: dict[str, Any], ctx: Any, store: Any) -> dict[Path, Any]:
        v = ctx.version
        if "seed" not in v.params:
            raise ConfigError(f"split files for {v.key}: ValUES names them by the version's 'seed', and "
                              f"{v.version_name!r} has none (naming_scheme_version)")
        seed = v.params["seed"]
        shift = v.params.get("shift")
        base = Path(self.base_splits_path)
        out = (base / str(shift) if shift is not None else base) / "secondCycle" / v.pred_model
        name = f"splits_seed{seed}.json"
        files: dict[Path, Any] = {}
        if self.random_types:
            for random_type in self.random_types:
                splits = _first_cycle_splits(self.base_splits_path, shift)
                queried = _random_query(splits[0], random_type, int(seed), where=str(base))
                files[out / "random" / random_type / name] = _moved(splits, queried, base)
            return files
        keys = sorted(per_image)
        for unc in v.unc_types:
            for agg in v.aggregations:
                scores = [per_image[k][unc][agg] for k in keys]
                order = sorted(range(len(keys)), key=scores.__getitem__, reverse=True)
                queried = [f"{keys[i]}.npy" for i in order[: int(len(keys) * ACQUISITION_SIZE)]]
                splits = _first_cycle_splits(self.base_splits_path, shift)
                files[out / unc / agg / name] = _moved(splits, queried, base)
        return files


def _random_query(fold: dict[str, Any], random_type: str, seed: int, where: str) -> list[str]:
    """ValUES' ``get_samples_to_query_random(_best|_worst)``: the names drawn, in draw order."""
    rng = np.random.RandomState(seed)  # the draws of np.random.seed(seed); np.random.choice(...)
    id_pool, ood_pool = _names(fold["id_unlabeled_pool"]), _names(fold["ood_unlabeled_pool"])
    n = int((len(id_pool) + len(ood_pool)) * ACQUISITION_SIZE)
    if random_type == "random":
        both = id_pool + ood_pool
        return [both[i] for i in rng.choice(len(both), n, replace=False)]
    want = n - len(ood_pool) if random_type == "best" else n
    if not 0 <= want <= len(id_pool):
        raise InvalidParameterError(f"split file under {where}: random type {random_type!r} draws {want} of the "
                                    f"{len(id_pool)} ID images (half of the unlabeled pool"
                                    f"{' less the OoD images' if random_type == 'best' else ''}), which cannot be")
    drawn = [id_pool[i] for i in rng.choice(len(id_pool), want, replace=False)]
    return ood_pool + drawn if random_type == "best" else drawn


def _moved(splits: Any, queried: list[str], where: Path) -> Any:
    """``splits`` with the ``queried`` names of fold 0 moved from the unlabeled pools to ``train`` (in query order)."""
    fold = dict(splits[0])
    keys = ("id_unlabeled_pool", "ood_unlabeled_pool")
    found: dict[str, list[Any]] = {}
    for key in keys:
        for name, entry in zip(_names(fold[key]), fold[key]):
            found.setdefault(name, []).append(entry)
    for name in queried:
        if len(found.get(name, ())) != 1:
            raise InvalidParameterError(
                f"split file under {where}: image {name!r} is "
                f"{'in neither' if name not in found else 'more than once in the'} unlabeled pool of fold 0 "
                "(ValUES fails its assertion there)")
    chosen = set(queried)
    for key in keys:
        fold[key] = [entry for name, entry in zip(_names(fold[key]), fold[key]) if name not in chosen]
    fold["train"] = list(fold["train"]) + [found[name][0] for name in queried]
    return [fold, *splits[1:]]


def split_files(base_splits_path: str) -> SplitFilesStep:
    return SplitFilesStep(base_splits_path=base_splits_path)


def split_files_random(base_splits_path: str, random_types: list[str] | tuple[str, ...]) -> SplitFilesStep:
    if not random_types:
        raise ConfigError(f"split_files_second_cycle_random needs random_types (some of {list(BASELINES)})")
    return SplitFilesStep(base_splits_path=base_splits_path, random_types=tuple(random_types))
