"""The everyday call: ``assay.evaluate(predictions, references, metrics=["accuracy"])`` against its peers.

    python bench/bench_evaluate.py [--sizes 1e4 1e5 1e6] [--big] [--repeats 5] [--quick] [--json PATH]

Per size ``n`` (labels 0..4, about 20% correct), medians of ``--repeats`` interleaved rounds:

``sklearn lists``          ``sklearn.metrics.accuracy_score(refs, preds)`` on Python lists
``assay lists``            ``assay.evaluate(preds, refs, metrics=["accuracy"], n_resamples=0)``
``assay lists + CI``       the same with a 1,000-resample percentile interval
``torchmetrics tensors``   ``MulticlassAccuracy(num_classes=5, average="micro")`` on CPU tensors
``assay tensors``          ``assay.evaluate`` on the same tensors, no interval

Then macro-F1 with 1,000 resamples at n = 1e5 (10 labels), without and with ``labels=``, and
peak memory (tracemalloc, in a fresh interpreter each) of ``assay.evaluate`` on numpy arrays at
the largest size, with and without the interval, against the input arrays' bytes.

Targets (issue 17): accuracy at 1e5 lists within 2x sklearn (3x with the interval); at 1e7 with
the interval peak memory within 2x the input and time within 5x the no-interval call; macro-F1
without ``labels=`` within 1.2x of the ``labels=`` path.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def round_robin(contenders: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    for fn in contenders.values():  # warm-up
        fn()
    times: dict[str, list[float]] = {k: [] for k in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in times.items()}


MEMORY_PROBE = """
import sys, time, tracemalloc, numpy as np, assay
n, nr = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
p = rng.integers(0, 5, n); r = np.where(rng.random(n) < 0.2, p, rng.integers(0, 5, n))
assay.evaluate(p[:100], r[:100], metrics=["accuracy"], n_resamples=10)
tracemalloc.start()
t = time.perf_counter()
assay.evaluate(p, r, metrics=["accuracy"], n_resamples=nr)
el = time.perf_counter() - t
print(el, tracemalloc.get_traced_memory()[1], p.nbytes + r.nbytes)
"""


def memory(n: int, n_resamples: int) -> tuple[float, int, int]:
    out = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(n), str(n_resamples)], capture_output=True,
                         text=True, check=True).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])


def accuracy_round(n: int, repeats: int) -> dict[str, float]:
    """Medians of the accuracy contenders at size ``n`` (values checked against scikit-learn first)."""
    import torch
    from sklearn.metrics import accuracy_score
    from torchmetrics.classification import MulticlassAccuracy

    import assay

    rng = np.random.default_rng(n)
    p_arr = rng.integers(0, 5, n)
    r_arr = np.where(rng.random(n) < 0.2, p_arr, rng.integers(0, 5, n))
    preds, refs = p_arr.tolist(), r_arr.tolist()
    tp, tr = torch.from_numpy(p_arr), torch.from_numpy(r_arr)
    tm = MulticlassAccuracy(num_classes=5, average="micro")
    expected = accuracy_score(refs, preds)
    got = assay.evaluate(preds, refs, metrics=["accuracy"], n_resamples=0).global_scores["accuracy"]
    assert abs(got - expected) < 1e-12, (got, expected)
    return round_robin({
        "sklearn lists": lambda: accuracy_score(refs, preds),
        "assay lists": lambda: assay.evaluate(preds, refs, metrics=["accuracy"], n_resamples=0),
        "assay lists + CI": lambda: assay.evaluate(preds, refs, metrics=["accuracy"], n_resamples=1000),
        "torchmetrics tensors": lambda: tm(tp, tr),
        "assay tensors": lambda: assay.evaluate(tp, tr, metrics=["accuracy"], n_resamples=0),
    }, repeats)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e4, 1e5, 1e6])
    parser.add_argument("--big", action="store_true", help="add n = 1e7 (about a minute more)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="sizes 1e4 and 1e5, 3 repeats: a smoke run")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in ([1e4, 1e5] if args.quick else args.sizes)] + ([10_000_000] if args.big else [])
    repeats = 3 if args.quick else args.repeats

    import assay

    report: dict[str, Any] = {"accuracy": {}, "macro_f1": {}, "memory": {}}
    print(f"{'n':>10} {'sklearn':>9} {'assay':>9} {'ratio':>6} {'assay+CI':>9} {'ratio':>6} "
          f"{'torchm.':>9} {'assay t.':>9} {'ratio':>6}")
    for n in sizes:
        t = accuracy_round(n, repeats if n < 10_000_000 else 1)
        report["accuracy"][n] = t
        sk, tmt = t["sklearn lists"], t["torchmetrics tensors"]
        print(f"{n:>10} {sk:9.4f} {t['assay lists']:9.4f} {t['assay lists'] / sk:6.2f} "
              f"{t['assay lists + CI']:9.4f} {t['assay lists + CI'] / sk:6.2f} {tmt:9.4f} "
              f"{t['assay tensors']:9.4f} {t['assay tensors'] / tmt:6.2f}")

    n = 10_000 if args.quick else 100_000
    rng = np.random.default_rng(5)
    refs = rng.integers(0, 10, n).tolist()
    preds = np.where(rng.random(n) < 0.5, refs, rng.integers(0, 10, n)).tolist()
    labels = sorted(set(refs) | set(preds))
    t = round_robin({
        "macro-F1, labels discovered": lambda: assay.evaluate(preds, refs, metrics=["f1[average=macro]"],
                                                              n_resamples=1000),
        "macro-F1, labels=": lambda: assay.evaluate(preds, refs, metrics=[f"f1[average=macro, labels={labels}]"],
                                                    n_resamples=1000),
    }, repeats)
    report["macro_f1"] = t
    print(f"\nmacro-F1, 1,000 resamples, n = {n}: discovered {t['macro-F1, labels discovered']:.3f} s, labels= "
          f"{t['macro-F1, labels=']:.3f} s, ratio {t['macro-F1, labels discovered'] / t['macro-F1, labels=']:.2f}")

    big = max(sizes)
    base_t, base_peak, nbytes = memory(big, 0)
    ci_t, ci_peak, _ = memory(big, 1000)
    report["memory"] = {"n": big, "input_bytes": nbytes, "no_ci": [base_t, base_peak], "ci": [ci_t, ci_peak]}
    print(f"\nmemory at n = {big} (numpy input, {nbytes / 1e6:.0f} MB): no interval peak {base_peak / 1e6:.0f} MB "
          f"({base_peak / nbytes:.2f}x input); 1,000-resample interval peak {ci_peak / 1e6:.0f} MB "
          f"({ci_peak / nbytes:.2f}x input), time {ci_t / base_t:.2f}x the no-interval call (under tracemalloc)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
