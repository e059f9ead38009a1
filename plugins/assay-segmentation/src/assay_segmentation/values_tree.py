"""A synthetic experiment tree in ValUES' layout (NIfTI), for the versions a ValUES config describes.

For every version of the config (``assay_segmentation.downstream.values.build_values_grid``) and every
split asked for, the generator writes what ValUES' test scripts write::

    BASE/<naming_scheme_pred_model>/test_results/<version>/<split>/
        pred_seg/ID_01 .. ID_0S, ID_mean     (Softmax: ID_01 only)
        pred_prob/ID_01_01 .. ID_01_0C       (Softmax only: class probabilities, C = n_classes)
        gt_seg/ID_00 .. ID_{n-1}             n_reference_segs raters
        pred_entropy/ID                      predictive uncertainty (not for Softmax: ValUES derives it)
        aleatoric_uncertainty/ID, epistemic_uncertainty/ID
        metrics.json                         per-image and mean Dice and GED (as ValUES' test scripts write them)

and, with ``second_cycle``, ``SECOND/<pred_model>/test_results/<query>/<version>/<split>/metrics.json``
for ``random/random`` and every ``UNC/AGG`` of the version (what ``al_improvement`` reads).

Image ids are four digits. In the ``ood`` split (ValUES' toy rule), ids ``0000`` .. ``0020``
are the 21 OoD images, later ids are in-distribution; other splits count from ``0100``, and
in ``unlabeled`` the odd ids are OoD (the split files written with ``splits_path`` say so).
The images are the ellipsoids of :mod:`assay_segmentation.synthetic`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.jsonio import write_json_atomic
from assay_segmentation.downstream.data import write_array
from assay_segmentation.downstream.values import ValuesVersion, build_values_grid
from assay_segmentation.measures import dice, ged
from assay_segmentation.synthetic import _difficulty, _predict, _references, _rng, _uncertainties

__all__ = ["SPLITS", "write_values_tree"]

#: images per split written by default (the splits ValUES' aggregation step reads); ood holds the toy
#: OoD ids 0..20 and 3 ID images
SPLITS: dict[str, int] = {"val": 3, "id": 2, "ood": 24, "unlabeled": 2}
_ERROR = {"Softmax": 1.2, "Dropout": 1.0, "Ensemble": 0.8, "TTA": 1.0, "SSN": 0.9}
_AWARE = {"Softmax": 0.2, "Dropout": 0.6, "Ensemble": 1.0, "TTA": 0.5, "SSN": 0.7}


def _ids(split: str, n: int) -> list[str]:
    start = 0 if split == "ood" else 100
    return [f"{start + i:04d}" for i in range(n)]


def _is_ood(split: str, image_id: str) -> bool:
    if split == "ood":
        return int(image_id) <= 20
    return split == "unlabeled" and int(image_id) % 2 == 1


def _write_image(v: ValuesVersion, split: str, image_id: str, shape: tuple[int, ...],
                 n_samples: int) -> dict[str, float]:
    """Write one image's files; return its ``dice`` (mean prediction, mean over raters) and ``ged`` (samples)."""
    folder = v.dataset_path(split)
    end, uend = v.image_ending, v.unc_ending
    key = f"{split}/{image_id}"
    ood = _is_ood(split, image_id)
    refs = _references(shape, key, v.n_reference_segs)
    for i, ref in enumerate(refs):
        write_array(folder / "gt_seg" / f"{image_id}_{i:02d}{end}", ref)
    error = _ERROR.get(v.pred_model, 1.0) * _difficulty(key, ood)
    softmax = v.pred_model == "Softmax"
    samples, mean = _predict(shape, key, v.pred_model, v.version_name, error, 1 if softmax else n_samples)
    maps = _uncertainties(samples, mean, key, v.pred_model, v.version_name, ood, _AWARE.get(v.pred_model, 0.5))
    if softmax:
        write_array(folder / "pred_seg" / f"{image_id}_01{end}", samples[0])
        fg = np.clip(0.5 + (samples[0] - 0.5) * (1 - maps["predictive_uncertainty"]), 0.0, 1.0).astype(np.float64)
        probs = [1.0 - fg, fg] + [np.zeros_like(fg)] * max(0, v.n_classes - 2)
        for c, prob in enumerate(probs[: v.n_classes]):
            write_array(folder / "pred_prob" / f"{image_id}_01_{c + 1:02d}{uend}", np.asarray(prob, np.float64))
        pred = samples[0]
    else:
        for k, sample in enumerate(samples):
            write_array(folder / "pred_seg" / f"{image_id}_{k + 1:02d}{end}", sample)
        write_array(folder / "pred_seg" / f"{image_id}_mean{end}", mean)
        pred = mean
    for unc in v.unc_types:  # float64, as ValUES' test scripts store them (its JSON writers fail on float32)
        umap = np.asarray(maps.get(unc, maps["predictive_uncertainty"]), dtype=np.float64)
        if unc == "predictive_uncertainty":
            if not softmax:
                write_array(folder / "pred_entropy" / f"{image_id}{uend}", umap)
        else:
            write_array(folder / unc / f"{image_id}{uend}", umap)
    return {"dice": float(np.mean([dice(pred, r) for r in refs])), "ged": ged(samples, refs)}


