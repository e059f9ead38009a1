"""A real ``pip install`` of the template plugin: found through its entry point, usable by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TEMPLATE = Path(__file__).resolve().parents[2] / "examples" / "plugin-template"


@pytest.mark.slow
def test_pip_installed_template_is_discovered(tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--target", str(target), str(TEMPLATE)],
        check=True, capture_output=True, text=True,
    )
    assert list(target.glob("assay_template-0.1.0.dist-info"))
    env = dict(os.environ, PYTHONPATH=str(target))
    listing = subprocess.run([sys.executable, "-m", "assay", "list", "sentence_evaluator"], env=env,
                             capture_output=True, text=True, check=True).stdout
    assert "tag_match" in listing and "[template]" in listing
    code = ("import assay; f = assay.load_sentence_evaluator('tag_match[ignore=[PUNCT]]'); "
            "print(f({'gold': ['A', 'PUNCT', 'B'], 'pred': ['A', 'X', 'C']}, None))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(1, 2)"
    # the template declares its names: the lookup imported it and no first-party plugin
    code += "; import sys; print(sorted(m for m in sys.modules if m.startswith('assay_')))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "['assay_template', 'assay_template.plugin']"
    # and its declaration matches what it registers
    check = subprocess.run([sys.executable, "-m", "assay", "check-plugin", "assay-template", "--json"], env=env,
                           capture_output=True, text=True)
    rows = [r for r in json.loads(check.stdout)["results"] if r["check"] == "declaration"]
    assert [(r["name"], r["status"]) for r in rows] == [("template", "PASS")], rows
