"""Array data formats: one file, one array. ``.npy`` (numpy, never pickles) and NIfTI (nibabel).

These are registered data formats like JSON Lines (``assay list data_format``), so the
downstream tasks find a map or mask file's reader by its name's ending, and a plugin adds
another volume format (say MetaImage with SimpleITK) by registering an
:class:`ArrayFormat` with its ``extensions``: every folder of maps then accepts it.

A file's single item is its array. :meth:`ArrayFormat.read` reads a path (NIfTI through
``nibabel.load``, which maps the file instead of copying it where it can);
:meth:`ArrayFormat.loads` reads bytes (a Spark executor, the conformance suite).
NIfTI: the voxel array, ``get_fdata()`` (floats) for floating-point or scaled data and the
stored integers for integer label maps; the affine and header are not used. Written
NIfTI files get an identity affine (voxel coordinates), booleans as ``uint8``.
nibabel is needed only for NIfTI (``pip install nibabel`` or the ``nifti`` extra); without
it a NIfTI file is a :class:`~assay.errors.MissingDependencyError` naming the install.
"""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from assay.core.formats import DataFormat, DataFormatError
from assay.errors import InvalidParameterError, MissingDependencyError
from assay.plugins import get_registry, load_data_format
from assay.plugins.hookspecs import Register, hookimpl

__all__ = ["ArrayFormat", "NiftiFormat", "NpyFormat", "array_format_for", "array_suffixes"]


class ArrayFormat(DataFormat):
    """Base class of binary formats that hold one array per file.

    Subclasses implement :meth:`load_array` (bytes) and :meth:`save_array`; they may
    override :meth:`read_array` to read a path more cheaply than its bytes.
    """

    binary = True

    def parse(self, text: str, *, source: str = "<string>") -> list[Any]:
        raise DataFormatError(f"{self.name} is a binary format: its items come from the file's bytes "
                              "(read(path) or loads(data)), not from text", source=source)

    def loads(self, data: bytes, *, source: str = "<bytes>") -> list[Any]:
        return [self.load_array(data, source=source)]

    def read(self, path: str | os.PathLike[str]) -> list[Any]:
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"No such data file: {str(p)!r}")
        return [self.read_array(p)]

    def dumps_bytes(self, items: list[Any]) -> bytes:
        """The file's bytes for ``[array]`` (one item: one file holds one array)."""
        if len(items) != 1:
            raise InvalidParameterError(f"A {self.name} file holds one array; got {len(items)} items.")
        buffer = io.BytesIO()
        self.save_array(buffer, np.asarray(items[0]))
        return buffer.getvalue()

    def write(self, path: str | os.PathLike[str], array: Any) -> Path:
        """Write ``array`` to ``path`` (parent folders created)."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(self.dumps_bytes([array]))
        return p

    def read_array(self, path: Path) -> np.ndarray:
        return self.load_array(path.read_bytes(), source=str(path))

    def load_array(self, data: bytes, *, source: str) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement load_array(data, source=...)")

    def save_array(self, buffer: io.BytesIO, array: np.ndarray) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot write arrays")


class NpyFormat(ArrayFormat):
    """numpy's ``.npy`` (``allow_pickle=False``: an object array is an error, never unpickled).

    >>> fmt = NpyFormat()
    >>> fmt.loads(fmt.dumps_bytes([np.arange(3)]))[0].tolist()
    [0, 1, 2]
    """

    name = "npy"
    extensions = (".npy",)

    def load_array(self, data: bytes, *, source: str) -> np.ndarray:
        try:
            array: np.ndarray = np.load(io.BytesIO(data), allow_pickle=False)  # a .npy file: one array
            return array
        except ValueError as exc:  # not a .npy file, or an object array (pickles)
            raise DataFormatError(f"not a .npy array without pickles ({exc})", source=source) from None

    def save_array(self, buffer: io.BytesIO, array: np.ndarray) -> None:
        np.save(buffer, array, allow_pickle=False)


def _nibabel(purpose: str) -> Any:
    try:
        import nibabel  # deferred: nibabel, the optional extra 'nifti'
    except ImportError:
        raise MissingDependencyError("nibabel", extra="nifti", purpose=purpose) from None
    return nibabel


def _voxels(image: Any) -> np.ndarray:
    """Integer label maps as their stored integers, anything else as nibabel's floats."""
    dtype = image.get_data_dtype()
    data = np.asanyarray(image.dataobj)
    if np.issubdtype(dtype, np.integer) and np.issubdtype(data.dtype, np.integer):
        return np.asarray(data)
    return np.asarray(image.get_fdata())


