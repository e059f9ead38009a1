"""LM-Polygraph's information-based and ensemble estimators: assay's classes vs LM-Polygraph 0.7.0's, same statistics.

    python bench/bench_polygraph_info.py [--n 2000] [--vocab 2000] [--repeats 5] [--quick] [--json PATH]

Random statistics with LM-Polygraph's names (seeded): ``--n`` generations of 1 to 30 tokens over a
vocabulary of ``--vocab`` (``greedy_log_probs`` ``(T, V)``), prompt-free log-likelihoods, entropies,
attention of a 6-layer, 4-head model, and an ensemble of 5 members over 4 beams. Each estimator is
called directly on the dict (the estimator's own time, as LM-Polygraph's manager calls it), assay's
and LM-Polygraph's class alternately, ``--repeats`` rounds; medians and the ratio
LM-Polygraph / assay are printed, and the values are checked equal (1e-6) on the way.
LM-Polygraph is imported from the installed package without its ``__init__`` (``make setup``
installs it with ``--no-deps``); BoostedProbSequence needs ``boostedprob`` (installed the same way).
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

from assay_uncertainty import estimators_info as info
from assay_uncertainty import estimators_lmp_ensemble as ens


def _root() -> Path:
    spec = importlib.util.find_spec("lm_polygraph")  # the folder, without running the package __init__
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("lm-polygraph is not installed: run `make setup`")
    return Path(next(iter(spec.submodule_search_locations)))


ROOT = _root()


def lm_polygraph(dotted: str) -> Any:
    root = ROOT
    for name, folder in (("lm_polygraph", root), ("lm_polygraph.estimators", root / "estimators"),
                         ("lm_polygraph.utils", root / "utils")):
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(folder)]
            sys.modules[name] = pkg
    return importlib.import_module(f"lm_polygraph.{dotted}")


def statistics_for(n: int, vocab: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 31, n)
    glp = []
    for k in lengths:
        x = rng.normal(0, 3, (k, vocab))
        glp.append(x - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)) - x.max(-1, keepdims=True))
    toks = [g.argmax(-1) for g in glp]
    layers, heads = 6, 4

    def attention(size: int) -> np.ndarray:
        w = np.tril(rng.uniform(0.05, 1, (layers, heads, size, size)))
        return w / w.sum(-1, keepdims=True)

    weights = rng.dirichlet(np.ones(4), n)

    def block() -> dict[str, Any]:
        d: dict[str, Any] = {k: rng.uniform(0, 3, (n, 4)) for k in ens.TOKEN_MEASURES.values()}
        d["log_probas"] = rng.uniform(-30, -0.1, (n, 5, 4))
        return d

    return {
        "greedy_log_probs": glp,
        "greedy_tokens": [list(t) for t in toks],
        "greedy_log_likelihoods": [g[np.arange(len(t)), t] for g, t in zip(glp, toks)],
        "greedy_lm_log_likelihoods": [np.log(rng.uniform(0.01, 1, k)) for k in lengths],
        "entropy": [rng.uniform(0.0, 0.15, k) for k in lengths],
        "attention_all": [attention(k + 1).reshape(layers * heads, k + 1, k + 1) for k in lengths],
        "attention_weights_eliciting_prompt": [rng.uniform(0, 1, (heads, k)) for k in lengths],
        "ensemble_token_scores": {"weights": weights, "ep_token_level_scores": block(),
                                  "pe_token_level_scores": block()},
    }


CASES = [  # (assay class, LM-Polygraph module, class name, kwargs)
    (info.MeanPointwiseMutualInformation, "pointwise_mutual_information", "MeanPointwiseMutualInformation", {}),
    (info.MeanConditionalPointwiseMutualInformation, "conditional_pointwise_mutual_information",
     "MeanConditionalPointwiseMutualInformation", {}),
    (info.RenyiNeg, "renyi_neg", "RenyiNeg", {}),
    (info.FisherRao, "fisher_rao", "FisherRao", {}),
    (info.SelfCertainty, "self_certainty", "SelfCertainty", {}),
    (info.BoostedProbSequence, "boostedprob_score", "BoostedProbSequence", {}),
    (info.CSL, "csl", "CSL", {}),
    (info.RAUQ, "rauq", "RAUQ", {"n_layers": 6, "n_heads": 4}),
    (ens.ENSEMBLE_TOKEN_CLASSES["EPTtu"], "ensemble_token_measures", "EPTtu", {}),
    (ens.ENSEMBLE_SEQUENCE_CLASSES["PESrmi"], "ensemble_sequence_measures", "PESrmi", {}),
]


def timed(fn: Any, stats: dict[str, Any]) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    out = fn(stats)
    return time.perf_counter() - t0, np.asarray(out, dtype=np.float64)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--vocab", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="n=200, vocab=500, 2 rounds: a smoke run")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.vocab, args.repeats = 200, 500, 2
    stats = statistics_for(args.n, args.vocab)
    print(f"LM-Polygraph estimators, {args.n} generations, vocabulary {args.vocab}, median of {args.repeats} rounds")
    print(f"{'estimator':<45} {'assay s':>9} {'LM-Polygraph s':>15} {'ratio':>7}")
    rows = []
    for ours_cls, module, cls_name, kwargs in CASES:
        theirs_obj = getattr(lm_polygraph(f"estimators.{module}"), cls_name)(**kwargs)
        ours_obj = ours_cls(**kwargs)
        a, b = [], []
        for _ in range(args.repeats):
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                ta, va = timed(ours_obj, stats)
                tb, vb = timed(theirs_obj, stats)
            np.testing.assert_allclose(va, vb, rtol=0, atol=1e-6)
            a.append(ta)
            b.append(tb)
        ma, mb = statistics.median(a), statistics.median(b)
        rows.append({"estimator": cls_name, "assay_s": ma, "lm_polygraph_s": mb, "ratio": mb / ma})
        print(f"{cls_name:<45} {ma:9.4f} {mb:15.4f} {mb / ma:6.1f}x")
    if args.json:
        args.json.write_text(json.dumps({"n": args.n, "vocab": args.vocab, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
