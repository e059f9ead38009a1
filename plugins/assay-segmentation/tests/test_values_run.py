"""ValUES' toy and LIDC configs, unchanged, run on a small synthetic ValUES tree: ValUES' files, ValUES' numbers.

Expected values are computed here from the NIfTI files with ValUES' definitions and
independent libraries: ``scipy.signal.convolve`` for the patch sums (as ValUES does),
``sklearn.metrics.roc_curve`` / ``auc`` for the AUROC, ``sklearn.calibration._sigmoid_calibration``
for Platt scaling, ``numpy.quantile`` for the threshold, and a plain loop over ValUES'
risk-coverage curve. (Side by side with ValUES' own ``eval_experiments.py`` on such a
tree, outside the repository, every one of the 554 result files of the LIDC config and
173 of the toy config agreed to 1e-16, Platt parameters to 1e-7: see docs/downstream.md.)
"""

from __future__ import annotations

import json
from pathlib import Path

import nibabel
import numpy as np
import pytest

from assay.errors import ConfigError
from assay_segmentation.downstream import run_experiments

CONFIGS = Path(__file__).resolve().parents[3] / "examples" / "values" / "evaluation" / "configs"
TOY = CONFIGS / "eval_config_toy.yaml"
LIDC = CONFIGS / "eval_config_lidc.yaml"
SHAPE = (12, 11, 10)  # not a cube: an axis mix-up would show


def load(path: Path) -> np.ndarray:
    return np.asanyarray(nibabel.load(str(path)).dataobj)


def versions_on_disk(base: Path) -> list[Path]:
    return sorted(p for p in base.glob("*/test_results/*") if p.is_dir())


def unc_maps(exp: Path, split: str, model: str) -> dict[str, dict[str, np.ndarray]]:
    """uncertainty type -> image id -> map, read the way ValUES' ExperimentDataloader does."""
    folder = exp / split
    ids = sorted({p.name.split("_")[0] for p in (folder / "pred_seg").glob("*.nii.gz")})
    out: dict[str, dict[str, np.ndarray]] = {}
    if model == "Softmax":
        out["predictive_uncertainty"] = {
            i: 1 - np.max([load(folder / "pred_prob" / f"{i}_01_{c:02d}.nii.gz") for c in (1, 2)], axis=0) for i in ids}
        return out
    out["predictive_uncertainty"] = {i: load(folder / "pred_entropy" / f"{i}.nii.gz") for i in ids}
    for unc in ("aleatoric_uncertainty", "epistemic_uncertainty"):
        out[unc] = {i: load(folder / unc / f"{i}.nii.gz") for i in ids}
    return out


def expected_thresholds(base: Path) -> dict[str, dict[str, float]]:
    """ValUES' find_threshold: per model, the mean foreground quantile of every val prediction file, applied to
    the pooled val maps of all its versions."""
    by_model: dict[str, list[Path]] = {}
    for exp in versions_on_disk(base):
        by_model.setdefault(exp.parts[-3].split("-")[0], []).append(exp)
    out: dict[str, dict[str, float]] = {}
    for model, exps in by_model.items():
        fractions = [1 - np.count_nonzero(load(p)) / load(p).size for e in exps
                     for p in sorted((e / "val" / "pred_seg").glob("*.nii.gz"))]
        q = float(np.mean(fractions))
        pooled: dict[str, list[np.ndarray]] = {}
        for e in exps:
            for unc, maps in unc_maps(e, "val", model).items():
                pooled.setdefault(unc, []).extend(maps[i] for i in sorted(maps))
        out[model] = {unc: float(np.quantile(np.array(m), q)) for unc, m in pooled.items()}
    return out


def patch_level(u: np.ndarray, size: int = 10) -> float:
    from scipy.signal import convolve

    return float(np.max(convolve(u, np.ones([size] * u.ndim), mode="valid")))


