"""examples/transformers runs: the Python script and the `assay ue` config (model trained for 3 steps only)."""

from __future__ import annotations

import runpy
import shutil
from pathlib import Path

import numpy as np
import pytest

from assay.cli import main
from assay.uncertainty import UEManager

# random tiny models answer nothing right: PRR / ROC-AUC on constant accuracy are NaN with this warning
pytestmark = pytest.mark.filterwarnings("ignore::assay.errors.UndefinedMetricWarning")

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "transformers"


def test_the_example_script_and_config_run(tmp_path, capsys):
    for name in ("qa.jsonl", "config.yaml", "make_tiny_model.py", "run.py"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    make = runpy.run_path(str(tmp_path / "make_tiny_model.py"))
    make["main"](tmp_path / "tiny-model", steps=3)
    loaded = runpy.run_path(str(tmp_path / "run.py"))["main"](tmp_path / "out", tmp_path / "tiny-model")
    assert loaded.n_examples == 40 and "roc_auc" in loaded.ue_metric_names
    assert np.isfinite(loaded.estimations[("sequence", "msp")]).all()
    assert ("sequence", "msp", "rouge_l", "prr") in loaded.metrics
    # the semantic estimators (clustered by embeddings) ran on the samples
    for name in ("num_sem_sets[clustering=embedding]", "semantic_eigval_laplacian[clustering=embedding]"):
        assert np.isfinite(loaded.estimations[("sequence", name)]).all()
    assert loaded.n_resamples == 200 and set(loaded.intervals) == set(loaded.metrics)
    assert main(["ue", str(tmp_path / "config.yaml")]) == 0
    for seed in (1, 2):
        assert UEManager.load(tmp_path / "ue-run" / f"seed-{seed}").n_examples == 40
