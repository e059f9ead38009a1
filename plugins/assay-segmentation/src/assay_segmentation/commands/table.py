"""``assay table RESULTS --format markdown|latex|html``: the results of 'assay run' as a table.

``assay table table_config_lidc.yaml [KEY=VALUE ...]``: a ValUES table config (composed with
Hydra, overrides as on ValUES' command line) on a ValUES experiment tree, coloured as ValUES
colours it (see docs/values-tables.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from assay.cli.commands import (
    add_json,
    add_metric,
    add_output,
    check_output,
    non_negative_int,
    print_json,
    probability,
)

#: the command's name, ``assay table``
NAME = "table"
#: the line of ``assay --help``
HELP = "render 'assay run' results as a Markdown, LaTeX or HTML table"
#: the text of ``assay table --help``
DESCRIPTION = ("Collect the results of 'assay run' (or of a ValUES experiment tree, given a "
               "ValUES table config such as table_config_lidc.yaml) into one table: rows are prediction "
               "model x uncertainty type x aggregation, columns are task metrics per split, cells are "
               "mean ± std over seeds, with a bootstrap interval over the test images where the result "
               "files have per-image values. LaTeX and HTML colour each column from best to worst "
               "(assay: green to red; ValUES: light yellow to dark red), following whether higher or "
               "lower is better.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``assay table``."""
    p.add_argument("results", type=Path, help="output folder of 'assay run', or a ValUES table config (*.yaml)")
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="with a ValUES table config: override a key of the composed config, as on ValUES' "
                        "command line (base_path=/data/lidc; hydra.searchpath=[file:///...] for defaults "
                        "outside the config folder)")
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
    p.add_argument("--palette", choices=("assay", "values"), default=None,
                   help="colours of LaTeX / HTML: assay (green best, red worst) or values (ValUES' YlOrRd: "
                        "light yellow best, dark red worst); default: values for a ValUES config, else assay")
    p.add_argument("--n-resamples", type=non_negative_int, default=1000,
                   help="bootstrap resamples of the test images for the intervals and the bold marks of metrics "
                        "with per-image values (default: 1000; 0: none)")
    p.add_argument("--confidence-level", type=probability, default=0.95,
                   help="of the intervals and the paired comparisons (default: 0.95)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the bootstrap (default: 0)")
    add_output(p, "file", "the table", default="print it on stdout")
    add_json(p, "the table's rows, columns and cells (mean, std and the values over --over)")


def is_values_config(path: Path) -> bool:
    """A ValUES config is given as a YAML file; results of 'assay run' as a folder."""
    return path.suffix in (".yaml", ".yml") and not path.is_dir()


def _values_table(args: argparse.Namespace) -> Any:
    from assay.errors import InvalidParameterError
    from assay_segmentation.report.values_config import load_table_config
    from assay_segmentation.report.values_results import load_values_results

    if args.over != "seed":
        raise InvalidParameterError("--over: a ValUES table averages over 'seed' (as ValUES' table does); "
                                    f"got {args.over!r}")
    config = load_table_config(args.results, args.overrides)
    metrics = config.metrics
    if args.tasks:
        from assay.configfile import close_match

        known = list(dict.fromkeys(m.task for m in metrics))
        for task in args.tasks:
            if task not in known:
                raise InvalidParameterError(f"--tasks: {task!r} is not a task of {args.results} "
                                            f"({', '.join(known)}).{close_match(task, known)}")
        metrics = tuple(m for m in metrics if m.task in args.tasks)
    return load_values_results(config, metrics=metrics, allow_missing=args.allow_missing)


def run(args: argparse.Namespace) -> int:
    from assay.errors import InvalidParameterError
    from assay.jsonio import write_text_atomic
    from assay_segmentation.report import load_results, render_table
    from assay_segmentation.report.intervals import bootstrap_table

    if args.digits < 0:
        raise InvalidParameterError(f"--digits: expected a number of decimals >= 0, got {args.digits}")
    check_output(args)
    values = is_values_config(args.results)
    if values:
        table = _values_table(args)
    else:
        if args.overrides:
            raise InvalidParameterError(f"{args.overrides[0]!r}: KEY=VALUE overrides apply to a ValUES table config "
                                        f"(*.yaml); {args.results} is a results folder")
        table = load_results(args.results, over=args.over, tasks=args.tasks, allow_missing=args.allow_missing)
    if args.metric:
        table = table.select_metrics(args.metric)
    intervals = None
    if args.n_resamples:
        intervals = bootstrap_table(table, n_resamples=args.n_resamples, confidence_level=args.confidence_level,
                                    seed=args.seed)
    if args.json:
        print_json(table_to_dict(table, over=args.over, intervals=intervals))
        return 0
    options: dict = {"digits": args.digits, "scale": args.scale, "intervals": intervals,
                     "palette": args.palette or ("values" if values else "assay")}
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


def table_to_dict(table: Any, *, over: str, intervals: Any = None) -> dict[str, Any]:
    """A :class:`~assay_segmentation.report.ResultTable` as plain data: the row dimensions, the columns, one cell
    per pair.

    Values are as stored (not scaled); a cell whose result files are partly missing has
    ``"missing": [k, n]`` (k of n files) and no values. With ``intervals``
    (:class:`assay_segmentation.report.intervals.TableIntervals`), a cell with per-image values has
    ``"interval": [low, high]`` and, where it took part in the paired comparison with the
    best of its column, ``"not_worse_than_best": true | false``.
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
            if intervals is not None and intervals.interval(row, column) is not None:
                cell["interval"] = list(intervals.interval(row, column))
                if row in intervals.judged.get(column, ()):
                    cell["not_worse_than_best"] = row in intervals.not_worse[column]
            cells.append(cell)
    out: dict[str, Any] = {"over": over, "index": list(table.index_names), "columns": columns, "cells": cells}
    if intervals is not None:
        out["intervals"] = {"n_resamples": intervals.n_resamples, "confidence_level": intervals.confidence_level,
                            "seed": intervals.seed}
    if table.notes:
        out["notes"] = list(table.notes)
    return out