def threshold_level(u: np.ndarray, t: float) -> float:
    sel = u[u >= t]
    return float(sel.sum() / sel.size) if sel.size else float(sel.sum())


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    from assay_segmentation.values_tree import write_values_tree

    base = tmp_path_factory.mktemp("toy") / "tree"
    write_values_tree(TOY, overrides=[f"base_path={base}"], shape=SHAPE,
                      splits={"val": 2, "id": 1, "ood": 24, "unlabeled": 1})
    return base


@pytest.mark.slow
def test_toy_config_unchanged_writes_valuess_ood_detection_files_with_its_numbers(toy, tmp_path):
    from sklearn.metrics import auc, roc_curve

    before = sorted(p for p in toy.rglob("*") if p.is_file())
    summary = run_experiments(TOY, overrides=[f"base_path={toy}"])
    assert summary.versions == 15 and summary.tasks == ("ood_detection",)
    # only ood_detection.json per version (and assay's manifest): the threshold was found in memory
    new = sorted(set(p for p in toy.rglob("*") if p.is_file()) - set(before))
    assert [p.relative_to(toy).as_posix() for p in new if p.name != "assay-values-run.json"] == sorted(
        (e / "ood_detection.json").relative_to(toy).as_posix() for e in versions_on_disk(toy))
    thresholds = expected_thresholds(toy)
    for exp in versions_on_disk(toy):
        model = exp.parts[-3].split("-")[0]
        got = json.loads((exp / "ood_detection.json").read_text())
        maps = unc_maps(exp, "ood", model)
        assert list(got) == ["mean"] and list(got["mean"]) == list(maps)
        for unc, by_id in maps.items():
            ids = sorted(by_id)
            labels = [0 if int(i) > 20 else 1 for i in ids]  # ValUES' toy rule
            scores = {"patch_level": [patch_level(by_id[i]) for i in ids],
                      "threshold": [threshold_level(by_id[i], thresholds[model][unc]) for i in ids]}
            assert list(got["mean"][unc]) == ["patch_level", "threshold"]
            for agg, s in scores.items():
                fpr, tpr, _ = roc_curve(labels, s)
                ranked = sorted(range(len(ids)), key=lambda k, s=s: s[k], reverse=True)[: len(ids) // 2]
                rate = sum(labels[k] for k in ranked) / 21
                metrics = got["mean"][unc][agg]["metrics"]
                assert metrics["auroc"] == pytest.approx(auc(fpr, tpr), abs=1e-12)
                assert metrics["ood_detection_rate"] == pytest.approx(rate, abs=1e-12)


@pytest.mark.slow
def test_toy_threshold_and_aggregation_steps_write_valuess_files_under_an_output_folder(toy, tmp_path):
    before = sorted(p for p in toy.rglob("*") if p.is_file())
    out = tmp_path / "out"
    run_experiments(TOY, overrides=[f"base_path={toy}"], output=out, tasks=["threshold", "aggregation"])
    assert sorted(p for p in toy.rglob("*") if p.is_file()) == before  # the tree is left alone
    thresholds = expected_thresholds(toy)
    got = json.loads((out / "threshold_analysis.json").read_text())
    assert set(got) == set(thresholds) | {"Mean"}
    for model, by_unc in thresholds.items():
        for unc, t in by_unc.items():
            assert got[model][f"Mean {unc.split('_')[0]} threshold"] == pytest.approx(t, abs=1e-12)
    assert got["Mean"]["Mean predictive threshold"] == pytest.approx(
        np.mean([thresholds[m]["predictive_uncertainty"] for m in thresholds]), abs=1e-12)
    assert set(json.loads((out / "quantile_analysis.json").read_text())) == set(thresholds)
    exp = out / "Ensemble-Case-3" / "test_results" / "epochs150_fold0_seed158"
    for split in ("id", "ood", "unlabeled", "val"):
        agg = json.loads((exp / split / "aggregated_epistemic_uncertainty.json").read_text())
        maps = unc_maps(toy / exp.relative_to(out), split, "Ensemble")["epistemic_uncertainty"]
        assert sorted(agg) == [f"{i}.nii.gz" for i in sorted(maps)]
        for i, u in maps.items():
            entry = agg[f"{i}.nii.gz"]
            assert entry["patch_level"]["max_score"] == pytest.approx(patch_level(u), rel=1e-12)
            box = entry["patch_level"]["bounding_box"]  # ValUES: the first patch at the maximum, C order
            corner = tuple(b[0] for b in box)
            assert [b[1] - b[0] for b in box] == [10, 10, 10]
            assert u[tuple(slice(c, c + 10) for c in corner)].sum() == pytest.approx(patch_level(u), rel=1e-9)
            t = thresholds["Ensemble"]["epistemic_uncertainty"]
            assert entry["threshold"] == {"max_score": pytest.approx(threshold_level(u, t), rel=1e-12),
                                          "threshold": pytest.approx(t, rel=1e-12)}


@pytest.fixture(scope="module")
def lidc(tmp_path_factory):
    from assay_segmentation.values_tree import write_values_tree

    root = tmp_path_factory.mktemp("lidc")
    write_values_tree(LIDC, overrides=[f"base_path={root}/first", f"second_cycle_path={root}/second"],
                      shape=SHAPE, splits={"val": 2, "id": 2, "ood": 3, "unlabeled": 2})
    return root


def _mean_dice(path: Path) -> float:
    mean = json.loads(path.read_text())["mean"]
    return mean["metrics"]["dice"] if "metrics" in mean else mean["dice"]


@pytest.mark.slow
def test_lidc_config_unchanged_writes_al_improvement_as_valuess(lidc, monkeypatch):
    monkeypatch.delenv("USER", raising=False)  # the entries that name ${oc.env:USER} are not run
    summary = run_experiments(LIDC, overrides=[f"base_path={lidc}/first", f"second_cycle_path={lidc}/second"])
    assert summary.versions == 30 and summary.tasks == ("al_improvement",)
    exps = versions_on_disk(lidc / "first")
    assert len(exps) == 30
    for exp in exps:
        model, version = exp.parts[-3], exp.name
        got = json.loads((exp / "ood" / "al_improvement.json").read_text())
        d1 = _mean_dice(exp / "ood" / "metrics.json")
        second = lidc / "second" / model / "test_results"
        dr = _mean_dice(second / "random" / "random" / version / "ood" / "metrics.json")
        uncs = ["predictive_uncertainty"] if model == "Softmax" else ["predictive_uncertainty",
                                                                        "epistemic_uncertainty"]
        assert list(got["mean"]) == uncs  # aleatoric is skipped, as in ValUES
        for unc in uncs:
            for agg in ("patch_level", "threshold"):
                du = _mean_dice(second / unc / agg / version / "ood" / "metrics.json")
                assert got["mean"][unc][agg] == {"metrics": {"al_improvement": pytest.approx(
                    (du / d1 - 1) - (dr / d1 - 1), abs=1e-15)}}


def values_curve_aurc(risks: list[float], confids: list[float]) -> tuple[float, float]:
    """ValUES' risk-coverage curve, step by step as its definition reads (a loop, no vectorisation)."""
    n = len(risks)
    order = list(np.argsort(np.array(confids)))
    left = sum(risks)
    risk_points, weights, pending = [left / n], [], 0
    for i in range(n - 1):
        left -= risks[order[i]]
        pending += 1
        if i == 0 or confids[order[i]] != confids[order[i - 1]]:
            risk_points.append(left / (n - 1 - i))
            weights.append(pending / n)
            pending = 0
    if pending:
        risk_points.append(risk_points[-1])
        weights.append(pending / n)
    area = sum((risk_points[j] + risk_points[j + 1]) / 2 * weights[j] for j in range(len(weights)))
    best = sorted(risks)
    optimal = sum(sum(best[: k + 1]) / (k + 1) for k in range(n)) / n
    return area, area - optimal


def test_values_curve_with_a_tie_keeps_valuess_point_inside_the_tie():
    from assay_segmentation.values_steps import values_aurc

    # confidences -0.29, 0, 0: after removing the first 0 a point is added, inside the tie (ValUES' curve)
    risks, confids = [0.9583, 1.0, 0.8212], [0.0, 0.0, -0.2875]
    # hand: R = 2.7795/3, (1.9583)/2, 1.0 at coverages 1, 2/3, 1/3; weights 1/3, 1/3
    expected = ((2.7795 / 3 + 1.9583 / 2) / 2 + (1.9583 / 2 + 1.0) / 2) / 3
    assert values_aurc(risks, confids)[0] == pytest.approx(expected, abs=1e-12)
    assert values_aurc(risks, confids) == pytest.approx(values_curve_aurc(risks, confids), abs=1e-12)
    rng = np.random.default_rng(5)
    for n in (1, 2, 5, 17):
        r = list(rng.random(n))
        c = list(rng.integers(0, 3, n) / 2)  # many ties
        assert values_aurc(r, c) == pytest.approx(values_curve_aurc(r, c), abs=1e-12)


@pytest.mark.slow
def test_lidc_failure_calibration_and_ambiguity_equal_valuess_definitions(lidc, tmp_path):
    from sklearn.calibration import _sigmoid_calibration

    out = tmp_path / "out"
    run_experiments(LIDC, overrides=[f"base_path={lidc}/first", f"second_cycle_path={lidc}/second"], output=out,
                    tasks=["failure_detection", "calibration", "ambiguity_modeling"], executor="processes[workers=2]")
    thresholds = expected_thresholds(lidc / "first")
    for exp in versions_on_disk(lidc / "first")[::7]:  # a few versions of different models
        model = exp.parts[-3]
        rel = exp.relative_to(lidc / "first")
        # Platt scaling on val: one fit per image on -u against rater correctness, averaged
        platt: dict[str, tuple[float, float]] = {}
        val_maps = unc_maps(exp, "val", model)
        for unc, by_id in val_maps.items():
            ab = []
            for i, u in by_id.items():
                pred = load(exp / "val" / "pred_seg" / f"{i}_{'01' if model == 'Softmax' else 'mean'}.nii.gz")
                refs = np.array([load(exp / "val" / "gt_seg" / f"{i}_{r:02d}.nii.gz") for r in range(4)])
                correct = (refs == pred[None]).astype(int).ravel()
                ab.append(_sigmoid_calibration(-np.broadcast_to(u, refs.shape).ravel(), correct))
            platt[unc] = (float(np.mean([a for a, _ in ab])), float(np.mean([b for _, b in ab])))
        for split in ("id", "ood"):
            maps = unc_maps(exp, split, model)
            metrics = json.loads((exp / split / "metrics.json").read_text())
            dice = {k.split("/")[-1].split(".")[0]: v["dice"] for k, v in metrics.items() if k != "mean"}
            fd = json.loads((out / rel / split / "failure_detection.json").read_text())
            cal = json.loads((out / rel / split / "calibration.json").read_text())
            amb = json.loads((out / rel / split / "ambiguity_modeling.json").read_text())
            for unc, by_id in maps.items():
                ids = sorted(by_id)
                t = thresholds[model.split("-")[0]][unc]
                for agg in ("patch_level", "threshold"):
                    scores = [patch_level(by_id[i]) if agg == "patch_level" else threshold_level(by_id[i], t)
                              for i in ids]
                    aurc, eaurc = values_curve_aurc([1 - dice[i] for i in ids], [-s for s in scores])
                    assert fd["mean"][unc][agg]["metrics"] == {"aurc": pytest.approx(aurc, abs=1e-12),
                                                              "eaurc": pytest.approx(eaurc, abs=1e-12)}
                aces, nccs = [], []
                for i in ids:
                    u = by_id[i]
                    refs = np.array([load(exp / split / "gt_seg" / f"{i}_{r:02d}.nii.gz") for r in range(4)])
                    pred = load(exp / split / "pred_seg" / f"{i}_{'01' if model == 'Softmax' else 'mean'}.nii.gz")
                    correct = (refs == pred[None]).astype(int).ravel()
                    a, b = platt[unc]
                    conf = 1 / (1 + np.exp(-np.broadcast_to(u, refs.shape).ravel() * a + b))
                    bins = np.digitize(conf, np.linspace(0.0, 1.0 + 1e-8, 21)) - 1
                    gaps = [abs(correct[bins == k].mean() - conf[bins == k].mean()) for k in np.unique(bins)]
                    aces.append(float(np.mean(gaps)))
                    g = np.var(refs, axis=0)
                    nccs.append(float(np.sum((g - g.mean()) * (u - u.mean())) /
                                      (g.size * np.std(g, ddof=1) * np.std(u, ddof=1))))
                    assert cal[i][unc]["metrics"]["ace"] == pytest.approx(aces[-1], abs=1e-6)
                    assert amb[i][unc]["metrics"]["ncc"] == pytest.approx(nccs[-1], abs=1e-12)
                assert cal["mean"][unc]["metrics"]["ace"] == pytest.approx(np.mean(aces), abs=1e-6)
                assert amb["mean"][unc]["metrics"]["ncc"] == pytest.approx(np.mean(nccs), abs=1e-12)
        params = json.loads((out / rel / "platt_scale_params.json").read_text())
        for unc, (a, b) in platt.items():
            assert params[unc] == {"a": pytest.approx(a, abs=1e-5), "b": pytest.approx(b, abs=1e-5)}


def test_missing_tree_and_missing_second_cycle_are_errors_naming_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"No pred_seg folder .*Softmax-Case-3/test_results/epochs150_seed128"):
        run_experiments(TOY, overrides=[f"base_path={tmp_path}"])
    with pytest.raises(ConfigError, match="al_improvement needs second_cycle_path"):
        run_experiments(LIDC, overrides=[f"base_path={tmp_path}", "second_cycle_path=null"])


