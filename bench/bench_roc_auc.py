"""ROC AUC on a million scores: assay's sort-and-merge kernel against the peers.

    python bench/bench_roc_auc.py [--n 1000000] [--repeats 7] [--ties] [--json PATH]

Data: ``--n`` scores, about 30% positives, positives shifted by 0.5 standard deviations
(continuous scores, practically no ties); ``--ties`` rounds the scores to one decimal, so
almost every score is tied (assay's slower path, a second merge).

Contenders (median of ``--repeats`` runs each, taken in turns so that load spikes
hit every contender alike; inputs prepared outside the timing):

``assay roc_auc``          ``assay_classic.functional.roc_auc(labels, scores)``
``assay metric reduce``    ``RocAuc().reduce(pairs)``: what ``compute()`` and every bootstrap resample run
``sklearn``                ``sklearn.metrics.roc_auc_score(labels, scores)``
``torchmetrics``           ``torchmetrics.functional.binary_auroc(scores, labels)`` on CPU tensors
                           (skipped when torch / torchmetrics are not installed)
``np.argsort``             one ``np.argsort(scores)``: the floor a sort-based AUC is measured against

Targets (issue 3): assay >= 2.5x faster than sklearn, faster than torchmetrics, within
1.15x of one ``np.argsort``. Every contender's value is checked against sklearn's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def timed_round_robin(contenders: dict[str, Callable[[], Any]], repeats: int) -> dict[str, tuple[float, Any]]:
    """Median seconds and last value of each contender, run in turns so that load spikes hit all alike."""
    values = {name: fn() for name, fn in contenders.items()}  # warm-up (imports, allocator)
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            start = time.perf_counter()
            values[name] = fn()
            times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(times[name]), values[name]) for name in contenders}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--ties", action="store_true", help="round the scores to one decimal (heavy ties)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--uniform", action="store_true", help="uniform instead of normal scores")
    parser.add_argument("--memory", action="store_true",
                        help="also the tracemalloc peak of assay's roc_auc in a fresh interpreter (issue 17)")
    args = parser.parse_args(argv)

    from sklearn.metrics import roc_auc_score

    from assay_classic.functional import roc_auc
    from assay_classic.ranking import RocAuc

    rng = np.random.default_rng(0)
    labels = rng.random(args.n) < 0.3
    scores = (rng.random(args.n) if args.uniform else rng.normal(size=args.n)) + 0.5 * labels
    if args.ties:
        scores = np.round(scores, 1)
    pairs = np.column_stack([scores, labels.astype(np.float64)])
    metric = RocAuc()

    contenders: dict[str, Callable[[], Any]] = {
        "assay roc_auc": lambda: roc_auc(labels, scores),
        "assay metric reduce": lambda: metric.reduce(pairs)["roc_auc"],
        "sklearn": lambda: roc_auc_score(labels, scores),
    }
    try:
        import torch
        from torchmetrics.functional.classification import binary_auroc

        t_scores, t_labels = torch.from_numpy(scores), torch.from_numpy(labels.astype(np.int64))
        contenders["torchmetrics"] = lambda: float(binary_auroc(t_scores, t_labels))
        torch_note = f"torch {torch.__version__}, {torch.get_num_threads()} threads"
    except ImportError as exc:
        torch_note = f"torchmetrics skipped ({exc})"
    contenders["np.argsort"] = lambda: np.argsort(scores)

    print(f"roc_auc on {args.n:,} scores{' (rounded: heavy ties)' if args.ties else ''}, median of "
          f"{args.repeats}; python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs; "
          f"{torch_note}", flush=True)
    reference = roc_auc_score(labels, scores)
    rows: dict[str, dict[str, Any]] = {}
    for name, (seconds, value) in timed_round_robin(contenders, args.repeats).items():
        row: dict[str, Any] = {"seconds": seconds}
        if name != "np.argsort":
            row["value"] = float(value)
            row["abs_diff_vs_sklearn"] = abs(float(value) - reference)
        rows[name] = row
        extra = f"  AUC {value:.12f}" if name != "np.argsort" else ""
        print(f"  {name:22s} {seconds * 1e3:9.1f} ms{extra}", flush=True)

    ours = rows["assay roc_auc"]["seconds"]
    ratios = {
        "sklearn / assay (target >= 2.5)": rows["sklearn"]["seconds"] / ours,
        "assay / np.argsort (target <= 1.15)": ours / rows["np.argsort"]["seconds"],
    }
    if "torchmetrics" in rows:
        ratios["torchmetrics / assay (target > 1)"] = rows["torchmetrics"]["seconds"] / ours
    print("ratios:")
    for k, v in ratios.items():
        print(f"  {k:38s} {v:6.2f}")
    # torchmetrics accumulates in float32 (differences near 1e-8 are its rounding); assay must match to 1e-9
    bad = [k for k, r in rows.items() if k.startswith("assay") and r["abs_diff_vs_sklearn"] > 1e-9]
    if bad:
        print(f"VALUE MISMATCH against sklearn: {bad}")
    memory = None
    if args.memory:
        import subprocess

        probe = ("import sys, tracemalloc, numpy as np\nfrom assay_classic.functional import roc_auc\n"
                 "n = int(sys.argv[1]); rng = np.random.default_rng(0); y = (rng.random(n) < 0.3).astype(np.int64)\n"
                 "s = (rng.random(n) if sys.argv[2] == 'u' else rng.normal(size=n)) + 0.5 * y\n"
                 "roc_auc(y[:10], s[:10]); tracemalloc.start(); roc_auc(y, s)\n"
                 "print(tracemalloc.get_traced_memory()[1], s.nbytes + y.nbytes)")
        out = subprocess.run([sys.executable, "-c", probe, str(args.n), "u" if args.uniform else "n"],
                             capture_output=True, text=True, check=True).stdout.split()
        memory = {"peak_bytes": int(out[0]), "input_bytes": int(out[1])}
        print(f"memory: peak {memory['peak_bytes'] / 1e6:.0f} MB beyond the input of {memory['input_bytes'] / 1e6:.0f} "
              f"MB (scores + int64 labels): {memory['peak_bytes'] / memory['input_bytes']:.2f}x (target <= 3x)")
    if args.json:
        args.json.write_text(json.dumps({"n": args.n, "ties": args.ties, "rows": rows, "ratios": ratios,
                                         "memory": memory}, indent=2))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
