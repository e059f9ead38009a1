"""``assay ue`` is this plugin's command (issue 23): registered by its hook, declared under ``assay.commands``,
and ``assay ue`` loads this plugin alone."""

from __future__ import annotations

import importlib.metadata as metadata
import subprocess
import sys

from assay.cli import COMMANDS, OWN_COMMANDS
from assay.plugins import get_registry


def test_ue_is_declared_by_this_plugin_and_not_assays_own():
    declared = {ep.name: ep.value for ep in metadata.entry_points(group="assay.commands")}
    assert declared.get("ue") == "assay_uncertainty.plugin"
    assert "ue" not in OWN_COMMANDS and not any(m.endswith(".ue") for m in COMMANDS)
    entry = get_registry("command").get("ue")
    assert entry.source == "'uncertainty' (distribution assay-uncertainty)"


def test_assay_ue_loads_only_this_plugin(tmp_path):
    code = ("import sys\nfrom assay.cli import main\ntry:\n    main(['ue', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith('assay_')}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "usage: assay ue" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "['assay_uncertainty']"