@pytest.mark.slow
def test_lidc_ood_detection_reads_the_split_file_safely(lidc, tmp_path, monkeypatch):
    import pickle

    monkeypatch.setenv("USER", "someone")
    splits = tmp_path / "splits"
    for shift in ("texture", "malignancy"):
        (splits / shift / "firstCycle").mkdir(parents=True)
        pools = [{"train": ["t.npy"], "id_unlabeled_pool": ["0100.npy"], "ood_unlabeled_pool": ["0101.npy"]}]
        (splits / shift / "firstCycle" / "splits.json").write_text(json.dumps(pools))
    overrides = [f"base_path={lidc}/first", f"second_cycle_path={lidc}/second",
                 f"task_params.ood_detection.function.base_splits_path={splits}"]
    out = tmp_path / "out"
    run_experiments(LIDC, overrides=overrides, output=out, tasks=["ood_detection"])
    thresholds = expected_thresholds(lidc / "first")
    for exp in versions_on_disk(lidc / "first")[::11]:
        model = exp.parts[-3]
        got = json.loads((out / exp.relative_to(lidc / "first") / "ood_detection.json").read_text())
        for unc, by_id in unc_maps(exp, "unlabeled", model).items():
            t = thresholds[model][unc]
            for agg in ("patch_level", "threshold"):
                s = {i: patch_level(u) if agg == "patch_level" else threshold_level(u, t) for i, u in by_id.items()}
                # one ID image (0100), one OoD image (0101): AUROC 1, 0 or 0.5; the top half is the higher one
                auroc = 1.0 if s["0101"] > s["0100"] else (0.5 if s["0101"] == s["0100"] else 0.0)
                rate = 1.0 if s["0101"] > s["0100"] else 0.0
                assert got["mean"][unc][agg]["metrics"] == {"ood_detection_rate": rate, "auroc": auroc}

    # a pickled split file alone is never opened: the error gives the conversion to JSON
    (splits / "texture" / "firstCycle" / "splits.json").unlink()
    (splits / "texture" / "firstCycle" / "splits.pkl").write_bytes(pickle.dumps([{"train": []}]))
    with pytest.raises(ValueError, match=r"splits\.pkl: assay does not unpickle files.*splits\.json"):
        run_experiments(LIDC, overrides=overrides, output=out, tasks=["ood_detection"])


