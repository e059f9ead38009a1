"""``assay plot RESULTS --along DIM -o FILE.png``: bar plots of 'assay run' results along one dimension.

``assay plot plot_config.yaml [KEY=VALUE ...] [-o FOLDER]``: ValUES' bar plots from a ValUES
plot config (one PNG per metric, split and dimension, under ``save_path`` or ``-o``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from assay.cli.commands import add_json, add_metric, add_output, check_output, flag, print_json

#: the command's name, ``assay plot``
NAME = "plot"
#: the line of ``assay --help``
HELP = "bar plots of 'assay run' results (or of a ValUES plot config) aggregated along one dimension"
#: the text of ``assay plot --help``
DESCRIPTION = ("One bar chart per task metric: each bar is the mean (error bar: std) over "
               "the rows with one value of DIM of the difference to the column mean, sign-flipped for "
               "lower-is-better metrics, so higher is always better (ValUES' bar plots). Given a ValUES "
               "plot config (plot_config.yaml), draws ValUES' figures: one per metric, split and "
               "dimension, with one group of bars per dataset. Needs matplotlib (installed with assay-segmentation).")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``assay plot``."""
    p.add_argument("results", type=Path, help="output folder of 'assay run', or a ValUES plot config (*.yaml)")
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="with a ValUES plot config: override a key of the composed config "
                        "(datasets.LIDC.base_path=/data/lidc, save_path=figures, hydra.searchpath=[file:///...])")
    p.add_argument("--along", metavar="DIM", action="append",
                   help="pred_model, unc_type, aggregation or another iterated parameter (required with a results "
                        "folder; with a ValUES config: only these dimensions, repeatable)")
    add_output(p, "file", "the image (PNG, PDF, SVG ..., by the extension); with a ValUES plot config a FOLDER "
               "(default: its save_path)")
    p.add_argument("--tasks", nargs="+", metavar="TASK", help="only these tasks (default: all)")
    add_metric(p, "only this metric's charts (default: all)", old="--metrics")
    p.add_argument("--config", type=Path, default=None,
                   help="YAML with filter / df_naming / coloring / ordering (ValUES' plot config keys)")
    p.add_argument("--rows", choices=("distinct", "table"), default="distinct",
                   help="ValUES plot config: a bar averages every distinct value of the metric once (default) or "
                        "every table row, as ValUES' script does (a per-model metric then counts once per row)")
    p.add_argument("--datasets", nargs="+", metavar="NAME",
                   help="ValUES plot config: only these of its datasets (LIDC); the others are not read, and the "
                        "values they declare stay valid in hatches, coloring, ordering and df_naming")
    p.add_argument("--allow-missing", action="store_true",
                   help="leave out cells whose result files are missing instead of failing")
    add_json(p, "the image file(s) written (an object with 'output'; with a ValUES config also 'figures')")


def _values(args: argparse.Namespace) -> int:
    from assay.errors import InvalidParameterError
    from assay_segmentation.report.values_config import load_plot_config
    from assay_segmentation.report.values_plots import plot_values

    for name in ("config", "tasks"):
        if getattr(args, name):
            raise InvalidParameterError(f"--{name}: not used with a ValUES plot config ({args.results}); its "
                                        "ds_tasks, df_naming, coloring, hatches and ordering say what to draw")
    if args.output is not None and args.output.exists() and not args.output.is_dir():
        raise InvalidParameterError(f"{flag(args, 'output')} {args.output}: exists and is not a directory; with a "
                                    "ValUES plot config -o/--output takes a FOLDER.")
    config = load_plot_config(args.results, args.overrides)
    results = plot_values(config, save_path=args.output, rows=args.rows, dimensions=args.along,
                          metrics=args.metric, datasets=args.datasets, allow_missing=args.allow_missing)
    drawn = [r for r in results if r.path is not None]
    if args.json:
        print_json({"output": str(args.output or config.save_path), "figures": [
            {"metric": r.metric, "dimension": r.dimension, "path": str(r.path) if r.path else None,
             "skipped": r.skipped or None} for r in results]})
        return 0
    for r in results:
        print(f"wrote {r.path}" if r.path else f"not drawn: {r.metric} by {r.dimension}: {r.skipped}")
    if not drawn:
        raise InvalidParameterError(f"{args.results}: nothing to draw (every figure was left out; see above)")
    return 0


def run(args: argparse.Namespace) -> int:
    from assay.configfile import load_yaml
    from assay.errors import InvalidParameterError
    from assay_segmentation.commands.table import is_values_config
    from assay_segmentation.report import bar_plot, check_plot_options, load_results

    if is_values_config(args.results):
        return _values(args)
    if args.datasets:
        raise InvalidParameterError(f"--datasets: applies to a ValUES plot config (*.yaml); {args.results} is a "
                                    "results folder")
    if args.overrides:
        raise InvalidParameterError(f"{args.overrides[0]!r}: KEY=VALUE overrides apply to a ValUES plot config "
                                    f"(*.yaml); {args.results} is a results folder")
    if not args.along:
        raise InvalidParameterError("--along: required with a results folder (the dimension the bars group by: "
                                    "pred_model, unc_type, aggregation or another iterated parameter)")
    if len(args.along) > 1:
        raise InvalidParameterError(f"--along: one dimension with a results folder, got {len(args.along)}")
    if args.output is None:
        raise InvalidParameterError("-o/--output: required with a results folder (the image file to write)")
    check_output(args)
    loaded = load_yaml(args.config, what="plot config") if args.config else None
    table = load_results(args.results, tasks=args.tasks, allow_missing=args.allow_missing)
    if args.metric:
        table = table.select_metrics(args.metric)
    options = check_plot_options(loaded or {}, table, file=str(args.config)) if args.config else {}
    path = bar_plot(table, args.along[0], args.output, **options)
    if args.json:
        print_json({"output": str(path)})
    else:
        print(f"wrote {path}")
    return 0
