"""A config is data: ``allow_import`` in a file is an error naming the key and the flag (issue 27, item 5).

The target that would run is ``builtins.open`` with ``mode: w`` on a marker file: if the file
exists afterwards, the config ran code. ``--allow-import`` (and ``allow_import=True`` in
Python) stays the one opt-in, and opting in does run the target.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.cli import main
from assay_segmentation.downstream import ConfigError, load_config, run_experiments

CONFIGS = Path(__file__).resolve().parents[4] / "examples" / "values" / "evaluation" / "configs"

BASE = """
base_path: data
experiments:
  - iter_params: {pred_model: [A], seed: [1]}
    naming_scheme_version: "seed{seed}"
    prediction_models:
      A: {unc_types: [u1], aggregations: [image_mean]}
tasks: [segmentation_performance]
"""


def _values_config(tmp_path: Path, marker: Path, *, allow_import_key: bool) -> Path:
    """ValUES' toy config whose ood_detection step is ``builtins.open(marker, "w")``."""
    dest = tmp_path / "configs"
    shutil.copytree(CONFIGS, dest)
    path = dest / "eval_config_toy.yaml"
    text = path.read_text().replace("_target_: evaluation.metrics.auroc.ood_detection",
                                    f"_target_: builtins.open\n      file: {marker}\n      mode: w")
    assert "builtins.open" in text
    if allow_import_key:
        text += "\nallow_import: true\n"
    path.write_text(text)
    return path


def test_allow_import_in_a_values_config_is_an_error_and_runs_nothing(tmp_path):
    marker = tmp_path / "ran.txt"
    path = _values_config(tmp_path, marker, allow_import_key=True)
    with pytest.raises(ConfigError) as info:
        load_config(path, [f"base_path={tmp_path}"])
    message = str(info.value)
    assert "eval_config_toy.yaml: allow_import:" in message, message
    assert "--allow-import" in message and "allow_import=True" in message, message
    assert not marker.exists()


def test_allow_import_as_an_override_is_the_same_error(tmp_path):
    marker = tmp_path / "ran.txt"
    path = _values_config(tmp_path, marker, allow_import_key=False)
    with pytest.raises(ConfigError, match=r"the command line: allow_import: .*--allow-import"):
        load_config(path, [f"base_path={tmp_path}", "+allow_import=true"])
    assert not marker.exists()


def test_allow_import_false_in_a_file_is_refused_too(tmp_path):
    """One way to opt in: the key has no meaning in a file, whatever its value."""
    path = _values_config(tmp_path, tmp_path / "ran.txt", allow_import_key=False)
    path.write_text(path.read_text() + "\nallow_import: false\n")
    with pytest.raises(ConfigError, match="allow_import: a config file cannot set 'allow_import'"):
        load_config(path, [f"base_path={tmp_path}"])


def test_allow_import_in_an_assay_config_names_the_flag(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(BASE + "allow_import: true\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: allow_import: .*--allow-import"):
        load_config(path)
    with pytest.raises(ConfigError, match=r"c\.yaml: allow_import: .*--allow-import"):
        run_experiments(path)


def test_assay_run_refuses_the_key_and_honours_the_flag(tmp_path, capsys):
    marker = tmp_path / "ran.txt"
    path = _values_config(tmp_path, marker, allow_import_key=True)
    assert main(["run", str(path), f"base_path={tmp_path}", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "allow_import" in err and "--allow-import" in err and "Traceback" not in err, err
    assert not marker.exists()

    path = _values_config(tmp_path / "flag", marker, allow_import_key=False)
    assert main(["run", str(path), f"base_path={tmp_path}", "-o", str(tmp_path / "out"), "--allow-import"]) == 2
    err = capsys.readouterr().err
    assert marker.exists()  # the flag opted in: builtins.open ran (and is then refused as a ValUES step)
    assert "has no version_files" in err, err


def test_python_keyword_is_the_opt_in(tmp_path):
    marker = tmp_path / "ran.txt"
    path = _values_config(tmp_path, marker, allow_import_key=False)
    with pytest.raises(ConfigError, match="unknown target 'builtins.open'.*--allow-import"):
        load_config(path, [f"base_path={tmp_path}"])
    assert not marker.exists()
    with pytest.raises(ConfigError, match="has no version_files"):
        load_config(path, [f"base_path={tmp_path}"], allow_import=True)
    assert marker.exists()
