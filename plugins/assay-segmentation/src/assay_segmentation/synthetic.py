"""Synthetic ValUES-style data: several prediction models with uncertainty maps, raters, an OoD split.

Every image holds one ellipse (ellipsoid in 3-D); ``n_raters`` reference segmentations
jitter its centre and radii, so raters disagree at the boundary. Each prediction model
draws ``n_samples`` predicted segmentations per image (the mean prediction is their
majority vote); OoD images get larger errors. Uncertainty maps:

- ``aleatoric_uncertainty``: a band along the predicted boundary (where raters disagree);
- ``epistemic_uncertainty``: the disagreement of the samples plus a level that grows on
  OoD images (how much depends on the model's ``ood_awareness``);
- ``predictive_uncertainty``: their sum.

Layout (what :mod:`assay_segmentation.downstream` reads)::

    ROOT/splits.json                                      first-cycle split file
    ROOT/references/SPLIT/ID.npy                          (n_raters, *shape)
    ROOT/MODEL/seedS/SPLIT/{pred_seg,pred_samples,UNC_TYPE}/ID.npy
    ROOT/second_cycle/MODEL/QUERY/seedS/SPLIT/pred_seg/ID.npy

The second cycle is *simulated*: for each query (``UNC_TYPE/AGGREGATION`` with the given
aggregations, thresholds found on ``val`` like ``assay run`` does, and ``random/random``)
the generator queries the unlabeled pool exactly as the ``al_split_files`` task does,
and the second cycle's errors shrink on OoD test images in proportion to the share of
the OoD pool that was queried (and a little on ID images). It stands in for training a
second cycle; it is not one.

Run ``python -m assay_segmentation.synthetic OUT_DIR`` to write the example's data.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.jsonio import write_json_atomic

__all__ = ["DEFAULT_AGGREGATIONS", "DEFAULT_MODELS", "generate"]

UNC3 = ("predictive_uncertainty", "aleatoric_uncertainty", "epistemic_uncertainty")
DEFAULT_MODELS: dict[str, dict[str, Any]] = {
    "Softmax": {"unc_types": ("predictive_uncertainty",), "error": 1.2, "ood_awareness": 0.2},
    "Dropout": {"unc_types": UNC3, "error": 1.0, "ood_awareness": 0.6},
    "Ensemble": {"unc_types": UNC3, "error": 0.8, "ood_awareness": 1.0},
}
DEFAULT_AGGREGATIONS: dict[str, str] = {"image_mean": "image_mean", "patch_max": "patch_max[patch_size=5]",
                                        "threshold_mean": "threshold_mean"}


def _rng(*parts: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32("/".join(map(str, parts)).encode()))


def _blur(x: np.ndarray, k: int = 3) -> np.ndarray:
    """Box blur of side ``k`` (edge padding), separable cumulative sums."""
    out = x.astype(np.float64)
    pad = k // 2
    for axis in range(out.ndim):
        widths = [(0, 0)] * out.ndim
        widths[axis] = (pad + 1, k - pad - 1)
        c = np.cumsum(np.pad(out, widths, mode="edge"), axis=axis)
        n = out.shape[axis]
        out = (np.take(c, np.arange(k, k + n), axis=axis) - np.take(c, np.arange(0, n), axis=axis)) / k
    return out


def _ellipse(shape: Sequence[int], centre: np.ndarray, radii: np.ndarray) -> np.ndarray:
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    return sum(((g - c) / r) ** 2 for g, c, r in zip(grids, centre, radii)) <= 1.0


def _truth(shape: Sequence[int], image_key: str) -> tuple[np.ndarray, np.ndarray]:
    rng = _rng("truth", image_key)
    s = np.array(shape, dtype=float)
    return s / 2 + rng.uniform(-0.12, 0.12, len(shape)) * s, rng.uniform(0.16, 0.3, len(shape)) * s


def _difficulty(image_key: str, ood: bool) -> float:
    """How hard an image is for every model: ID images vary, OoD images are harder on average."""
    rng = _rng("difficulty", image_key)
    return float(rng.uniform(1.5, 4.0) if ood else rng.uniform(0.4, 2.2))


def _references(shape: Sequence[int], image_key: str, n_raters: int) -> np.ndarray:
    centre, radii = _truth(shape, image_key)
    rng = _rng("raters", image_key)
    return np.stack([_ellipse(shape, centre + rng.normal(0, 0.6, len(shape)),
                              radii * rng.uniform(0.85, 1.15, len(shape))) for _ in range(n_raters)]).astype(np.uint8)


def _predict(shape: Sequence[int], image_key: str, model: str, seed: Any, error: float, n_samples: int,
             tag: str = "first") -> tuple[np.ndarray, np.ndarray]:
    centre, radii = _truth(shape, image_key)
    rng = _rng("pred", tag, model, seed, image_key)
    shift = centre + rng.normal(0, error, len(shape))
    scale = radii * np.exp(rng.normal(0, 0.08 * error, len(shape)))
    samples = np.stack([_ellipse(shape, shift + rng.normal(0, 0.5 + 0.3 * error, len(shape)),
                                 scale * rng.uniform(0.9, 1.1, len(shape))) for _ in range(n_samples)])
    flips = rng.random(samples.shape) < 0.004 * error
    samples = (samples ^ flips).astype(np.uint8)
    return samples, (samples.mean(axis=0) >= 0.5).astype(np.uint8)


def _uncertainties(samples: np.ndarray, pred: np.ndarray, image_key: str, model: str, seed: Any, ood: bool,
                   awareness: float) -> dict[str, np.ndarray]:
    rng = _rng("unc", model, seed, image_key)
    soft = _blur(pred.astype(float), 3)
    aleatoric = np.clip(4 * soft * (1 - soft) * 0.6 + rng.normal(0, 0.02, pred.shape), 0, 1)
    p = samples.mean(axis=0)
    level = (0.25 * awareness if ood else 0.03) * rng.uniform(0.2, 1.0)
    epistemic = np.clip(_blur(p * (1 - p) * 2, 3) + level * _blur(rng.random(pred.shape), 5) * 1.6
                        + rng.normal(0, 0.02, pred.shape), 0, 1)
    predictive = np.clip(aleatoric + epistemic, 0, None)
    return {"aleatoric_uncertainty": aleatoric.astype(np.float32),
            "epistemic_uncertainty": epistemic.astype(np.float32),
            "predictive_uncertainty": predictive.astype(np.float32)}


def _save(path: Path, array: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, array, allow_pickle=False)


def generate(root: str | Path, *, models: Mapping[str, Mapping[str, Any]] | None = None,
             seeds: Sequence[int] = (1, 2, 3), shape: Sequence[int] = (32, 32), n_val: int = 4, n_id: int = 6,
             n_ood: int = 6, n_unlabeled_id: int = 4, n_unlabeled_ood: int = 4, n_raters: int = 3,
             n_samples: int = 4, aggregations: Mapping[str, str] | None = None, second_cycle: bool = True,
             fraction: float = 0.5) -> dict[str, Any]:
    """Write a synthetic data set under ``root`` (see the module docstring); return a summary.

    Deterministic: the same arguments write the same files.
    """
    root = Path(root)
    models = dict(models or DEFAULT_MODELS)
    aggregations = dict(aggregations or DEFAULT_AGGREGATIONS)
    shape = tuple(int(n) for n in shape)
    ids = {"val": [f"v{i:03d}" for i in range(n_val)], "id": [f"i{i:03d}" for i in range(n_id)],
           "ood": [f"o{i:03d}" for i in range(n_ood)],
           "unlabeled": [f"u{i:03d}" for i in range(n_unlabeled_id + n_unlabeled_ood)]}
    ood_ids = set(ids["ood"]) | set(ids["unlabeled"][n_unlabeled_id:])
    splits = {"train": [f"t{i:03d}" for i in range(n_val + n_id)], "val": ids["val"],
              "id_unlabeled_pool": ids["unlabeled"][:n_unlabeled_id],
              "ood_unlabeled_pool": ids["unlabeled"][n_unlabeled_id:]}
    root.mkdir(parents=True, exist_ok=True)
    write_json_atomic(root / "splits.json", splits, fsync=False)
    for split, names in ids.items():
        for image_id in names:
            _save(root / "references" / split / f"{image_id}.npy", _references(shape, image_id, n_raters))
    n_files = 0
    for model, spec in models.items():
        for seed in seeds:
            for split, names in ids.items():
                for image_id in names:
                    ood = image_id in ood_ids
                    error = float(spec["error"]) * _difficulty(image_id, ood)
                    samples, pred = _predict(shape, image_id, model, seed, error, n_samples)
                    base = root / model / f"seed{seed}" / split
                    _save(base / "pred_seg" / f"{image_id}.npy", pred)
                    _save(base / "pred_samples" / f"{image_id}.npy", samples)
                    maps = _uncertainties(samples, pred, image_id, model, seed, ood, float(spec["ood_awareness"]))
                    for unc in spec["unc_types"]:
                        _save(base / unc / f"{image_id}.npy", maps[unc])
                    n_files += 2 + len(spec["unc_types"])
    if second_cycle:
        n_files += _simulate_second_cycle(root, models, seeds, shape, ids, ood_ids, splits, aggregations,
                                          n_samples, fraction)
    return {"root": str(root), "models": list(models), "seeds": list(seeds),
            "images": {k: len(v) for k, v in ids.items()}, "files": n_files}


def _simulate_second_cycle(root: Path, models: Mapping[str, Mapping[str, Any]], seeds: Sequence[int],
                           shape: tuple[int, ...], ids: dict[str, list[str]], ood_ids: set[str],
                           splits: dict[str, list[str]], aggregations: Mapping[str, str], n_samples: int,
                           fraction: float) -> int:
    import assay
    from assay_segmentation import active_learning as al

    pool = splits["id_unlabeled_pool"] + splits["ood_unlabeled_pool"]
    n_files = 0
    for model, spec in models.items():
        fitted: dict[tuple[str, str], Any] = {}
        for unc in spec["unc_types"]:
            maps = [np.load(root / model / f"seed{s}" / "val" / unc / f"{i}.npy") for s in seeds for i in ids["val"]]
            preds = [np.load(root / model / f"seed{s}" / "val" / "pred_seg" / f"{i}.npy") for s in seeds
                     for i in ids["val"]]
            for name, agg_spec in aggregations.items():
                agg = assay.load_aggregation(agg_spec)
                fitted[(unc, name)] = agg.fit(maps, preds) if getattr(agg, "needs_fit", False) else agg
        for seed in seeds:
            queries: dict[str, list[str]] = {"random/random": al.baseline_query(splits, "random", fraction=fraction,
                                                                               seed=int(seed))}
            for unc in spec["unc_types"]:
                for name in aggregations:
                    scores = {i: fitted[(unc, name)](np.load(root / model / f"seed{seed}" / "unlabeled" / unc /
                                                             f"{i}.npy")) for i in pool}
                    queries[f"{unc}/{name}"] = al.query_most_uncertain(scores, pool, fraction=fraction)
            for query, queried in queries.items():
                share = sum(q in ood_ids for q in queried) / max(1, len(splits["ood_unlabeled_pool"]))
                for split in ("id", "ood"):
                    for image_id in ids[split]:
                        ood = image_id in ood_ids
                        gain = (1 - 0.5 * share) if ood else 0.9
                        error = float(spec["error"]) * _difficulty(image_id, ood) * gain
                        _, pred = _predict(shape, image_id, model, seed, error, n_samples, tag="second")
                        _save(root / "second_cycle" / model / query / f"seed{seed}" / split / "pred_seg" /
                              f"{image_id}.npy", pred)
                        n_files += 1
    return n_files


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m assay_segmentation.synthetic",
                                     description="Write the synthetic ValUES-style data set of the example.")
    parser.add_argument("root", type=Path, help="output folder")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--size", type=int, nargs="+", default=[32, 32], help="image shape (2 or 3 numbers)")
    args = parser.parse_args(argv)
    summary = generate(args.root, seeds=args.seeds, shape=args.size)
    print(f"wrote {summary['files']} arrays under {summary['root']}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
