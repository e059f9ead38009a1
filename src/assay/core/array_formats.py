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

**Size limit.** Before any voxel is read, the size a file's header declares (the bytes of the
array the reader returns: ``.npy``'s dtype; NIfTI's stored integers, or float64 for
floating-point or scaled data) is checked against :func:`max_array_bytes`, 512 MiB unless
the environment variable ``ASSAY_MAX_ARRAY_BYTES`` (a number of bytes) or
:func:`set_max_array_bytes` says otherwise: a header declaring ``(1e5, 1e5, 1e5)``, or a
0.5 MB ``.nii.gz`` that expands to 512^3 float32, is a :class:`~assay.core.formats.DataFormatError`
naming the file, the shape and the limit, not a ``MemoryError`` or minutes of decompression.
A compressed NIfTI is decompressed only as far as its header declares. A file shorter than
its header declares is an error naming it too.
"""

from __future__ import annotations

import gzip
import io
import os
import threading
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from assay.core.formats import DataFormat, DataFormatError
from assay.errors import InvalidParameterError, MissingDependencyError
from assay.plugins import get_registry, load_data_format
from assay.plugins.hookspecs import Register, hookimpl

__all__ = ["DEFAULT_MAX_ARRAY_BYTES", "ArrayFormat", "NiftiFormat", "NpyFormat", "array_format_for",
           "array_suffixes", "max_array_bytes", "set_max_array_bytes"]

#: the default of :func:`max_array_bytes`: 512 MiB
DEFAULT_MAX_ARRAY_BYTES = 1 << 29
#: the environment variable that sets :func:`max_array_bytes` (a number of bytes)
MAX_BYTES_ENV = "ASSAY_MAX_ARRAY_BYTES"
_max_bytes: list[int] = []  # set by set_max_array_bytes (wins over the environment)


def set_max_array_bytes(limit: int | None) -> None:
    """Set the largest array (in bytes, as read) an array format reads; ``None``: back to the default."""
    _max_bytes.clear()
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
            raise InvalidParameterError(f"set_max_array_bytes: expected a number of bytes >= 1 (or None); "
                                        f"got {limit!r}.")
        _max_bytes.append(int(limit))


def max_array_bytes() -> int:
    """The largest array (bytes, as read) an array format reads: :func:`set_max_array_bytes`, else
    ``ASSAY_MAX_ARRAY_BYTES``, else :data:`DEFAULT_MAX_ARRAY_BYTES`."""
    if _max_bytes:
        return _max_bytes[0]
    raw = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_ARRAY_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise InvalidParameterError(f"{MAX_BYTES_ENV}={raw!r}: expected a number of bytes >= 1.")
    return value


def _check_declared(shape: tuple[int, ...], itemsize: int, what: str, source: str) -> int:
    """The declared size in bytes; a DataFormatError naming the file when it exceeds the limit."""
    n = itemsize
    for d in shape:
        n *= int(d)
    limit = max_array_bytes()
    if n > limit:
        raise DataFormatError(
            f"its header declares a {what} array of shape {tuple(int(d) for d in shape)}, {n:,} bytes as read, over "
            f"the limit of {limit:,} bytes (set {MAX_BYTES_ENV} or assay.core.array_formats.set_max_array_bytes "
            "to read larger arrays)", source=source)
    return n


_NPY_MAGIC = b"\x93NUMPY"


#: Held while numpy parses a .npy header (``ast.literal_eval``). CPython 3.11's AST constructor keeps its recursion
#: depth in per-interpreter state, so two threads parsing at once (the builtin executor's threads reading images)
#: can fail with ``SystemError: AST constructor recursion depth mismatch``; seen in a full test run on 3.11.7.
_HEADER_LOCK = threading.Lock()


def _npy_header(fp: Any, source: str) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype from a ``.npy`` header, without reading the data (numpy's own parser)."""
    start = fp.read(len(_NPY_MAGIC))
    if start != _NPY_MAGIC:
        raise DataFormatError(f"not a .npy file: it does not start with numpy's magic string \\x93NUMPY "
                              f"(it starts with {start[:6]!r})", source=source)
    fp.seek(0)
    try:
        version = np.lib.format.read_magic(fp)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        with _HEADER_LOCK:
            shape, _fortran, dtype = read(fp)  # version 3.0 differs from 2.0 only in the header's text encoding
    except (ValueError, OSError, EOFError) as exc:
        raise DataFormatError(f"not a readable .npy header ({exc})", source=source) from None
    return tuple(shape), np.dtype(dtype)


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
        fp = io.BytesIO(data)
        self._check(fp, len(data), source)
        fp.seek(0)
        return self._load(fp, source)

    def read_array(self, path: Path) -> np.ndarray:
        with open(path, "rb") as fp:
            self._check(fp, path.stat().st_size, str(path))
            fp.seek(0)
            return self._load(fp, str(path))

    @staticmethod
    def _check(fp: Any, size: int, source: str) -> None:
        shape, dtype = _npy_header(fp, source)
        if dtype.hasobject:
            raise DataFormatError(f"not a .npy array without pickles: an object array ({dtype}), which .npy "
                                  "stores as pickles; assay never unpickles", source=source)
        n = _check_declared(shape, dtype.itemsize, str(dtype), source)
        if n > size - fp.tell():
            raise DataFormatError(f"truncated: its header declares {n:,} bytes of data (shape {shape}, {dtype}), "
                                  f"the file holds {max(size - fp.tell(), 0):,}", source=source)

    @staticmethod
    def _load(fp: Any, source: str) -> np.ndarray:
        try:
            with _HEADER_LOCK:  # np.load parses the header and reads the data in one call: .npy reads are serialized
                array: np.ndarray = np.load(fp, allow_pickle=False)  # a .npy file: one array
            return array
        except ValueError as exc:  # a damaged header numpy refuses
            raise DataFormatError(f"not a readable .npy array ({exc})", source=source) from None

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


