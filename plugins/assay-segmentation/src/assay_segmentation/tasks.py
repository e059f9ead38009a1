"""The ValUES downstream tasks, as :class:`assay.downstream.Task` objects.

Result trees (``{image_id: {unc_type: {aggregation: {"metrics": ...}}}, "mean": ...}``)
leave out the levels a metric does not depend on; set-level metrics have only ``mean``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

import attrs
import numpy as np

from assay.downstream import ImageData, MetricInfo, Task, TaskContext, mean_tree
from assay.errors import InvalidParameterError
from assay.validation import check_choice
from assay_segmentation import active_learning as al
from assay_segmentation.downstream.data import load_image
from assay_segmentation.measures import NCC_CONVENTIONS, al_improvement, dice, ged, ncc
from assay_segmentation.scores import adaptive_ece, auroc, fit_platt, fpr_at_tpr, platt_confidence, values_ace

__all__ = ["AggregatedUncertainties", "AlImprovement", "AlSplitFiles", "AmbiguityModeling", "Calibration",
           "FailureDetection", "OodDetection",
           "SegmentationPerformance", "image_dice"]

UA = ("unc_type", "aggregation")


def _refs(image: ImageData) -> np.ndarray:
    refs = image.require("ref_segs")
    pred = image.require("pred_seg")
    if refs.shape == pred.shape:  # a single reference without the stack axis
        refs = refs[None]
    if refs.shape[1:] != pred.shape:
        raise InvalidParameterError(f"Image {image.image_id!r}: reference segmentations of shape {refs.shape} do not "
                                    f"match the prediction {pred.shape}; expected (n_refs, *{pred.shape}).")
    return refs


def image_dice(image: ImageData, *, empty_value: float = 0.0) -> float:
    """The Dice of an image: the mean over its reference segmentations of ``dice(pred_seg, ref)``."""
    pred = image.require("pred_seg")
    return float(np.mean([dice(pred, r, empty_value=empty_value) for r in _refs(image)]))


def _per_image_and_mean(per_image: dict[str, Any], where: str) -> dict[str, Any]:
    tree = dict(sorted(per_image.items()))
    tree["mean"] = mean_tree(per_image, where=where)
    return tree


def _arrays(per_image: dict[str, Any], ctx: TaskContext) -> tuple[list[str], dict[str, dict[str, np.ndarray]]]:
    keys = sorted(per_image)
    aggs = {unc: {agg: np.array([per_image[k]["aggregated"][unc][agg] for k in keys], dtype=np.float64)
                  for agg in ctx.version.aggregations} for unc in ctx.version.unc_types}
    return keys, aggs


@attrs.frozen
class SegmentationPerformance(Task):
    """Dice (mean over references) and GED in both forms, per image and mean; levels: prediction model only.

    ``dice``: :func:`~assay_segmentation.dice` with ``empty_value`` for two empty masks;
    ``ged``: the pooled ``1 - Dice`` form (ValUES); ``ged_iou``: the pairwise ``1 - IoU``
    form (Kohl et al. 2018), both over ``pred_samples`` (or the prediction alone when no
    samples are stored) against the references.
    """

    name: ClassVar[str] = "segmentation_performance"
    metrics: ClassVar[tuple[MetricInfo, ...]] = (MetricInfo("dice", True), MetricInfo("ged", False),
                                                 MetricInfo("ged_iou", False))
    default_datasets: ClassVar[tuple[str, ...]] = ("id", "ood")
    needs: ClassVar[frozenset[str]] = frozenset({"pred_seg", "pred_samples", "ref_segs"})
    empty_value: float = 0.0

    def image_metrics(self, image: ImageData, ctx: TaskContext) -> dict[str, Any]:
        refs = _refs(image)
        samples = image.pred_samples if image.pred_samples is not None else image.require("pred_seg")[None]
        return {"metrics": {"dice": image_dice(image, empty_value=self.empty_value),
                            "ged": ged(samples, refs, distance="dice_pooled"),
                            "ged_iou": ged(samples, refs, distance="iou")}}

    def reduce(self, per_image: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
        return _per_image_and_mean(per_image, f"{self.name} {ctx.version.key} {ctx.split}")


@attrs.frozen
class OodDetection(Task):
    """OoD detection from aggregated uncertainty: AUROC, FPR@95 and the OoD detection rate.

    Images of ``ood_splits`` are positives (1 = OoD), the others negatives; the score is
    the aggregated uncertainty. ``auroc``: Mann-Whitney AUROC (ties count one half);
    ``fpr95``: the FPR at the first threshold with TPR >= ``tpr``; ``ood_detection_rate``:
    the share of the OoD images among the ``int(n * query_fraction)`` most uncertain
    (ValUES). Set-level: only ``mean``, per uncertainty type and aggregation.
    """

    name: ClassVar[str] = "ood_detection"
    metrics: ClassVar[tuple[MetricInfo, ...]] = (
        MetricInfo("auroc", True, UA, per_image=False), MetricInfo("fpr95", False, UA, per_image=False),
        MetricInfo("ood_detection_rate", True, UA, per_image=False))
    default_datasets: ClassVar[tuple[str, ...]] = ("id", "ood")
    needs: ClassVar[frozenset[str]] = frozenset({"aggregated"})
    combine_splits: ClassVar[bool] = True
    ood_splits: tuple[str, ...] = attrs.field(default=("ood",),
                                              converter=lambda v: (v,) if isinstance(v, str) else tuple(v))
    query_fraction: float = 0.5
    tpr: float = 0.95

    def image_metrics(self, image: ImageData, ctx: TaskContext) -> dict[str, Any]:
        return {"ood": image.split in self.ood_splits, "aggregated": image.aggregated}

    def reduce(self, per_image: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
        keys, aggs = _arrays(per_image, ctx)
        labels = np.array([per_image[k]["ood"] for k in keys], dtype=int)
        n_query = int(len(keys) * self.query_fraction)
        mean: dict[str, Any] = {}
        for unc, by_agg in aggs.items():
            for agg, scores in by_agg.items():
                top = np.argsort(-scores, kind="stable")[:n_query]
                n_ood = int(labels.sum())
                rate = float(labels[top].sum() / n_ood) if n_ood else float("nan")
                mean.setdefault(unc, {})[agg] = {"metrics": {
                    "auroc": auroc(scores, labels), "fpr95": fpr_at_tpr(scores, labels, tpr=self.tpr),
                    "ood_detection_rate": rate}}
        return {"mean": mean}


@attrs.frozen
class FailureDetection(Task):
    """Failure detection: AURC and E-AURC of aggregated uncertainty against risk ``1 - Dice`` per image.

    Calls the registered UE metrics ``aurc[convention=C]`` and ``e_aurc[convention=C]``
    (``ue_metric(uncertainty, quality)`` with quality = Dice) for each convention in
    ``conventions``; the first convention's values are ``aurc`` / ``e_aurc``, the others
    ``aurc_<convention>`` / ``e_aurc_<convention>`` (``-`` as ``_``). Default: ValUES'
    convention first, then fd-shifts'. Set-level: only ``mean``.
    """

    name: ClassVar[str] = "failure_detection"
    default_datasets: ClassVar[tuple[str, ...]] = ("id", "ood")
    needs: ClassVar[frozenset[str]] = frozenset({"pred_seg", "ref_segs", "aggregated"})
    conventions: tuple[str, ...] = attrs.field(default=("values", "fd-shifts"),
                                               converter=lambda v: (v,) if isinstance(v, str) else tuple(v))
    empty_value: float = 0.0

    def _keys(self) -> list[tuple[str, str, str]]:
        out = []
        for i, conv in enumerate(self.conventions):
            suffix = "" if i == 0 else "_" + conv.replace("-", "_")
            out += [("aurc", conv, "aurc" + suffix), ("e_aurc", conv, "e_aurc" + suffix)]
        return out

    @property
    def metrics(self) -> tuple[MetricInfo, ...]:  # type: ignore[override]
        return tuple(MetricInfo(key, False, UA, per_image=False) for _, _, key in self._keys())

    def image_metrics(self, image: ImageData, ctx: TaskContext) -> dict[str, Any]:
        return {"dice": image_dice(image, empty_value=self.empty_value), "aggregated": image.aggregated}

    def reduce(self, per_image: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
        from assay.plugins import load_ue_metric

        keys, aggs = _arrays(per_image, ctx)
        quality = np.array([per_image[k]["dice"] for k in keys], dtype=np.float64)
        metrics = {key: load_ue_metric(f"{metric}[convention={conv}]") for metric, conv, key in self._keys()}
        mean: dict[str, Any] = {}
        for unc, by_agg in aggs.items():
            for agg, u in by_agg.items():
                mean.setdefault(unc, {})[agg] = {"metrics": {key: float(m(u, quality)) for key, m in metrics.items()}}
        return {"mean": mean}


def _correct_and_unc(image: ImageData, unc: str) -> tuple[np.ndarray, np.ndarray]:
    refs = _refs(image)
    pred = image.require("pred_seg") != 0
    correct = ((refs != 0) == pred[None]).ravel()
    u = np.broadcast_to(image.require(unc), refs.shape).ravel()
    return correct, u


@attrs.frozen
class Calibration(Task):
    """Voxel calibration of Platt-scaled uncertainty: ValUES' ACE and the equal-mass adaptive ECE.

    Platt parameters per uncertainty type are fitted on the ``val`` split, one fit per
    image on ``f = -u`` against voxel correctness (``pred == ref`` for every reference),
    averaged over images (ValUES). Confidence is ``1 / (1 + exp(a f + b))``. Per image and
    uncertainty type: ``ace`` (:func:`~assay_segmentation.scores.values_ace`, ``n_bins``
    equal-width bins, unweighted) and ``adaptive_ece`` (equal-mass bins, weighted); then
    the mean. ``platt=False`` uses ``1 - u`` as confidence instead (maps in [0, 1]).
    """

    name: ClassVar[str] = "calibration"
    metrics: ClassVar[tuple[MetricInfo, ...]] = (MetricInfo("ace", False, ("unc_type",)),
                                                 MetricInfo("adaptive_ece", False, ("unc_type",)))
    default_datasets: ClassVar[tuple[str, ...]] = ("id", "ood")
    needs: ClassVar[frozenset[str]] = frozenset({"pred_seg", "ref_segs", "uncertainty"})
    n_bins: int = 20
    platt: bool = True

    @property
    def fit_split(self) -> str | None:  # type: ignore[override]
        return "val" if self.platt else None

    def fit_image(self, image: ImageData, ctx: TaskContext) -> dict[str, tuple[float, float]]:
        out = {}
        for unc in ctx.version.unc_types:
            correct, u = _correct_and_unc(image, unc)
            out[unc] = fit_platt(-u, correct)
        return out

    def fit(self, per_image: dict[str, Any], ctx: TaskContext) -> dict[str, tuple[float, float]]:
        if not per_image:
            raise InvalidParameterError(f"calibration: no 'val' images for {ctx.version.key} to fit Platt scaling on "
                                        f"({ctx.version.data_dir / 'val'}); give calibration[platt=false] to skip it.")
        return {unc: (float(np.mean([v[unc][0] for v in per_image.values()])),
                      float(np.mean([v[unc][1] for v in per_image.values()]))) for unc in ctx.version.unc_types}

    def image_metrics(self, image: ImageData, ctx: TaskContext) -> dict[str, Any]:
        out = {}
        for unc in ctx.version.unc_types:
            correct, u = _correct_and_unc(image, unc)
            if self.platt:
                a, b = ctx.fitted[unc]
                conf = platt_confidence(u, a, b)
            else:
                conf = np.clip(1.0 - u, 0.0, 1.0)
            out[unc] = {"metrics": {"ace": values_ace(conf, correct, n_bins=self.n_bins),
                                    "adaptive_ece": adaptive_ece(conf, correct, n_bins=self.n_bins)}}
        return out

    def reduce(self, per_image: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
        return _per_image_and_mean(per_image, f"{self.name} {ctx.version.key} {ctx.split}")


@attrs.frozen
class AmbiguityModeling(Task):
    """Ambiguity modelling: NCC of each uncertainty map with the reference disagreement, per image and mean."""

    name: ClassVar[str] = "ambiguity_modeling"
    metrics: ClassVar[tuple[MetricInfo, ...]] = (MetricInfo("ncc", True, ("unc_type",)),)
    default_datasets: ClassVar[tuple[str, ...]] = ("id", "ood")
    needs: ClassVar[frozenset[str]] = frozenset({"ref_segs", "uncertainty"})
    #: the reference disagreement map: variance of the foreground masks ("binary") or of the
    #: raw label values ("values", ValUES' own); see :func:`assay_segmentation.ncc`
    ncc_convention: str = attrs.field(
        default="binary",
        validator=lambda _, __, v: check_choice(v, "ncc_convention", NCC_CONVENTIONS, owner="ambiguity_modeling"))

    def image_metrics(self, image: ImageData, ctx: TaskContext) -> dict[str, Any]:
        refs = image.require("ref_segs")
        return {unc: {"metrics": {"ncc": ncc(image.require(unc), refs, convention=self.ncc_convention)}}
                for unc in ctx.version.unc_types}

    def reduce(self, per_image: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
        return _per_image_and_mean(per_image, f"{self.name} {ctx.version.key} {ctx.split}")


def _resolve(template: str, ctx: TaskContext, **extra: Any) -> Path:
    values = {**ctx.version.params, "base_path": ctx.base_path, "pred_model": ctx.version.pred_model,
              "version_name": ctx.version.version_name, "split": ctx.split, **extra}
    p = Path(template.format(**values))
    return p if p.is_absolute() else Path(ctx.base_path) / p


def _confined_output(template: str, ctx: TaskContext) -> Path:
    """``template`` (format fields as for :func:`_resolve`) as a folder under the version's output folder."""
    values = {**ctx.version.params, "pred_model": ctx.version.pred_model,
              "version_name": ctx.version.version_name, "split": ctx.split}
    top = Path(ctx.output_dir).resolve()
    path = (top / template.format(**values)).resolve()
    if not path.is_relative_to(top):
        raise InvalidParameterError(
            f"The 'output' parameter of al_split_files must be a folder inside the output folder; {template!r} "
            f"resolves to {path}, outside {top}."
        )
    return path


