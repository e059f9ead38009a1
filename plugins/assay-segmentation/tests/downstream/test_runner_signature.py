"""assay run writes its provenance signature into the manifest and every result file; tables still aggregate."""

from __future__ import annotations

import importlib.metadata as metadata
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

import assay
from assay_segmentation.downstream import read_manifest, run_experiments
from assay_segmentation.report import load_results, render_table

CONFIG = """
base_path: data
output_path: out
experiments:
  - iter_params: {pred_model: [M], seed: [1, 2]}
    naming_scheme_version: "seed{seed}"
    prediction_models:
      M:
        unc_types: [u]
        aggregations: {mean: image_mean}
tasks: [segmentation_performance, ood_detection]
task_params:
  segmentation_performance: {datasets: [id]}
  ood_detection: {datasets: [id, ood], function: "ood_detection[query_fraction=0.5]"}
"""
# by hand: ood_detection's query_fraction=0.5 is its default, so it is left out
SIG = (f"tasks:segmentation_performance,ood_detection|aggregations:image_mean|assay:{assay.__version__}|"
       f"plugins:assay-segmentation={metadata.version('assay-segmentation')}")


def save(folder: Path, kind: str, image_id: str, array) -> None:
    (folder / kind).mkdir(parents=True, exist_ok=True)
    np.save(folder / kind / f"{image_id}.npy", np.asarray(array))


@pytest.fixture
def out(tmp_path):
    ref = np.array([[[1, 1], [0, 0]]])
    for seed in (1, 2):
        v = tmp_path / "data" / "M" / f"seed{seed}"
        # id: a exact (Dice 1), b one of two (Dice 2/3)
        for image_id, pred, u in (("a", [[1, 1], [0, 0]], [[0.1, 0.1], [0.1, 0.3]]),
                                  ("b", [[1, 0], [0, 0]], [[0.2, 0.2], [0.2, 0.2]])):
            save(v / "id", "pred_seg", image_id, pred)
            save(v / "id", "u", image_id, u)
            save(v / "id", "ref_segs", image_id, ref)
        save(v / "ood", "pred_seg", "o", [[0, 0], [1, 1]])
        save(v / "ood", "u", "o", [[0.9, 0.9], [0.9, 0.1]])
        save(v / "ood", "ref_segs", "o", ref)
    (tmp_path / "c.yaml").write_text(textwrap.dedent(CONFIG))
    run_experiments(tmp_path / "c.yaml", executor="serial")
    return tmp_path / "out"


def test_manifest_and_every_result_file_carry_the_signature(out):
    manifest = read_manifest(out)
    assert manifest["signature"] == SIG
    assert len(manifest["files"]) == 4  # 2 seeds x (segmentation on id, ood_detection on id + ood)
    for rel in manifest["files"]:
        assert json.loads((out / rel).read_text())["signature"] == SIG


def test_tables_still_aggregate_and_show_it(out):
    table = load_results(out)
    dice = next(c for c in table.columns if c.metric == "dice")
    assert table.mean(table.rows[0], dice) == pytest.approx((1 + 2 / 3) / 2)  # same data for both seeds
    assert table.signature == SIG
    for fmt in ("markdown", "latex", "html"):
        assert SIG in render_table(table, fmt)
