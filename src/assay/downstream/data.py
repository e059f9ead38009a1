"""Loading one image's maps and masks from ``.npy`` / ``.npz`` files (never pickles).

A split folder (``data_dir / split``) holds, per image ``ID``, either one archive
``ID.npz`` with the arrays below as keys, or one ``.npy`` file per kind in a subfolder:

================  ============================  ===========================================
kind              file                          shape
================  ============================  ===========================================
``pred_seg``      ``pred_seg/ID.npy``           spatial: the (mean) predicted segmentation
``pred_samples``  ``pred_samples/ID.npy``       (S, *spatial): sampled predictions (GED)
``ref_segs``      ``ref_segs/ID.npy``           (R, *spatial): reference segmentations
uncertainty       ``UNC_TYPE/ID.npy``           spatial: one map per uncertainty type
================  ============================  ===========================================

Image ids are the names in ``pred_seg/`` (or of the ``.npz`` files), sorted.
Reference segmentations may live in a shared folder (``references`` in the config,
``REF_DIR/ID.npy``) instead of ``ref_segs/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from assay.errors import InvalidParameterError

__all__ = ["ImageData", "list_images", "load_image"]


@attrs.frozen
class ImageData:
    """The arrays of one image of one experiment version and split (what tasks receive)."""

    image_id: str
    split: str
    pred_seg: np.ndarray | None = None
    pred_samples: np.ndarray | None = None
    ref_segs: np.ndarray | None = None
    uncertainty: dict[str, np.ndarray] = attrs.field(factory=dict)
    aggregated: dict[str, dict[str, float]] = attrs.field(factory=dict)

    def require(self, kind: str) -> np.ndarray:
        value = self.uncertainty.get(kind) if kind not in ("pred_seg", "pred_samples", "ref_segs") \
            else getattr(self, kind)
        if value is None:
            raise InvalidParameterError(f"Image {self.image_id!r} of split {self.split!r} has no {kind!r} array.")
        return value


def list_images(split_dir: Path) -> list[str]:
    """The image ids of a split folder (sorted); an error when the folder does not exist."""
    split_dir = Path(split_dir)
    if not split_dir.is_dir():
        raise FileNotFoundError(f"No data folder {split_dir} (expected pred_seg/*.npy or *.npz inside).")
    ids = {p.stem for p in split_dir.glob("*.npz")}
    if (split_dir / "pred_seg").is_dir():
        ids |= {p.stem for p in (split_dir / "pred_seg").glob("*.npy")}
    return sorted(ids)


def _load_npy(path: Path) -> np.ndarray:
    return np.load(path, allow_pickle=False)


def load_image(split_dir: Path, image_id: str, *, split: str = "", kinds: Iterable[str] = (),
               reference_dir: Path | None = None) -> ImageData:
    """Load the requested ``kinds`` (``pred_seg``, ``pred_samples``, ``ref_segs`` or uncertainty types).

    Missing optional arrays (``pred_samples``) come back as ``None``; a missing requested
    uncertainty map, prediction or reference is an error naming the file.
    """
    split_dir = Path(split_dir)
    kinds = list(dict.fromkeys(kinds))
    arrays: dict[str, Any] = {}
    npz = split_dir / f"{image_id}.npz"
    archive = np.load(npz, allow_pickle=False) if npz.is_file() else None
    try:
        for kind in kinds:
            value = None
            if kind == "ref_segs" and reference_dir is not None:
                path = Path(reference_dir) / f"{image_id}.npy"
                value = _load_npy(path) if path.is_file() else None
            if value is None and archive is not None and kind in archive.files:
                value = np.asarray(archive[kind])
            if value is None:
                path = split_dir / kind / f"{image_id}.npy"
                if path.is_file():
                    value = _load_npy(path)
            if value is None and kind != "pred_samples":
                where = f"{npz} (key {kind!r}) or {split_dir / kind / (image_id + '.npy')}"
                if kind == "ref_segs" and reference_dir is not None:
                    where = f"{Path(reference_dir) / (image_id + '.npy')} or " + where
                raise FileNotFoundError(f"No {kind!r} array for image {image_id!r}: looked for {where}.")
            arrays[kind] = value
    finally:
        if archive is not None:
            archive.close()
    fixed = {k: arrays.pop(k) for k in ("pred_seg", "pred_samples", "ref_segs") if k in arrays}
    return ImageData(image_id=image_id, split=split, uncertainty=arrays, **fixed)
