"""``assay report PATH... -o report.html``: one self-contained interactive HTML page of assay results.

Each PATH is a results or comparison JSON file (``assay evaluate -o``, ``assay compare -o``),
a ``parse-eval --json`` file, a saved UEManager folder or an ``assay run`` output folder;
several PATHs make one page that compares them (:mod:`assay_report.sources`). A bad input
is one error line naming its path (exit status 2), and no page is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from assay.cli.commands import add_json, add_output, check_output, non_negative_int, positive_int, print_json
from assay_report.page import write
from assay_report.sources import build_report

__all__ = ["DESCRIPTION", "EPILOG", "HELP", "add_arguments", "run"]

HELP = "one self-contained interactive HTML page (tables, curves, comparisons) of assay results"
DESCRIPTION = (
    "Build one HTML file from assay results: an 'assay evaluate' or 'assay compare' result JSON, a "
    "'parse-eval --json' file, a saved UEManager folder or an 'assay run' output folder. Several PATHs make one "
    "report that compares them (results of one kind must hold the same metrics). The page needs no network: its "
    "data, script, style and charting library (Vega) are inlined. Tables show each value with its interval, mark "
    "the best of each column and those not significantly worse, sort by clicking a header and filter by typing; "
    "uncertainty runs get risk-coverage, rejection and reliability charts.")
EPILOG = "example: assay report results-a.json results-b.json -o report.html"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a result file or folder (see above)")
    add_output(parser, "file", "the HTML page", default="report.html")
    parser.add_argument("--title", help="the page's title (default: what it holds)")
    parser.add_argument("--n-resamples", type=positive_int, default=None,
                        help="resamples of the paired tests that mark the columns, >= 1 (default: a UEManager's "
                        "own setting, 1000 for results files)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of those tests, >= 0 (default 0)")
    add_json(parser, "what was written (the page's path and size, and each input's kind)")


def run(args: argparse.Namespace) -> int:
    check_output(args)
    out = args.output if args.output is not None else Path("report.html")
    report = build_report(args.paths, title=args.title, n_resamples=args.n_resamples, seed=args.seed)
    path = write(report, out)
    size = path.stat().st_size
    if args.json:
        print_json({"output": str(path), "bytes": size,
                    "sources": [{"path": s.path, "kind": s.kind} for s in report.sources]})
    else:
        print(f"report written to {path} ({size / 1e6:.1f} MB; {len(report.sections)} tables and charts "
              f"from {len(report.sources)} input{'s' if len(report.sources) > 1 else ''})")
    return 0
