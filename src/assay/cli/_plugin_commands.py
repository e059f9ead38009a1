"""Sub-commands registered by plugins (``assay_register_commands``), added after assay's own.

A plugin command gets the same treatment as a built-in one: its parser is a sub-parser of
``assay`` (argparse errors read ``assay NAME: error: ...``), and :func:`assay.cli._errors.run_command`
runs it (exit 2 for bad input, 70 for a bug). What cannot be added is skipped with one
warning line on stderr, never an error: a name that is one of assay's own commands, a name
two plugins registered (``assay plugins`` shows that clash too), an ``add_arguments`` that
raises, and a plugin system that fails to load at all (``ASSAY_STRICT_PLUGINS=1`` with a
broken plugin), so ``assay --help`` always works.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_plugin_commands"]


def _warn(message: str) -> None:
    print(f"assay: warning: {message}", file=sys.stderr)


def add_plugin_commands(subparsers: argparse._SubParsersAction, builtin: set[str],
                        command: str | None = None) -> list[str]:
    """Add every registered plugin command to ``subparsers``; returns the names added.

    ``builtin`` holds assay's own command names, which a plugin cannot take. ``command``
    (the command line's first argument, not one of assay's own) is added alone when its
    plugin declares it (:meth:`~assay.plugins.PluginSystem.load_command`: only that plugin
    is loaded); otherwise every plugin is loaded and every command added.
    """
    from assay.plugins import get_plugin_system

    system = get_plugin_system()
    if command is not None and command not in builtin:
        try:
            entry = system.load_command(command)
        except Exception:  # noqa: BLE001 - loading every plugin below reports what is wrong
            entry = None
        if entry is not None:
            return [command] if _add(subparsers, entry) else []
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


def _add(subparsers: argparse._SubParsersAction, entry: Any) -> bool:
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
        _warn(f"the command {entry.name!r} of plugin {entry.source} is not added: its add_arguments raised "
              f"{type(exc).__name__}: {' '.join(str(exc).split())}")
        return False
    return True


def _remove(subparsers: argparse._SubParsersAction, name: str) -> None:
    """Undo a half-added sub-parser (argparse has no public way to remove one)."""
    subparsers._name_parser_map.pop(name, None)
    subparsers._choices_actions[:] = [a for a in subparsers._choices_actions if a.dest != name]
