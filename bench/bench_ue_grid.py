"""The full UE grid: 17 estimators x the shared UE metrics on 100,000 stored outputs, assay vs LM-Polygraph.

    python bench/bench_ue_grid.py [--n 100000] [--estimators 17] [--lm-polygraph DIR] [--quick] [--json PATH]

Stored outputs: ``--n`` examples with a continuous quality in [0, 1] and ``--estimators``
uncertainty columns of decreasing informativeness (seeded). Both sides score every
(estimator, UE metric) pair of the metrics they share: PRR with its normalisation, RCC-AUC,
Spearman, Kendall and the reversed-pairs proportion (RPP).

``assay``         ``UEManager(records, estimators=[17 column estimators], gen_metrics=[quality],
                  ue_metrics=[...])()``: the whole manager, from the records on.
``LM-Polygraph``  LM-Polygraph's own UE metric classes and ``get_random_scores`` (normalised PRR:
                  the mean PRR of 1,000 random permutations), run in the loop of its
                  ``UEManager.eval_ue``. LM-Polygraph is not a dependency: give ``--lm-polygraph DIR``,
                  a folder holding the unpacked ``lm_polygraph`` package (``pip download lm-polygraph
                  --no-deps`` and unzip the wheel). Only its ``ue_metrics`` subpackage is imported
                  (its package ``__init__`` would import a model stack).

One round each (the LM-Polygraph side takes minutes at 1e5); every shared score is compared.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import types
from pathlib import Path
from typing import Any

import numpy as np


def stored_outputs(n: int, k: int) -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(0)
    quality = rng.beta(2, 2, n)
    us = [-(quality * (1 - i / k)) + rng.normal(scale=0.5, size=n) for i in range(k)]
    return quality, us


def lm_polygraph_metrics(folder: Path) -> tuple[dict[str, Any], Any]:
    """LM-Polygraph's UE metric objects and ``get_random_scores``, imported from an unpacked wheel."""
    for name, path in (("lm_polygraph", folder / "lm_polygraph"),
                       ("lm_polygraph.ue_metrics", folder / "lm_polygraph" / "ue_metrics")):
        pkg = types.ModuleType(name)  # a namespace without running the package __init__ (a model stack)
        pkg.__path__ = [str(path)]
        sys.modules[name] = pkg
    from lm_polygraph.ue_metrics import (  # type: ignore[import-not-found]
        kendalltau,
        pred_rej_area,
        rev_pairs_prop,
        risk_cov_curve,
        spearmanr,
    )
    from lm_polygraph.ue_metrics.ue_metric import get_random_scores  # type: ignore[import-not-found]

    return {"prr": pred_rej_area.PredictionRejectionArea(), "rcc_auc": risk_cov_curve.RiskCoverageCurveAUC(),
            "spearman": spearmanr.SpearmanRankCorrelation(), "kendall": kendalltau.KendallTauCorrelation(),
            "rpp": rev_pairs_prop.ReversedPairsProportion()}, get_random_scores


def run_lm_polygraph(metrics: dict[str, Any], get_random_scores: Any, quality: np.ndarray,
                     us: list[np.ndarray]) -> dict[tuple[str, str], float]:
    """The loop of LM-Polygraph's ``UEManager.eval_ue`` (one generation metric, sequence level)."""
    out: dict[tuple[str, str], float] = {}
    for name, ue_metric in metrics.items():
        if name == "prr":
            oracle = ue_metric(-quality, quality)
            random = get_random_scores(ue_metric, quality)
        for i, u in enumerate(us):
            value = ue_metric(u, quality)
            out[(f"u{i}", name)] = value
            if name == "prr":
                out[(f"u{i}", "prr_normalized")] = (value - random) / (oracle - random) if oracle != random else value
    return out


def run_assay(quality: np.ndarray, us: list[np.ndarray]) -> dict[tuple[str, str], float]:
    from assay.uncertainty import Estimator, GenerationMetric, UEManager

    class Column(Estimator):
        level = "sequence"

        def __init__(self, name: str) -> None:
            self.name = name
            self.dependencies = (name,)

        def __call__(self, stats: dict[str, Any]) -> np.ndarray:
            return np.asarray(stats[self.name], dtype=np.float64)

    class Quality(GenerationMetric):
        name, level, dependencies = "quality", "sequence", ("quality",)

        def __call__(self, stats: dict[str, Any]) -> np.ndarray:
            return np.asarray(stats["quality"], dtype=np.float64)

    columns = {"quality": quality, **{f"u{i}": u for i, u in enumerate(us)}}
    man = UEManager(columns, estimators=[Column(f"u{i}") for i in range(len(us))], gen_metrics=[Quality()],
                    ue_metrics=["prr", "rcc_auc", "spearman", "kendall", "rpp"])
    man()
    return {(k[1], k[3]): v for k, v in man.metrics.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--estimators", type=int, default=17)
    parser.add_argument("--lm-polygraph", type=Path, default=None, metavar="DIR")
    parser.add_argument("--quick", action="store_true", help="n = 5,000: a smoke run")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    n = 5_000 if args.quick else args.n
    quality, us = stored_outputs(n, args.estimators)

    run_assay(quality[:200], [u[:200] for u in us])  # warm-up (plugin loading)
    t = time.perf_counter()
    ours = run_assay(quality, us)
    t_assay = time.perf_counter() - t
    print(f"UE grid: {args.estimators} estimators x 5 UE metrics (+ normalised PRR), n = {n:,}")
    print(f"  assay UEManager            {t_assay:8.2f} s")
    report: dict[str, Any] = {"n": n, "estimators": args.estimators, "assay_seconds": t_assay}
    if args.lm_polygraph is None:
        print("  LM-Polygraph               skipped (give --lm-polygraph DIR, see the docstring)")
    else:
        metrics, get_random_scores = lm_polygraph_metrics(args.lm_polygraph)
        t = time.perf_counter()
        theirs = run_lm_polygraph(metrics, get_random_scores, quality, us)
        t_lmp = time.perf_counter() - t
        print(f"  LM-Polygraph eval_ue loop  {t_lmp:8.2f} s   ({t_lmp / t_assay:.1f}x assay's time)")
        worst = {}
        for key, value in theirs.items():
            if key[1] == "prr_normalized":
                continue  # a Monte Carlo estimate of the random baseline (assay's is closed-form): compared below
            worst[key[1]] = max(worst.get(key[1], 0.0), abs(value - ours[key]))
        norm = max(abs(theirs[(e, "prr_normalized")] - ours[(e, "prr_normalized")]) for e, _ in theirs)
        print("  largest |assay - LM-Polygraph| per metric: "
              + ", ".join(f"{k} {v:.1e}" for k, v in worst.items()) + f", prr_normalized {norm:.1e} "
              "(LM-Polygraph's random baseline is a 1,000-permutation estimate)")
        report.update({"lm_polygraph_seconds": t_lmp, "max_abs_diff": worst, "prr_normalized_diff": norm})
        if any(math.isnan(v) or v > 1e-9 for v in worst.values()):
            print("VALUE MISMATCH")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
