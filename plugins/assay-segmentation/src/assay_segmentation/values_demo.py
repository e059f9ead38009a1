"""Demo section ``values``: ValUES' own toy config, unchanged, on a synthetic ValUES experiment tree.

Writes the NIfTI tree the config describes (:mod:`assay_segmentation.values_tree`), runs
``examples/values/evaluation/configs/eval_config_toy.yaml`` with only ``base_path`` overridden (the
threshold it needs is found in memory), and prints the AUROC of OoD detection per
prediction model and uncertainty type (mean over the three seeds).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

#: where the copied ValUES configs live, relative to the repository (or the working folder)
CONFIG = Path("examples") / "values" / "evaluation" / "configs" / "eval_config_toy.yaml"


def find_config() -> Path | None:
    for root in (Path.cwd(), *Path(__file__).resolve().parents):
        if (root / CONFIG).is_file():
            return root / CONFIG
    return None


def run(out_dir: Path) -> None:
    from assay.jsonio import read_json
    from assay_segmentation.downstream import run_experiments
    from assay_segmentation.values_tree import write_values_tree

    config = find_config()
    if config is None:
        print(f"skipped: {CONFIG} not found (run the demo from the repository)")
        return
    tree = (out_dir / "tree").resolve()
    start = time.perf_counter()
    written = write_values_tree(config, overrides=[f"base_path={tree}"], splits={"val": 3, "ood": 24})
    print(f"wrote a ValUES tree: {written['versions']} versions, {written['files']} files "
          f"({time.perf_counter() - start:.1f} s)")
    summary = run_experiments(config, overrides=[f"base_path={tree}"])
    print(f"assay run {config.name} base_path={tree}: {summary.versions} versions, {summary.images} image "
          f"evaluations, {len(summary.files) - 1} ValUES result files ({summary.seconds:.1f} s)")
    auroc: dict[tuple[str, str, str], list[float]] = {}
    for path in sorted(tree.glob("*/test_results/*/ood_detection.json")):
        model = path.parts[-4].split("-")[0]
        for unc, by_agg in read_json(path)["mean"].items():
            for agg, entry in by_agg.items():
                auroc.setdefault((model, unc.split("_")[0], agg), []).append(entry["metrics"]["auroc"])
    print("\nOoD detection AUROC (mean over seeds), ValUES' ood_detection.json files:")
    print("| model | uncertainty | patch_level | threshold |\n|---|---|---|---|")
    for model, unc in dict.fromkeys((m, u) for m, u, _ in auroc):
        cells = [f"{np.mean(auroc[(model, unc, agg)]):.3f}" for agg in ("patch_level", "threshold")]
        print(f"| {model} | {unc} | {' | '.join(cells)} |")
