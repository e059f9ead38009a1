"""The assay plugin of assay-segmentation: registers the ValUES aggregations, downstream tasks and the
commands ``assay run``, ``assay table`` and ``assay plot``.

Cheap to import: only numpy, attrs and assay (scipy and scikit-learn are needed only by the tests).
"""

from __future__ import annotations

from assay import hookimpl

#: ValUES' modules, the prefix of the dotted paths its configs name by ``_target_``
_AGG = "evaluation.uncertainty_aggregation.aggregate_uncertainties."
_THR = "evaluation.uncertainty_aggregation.find_threshold."
_MET = "evaluation.metrics."
_SPLITS = "evaluation.split_file_generation."


@hookimpl
def assay_register_metrics(register):
    from assay_segmentation import segmentation_metrics as sm

    # torch-uncertainty 0.13.0's metrics/segmentation, one image per instance; the peer's class name as a second name
    for name, cls, desc in (
        ("mean_iou", sm.MeanIntersectionOverUnion, "Mean intersection over union of label maps (num_classes=...)"),
        ("pavpu", sm.PAvPU, "Patch accuracy versus patch uncertainty (patch_size=...)"),
        ("segmentation_auroc", sm.SegmentationBinaryAUROC, "Binary ROC AUC of pixel scores, mean over images"),
        ("segmentation_average_precision", sm.SegmentationBinaryAveragePrecision,
         "Binary average precision of pixel scores, mean over images"),
        ("segmentation_fpr95", sm.SegmentationFPR95, "FPR at 95% recall of pixel scores, mean over images"),
    ):
        register(name, cls, description=desc, other_names=(cls.__name__,))


@hookimpl
def assay_register_aggregations(register):
    from assay_segmentation import values_steps as vs
    from assay_segmentation.aggregations import ImageMean, ImageSum, PatchMax, ThresholdMean

    register("image_mean", ImageMean, description="Mean of the uncertainty map (image level)")
    register("image_sum", ImageSum, description="Sum of the uncertainty map (ValUES image_level)",
             aliases={_AGG + "image_level_aggregation": vs.image_level})
    register("patch_max", PatchMax, description="Maximum over sliding patches of the patch sum (or mean)",
             aliases={_AGG + "patch_level_aggregation": vs.patch_level})
    register("threshold_mean", ThresholdMean,
             description="Mean of the values at or above a threshold (found on val when not given)",
             examples=[{"overrides": {"threshold": 0.5}}],  # the conformance suite's random maps, with a threshold
             # ValUES' threshold aggregation and the steps that find its threshold on the val split
             aliases={_AGG + "threshold_aggregation": vs.threshold_aggregation,
                      _THR + "get_foreground_quantile": vs.ForegroundQuantile,
                      _THR + "save_foreground_quantiles": vs.SaveForegroundQuantiles,
                      _THR + "threshold_images_paths": vs.ThresholdImages,
                      _THR + "find_threshold": vs.FindThreshold})


@hookimpl
def assay_register_tasks(register):
    from assay_segmentation import tasks
    from assay_segmentation import values_steps as vs

    register("ood_detection", tasks.OodDetection, description="OoD detection: AUROC, FPR@95, detection rate",
             aliases={_MET + "auroc.ood_detection": vs.OodDetectionStep})
    register("failure_detection", tasks.FailureDetection,
             description="Failure detection: AURC / E-AURC on risk 1 - Dice (ValUES and fd-shifts conventions)",
             aliases={_MET + "aurc.main": vs.FailureDetectionStep})
    register("calibration", tasks.Calibration, description="Voxel calibration: ValUES ACE and adaptive ECE",
             aliases={_MET + "ace.main": vs.CalibrationStep})
    register("ambiguity_modeling", tasks.AmbiguityModeling,
             description="Ambiguity modelling: NCC with the reference disagreement",
             aliases={_MET + "ncc.main": vs.AmbiguityStep})
    register("segmentation_performance", tasks.SegmentationPerformance,
             description="Segmentation performance: Dice, GED (pooled Dice and pairwise IoU)")
    register("al_improvement", tasks.AlImprovement,
             description="AL improvement: relative Dice gain of uncertainty-based over random querying",
             aliases={_MET + "al_improvement.main": vs.AlImprovementStep})
    register("al_split_files", tasks.AlSplitFiles,
             description="Second-cycle split files from the most uncertain unlabeled images",
             aliases={_SPLITS + "split_files_second_cycle.generate_split_file": vs.split_files,
                      _SPLITS + "split_files_second_cycle_random.generate_split_file": vs.split_files_random})
    register("aggregate_uncertainties", tasks.AggregatedUncertainties,
             description="Aggregated uncertainty per image (the scores OoD / failure detection rank)",
             aliases={_AGG + "aggregate_uncertainties": vs.AggregateUncertainties})


def _run_demo(out_dir):
    from assay_segmentation.demo import run

    run(out_dir)


def _run_values_demo(out_dir):
    from assay_segmentation.values_demo import run

    run(out_dir)


@hookimpl
def assay_register_demo_sections(register):
    register("segmentation", _run_demo, order=40,
             title="ValUES-style downstream tasks on synthetic uncertainty maps, tables and bar plots")
    register("values", _run_values_demo, order=41,
             title="ValUES' own toy config, unchanged, on a synthetic ValUES experiment tree (NIfTI)")


@hookimpl
def assay_register_commands(register):
    # declared in pyproject.toml too (group assay.commands), so 'assay run ...' loads this plugin alone
    from assay_segmentation.commands import plot, run, table

    for command in (run, table, plot):
        register(command.NAME, command.run, help=command.HELP, description=command.DESCRIPTION,
                 add_arguments=command.add_arguments)
