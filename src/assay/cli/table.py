"""``assay table RESULTS --format markdown|latex|html``: the results of 'assay run' as a table."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from assay.cli._args import add_json, add_metric, add_output, check_output, non_negative_int
from assay.cli._output import print_json


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
    add_metric(p, "only this metric's columns (default: all)", old="--metrics")
    p.add_argument("--over", default="seed", help="the parameter averaged over (default: seed)")
    p.add_argument("--digits", type=non_negative_int, default=2, help="decimals, >= 0 (default: 2)")
    p.add_argument("--scale", type=float, default=100.0, help="multiply values by this (default: 100)")
    p.add_argument("--allow-missing", action="store_true",
                   help="show cells whose result files are missing as 'n/a (k of n missing)' instead of failing")
    p.add_argument("--standalone", action="store_true",
                   help="LaTeX: a complete document that compiles on its own (HTML is always complete)")
    add_output(p, "file", "the table", default="print it on stdout")
    add_json(p, "the table's rows, columns and cells (mean, std and the values over --over)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from assay.errors import InvalidParameterError
    from assay.jsonio import write_text_atomic
    from assay.report import load_results, render_table

    if args.digits < 0:
        raise InvalidParameterError(f"--digits: expected a number of decimals >= 0, got {args.digits}")
    check_output(args)
    table = load_results(args.results, over=args.over, tasks=args.tasks, allow_missing=args.allow_missing)
    if args.metric:
        table = table.select_metrics(args.metric)
    if args.json:
        print_json(table_to_dict(table, over=args.over))
        return 0
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


def table_to_dict(table: Any, *, over: str) -> dict[str, Any]:
    """A :class:`assay.report.ResultTable` as plain data: the row dimensions, the columns, one cell per pair.

    Values are as stored (not scaled); a cell whose result files are partly missing has
    ``"missing": [k, n]`` (k of n files) and no values.
    """
    columns = [{"task": c.task, "metric": c.metric, "split": c.split, "higher_is_better": c.higher_is_better}
               for c in table.columns]
    cells = []
    for row in table.rows:
        for i, column in enumerate(table.columns):
            cell: dict[str, Any] = {"row": dict(zip(table.index_names, row)), "column": i,
                                    "mean": table.mean(row, column), "std": table.std(row, column),
                                    "values": list(table.cell(row, column))}
            if (row, column) in table.missing:
                cell["missing"] = list(table.missing[(row, column)])
            cells.append(cell)
    return {"over": over, "index": list(table.index_names), "columns": columns, "cells": cells}
