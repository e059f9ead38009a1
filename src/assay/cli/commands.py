"""What a plugin's ``assay`` sub-command uses: the shared flags and output conventions.

A plugin adds a command with the ``assay_register_commands`` hook
(:func:`assay.plugins.hookspecs.assay_register_commands`); its ``add_arguments(parser)``
and ``run(args) -> int`` use these helpers so that it behaves like assay's own commands
(``docs/cli.md``): ``-o/--output`` checked before anything runs, ``--json`` leaving only
the JSON on stdout, ``-v`` for more log lines, and errors reported as ``assay NAME: error:
...`` with exit status 2 (raise :class:`assay.errors.AssayError`; a Python parameter named
in the message is replaced by the flag that set it)::

    from assay.cli.commands import add_json, add_output, check_output, print_json

    def add_arguments(parser):
        parser.add_argument("data", type=pathlib.Path)
        add_output(parser, "file", "the scores as JSON")
        add_json(parser, "the scores")

    def run(args):
        check_output(args)
        scores = {"n": len(args.data.read_text().splitlines())}
        if args.json:
            print_json(scores)
        else:
            print(f"n = {scores['n']}")
        return 0
"""

from __future__ import annotations

from assay.cli._args import (
                             add_json,
                             add_metric,
                             add_output,
                             check_output,
                             flag,
                             non_negative_int,
                             positive_int,
                             probability,
                             read_text,
)
from assay.cli._errors import EXIT_INTERNAL, EXIT_USAGE
from assay.cli._output import add_verbose, describe_executor, json_mode, print_json, spark_log

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_USAGE",
    "add_json",
    "add_metric",
    "add_output",
    "add_verbose",
    "check_output",
    "describe_executor",
    "flag",
    "json_mode",
    "non_negative_int",
    "positive_int",
    "print_json",
    "probability",
    "read_text",
    "spark_log",
]
