"""Atomic result writing and .npy / .npz loading."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from assay.downstream.task import mean_tree
from assay_segmentation.downstream import list_images, load_image, read_json, write_json_atomic


def test_write_read_round_trip_with_nan(tmp_path):
    data = {"x": {"metrics": {"d": np.float64(0.5), "n": math.nan, "i": np.float32("-inf")}}}
    path = write_json_atomic(tmp_path / "a" / "r.json", data)
    # standard JSON: the non-finite rule of assay.jsonio writes strings
    assert json.loads(path.read_text()) == {"x": {"metrics": {"d": 0.5, "n": "NaN", "i": "-Infinity"}}}
    back = read_json(path)
    assert back["x"]["metrics"]["d"] == 0.5 and math.isnan(back["x"]["metrics"]["n"])
    assert back["x"]["metrics"]["i"] == -math.inf
    path.write_text('{"n": null}')  # the rule of older versions still reads back as NaN
    assert math.isnan(read_json(path)["n"])


def test_failed_write_keeps_previous_file(tmp_path, monkeypatch):
    path = write_json_atomic(tmp_path / "r.json", {"v": 1})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"v": object()})  # not serialisable
    assert json.loads(path.read_text()) == {"v": 1}

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        write_json_atomic(path, {"v": 2})
    assert json.loads(path.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left behind


def test_load_npy_folders_and_npz(tmp_path):
    split = tmp_path / "id"
    (split / "pred_seg").mkdir(parents=True)
    (split / "u").mkdir()
    np.save(split / "pred_seg" / "a.npy", np.ones((2, 2), dtype=np.uint8))
    np.save(split / "u" / "a.npy", np.full((2, 2), 0.5))
    np.savez(split / "b.npz", pred_seg=np.zeros((2, 2)), u=np.full((2, 2), 0.25), ref_segs=np.zeros((3, 2, 2)))
    assert list_images(split) == ["a", "b"]
    a = load_image(split, "a", split="id", kinds=("pred_seg", "pred_samples", "u"))
    assert a.pred_seg.sum() == 4 and a.pred_samples is None and a.uncertainty["u"][0, 0] == 0.5
    b = load_image(split, "b", kinds=("pred_seg", "ref_segs", "u"))
    assert b.ref_segs.shape == (3, 2, 2) and b.uncertainty["u"][1, 1] == 0.25
    with pytest.raises(FileNotFoundError, match="ref_segs"):
        load_image(split, "a", kinds=("ref_segs",))
    with pytest.raises(FileNotFoundError, match="No data folder"):
        list_images(tmp_path / "nope")


def test_object_arrays_are_never_unpickled(tmp_path):
    split = tmp_path / "id"
    (split / "pred_seg").mkdir(parents=True)
    np.save(split / "pred_seg" / "a.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="pickle"):
        load_image(split, "a", kinds=("pred_seg",))


def test_mean_tree():
    with pytest.warns(RuntimeWarning, match="1 of 2"):
        tree = mean_tree({"a": {"u": {"metrics": {"x": 1.0, "y": math.nan}}},
                          "b": {"u": {"metrics": {"x": 4.0, "y": 2.0}}}})
    assert tree == {"u": {"metrics": {"x": 2.5, "y": 2.0}}}


def test_write_json_atomic_is_shared_with_jsonio():
    import assay_segmentation.downstream.results as downstream_results
    from assay import jsonio

    assert downstream_results.write_json_atomic is jsonio.write_json_atomic
