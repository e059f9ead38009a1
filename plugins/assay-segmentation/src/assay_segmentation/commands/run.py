"""``assay run CONFIG.yaml [KEY=VALUE ...] [-o FOLDER] [--allow-import] [--json]``: run an experiment config.

``KEY=VALUE`` arguments are Hydra overrides (``base_path=/data/toy``, ``+new=1``,
``tasks=[threshold,aggregation,ood_detection]``). A ValUES config runs on its experiment
tree and writes ValUES' result files there (or under ``-o FOLDER``). The summary line (or, with
``--json``, the summary as JSON) goes to stdout; the progress
lines (each file written) go to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from assay.cli.commands import add_json, add_output, check_output, print_json

#: the command's name, ``assay run``
NAME = "run"
#: the line of ``assay --help``
HELP = "run the downstream tasks of an experiment config (ValUES style)"
#: the text of ``assay run --help``
DESCRIPTION = ("Run every task of an experiment config for every experiment version "
               "(prediction models x iterated parameters such as seeds) and write the nested JSON "
               "results plus a manifest for 'assay table' and 'assay plot'. See docs/downstream.md.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``assay run``."""
    p.add_argument("config", type=Path, help="experiment config (YAML): assay's own or ValUES' eval_config_*.yaml")
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="Hydra overrides of config keys, e.g. base_path=/data/toy")
    p.add_argument("--tasks", default=None, metavar="NAME,NAME",
                   help="run these tasks instead of the config's 'tasks' (comma-separated keys of task_params; "
                   "Hydra cannot override 'tasks' where a tasks/ config folder exists, as in ValUES' configs)")
    p.add_argument("--allow-import", action="store_true",
                   help="let _target_ import a dotted path no plugin registers (runs that module's code)")
    add_output(p, "folder", "the results and the manifest",
               default="output_path of the config, else 'results' beside it")
    p.add_argument("--executor", default=None,
                   help="executor spec, e.g. 'processes[workers=4]' (default: executor of the config, else serial)")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress lines on stderr (the summary line on stdout stays)")
    add_json(p, "the summary (versions, tasks, files written, seconds)")


def run(args: argparse.Namespace) -> int:
    from assay_segmentation.downstream import run_experiments

    check_output(args)
    with contextlib.redirect_stdout(sys.stderr):  # the runner's "wrote FILE" lines are progress: stderr
        summary = run_experiments(args.config, output=args.output, executor=args.executor, verbose=not args.quiet,
                                  overrides=args.overrides, allow_import=args.allow_import,
                                  tasks=[t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None)
    if args.json:
        print_json({"output": str(summary.output_dir), "versions": summary.versions, "tasks": list(summary.tasks),
                    "images": summary.images, "files": [str(f) for f in summary.files],
                    "seconds": summary.seconds})
        return 0
    print(f"assay run: {summary.versions} versions x {len(summary.tasks)} tasks ({', '.join(summary.tasks)}), "
          f"{summary.images} image evaluations, {len(summary.files)} files in {summary.output_dir} "
          f"({summary.seconds:.1f} s)")
    return 0
