"""The assay plugin of assay-segmentation: registers the ValUES aggregations and downstream tasks.

Cheap to import: only numpy, attrs and assay (scipy and scikit-learn are needed only by the tests).
"""

from __future__ import annotations

from assay import hookimpl


@hookimpl
def assay_register_aggregations(register):
    from assay_segmentation.aggregations import ImageMean, ImageSum, PatchMax, ThresholdMean

    register("image_mean", ImageMean, description="Mean of the uncertainty map (image level)")
    register("image_sum", ImageSum, description="Sum of the uncertainty map (ValUES image_level)")
    register("patch_max", PatchMax, description="Maximum over sliding patches of the patch sum (or mean)")
    register("threshold_mean", ThresholdMean,
             description="Mean of the values at or above a threshold (found on val when not given)",
             examples=[{"overrides": {"threshold": 0.5}}])  # the conformance suite's random maps, with a threshold


@hookimpl
def assay_register_tasks(register):
    from assay_segmentation import tasks

    register("ood_detection", tasks.OodDetection, description="OoD detection: AUROC, FPR@95, detection rate")
    register("failure_detection", tasks.FailureDetection,
             description="Failure detection: AURC / E-AURC on risk 1 - Dice (ValUES and fd-shifts conventions)")
    register("calibration", tasks.Calibration, description="Voxel calibration: ValUES ACE and adaptive ECE")
    register("ambiguity_modeling", tasks.AmbiguityModeling,
             description="Ambiguity modelling: NCC with the reference disagreement")
    register("segmentation_performance", tasks.SegmentationPerformance,
             description="Segmentation performance: Dice, GED (pooled Dice and pairwise IoU)")
    register("al_improvement", tasks.AlImprovement,
             description="AL improvement: relative Dice gain of uncertainty-based over random querying")
    register("al_split_files", tasks.AlSplitFiles,
             description="Second-cycle split files from the most uncertain unlabeled images")


def _run_demo(out_dir):
    from assay_segmentation.demo import run

    run(out_dir)


@hookimpl
def assay_register_demo_sections(register):
    register("segmentation", _run_demo, order=40,
             title="ValUES-style downstream tasks on synthetic uncertainty maps, tables and bar plots")
