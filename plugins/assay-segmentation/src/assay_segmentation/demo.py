"""Demo section ``segmentation``: ValUES-style downstream tasks on synthetic uncertainty maps.

Generates images with three raters, three prediction models (Softmax, Dropout, Ensemble)
x three seeds with aleatoric / epistemic / predictive uncertainty maps and an OoD split,
runs every task (sequentially, then in parallel over images, and checks the results are
identical), and writes a Markdown, LaTeX and HTML table and PNG bar plots.
"""

from __future__ import annotations

import filecmp
import time
from pathlib import Path

import yaml

TASKS = ["segmentation_performance", "ood_detection", "failure_detection", "calibration", "ambiguity_modeling",
         "al_split_files", "al_improvement"]
UNC3 = ["predictive_uncertainty", "aleatoric_uncertainty", "epistemic_uncertainty"]


def _config(data: Path, results: Path) -> dict:
    return {
        "base_path": str(data),
        "output_path": str(results),
        "experiments": [{
            "name": "toy",
            "iter_params": {"pred_model": ["Softmax", "Dropout", "Ensemble"], "seed": [1, 2, 3]},
            "naming_scheme_version": "seed{seed}",
            "references": "{base_path}/references/{split}",
            "aggregations": {"image_mean": "image_mean", "patch_max": "patch_max[patch_size=5]",
                             "threshold_mean": "threshold_mean"},
            "prediction_models": {"Softmax": {"unc_types": ["predictive_uncertainty"]},
                                  "Dropout": {"unc_types": UNC3}, "Ensemble": {"unc_types": UNC3}},
        }],
        "tasks": TASKS,
        "task_params": {
            "segmentation_performance": {"datasets": ["id", "ood"]},
            "ood_detection": {"datasets": ["id", "ood"], "function": "ood_detection[ood_splits=[ood]]"},
            "failure_detection": {"datasets": ["id", "ood"]},
            "calibration": {"datasets": ["id", "ood"]},
            "ambiguity_modeling": {"datasets": ["id", "ood"]},
            "al_split_files": {"datasets": ["unlabeled"]},
            "al_improvement": {"datasets": ["id", "ood"]},
        },
    }


def _same_results(a: Path, b: Path) -> bool:
    files = sorted(p.relative_to(a) for p in a.rglob("*.json") if p.name != "assay-results.json")
    return bool(files) and all(filecmp.cmp(a / f, b / f, shallow=False) for f in files)


def run(out_dir: Path) -> None:
    from assay_segmentation.downstream import run_experiments
    from assay_segmentation.report import bar_plot, load_results, render_table
    from assay_segmentation.synthetic import generate

    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    summary = generate(out_dir / "data")
    print(f"generated {summary['files']} arrays: {', '.join(summary['models'])} x seeds {summary['seeds']}, "
          f"images per split {summary['images']} ({time.perf_counter() - start:.1f} s)")
    config_path = out_dir / "segmentation.yaml"
    # paths in a config are relative to the config file, which sits beside data/ and results/
    config_path.write_text(yaml.safe_dump(_config(Path("data"), Path("results")), sort_keys=False),
                           encoding="utf-8")
    serial = run_experiments(config_path, executor="serial")
    print(f"assay run (serial): {serial.versions} versions x {len(serial.tasks)} tasks, "
          f"{serial.images} image evaluations, {serial.seconds:.2f} s")
    parallel = run_experiments(config_path, executor="processes[workers=2]", output=out_dir / "results-parallel")
    same = _same_results(out_dir / "results", out_dir / "results-parallel")
    print(f"assay run (processes, 2 workers): {parallel.seconds:.2f} s; identical result files: {same}")
    if not same:
        raise AssertionError("parallel results differ from the sequential ones")
    for pm, by_unc in serial.fitted.items():
        print(f"threshold_mean thresholds found on val for {pm}: "
              + ", ".join(f"{u.split('_')[0]} {v['threshold_mean']['threshold']:.4f}" for u, v in by_unc.items()))

    table = load_results(out_dir / "results")
    headline = table.select(c for c in table.columns if (c.task, c.metric, c.split) in {
        ("segmentation_performance", "dice", "id"), ("ood_detection", "auroc", None),
        ("failure_detection", "aurc", "ood"), ("calibration", "ace", "id"), ("ambiguity_modeling", "ncc", "id"),
        ("al_improvement", "al_improvement", "ood")})
    print()
    print(render_table(headline, "markdown"))
    (out_dir / "table.md").write_text(render_table(table, "markdown"), encoding="utf-8")
    (out_dir / "table.tex").write_text(render_table(table, "latex", standalone=True), encoding="utf-8")
    (out_dir / "table.html").write_text(render_table(table, "html"), encoding="utf-8")
    plots = [bar_plot(headline, dim, out_dir / f"bars_{dim}.png",
                      filter={"unc_type": {"pred_model": ["Softmax"]}} if dim == "unc_type" else None,
                      ordering={"pred_model": ["Softmax", "Dropout", "Ensemble"]},
                      coloring={"unc_type": {"aleatoric_uncertainty": "tab:cyan", "epistemic_uncertainty": "tab:pink",
                                             "predictive_uncertainty": "tab:olive"}})
             for dim in ("pred_model", "unc_type", "aggregation")]
    print(f"wrote table.md, table.tex, table.html and {', '.join(p.name for p in plots)} in {out_dir}")
