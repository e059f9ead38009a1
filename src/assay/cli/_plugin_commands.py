"""Sub-commands registered by plugins (``assay_register_commands``), added after assay's own.

A plugin command gets the same treatment as a built-in one: its parser is a sub-parser of
``assay`` (argparse errors read ``assay NAME: error: ...``), and :func:`assay.cli._errors.run_command`
runs it (exit 2 for bad input, 70 for a bug). What cannot be added is skipped with one
warning line on stderr, never an error: a name that is one of assay's own commands, a name
two plugins registered (``assay plugins`` shows that clash too), an ``add_arguments`` that
raises, and a plugin system that fails to load at all (``ASSAY_STRICT_PLUGINS=1`` with a
broken plugin), so ``assay --help`` always works.

A first-party command whose plugin is not there (``assay ue`` without assay-uncertainty) is
one line naming the plugin and the ``pip install`` to run (:func:`missing_command_message`,
from the table :data:`FIRST_PARTY_COMMANDS`: names only, no plugin is imported), not
argparse's "invalid choice".
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["FIRST_PARTY_COMMANDS", "add_plugin_commands", "missing_command_message"]

#: the commands of the first-party plugins -> the distribution that provides each (checked against the plugins'
#: ``assay.commands`` entry points by tests/cli/test_missing_plugin_command.py)
FIRST_PARTY_COMMANDS: dict[str, str] = {
    "ue": "assay-uncertainty",
    "run": "assay-segmentation",
    "table": "assay-segmentation",
    "plot": "assay-segmentation",
    "parse-eval": "assay-parsing",
    "report": "assay-report",
}


def _warn(message: str) -> None:
    print(f"assay: warning: {message}", file=sys.stderr)


def missing_command_message(command: str) -> str | None:
    """The error line for ``assay COMMAND`` when COMMAND is a first-party plugin's and was not added; else None.

    Called only once the plugins' commands are added and COMMAND is not among them. The
    plugin not installed: the ``pip install`` to run; installed (so disabled with
    ``ASSAY_DISABLE_PLUGINS``, or failing to load): where to look.
    """
    distribution = FIRST_PARTY_COMMANDS.get(command)
    if distribution is None:
        return None
    # deferred: importlib.metadata costs ~25 ms, which 'assay parse-eval' does not pay (assay.plugins._entry_points)
    import importlib.metadata

    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return (f"assay: error: the command {command!r} comes from the plugin {distribution}, which is not "
                f"installed: pip install {distribution}")
    return (f"assay: error: the command {command!r} comes from the plugin {distribution}, which is installed but "
            "did not add it (disabled by ASSAY_DISABLE_PLUGINS / ASSAY_LOAD_PLUGINS, or it failed to load: "
            "see 'assay plugins')")


def add_declared_command(subparsers: argparse._SubParsersAction, command: str) -> bool:
    """Add ``command`` alone when an installed plugin declares it (entry-point group ``assay.commands``).

    Only that plugin is loaded (:meth:`~assay.plugins.PluginSystem.load_command`). False, with
    nothing added, when no plugin or several declare it, or the declared one fails or does not
    register it: the caller then loads every plugin (:func:`add_plugin_commands`), which
    reports what is wrong. ``command`` must not be one of assay's own commands.
    """
    from assay.plugins import get_plugin_system

    try:
        entry = get_plugin_system().load_command(command)
    except Exception:  # noqa: BLE001 - loading every plugin next reports what is wrong
        return False
    if entry is None:
        return False
    return _add(subparsers, entry, warn=False)  # a failure is reported by the full load that follows


def add_plugin_commands(subparsers: argparse._SubParsersAction, builtin: set[str]) -> list[str]:
    """Add every registered plugin command to ``subparsers``; returns the names added.

    ``builtin`` holds assay's own command names, which a plugin cannot take.
    """
    from assay.plugins import get_plugin_system

    system = get_plugin_system()
    try:
        registry = system.registry("command")
        names = registry.names()
    except Exception as exc:  # noqa: BLE001 - a broken plugin system must not take assay's own commands down
        _warn(f"plugin commands are not available: {type(exc).__name__}: {' '.join(str(exc).split())}")
        return []
    added = []
    for name in names:
        found = registry.candidates(name)
        sources = ", ".join(e.source for e in found)
        if name in builtin:
            _warn(f"the command {name!r} registered by plugin {sources} is one of assay's own commands; "
                  "it is not added (rename it in the plugin)")
            continue
        if len(found) > 1:
            _warn(f"the command {name!r} is registered by {len(found)} plugins, {sources}; none is added "
                  "(stop loading one with ASSAY_DISABLE_PLUGINS; see 'assay plugins')")
            continue
        if _add(subparsers, found[0]):
            added.append(name)
    return added


def _add(subparsers: argparse._SubParsersAction, entry: Any, *, warn: bool = True) -> bool:
    meta = entry.metadata
    help_text = meta.get("help") or entry.description or None
    try:
        parser = subparsers.add_parser(
            entry.name, help=help_text, description=meta.get("description") or help_text,
            epilog=meta.get("epilog"), formatter_class=meta.get("formatter_class") or argparse.HelpFormatter)
        add_arguments = meta.get("add_arguments")
        if add_arguments is not None:
            add_arguments(parser)
        parser.set_defaults(func=entry.factory)
    except Exception as exc:  # noqa: BLE001 - one broken command must not break 'assay --help'
        _remove(subparsers, entry.name)
        if not warn:
            return False
        _warn(f"the command {entry.name!r} of plugin {entry.source} is not added: its add_arguments raised "
              f"{type(exc).__name__}: {' '.join(str(exc).split())}")
        return False
    return True


def _remove(subparsers: argparse._SubParsersAction, name: str) -> None:
    """Undo a half-added sub-parser (argparse has no public way to remove one)."""
    subparsers._name_parser_map.pop(name, None)
    subparsers._choices_actions[:] = [a for a in subparsers._choices_actions if a.dest != name]
