"""The sections of ``assay demo``, run in order."""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path
from typing import Sequence

from assay.errors import InvalidParameterError

#: section name -> module with ``run(out_dir: Path) -> None``
SECTIONS: dict[str, str] = {
    "treebank": "assay.demo.treebank",
    "metrics": "assay.demo.metrics",
    "uncertainty": "assay.demo.uncertainty",
    "segmentation": "assay.demo.segmentation",
    "spark": "assay.demo.spark",
}

#: section name -> what it shows, in one line (``assay demo --help`` lists them)
DESCRIPTIONS: dict[str, str] = {
    "treebank": "a synthetic CoNLL-U treebank and a noisy parse: UAS, LAS, CLAS, UPOS, sequential = parallel",
    "metrics": "classification and translation scores with bootstrap intervals, and a paired comparison",
    "uncertainty": "uncertainty estimators and UE metrics (PRR, AURC, ROC-AUC ...) on generated model outputs",
    "segmentation": "ValUES-style downstream tasks on synthetic uncertainty maps, tables and bar plots",
    "spark": "the treebank evaluation on Apache Spark local[2], in memory and from files (needs assay[spark])",
}


def run_demo(out_dir: Path, *, sections: Sequence[str] | None = None) -> int:
    chosen = list(sections or SECTIONS)
    for name in chosen:
        if name not in SECTIONS:
            raise InvalidParameterError(f"Unknown demo section {name!r}; choose from {', '.join(SECTIONS)}.")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in chosen:
        print(f"\n=== assay demo: {name} ===", flush=True)
        start = time.perf_counter()
        importlib.import_module(SECTIONS[name]).run(out_dir / name)
        print(f"--- {name} done in {time.perf_counter() - start:.1f} s, files in {out_dir / name}", flush=True)
    sys.stdout.flush()
    return 0
