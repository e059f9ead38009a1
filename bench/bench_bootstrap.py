"""Bootstrap confidence intervals: assay's resampling engine against the peers, side by side.

1. 95% percentile interval of mean accuracy, n = 100,000 0/1 scores, 1,000 resamples:
   ``scipy.stats.bootstrap(..., vectorized=True, method="percentile")`` against assay's
   engine (few distinct values: one multinomial draw per resample, no index matrix).
   Target: at least 100x faster. The full ``assay.evaluate`` call (which also builds
   100,000 per-instance result dicts) is reported too.
2. Continuous scores, n = 10,000,000: assay's engine against one plain chunked,
   vectorized numpy bootstrap (``x[rng.integers(0, n, (b, n))].mean(axis=1)`` in chunks
   of 256 MiB), same number of resamples. Target: within 1.2x, with peak memory bounded
   (measured with tracemalloc, which sees numpy's allocations).

Run: ``python bench/bench_bootstrap.py [--quick] [--repeat N]``. Prints medians and ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc

import numpy as np

from assay.metrics import Metric, divide
from assay.metrics.ci import intervals


class MeanScore(Metric):
    """Mean of per-instance scores, additive (sum, count), mapped with numpy."""

    main_score = "mean"
    additive = True
    vectorized = True
    n_stats = 2
    needs_references = False  # scores the predictions alone

    def map_batch(self, predictions, references, task_data):
        x = np.asarray(predictions, dtype=float)
        return np.column_stack([x, np.ones_like(x)])

    def reduce(self, totals):
        return {"mean": divide(totals[..., 0], totals[..., 1])}


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def assay_interval(x, n_resamples, seed=0, method="percentile"):
    m = MeanScore()
    inter = m.map_all(x)
    est = [m.scores_of(inter)]
    res, notes = intervals([m], [inter], est, n=len(x), n_resamples=n_resamples, confidence_level=0.95,
                           method=method, seed=seed)
    return res[0]["mean"]


def plain_chunked(x, n_resamples, seed=0, max_bytes=256 * 2**20):
    rng = np.random.default_rng(seed)
    n = len(x)
    chunk = max(1, max_bytes // (n * 16))
    means = []
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        means.append(x[rng.integers(0, n, (b, n))].mean(axis=1))
    return tuple(np.percentile(np.concatenate(means), [2.5, 97.5]))


def bench_accuracy(repeat):
    import assay

    n, B = 100_000, 1000
    x = (np.random.default_rng(0).random(n) < 0.8).astype(float)
    print(f"\n1. mean accuracy, n={n:,}, {B} resamples, 95% percentile interval")
    try:
        from scipy import stats
    except ImportError:
        print("   scipy is not installed: pip install scipy")
        t_scipy = None
    else:
        t_scipy, ci = timed(lambda: stats.bootstrap((x,), np.mean, n_resamples=B, vectorized=True,
                                                    method="percentile", random_state=0).confidence_interval,
                            max(1, repeat // 2))
        print(f"   scipy.stats.bootstrap   median {t_scipy * 1e3:9.1f} ms   [{ci.low:.5f}, {ci.high:.5f}]")
    t_assay, ci = timed(lambda: assay_interval(x, B), repeat * 3)
    print(f"   assay engine            median {t_assay * 1e3:9.1f} ms   [{ci[0]:.5f}, {ci[1]:.5f}]")
    t_bca, ci_bca = timed(lambda: assay_interval(x, B, method="bca"), repeat * 3)
    print(f"   assay engine, BCa       median {t_bca * 1e3:9.1f} ms   [{ci_bca[0]:.5f}, {ci_bca[1]:.5f}]"
          "   (exact jackknife over all 100,000 instances)")
    t_eval, res = timed(lambda: assay.evaluate(x, None, metrics=[MeanScore()], n_resamples=B, seed=0), repeat)
    print(f"   assay.evaluate (full)   median {t_eval * 1e3:9.1f} ms   (includes {n:,} instance result dicts)")
    if t_scipy:
        print(f"   ratio scipy / assay engine: {t_scipy / t_assay:.0f}x   (target >= 100x); "
              f"scipy / full evaluate: {t_scipy / t_eval:.1f}x")


def bench_continuous(repeat, n, B):
    x = np.random.default_rng(1).normal(size=n)
    print(f"\n2. continuous scores, n={n:,}, {B} resamples")
    t_plain, ci_p = timed(lambda: plain_chunked(x, B), repeat)
    t_assay, ci_a = timed(lambda: assay_interval(x, B), repeat)
    print(f"   plain chunked numpy     median {t_plain:7.2f} s   [{ci_p[0]:+.6f}, {ci_p[1]:+.6f}]")
    print(f"   assay engine            median {t_assay:7.2f} s   [{ci_a[0]:+.6f}, {ci_a[1]:+.6f}]")
    print(f"   ratio assay / plain: {t_assay / t_plain:.2f}x   (target <= 1.2x)")
    tracemalloc.start()
    assay_interval(x, B)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    data = x.nbytes * 2  # the (score, 1) statistics the metric maps to
    print(f"   assay peak memory beyond the input: {peak / 2**20:.0f} MiB (statistics {data / 2**20:.0f} MiB, "
          f"chunk bound 256 MiB), independent of the number of resamples")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 1,000,000 for part 2 and fewer repeats")
    ap.add_argument("--repeat", type=int, default=None, help="repeats (medians; default 3, 1 with --quick)")
    args = ap.parse_args(argv)
    repeat = args.repeat or (1 if args.quick else 3)
    bench_accuracy(repeat)
    bench_continuous(repeat, 1_000_000 if args.quick else 10_000_000, 20)
    print("\n(timings are noisy on a shared machine; ratios are what matter)")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
