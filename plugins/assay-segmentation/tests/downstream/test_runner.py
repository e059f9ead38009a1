"""run_experiments end to end on a hand-made data set: layout of the result trees, hand values, executors."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from assay_segmentation.downstream import ConfigError, read_manifest, run_experiments

CONFIG = """
base_path: data
output_path: out
experiments:
  - iter_params: {pred_model: [M], seed: [1]}
    naming_scheme_version: "seed{seed}"
    prediction_models:
      M:
        unc_types: [u]
        aggregations: {mean: image_mean, thr: threshold_mean}
tasks: [segmentation_performance, ood_detection]
task_params:
  segmentation_performance: {datasets: [id]}
  ood_detection: {datasets: [id, ood], function: "ood_detection[query_fraction=0.5]"}
"""


def save(folder: Path, kind: str, image_id: str, array) -> None:
    (folder / kind).mkdir(parents=True, exist_ok=True)
    np.save(folder / kind / f"{image_id}.npy", np.asarray(array))


def make_data(root: Path) -> None:
    v = root / "data" / "M" / "seed1"
    ref = np.array([[[1, 1], [0, 0]]])
    # val: prediction with 1 of 4 foreground -> q = 3/4; map 0, .1, .2, .3 -> threshold .225
    save(v / "val", "pred_seg", "v0", [[1, 0], [0, 0]])
    save(v / "val", "u", "v0", [[0.0, 0.1], [0.2, 0.3]])
    save(v / "val", "ref_segs", "v0", ref)
    # id: a exact (Dice 1), b one of two (Dice 2*1/(1+2) = 2/3)
    for image_id, pred, u in (("a", [[1, 1], [0, 0]], [[0.1, 0.1], [0.1, 0.3]]),
                              ("b", [[1, 0], [0, 0]], [[0.2, 0.2], [0.2, 0.2]])):
        save(v / "id", "pred_seg", image_id, pred)
        save(v / "id", "u", image_id, u)
        save(v / "id", "ref_segs", image_id, ref)
    save(v / "ood", "pred_seg", "o", [[0, 0], [1, 1]])
    save(v / "ood", "u", "o", [[0.9, 0.9], [0.9, 0.1]])
    save(v / "ood", "ref_segs", "o", ref)


@pytest.fixture
def config_path(tmp_path):
    make_data(tmp_path)
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    return path


def test_run_writes_nested_trees_with_hand_values(config_path, tmp_path):
    summary = run_experiments(config_path, executor="serial")
    out = tmp_path / "out" / "M" / "seed1"
    seg = json.loads((out / "id" / "segmentation_performance.json").read_text())
    assert set(seg) == {"a", "b", "mean", "signature"}  # "signature": provenance, not an image
    assert seg["a"]["metrics"]["dice"] == pytest.approx(1.0)
    assert seg["b"]["metrics"]["dice"] == pytest.approx(2 / 3)
    assert seg["mean"]["metrics"]["dice"] == pytest.approx((1 + 2 / 3) / 2)
    ood = json.loads((out / "ood_detection.json").read_text())
    assert set(ood) == {"mean", "signature"}  # set-level, one file over id + ood
    # image_mean: a .15, b .2, o .7 -> the OoD image scores highest: AUROC 1
    assert ood["mean"]["u"]["mean"]["metrics"]["auroc"] == pytest.approx(1.0)
    # threshold .225 (fitted on val): a -> .3, b -> 0 (none reach it), o -> .9: AUROC 1
    assert summary.fitted["M"]["u"]["threshold_mean"]["threshold"] == pytest.approx(0.225)
    assert ood["mean"]["u"]["thr"]["metrics"]["auroc"] == pytest.approx(1.0)
    manifest = read_manifest(tmp_path / "out")
    assert manifest["tasks"]["ood_detection"]["combine_splits"] is True
    assert manifest["versions"][0]["output_dir"] == "M/seed1"
    assert {m["name"] for m in manifest["tasks"]["segmentation_performance"]["metrics"]} == {"dice", "ged", "ged_iou"}
    # the manifest lists every result file (version x task x split), which 'assay table' then requires
    assert sorted(manifest["files"]) == ["M/seed1/id/segmentation_performance.json", "M/seed1/ood_detection.json"]


def test_parallel_equals_serial(config_path, tmp_path):
    run_experiments(config_path, executor="serial", output=tmp_path / "s")
    run_experiments(config_path, executor="processes[workers=2]", output=tmp_path / "p")
    run_experiments(config_path, executor="threads[workers=2]", output=tmp_path / "t")
    files = sorted(p.relative_to(tmp_path / "s") for p in (tmp_path / "s").rglob("*.json")
                   if p.name != "assay-results.json")
    assert files
    for rel in files:
        assert (tmp_path / "p" / rel).read_text() == (tmp_path / "s" / rel).read_text()
        assert (tmp_path / "t" / rel).read_text() == (tmp_path / "s" / rel).read_text()


def test_unknown_task_is_a_config_error(config_path):
    text = config_path.read_text().replace("tasks: [segmentation_performance, ood_detection]",
                                           "tasks: [segmentation_performanse]")
    config_path.write_text(text)
    with pytest.raises(ConfigError, match="segmentation_performanse"):
        run_experiments(config_path, executor="serial")


def test_missing_split_folder_is_reported(config_path):
    config_path.write_text(config_path.read_text().replace("datasets: [id]}", "datasets: [test]}"))
    with pytest.raises(FileNotFoundError, match="test"):
        run_experiments(config_path, executor="serial")
