"""`assay table` on a result file whose values are strings is an error naming file and key (issue 27, item 9).

``"0.9"`` in place of the number 0.9 was read as 0.9 (shown as 90.00) and the interval
dropped without a word. The strings of assay's non-finite rule (``"NaN"``) stay numbers.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from assay_values_tree import CONFIGS, write_tree

from assay.cli import main
from assay.errors import ResultFileError
from assay_segmentation.downstream import run_experiments
from assay_segmentation.report import load_results
from assay_segmentation.report.values_config import load_table_config
from assay_segmentation.report.values_results import load_values_results

CONFIG = """
base_path: data
output_path: out
experiments:
  - iter_params: {pred_model: [M], seed: [1, 2]}
    naming_scheme_version: "seed{seed}"
    prediction_models:
      M: {unc_types: [u], aggregations: {mean: image_mean}}
tasks: [segmentation_performance]
task_params:
  segmentation_performance: {datasets: [id]}
"""


@pytest.fixture
def results(tmp_path) -> Path:
    for seed in (1, 2):
        folder = tmp_path / "data" / "M" / f"seed{seed}" / "id"
        for image_id, pred in (("a", [[1, 0], [0, 0]]), ("b", [[1, 1], [0, 0]])):
            for kind, array in (("pred_seg", pred), ("u", [[0.1, 0.2], [0.3, 0.4]]), ("ref_segs", [[[1, 1], [0, 0]]])):
                (folder / kind).mkdir(parents=True, exist_ok=True)
                np.save(folder / kind / f"{image_id}.npy", np.asarray(array))
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    run_experiments(path)
    return tmp_path / "out"


def _edit(out: Path, image: str, value) -> Path:
    path = out / "M" / "seed1" / "id" / "segmentation_performance.json"
    tree = json.loads(path.read_text())
    tree[image]["metrics"]["dice"] = value
    path.write_text(json.dumps(tree))
    return path


@pytest.mark.parametrize("image", ["mean", "a"])
def test_a_string_value_is_an_error_naming_file_and_key(results, image, capsys):
    path = _edit(results, image, "0.9")
    with pytest.raises(ResultFileError) as info:
        load_results(results)
    assert f"{path}: {image}.metrics.dice must be a number" in str(info.value) and "'0.9'" in str(info.value)
    assert main(["table", str(results)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: {image}.metrics.dice must be a number" in err and "Traceback" not in err


def test_numbers_and_the_nonfinite_strings_still_read(results):
    table = load_results(results)
    column = table.columns[0]
    # seed 1 and 2: Dice of a = 2*1/(1+2) = 2/3, of b = 1; the file's mean is their mean, 5/6
    assert table.values[(table.rows[0], column)] == pytest.approx((5 / 6, 5 / 6))
    _edit(results, "mean", "NaN")
    assert np.isnan(load_results(results).values[(table.rows[0], column)][0])


def test_a_string_in_a_values_tree_is_an_error_naming_file_and_key(tmp_path):
    """The same for a ValUES experiment tree read by a ValUES table config (it was read as NaN there)."""
    write_tree(tmp_path, "lidc", n_images=3)
    path = next(tmp_path.rglob("Dropout/test_results/malignancy_fold0_seed125/id/failure_detection.json"))
    tree = json.loads(path.read_text())
    tree["mean"]["epistemic_uncertainty"]["threshold"]["metrics"]["aurc"] = "0.25"
    path.write_text(json.dumps(tree))
    with pytest.raises(ResultFileError) as info:
        load_values_results(load_table_config(CONFIGS / "table_config_lidc.yaml", [f"base_path={tmp_path}"]))
    message = str(info.value)
    assert f"{path}: mean.epistemic_uncertainty.threshold.metrics.aurc: expected a number, got '0.25'" in message
