"""Corpus BLEU confidence interval: assay's resampling of additive statistics vs re-running BLEU.

    python bench/bench_bleu_ci.py [--segments 10000] [--resamples 1000] [--baseline-resamples 20]
                                  [--full-baseline] [--json PATH]

Data: ``--segments`` synthetic segments (10 to 30 words from a 2,000-word vocabulary), one
reference each that shares about 60% of the hypothesis' words.

Contenders:

``assay evaluate``        ``assay.evaluate(hyps, refs, metrics=["bleu"], n_resamples=R)``: sacreBLEU
                          statistics per segment once, then R resamples as one count-matrix
                          product and ``BLEU.compute_bleu`` per resample
``assay map only``        the same with ``n_resamples=0`` (the per-segment statistics alone); the
                          difference is the cost of the interval itself
``re-run per resample``   for each resample, ``sacrebleu.corpus_bleu`` on the resampled segments
                          (tokenizing and matching again), the way a metric without additive
                          statistics gets an interval. Timed on ``--baseline-resamples`` resamples
                          and scaled to R (``--full-baseline`` runs all R)
``sacrebleu bootstrap``   sacreBLEU's own ``corpus_score(..., n_bootstrap=R)`` (for reference: it
                          also reuses segment statistics)

Target (issue 3): assay evaluate at least 20x faster than re-running the metric per resample.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def make_corpus(n: int, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(2000)])
    hyps, refs = [], []
    for _ in range(n):
        words = vocab[rng.zipf(1.3, size=int(rng.integers(10, 31))) % vocab.size]
        ref = words.copy()
        change = rng.random(ref.size) > 0.6
        ref[change] = vocab[rng.integers(0, vocab.size, int(change.sum()))]
        hyps.append(" ".join(words) + ".")
        refs.append([" ".join(ref) + "."])
    return hyps, refs


def clock(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--baseline-resamples", type=int, default=20)
    parser.add_argument("--full-baseline", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    import sacrebleu

    import assay
    from assay_classic.text import Bleu

    hyps, refs = make_corpus(args.segments)
    ref_stream = [r[0] for r in refs]
    R = args.resamples
    print(f"corpus BLEU interval: {args.segments:,} segments, {R} resamples; python {sys.version.split()[0]}, "
          f"sacrebleu {sacrebleu.__version__}, {os.cpu_count()} CPUs (single runs: the machine is noisy)", flush=True)

    t_eval, res = clock(lambda: assay.evaluate(hyps, refs, metrics=[Bleu()], n_resamples=R, seed=0))
    t_map, res0 = clock(lambda: assay.evaluate(hyps, refs, metrics=[Bleu()], n_resamples=0, seed=0))
    g = res.global_scores
    corpus = sacrebleu.corpus_bleu(hyps, [ref_stream]).score
    print(f"  assay evaluate         {t_eval:8.2f} s   BLEU {g['bleu']:.4f} [{g['bleu_ci_low']:.4f}, "
          f"{g['bleu_ci_high']:.4f}]  (sacrebleu corpus BLEU {corpus:.4f})", flush=True)
    print(f"  assay map only         {t_map:8.2f} s   -> interval itself {max(t_eval - t_map, 0.0):.2f} s", flush=True)

    k = R if args.full_baseline else min(args.baseline_resamples, R)
    rng = np.random.default_rng(0)
    n = len(hyps)

    def rerun() -> list[float]:
        scores = []
        for _ in range(k):
            idx = rng.integers(0, n, n)
            scores.append(sacrebleu.corpus_bleu([hyps[i] for i in idx], [[ref_stream[i] for i in idx]]).score)
        return scores

    t_base_k, base_scores = clock(rerun)
    t_base = t_base_k * R / k
    scaled = "" if k == R else f" (measured {t_base_k:.2f} s for {k}, scaled to {R})"
    print(f"  re-run per resample    {t_base:8.2f} s{scaled}", flush=True)

    t_sacre, sacre = clock(lambda: sacrebleu.metrics.BLEU().corpus_score(hyps, [ref_stream], n_bootstrap=R))
    print(f"  sacrebleu bootstrap    {t_sacre:8.2f} s   {sacre.format()}", flush=True)

    ratio = t_base / t_eval
    print("ratios:")
    print(f"  re-run / assay evaluate (target >= 20)   {ratio:8.1f}")
    print(f"  sacrebleu bootstrap / assay evaluate     {t_sacre / t_eval:8.2f}")
    ok = abs(g["bleu"] - corpus) < 1e-9
    if not ok:
        print(f"VALUE MISMATCH: assay {g['bleu']!r} vs sacrebleu {corpus!r}")
    if args.json:
        args.json.write_text(json.dumps({
            "segments": n, "resamples": R, "baseline_resamples_measured": k,
            "seconds": {"assay_evaluate": t_eval, "assay_map_only": t_map, "rerun_per_resample": t_base,
                        "sacrebleu_bootstrap": t_sacre},
            "ratio_rerun_over_assay": ratio, "bleu": g["bleu"], "ci": [g["bleu_ci_low"], g["bleu_ci_high"]],
        }, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
