"""NIfTI (.nii / .nii.gz) maps and masks read with nibabel wherever .npy files are read."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

import nibabel
import numpy as np
import pytest

from assay.core.array_formats import ArrayFormat
from assay.errors import InvalidParameterError, MissingDependencyError
from assay.plugins import hookimpl
from assay_segmentation.downstream import list_images, load_image, run_experiments
from assay_segmentation.downstream.data import read_array


def save_nifti(path, array, dtype=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    arr = np.asarray(array, dtype=dtype)
    nibabel.save(nibabel.Nifti1Image(arr, np.eye(4)), str(path))


def test_read_array_keeps_label_maps_integer_and_maps_float(tmp_path):
    labels = np.array([[0, 1, 2], [2, 1, 0]], dtype=np.uint8)
    umap = np.linspace(0, 1, 12, dtype=np.float32).reshape(2, 3, 2)
    save_nifti(tmp_path / "seg.nii.gz", labels)
    save_nifti(tmp_path / "unc.nii", umap)
    got = read_array(tmp_path / "seg.nii.gz")
    assert got.dtype.kind in "iu" and got.tolist() == labels.tolist()
    assert np.allclose(read_array(tmp_path / "unc.nii"), umap)


def test_a_folder_of_nifti_files_lists_and_loads_like_npy(tmp_path):
    split = tmp_path / "id"
    save_nifti(split / "pred_seg" / "case_01.nii.gz", [[1, 0], [0, 1]], np.uint8)
    np.save(split / "pred_seg" / "case_02.npy", np.array([[0, 0], [1, 1]]))  # formats may mix
    save_nifti(split / "u" / "case_01.nii.gz", [[0.5, 0.25], [0.0, 1.0]], np.float32)
    (split / "pred_seg" / "notes.txt").write_text("not an image")
    assert list_images(split) == ["case_01", "case_02"]
    img = load_image(split, "case_01", kinds=("pred_seg", "u"))
    assert img.pred_seg.tolist() == [[1, 0], [0, 1]] and img.uncertainty["u"].tolist() == [[0.5, 0.25], [0.0, 1.0]]
    # two files for one image and kind: an error naming both, never a silent pick
    np.save(split / "u" / "case_01.npy", np.zeros((2, 2)))
    with pytest.raises(InvalidParameterError, match=r"case_01\.nii\.gz, case_01\.npy"):
        load_image(split, "case_01", kinds=("u",))
    with pytest.raises(FileNotFoundError, match=r"case_02\{\.nii\.gz\|\.nii\|\.npy\}"):
        load_image(split, "case_02", kinds=("u",))


def test_without_nibabel_a_nifti_file_names_the_install(tmp_path, monkeypatch):
    save_nifti(tmp_path / "x.nii.gz", [[1.0]])
    monkeypatch.setitem(sys.modules, "nibabel", None)
    with pytest.raises(MissingDependencyError, match=r"nibabel.*assay\[nifti\]"):
        read_array(tmp_path / "x.nii.gz")


def test_a_whole_run_on_nifti_files_equals_the_run_on_npy(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    from test_runner import CONFIG, make_data

    make_data(tmp_path / "npy")
    (tmp_path / "npy" / "c.yaml").write_text(textwrap.dedent(CONFIG))
    shutil.copytree(tmp_path / "npy", tmp_path / "nii")
    converted = 0
    for f in sorted((tmp_path / "nii" / "data").rglob("*.npy")):
        arr = np.load(f)
        save_nifti(f.with_name(f.name[:-4] + ".nii.gz"), arr, np.float32 if arr.dtype.kind == "f" else np.int16)
        f.unlink()
        converted += 1
    assert converted >= 10 and not list((tmp_path / "nii").rglob("*.npy"))
    a = run_experiments(tmp_path / "npy" / "c.yaml", executor="serial")
    b = run_experiments(tmp_path / "nii" / "c.yaml", executor="serial")
    assert a and b

    def results(root):
        files = sorted((root / "out").rglob("*.json"))
        return {p.relative_to(root).as_posix(): json.loads(p.read_text()) for p in files
                if p.name != "assay-results.json"}

    ra, rb = results(tmp_path / "npy"), results(tmp_path / "nii")
    assert ra.keys() == rb.keys() and len(ra) >= 2

    for name in ra:  # the same numbers (NIfTI stores the maps as float32: equal to 1e-6)
        assert _close(ra[name], rb[name]), name


def _close(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-6 or (a != a and b != b)
    return a == b


def test_npy_and_nifti_are_registered_data_formats_that_read_bytes_and_paths(tmp_path):
    import gzip

    import assay
    from assay.core.formats import DataFormatError

    umap = np.linspace(0, 1, 24, dtype=np.float32).reshape(2, 3, 4)
    save_nifti(tmp_path / "u.nii.gz", umap)
    nifti = assay.load_data_format("nifti")
    from_path, = nifti.read(tmp_path / "u.nii.gz")
    from_bytes, = nifti.loads((tmp_path / "u.nii.gz").read_bytes(), source="u.nii.gz")
    expected = np.asanyarray(nibabel.load(str(tmp_path / "u.nii.gz")).get_fdata())
    assert np.array_equal(from_path, expected) and np.array_equal(from_bytes, expected)
    # written by the format, read back by nibabel itself: same voxels, identity affine, compressed by the suffix
    written = nifti.write(tmp_path / "w.nii.gz", umap)
    assert gzip.decompress(written.read_bytes())[:4] == (348).to_bytes(4, "little")  # a NIfTI-1 header
    back = nibabel.load(str(written))
    assert np.array_equal(np.asanyarray(back.dataobj), umap) and np.array_equal(back.affine, np.eye(4))
    npy = assay.load_data_format("npy")
    assert np.array_equal(npy.loads(npy.dumps_bytes([umap]))[0], umap)
    # never unpickled: an object array is an error naming the file
    np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DataFormatError, match=r"o\.npy: not a \.npy array without pickles"):
        read_array(tmp_path / "o.npy")
    with pytest.raises(DataFormatError, match=r"bad\.nii\.gz: not a readable"):
        (tmp_path / "bad.nii.gz").write_bytes(b"\x1f\x8b garbage")
        read_array(tmp_path / "bad.nii.gz")
    with pytest.raises(InvalidParameterError, match=r"x\.mha: no registered array format.*\.nii\.gz \(nifti\)"):
        read_array(tmp_path / "x.mha")
    with pytest.raises(DataFormatError, match="binary format"):
        nifti.parse("text", source="t")


class TextArrayFormat(ArrayFormat):
    """A third-party array format: whitespace-separated numbers, one row per line (``.arr.txt``)."""

    name = "textarray"
    extensions = (".arr.txt",)

    def load_array(self, data, *, source):
        return np.loadtxt(data.decode().splitlines(), ndmin=2)


class TextArrayPlugin:
    @staticmethod
    @hookimpl
    def assay_register_data_formats(register):
        register("textarray", TextArrayFormat, extensions=TextArrayFormat.extensions, binary=True)


def test_a_plugins_array_format_is_read_wherever_npy_files_are(tmp_path):
    from assay.plugins import PluginSystem, use_plugin_system

    split = tmp_path / "id"
    (split / "pred_seg").mkdir(parents=True)
    np.save(split / "pred_seg" / "a.npy", np.array([[1, 0]]))
    (split / "pred_seg" / "b.arr.txt").write_text("0 1\n")
    (split / "u").mkdir()
    (split / "u" / "a.arr.txt").write_text("0.5 0.25\n")
    ps = PluginSystem(entry_points=False)
    ps.register_plugin(TextArrayPlugin, name="textarray-plugin")
    with use_plugin_system(ps):
        assert list_images(split) == ["a", "b"]
        image = load_image(split, "a", kinds=("pred_seg", "u"))
        assert image.pred_seg.tolist() == [[1, 0]] and image.uncertainty["u"].tolist() == [[0.5, 0.25]]
        with pytest.raises(FileNotFoundError, match=r"b\{\.arr\.txt\|\.nii\.gz\|\.nii\|\.npy\}"):
            load_image(split, "b", kinds=("u",))
    assert list_images(split) == ["a"]  # without the plugin, the text file is not an image
