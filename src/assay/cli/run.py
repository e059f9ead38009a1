"""``assay run CONFIG.yaml [--output DIR]``: run every downstream task of an experiment config."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "run", help="run the downstream tasks of an experiment config (ValUES style)",
        description="Run every task of an experiment config for every experiment version "
        "(prediction models x iterated parameters such as seeds) and write the nested JSON "
        "results plus a manifest for 'assay table' and 'assay plot'. See docs/downstream.md.",
    )
    p.add_argument("config", type=Path, help="experiment config (YAML)")
    p.add_argument("--output", "-o", type=Path, default=None,
                   help="results folder (default: output_path of the config, else 'results' beside it)")
    p.add_argument("--executor", default=None,
                   help="executor spec, e.g. 'processes[workers=4]' (default: executor of the config, else serial)")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the summary line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from assay.downstream import run_experiments

    summary = run_experiments(args.config, output=args.output, executor=args.executor, verbose=not args.quiet)
    print(f"assay run: {summary.versions} versions x {len(summary.tasks)} tasks ({', '.join(summary.tasks)}), "
          f"{summary.images} image evaluations, {len(summary.files)} files in {summary.output_dir} "
          f"({summary.seconds:.1f} s)")
    return 0
