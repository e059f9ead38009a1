"""``assay plot RESULTS --along DIM -o FILE.png``: bar plots of 'assay run' results along one dimension."""

from __future__ import annotations

import argparse
from pathlib import Path

from assay.cli._args import add_json, add_metric, add_output, check_output
from assay.cli._output import print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "plot", help="bar plots of 'assay run' results aggregated along one dimension",
        description="One bar chart per task metric: each bar is the mean (error bar: std) over "
        "the rows with one value of DIM of the difference to the column mean, sign-flipped for "
        "lower-is-better metrics, so higher is always better (ValUES' bar plots). Needs "
        "matplotlib (pip install 'assay[plot]').",
    )
    p.add_argument("results", type=Path, help="output folder of 'assay run'")
    p.add_argument("--along", required=True, metavar="DIM",
                   help="pred_model, unc_type, aggregation or another iterated parameter")
    add_output(p, "file", "the image (PNG, PDF, SVG ..., by the extension)", required=True)
    p.add_argument("--tasks", nargs="+", metavar="TASK", help="only these tasks (default: all)")
    add_metric(p, "only this metric's charts (default: all)", old="--metrics")
    p.add_argument("--config", type=Path, default=None,
                   help="YAML with filter / df_naming / coloring / ordering (ValUES' plot config keys)")
    p.add_argument("--allow-missing", action="store_true",
                   help="leave out cells whose result files are missing instead of failing")
    add_json(p, "the image file written (an object with 'output')")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from assay.configfile import load_yaml
    from assay.report import bar_plot, check_plot_options, load_results

    check_output(args)
    loaded = load_yaml(args.config, what="plot config") if args.config else None
    table = load_results(args.results, tasks=args.tasks, allow_missing=args.allow_missing)
    if args.metric:
        table = table.select_metrics(args.metric)
    options = check_plot_options(loaded or {}, table, file=str(args.config)) if args.config else {}
    path = bar_plot(table, args.along, args.output, **options)
    if args.json:
        print_json({"output": str(path)})
    else:
        print(f"wrote {path}")
    return 0
