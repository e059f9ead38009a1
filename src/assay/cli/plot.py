"""``assay plot RESULTS --along DIM -o FILE.png``: bar plots of 'assay run' results along one dimension."""

from __future__ import annotations

import argparse
from pathlib import Path


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
    p.add_argument("--output", "-o", type=Path, required=True, help="image file (PNG, PDF, SVG ...)")
    p.add_argument("--tasks", nargs="+", metavar="TASK", help="only these tasks (default: all)")
    p.add_argument("--metrics", nargs="+", metavar="METRIC", help="only these metrics (default: all)")
    p.add_argument("--config", type=Path, default=None,
                   help="YAML with filter / df_naming / coloring / ordering (ValUES' plot config keys)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import yaml

    from assay.errors import InvalidParameterError
    from assay.report import bar_plot, load_results

    options: dict = {}
    if args.config:
        loaded = yaml.safe_load(args.config.read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, dict):
            raise InvalidParameterError(f"{args.config}: expected a mapping with filter / df_naming / coloring / "
                                        f"ordering, got {type(loaded).__name__}")
        unknown = set(loaded) - {"filter", "df_naming", "coloring", "ordering"}
        if unknown:
            raise InvalidParameterError(f"{args.config}: unknown keys {sorted(unknown)}; expected filter, df_naming, "
                                        "coloring, ordering")
        options = loaded
    table = load_results(args.results, tasks=args.tasks)
    if args.metrics:
        table = table.select(c for c in table.columns if c.metric in args.metrics)
    path = bar_plot(table, args.along, args.output, **options)
    print(f"wrote {path}")
    return 0
