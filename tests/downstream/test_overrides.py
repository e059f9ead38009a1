"""``assay run CONFIG KEY=VALUE ...``: command-line overrides of the composed config (Hydra's plain-value grammar)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from assay.cli import main
from assay.downstream import ConfigError, load_config


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
    cfg = load_config(config_path, ["base_path=data", "experiments.0.naming_scheme_version=seed{seed}",
                                    "task_params.ood_detection.datasets=[id, ood]", "output_path=out2"])
    assert cfg["base_path"] == str((elsewhere / "data").resolve())  # relative to the current folder
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
    assert "Did you mean 'base_path'" in capsys.readouterr().err


@pytest.mark.parametrize("override, match", [
    ("base_pth=/x", r"no key base_pth\. Did you mean 'base_path'\?.*To add a key, write \+base_pth=/x"),
    ("+base_path=/x", r"exists; override it without '\+'"),
    ("base_path", "is not an override; write KEY=VALUE"),
    ("=3", "is not an override"),
    ("tasks=[a, b", "not valid YAML"),
    ("experiments.5.naming_scheme_version=x", r"no key experiments\[5\]"),
    ("base_path.sub=1", "base_path is not a mapping"),
    ("task_params.nothing.datasets=[id]", r"no key task_params\.nothing"),
    ("base_path=3", r"<command line>: base_path: expected a path string"),
    ("+extra_key=1", r"unknown key 'extra_key'"),
])
def test_bad_overrides_are_errors_naming_the_override(config_path, override, match):
    with pytest.raises(ConfigError, match=match):
        load_config(config_path, [override])