class NiftiFormat(ArrayFormat):
    """NIfTI-1 / NIfTI-2 volumes (``.nii``, ``.nii.gz``), read and written with nibabel."""

    name = "nifti"
    extensions = (".nii.gz", ".nii")

    def read_array(self, path: Path) -> np.ndarray:
        nibabel = _nibabel(f"reading the NIfTI file {path}")
        try:
            return _voxels(nibabel.load(str(path)))
        except (nibabel.filebasedimages.ImageFileError, OSError, EOFError, ValueError) as exc:
            raise DataFormatError(f"not a readable NIfTI file ({type(exc).__name__}: {exc})",
                                  source=str(path)) from None

    def load_array(self, data: bytes, *, source: str) -> np.ndarray:
        nibabel = _nibabel(f"reading the NIfTI data {source}")
        try:
            raw = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        except (OSError, EOFError) as exc:
            raise DataFormatError(f"not a readable gzip-compressed NIfTI file ({exc})", source=source) from None
        problems = []
        # nibabel's header, struct and data errors have no common base class
        errors = (nibabel.wrapstruct.WrapStructError, nibabel.spatialimages.HeaderDataError,
                  nibabel.filebasedimages.ImageFileError, ValueError, OSError, EOFError)
        for cls in (nibabel.Nifti1Image, nibabel.Nifti2Image):
            try:
                return _voxels(cls.from_bytes(raw))
            except errors as exc:
                problems.append(f"{cls.__name__}: {type(exc).__name__}: {exc}")
        raise DataFormatError(f"not a NIfTI-1 or NIfTI-2 image ({'; '.join(problems)})", source=source)

    def save_array(self, buffer: io.BytesIO, array: np.ndarray) -> None:
        nibabel = _nibabel("writing a NIfTI file")
        image = nibabel.Nifti1Image(array.astype(np.uint8) if array.dtype == bool else array, np.eye(4))
        buffer.write(image.to_bytes())

    def write(self, path: str | os.PathLike[str], array: Any) -> Path:
        """Write ``array`` to ``path``, gzip-compressed when the name ends in ``.gz``."""
        p = Path(path)
        if not p.name.endswith(".gz"):
            return super().write(p, array)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(gzip.compress(self.dumps_bytes([array]), compresslevel=6, mtime=0))
        return p


def array_suffixes() -> tuple[str, ...]:
    """The file endings of every registered array format (longest first within a format)."""
    return tuple(ext for entry in get_registry("data_format") if entry.metadata.get("binary")
                 for ext in entry.metadata.get("extensions", ()) or ())


def array_format_for(path: str | os.PathLike[str]) -> ArrayFormat:
    """The registered array format whose extension ends ``path``'s name (the longest that does)."""
    name = Path(path).name.lower()
    best: tuple[int, str] | None = None
    known = []
    for entry in get_registry("data_format"):
        if not entry.metadata.get("binary"):
            continue
        for ext in entry.metadata.get("extensions", ()) or ():
            known.append(f"{ext} ({entry.name})")
            if name.endswith(ext.lower()) and (best is None or len(ext) > best[0]):
                best = (len(ext), entry.name)
    if best is None:
        raise InvalidParameterError(f"{path}: no registered array format reads this file name; "
                                    f"known endings: {', '.join(known) or 'none'}")
    fmt = load_data_format(best[1])
    if not isinstance(fmt, ArrayFormat):
        raise InvalidParameterError(f"data format {best[1]!r} registered binary=True but is not an ArrayFormat")
    return fmt


@hookimpl
def assay_register_data_formats(register: Register) -> None:
    example = {"array": [[0.0, 0.25], [0.5, 1.0]]}
    register("npy", NpyFormat, extensions=NpyFormat.extensions, binary=True,
             description="numpy .npy: one array per file (never pickles)", examples=[example])
    register("nifti", NiftiFormat, extensions=NiftiFormat.extensions, binary=True,
             description="NIfTI-1/2 volumes (.nii, .nii.gz) with nibabel (extra 'nifti')", examples=[example])