def _returned_itemsize(header: Any) -> int:
    """Bytes per voxel of what :func:`_voxels` returns: the stored integers unless scaled, else float64."""
    dtype = np.dtype(header.get_data_dtype())
    slope, inter = header.get_slope_inter()
    scaled = (slope is not None and slope != 1) or (inter is not None and inter != 0)
    itemsize: int = dtype.itemsize if np.issubdtype(dtype, np.integer) and not scaled else max(dtype.itemsize, 8)
    return itemsize


def _check_nifti_header(header: Any, source: str) -> int:
    """The declared data size of a NIfTI header against the limit; returns the bytes as stored."""
    shape = tuple(int(d) for d in header.get_data_shape())
    _check_declared(shape, _returned_itemsize(header), f"NIfTI {header.get_data_dtype()}", source)
    stored: int = np.dtype(header.get_data_dtype()).itemsize
    for d in shape:
        stored *= d
    return stored


class NiftiFormat(ArrayFormat):
    """NIfTI-1 / NIfTI-2 volumes (``.nii``, ``.nii.gz``), read and written with nibabel."""

    name = "nifti"
    extensions = (".nii.gz", ".nii")

    def read_array(self, path: Path) -> np.ndarray:
        nibabel = _nibabel(f"reading the NIfTI file {path}")
        try:
            image = nibabel.load(str(path))  # reads the header only; the voxels stay on disk until asked for
            _check_nifti_header(image.header, str(path))
            return _voxels(image)
        except (nibabel.filebasedimages.ImageFileError, OSError, EOFError, ValueError) as exc:
            if isinstance(exc, DataFormatError):
                raise
            raise DataFormatError(f"not a readable NIfTI file ({type(exc).__name__}: {exc})",
                                  source=str(path)) from None

    def load_array(self, data: bytes, *, source: str) -> np.ndarray:
        nibabel = _nibabel(f"reading the NIfTI data {source}")
        try:
            raw = self._decompress(nibabel, data, source) if data[:2] == b"\x1f\x8b" else data
        except (OSError, EOFError, zlib.error) as exc:
            raise DataFormatError(f"not a readable gzip-compressed NIfTI file ({exc})", source=source) from None
        problems = []
        # nibabel's header, struct and data errors have no common base class
        errors = (nibabel.wrapstruct.WrapStructError, nibabel.spatialimages.HeaderDataError,
                  nibabel.filebasedimages.ImageFileError, ValueError, OSError, EOFError)
        for cls in (nibabel.Nifti1Image, nibabel.Nifti2Image):
            try:
                header = cls.header_class.from_fileobj(io.BytesIO(raw))
            except errors as exc:
                problems.append(f"{cls.__name__}: {type(exc).__name__}: {exc}")
                continue
            _check_nifti_header(header, source)
            try:
                return _voxels(cls.from_bytes(raw))
            except errors as exc:
                problems.append(f"{cls.__name__}: {type(exc).__name__}: {exc}")
        raise DataFormatError(f"not a NIfTI-1 or NIfTI-2 image ({'; '.join(problems)})", source=source)

    @staticmethod
    def _decompress(nibabel: Any, data: bytes, source: str) -> bytes:
        """Decompress a ``.nii.gz`` only as far as its header declares (after checking the declared size)."""
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            head = gz.read(540)  # a NIfTI-2 header is 540 bytes, NIfTI-1 348
            need = None
            for cls in (nibabel.Nifti1Image, nibabel.Nifti2Image):
                try:
                    header = cls.header_class.from_fileobj(io.BytesIO(head))
                except Exception:  # noqa: BLE001 - not this version's header; load_array reports both
                    continue
                need = int(header.get_data_offset()) + _check_nifti_header(header, source)
                break
            if need is None:
                return head + gz.read()  # not a NIfTI header: load_array names the problem
            return head + gz.read(max(need - len(head), 0))

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
