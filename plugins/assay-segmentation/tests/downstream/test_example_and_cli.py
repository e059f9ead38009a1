"""The shipped example config end to end (small synthetic data) and the run / table / plot commands."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from assay.cli import main
from assay_segmentation.downstream import load_config, run_experiments

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = ROOT / "examples" / "segmentation.yaml"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    from assay_segmentation.synthetic import generate

    root = tmp_path_factory.mktemp("seg") / "data"
    generate(root, seeds=(1, 2, 3), shape=(12, 12), n_val=2, n_id=3, n_ood=3, n_unlabeled_id=2,
             n_unlabeled_ood=2, n_raters=2, n_samples=2)
    return root


@pytest.mark.slow
def test_shipped_example_runs_every_task(data, tmp_path):
    config = load_config(EXAMPLE)
    assert set(config["tasks"]) >= {"ood_detection", "failure_detection", "calibration", "ambiguity_modeling",
                                    "segmentation_performance", "al_improvement"}
    config |= {"base_path": str(data), "output_path": str(tmp_path / "out")}
    summary = run_experiments(config, executor="serial")
    assert summary.versions == 9  # 3 models x 3 seeds
    out = tmp_path / "out"
    seg = json.loads((out / "Ensemble" / "seed2" / "ood" / "segmentation_performance.json").read_text())
    # independent check of one per-image Dice: numpy on the stored arrays, mean over the two raters
    pred = np.load(data / "Ensemble" / "seed2" / "ood" / "pred_seg" / "o001.npy") != 0
    refs = np.load(data / "references" / "ood" / "o001.npy") != 0
    expected = np.mean([2 * (pred & r).sum() / (pred.sum() + r.sum()) for r in refs])
    assert seg["o001"]["metrics"]["dice"] == pytest.approx(expected)
    fd = json.loads((out / "Dropout" / "seed1" / "id" / "failure_detection.json").read_text())
    assert set(fd) == {"mean", "signature"} and set(fd["mean"]) == {"predictive_uncertainty", "aleatoric_uncertainty",
                                                      "epistemic_uncertainty"}
    assert set(fd["mean"]["aleatoric_uncertainty"]) == {"image_mean", "patch_max", "threshold_mean"}
    cal = json.loads((out / "Softmax" / "seed3" / "id" / "calibration.json").read_text())
    assert set(cal["i000"]) == {"predictive_uncertainty"}  # per image, no aggregation level
    # second-cycle split files are written inside the version's output folder, never under the data
    assert not (data / "second_cycle_splits").exists()
    splits = json.loads((out / "Dropout" / "seed1" / "unlabeled" / "second_cycle_splits" / "epistemic_uncertainty" /
                         "patch_max" / "splits_seed1.json").read_text())
    assert len(splits["queried"]) == 2 and len(splits["train"]) == len(json.loads(
        (data / "splits.json").read_text())["train"]) + 2


@pytest.mark.slow
def test_cli_run_table_plot(data, tmp_path, capsys):
    text = EXAMPLE.read_text().replace("../demo-output/segmentation/data", str(data))
    cfg = tmp_path / "segmentation.yaml"
    cfg.write_text(text.replace("executor: processes", "executor: serial"))
    (tmp_path / "segmentation").mkdir()
    tasks = (ROOT / "examples" / "segmentation" / "tasks.yaml").read_text()
    (tmp_path / "segmentation" / "tasks.yaml").write_text(tasks)
    assert main(["run", str(cfg), "--output", str(tmp_path / "res"), "-q"]) == 0
    assert "9 versions x 7 tasks" in capsys.readouterr().out
    assert main(["table", str(tmp_path / "res"), "--format", "latex", "--standalone", "--tasks", "ood_detection",
                 "-o", str(tmp_path / "t.tex")]) == 0
    tex = (tmp_path / "t.tex").read_text()
    assert r"\begin{tabular}" in tex and "auroc" in tex and "aurc" not in tex
    assert main(["table", str(tmp_path / "res"), "--metrics", "dice"]) == 0
    assert "segmentation_performance: dice id" in capsys.readouterr().out
    plot_cfg = tmp_path / "plot.yaml"
    plot_cfg.write_text(yaml.safe_dump({"ordering": {"pred_model": ["Ensemble", "Dropout", "Softmax"]},
                                        "coloring": {"pred_model": {"Softmax": "tab:olive"}}}))
    assert main(["plot", str(tmp_path / "res"), "--along", "pred_model", "-o", str(tmp_path / "b.png"),
                 "--metrics", "auroc", "ncc", "--config", str(plot_cfg)]) == 0
    assert (tmp_path / "b.png").read_bytes()[:4] == b"\x89PNG"
    plot_cfg.write_text("colours: {}\n")
    assert main(["plot", str(tmp_path / "res"), "--along", "pred_model", "-o", str(tmp_path / "c.png"),
                 "--config", str(plot_cfg)]) == 2
    assert "colours: unknown key 'colours'. Did you mean 'coloring'?" in capsys.readouterr().err


def test_3d_volumes_end_to_end(tmp_path):
    from assay_segmentation.synthetic import DEFAULT_MODELS, generate

    generate(tmp_path / "data", models={"Dropout": DEFAULT_MODELS["Dropout"]}, seeds=(1,), shape=(6, 10, 10),
             n_val=2, n_id=2, n_ood=2, n_unlabeled_id=2, n_unlabeled_ood=2, n_raters=2, n_samples=2)
    config = load_config(EXAMPLE)
    config["experiments"][0]["iter_params"] = {"pred_model": ["Dropout"], "seed": [1]}
    config |= {"base_path": str(tmp_path / "data"), "output_path": str(tmp_path / "out")}
    run_experiments(config, executor="threads[workers=2]")
    out = tmp_path / "out" / "Dropout" / "seed1"
    amb = json.loads((out / "id" / "ambiguity_modeling.json").read_text())
    u = np.load(tmp_path / "data" / "Dropout" / "seed1" / "id" / "epistemic_uncertainty" / "i001.npy")
    refs = np.load(tmp_path / "data" / "references" / "id" / "i001.npy")
    assert u.ndim == 3
    g = refs.astype(float).var(axis=0).ravel()
    n = g.size
    expected = (n - 1) / n * np.corrcoef(g, u.ravel().astype(float))[0, 1]  # NCC by its definition
    assert amb["i001"]["epistemic_uncertainty"]["metrics"]["ncc"] == pytest.approx(expected, rel=1e-6)
    ood = json.loads((out / "ood_detection.json").read_text())
    assert 0.0 <= ood["mean"]["epistemic_uncertainty"]["patch_max"]["metrics"]["auroc"] <= 1.0
