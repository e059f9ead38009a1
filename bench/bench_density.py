"""LM-Polygraph's density-based estimators: assay's against LM-Polygraph 0.7.0's own classes, same statistics.

    python bench/bench_density.py [--n-train 2000] [--dim 256] [--n 1000] [--rounds 3] [--quick] [--json PATH]

Each side fits on ``train_embeddings_decoder`` (and ``background_train_embeddings_decoder``,
``train_greedy_log_likelihoods``) and scores ``embeddings_decoder``: one call of a fresh
estimator on the statistics dictionary, as LM-Polygraph's manager makes it (fit + score), then a
second call on the fitted object (score only). Medians over ``--rounds`` interleaved rounds; the
values of the two sides are compared (relative difference printed). RDE fits a 100-component
kernel PCA and a MinCovDet in 100 dimensions on both sides (scikit-learn, the same calls), so it
runs on ``--rde-train`` examples and one round.

LM-Polygraph is not a dependency: ``make setup`` installs it with ``--no-deps`` for the tests; its
estimator modules are imported with bare parent packages (its package ``__init__`` would import
a model stack). torch computes LM-Polygraph's Mahalanobis distances (on the CPU here).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import statistics
import sys
import time
import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from assay_uncertainty import estimators_density as ours


def _root() -> Path:
    spec = importlib.util.find_spec("lm_polygraph")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("lm-polygraph==0.7.0 is not installed (make setup installs it with --no-deps)")
    return Path(next(iter(spec.submodule_search_locations)))


def lm_polygraph(dotted: str, root: Path) -> Any:
    for name, folder in (("lm_polygraph", root), ("lm_polygraph.estimators", root / "estimators"),
                         ("lm_polygraph.utils", root / "utils")):
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(folder)]
            sys.modules[name] = pkg
    return importlib.import_module(f"lm_polygraph.{dotted}")


def statistics_for(n_train: int, dim: int, n: int, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    mix = np.diag(rng.uniform(0.5, 2, dim)) + 0.3 * rng.normal(size=(dim, dim)) / np.sqrt(dim)
    return {
        "train_embeddings_decoder": (rng.normal(size=(n_train, dim)) @ mix).astype(np.float32),
        "background_train_embeddings_decoder": (rng.normal(size=(n_train, dim)) * 2).astype(np.float32),
        "embeddings_decoder": (rng.normal(size=(n, dim)) @ mix * 1.3).astype(np.float32),
        "train_greedy_log_likelihoods": [-rng.random(int(k)) * 3 for k in rng.integers(1, 30, n_train)],
        "greedy_log_likelihoods": [-rng.random(int(k)) * 3 for k in rng.integers(1, 30, n)],
    }


def timed(est: Any, stats: dict[str, Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = est(stats)
    return time.perf_counter() - t, out


def run(name: str, make_ours: Any, make_theirs: Any, stats: dict[str, Any], rounds: int) -> dict[str, Any]:
    fit = {"assay": [], "LM-Polygraph": []}
    score = {"assay": [], "LM-Polygraph": []}
    values = {}
    for _ in range(rounds):
        for side, make in (("assay", make_ours), ("LM-Polygraph", make_theirs)):
            est = make()
            t_fit, _ = timed(est, stats)
            t_score, out = timed(est, stats)
            fit[side].append(t_fit)
            score[side].append(t_score)
            values[side] = np.asarray(out, dtype=np.float64)
    a, b = values["assay"], values["LM-Polygraph"]
    rel = float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12)))
    row = {"estimator": name, "rounds": rounds, "relative_difference": rel}
    for label, table in (("fit_and_score", fit), ("score", score)):
        med = {side: statistics.median(ts) for side, ts in table.items()}
        row[label] = {**med, "ratio": med["LM-Polygraph"] / med["assay"]}
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-train", type=int, default=2000)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--rde-train", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run, not figures")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.quick:
        args.n_train, args.dim, args.n, args.rde_train, args.rounds = 300, 16, 100, 60, 1
    warnings.simplefilter("ignore")  # LM-Polygraph's float32 casts and scikit-learn's rank warnings
    root = _root()
    md = lm_polygraph("estimators.mahalanobis_distance", root)
    rmd = lm_polygraph("estimators.relative_mahalanobis_distance", root)
    rde, ppl_md = lm_polygraph("estimators.rde", root), lm_polygraph("estimators.ppl_md", root)
    stats = statistics_for(args.n_train, args.dim, args.n)
    rows = [
        run("mahalanobis_distance", ours.MahalanobisDistanceSeq, md.MahalanobisDistanceSeq, stats, args.rounds),
        run("relative_mahalanobis_distance", ours.RelativeMahalanobisDistanceSeq,
            rmd.RelativeMahalanobisDistanceSeq, stats, args.rounds),
        run("ppl_md", ours.PPLMDSeq, ppl_md.PPLMDSeq, stats, args.rounds),
        run("rde", ours.RDESeq, rde.RDESeq, statistics_for(args.rde_train, min(args.dim, 64), args.n), 1),
    ]
    print(f"density estimators: {args.n_train} training embeddings of dimension {args.dim}, {args.n} scored "
          f"(RDE: {args.rde_train} training, dimension {min(args.dim, 64)}); medians of {args.rounds} rounds")
    print(f"{'estimator':32} {'fit+score assay':>16} {'LM-Polygraph':>13} {'ratio':>7} {'score assay':>12} "
          f"{'LM-Polygraph':>13} {'ratio':>7} {'max rel diff':>13}")
    for r in rows:
        f, s = r["fit_and_score"], r["score"]
        print(f"{r['estimator']:32} {f['assay']:15.4f}s {f['LM-Polygraph']:12.4f}s {f['ratio']:6.2f}x "
              f"{s['assay']:11.4f}s {s['LM-Polygraph']:12.4f}s {s['ratio']:6.2f}x {r['relative_difference']:13.2e}")
    if args.json:
        args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json)}, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
