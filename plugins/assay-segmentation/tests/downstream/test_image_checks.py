"""`assay run` checks an image's arrays against each other (issue 27, item 8).

An uncertainty map of shape (16, 16) beside a (32, 32) prediction, and a prediction holding
0..255 where the reference holds labels 0/1, were read without a word (the 0..255 map gave
Dice over its non-zero voxels). Each is now an error naming the file and the shapes or values;
the hand values of the valid cases are computed here from the arrays.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from assay.cli import main
from assay.downstream import ImageData
from assay.errors import InvalidParameterError
from assay_segmentation.downstream import run_experiments
from assay_segmentation.downstream.data import check_image

CONFIG = """
base_path: data
output_path: out
experiments:
  - iter_params: {pred_model: [M], seed: [1]}
    naming_scheme_version: "seed{seed}"
    prediction_models:
      M: {unc_types: [u], aggregations: {mean: image_mean}}
tasks: [TASKS]
task_params:
"""
PARAMS = {"segmentation_performance": "  segmentation_performance: {datasets: [id]}\n",
          "ood_detection": '  ood_detection: {datasets: [id, ood], function: "ood_detection[query_fraction=0.5]"}\n'}


def _save(folder: Path, kind: str, image_id: str, array) -> Path:
    (folder / kind).mkdir(parents=True, exist_ok=True)
    path = folder / kind / f"{image_id}.npy"
    np.save(path, np.asarray(array))
    return path


def _tree(tmp_path: Path, tasks: str, *, pred=None, umap=None, ref=None) -> tuple[Path, Path]:
    """Two id images and one ood image of 32 x 32; ``pred`` / ``umap`` / ``ref`` replace image "b"'s arrays."""
    rng = np.random.default_rng(0)
    v = tmp_path / "data" / "M" / "seed1"
    disc = (np.add.outer((np.arange(32) - 15.5) ** 2, (np.arange(32) - 15.5) ** 2) < 100).astype(np.uint8)
    files = {}
    for split, image_id in (("id", "a"), ("id", "b"), ("ood", "o")):
        replace = image_id == "b"
        files[image_id] = _save(v / split, "pred_seg", image_id, pred if replace and pred is not None else disc)
        _save(v / split, "u", image_id, umap if replace and umap is not None else rng.random((32, 32)))
        _save(v / split, "ref_segs", image_id, ref if replace and ref is not None else disc[None])
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent(CONFIG).replace("TASKS", tasks) + PARAMS[tasks])
    return path, files["b"]


def test_an_uncertainty_map_of_another_shape_is_an_error_naming_file_and_shapes(tmp_path):
    path, _ = _tree(tmp_path, "ood_detection", umap=np.random.default_rng(1).random((16, 16)))
    with pytest.raises(InvalidParameterError) as info:
        run_experiments(path)
    message = str(info.value)
    assert "id/u/b.npy: uncertainty map of shape (16, 16)" in message, message
    assert "id/pred_seg/b.npy: shape (32, 32)" in message, message


def test_assay_run_reports_the_shape_in_one_line(tmp_path, capsys):
    path, _ = _tree(tmp_path, "ood_detection", umap=np.zeros((16, 16)))
    assert main(["run", str(path), "-q"]) == 2
    err = capsys.readouterr().err
    assert "u/b.npy: uncertainty map of shape (16, 16)" in err and "(32, 32)" in err and "Traceback" not in err


def test_a_0_to_255_prediction_is_an_error_naming_file_and_values(tmp_path):
    rng = np.random.default_rng(2)
    disc = (np.add.outer((np.arange(32) - 15.5) ** 2, (np.arange(32) - 15.5) ** 2) < 100)
    soft = np.clip(disc + rng.normal(0, 0.3, disc.shape), 0, 1)
    pred = np.round(soft * 255).astype(np.uint8)  # a probability image stored as 0..255
    assert pred.max() == 255 and len(np.unique(pred)) > 2
    path, pred_file = _tree(tmp_path, "segmentation_performance", pred=pred)
    with pytest.raises(InvalidParameterError) as info:
        run_experiments(path)
    message = str(info.value)
    assert f"{pred_file}: the prediction holds values that are not labels of the reference" in message, message
    assert "255" in message and "labels: 0, 1" in message and "ref_segs/b.npy" in message, message


@pytest.mark.parametrize("pred, ref, expected_dice", [
    # a prediction on an image whose reference is empty is valid (labels 0/1): Dice 2*0/(n+0) = 0
    ("disc", "empty", 0.0),
    # labels stored as floats (as NIfTI's get_fdata gives them) are labels
    ("disc-float", "disc", 1.0),
])
def test_valid_label_maps_pass_with_hand_dice(tmp_path, pred, ref, expected_dice):
    disc = (np.add.outer((np.arange(32) - 15.5) ** 2, (np.arange(32) - 15.5) ** 2) < 100).astype(np.uint8)
    arrays = {"disc": disc, "disc-float": disc.astype(np.float64), "empty": np.zeros_like(disc)}
    path, _ = _tree(tmp_path, "segmentation_performance", pred=arrays[pred], ref=arrays[ref][None])
    run_experiments(path)
    tree = json.loads(next((tmp_path / "out").rglob("segmentation_performance.json")).read_text())
    assert tree["b"]["metrics"]["dice"] == pytest.approx(expected_dice)


def test_probabilities_and_labels_beyond_the_classes_are_refused():
    ref = np.array([[[0, 1], [1, 0]]])
    files = {"pred_seg": "p.npy", "ref_segs": "r.npy"}
    with pytest.raises(InvalidParameterError, match=r"p\.npy: .*not labels.*0\.3"):
        check_image(ImageData("x", "id", pred_seg=np.array([[0.3, 1.0], [1.0, 0.0]]), ref_segs=ref), files)
    # ValUES: labels 0 .. n_classes - 1 are labels even where this reference lacks them
    check_image(ImageData("x", "id", pred_seg=np.array([[0, 2], [1, 0]]), ref_segs=ref), files, labels=range(3))
    with pytest.raises(InvalidParameterError, match=r"p\.npy: .*not labels of the reference: 3 "):
        check_image(ImageData("x", "id", pred_seg=np.array([[0, 3], [1, 0]]), ref_segs=ref), files, labels=range(3))
    with pytest.raises(InvalidParameterError, match=r"r\.npy: shape \(1, 3, 2\)"):
        check_image(ImageData("x", "id", pred_seg=np.zeros((2, 2)), ref_segs=np.zeros((1, 3, 2))), files)
