"""LM-Polygraph's estimator families in assay's UEManager vs LM-Polygraph 0.7.0's own classes, same statistics.

    python bench/bench_polygraph_grid.py [--n 2000] [--vocab 1000] [--k 10] [--repeats 5] [--per-estimator]
                                         [--quick] [--json PATH]

One random statistics dictionary with LM-Polygraph's names and meanings (seed 0): ``--n``
generations of 1 to 20 tokens over a vocabulary of ``--vocab`` (``greedy_log_probs``,
``greedy_log_likelihoods``, ``entropy``, the prompt-free ``greedy_lm_log_likelihoods``, the
attention of a 4-layer, 4-head model), ``--k`` samples per example with NLI matrices, their
classes, log-probabilities, similarities and embeddings, an ensemble of 5 members over 4 beams,
and decoder embeddings with a training set of ``--n-train`` for the density estimators.

``assay``         ``UEManager(records, estimators=[names], gen_metrics=["quality"], ue_metrics=["prr"])()``:
                  the statistics come in through one stat calculator that returns the dictionary
                  (what a model backend's calculators hand the manager), the estimators are loaded
                  by their registered names (LM-Polygraph's class names; density ones as objects
                  given the training statistics), and the manager computes every estimation and
                  the PRR of each against the quality.
``LM-Polygraph``  each of LM-Polygraph's classes made and called on the same dictionary (as its
                  manager calls them on a batch holding every example), then LM-Polygraph's
                  ``PredictionRejectionArea`` of each against the same quality.

Both sides make fresh estimator objects in every round, so the density estimators fit (on
``train_*`` statistics) in every round on both sides. A round times one family on both sides
(interleaved); ``--repeats`` rounds, medians and the ratio LM-Polygraph / assay printed. The
estimations are checked equal (1e-6; density: relative 1e-6, LM-Polygraph computes its distances in
float32) and the PRRs equal (1e-6, where an estimator has no tied values) in an untimed first round,
which also does the imports.

LM-Polygraph is not a dependency: ``make setup`` installs it with ``--no-deps``; its estimator
and UE metric modules are imported with bare parent packages (its package ``__init__`` imports
its model stack). Left out: BoostedProbSequence (LM-Polygraph's side runs boostedprob's per-step
torch loop, 35 s for 500 examples: ``bench_polygraph_info.py`` times it), RDE (its fit is
scikit-learn's kernel PCA and MinCovDet on both sides: ``bench_density.py``), LexicalSimilarity
(rouge-score on both sides).
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

from assay.uncertainty.base import StatCalculator
from assay_uncertainty import estimators_density as density
from assay_uncertainty.estimators_lmp_ensemble import TOKEN_MEASURES
from assay_uncertainty.manager import UEManager

LAYERS, HEADS, MEMBERS, BEAMS, DIM = 4, 4, 5, 4, 64


def _root() -> Path:
    spec = importlib.util.find_spec("lm_polygraph")  # the folder, without running the package __init__
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("lm-polygraph==0.7.0 is not installed: run `make setup` (it installs it with --no-deps)")
    return Path(next(iter(spec.submodule_search_locations)))


ROOT = _root()


def lm_polygraph(dotted: str) -> Any:
    root = ROOT
    for name, folder in (("lm_polygraph", root), ("lm_polygraph.estimators", root / "estimators"),
                         ("lm_polygraph.ue_metrics", root / "ue_metrics"), ("lm_polygraph.utils", root / "utils")):
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(folder)]
            sys.modules[name] = pkg
    return importlib.import_module(f"lm_polygraph.{dotted}")


# ---------------------------------------------------------------- the statistics
def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def _classes(entail: np.ndarray) -> dict[str, Any]:
    """LM-Polygraph's ``semantic_classes_entail`` (greedy clustering: entailment both ways, p > 0.5 as argmax)."""
    s2c: dict[int, dict[int, int]] = {}
    c2s: dict[int, list[list[int]]] = {}
    for i, ok in enumerate(entail):
        firsts: list[int] = []
        s2c[i], c2s[i] = {}, []
        for j in range(ok.shape[0]):
            for c, f in enumerate(firsts):
                if ok[f, j] and ok[j, f]:
                    s2c[i][j] = c
                    c2s[i][c].append(j)
                    break
            else:
                s2c[i][j] = len(firsts)
                c2s[i].append([j])
                firsts.append(j)
    return {"sample_to_class": s2c, "class_to_sample": c2s}


