"""``assay evaluate``: score a predictions file against a references file with registered metrics.

Input files are JSON Lines (one JSON value per line) or CSV (a header row; by
extension ``.csv``). A JSON Lines line is the prediction (or the references) itself, or
an object with a ``prediction`` / ``references`` field; a references entry that is not a
list is taken as the only reference. CSV cells are text (``true``, ``1`` and ``1.0`` are
three different labels) unless ``--csv-cells json`` asks to read each cell as JSON where
it parses (``3``, ``[1, 2]``, ``"x"``; then ``true == 1 == 1.0`` as in Python); the
column is ``prediction`` / ``references`` (or ``reference``), or the only column.
Text CSV cells against typed JSON Lines values would never compare equal, so that
mixture is an error rather than a score of zero.

Metrics that use references need ``--references``: without it the command stops with
an error instead of scoring every prediction against nothing.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

from assay.cli._args import (
    add_json,
    add_metric,
    add_output,
    check_metrics,
    check_output,
    flag,
    non_negative_int,
    probability,
    read_text,
)
from assay.errors import InvalidParameterError
from assay.jsonio import dumps, parse_jsonl

__all__ = ["read_column", "register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "evaluate", help="score predictions against references with registered metrics, with confidence intervals",
        description="Score a predictions file against a references file (JSON Lines or CSV) with one or more "
        "registered metrics (name[key=value, ...]; 'assay list metrics' shows them), with bootstrap confidence "
        "intervals. Prints a table; --json prints the global scores as JSON; --output saves the full results "
        "(instances included) for 'assay compare'.",
    )
    add_metric(p, "a registered metric, with overrides: 'f1[average=macro]'", required=True)
    p.add_argument("--predictions", "-p", type=Path, required=True, help="predictions file (.jsonl or .csv)")
    p.add_argument("--references", "-r", type=Path,
                   help="references file (.jsonl or .csv); required unless every metric is reference-free")
    p.add_argument("--task-data", type=Path, help="per-instance task data file (JSON Lines of objects)")
    p.add_argument("--csv-cells", choices=("text", "json"), default="text",
                   help="how CSV cells are read: 'text' (default; 'true', '1' and '1.0' are different labels) or "
                   "'json' (each cell parsed as JSON where it parses: numbers, booleans, lists; then true == 1 == 1.0)")
    p.add_argument("--n-resamples", type=non_negative_int, default=1000,
                   help="bootstrap resamples (0: no intervals; default 1000)")
    p.add_argument("--confidence-level", type=probability, default=0.95, help="between 0 and 1 (default 0.95)")
    p.add_argument("--ci-method", choices=("percentile", "bca", "wilson"), default="percentile")
    p.add_argument("--seed", type=non_negative_int, default=0, help="resampling seed, >= 0 (default 0)")
    add_output(p, "file", "the full results as JSON (instances included, for 'assay compare')")
    add_json(p, "the global scores and run info (instead of a table)")
    p.set_defaults(func=run)


def _cell(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def read_column(path: Path, field: str, *, cells: str = "text", what: str | None = None) -> list[Any]:
    """The ``field`` values of a JSON Lines or CSV file (see the module docstring).

    ``cells`` says how CSV cells are read: ``"text"`` keeps them as strings, ``"json"``
    parses each as JSON where it parses. ``what`` (the flag) prefixes error messages.
    """
    alternatives = {"prediction": ("prediction", "predictions"), "references": ("references", "reference"),
                    "task_data": ("task_data",)}[field]
    if cells not in ("text", "json"):
        raise InvalidParameterError(f"'cells' must be 'text' or 'json'; got {cells!r}.")
    text = read_text(path, what or "file")
    if path.suffix.lower() == ".csv":
        try:
            rows = list(csv.DictReader(io.StringIO(text)))
        except csv.Error as exc:
            raise InvalidParameterError(f"{path}: not a valid CSV file ({exc}).") from None
        if not rows:
            return []
        cols = list(rows[0])
        col = next((c for c in alternatives if c in cols), cols[0] if len(cols) == 1 else None)
        if col is None:
            raise InvalidParameterError(f"{path}: no column named {' or '.join(alternatives)} among {cols}.")
        for lineno, r in enumerate(rows, start=2):
            if r[col] is None:
                raise InvalidParameterError(f"{path}:{lineno}: the row has no {col!r} cell.")
        return [_cell(r[col]) if cells == "json" else r[col] for r in rows]
    values = []
    for lineno, v in _numbered_values(text, path):
        if isinstance(v, dict) and field != "task_data":
            key = next((k for k in alternatives if k in v), None)
            if key is None:
                raise InvalidParameterError(f"{path}:{lineno}: object without a {' or '.join(alternatives)} field.")
            v = v[key]
        values.append(v)
    return values


def _numbered_values(text: str, path: Path) -> list[tuple[int, Any]]:
    """The JSON Lines values of ``text`` (:func:`assay.jsonio.parse_jsonl`) with their line numbers."""
    values = parse_jsonl(text, source=str(path))
    linenos = [i for i, line in enumerate(text.split("\n"), start=1) if line.strip()]  # parse_jsonl's lines
    return list(zip(linenos, values))


def _is_csv(path: Path) -> bool:
    return path.suffix.lower() == ".csv"


def _check_same_typing(args: argparse.Namespace, preds: list[Any], refs: list[Any]) -> None:
    """Text CSV cells never equal typed JSON values (``"1" != 1``): refuse the mixture."""
    pred_path, ref_path = args.predictions, args.references
    if _is_csv(pred_path) == _is_csv(ref_path):
        return
    p_flag, r_flag = flag(args, "predictions"), flag(args, "references")
    csv_flag, csv_path, json_flag, json_path, values = (
        (p_flag, pred_path, r_flag, ref_path, refs) if _is_csv(pred_path)
        else (r_flag, ref_path, p_flag, pred_path, preds))
    for i, v in enumerate(values):
        for item in v if isinstance(v, list) else [v]:
            if item is not None and not isinstance(item, str):
                raise InvalidParameterError(
                    f"{csv_flag} {csv_path}: CSV cells are read as text, but {json_flag} {json_path} holds "
                    f"{type(item).__name__} values (entry {i}: {item!r}), which never equal text. "
                    "Pass --csv-cells json to read CSV cells as JSON, or give both files in the same format.")


def _require_no_references(specs: list[str]) -> None:
    """Raise, naming the flag, unless every metric scores without references (``needs_references``)."""
    from assay.metrics.catalog import resolve_metrics

    for spec, metric in zip(specs, resolve_metrics(specs)):
        if getattr(metric, "needs_references", True):
            raise InvalidParameterError(
                f"-r/--references: metric {spec!r} compares predictions with references, and none were given; "
                "pass the references file with -r/--references.")


def run(args: argparse.Namespace) -> int:
    import assay

    check_metrics(args)
    check_output(args)
    cells = getattr(args, "csv_cells", "text")
    preds = read_column(args.predictions, "prediction", cells=cells, what=flag(args, "predictions"))
    refs = None
    if args.references is None:
        _require_no_references(args.metric)
    else:
        raw = read_column(args.references, "references", cells=cells, what=flag(args, "references"))
        if len(raw) != len(preds):
            raise InvalidParameterError(
                f"--references has {len(raw)} entries but --predictions has {len(preds)}; they must pair up."
            )
        if cells == "text":
            _check_same_typing(args, preds, raw)
        refs = [r if isinstance(r, list) else [r] for r in raw]
    task_data = (read_column(args.task_data, "task_data", cells=cells, what=flag(args, "task_data"))
                 if args.task_data is not None else None)
    res = assay.evaluate(preds, refs, metrics=args.metric, task_data=task_data, n_resamples=args.n_resamples,
                         confidence_level=args.confidence_level, ci_method=args.ci_method, seed=args.seed)
    if args.output is not None:
        res.save(args.output)
    if args.json:
        print(dumps({"global": res.global_scores, "info": res.info}))
    else:
        print(res.summary())
        for name, note in res.info["ci_notes"].items():
            print(f"note: {name}: {note}")
        if args.output is not None:
            print(f"results written to {args.output}")
    sys.stdout.flush()
    return 0