@attrs.frozen
class AlImprovement(Task):
    """AL improvement: relative Dice gain of a second cycle after uncertainty-based querying over random.

    ``al_improvement(d1, du, dr) = (du - dr) / d1`` with ``d1`` this split's mean Dice
    (first cycle), ``du`` / ``dr`` the mean Dice of the second cycle's predictions in
    ``second_cycle`` with ``query`` = ``UNC_TYPE/AGGREGATION`` or ``random`` (relative to
    ``base_path``). Set-level: only ``mean``, per uncertainty type and aggregation.
    """

    name: ClassVar[str] = "al_improvement"
    metrics: ClassVar[tuple[MetricInfo, ...]] = (MetricInfo("al_improvement", True, UA, per_image=False),
                                                 MetricInfo("dice_second_cycle", True, UA, per_image=False))
    default_datasets: ClassVar[tuple[str, ...]] = ("ood",)
    needs: ClassVar[frozenset[str]] = frozenset({"pred_seg", "ref_segs"})
    second_cycle: str = "second_cycle/{pred_model}/{query}/{version_name}/{split}"
    random_query: str = "random/random"
    skip_unc_types: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    empty_value: float = 0.0

    def _queries(self, ctx: TaskContext) -> list[str]:
        return [self.random_query] + [f"{unc}/{agg}" for unc in ctx.version.unc_types if unc not in self.skip_unc_types
                                      for agg in ctx.version.aggregations]

    def image_metrics(self, image: ImageData, ctx: TaskContext) -> dict[str, Any]:
        """This image's Dice in the first cycle and in each second cycle (same references)."""
        second = {}
        for query in self._queries(ctx):
            folder = _resolve(self.second_cycle, ctx, query=query)
            pred = load_image(folder, image.image_id, split=ctx.split, kinds=("pred_seg",)).pred_seg
            second[query] = image_dice(attrs.evolve(image, pred_seg=pred), empty_value=self.empty_value)
        return {"first": image_dice(image, empty_value=self.empty_value), "second": second}

    def reduce(self, per_image: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
        if not per_image:
            raise InvalidParameterError(f"al_improvement: no images in split {ctx.split!r} of {ctx.version.key}.")
        values = list(per_image.values())

        def mean(get: Any) -> float:
            return float(np.mean([get(v) for v in values]))

        d1 = mean(lambda v: v["first"])
        dr = mean(lambda v: v["second"][self.random_query])
        tree: dict[str, Any] = {}
        for query in self._queries(ctx)[1:]:
            unc, agg = query.split("/", 1)
            du = mean(lambda v, q=query: v["second"][q])  # q: this iteration's query
            tree.setdefault(unc, {})[agg] = {"metrics": {"al_improvement": al_improvement(d1, du, dr),
                                                         "dice_second_cycle": du}}
        return {"mean": tree}


@attrs.frozen
class AlSplitFiles(Task):
    """Second-cycle split files from the aggregated uncertainties of the unlabeled pool.

    Reads the first-cycle split file ``splits`` (relative to ``base_path``); per
    uncertainty type and aggregation, moves the most uncertain ``fraction`` of the pools to
    ``train`` and writes ``output/UNC_TYPE/AGGREGATION/splits_VERSION.json``, plus the
    ``baselines`` under ``output/random/KIND/``. ``output`` is a folder inside the
    version's output folder (``assay run`` writes nothing outside its output folder): a
    path that leaves it (``..``, an absolute path) is an error. The result tree holds the
    share of OoD images among the queried ones and the OoD detection rate.
    """

    name: ClassVar[str] = "al_split_files"
    metrics: ClassVar[tuple[MetricInfo, ...]] = (
        MetricInfo("ood_share_queried", True, UA, per_image=False),
        MetricInfo("ood_detection_rate", True, UA, per_image=False))
    default_datasets: ClassVar[tuple[str, ...]] = ("unlabeled",)
    needs: ClassVar[frozenset[str]] = frozenset({"aggregated"})
    splits: str = "splits.json"
    output: str = "second_cycle_splits"
    fraction: float = 0.5
    baselines: tuple[str, ...] = attrs.field(default=al.BASELINES, converter=tuple)

    def image_metrics(self, image: ImageData, ctx: TaskContext) -> dict[str, Any]:
        return {"aggregated": image.aggregated}

    def reduce(self, per_image: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
        splits = al.read_splits(_resolve(self.splits, ctx))
        pool = splits["id_unlabeled_pool"] + splits["ood_unlabeled_pool"]
        ood = set(splits["ood_unlabeled_pool"])
        out_dir = _confined_output(self.output, ctx)
        name = f"splits_{ctx.version.version_name}.json"
        mean: dict[str, Any] = {}
        for unc in ctx.version.unc_types:
            for agg in ctx.version.aggregations:
                scores = {k: v["aggregated"][unc][agg] for k, v in per_image.items()}
                queried = al.query_most_uncertain(scores, pool, fraction=self.fraction)
                al.write_splits(out_dir / unc / agg / name, al.second_cycle_splits(splits, queried))
                n_ood = sum(q in ood for q in queried)
                mean.setdefault(unc, {})[agg] = {"metrics": {
                    "ood_share_queried": n_ood / len(queried) if queried else math.nan,
                    "ood_detection_rate": n_ood / len(ood) if ood else math.nan}}
        seed = int(ctx.version.params.get("seed", 0)) if str(ctx.version.params.get("seed", 0)).isdigit() else 0
        for kind in self.baselines:
            queried = al.baseline_query(splits, kind, fraction=self.fraction, seed=seed)
            al.write_splits(out_dir / "random" / kind / name, al.second_cycle_splits(splits, queried))
        return {"mean": mean}


@attrs.frozen
class AggregatedUncertainties(Task):
    """Every configured aggregation of every uncertainty map, per image, and their mean.

    The per-image scores that OoD detection, failure detection and AL querying rank
    (ValUES writes them as ``aggregated_<type>.json``); ``aggregated`` is the value.
    """

    name: ClassVar[str] = "aggregate_uncertainties"
    metrics: ClassVar[tuple[MetricInfo, ...]] = (MetricInfo("aggregated", False, UA),)
    default_datasets: ClassVar[tuple[str, ...]] = ("id", "ood")
    needs: ClassVar[frozenset[str]] = frozenset({"aggregated"})

    def image_metrics(self, image: ImageData, ctx: TaskContext) -> dict[str, Any]:
        return {unc: {agg: {"metrics": {"aggregated": value}} for agg, value in by_agg.items()}
                for unc, by_agg in image.aggregated.items()}

    def reduce(self, per_image: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
        return _per_image_and_mean(per_image, f"{self.name} {ctx.version.key} {ctx.split}")