def values_moved(fold: dict, samples: list[str]) -> dict:
    """ValUES' ``update_splits`` on fold 0, with its numpy arrays (np.argwhere / np.delete / np.append)."""
    f = {k: np.array(v) for k, v in fold.items()}
    for sample in samples:
        for pool in ("id_unlabeled_pool", "ood_unlabeled_pool"):
            if sample in f[pool]:
                f[pool] = np.delete(f[pool], np.argwhere(f[pool] == sample)[0][0], axis=0)
                f["train"] = np.append(f["train"], sample)
                break
        else:
            raise AssertionError(sample)
    return {k: v.tolist() for k, v in f.items()}


def values_random_query(fold: dict, random_type: str, seed: int) -> list[str]:
    """ValUES' ``get_samples_to_query_random(_best|_worst)``, with numpy's global generator as ValUES seeds it."""
    np.random.seed(seed)
    ids, ood = np.array(fold["id_unlabeled_pool"]), np.array(fold["ood_unlabeled_pool"])
    n = int((len(ids) + len(ood)) * 0.5)
    if random_type == "random":
        return np.random.choice(np.concatenate((ids, ood)), n, replace=False).tolist()
    if random_type == "best":
        return np.concatenate((ood, np.random.choice(ids, n - len(ood), replace=False))).tolist()
    return np.random.choice(ids, n, replace=False).tolist()


