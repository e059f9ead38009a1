"""Array files: the size a header declares is checked against a configurable limit before any data is read
(issue 27, item 13).

Before, a ``.npy`` or ``.nii`` header declaring ``(1e5, 1e5, 1e5)`` or ``30000^3`` was a raw
``MemoryError`` (numpy and nibabel allocate the array first), and a 0.5 MB ``.nii.gz`` that
expands to 512^3 float32 took seconds and gigabytes. Each is now a ``DataFormatError`` naming the
file, the shape and the limit (``ASSAY_MAX_ARRAY_BYTES`` / ``set_max_array_bytes``), raised from
the header alone.
"""

from __future__ import annotations

import gzip
import io
import zlib

import nibabel
import numpy as np
import pytest

from assay.core.array_formats import (
    DEFAULT_MAX_ARRAY_BYTES,
    NiftiFormat,
    NpyFormat,
    max_array_bytes,
    set_max_array_bytes,
)
from assay.core.formats import DataFormatError
from assay.errors import InvalidParameterError


@pytest.fixture(autouse=True)
def default_limit(monkeypatch):
    monkeypatch.delenv("ASSAY_MAX_ARRAY_BYTES", raising=False)
    set_max_array_bytes(None)
    yield
    set_max_array_bytes(None)


def npy_header_only(shape, descr="<f8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue() + bytes(64)


def nifti_header_only(shape, dtype=np.float32) -> bytes:
    header = nibabel.Nifti1Header()
    header.set_data_shape(shape)
    header.set_data_dtype(dtype)
    header.set_data_offset(352)
    return header.binaryblock + bytes(352 - len(header.binaryblock)) + bytes(64)


@pytest.mark.parametrize("shape", [(100_000, 100_000, 100_000), (30_000, 30_000, 30_000)])
def test_a_npy_header_declaring_a_huge_array_is_an_error_naming_the_file(tmp_path, shape):
    path = tmp_path / "huge.npy"
    path.write_bytes(npy_header_only(shape))
    with pytest.raises(DataFormatError, match=rf"huge\.npy: its header declares .*{shape[0]}, .*over the limit of "
                                              r"536,870,912 bytes.*ASSAY_MAX_ARRAY_BYTES"):
        NpyFormat().read(path)
    with pytest.raises(DataFormatError, match="over the limit"):
        NpyFormat().loads(path.read_bytes(), source=str(path))


@pytest.mark.parametrize("suffix", [".nii", ".nii.gz"])
def test_a_nifti_header_declaring_30000_cubed_is_an_error_naming_the_file(tmp_path, suffix):
    raw = nifti_header_only((30_000, 30_000, 30_000))
    path = tmp_path / f"huge{suffix}"
    path.write_bytes(gzip.compress(raw) if suffix.endswith(".gz") else raw)
    with pytest.raises(DataFormatError, match=rf"huge{suffix.replace('.', '[.]')}: its header declares a NIfTI "
                                              r"float32 array of shape \(30000, 30000, 30000\)"):
        NiftiFormat().read(path)
    with pytest.raises(DataFormatError, match="over the limit"):
        NiftiFormat().loads(path.read_bytes(), source=str(path))


def test_a_truncated_npy_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "short.npy"
    path.write_bytes(npy_header_only((1000,)))  # 8,000 bytes declared, 64 present
    with pytest.raises(DataFormatError, match=r"short\.npy: truncated: its header declares 8,000 bytes"):
        NpyFormat().read(path)


def test_the_limit_is_configurable_by_call_and_by_environment(tmp_path, monkeypatch):
    path = tmp_path / "a.npy"
    np.save(path, np.zeros((100, 100)))  # 80,000 bytes
    assert NpyFormat().read(path)[0].shape == (100, 100)
    set_max_array_bytes(50_000)
    assert max_array_bytes() == 50_000
    with pytest.raises(DataFormatError, match="80,000 bytes as read, over the limit of 50,000"):
        NpyFormat().read(path)
    set_max_array_bytes(None)
    monkeypatch.setenv("ASSAY_MAX_ARRAY_BYTES", "79999")
    with pytest.raises(DataFormatError, match="over the limit of 79,999"):
        NpyFormat().read(path)
    monkeypatch.setenv("ASSAY_MAX_ARRAY_BYTES", "80000")
    assert NpyFormat().read(path)[0].shape == (100, 100)
    monkeypatch.setenv("ASSAY_MAX_ARRAY_BYTES", "lots")
    with pytest.raises(InvalidParameterError, match="ASSAY_MAX_ARRAY_BYTES='lots'"):
        NpyFormat().read(path)
    monkeypatch.delenv("ASSAY_MAX_ARRAY_BYTES")
    assert max_array_bytes() == DEFAULT_MAX_ARRAY_BYTES
    with pytest.raises(InvalidParameterError, match="set_max_array_bytes"):
        set_max_array_bytes(0)


def test_nifti_floats_count_as_float64_as_read(tmp_path):
    # a float32 map is returned as float64 (get_fdata): 1,000 voxels are 8,000 bytes as read
    fmt = NiftiFormat()
    path = tmp_path / "m.nii.gz"
    fmt.write(path, np.zeros((10, 10, 10), dtype=np.float32))
    set_max_array_bytes(7_999)
    with pytest.raises(DataFormatError, match="8,000 bytes as read"):
        fmt.read(path)
    set_max_array_bytes(8_000)
    assert fmt.read(path)[0].dtype == np.float64
    # integer label maps are returned as stored: 1,000 uint8 voxels are 1,000 bytes
    fmt.write(path, np.zeros((10, 10, 10), dtype=np.uint8))
    set_max_array_bytes(1_000)
    assert fmt.read(path)[0].dtype == np.uint8


@pytest.mark.slow
def test_half_a_megabyte_of_gzip_expanding_to_512_cubed_float32_is_refused_from_its_header(tmp_path):
    header = nibabel.Nifti1Header()
    header.set_data_shape((512, 512, 512))
    header.set_data_dtype(np.float32)
    header.set_data_offset(352)
    z = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    parts = [z.compress(header.binaryblock + bytes(352 - len(header.binaryblock)))]
    chunk = bytes(1 << 20)
    parts += [z.compress(chunk) for _ in range(512)]
    data = b"".join(parts) + z.flush()
    assert len(data) < 600_000
    path = tmp_path / "bomb.nii.gz"
    path.write_bytes(data)
    for read in (lambda: NiftiFormat().read(path), lambda: NiftiFormat().loads(data, source=str(path))):
        with pytest.raises(DataFormatError, match=r"bomb\.nii\.gz: .*\(512, 512, 512\), 1,073,741,824 bytes as read"):
            read()
