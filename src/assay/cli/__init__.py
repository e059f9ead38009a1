"""The ``assay`` command (also ``python -m assay``).

Each sub-command lives in its own module under :mod:`assay.cli` with a
``register(subparsers)`` function that adds its parser and sets ``func`` (called with
the parsed arguments, returning the exit code). Sub-command modules import heavy
libraries inside ``func``, so ``assay --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from assay import __version__
from assay.errors import AssayError
from assay.plugins import warns_about_plugin_problems  # one stderr line when plugins failed or clashed

__all__ = ["build_parser", "main"]

#: sub-command modules, in the order ``assay --help`` lists them
COMMANDS: tuple[str, ...] = (
    "assay.cli.demo",
    "assay.cli.parse_eval",
    "assay.cli.plugins",
    "assay.cli.ue",
    "assay.cli.evaluate", "assay.cli.compare",
    "assay.cli.run", "assay.cli.table", "assay.cli.plot",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="assay",
        description="assay: plugin-based evaluation. Sharded evaluation with exact tallies, "
        "metrics with confidence intervals, uncertainty estimation and downstream tasks.",
        epilog="Run 'assay COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"assay {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMANDS:
        importlib.import_module(module_name).register(subparsers)
    return parser


@warns_about_plugin_problems
def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("assay: interrupted", file=sys.stderr)
        return 130
    except (AssayError, FileNotFoundError) as exc:
        print(f"assay {args.command}: error: {exc}", file=sys.stderr)
        return 1
