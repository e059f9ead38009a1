"""``assay evaluate``: score a predictions file against a references file with registered metrics.

Input files are JSON Lines (one JSON value per line) or CSV (a header row; by
extension ``.csv``). A JSON Lines line is the prediction (or the references) itself, or
an object with a ``prediction`` / ``references`` field; a references entry that is not a
list is taken as the only reference. CSV cells are read as JSON where they parse
(``3``, ``[1, 2]``, ``"x"``), else as text; the column is ``prediction`` /
``references`` (or ``reference``), or the only column.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

from assay.errors import InvalidParameterError

__all__ = ["read_column", "register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "evaluate", help="score predictions against references with registered metrics, with confidence intervals",
        description="Score a predictions file against a references file (JSON Lines or CSV) with one or more "
        "registered metrics (name[key=value, ...]; 'assay list metrics' shows them), with bootstrap confidence "
        "intervals. Prints a table; --json prints the global scores as JSON; --output saves the full results "
        "(instances included) for 'assay compare'.",
    )
    p.add_argument("--metric", "-m", action="append", required=True, metavar="NAME",
                   help="a registered metric, with overrides: 'f1[average=macro]' (repeatable)")
    p.add_argument("--predictions", "-p", type=Path, required=True, help="predictions file (.jsonl or .csv)")
    p.add_argument("--references", "-r", type=Path, help="references file (.jsonl or .csv)")
    p.add_argument("--task-data", type=Path, help="per-instance task data file (JSON Lines of objects)")
    p.add_argument("--n-resamples", type=int, default=1000, help="bootstrap resamples (0: no intervals; default 1000)")
    p.add_argument("--confidence-level", type=float, default=0.95, help="default 0.95")
    p.add_argument("--ci-method", choices=("percentile", "bca", "wilson"), default="percentile")
    p.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    p.add_argument("--output", "-o", type=Path, help="write the full results as JSON here")
    p.add_argument("--json", action="store_true", help="print the global scores as JSON instead of a table")
    p.set_defaults(func=run)


def _cell(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def read_column(path: Path, field: str) -> list[Any]:
    """The ``field`` values of a JSON Lines or CSV file (see the module docstring)."""
    alternatives = {"prediction": ("prediction", "predictions"), "references": ("references", "reference"),
                    "task_data": ("task_data",)}[field]
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"No such file: {str(path)!r}") from None
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        if not rows:
            return []
        cols = list(rows[0])
        col = next((c for c in alternatives if c in cols), cols[0] if len(cols) == 1 else None)
        if col is None:
            raise InvalidParameterError(f"{path}: no column named {' or '.join(alternatives)} among {cols}.")
        return [_cell(r[col]) for r in rows]
    values = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            v = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(f"{path}:{lineno}: invalid JSON ({exc.msg}).") from None
        if isinstance(v, dict) and field != "task_data":
            key = next((k for k in alternatives if k in v), None)
            if key is None:
                raise InvalidParameterError(f"{path}:{lineno}: object without a {' or '.join(alternatives)} field.")
            v = v[key]
        values.append(v)
    return values


def run(args: argparse.Namespace) -> int:
    import assay

    preds = read_column(args.predictions, "prediction")
    refs = None
    if args.references is not None:
        refs = [r if isinstance(r, list) else [r] for r in read_column(args.references, "references")]
        if len(refs) != len(preds):
            raise InvalidParameterError(
                f"--references has {len(refs)} entries but --predictions has {len(preds)}; they must pair up."
            )
    task_data = read_column(args.task_data, "task_data") if args.task_data is not None else None
    res = assay.evaluate(preds, refs, metrics=args.metric, task_data=task_data, n_resamples=args.n_resamples,
                         confidence_level=args.confidence_level, ci_method=args.ci_method, seed=args.seed)
    if args.output is not None:
        res.save(args.output)
    if args.json:
        from assay.metrics.results import to_jsonable

        print(json.dumps(to_jsonable({"global": res.global_scores, "info": res.info}), indent=2))
    else:
        print(res.summary())
        for name, note in res.info["ci_notes"].items():
            print(f"note: {name}: {note}")
        if args.output is not None:
            print(f"results written to {args.output}")
    sys.stdout.flush()
    return 0
