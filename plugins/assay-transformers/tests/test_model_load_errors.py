"""A damaged weights file and a device this machine lacks end in one line naming the file or the
device, exit status 2, never ``internal error`` (issue 27, item 16)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from assay.cli import main
from assay_transformers.loading import load_model

QA = [("the capital of france is", "paris"), ("what", "small")]


def _config(tmp_path, model_dir):
    """An `assay ue` config with a model section (as in test_manager_model.py)."""
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in QA))
    cfg = {"model": {"path": str(model_dir), "batch_size": 2, "max_new_tokens": 4, "samples_n": 2},
           "dataset": {"path": "qa.jsonl", "text_column": "question", "label_column": "answer", "template": "{text} is",
                       "size": 2},
           "seed": [1], "estimators": ["msp"], "gen_metrics": ["accuracy"], "ue_metrics": ["prr"], "save_path": "out",
           "plots": False}
    path = tmp_path / "ue.yaml"
    path.write_text(json.dumps(cfg))  # JSON is YAML
    return path


@pytest.fixture
def damaged(model_dirs, tmp_path):
    """A copy of the tiny causal model whose weights are rewritten by each test."""
    folder = tmp_path / "model"
    shutil.copytree(model_dirs["causal"], folder)
    return folder


def truncate(file):
    data = file.read_bytes()
    file.write_bytes(data[: len(data) // 2])


def zero(file):
    file.write_bytes(b"\0" * file.stat().st_size)


@pytest.mark.parametrize("damage", [truncate, zero], ids=["truncated", "all-zero"])
def test_assay_ue_with_damaged_weights_names_the_file(damaged, tmp_path, capsys, damage):
    weights = damaged / "model.safetensors"
    assert weights.is_file()
    damage(weights)
    path = _config(tmp_path, damaged)
    assert main(["ue", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("assay ue: error: ")
    assert str(weights) in err[0] and "damaged or incomplete" in err[0]
    assert "internal error" not in err[0]


@pytest.mark.parametrize("damage", [truncate, zero], ids=["truncated", "all-zero"])
def test_load_model_with_damaged_weights_names_the_file(damaged, damage):
    weights = damaged / "model.safetensors"
    damage(weights)
    with pytest.raises(Exception, match="model weights .*model.safetensors.* are damaged or incomplete") as info:
        load_model(damaged, device="cpu")
    assert type(info.value).__name__ == "InvalidParameterError"


def test_assay_ue_on_a_cuda_device_without_cuda_names_the_device(model_dirs, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a machine without CUDA, GPU or not
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    path = _config(tmp_path, model_dirs["causal"])
    cfg = json.loads(path.read_text())
    cfg["model"]["device"] = "cuda:7"
    path.write_text(json.dumps(cfg))
    assert main(["ue", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("assay ue: error: ") and "'cuda:7'" in err[0] and "CUDA is not available" in err[0]
    assert not (tmp_path / "out").exists()


def test_a_cuda_index_beyond_the_devices_names_the_count(model_dirs, monkeypatch):
    """The same check where CUDA is present: two devices, cuda:7 asked (torch's answers replaced)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with pytest.raises(Exception, match=r"'cuda:7' is not on this machine: it has 2 CUDA device\(s\), cuda:0 to "
                                        r"cuda:1"):
        load_model(model_dirs["causal"], device="cuda:7")


def test_a_device_string_torch_does_not_know_is_named(model_dirs):
    with pytest.raises(Exception, match=r"model 'device' 'gpu7' is not a torch device"):
        load_model(model_dirs["causal"], device="gpu7")
