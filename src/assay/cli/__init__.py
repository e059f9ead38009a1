"""The ``assay`` command (also ``python -m assay``).

Each sub-command lives in its own module under :mod:`assay.cli` with a
``register(subparsers)`` function that adds its parser and sets ``func`` (called with
the parsed arguments, returning the exit code). Sub-command modules import heavy
libraries inside ``func``, so ``assay --help`` stays fast. Plugins add commands with the
``assay_register_commands`` hook (the first-party plugins add some); they are listed
after assay's own (:mod:`assay.cli._plugin_commands`; helpers for them in
:mod:`assay.cli.commands`), and added only when the command line may name one (no command,
``--help``, a name that is not assay's own), so assay's own commands load no plugin to parse.
A first-party plugin's command whose plugin is absent (``assay ue`` without assay-uncertainty)
is one line naming the ``pip install`` to run, exit status 2.

Every command ends in one line on stderr, never a traceback: ``assay COMMAND: error:
<file or flag>: <what is wrong>`` with exit status 2 for bad input (argparse usage errors
too), ``assay COMMAND: internal error: ...`` with status 70 for a bug, 130 on Ctrl-C,
141 when stdout is closed early (``assay list metric | head``). ``ASSAY_DEBUG=1`` adds
the traceback. See :mod:`assay.cli._errors` and ``docs/cli.md``.

Output: results, and the headers and ``EVALUATOR`` lines that announce them, go to stdout;
warnings and progress to stderr; ``--json`` leaves only the JSON on stdout
(:mod:`assay.cli._output`).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from assay import __version__
from assay.cli._errors import EXIT_INTERRUPTED, EXIT_USAGE, run_command
from assay.cli._output import evaluator_lines_on_stdout
from assay.cli._plugin_commands import add_declared_command, add_plugin_commands, missing_command_message
from assay.plugins import warns_about_plugin_problems  # one stderr line when plugins failed or clashed

__all__ = ["build_parser", "main"]

#: sub-command modules, in the order ``assay --help`` lists them
COMMANDS: tuple[str, ...] = (
    "assay.cli.demo",
    "assay.cli.plugins", "assay.cli.check_plugin",
    "assay.cli.evaluate", "assay.cli.compare",
)


class _Parser(argparse.ArgumentParser):
    """argparse, with the error line first (``assay COMMAND: error: argument --flag: ...``), then the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n{self.format_usage()}")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every argument added (to check its metavar), each asking
        # shutil for the terminal size (shutil itself costs 3 ms to import); the width is the same
        try:
            width = _help_width(os.environ.get("COLUMNS"))
            return self.formatter_class(prog=self.prog, width=width)  # type: ignore[call-arg]
        except TypeError:  # a plugin's formatter class that takes no width
            return super()._get_formatter()


@functools.cache
def _help_width(columns_variable: str | None) -> int:
    """The width argparse gives its help: ``COLUMNS``, else the terminal's, else 80, less 2, as
    ``shutil.get_terminal_size`` gives it to argparse (asked once per value of ``COLUMNS``)."""
    try:
        columns = int(columns_variable)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
        columns = columns or 80
    return columns - 2


#: the names those modules register (checked by the tests): ``assay NAME`` with another NAME is a plugin's
OWN_COMMANDS: frozenset[str] = frozenset({"demo", "plugins", "list", "check-plugin", "evaluate", "compare"})


def _top_parser() -> argparse.ArgumentParser:
    """The ``assay`` parser without any command."""
    parser = _Parser(
        prog="assay",
        description="assay: plugin-based evaluation. Sharded evaluation with exact tallies, "
        "metrics with confidence intervals, uncertainty estimation and downstream tasks.",
        epilog="Run 'assay COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"assay {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def build_parser(*, plugin_commands: bool = True) -> argparse.ArgumentParser:
    """The ``assay`` parser: assay's own commands, then (``plugin_commands``) the plugins'.

    Adding the plugins' commands loads the plugins; :func:`main` does it only when the
    command line needs them (no command, ``--help``, or a command that is not assay's own).
    """
    parser = _top_parser()
    subparsers = _subparsers(parser)
    for module_name in COMMANDS:
        importlib.import_module(module_name).register(subparsers)
    if plugin_commands:
        add_plugin_commands(subparsers, builtin=set(subparsers.choices))
    return parser


def _needs_plugin_commands(parser: argparse.ArgumentParser, argv: list[str]) -> bool:
    """Whether the command line names no command of assay's own (``assay``, ``assay --help``, ``assay NAME``
    for a plugin's NAME); ``assay --version`` and assay's own commands load no plugin for the parser."""
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    if command is None:
        return "--version" not in argv
    return command not in (_subparsers(parser).choices if _subparsers(parser) else {})


@warns_about_plugin_problems
def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = argv[0] if argv and not argv[0].startswith("-") else None
    try:
        parser = None
        if command is not None and command not in OWN_COMMANDS:
            # 'assay NAME ...' for a plugin's NAME: a plugin that declares NAME is loaded alone, and the parser
            # holds that command only (assay's own are not needed); otherwise as below
            parser = _top_parser()
            if not add_declared_command(_subparsers(parser), command):
                parser = None
        if parser is None:
            parser = build_parser(plugin_commands=False)
            if _needs_plugin_commands(parser, argv):  # 'assay', 'assay --help', 'assay NAME': every plugin
                add_plugin_commands(_subparsers(parser), builtin=set(_subparsers(parser).choices))
    except KeyboardInterrupt:  # the user's Ctrl-C while the plugins load
        print("assay: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if command is not None and command not in _subparsers(parser).choices:
        missing = missing_command_message(command)  # a first-party plugin's command, its plugin absent
        if missing is not None:
            print(missing, file=sys.stderr)
            return EXIT_USAGE
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the sub-command's parser: "assay COMMAND: error: unrecognized arguments"
        (_subparser(parser, args.command) or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    if getattr(args, "json", False):  # stdout holds only the JSON: the EVALUATOR lines stay on stderr
        return run_command(args, _subparser(parser, args.command), argv)
    with evaluator_lines_on_stdout():  # result lines beside the headers that announce them
        return run_command(args, _subparser(parser, args.command), argv)


def _subparsers(parser: argparse.ArgumentParser) -> Any:
    """The sub-commands action of ``parser`` (``argparse._SubParsersAction``)."""
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser | None:
    """The parser of one sub-command (its actions name the flags in error messages)."""
    action = _subparsers(parser)
    return action.choices.get(command) if action is not None else None
