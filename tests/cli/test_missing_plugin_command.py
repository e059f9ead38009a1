"""A first-party plugin's command whose plugin is absent: one line naming the plugin and the install, exit 2.

Every first-party plugin is installed by ``make setup``, so "not installed" is simulated: the
plugin disabled (it adds no command) and its package metadata saying it is absent; and once
with the plugin disabled while still installed.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest
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
    # every command of the table belongs to a plugin of this repository
    assert set(FIRST_PARTY_COMMANDS) == set(declared)
    assert not set(FIRST_PARTY_COMMANDS) & OWN_COMMANDS


def _without(distribution: str, *args: str) -> subprocess.CompletedProcess:
    """``assay ARGS`` with ``distribution`` disabled (so it adds no command) and reported absent by its metadata."""
    code = textwrap.dedent(f"""
        import importlib.metadata, sys
        real = importlib.metadata.distribution
        def distribution(name):
            if name == {distribution!r}:
                raise importlib.metadata.PackageNotFoundError(name)
            return real(name)
        importlib.metadata.distribution = distribution
        from assay.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    return _assay(*args, env={"ASSAY_DISABLE_PLUGINS": distribution}, code=code)


@pytest.mark.parametrize(("command", "distribution"), [("ue", "assay-uncertainty"), ("report", "assay-report"),
                                                       ("run", "assay-segmentation")])
def test_a_command_of_a_plugin_not_installed_names_the_install(command, distribution):
    done = _without(distribution, command, "results/")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines()[-1] == (f"assay: error: the command {command!r} comes from the plugin "
                                            f"{distribution}, which is not installed: pip install {distribution}"), \
        done.stderr
    assert "invalid choice" not in done.stderr


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