def statistics_for(n: int, vocab: int, k: int, n_train: int, seed: int = 0) -> tuple[dict[str, Any], np.ndarray]:
    """LM-Polygraph's statistics dictionary for ``n`` examples, and a quality in [0, 1] per example."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 21, n)
    glp = [_log_softmax(rng.normal(0, 3, (t, vocab))) for t in lengths]
    toks = [g.argmax(-1) for g in glp]

    def attention(size: int) -> np.ndarray:
        w = np.tril(rng.uniform(0.05, 1, (LAYERS * HEADS, size, size)))
        return w / w.sum(-1, keepdims=True)

    def block() -> dict[str, Any]:
        d: dict[str, Any] = {m: rng.uniform(0, 3, (n, BEAMS)) for m in TOKEN_MEASURES.values()}
        d["log_probas"] = rng.uniform(-30, -0.1, (n, MEMBERS, BEAMS))
        return d

    nli = rng.dirichlet(np.full(3, 0.7), size=(n, k, k))  # contradiction, neutral, entailment
    pool = ["paris", "the capital is paris", "lyon", "a big city", "blue river", "no"]
    sample_lengths = rng.integers(1, 8, size=(n, k))
    sample_ll = [[np.log(rng.uniform(0.05, 1.0, m)) for m in row] for row in sample_lengths]
    mix = np.diag(rng.uniform(0.5, 2, DIM)) + 0.3 * rng.normal(size=(DIM, DIM)) / np.sqrt(DIM)
    stats: dict[str, Any] = {
        "greedy_log_probs": glp,
        "greedy_tokens": [list(t) for t in toks],
        "greedy_log_likelihoods": [g[np.arange(len(t)), t] for g, t in zip(glp, toks)],
        "greedy_lm_log_likelihoods": [np.log(rng.uniform(0.01, 1, t)) for t in lengths],
        "entropy": [-(np.exp(g) * g).sum(-1) for g in glp],
        "attention_all": [attention(t + 1) for t in lengths],
        "attention_weights_eliciting_prompt": [rng.uniform(0, 1, (HEADS, t)) for t in lengths],
        "ensemble_token_scores": {"weights": rng.dirichlet(np.ones(BEAMS), n), "ep_token_level_scores": block(),
                                  "pe_token_level_scores": block()},
        "sample_texts": [[pool[j] for j in rng.integers(0, len(pool), k)] for _ in range(n)],
        "semantic_matrix_entail": nli[..., 2], "semantic_matrix_contra": nli[..., 0],
        "semantic_matrix_entail_logits": rng.normal(0, 2, (n, k, k)),
        "semantic_matrix_contra_logits": rng.normal(0, 2, (n, k, k)),
        "semantic_classes_entail": _classes(nli.argmax(-1) == 2),
        "sample_log_likelihoods": sample_ll,
        "sample_log_probs": np.array([[t.sum() for t in row] for row in sample_ll]),
        "sample_tokens": [[list(range(m)) for m in row] for row in sample_lengths],
        "sample_token_similarity": [[rng.uniform(0, 1, m) for m in row] for row in sample_lengths],
        "sample_sentence_similarity": rng.uniform(0, 1, (n, k, k)),
        "token_similarity": [rng.uniform(0, 1, t) for t in lengths],
        "greedy_sentence_similarity": rng.uniform(0, 1, (n, k)),
        "sample_embeddings": rng.normal(size=(n, k, DIM)),
        "embeddings_decoder": (rng.normal(size=(n, DIM)) @ mix * 1.3),
        "train_embeddings_decoder": rng.normal(size=(n_train, DIM)) @ mix,
        "background_train_embeddings_decoder": rng.normal(size=(n_train, DIM)) * 2,
        "train_greedy_log_likelihoods": [-rng.random(int(t)) * 3 for t in rng.integers(1, 21, n_train)],
    }
    return stats, rng.uniform(0, 1, n)


TRAIN = ("train_embeddings_decoder", "background_train_embeddings_decoder", "train_greedy_log_likelihoods")

#: family -> [(assay's registered name or a density class, LM-Polygraph module, class name, kwargs)]
FAMILIES: dict[str, list[tuple[Any, str, str, dict[str, Any]]]] = {
    "information": [
        ("MaximumSequenceProbability", "max_probability", "MaximumSequenceProbability", {}),
        ("Perplexity", "perplexity", "Perplexity", {}),
        ("MeanTokenEntropy", "token_entropy", "MeanTokenEntropy", {}),
        ("MeanPointwiseMutualInformation", "pointwise_mutual_information", "MeanPointwiseMutualInformation", {}),
        ("MeanConditionalPointwiseMutualInformation", "conditional_pointwise_mutual_information",
         "MeanConditionalPointwiseMutualInformation", {}),
        ("RenyiNeg", "renyi_neg", "RenyiNeg", {}),
        ("FisherRao", "fisher_rao", "FisherRao", {}),
        ("SelfCertainty", "self_certainty", "SelfCertainty", {}),
        ("CSL", "csl", "CSL", {}),
        (f"RAUQ[n_layers={LAYERS},n_heads={HEADS}]", "rauq", "RAUQ", {"n_layers": LAYERS, "n_heads": HEADS}),
    ],
    "ensemble": [
        ("EPTtu", "ensemble_token_measures", "EPTtu", {}),
        ("PETmi", "ensemble_token_measures", "PETmi", {}),
        ("EPSrmi", "ensemble_sequence_measures", "EPSrmi", {}),
        ("PESrmiabs", "ensemble_sequence_measures", "PESrmiabs", {}),
    ],
    "density": [
        (density.MahalanobisDistanceSeq, "mahalanobis_distance", "MahalanobisDistanceSeq", {}),
        (density.RelativeMahalanobisDistanceSeq, "relative_mahalanobis_distance", "RelativeMahalanobisDistanceSeq",
         {}),
        (density.PPLMDSeq, "ppl_md", "PPLMDSeq", {}),
    ],
    "sample / NLI": [
        ("SemanticEntropy", "semantic_entropy", "SemanticEntropy", {}),
        ("NumSemSets", "num_sem_sets", "NumSemSets", {}),
        ("DegMat", "deg_mat", "DegMat", {}),
        ("Eccentricity", "eccentricity", "Eccentricity", {}),
        ("EigValLaplacian", "eig_val_laplacian", "EigValLaplacian", {}),
        ("KernelLanguageEntropy", "kernel_language_entropy", "KernelLanguageEntropy", {}),
        ("LUQ", "luq", "LUQ", {}),
        ("SAR", "sar", "SAR", {}),
        ("TokenSAR", "token_sar", "TokenSAR", {}),
        ("SentenceSAR", "sentence_sar", "SentenceSAR", {}),
        ("EigenScore", "eigenscore", "EigenScore", {}),
        ("CocoaMSP", "cocoa", "CocoaMSP", {}),
        ("CocoaPPL", "cocoa", "CocoaPPL", {}),
        ("CocoaMTE", "cocoa", "CocoaMTE", {}),
    ],
}


class GivenStatistics(StatCalculator):
    """Hands the manager the statistics dictionary (as a model backend's calculators would)."""

    def __init__(self, stats: dict[str, Any]) -> None:
        super().__init__(stats=tuple(stats))
        self._given = stats

    def __call__(self, stats: Any) -> dict[str, Any]:
        return self._given


def run_assay(family: list[tuple[Any, str, str, dict[str, Any]]], stats: dict[str, Any],
              quality: np.ndarray) -> tuple[list[np.ndarray], list[float]]:
    train = {k: stats[k] for k in TRAIN}
    estimators = [spec(train_stats=train) if isinstance(spec, type) else spec for spec, *_ in family]
    man = UEManager([{"quality": float(q)} for q in quality], estimators=estimators, gen_metrics=["quality"],
                    ue_metrics=["prr"], stat_calculators=[GivenStatistics(stats)])
    man()
    names = man.estimator_names
    return ([man.estimations[("sequence", n)] for n in names],
            [man.metrics[("sequence", n, "quality", "prr")] for n in names])


def run_lm_polygraph(classes: list[tuple[Any, dict[str, Any]]], prr: Any, stats: dict[str, Any],
                     quality: np.ndarray) -> tuple[list[np.ndarray], list[float]]:
    values, scores = [], []
    for cls, kwargs in classes:
        u = np.asarray(cls(**kwargs)(stats), dtype=np.float64)
        values.append(u)
        scores.append(float(prr(u, quality)))
    return values, scores


def timed(fn: Any, *args: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--k", type=int, default=10, help="samples per example")
    parser.add_argument("--n-train", type=int, default=1000, help="training examples of the density estimators")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="n=200, vocab=200, 2 rounds: a smoke run")
    parser.add_argument("--per-estimator", action="store_true",
                        help="also one UEManager per estimator against its LM-Polygraph class (a breakdown)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.vocab, args.n_train, args.repeats = 200, 200, 300, 2
    warnings.simplefilter("ignore")  # LM-Polygraph's float32 casts and empty-slice means, on both sides alike
    np.seterr(all="ignore")
    stats, quality = statistics_for(args.n, args.vocab, args.k, args.n_train)
    prr = lm_polygraph("ue_metrics.pred_rej_area").PredictionRejectionArea()
    theirs = {fam: [(getattr(lm_polygraph(f"estimators.{mod}"), cls), kw) for _, mod, cls, kw in rows]
              for fam, rows in FAMILIES.items()}
    print(f"LM-Polygraph estimator families: UEManager + PRR vs LM-Polygraph's classes + its PRR; {args.n} examples, "
          f"vocabulary {args.vocab}, {args.k} samples, {args.n_train} training embeddings; median of "
          f"{args.repeats} rounds")
    print(f"{'family':<14} {'estimators':>10} {'assay s':>9} {'LM-Polygraph s':>15} {'LM-Polygraph / assay':>21}")
    rows = []
    totals = {"assay": [0.0] * args.repeats, "LM-Polygraph": [0.0] * args.repeats}
    for fam, grid in FAMILIES.items():
        a, b = [], []
        va, sa = run_assay(grid, stats, quality)  # an untimed round: imports, first lookups, the check
        vb, sb = run_lm_polygraph(theirs[fam], prr, stats, quality)
        for (_, _, cls, _), x, y, p, q in zip(grid, va, vb, sa, sb):
            # density: LM-Polygraph's distances are float32 (relative 1e-6, as tests/test_density_lm_polygraph.py)
            np.testing.assert_allclose(x, y, rtol=1e-6 if fam == "density" else 0, atol=1e-6, err_msg=cls)
            if np.unique(y).size == y.size:  # with ties (PPL-MD's ranks) the order among them is each side's own
                np.testing.assert_allclose(p, q, rtol=0, atol=1e-6, err_msg=f"PRR of {cls}")
        for r in range(args.repeats):
            ta, _ = timed(run_assay, grid, stats, quality)
            tb, _ = timed(run_lm_polygraph, theirs[fam], prr, stats, quality)
            a.append(ta)
            b.append(tb)
            totals["assay"][r] += ta
            totals["LM-Polygraph"][r] += tb
        ma, mb = statistics.median(a), statistics.median(b)
        rows.append({"family": fam, "estimators": [c for _, _, c, _ in grid], "assay_s": ma, "lm_polygraph_s": mb,
                     "ratio": mb / ma})
        print(f"{fam:<14} {len(grid):>10} {ma:9.3f} {mb:15.3f} {mb / ma:20.2f}x")
    ma, mb = statistics.median(totals["assay"]), statistics.median(totals["LM-Polygraph"])
    print(f"{'all':<14} {sum(len(g) for g in FAMILIES.values()):>10} {ma:9.3f} {mb:15.3f} {mb / ma:20.2f}x")
    rows.append({"family": "all", "assay_s": ma, "lm_polygraph_s": mb, "ratio": mb / ma})
    if args.per_estimator:
        print(f"\n{'estimator (one UEManager each)':<44} {'assay s':>9} {'LM-Polygraph s':>15} {'ratio':>8}")
        for fam, grid in FAMILIES.items():
            for row, cls in zip(grid, theirs[fam]):
                a, b = [], []
                for _ in range(args.repeats):
                    a.append(timed(run_assay, [row], stats, quality)[0])
                    b.append(timed(run_lm_polygraph, [cls], prr, stats, quality)[0])
                ma, mb = statistics.median(a), statistics.median(b)
                rows.append({"family": fam, "estimator": row[2], "assay_s": ma, "lm_polygraph_s": mb,
                             "ratio": mb / ma})
                print(f"{row[2]:<44} {ma:9.4f} {mb:15.4f} {mb / ma:7.2f}x")
    if args.json:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "rows": rows},
                                        indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
