"""LM-Polygraph's NLI- and sample-based estimators: assay's classes vs LM-Polygraph 0.7.0's, on the same statistics.

Random statistics in LM-Polygraph's layout (``--n`` examples, ``--k`` samples each; seed 0),
each estimator called on the same dictionary by both; median of ``--repeats`` calls; the
values are checked equal (1e-6) before timing. LM-Polygraph is installed without its
dependencies in the dev environment (``make setup``); its estimator modules are imported
with bare parent packages (its package ``__init__`` imports its model zoo).

    .venv/bin/python bench/bench_polygraph_semantic.py [--n 2000] [--k 10] [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import statistics
import sys
import time
import types
from pathlib import Path

import numpy as np

from assay import load_estimator


def lm_polygraph(module: str, cls: str):
    if "lm_polygraph" in sys.modules:
        root = Path(sys.modules["lm_polygraph"].__path__[0])
    else:
        spec = importlib.util.find_spec("lm_polygraph")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("lm-polygraph is not installed: run `make setup`")
        root = Path(next(iter(spec.submodule_search_locations)))
    for name, folder in {"lm_polygraph": root, "lm_polygraph.estimators": root / "estimators",
                         "lm_polygraph.utils": root / "utils"}.items():
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(folder)]
            sys.modules[name] = pkg
    return getattr(importlib.import_module(f"lm_polygraph.estimators.{module}"), cls)


def make_stats(n: int, k: int) -> dict:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(3, 0.7), size=(n, k, k))
    pool = ["paris", "the capital is paris", "lyon", "a big city", "blue river", "no"]
    texts = [[pool[j] for j in rng.integers(0, len(pool), k)] for _ in range(n)]
    lengths = rng.integers(1, 8, size=(n, k))
    token_ll = [[np.log(rng.uniform(0.05, 1.0, m)) for m in row] for row in lengths]
    glen = rng.integers(1, 10, size=n)
    classes = p.argmax(-1) == 2
    s2c, c2s = {}, {}
    for i in range(n):  # LM-Polygraph's greedy classes, written out here (its calculator needs torch.nn only)
        firsts: list[int] = []
        s2c[i], c2s[i] = {}, []
        for j in range(k):
            for c, f in enumerate(firsts):
                if classes[i, f, j] and classes[i, j, f]:
                    s2c[i][j] = c
                    c2s[i][c].append(j)
                    break
            else:
                s2c[i][j] = len(firsts)
                c2s[i].append([j])
                firsts.append(j)
    stats = {
        "sample_texts": texts, "semantic_matrix_entail": p[..., 2], "semantic_matrix_contra": p[..., 0],
        "semantic_matrix_entail_logits": rng.normal(0, 2, (n, k, k)),
        "semantic_matrix_contra_logits": rng.normal(0, 2, (n, k, k)),
        "semantic_classes_entail": {"sample_to_class": s2c, "class_to_sample": c2s},
        "sample_log_likelihoods": token_ll, "sample_log_probs": np.array([[t.sum() for t in r] for r in token_ll]),
        "sample_tokens": [[list(range(m)) for m in row] for row in lengths],
        "sample_token_similarity": [[rng.uniform(0, 1, m) for m in row] for row in lengths],
        "sample_sentence_similarity": rng.uniform(0, 1, (n, k, k)),
        "greedy_log_likelihoods": [np.log(rng.uniform(0.05, 1.0, m)) for m in glen],
        "token_similarity": [rng.uniform(0, 1, m) for m in glen],
        "greedy_sentence_similarity": rng.uniform(0, 1, (n, k)), "entropy": [rng.uniform(0, 3, m) for m in glen],
        "sample_embeddings": rng.normal(size=(n, k, 64)),
    }
    q = rng.dirichlet(np.full(3, 0.7), size=(n, k))
    stats["concat_greedy_semantic_matrix_contra_forward"] = q[..., 0]
    stats["concat_greedy_semantic_matrix_neutral_forward"] = q[..., 1]
    return stats


GRID = [("semantic_entropy", "semantic_entropy", "SemanticEntropy"), ("num_sem_sets", "num_sem_sets", "NumSemSets"),
        ("deg_mat", "deg_mat", "DegMat"), ("eccentricity", "eccentricity", "Eccentricity"),
        ("semantic_eigval_laplacian", "eig_val_laplacian", "EigValLaplacian"),
        ("kernel_language_entropy", "kernel_language_entropy", "KernelLanguageEntropy"), ("luq", "luq", "LUQ"),
        ("sar", "sar", "SAR"), ("token_sar", "token_sar", "TokenSAR"), ("sentence_sar", "sentence_sar", "SentenceSAR"),
        ("eigenscore", "eigenscore", "EigenScore"), ("semantic_density", "semantic_density", "SemanticDensity"),
        ("cocoa_msp", "cocoa", "CocoaMSP"), ("cocoa_ppl", "cocoa", "CocoaPPL"), ("cocoa_mte", "cocoa", "CocoaMTE")]


def median_time(fn, stats, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(stats)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    stats = make_stats(args.n, args.k)
    print(f"{args.n} examples x {args.k} samples, median of {args.repeats} calls\n")
    print("| estimator | assay (s) | LM-Polygraph (s) | LM-Polygraph / assay |\n|---|---|---|---|")
    for name, module, cls in GRID:
        ours, theirs = load_estimator(name), lm_polygraph(module, cls)()
        np.testing.assert_allclose(ours(stats), np.asarray(theirs(stats), dtype=float), rtol=0, atol=1e-6,
                                   err_msg=name)
        a, b = median_time(ours, stats, args.repeats), median_time(theirs, stats, args.repeats)
        print(f"| `{name}` | {a:.4f} | {b:.4f} | {b / a:.2f}x |")


if __name__ == "__main__":
    main()