@pytest.mark.slow
def test_lidc_second_cycle_split_files_equal_valuess_queries(lidc, tmp_path, monkeypatch):
    monkeypatch.setenv("USER", "someone")
    splits = tmp_path / "splits"
    fold0 = {"train": ["t1.npy", "t2.npy"], "id_unlabeled_pool": ["0100.npy", "a.npy", "b.npy", "c.npy", "d.npy"],
             "ood_unlabeled_pool": ["0101.npy", "e.npy", "f.npy"]}
    fold1 = {"train": ["x.npy"], "id_unlabeled_pool": [], "ood_unlabeled_pool": []}
    for shift in ("texture", "malignancy"):
        (splits / shift / "firstCycle").mkdir(parents=True)
        (splits / shift / "firstCycle" / "splits.json").write_text(json.dumps([fold0, fold1]))
    overrides = [f"base_path={lidc}/first", f"second_cycle_path={lidc}/second",
                 f"task_params.second_cycle_splits.function.base_splits_path={splits}",
                 f"task_params.second_cycle_splits_random.function.base_splits_path={splits}"]
    out = tmp_path / "out"
    run_experiments(LIDC, overrides=overrides, output=out, tasks=["second_cycle_splits", "second_cycle_splits_random"])
    written = out / splits.relative_to(splits.anchor)
    thresholds = expected_thresholds(lidc / "first")
    checked = 0
    for exp in versions_on_disk(lidc / "first"):
        model = exp.parts[-3]
        shift, seed = exp.name.split("_")[0], int(exp.name.split("seed")[1])
        second = written / shift / "secondCycle" / model
        for random_type in ("random", "best", "worst"):
            got = json.loads((second / "random" / random_type / f"splits_seed{seed}.json").read_text())
            assert got == [values_moved(fold0, values_random_query(fold0, random_type, seed)), fold1]
        for unc, by_id in unc_maps(exp, "unlabeled", model).items():
            t = thresholds[model][unc]
            for agg in ("patch_level", "threshold"):
                score = {i: patch_level(u) if agg == "patch_level" else threshold_level(u, t) for i, u in by_id.items()}
                top = sorted(score, key=score.get, reverse=True)[: int(len(score) * 0.5)]
                got = json.loads((second / unc / agg / f"splits_seed{seed}.json").read_text())
                assert got == [values_moved(fold0, [f"{i}.npy" for i in top]), fold1]
                checked += 1
    assert checked == 2 * 3 * (1 * 2 + 4 * 3 * 2)  # shifts x seeds x (Softmax 1 map, 4 models 3) x 2 aggregations

    # a queried image that no pool holds is an error naming it and the split folder
    (splits / "texture" / "firstCycle" / "splits.json").write_text(json.dumps([dict(fold0, id_unlabeled_pool=[])]))
    with pytest.raises(ValueError, match=r"image '0100\.npy' is in neither unlabeled pool of fold 0"):
        run_experiments(LIDC, overrides=overrides, output=out, tasks=["second_cycle_splits"])


