"""Config loading: defaults composition, interpolation, and errors naming file, key path and expectation."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from assay_segmentation.downstream import ConfigError, build_grid, load_config

BASE = """
base_path: data
experiments:
  - iter_params: {pred_model: [A, B], seed: [1, 2]}
    naming_scheme_version: "seed{seed}"
    prediction_models:
      A: {unc_types: [u1], aggregations: [image_mean]}
      B: {unc_types: [u1, u2], aggregations: {img: image_mean, patch: "patch_max[patch_size=3]"}}
tasks: [segmentation_performance]
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_load_and_grid(tmp_path):
    cfg = load_config(write(tmp_path / "c.yaml", BASE))
    assert cfg["base_path"] == str(tmp_path / "data")  # relative to the config file
    assert cfg["output_path"] == str(tmp_path / "results")
    versions = build_grid(cfg)
    assert [(v.pred_model, v.version_name) for v in versions] == [("A", "seed1"), ("A", "seed2"), ("B", "seed1"),
                                                                  ("B", "seed2")]
    assert versions[0].aggregations == {"image_mean": "image_mean"}
    assert versions[2].aggregations == {"img": "image_mean", "patch": "patch_max[patch_size=3]"}
    assert versions[2].unc_types == ("u1", "u2")
    assert versions[3].data_dir == tmp_path / "data" / "B" / "seed2"
    assert versions[3].group_params() == {"pred_model": "B"}


def test_defaults_composition_and_self_order(tmp_path):
    write(tmp_path / "parts" / "tasks.yaml", """
        # @package _global_
        tasks: [ood_detection]
        task_params: {ood_detection: {datasets: [id, ood], function: ood_detection}}
        executor: threads
    """)
    write(tmp_path / "parts" / "models.yaml", """
        A: {unc_types: [u1]}
    """)
    without_header = write(tmp_path / "c0.yaml", "defaults: [parts/tasks]\n" + BASE)
    write(tmp_path / "parts" / "bare.yaml", "tasks: [ood_detection]\n")
    with pytest.raises(ConfigError, match=r"bare\.yaml: parts: unknown key 'parts': Hydra places .* @package _global_"):
        load_config(write(without_header, "defaults: [parts/bare]\n" + BASE))
    main = write(tmp_path / "c.yaml", """
        defaults:
          - parts/tasks
          - parts/models@models
        base_path: data
        executor: serial
        experiments:
          - iter_params: {pred_model: [A]}
            prediction_models: ${models}
    """)
    cfg = load_config(main)
    assert cfg["tasks"] == ["ood_detection"]  # from the defaults
    assert cfg["executor"] == "serial"  # this file comes last without _self_: it overrides
    assert cfg["experiments"][0]["prediction_models"] == {"A": {"unc_types": ["u1"]}}  # interpolated
    write(main, """
        defaults: [_self_, parts/tasks, parts/models@models]
        base_path: data
        executor: serial
        experiments:
          - iter_params: {pred_model: [A]}
            prediction_models: ${models}
    """)
    assert load_config(main)["executor"] == "threads"  # _self_ first: the defaults override


def test_string_interpolation(tmp_path):
    cfg = load_config(write(tmp_path / "c.yaml", BASE + "name: toy\noutput_path: out/${name}\n"))
    assert cfg["output_path"] == str(tmp_path / "out" / "toy")


@pytest.mark.parametrize("edit, where, expect", [
    (("seed: [1, 2]", "seed: 3"), "experiments[0].iter_params.seed", "non-empty list"),
    (("pred_model: [A, B]", "pred_model: [A, B, C]"), "experiments[0].prediction_models", "pred_model 'C'"),
    (("tasks: [segmentation_performance]", "tasks: segmentation_performance"), "tasks", "list of names"),
    (("base_path: data", "base_path: [1]"), "base_path", "path string"),
    (("A: {unc_types: [u1]", "A: {unc_types: []"), "experiments[0].prediction_models.A.unc_types",
     "non-empty list"),
])
def test_errors_name_file_key_and_expectation(tmp_path, edit, where, expect):
    path = write(tmp_path / "c.yaml", BASE.replace(*edit))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    msg = str(info.value)
    assert str(path) in msg and where in msg and expect in msg


def test_error_names_the_default_file_that_set_the_key(tmp_path):
    bad = write(tmp_path / "tp.yaml", "task_params: {segmentation_performance: {datasets: id}}\n")
    main = write(tmp_path / "c.yaml", "defaults: [tp]\n" + BASE)
    with pytest.raises(ConfigError) as info:
        load_config(main)
    assert str(bad) in str(info.value) and "task_params.segmentation_performance.datasets" in str(info.value)


def test_missing_default_cycle_bad_yaml_and_missing_interpolation(tmp_path):
    main = write(tmp_path / "c.yaml", "defaults: [nope]\n" + BASE)
    with pytest.raises(ConfigError, match=r"nope\.yaml.*existing config file"):
        load_config(main)
    write(tmp_path / "a.yaml", "defaults: [b]\n")
    write(tmp_path / "b.yaml", "defaults: [a]\n")
    with pytest.raises(ConfigError, match="cycle"):
        load_config(tmp_path / "a.yaml")
    with pytest.raises(ConfigError, match="valid YAML"):
        load_config(write(tmp_path / "bad.yaml", "base_path: [\n"))
    with pytest.raises(ConfigError, match=r"base_path: expected an interpolation of an existing key"):
        load_config(write(tmp_path / "i.yaml", BASE.replace("base_path: data", "base_path: ${where}")))
    with pytest.raises(ConfigError, match="existing config file"):
        load_config(tmp_path / "absent.yaml")


def test_yaml_is_loaded_safely(tmp_path):
    path = write(tmp_path / "c.yaml", BASE + "x: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(ConfigError, match="valid YAML"):
        load_config(path)
