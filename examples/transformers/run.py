"""Generate with a tiny Hugging Face model on qa.jsonl, estimate uncertainty, score PRR, save, load, rescore.

    python examples/transformers/run.py        # creates tiny-model/ first if missing

Needs assay-transformers (torch, transformers). Nothing is downloaded.
"""

from __future__ import annotations

import sys
from pathlib import Path

from assay.uncertainty import GenerationMetric, UEManager
from assay.uncertainty.prompt_data import load_rows, prompt_records

HERE = Path(__file__).resolve().parent


class RougeL(GenerationMetric):
    """ROUGE-L F1 of the answer against the reference (LM-Polygraph's usual QA quality)."""

    name, level = "rouge_l", "sequence"

    def __call__(self, stats):
        from assay_uncertainty.estimators import rouge_l

        return [rouge_l(a, r) for a, r in zip(stats["answer"], stats["reference"])]


def main(out: Path = HERE / "run-output", model_dir: Path = HERE / "tiny-model") -> UEManager:
    if not (model_dir / "config.json").exists():
        sys.path.insert(0, str(HERE))
        from make_tiny_model import make_tiny_model

        make_tiny_model(model_dir)
    records = prompt_records(load_rows(HERE / "qa.jsonl"), text_column="question", label_column="answer",
                             template="Q: {text} A:")
    man = UEManager(records, model=str(model_dir), model_options={"device": "cpu"},
                    estimators=["msp", "perplexity", "mean_token_entropy", "mc_sequence_entropy",
                                "lexical_similarity"],
                    gen_metrics=["accuracy", RougeL()], ue_metrics=["prr"],
                    batch_size=4, max_new_tokens=4, samples_n=5, seed=1,
                    generation_params={"temperature": 1.0, "stop_strings": ["Q:"]})
    man()
    for question, answer in list(zip(man.stats["input_texts"], man.stats["answer"]))[:4]:
        print(f"{question!r} -> {answer!r}")
    print(man.table(gen_metric="accuracy"))
    man.save(out)

    loaded = UEManager.load(out)  # no model needed from here on
    loaded.rescore(["prr[max_rejection=0.5]", "roc_auc"])
    print(loaded.table(gen_metric="accuracy"))
    return loaded


if __name__ == "__main__":
    main()
