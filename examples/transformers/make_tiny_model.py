"""Create examples/transformers/tiny-model: a 2-layer GPT-2-shaped model, trained for a few seconds.

A thin wrapper of :func:`assay_transformers.demo.make_tiny_model` (the model of
``assay demo --section transformers``) on this folder's qa.jsonl. No real model ships with
assay, and nothing is downloaded: the weights start from a seeded generator, the
word-level tokenizer is built with the ``tokenizers`` library on the vocabulary of
qa.jsonl, and the model is trained on its first 10 questions ("Q: question A: answer
<eos>") until it knows them. On the other 30 questions it guesses: a few answers right, most
wrong, which is what uncertainty estimation ranks.

    python examples/transformers/make_tiny_model.py [FOLDER]
"""

from __future__ import annotations

import sys
from pathlib import Path

from assay_transformers.demo import make_tiny_model

HERE = Path(__file__).resolve().parent


def main(folder: Path = HERE / "tiny-model", *, steps: int = 200) -> Path:
    return make_tiny_model(folder, qa=HERE / "qa.jsonl", steps=steps)


if __name__ == "__main__":
    print(f"wrote {main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / 'tiny-model')}")
