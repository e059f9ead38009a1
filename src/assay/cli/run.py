"""``assay run CONFIG.yaml [KEY=VALUE ...] [-o FOLDER] [--json]``: run every downstream task of an experiment config.

The summary line (or, with ``--json``, the summary as JSON) goes to stdout; the progress
lines (each file written) go to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from assay.cli._args import add_json, add_output, check_output
from assay.cli._output import print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "run", help="run the downstream tasks of an experiment config (ValUES style)",
        description="Run every task of an experiment config for every experiment version "
        "(prediction models x iterated parameters such as seeds) and write the nested JSON "
        "results plus a manifest for 'assay table' and 'assay plot'. See docs/downstream.md.",
    )
    p.add_argument("config", type=Path, help="experiment config (YAML)")
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="override a key of the composed config, e.g. base_path=/data/toy or "
                        "task_params.ood_detection.datasets=[id,ood] (values are YAML; +KEY=VALUE adds a key; "
                        "a relative base_path / output_path is relative to the current folder)")
    add_output(p, "folder", "the results and the manifest",
               default="output_path of the config, else 'results' beside it")
    p.add_argument("--executor", default=None,
                   help="executor spec, e.g. 'processes[workers=4]' (default: executor of the config, else serial)")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress lines on stderr (the summary line on stdout stays)")
    add_json(p, "the summary (versions, tasks, files written, seconds)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from assay.downstream import load_config, run_experiments

    check_output(args)
    config = load_config(args.config, args.overrides) if args.overrides else args.config
    with contextlib.redirect_stdout(sys.stderr):  # the runner's "wrote FILE" lines are progress: stderr
        summary = run_experiments(config, output=args.output, executor=args.executor, verbose=not args.quiet)
    if args.json:
        print_json({"output": str(summary.output_dir), "versions": summary.versions, "tasks": list(summary.tasks),
                    "images": summary.images, "files": [str(f) for f in summary.files],
                    "seconds": summary.seconds})
        return 0
    print(f"assay run: {summary.versions} versions x {len(summary.tasks)} tasks ({', '.join(summary.tasks)}), "
          f"{summary.images} image evaluations, {len(summary.files)} files in {summary.output_dir} "
          f"({summary.seconds:.1f} s)")
    return 0
