"""``assay run CONFIG KEY=VALUE ...``: Hydra overrides of the composed config, errors naming the command line."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from assay.cli import main
from assay_segmentation.downstream import ConfigError, load_config


@pytest.fixture
def config_path(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    from test_runner import CONFIG, make_data

    make_data(tmp_path)
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    return path


def test_overrides_replace_values_before_interpolation_and_paths_resolve_from_the_current_folder(
        config_path, tmp_path, monkeypatch):
    elsewhere = tmp_path / "moved"
    shutil.copytree(tmp_path / "data", elsewhere / "data")
    monkeypatch.chdir(elsewhere)
    cfg = load_config(config_path, [f"base_path={elsewhere / 'data'}", "task_params.ood_detection.datasets=[id,ood]",
                                    f"output_path={elsewhere / 'out2'}"])
    assert cfg["base_path"] == str((elsewhere / "data").resolve())
    assert cfg["output_path"] == str((elsewhere / "out2").resolve())
    assert cfg["task_params"]["ood_detection"]["datasets"] == ["id", "ood"]
    plain = load_config(config_path)
    assert plain["base_path"] == str((tmp_path / "data").resolve())  # the file's own relative path: its folder


def test_the_cli_runs_with_overrides(config_path, tmp_path, capsys):
    out = tmp_path / "cli-out"
    assert main(["run", str(config_path), f"output_path={out}", "task_params.segmentation_performance.datasets=[id]",
                 "--json", "-q"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert Path(summary["output"]) == out.resolve() and (out / "assay-results.json").is_file()
    # a typo on the command line: exit status 2 and the message on stderr
    assert main(["run", str(config_path), "base_pth=/x"]) == 2
    assert "Could not override 'base_pth'" in capsys.readouterr().err


@pytest.mark.parametrize("override, match", [
    ("base_pth=/x", r"the command line: Could not override 'base_pth'\. To append to your config use \+base_pth=/x"),
    ("+base_path=/x", r"An item is already at 'base_path'"),
    ("base_path", "missing EQUAL"),
    ("tasks=[a, b", "no viable alternative"),
    ("experiments.5.naming_scheme_version=x", r"Error merging override experiments\.5"),
    ("base_path.sub=1", r"Could not override 'base_path\.sub'"),
    ("task_params.nothing.datasets=[id]", r"Could not override 'task_params\.nothing\.datasets'"),
    ("+extra_key=1", r"extra_key"),
])
def test_bad_overrides_are_errors_naming_the_override(config_path, override, match):
    with pytest.raises(ConfigError, match=match):
        load_config(config_path, [override])
