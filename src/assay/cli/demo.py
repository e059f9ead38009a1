"""``assay demo``: the main job. Generates data, evaluates it end to end, prints the results.

The demo is a sequence of sections registered through the ``assay_register_demo_sections``
hook (:mod:`assay.demo`), each with ``run(out_dir: pathlib.Path) -> None``: ``metrics`` is
assay's own, the others come from the first-party plugins.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from assay.cli._args import add_json, add_output, check_output, flag
from assay.cli._output import add_verbose, json_mode, print_json, spark_log


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo", help="run the end-to-end demo on generated data (what `make run` does)",
        description=textwrap.fill("Generate data deterministically, evaluate it end to end, and print the results, "
                                  "section by section (all of them unless --section picks some). Files are "
                                  "written under -o/--output.", width=78),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_output(p, "folder", "the generated data and results (one subfolder per section)", default="demo-output")
    p.add_argument("--section", action="append", dest="sections", metavar="NAME",
                   help="run only this section (repeatable; the sections are listed below)")
    add_verbose(p)
    add_json(p, "what ran (each section's name, seconds and folder)")
    p.set_defaults(func=run)
    format_help = p.format_help

    def with_sections() -> str:  # the sections come from the plugins: loaded only for 'assay demo --help'
        p.epilog = _epilog()
        return format_help()

    p.format_help = with_sections  # type: ignore[method-assign]


def _epilog() -> str:
    """The registered sections, one line each, in the order they run."""
    from assay.demo import sections

    try:
        descriptions = {name: s.title for name, s in sections().items()}
    except Exception as exc:  # noqa: BLE001 - 'assay demo --help' must work with a broken plugin
        return f"the sections cannot be listed: {type(exc).__name__}: {' '.join(str(exc).split())}"
    if not descriptions:
        return "no section is registered: are assay's plugins installed? (assay plugins)"
    width = max(len(name) for name in descriptions)
    return "sections, in the order they run:\n" + "\n".join(
        f"  {name:<{width}}  {text}" for name, text in descriptions.items())


def run(args: argparse.Namespace) -> int:
    import time

    from assay.demo import run_demo, sections
    from assay.errors import InvalidParameterError

    registered = sections()
    unknown = [s for s in args.sections or () if s not in registered]
    if unknown:
        raise InvalidParameterError(f"{flag(args, 'sections')} {unknown[0]!r}: unknown demo section; "
                                    f"choose from {', '.join(registered)} (see 'assay demo --help').")
    out = args.output if args.output is not None else Path("demo-output")
    check_output(args)
    if not args.json:
        with spark_log(args):
            return run_demo(out, sections=args.sections)
    ran = []
    with json_mode(args), spark_log(args):  # the demo's narrative goes to stderr; stdout holds the JSON
        for name in args.sections or registered:
            start = time.perf_counter()
            run_demo(out, sections=[name])
            ran.append({"section": name, "seconds": round(time.perf_counter() - start, 3), "folder": str(out / name)})
    print_json({"output": str(out), "sections": ran})
    return 0