def _metrics(folder: Path, scores: Mapping[str, Mapping[str, float]], end: str) -> dict[str, Any]:
    tree: dict[str, Any] = {str(folder / "input" / f"{i}{end}"): dict(s) for i, s in scores.items()}
    tree["mean"] = {k: float(np.mean([s[k] for s in scores.values()])) for k in next(iter(scores.values()), {})}
    return tree


def _write_split_files(versions: Sequence[ValuesVersion], splits: Mapping[str, int], root: Path) -> int:
    """``ROOT[/shift]/firstCycle/splits.json``: fold 0 with the tree's images (odd unlabeled ids are OoD)."""
    unlabeled = _ids("unlabeled", splits.get("unlabeled", 0))
    fold = {"train": [f"{i}.npy" for i in _ids("id", splits.get("id", 0))],
            "val": [f"{i}.npy" for i in _ids("val", splits.get("val", 0))],
            "id_unlabeled_pool": [f"{i}.npy" for i in unlabeled if not _is_ood("unlabeled", i)],
            "ood_unlabeled_pool": [f"{i}.npy" for i in unlabeled if _is_ood("unlabeled", i)]}
    shifts = {v.params.get("shift") for v in versions}
    for shift in shifts:
        folder = root / str(shift) if shift is not None else root
        write_json_atomic(folder / "firstCycle" / "splits.json", [fold], fsync=False)
    return len(shifts)


def write_values_tree(config: str | Path | dict, *, overrides: Sequence[str] = (),
                      splits: Mapping[str, int] | None = None, shape: Sequence[int] = (12, 12, 12),
                      n_samples: int = 2, second_cycle: bool = True,
                      splits_path: str | Path | None = None) -> dict[str, Any]:
    """Write the tree a ValUES config reads (see the module docstring); return a summary.

    With ``splits_path``, also the first-cycle split files that ``ood_detection`` and the
    second-cycle split steps read (``base_splits_path``): ``SPLITS[/shift]/firstCycle/splits.json``.

    ``config`` is a config file (loaded with ``overrides``, e.g. ``["base_path=/tmp/toy"]``)
    or a loaded config. Deterministic: the same arguments write the same files.
    """
    from assay_segmentation.downstream import load_config

    cfg = load_config(config, overrides) if not isinstance(config, dict) else config
    splits = dict(splits or SPLITS)
    shape = tuple(int(n) for n in shape)
    files = 0
    versions = build_values_grid(cfg)
    for v in versions:
        for split, n in splits.items():
            folder = v.dataset_path(split)
            scores = {i: _write_image(v, split, i, shape, n_samples) for i in _ids(split, n)}
            write_json_atomic(folder / "metrics.json", _metrics(folder, scores, v.image_ending), fsync=False)
            files += sum(p.is_file() for p in folder.rglob("*"))
            if second_cycle and v.second_cycle_path is not None:
                queries = [("random", "random")] + [(u, a) for u in v.unc_types if u != "aleatoric_uncertainty"
                                                    for a in v.aggregations]
                for query in queries:
                    rng = _rng("second", v.key, split, *query)
                    gain = 0.02 if query[0] == "random" else float(rng.uniform(0.0, 0.08))
                    second = {i: {"dice": min(1.0, d["dice"] * (1 + gain) + float(rng.normal(0, 0.005)))}
                              for i, d in scores.items()}
                    out = v.second_cycle_path.joinpath(v.pred_model, "test_results", *query, v.version_name, split)
                    write_json_atomic(out / "metrics.json", _metrics(out, second, v.image_ending), fsync=False)
                    files += 1
    if splits_path is not None:
        files += _write_split_files(versions, splits, Path(splits_path))
    return {"base_path": cfg["base_path"], "second_cycle_path": cfg.get("second_cycle_path"),
            "versions": len(versions), "files": files}


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    from assay.errors import AssayError

    parser = argparse.ArgumentParser(prog="python -m assay_segmentation.values_tree",
                                     description="Write a synthetic ValUES experiment tree for a ValUES config.")
    parser.add_argument("config", type=Path, help="ValUES eval config (e.g. eval_config_toy.yaml)")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. base_path=/tmp/toy")
    parser.add_argument("--size", type=int, nargs="+", default=[12, 12, 12], help="image shape")
    parser.add_argument("--splits", type=Path, metavar="DIR",
                        help="also write the first-cycle split files under DIR (what base_splits_path names)")
    args = parser.parse_args(argv)
    if args.splits is not None and args.splits.exists() and not args.splits.is_dir():
        parser.error(f"--splits {args.splits}: exists and is not a folder")
    try:
        summary = write_values_tree(args.config, overrides=args.overrides, shape=args.size, splits_path=args.splits)
    except (AssayError, OSError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {summary['files']} files for {summary['versions']} versions under {summary['base_path']}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
