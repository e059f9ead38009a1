"""``assay compare A.json B.json --metric NAME``: paired significance test of two saved evaluations.

The verdict follows the interval it quotes: one system is called better only when the
paired-bootstrap interval of ``b - a`` at the stated level excludes zero; otherwise the
output says there is no significant difference at that level. Both p-values are printed
(approximate randomization first: it is the headline ``p_value``). ``--json`` adds
``p_value``, ``significant``, ``better`` (``"a"``, ``"b"`` or null) and ``verdict``.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from assay.cli._args import check_metrics, flag, non_negative_int, positive_int, probability, read_text
from assay.errors import InvalidParameterError

__all__ = ["better", "format_comparison", "load", "register", "run", "verdict"]


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
    p.add_argument("--metric", "-m", help="registered metric name with overrides (default: the only one in A)")
    p.add_argument("--score", help="which score of the metric (default: its main score)")
    p.add_argument("--n-resamples", type=positive_int, default=1000,
                   help="resamples and randomization rounds, >= 1 (default 1000)")
    p.add_argument("--confidence-level", type=probability, default=0.95, help="between 0 and 1 (default 0.95)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed, >= 0 (default 0)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON (with 'verdict')")
    p.set_defaults(func=run)


def load(path: Path, what: str) -> Any:
    """Results saved by ``assay evaluate --output``; a file of another shape is an error naming it."""
    from assay.metrics.results import FORMAT
    from assay.metrics.api import load_results

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


def better(c: Any) -> str | None:
    """``"a"`` or ``"b"`` (the better system) when the interval of ``b - a`` excludes 0, else None."""
    lo, hi = float(c.ci_low), float(c.ci_high)
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= 0.0 <= hi:
        return None
    return "b" if (lo > 0.0) == bool(c.higher_is_better) else "a"


def verdict(c: Any) -> str:
    """One sentence: which system is better, said only when the interval of ``b - a`` excludes 0."""
    level = f"{c.confidence_level:.0%}" if round(c.confidence_level * 100, 6).is_integer() \
        else f"{c.confidence_level:.2%}"
    interval = f"the {level} paired-bootstrap interval of b - a, [{c.ci_low:+.4g}, {c.ci_high:+.4g}]"
    if not (math.isfinite(c.ci_low) and math.isfinite(c.ci_high)):
        return f"undetermined on {c.score_name}: the interval of b - a is undefined (NaN)"
    winner = better(c)
    if winner is None:
        return f"no significant difference on {c.score_name} at the {level} level ({interval}, includes 0)"
    return f"{winner} is better on {c.score_name} ({interval}, excludes 0)"


def format_comparison(c: Any) -> str:
    """The comparison as text: scores, the difference with its interval, both p-values, the verdict."""
    lines = [
        f"{c.score_name} ({c.metric}), {c.n} paired instances",
        f"  a: {c.score_a:.4f}   b: {c.score_b:.4f}   b - a: {c.difference:+.4f} "
        f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}] ({c.confidence_level:.0%} paired bootstrap)",
        f"  p-value: {c.p_value_randomization:.4g} (approximate randomization), "
        f"{c.p_value_bootstrap:.4g} (paired bootstrap); {c.n_resamples} rounds, seed {c.seed}",
        f"  {verdict(c)}",
    ]
    lines += [f"  note: {n}" for n in c.notes]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import assay

    check_metrics(args)
    a, b = load(args.a, "A"), load(args.b, "B")
    try:
        c = assay.compare(a, b, metric=args.metric, score=args.score, n_resamples=args.n_resamples,
                          confidence_level=args.confidence_level, seed=args.seed)
    except KeyError as exc:
        if args.score is None or exc.args != (args.score,):
            raise
        raise InvalidParameterError(f"{flag(args, 'score')} {args.score!r}: the metric compared reports no score "
                                    "of that name (see the score names 'assay evaluate' prints).") from None
    if args.json:
        d = c.to_dict()
        d.setdefault("p_value", c.p_value_randomization)
        d.setdefault("significant", better(c) is not None)
        d.setdefault("better", better(c))
        d.setdefault("verdict", verdict(c))
        print(json.dumps(d, indent=2))
    else:
        print(format_comparison(c))
    return 0
