"""``assay demo``: the main job. Generates data, evaluates it end to end, prints the results.

The demo is a sequence of sections, each a module under :mod:`assay.demo` with
``run(out_dir: pathlib.Path) -> None``; later features add sections.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo", help="run the end-to-end demo on generated data (what `make run` does)",
        description="Generate a synthetic treebank and system output (deterministically), "
        "evaluate it sequentially and in parallel, and print the results. Files are "
        "written under --output.",
    )
    p.add_argument("--output", "-o", type=Path, default=Path("demo-output"),
                   help="folder for the generated data and results (default: demo-output)")
    p.add_argument("--section", action="append", dest="sections", metavar="NAME",
                   help="run only this section (repeatable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from assay.cli._args import flag
    from assay.demo import SECTIONS, run_demo
    from assay.errors import InvalidParameterError

    unknown = [s for s in args.sections or () if s not in SECTIONS]
    if unknown:
        raise InvalidParameterError(f"--section: Unknown demo section {unknown[0]!r}; "
                                    f"choose from {', '.join(SECTIONS)}.")
    if args.output.exists() and not args.output.is_dir():
        raise InvalidParameterError(f"{flag(args, 'output')} {args.output}: exists and is not a directory; "
                                    "give a folder for the demo's files.")
    return run_demo(args.output, sections=args.sections)
