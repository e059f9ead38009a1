"""``assay demo``: the main job. Generates data, evaluates it end to end, prints the results.

The demo is a sequence of sections, each a module under :mod:`assay.demo` with
``run(out_dir: pathlib.Path) -> None``; later features add sections.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from assay.cli._args import add_json, add_output, check_output, flag
from assay.cli._output import add_verbose, json_mode, print_json, spark_log


def register(subparsers: argparse._SubParsersAction) -> None:
    from assay.demo import DESCRIPTIONS  # a plain dict: importing it loads no section

    width = max(len(name) for name in DESCRIPTIONS)
    p = subparsers.add_parser(
        "demo", help="run the end-to-end demo on generated data (what `make run` does)",
        description=textwrap.fill("Generate data deterministically, evaluate it end to end, and print the results, "
                                  "section by section (all of them unless --section picks some). Files are "
                                  "written under -o/--output.", width=78),
        epilog="sections, in the order they run:\n" + "\n".join(
            f"  {name:<{width}}  {text}" for name, text in DESCRIPTIONS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_output(p, "folder", "the generated data and results (one subfolder per section)", default="demo-output")
    p.add_argument("--section", action="append", dest="sections", metavar="NAME",
                   help="run only this section (repeatable; the sections are listed below)")
    add_verbose(p)
    add_json(p, "what ran (each section's name, seconds and folder)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time

    from assay.demo import SECTIONS, run_demo
    from assay.errors import InvalidParameterError

    unknown = [s for s in args.sections or () if s not in SECTIONS]
    if unknown:
        raise InvalidParameterError(f"{flag(args, 'sections')} {unknown[0]!r}: unknown demo section; "
                                    f"choose from {', '.join(SECTIONS)} (see 'assay demo --help').")
    out = args.output if args.output is not None else Path("demo-output")
    check_output(args)
    if not args.json:
        with spark_log(args):
            return run_demo(out, sections=args.sections)
    ran = []
    with json_mode(args), spark_log(args):  # the demo's narrative goes to stderr; stdout holds the JSON
        for name in args.sections or SECTIONS:
            start = time.perf_counter()
            run_demo(out, sections=[name])
            ran.append({"section": name, "seconds": round(time.perf_counter() - start, 3), "folder": str(out / name)})
    print_json({"output": str(out), "sections": ran})
    return 0
