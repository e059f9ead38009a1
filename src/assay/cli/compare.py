"""``assay compare A.json B.json --metric NAME``: paired significance test of two saved evaluations.

Prints :meth:`assay.metrics.significance.Comparison.summary`: the verdict follows the
interval it quotes (one system is called better only when the paired-bootstrap interval of
``b - a`` at the stated level excludes zero; otherwise "no significant difference") and
quotes that interval's own p-value (``p_value``, below ``1 - level`` exactly when the
interval excludes zero); the randomization and shifted-bootstrap p-values are printed as
second tests. ``--json`` prints ``Comparison.to_dict()`` (with ``p_value``,
``significant``, ``better`` and ``verdict``). A file that is not a results file written by
``assay evaluate --output`` is an error naming it.
"""

from __future__ import annotations

import argparse
import json
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
    positive_int,
    probability,
    read_text,
)
from assay.errors import InvalidParameterError, SignatureMismatchError
from assay.jsonio import dumps, write_json_atomic

__all__ = ["load", "register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare", help="paired bootstrap and approximate randomization test between two saved evaluations",
        description="Compare two results files written by 'assay evaluate --output' on the same instances: the "
        "difference B - A of a metric's score with its paired-bootstrap interval, and p-values from the paired "
        "bootstrap and approximate randomization (both +1 corrected). The metric is recomputed from the saved "
        "predictions when needed, so any registered metric can be compared. One system is called better only "
        "when the interval at --confidence-level excludes 0; otherwise: no significant difference.",
    )
    p.add_argument("a", type=Path, metavar="A", help="results of the baseline system (JSON)")
    p.add_argument("b", type=Path, metavar="B", help="results of the other system (JSON)")
    add_metric(p, "the registered metric to compare, with overrides (default: the only one in A; one per run)")
    p.add_argument("--score", help="which score of the metric (default: its main score)")
    p.add_argument("--n-resamples", type=positive_int, default=1000,
                   help="resamples and randomization rounds, >= 1 (default 1000)")
    p.add_argument("--confidence-level", type=probability, default=0.95, help="between 0 and 1 (default 0.95)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed, >= 0 (default 0)")
    add_output(p, "file", "the comparison as JSON (what --json prints)")
    add_json(p, "the comparison (with 'verdict')")
    p.add_argument("--allow-different-signatures", action="store_true",
                   help="compare even when the two results were computed differently (their signatures differ in "
                   "metric options, conventions, resampling or seed); the differences are printed as notes")
    p.set_defaults(func=run)


def load(path: Path, what: str) -> Any:
    """Results saved by ``assay evaluate --output``; a file of another shape is an error naming it."""
    from assay.metrics.api import load_results
    from assay.metrics.results import FORMAT

    text = read_text(path, what)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(f"{what} {path}: not a results JSON file ({exc.msg} at line {exc.lineno}, "
                                    f"column {exc.colno}).") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = f"a JSON {type(data).__name__}" if not isinstance(data, dict) else "an object without it"
        raise InvalidParameterError(f"{what} {path}: not an assay results file (expected an object with "
                                    f"\"format\": {FORMAT!r}; got {got}).")
    for key, kind in (("global", dict), ("instances", list)):
        if not isinstance(data.get(key), kind):
            raise InvalidParameterError(f"{what} {path}: the results file needs {key!r} as a JSON "
                                        f"{'object' if kind is dict else 'array'}; got {data.get(key)!r:.60}.")
    for i, inst in enumerate(data["instances"]):
        if not isinstance(inst, dict) or not isinstance(inst.get("score"), dict) or "instance" not in inst["score"]:
            raise InvalidParameterError(f"{what} {path}: instances[{i}] is not a saved instance "
                                        "(an object with score.instance).")
    try:
        return load_results(path)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, InvalidParameterError):
            raise
        raise InvalidParameterError(f"{what} {path}: not a readable assay results file ({exc!r}).") from None


def run(args: argparse.Namespace) -> int:
    import assay

    check_metrics(args)
    check_output(args)
    if args.metric and len(args.metric) > 1:
        raise InvalidParameterError(f"{flag(args, 'metric')}: compare tests one metric per run; got "
                                    f"{len(args.metric)} ({', '.join(args.metric)}).")
    a, b = load(args.a, "A"), load(args.b, "B")
    try:
        c = assay.compare(a, b, metric=args.metric[0] if args.metric else None, score=args.score,
                          n_resamples=args.n_resamples, confidence_level=args.confidence_level, seed=args.seed,
                          allow_signature_mismatch=args.allow_different_signatures)
    except SignatureMismatchError as exc:  # provenance: name the flag, not the Python parameter
        raise SignatureMismatchError(str(exc).replace("allow_signature_mismatch=True", "--allow-different-signatures"),
                                     differences=exc.differences) from None
    except KeyError as exc:
        if args.score is None or exc.args != (args.score,):
            raise
        raise InvalidParameterError(f"{flag(args, 'score')} {args.score!r}: the metric compared reports no score "
                                    "of that name (see the score names 'assay evaluate' prints).") from None
    if args.output is not None:
        write_json_atomic(args.output, c.to_dict())
    print(dumps(c.to_dict()) if args.json else c.summary())
    if args.output is not None and not args.json:
        print(f"comparison written to {args.output}")
    return 0
