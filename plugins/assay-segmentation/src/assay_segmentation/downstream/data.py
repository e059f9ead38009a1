"""Loading one image's maps and masks from ``.npy`` / ``.npz`` / NIfTI files (never pickles).

A split folder (``data_dir / split``) holds, per image ``ID``, either one archive
``ID.npz`` with the arrays below as keys, or one file per kind in a subfolder: ``.npy``,
or NIfTI (``.nii.gz`` / ``.nii``, read with nibabel: the voxel array of the image,
``get_fdata`` for floating-point data and the stored integers for label maps; the affine
and header are not used). A folder may mix formats; two files for one image and kind (say
``ID.npy`` and ``ID.nii.gz``) are an error naming both. The readers are the registered
array formats (:mod:`assay.core.array_formats`), so a plugin's format (registered with its
``extensions``) is read wherever these are.

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
``REF_DIR/ID.npy`` or ``REF_DIR/ID.nii.gz``) instead of ``ref_segs/``.

nibabel is needed only for NIfTI files (``pip install nibabel``, or the ``nifti`` extra);
without it a NIfTI file is a :class:`~assay.errors.MissingDependencyError` naming the
install command.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from assay.downstream import ImageData
from assay.errors import InvalidParameterError

__all__ = ["ARRAY_SUFFIXES", "ImageData", "list_images", "load_image", "read_array", "write_array"]

#: the file suffixes of assay's own array formats (plugins may register more: :func:`_suffixes`)
ARRAY_SUFFIXES = (".npy", ".nii.gz", ".nii")


def _suffixes() -> tuple[str, ...]:
    """The endings of the registered array formats, longest first (``.nii.gz`` before ``.nii``)."""
    from assay.core.array_formats import array_suffixes

    return tuple(sorted(array_suffixes(), key=len, reverse=True))


def _stem(path: Path, suffixes: tuple[str, ...]) -> str | None:
    """The image id of an array file (its name without the array suffix), or None for another file."""
    name = path.name
    for suffix in suffixes:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def list_images(split_dir: Path) -> list[str]:
    """The image ids of a split folder (sorted); an error when the folder does not exist."""
    split_dir = Path(split_dir)
    if not split_dir.is_dir():
        raise FileNotFoundError(f"No data folder {split_dir} (expected pred_seg/*.npy, pred_seg/*.nii.gz or *.npz "
                                "inside).")
    ids = {p.stem for p in split_dir.glob("*.npz")}
    if (split_dir / "pred_seg").is_dir():
        suffixes = _suffixes()
        ids |= {stem for p in (split_dir / "pred_seg").iterdir() if (stem := _stem(p, suffixes)) is not None}
    return sorted(ids)


def read_array(path: str | Path) -> np.ndarray:
    """One array file, read by the registered array format its name ends with (``.npy``, NIfTI, a plugin's).

    See :mod:`assay.core.array_formats`; ``.npy`` files never unpickle.
    """
    from assay.core.array_formats import array_format_for

    return array_format_for(path).read(path)[0]


def write_array(path: str | Path, array: Any) -> Path:
    """Write one array file by its name's ending (``.npy``, NIfTI ``.nii`` / ``.nii.gz``, a plugin's format).

    NIfTI files get an identity affine (voxel coordinates); the dtype is kept (booleans as
    ``uint8``). Parent folders are created.
    """
    from assay.core.array_formats import array_format_for

    return array_format_for(path).write(path, array)


def _find(folder: Path, image_id: str) -> Path | None:
    """The array file of ``image_id`` in ``folder`` (any registered array format); two of them is an error."""
    found = [folder / f"{image_id}{suffix}" for suffix in _suffixes() if (folder / f"{image_id}{suffix}").is_file()]
    if len(found) > 1:
        raise InvalidParameterError(f"Image {image_id!r} has more than one file in {folder}: "
                                    f"{', '.join(p.name for p in found)}; keep one.")
    return found[0] if found else None


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
                path = _find(Path(reference_dir), image_id)
                value = read_array(path) if path is not None else None
            if value is None and archive is not None and kind in archive.files:
                value = np.asarray(archive[kind])
            if value is None:
                path = _find(split_dir / kind, image_id) if (split_dir / kind).is_dir() else None
                if path is not None:
                    value = read_array(path)
            if value is None and kind != "pred_samples":
                names = "|".join(_suffixes())
                where = f"{npz} (key {kind!r}) or {split_dir / kind / image_id}{{{names}}}"
                if kind == "ref_segs" and reference_dir is not None:
                    where = f"{Path(reference_dir) / image_id}{{{names}}} or " + where
                raise FileNotFoundError(f"No {kind!r} array for image {image_id!r}: looked for {where}.")
            arrays[kind] = value
    finally:
        if archive is not None:
            archive.close()
    fixed = {k: arrays.pop(k) for k in ("pred_seg", "pred_samples", "ref_segs") if k in arrays}
    return ImageData(image_id=image_id, split=split, uncertainty=arrays, **fixed)