def test_generator_writes_split_files_and_ged_as_valuess_test_scripts(tmp_path):
    from assay_segmentation.values_tree import main as values_tree

    base, splits = tmp_path / "first", tmp_path / "splits"
    assert values_tree([str(LIDC), f"base_path={base}", f"second_cycle_path={tmp_path / 'second'}", "--size", "6",
                        "6", "5", "--splits", str(splits)]) == 0
    for shift in ("texture", "malignancy"):
        (fold,) = json.loads((splits / shift / "firstCycle" / "splits.json").read_text())
        exp = base / "Dropout" / "test_results" / f"{shift}_fold0_seed123"
        unlabeled = sorted(p.name.split("_")[0] for p in (exp / "unlabeled" / "pred_seg").glob("*_mean.nii.gz"))
        assert fold["id_unlabeled_pool"] + fold["ood_unlabeled_pool"] != [] and sorted(
            n[:-4] for n in fold["id_unlabeled_pool"] + fold["ood_unlabeled_pool"]) == unlabeled
        assert all(int(n[:-4]) % 2 == 1 for n in fold["ood_unlabeled_pool"])
    # GED as ValUES' calculate_ged: 2 E[d(S, Y)] - E[d(S, S')] - E[d(Y, Y')], d = 1 - Dice pooled over the pairs
    folder = base / "Dropout" / "test_results" / "texture_fold0_seed123" / "id"
    metrics = json.loads((folder / "metrics.json").read_text())
    for key, entry in metrics.items():
        if key == "mean":
            continue
        image = Path(key).name.split(".")[0]
        s = [load(p) > 0 for p in sorted((folder / "pred_seg").glob(f"{image}_0*.nii.gz"))]
        y = [load(p) > 0 for p in sorted((folder / "gt_seg").glob(f"{image}_*.nii.gz"))]

        def dist(a, b):
            tp = sum(int((x & z).sum()) for x in a for z in b)
            fp_fn = sum(int((x ^ z).sum()) for x in a for z in b)
            return 1 - 2 * tp / (2 * tp + fp_fn) if tp + fp_fn else 0.0

        assert entry["ged"] == pytest.approx(2 * dist(s, y) - dist(s, s) - dist(y, y), abs=1e-12)
    assert metrics["mean"]["ged"] == pytest.approx(np.mean([e["ged"] for k, e in metrics.items() if k != "mean"]))


