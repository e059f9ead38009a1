"""``assay table RESULTS --format markdown|latex|html``: the results of 'assay run' as a table."""

from __future__ import annotations

import argparse
from pathlib import Path

from assay.cli._args import non_negative_int


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "table", help="render 'assay run' results as a Markdown, LaTeX or HTML table",
        description="Collect the results of 'assay run' into one table: rows are prediction "
        "model x uncertainty type x aggregation, columns are task metrics per split, cells are "
        "mean ± std over seeds. LaTeX and HTML colour each column from best (green) to worst "
        "(red), following whether higher or lower is better.",
    )
    p.add_argument("results", type=Path, help="output folder of 'assay run'")
    p.add_argument("--format", "-f", choices=("markdown", "latex", "html"), default="markdown")
    p.add_argument("--tasks", nargs="+", metavar="TASK", help="only these tasks (default: all)")
    p.add_argument("--metrics", nargs="+", metavar="METRIC", help="only these metrics (default: all)")
    p.add_argument("--over", default="seed", help="the parameter averaged over (default: seed)")
    p.add_argument("--digits", type=non_negative_int, default=2, help="decimals, >= 0 (default: 2)")
    p.add_argument("--scale", type=float, default=100.0, help="multiply values by this (default: 100)")
    p.add_argument("--allow-missing", action="store_true",
                   help="show cells whose result files are missing as 'n/a (k of n missing)' instead of failing")
    p.add_argument("--standalone", action="store_true",
                   help="LaTeX: a complete document that compiles on its own (HTML is always complete)")
    p.add_argument("--output", "-o", type=Path, default=None, help="write to this file instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from assay.errors import InvalidParameterError
    from assay.report import load_results, render_table
    from assay.jsonio import write_text_atomic

    if args.digits < 0:
        raise InvalidParameterError(f"--digits: expected a number of decimals >= 0, got {args.digits}")
    table = load_results(args.results, over=args.over, tasks=args.tasks, allow_missing=args.allow_missing)
    if args.metrics:
        table = table.select_metrics(args.metrics)
    options: dict = {"digits": args.digits, "scale": args.scale}
    if args.format == "latex":
        options["standalone"] = args.standalone
    text = render_table(table, args.format, **options)
    if args.output:  # an OSError names the flag as typed (assay.cli._errors)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.output, text)
        print(f"wrote {args.output}")
    else:
        print(text, end="" if text.endswith("\n") else "\n")
    return 0
