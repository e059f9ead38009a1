"""`assay demo` as `make run` calls it: a relative output folder, run from another directory."""

from __future__ import annotations

import json

import pytest

from assay.cli import main


@pytest.mark.slow
def test_demo_sections_run_with_a_relative_output_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = main(["demo", "-o", "demo-output", "--section", "metrics", "--section", "uncertainty",
                 "--section", "segmentation"])
    assert code == 0
    out = capsys.readouterr().out
    assert "identical result files: True" in out
    seg = tmp_path / "demo-output" / "segmentation"
    # the config it wrote is portable: paths relative to the config file
    config = (seg / "segmentation.yaml").read_text()
    assert "base_path: data" in config and str(tmp_path) not in config
    assert (seg / "table.md").read_text().startswith("|")
    assert list(seg.glob("bars_*.png"))
    manager = json.loads((tmp_path / "demo-output" / "uncertainty" / "run" / "manager.json").read_text())
    assert manager


def test_unknown_demo_section_is_an_error_naming_the_choices(capsys):
    assert main(["demo", "--section", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay demo: error: --section 'nope': unknown demo section") and "treebank" in err
