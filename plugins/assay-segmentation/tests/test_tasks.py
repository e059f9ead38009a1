"""The registered tasks on hand-made images: hand-derived values, empty masks, constant maps, 3-D volumes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import assay
from assay.downstream import ExperimentVersion, ImageData, TaskContext


def version(unc_types=("u",), aggregations=("a",), tmp: Path = Path("/nonexistent")) -> ExperimentVersion:
    return ExperimentVersion(experiment="e", pred_model="M", params={"pred_model": "M", "seed": 1},
                             version_name="seed1", unc_types=tuple(unc_types),
                             aggregations={a: a for a in aggregations}, data_dir=tmp / "M" / "seed1",
                             output_dir=tmp / "out", references=None)


def ctx(v, split="id", fitted=None, base_path="/nonexistent", output_dir="/nonexistent"):
    return TaskContext(version=v, split=split, splits=(split,), aggregations={}, base_path=base_path,
                       output_dir=Path(output_dir), fitted=fitted)


def test_segmentation_performance_single_image():
    task = assay.load_task("segmentation_performance")
    pred = np.array([[1, 1, 0, 0]])
    refs = np.array([[[1, 0, 0, 0]], [[0, 0, 0, 0]]])
    img = ImageData("x", "id", pred_seg=pred, pred_samples=pred[None], ref_segs=refs)
    m = task.image_metrics(img, ctx(version()))["metrics"]
    assert m["dice"] == pytest.approx((2 / 3 + 0.0) / 2)  # mean over the two references
    assert m["ged"] == pytest.approx(0.7)  # see test_measures: pooled form
    assert m["ged_iou"] == pytest.approx(1.0)
    tree = task.reduce({"x": task.image_metrics(img, ctx(version()))}, ctx(version()))
    assert set(tree) == {"x", "mean"} and tree["mean"]["metrics"]["dice"] == pytest.approx(1 / 3)
    assert set(tree["x"]) == {"metrics"}  # no uncertainty / aggregation levels


def test_segmentation_performance_empty_masks_and_no_samples():
    z = np.zeros((2, 3, 3, 3), dtype=np.uint8)  # 3-D, everything empty
    img = ImageData("x", "id", pred_seg=z[0], ref_segs=z)
    m = assay.load_task("segmentation_performance").image_metrics(img, ctx(version()))["metrics"]
    assert m == {"dice": 0.0, "ged": 0.0, "ged_iou": 0.0}
    m1 = assay.load_task("segmentation_performance[empty_value=1.0]").image_metrics(img, ctx(version()))["metrics"]
    assert m1["dice"] == 1.0


def test_ood_detection_reduce_hand():
    task = assay.load_task("ood_detection")
    v = version()
    per = {f"id/{k}": {"ood": False, "aggregated": {"u": {"a": s}}} for k, s in (("i1", 0.1), ("i2", 0.4))}
    per |= {f"ood/{k}": {"ood": True, "aggregated": {"u": {"a": s}}} for k, s in (("o1", 0.35), ("o2", 0.8))}
    tree = task.reduce(per, ctx(v))
    assert set(tree) == {"mean"}  # set-level only
    m = tree["mean"]["u"]["a"]["metrics"]
    assert m["auroc"] == pytest.approx(0.75)
    # TPR 1 is reached at .35, where the negative .4 is flagged: FPR 1/2
    assert m["fpr95"] == pytest.approx(0.5)
    # the int(4 * .5) = 2 most uncertain are o2 (.8) and i2 (.4): 1 of 2 OoD images
    assert m["ood_detection_rate"] == pytest.approx(0.5)


def test_ood_detection_marks_splits():
    task = assay.load_task("ood_detection[ood_splits=[ood]]")
    assert task.image_metrics(ImageData("a", "ood", aggregated={"u": {"a": 1.0}}), ctx(version()))["ood"] is True
    assert task.image_metrics(ImageData("a", "id", aggregated={"u": {"a": 1.0}}), ctx(version()))["ood"] is False


def test_failure_detection_hand_both_conventions():
    """Worst ranking: u = .9, .5, .1 for Dice 1, .5, 0 (risks 0, .5, 1).

    Ordered by increasing u the risks are 1, .5, 0: selective risks 1, .75, .5 at coverage 1/3, 2/3, 1.
    values: trapezoid from 1/3 to 1 = (1 + .75)/6 + (.75 + .5)/6 = .5; optimal mean of R_sorted
    (0, .25, .5) = .25 -> E-AURC .25. fd-shifts: .5 plus the flat segment 0..1/3 at risk 1 = .8333;
    optimal curve (0, .25, .5) -> .1667 + 0 -> E-AURC .6667.
    """
    task = assay.load_task("failure_detection")
    per = {k: {"dice": d, "aggregated": {"u": {"a": u}}} for k, d, u in (("x", 1.0, 0.9), ("y", 0.5, 0.5),
                                                                          ("z", 0.0, 0.1))}
    m = task.reduce(per, ctx(version()))["mean"]["u"]["a"]["metrics"]
    assert m["aurc"] == pytest.approx(0.5)
    assert m["e_aurc"] == pytest.approx(0.25)
    assert m["aurc_fd_shifts"] == pytest.approx(5 / 6)
    assert m["e_aurc_fd_shifts"] == pytest.approx(2 / 3)


def test_failure_detection_image_dice():
    img = ImageData("x", "id", pred_seg=np.array([[1, 1], [0, 0]]), ref_segs=np.array([[1, 0], [0, 0]]),
                    aggregated={"u": {"a": 0.3}})
    out = assay.load_task("failure_detection").image_metrics(img, ctx(version()))
    assert out["dice"] == pytest.approx(2 / 3)  # a single reference without the stack axis


def test_calibration_without_platt_hand():
    task = assay.load_task("calibration[platt=false, n_bins=2]")
    pred = np.array([[1, 0]])
    refs = np.array([[[1, 1]], [[1, 0]]])  # correct: rater 1 (1, 0), rater 2 (1, 1)
    u = np.array([[0.2, 0.8]])  # confidence 1 - u: .8, .2 per rater
    img = ImageData("x", "id", pred_seg=pred, ref_segs=refs, uncertainty={"u": u})
    m = task.image_metrics(img, ctx(version()))["u"]["metrics"]
    # equal-width bins: [0, .5) holds the two .2's (acc 1/2), [.5, 1] the two .8's (acc 1): (.3 + .2) / 2
    assert m["ace"] == pytest.approx(0.25)
    # equal-mass 2 bins: the same groups, each with weight 1/2
    assert m["adaptive_ece"] == pytest.approx(0.25)


def test_calibration_platt_fit_averages_images():
    task = assay.load_task("calibration")
    assert task.fit_split == "val"
    v = version()
    fitted = task.fit({"a": {"u": (1.0, 2.0)}, "b": {"u": (3.0, -1.0)}}, ctx(v))
    assert fitted == {"u": (2.0, 0.5)}
    pred = np.array([[1, 0, 1, 0]])
    refs = np.array([[[1, 0, 0, 1]]])
    u = np.array([[0.0, 0.5, 1.0, 1.0]])
    img = ImageData("x", "val", pred_seg=pred, ref_segs=refs, uncertainty={"u": u})
    # with a = 0 and b = 0 the confidence is .5 everywhere; one bin with accuracy 2/4 -> 0
    m = assay.load_task("calibration[n_bins=1]").image_metrics(img, ctx(v, fitted={"u": (0.0, 0.0)}))["u"]["metrics"]
    assert m["ace"] == pytest.approx(0.0) and m["adaptive_ece"] == pytest.approx(0.0)
    with pytest.raises(assay.InvalidParameterError, match="val"):
        task.fit({}, ctx(v))


def test_ambiguity_modeling_hand_and_constant_map():
    task = assay.load_task("ambiguity_modeling")
    v = version(unc_types=("u", "c"))
    refs = np.array([[[1, 1], [0, 0]], [[1, 0], [0, 0]]])
    img = ImageData("x", "id", ref_segs=refs, uncertainty={"u": np.array([[0.1, 0.9], [0.2, 0.2]]),
                                                             "c": np.full((2, 2), 0.5)})
    with pytest.warns(assay.UndefinedMetricWarning, match="constant"):
        out = task.image_metrics(img, ctx(v))
    assert out["u"]["metrics"]["ncc"] == pytest.approx(0.75 * 0.1375 / math.sqrt(0.046875 * 0.41))
    assert math.isnan(out["c"]["metrics"]["ncc"])
    with pytest.warns(RuntimeWarning, match="no value"):
        tree = task.reduce({"x": out}, ctx(v))
    assert math.isnan(tree["mean"]["c"]["metrics"]["ncc"])
    assert tree["mean"]["u"]["metrics"]["ncc"] == pytest.approx(out["u"]["metrics"]["ncc"])


def _write(folder: Path, image_id: str, pred, refs) -> None:
    (folder / "pred_seg").mkdir(parents=True, exist_ok=True)
    (folder / "ref_segs").mkdir(parents=True, exist_ok=True)
    np.save(folder / "pred_seg" / f"{image_id}.npy", np.asarray(pred))
    np.save(folder / "ref_segs" / f"{image_id}.npy", np.asarray(refs))


def test_al_improvement_reads_second_cycle(tmp_path):
    ref = np.array([[[1, 1, 1, 1]]])
    # second cycle, uncertainty query u/a: Dice 1; random: pred [1,1,0,0] -> Dice 2*2/(2+4) = 2/3
    _write(tmp_path / "second_cycle" / "M" / "u" / "a" / "seed1" / "ood", "x", [[1, 1, 1, 1]], ref)
    _write(tmp_path / "second_cycle" / "M" / "random" / "random" / "seed1" / "ood", "x", [[1, 1, 0, 0]], ref)
    task = assay.load_task("al_improvement")
    c = ctx(version(), split="ood", base_path=str(tmp_path))
    # first cycle: pred [1,0,0,0] -> Dice 2*1/(1+4) = 0.4
    per = task.image_metrics(ImageData("x", "ood", pred_seg=np.array([[1, 0, 0, 0]]), ref_segs=ref), c)
    assert per["first"] == pytest.approx(0.4)
    assert per["second"] == {"random/random": pytest.approx(2 / 3), "u/a": pytest.approx(1.0)}
    tree = task.reduce({"x": per}, c)
    assert tree["mean"]["u"]["a"]["metrics"]["al_improvement"] == pytest.approx((1 - 2 / 3) / 0.4)
    assert tree["mean"]["u"]["a"]["metrics"]["dice_second_cycle"] == pytest.approx(1.0)


def test_al_improvement_missing_second_cycle(tmp_path):
    task = assay.load_task("al_improvement")
    img = ImageData("x", "ood", pred_seg=np.array([[1, 0]]), ref_segs=np.array([[[1, 0]]]))
    with pytest.raises(FileNotFoundError, match="second_cycle"):
        task.image_metrics(img, ctx(version(), split="ood", base_path=str(tmp_path)))


def test_al_split_files_task_writes_splits(tmp_path):
    import json

    (tmp_path / "splits.json").write_text(json.dumps(
        {"train": ["t"], "val": [], "id_unlabeled_pool": ["a", "b"], "ood_unlabeled_pool": ["c", "d"]}))
    task = assay.load_task("al_split_files")
    per = {k: {"aggregated": {"u": {"a": s}}} for k, s in (("a", 0.9), ("b", 0.1), ("c", 0.8), ("d", 0.2))}
    out = tmp_path / "out" / "M" / "seed1" / "unlabeled"
    tree = task.reduce(per, ctx(version(), split="unlabeled", base_path=str(tmp_path), output_dir=out))
    m = tree["mean"]["u"]["a"]["metrics"]
    assert m["ood_share_queried"] == pytest.approx(0.5)  # queried a (.9) and c (.8)
    assert m["ood_detection_rate"] == pytest.approx(0.5)  # 1 of the 2 OoD images
    written = json.loads((out / "second_cycle_splits" / "u" / "a" / "splits_seed1.json").read_text())
    assert written["train"] == ["t", "a", "c"] and written["queried"] == ["a", "c"]
    for kind in ("random", "best", "worst"):
        assert (out / "second_cycle_splits" / "random" / kind / "splits_seed1.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "splits.json"]  # nothing beside the data


@pytest.mark.parametrize("output", ["../escape", "/tmp/elsewhere", "{pred_model}/../../x"])
def test_al_split_files_output_stays_inside_the_output_folder(tmp_path, output):
    import json

    (tmp_path / "splits.json").write_text(json.dumps(
        {"train": ["t"], "val": [], "id_unlabeled_pool": ["a"], "ood_unlabeled_pool": ["c"]}))
    task = assay.load_task("al_split_files", output=output)
    per = {k: {"aggregated": {"u": {"a": s}}} for k, s in (("a", 0.9), ("c", 0.8))}
    with pytest.raises(assay.InvalidParameterError,
                       match="'output' parameter of al_split_files must be a folder inside"):
        task.reduce(per, ctx(version(), split="unlabeled", base_path=str(tmp_path), output_dir=tmp_path / "out"))
    assert not (tmp_path / "escape").exists()
