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

The arrays of an image are checked against each other when they are loaded
(:func:`check_image`): every uncertainty map, the sampled predictions and the references
have the prediction's spatial shape, and the prediction holds labels of the reference. An
uncertainty map is always loaded with its prediction, so that its shape is checked. Each
error names the files, the shapes or the values.

nibabel is needed only for NIfTI files (``pip install nibabel``, or the ``nifti`` extra);
without it a NIfTI file is a :class:`~assay.errors.MissingDependencyError` naming the
install command.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from assay.downstream import ImageData
from assay.errors import InvalidParameterError

__all__ = ["ARRAY_SUFFIXES", "ImageData", "check_image", "list_images", "load_image", "read_array", "write_array"]

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


def _labels_text(values: Iterable[Any], limit: int = 8) -> str:
    values = [v.item() if hasattr(v, "item") else v for v in values]
    shown = ", ".join(f"{int(v)}" if float(v).is_integer() else f"{v:g}" for v in values[:limit])
    return shown + (f", ... ({len(values)} values)" if len(values) > limit else "")


def check_image(image: ImageData, files: Mapping[str, str], *, labels: Iterable[int] = (0, 1)) -> None:
    """Check one image's arrays against each other; each error names the files and the shapes or values.

    * every uncertainty map, each sampled prediction (``pred_samples[s]``) and each reference
      (``ref_segs[r]``) has the spatial shape of ``pred_seg`` (of the references without it);
    * ``pred_seg`` holds labels: whole numbers, each one a label of the reference, that is a
      value of ``ref_segs`` or one of ``labels`` (background and foreground by default; ValUES:
      ``0 .. n_classes - 1``), so that a prediction on an image with an empty reference is
      valid. A map of 0..255 or of probabilities where labels 0/1 are expected is an error:
      Dice reads every non-zero value as foreground and would be computed on it silently.

    ``files`` maps a kind (``pred_seg``, ``ref_segs``, ``pred_samples`` or an uncertainty
    type) to the file it was read from, for the messages. Written for the data loaders
    (:func:`load_image`, :func:`~assay_segmentation.downstream.values.load_values_image`); no
    library checks a segmentation's files against each other.
    """
    def where(kind: str) -> str:
        return files.get(kind, f"{kind} of image {image.image_id!r}")

    pred, refs, samples = image.pred_seg, image.ref_segs, image.pred_samples
    if pred is not None:
        frame, frame_kind = tuple(np.shape(pred)), "pred_seg"
    elif refs is not None and np.ndim(refs) >= 1:
        frame, frame_kind = tuple(np.shape(refs)[1:]), "ref_segs"
    else:
        frame, frame_kind = None, ""
    if frame is not None:
        stacks = [("ref_segs", refs), ("pred_samples", samples)]
        for kind, stack in stacks:
            if stack is not None and kind != frame_kind and tuple(np.shape(stack)[1:]) != frame:
                raise InvalidParameterError(
                    f"{where(kind)}: shape {tuple(np.shape(stack))} (n, *spatial) does not match {where(frame_kind)}: "
                    f"spatial shape {frame}; every array of image {image.image_id!r} must cover the same voxels.")
        for kind, umap in image.uncertainty.items():
            if tuple(np.shape(umap)) != frame:
                raise InvalidParameterError(
                    f"{where(kind)}: uncertainty map of shape {tuple(np.shape(umap))} does not match "
                    f"{where(frame_kind)}: shape {frame}; a map gives one value per voxel of the prediction.")
    if pred is None or refs is None:
        return
    arr = np.asarray(pred)
    if arr.size == 0 or not np.issubdtype(arr.dtype, np.number) and arr.dtype != np.bool_:
        return  # empty, or not numbers: the measures reject it with their own message
    allowed = {int(v) for v in labels}
    lo, hi = arr.min(), arr.max()
    whole = np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_ or bool(
        np.all(np.isfinite(arr)) and np.array_equal(arr, np.round(arr)))
    if whole and float(lo).is_integer() and set(range(int(lo), int(hi) + 1)) <= allowed:
        return  # the common case (a 0/1 mask) without sorting the volume
    values = np.unique(arr)
    ref_labels = {float(v) for v in np.unique(np.asarray(refs))}
    allowed_f = ref_labels | {float(v) for v in allowed}
    bad = [v for v in values if float(v) not in allowed_f]
    if bad:
        raise InvalidParameterError(
            f"{where('pred_seg')}: the prediction holds values that are not labels of the reference: "
            f"{_labels_text(bad)} (labels: {_labels_text(sorted(allowed_f))}, from {where('ref_segs')} and the "
            f"background/foreground labels); expected a label map, not probabilities or a 0..255 image.")


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
    if any(k not in ("pred_seg", "pred_samples", "ref_segs") for k in kinds) and "pred_seg" not in kinds:
        kinds.insert(0, "pred_seg")  # an uncertainty map is checked against its prediction's shape
    arrays: dict[str, Any] = {}
    files: dict[str, str] = {}
    npz = split_dir / f"{image_id}.npz"
    archive = np.load(npz, allow_pickle=False) if npz.is_file() else None
    try:
        for kind in kinds:
            value = None
            if kind == "ref_segs" and reference_dir is not None:
                path = _find(Path(reference_dir), image_id)
                value = read_array(path) if path is not None else None
                files[kind] = str(path)
            if value is None and archive is not None and kind in archive.files:
                value = np.asarray(archive[kind])
                files[kind] = f"{npz} (key {kind!r})"
            if value is None:
                path = _find(split_dir / kind, image_id) if (split_dir / kind).is_dir() else None
                if path is not None:
                    value = read_array(path)
                    files[kind] = str(path)
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
    image = ImageData(image_id=image_id, split=split, uncertainty=arrays, **fixed)
    check_image(image, files)
    return image
