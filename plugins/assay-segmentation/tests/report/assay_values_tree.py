"""Write a small ValUES-shaped result tree, file by file as ValUES' evaluation writes it.

The layout and the JSON structure follow ValUES' own writers (commit 83c9588):
``uncertainty_modeling/data_carrier_3D.py`` (LIDC ``metrics.json``: ``{image path: {dice, ged},
"mean": {dice, ged}}``), ``test_2D.py`` (GTA: ``{image id: {"metrics": {...}}, "mean":
{"metrics": {...}}}``), ``evaluation/metrics/auroc.py`` (``ood_detection.json`` in the version
folder, ``{"mean": {unc: {agg: {"metrics": {ood_detection_rate, auroc}}}}}``), ``aurc.py``
(``failure_detection.json``, aurc and eaurc), ``al_improvement.py`` (no aleatoric entry),
``ace.py`` (``calibration.json``, per image and mean, no aggregation level) and ``ncc.py``
(``ambiguity_modeling.json``). Values are drawn from a seeded generator; the paths come from
the dataset configs read here with plain YAML, independently of assay's reader.
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import yaml

CONFIGS = Path("/work/shared/data/values-configs")
#: the stand-ins for the two training configs ValUES' GTA dataset config loads (examples/values/)
STAND_INS = Path(__file__).resolve().parents[4] / "examples" / "values" / "uncertainty_modeling"


def values_checkout(root: Path) -> Path:
    """A ValUES checkout's config layout under ``root``: the published ``evaluation/configs`` (unchanged) beside
    the example's ``uncertainty_modeling/configs`` stand-ins; returns the ``evaluation/configs`` folder."""
    configs = root / "evaluation" / "configs"
    shutil.copytree(CONFIGS, configs)
    shutil.copytree(STAND_INS, root / "uncertainty_modeling")
    return configs


def _dump(path: Path, tree: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(tree, indent=2))  # Python's json, as ValUES writes (NaN as a bare literal)


def dataset(name: str) -> dict:
    text = (CONFIGS / "datasets" / f"{name}.yaml").read_text()
    data = yaml.safe_load(text)
    return data[name.upper()]


def version_dirs(spec: dict, base: Path):
    """(params, version folder, model settings) for every version, in iter_params order."""
    keys = list(spec["iter_params"])
    for combo in itertools.product(*(spec["iter_params"][k] for k in keys)):
        params = dict(zip(keys, combo))
        model = spec["prediction_models"][params["pred_model"]]
        fields = {k: v for k, v in spec.items() if not isinstance(v, (dict, list))}
        fields.update(params)
        yield params, base / params["pred_model"] / "test_results" / model["naming_scheme_version"].format(
            **fields), model


def write_tree(base: Path, name: str = "lidc", *, n_images: int = 6, seed: int = 0, three_d: bool = True) -> dict:
    """Write every result file the table and plot configs read; return {(version dir, file, split): tree}."""
    rng = np.random.default_rng(seed)
    spec = dataset(name)
    written = {}
    for _, vdir, model in version_dirs(spec, base):
        uncs, aggs = model["unc_types"], model["aggregations"]
        ood = {"mean": {u: {a: {"metrics": {"ood_detection_rate": float(rng.uniform()),
                                            "auroc": float(rng.uniform(0.4, 0.95))}} for a in aggs} for u in uncs}}
        _dump(vdir / "ood_detection.json", ood)
        written[(vdir, "ood_detection.json", None)] = ood
        for split in ("id", "ood"):
            images = [f"/data/{split}/case_{i:03d}.nii.gz" if three_d else f"img_{i:03d}" for i in range(n_images)]
            dice = {im: float(rng.uniform(0.5, 0.95)) for im in images}
            ged = {im: float(rng.uniform(0.1, 0.6)) for im in images}
            if three_d:
                metrics = {im: {"dice": dice[im], "ged": ged[im]} for im in images}
                metrics["mean"] = {"dice": float(np.mean(list(dice.values()))),
                                   "ged": float(np.mean(list(ged.values())))}
            else:
                metrics = {im: {"metrics": {"dice": dice[im], "ged": ged[im]}} for im in images}
                metrics["mean"] = {"metrics": {"dice": float(np.mean(list(dice.values()))),
                                               "ged": float(np.mean(list(ged.values())))}}
            fd = {"mean": {u: {a: {"metrics": {"aurc": float(rng.uniform(0.05, 0.4)),
                                               "eaurc": float(rng.uniform(0.0, 0.1))}} for a in aggs} for u in uncs}}
            cal: dict = {im.split("/")[-1].split(".")[0]: {} for im in images}
            ncc: dict = {k: {} for k in cal}
            cal["mean"], ncc["mean"] = {}, {}
            for u in uncs:
                aces = [float(rng.uniform(0.01, 0.3)) for _ in cal if _ != "mean"]
                nccs = [float(rng.uniform(0.0, 0.8)) for _ in ncc if _ != "mean"]
                for (k, a, c) in zip([k for k in cal if k != "mean"], aces, nccs):
                    cal[k][u] = {"metrics": {"ace": a}}
                    ncc[k][u] = {"metrics": {"ncc": c}}
                cal["mean"][u] = {"metrics": {"ace": float(np.mean(aces))}}
                ncc["mean"][u] = {"metrics": {"ncc": float(np.mean(nccs))}}
            files = {"metrics.json": metrics, "failure_detection.json": fd, "calibration.json": cal,
                     "ambiguity_modeling.json": ncc}
            if split == "ood":
                files["al_improvement.json"] = {"mean": {u: {a: {"metrics": {
                    "al_improvement": float(rng.uniform(-0.05, 0.1))}} for a in aggs}
                    for u in uncs if u != "aleatoric_uncertainty"}}
            for fname, tree in files.items():
                _dump(vdir / split / fname, tree)
                written[(vdir, fname, split)] = tree
    return written


def values_table(base: Path, name: str, split_name: str | None = None, tasks_file: str = "table_tasks.yaml") -> dict:
    """ValUES' table, recomputed with pandas from the JSON files: {(row..., column label): (mean, std)} x100."""
    spec = dataset(name)
    import pandas as pd

    tasks = yaml.safe_load((CONFIGS / "tasks" / tasks_file).read_text())
    records = []
    for params, vdir, model in version_dirs(spec, base):
        pm = {"Dropout-Final": "Dropout"}.get(params["pred_model"], params["pred_model"])
        for task, metrics in tasks.items():
            for metric, mp in metrics.items():
                for split in mp["dataset_splits"] or [None]:
                    path = vdir / split / mp["metrics_file_name"] if split else vdir / mp["metrics_file_name"]
                    mean = json.loads(path.read_text())["mean"]
                    for unc in model["unc_types"]:
                        for agg in model["aggregations"]:
                            node = mean
                            if len(mp["levels"]) >= 2:
                                node = node.get(unc)
                            if node is not None and len(mp["levels"]) == 3:
                                node = node.get(agg)
                            if node is None:
                                continue
                            value = node["metrics"][mp["metrics_key"]] if "metrics" in node else node[
                                mp["metrics_key"]]
                            label = f"{metric} {split}" if split else metric
                            key = ((params[split_name],) if split_name else ()) + (pm, unc, agg)
                            records.append({"key": key, "col": (task, label), "seed": params["seed"],
                                            "value": value})
    df = pd.DataFrame(records)
    g = df.groupby(["key", "col"])["value"]
    return {k: (m * 100, s * 100) for (k, m), s in zip(g.mean().items(), g.std(ddof=1).to_numpy())}
