"""``assay compare A.json B.json --metric NAME``: paired significance test of two saved evaluations."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare", help="paired bootstrap and approximate randomization test between two saved evaluations",
        description="Compare two results files written by 'assay evaluate --output' on the same instances: the "
        "difference B - A of a metric's score with its paired-bootstrap interval, and p-values from the paired "
        "bootstrap and approximate randomization (both +1 corrected). The metric is recomputed from the saved "
        "predictions when needed, so any registered metric can be compared.",
    )
    p.add_argument("a", type=Path, help="results of the baseline system (JSON)")
    p.add_argument("b", type=Path, help="results of the other system (JSON)")
    p.add_argument("--metric", "-m", help="registered metric name with overrides (default: the only one in A)")
    p.add_argument("--score", help="which score of the metric (default: its main score)")
    p.add_argument("--n-resamples", type=int, default=1000, help="resamples and randomization rounds (default 1000)")
    p.add_argument("--confidence-level", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import assay
    from assay.metrics.api import load_results

    a, b = load_results(args.a), load_results(args.b)
    c = assay.compare(a, b, metric=args.metric, score=args.score, n_resamples=args.n_resamples,
                      confidence_level=args.confidence_level, seed=args.seed)
    print(json.dumps(c.to_dict(), indent=2) if args.json else str(c))
    return 0
