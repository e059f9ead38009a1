"""Demo section ``metrics``: scores with confidence intervals and a paired comparison.

Generates (deterministically) a 3-class classification set with two systems and a small
translation set with two systems, scores them with registered metrics by name
(``accuracy``, ``f1[average=macro]``, ``bleu``, from the assay-classic plugin), prints
the global scores with 95% bootstrap intervals, and compares the systems with the
paired bootstrap and approximate randomization. Results are saved as JSON (the format
``assay compare`` reads). A metric that is not installed is named with the plugin that
provides it, and the rest of the section still runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["run"]

PROVIDERS = {"accuracy": "assay-classic", "f1": "assay-classic", "bleu": "assay-classic"}
VOCAB = ["the", "cat", "dog", "sat", "ran", "on", "under", "a", "mat", "rug", "house", "garden", "quickly", "slowly",
         "red", "big", "small", "bird", "sang", "tree", "near", "over"]


def classification_data(n: int = 2000, seed: int = 0) -> tuple[list[int], list[int], list[list[int]]]:
    """Gold labels in {0, 1, 2} and two systems that are right about 72% and 78% of the time."""
    rng = np.random.default_rng(seed)
    gold = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    wrong = (gold + rng.integers(1, 3, size=n)) % 3
    a = np.where(rng.random(n) < 0.72, gold, wrong)
    b = np.where(rng.random(n) < 0.78, gold, wrong)
    return a.tolist(), b.tolist(), [[int(g)] for g in gold]


def translation_data(n: int = 400, seed: int = 1) -> tuple[list[str], list[str], list[list[str]]]:
    """Reference sentences and two noisy copies (system b drops / swaps fewer words)."""
    rng = np.random.default_rng(seed)

    def noisy(words: list[str], p: float) -> str:
        out = [w if rng.random() > p else VOCAB[rng.integers(len(VOCAB))] for w in words if rng.random() > p / 3]
        return " ".join(out) or words[0]

    refs, a, b = [], [], []
    for _ in range(n):
        words = [VOCAB[i] for i in rng.integers(len(VOCAB), size=rng.integers(5, 14))]
        refs.append([" ".join(words)])
        a.append(noisy(words, 0.30))
        b.append(noisy(words, 0.22))
    return a, b, refs


def _missing(names: list[str]) -> list[str]:
    from assay.plugins import get_registry, parse_name

    registry = get_registry("metric")
    return [n for n in names if parse_name(n)[0] not in registry]


def run(out_dir: Path, *, n_classification: int = 2000, n_translation: int = 400) -> None:
    import assay

    out_dir.mkdir(parents=True, exist_ok=True)
    tasks: list[tuple[str, list[str], tuple[Sequence[Any], Sequence[Any], Sequence[Any]]]] = [
        (f"classification (3 classes, {n_classification:,} instances)", ["accuracy", "f1[average=macro]"],
         classification_data(n_classification)),
        (f"translation ({n_translation:,} segments)", ["bleu"], translation_data(n_translation)),
    ]
    for title, metrics, (pa, pb, refs) in tasks:
        print(f"\n{title}")
        missing = _missing(metrics)
        if missing:
            for m in missing:
                base = m.split("[")[0]
                provider = PROVIDERS.get(base, "plugin that provides it")
                print(f"  metric {base!r} is not installed: install the {provider} "
                      f"plugin (pip install {PROVIDERS.get(base, '...')}); skipping it")
            metrics = [m for m in metrics if m not in missing]
            if not metrics:
                continue
        results = {}
        for system, preds in (("a", pa), ("b", pb)):
            res = assay.evaluate(preds, refs, metrics=metrics, n_resamples=1000, seed=0)
            res.save(out_dir / f"{metrics[0].split('[')[0]}_{system}.json")
            results[system] = res
            print(f"  system {system}:")
            print("    " + res.summary().replace("\n", "\n    "))
        comparison = assay.compare(results["a"], results["b"], metric=metrics[0], n_resamples=1000, seed=0)
        print("  paired comparison, b against a:")
        print("    " + str(comparison).replace("\n", "\n    "))
    print(f"\n  results saved in {out_dir} (compare them again with: assay compare A.json B.json --metric NAME)")
