"""Throughput of sequential vs parallel evaluation, against the usual hand-rolled alternatives.

    python bench/bench_parallel.py [--sentences 200000] [--repeats 3] [--workers N] [--json PATH]

Data: ``--sentences`` synthetic sentences of 20 tokens (word ids and gold heads), a model
with 50,000 features. Two sentence evaluators:

``heavy``
    an arc-scoring "parser" in pure Python (about 50 us per sentence; the measured cost is
    printed), so the work is CPU-bound and the GIL matters;
``trivial``
    returns a precomputed tally (well under 1 us): the run is all overhead.

Contenders, each timed end to end, interleaved round by round (the median of ``--repeats`` rounds):

``sequential``         ``ev.sequentialEvaluate(pool, model)``
``parallelEvaluate``   ``ev.parallelEvaluate(pool, model, workers=N)`` -- the ``processes`` executor
``ppe-pickled``        ``concurrent.futures.ProcessPoolExecutor`` with N workers, the model sent once
                       per worker (initializer), one task per shard with the shard's sentences pickled
``pool-map``           ``multiprocessing.Pool(N).map`` with one task per sentence (``chunksize=1``);
                       run for the trivial evaluator only unless ``--pool-map-heavy``

Targets (issue 2): heavy parallelEvaluate >= 1.9x the sequential rate; trivial
parallelEvaluate time <= 1.1x sequential and >= 10x faster than pool-map.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from assay import DataPool, EvaluatorBase, get_registry
from assay.executors.base import cpu_count

TOKENS = 20
FEATURES = 50_000
WINDOW = 4  # candidate heads within +-WINDOW of the dependent (about 50 us per sentence)


# --------------------------------------------------------------------------- workload
class Model:
    """A weight vector: feature id -> weight; ``len`` is the feature count."""

    def __init__(self, n_features: int, seed: int = 0) -> None:
        rng = random.Random(seed)
        self.weights = [rng.random() for _ in range(n_features)]

    def __len__(self) -> int:
        return len(self.weights)

    def parse(self, words: list[int]) -> list[int]:
        """Greedy arc scoring: each token picks the best-scoring head in a window (pure Python)."""
        weights = self.weights
        n = len(weights)
        heads = []
        size = len(words)
        for dep in range(size):
            w_dep = words[dep] * 7919
            best_head, best_score = 0, -1.0
            for head in range(max(0, dep - WINDOW), min(size, dep + WINDOW + 1)):
                if head == dep:
                    continue
                score = weights[(w_dep + words[head] * 104729 + head - dep) % n]
                if score > best_score:
                    best_head, best_score = head + 1, score
            heads.append(best_head)
        return heads


def make_sentences(n: int, seed: int = 1) -> list[dict[str, Any]]:
    """``n`` sentences: word ids, gold heads, and a precomputed tally for the trivial evaluator."""
    rng = random.Random(seed)
    vocab = 5000
    return [{"words": [rng.randrange(vocab) for _ in range(TOKENS)],
             "heads": [rng.randrange(TOKENS + 1) for _ in range(TOKENS)],
             "correct": rng.randrange(TOKENS + 1)} for _ in range(n)]


class Heavy(EvaluatorBase):
    def sentence_evaluator(self, sent, w_vector):
        predicted = w_vector.parse(sent["words"])
        gold = sent["heads"]
        return sum(p == g for p, g in zip(predicted, gold)), len(gold)


class Trivial(EvaluatorBase):
    def sentence_evaluator(self, sent, w_vector):
        return sent["correct"], TOKENS


EVALUATORS: dict[str, type[EvaluatorBase]] = {"heavy": Heavy, "trivial": Trivial}


# --------------------------------------------------------------------------- the peers
_WORKER: dict[str, Any] = {}


def _init_worker(evaluator_name: str, model: Model) -> None:
    _WORKER["evaluate"] = EVALUATORS[evaluator_name]().sentence_evaluator
    _WORKER["model"] = model


def _tally_chunk(sentences: list[dict[str, Any]]) -> tuple[int, int]:
    evaluate, model = _WORKER["evaluate"], _WORKER["model"]
    correct = gold = 0
    for sent in sentences:
        c, g = evaluate(sent, model)
        correct += c
        gold += g
    return correct, gold


def _tally_one(sent: dict[str, Any]) -> tuple[int, int]:
    return _WORKER["evaluate"](sent, _WORKER["model"])


def run_sequential(name: str, sentences: list, model: Model, workers: int) -> tuple[int, int]:
    r = EVALUATORS[name]().sequentialEvaluate(DataPool(sentences), model)
    return r.correct_num, r.gold_set_size


def run_parallel(name: str, sentences: list, model: Model, workers: int) -> tuple[int, int]:
    r = EVALUATORS[name]().parallelEvaluate(DataPool(sentences), model, workers=workers)
    return r.correct_num, r.gold_set_size


def run_ppe_pickled(name: str, sentences: list, model: Model, workers: int) -> tuple[int, int]:
    shards = [list(s.items()) for s in DataPool(sentences).shards(workers)]
    with ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(name, model)) as ex:
        parts = list(ex.map(_tally_chunk, shards))
    return sum(c for c, _ in parts), sum(g for _, g in parts)


def run_pool_map(name: str, sentences: list, model: Model, workers: int) -> tuple[int, int]:
    with multiprocessing.Pool(workers, initializer=_init_worker, initargs=(name, model)) as pool:
        parts = pool.map(_tally_one, sentences, chunksize=1)
    return sum(c for c, _ in parts), sum(g for _, g in parts)


CONTENDERS: dict[str, Callable[..., tuple[int, int]]] = {
    "sequential": run_sequential,
    "parallelEvaluate": run_parallel,
    "ppe-pickled": run_ppe_pickled,
    "pool-map": run_pool_map,
}


# --------------------------------------------------------------------------- driver
def per_sentence_cost(name: str, sentences: list, model: Model, n: int = 2000) -> float:
    evaluate = EVALUATORS[name]().sentence_evaluator
    sample = sentences[:n]
    start = time.perf_counter()
    for sent in sample:
        evaluate(sent, model)
    return (time.perf_counter() - start) / len(sample)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=None, help="default: the usable CPU count")
    parser.add_argument("--pool-map-heavy", action="store_true", help="also time pool-map for the heavy evaluator")
    parser.add_argument("--only", choices=sorted(EVALUATORS), action="append", help="run only this evaluator")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    workers = args.workers or cpu_count()
    logging.getLogger("EVALUATOR").setLevel(logging.WARNING)  # keep the timings' output readable

    get_registry("executor")  # discover plugins before timing anything
    model = Model(FEATURES)
    sentences = make_sentences(args.sentences)
    print(f"{args.sentences} sentences x {TOKENS} tokens, {FEATURES} features, {workers} workers, "
          f"median of {args.repeats}; python {sys.version.split()[0]}, {os.cpu_count()} CPUs", flush=True)

    report: dict[str, Any] = {"sentences": args.sentences, "workers": workers, "repeats": args.repeats,
                              "evaluators": {}}
    for name in args.only or ["heavy", "trivial"]:
        cost = per_sentence_cost(name, sentences, model)
        print(f"\n[{name}] about {cost * 1e6:.2f} us of Python per sentence", flush=True)
        chosen = {c: fn for c, fn in CONTENDERS.items()
                  if not (c == "pool-map" and name == "heavy" and not args.pool_map_heavy)}
        samples: dict[str, list[float]] = {c: [] for c in chosen}
        expected = None
        # Interleave the contenders (one round = each once) so that background load hits them alike.
        for _ in range(args.repeats):
            for contender, fn in chosen.items():
                start = time.perf_counter()
                value = fn(name, sentences, model, workers)
                samples[contender].append(time.perf_counter() - start)
                if expected is None:
                    expected = value
                elif value != expected:
                    raise SystemExit(f"{contender} counted {value}, sequential counted {expected}")
        rows: dict[str, dict[str, Any]] = {}
        for contender, times in samples.items():
            median = statistics.median(times)
            rows[contender] = {"median_s": median, "times_s": times, "rate_per_s": args.sentences / median}
            print(f"  {contender:17s} {median:8.3f} s  {args.sentences / median:12,.0f} sentences/s"
                  f"   (runs: {', '.join(f'{t:.3f}' for t in times)})", flush=True)
        seq = rows["sequential"]["median_s"]
        par = rows["parallelEvaluate"]["median_s"]
        ratios = {"parallel_speedup_vs_sequential": seq / par, "parallel_time_vs_sequential": par / seq}
        if "ppe-pickled" in rows:
            ratios["ppe_speedup_vs_sequential"] = seq / rows["ppe-pickled"]["median_s"]
        if "pool-map" in rows:
            ratios["pool_map_time_vs_parallel"] = rows["pool-map"]["median_s"] / par
        for key, value in ratios.items():
            print(f"  {key:34s} {value:6.2f}x", flush=True)
        report["evaluators"][name] = {"us_per_sentence": cost * 1e6, "runs": rows, "ratios": ratios}

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
