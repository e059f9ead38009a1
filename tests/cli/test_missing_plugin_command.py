"""A first-party plugin's command whose plugin is absent: one line naming the plugin and the install, exit 2.

``assay report`` runs for real without its plugin (assay-report is not in this repository
yet); ``assay ue`` is run with assay-uncertainty disabled, and once more with the package
metadata saying it is not installed.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import tomllib

from assay.cli import OWN_COMMANDS
from assay.cli._plugin_commands import FIRST_PARTY_COMMANDS

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _assay(*args: str, env: dict[str, str] | None = None, code: str | None = None) -> subprocess.CompletedProcess:
    run = ["-c", code, *args] if code else ["-m", "assay", *args]
    return subprocess.run([sys.executable, *run], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def _declared_commands() -> dict[str, str]:
    """command -> distribution, from every first-party plugin's ``assay.commands`` entry points."""
    declared = {}
    for pyproject in sorted(ROOT.glob("plugins/*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text())["project"]
        for command in project.get("entry-points", {}).get("assay.commands", {}):
            declared[command] = project["name"]
    return declared


def test_the_table_matches_the_plugins_declarations():
    declared = _declared_commands()
    assert declared, "no plugin declares a command: the glob is wrong"
    for command, distribution in declared.items():
        assert FIRST_PARTY_COMMANDS.get(command) == distribution, command
    in_tree = set(declared.values())
    # a command of a plugin not in this repository yet: only the announced assay-report
    assert {d for d in FIRST_PARTY_COMMANDS.values() if d not in in_tree} <= {"assay-report"}
    assert not set(FIRST_PARTY_COMMANDS) & OWN_COMMANDS


def test_a_command_of_a_plugin_not_installed_names_the_install():
    done = _assay("report", "results/")
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines == ["assay: error: the command 'report' comes from the plugin assay-report, which is not "
                     "installed: pip install assay-report"], done.stderr
    assert "invalid choice" not in done.stderr


def test_uninstalled_uncertainty_plugin():
    # the plugin disabled (so it adds no command) and its distribution reported absent, as without it installed
    code = textwrap.dedent("""
        import importlib.metadata, sys
        real = importlib.metadata.distribution
        def distribution(name):
            if name == "assay-uncertainty":
                raise importlib.metadata.PackageNotFoundError(name)
            return real(name)
        importlib.metadata.distribution = distribution
        from assay.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    done = _assay("ue", "outputs.jsonl", env={"ASSAY_DISABLE_PLUGINS": "assay-uncertainty"}, code=code)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == ("assay: error: the command 'ue' comes from the plugin assay-uncertainty, "
                                            "which is not installed: pip install assay-uncertainty"), done.stderr


def test_an_installed_but_disabled_plugin_is_not_called_missing():
    done = _assay("ue", "outputs.jsonl", env={"ASSAY_DISABLE_PLUGINS": "assay-uncertainty"})
    assert done.returncode == 2
    last = done.stderr.splitlines()[-1]
    assert "the command 'ue' comes from the plugin assay-uncertainty, which is installed but did not add it" in last
    assert "pip install" not in done.stderr


def test_an_unknown_command_is_still_argparses_error():
    done = _assay("no-such-command")
    assert done.returncode == 2
    assert "invalid choice: 'no-such-command'" in done.stderr


def test_an_installed_plugins_command_still_runs():
    done = _assay("ue", "--help")
    assert done.returncode == 0, done.stderr
    assert "usage: assay ue" in done.stdout