@pytest.mark.parametrize("content, message", [
    ({"train": []}, r"expected a JSON list of folds"),
    ([], r"expected a JSON list of folds"),
    ([{"train": [], "id_unlabeled_pool": []}], r"fold 0: ood_unlabeled_pool: expected a list of file names.*nothing"),
    ([{"train": [], "id_unlabeled_pool": [3], "ood_unlabeled_pool": []}],
     r"fold 0: id_unlabeled_pool: expected a list of file names.*\[3\]"),
])
def test_a_malformed_split_file_is_an_error_naming_the_file_and_the_fold(tmp_path, content, message):
    from assay_segmentation.values_steps import read_splits

    path = tmp_path / "splits.json"
    path.write_text(json.dumps(content))
    with pytest.raises(ValueError, match=r"splits\.json: " + message):
        read_splits(path)
    good = [{"train": ["a.npy"], "id_unlabeled_pool": [["b", "gta"]], "ood_unlabeled_pool": []}]
    path.write_text(json.dumps(good))
    assert read_splits(path) == good


def test_generator_command_line_errors_name_the_problem(tmp_path, capsys):
    from assay_segmentation.values_tree import main as values_tree

    (tmp_path / "afile").write_text("")
    with pytest.raises(SystemExit) as exit_:
        values_tree([str(TOY), f"base_path={tmp_path / 't'}", "--splits", str(tmp_path / "afile")])
    assert exit_.value.code == 2 and "--splits" in capsys.readouterr().err
    assert values_tree([str(TOY), "base_pth=/x"]) == 2
    assert "base_pth" in capsys.readouterr().err
