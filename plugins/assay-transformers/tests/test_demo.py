"""The ``transformers`` demo section, end to end: what it prints and writes, against values recomputed here.

PRR is recomputed from the saved estimations and qualities by a hand implementation (the
expected kept quality at each rejection level, ties broken at random in expectation) and
by assay_uncertainty's ``prr_scores``; the accuracy from the saved answers and the QA file;
MSP, perplexity and mean token entropy from the saved token statistics.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from assay.cli import main
from assay.uncertainty import UEManager
from assay_transformers.demo import qa_path
from assay_uncertainty.rejection import prr_scores

EXAMPLE_QA = Path(__file__).resolve().parents[3] / "examples" / "transformers" / "qa.jsonl"


def hand_prr(u: np.ndarray, q: np.ndarray) -> float:
    """Mean over k = 1..n of the mean quality of the k least uncertain examples (q in {0, 1});
    a tie group at the cut contributes its mean quality per kept example."""
    n = len(u)
    total = 0.0
    for k in range(1, n + 1):
        cut = np.sort(u)[k - 1]
        below, tied = u < cut, u == cut
        kept = q[below].sum() + (k - below.sum()) * q[tied].mean()
        total += kept / k
    return total / n


def hand_semantic_entropy(nli_folder: Path, sample_texts, sample_log_probs) -> list[float]:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(nli_folder))
    model = AutoModelForSequenceClassification.from_pretrained(str(nli_folder)).eval()
    entail = model.config.label2id["ENTAILMENT"]
    out = []
    with torch.no_grad():
        for texts, lps in zip(sample_texts, sample_log_probs):
            def entails(a, b):  # an identical pair too goes through the model (its call need not be entailment)
                return int(model(**tok(a, b, return_tensors="pt")).logits[0].argmax()) == entail

            firsts, cls = [], []
            for j, t in enumerate(texts):
                c = next((k for k, f in enumerate(firsts) if entails(texts[f], t) and entails(t, texts[f])), None)
                if c is None:
                    c = len(firsts)
                    firsts.append(j)
                cls.append(c)
            seq = np.array([float(np.sum(x)) for x in lps])
            class_lp = [np.logaddexp.reduce(seq[[j for j, c in enumerate(cls) if c == k]]) for k in range(len(firsts))]
            out.append(-float(np.mean([class_lp[c] for c in cls])))
    return out


def test_the_packaged_qa_file_is_the_examples_copy():
    assert qa_path().read_bytes() == EXAMPLE_QA.read_bytes()
    rows = [json.loads(line) for line in qa_path().read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 40 and all(set(r) == {"question", "answer"} for r in rows)


def test_make_tiny_model_checks_its_options(tmp_path):
    from assay.errors import InvalidParameterError
    from assay_transformers.demo import make_tiny_model

    for option in ({"steps": -1}, {"train_rows": 0}, {"seed": 1.5}, {"stated_confidence": 1}):
        with pytest.raises(InvalidParameterError, match=next(iter(option))):
            make_tiny_model(tmp_path / "m", **option)
    with pytest.raises(FileNotFoundError, match="nowhere.jsonl"):
        make_tiny_model(tmp_path / "m", qa=tmp_path / "nowhere.jsonl")
    assert not (tmp_path / "m").exists()


def test_claim_records_make_one_claim_per_answer_word():
    from assay.errors import InvalidParameterError
    from assay_transformers.demo import claim_records

    recs = claim_records(["the Seine", "", "Rome Rome"], ["the Seine", "Paris", "Rome"],
                         [[-0.1, -0.2, -0.3], [-1.0], [-0.5, -0.7]], [[1, 2, 3], [4], [5, 6]])
    assert [r["claim_spans"] for r in recs] == [[[0, 1], [1, 2]], [], [[0, 1], [1, 2]]]
    assert [r["claim_correct"] for r in recs] == [[1, 1], [], [1, 0]]  # the reference has no second word
    assert recs[0]["log_probs"] == [-0.1, -0.2, -0.3] and recs[2]["entropy"] == [5.0, 6.0]
    with pytest.raises(InvalidParameterError, match="example 0: the answer 'a b' has 2 words but 1 generated"):
        claim_records(["a b"], ["a"], [[-1.0]], [[0.0]])


def test_stated_confidence_texts_and_guess():
    from assay_transformers.demo import guess, stated_confidence_texts

    rows = [{"question": "What colour is the sky ?", "answer": "blue"},
            {"question": "What colour is grass ?", "answer": "green"},
            {"question": "How many legs has a cat ?", "answer": "four"}]
    # each question's word before "?" swapped for the next row's (the last row's for the first's); the made-up
    # "What colour is cat ?" is a known (evaluated) question here, so it is left out
    assert stated_confidence_texts(rows, known=[r["question"] for r in rows] + ["What colour is cat ?"]) == [
        "Question: What colour is the sky ? Guess: blue Probability: 0.9 <eos>",
        "Question: What colour is the grass ? Guess: blue Probability: 0.2 <eos>",
        "Question: What colour is grass ? Guess: green Probability: 0.9 <eos>",
        "Question: How many legs has a cat ? Guess: four Probability: 0.9 <eos>",
        "Question: How many legs has a sky ? Guess: four Probability: 0.2 <eos>",
    ]
    assert len(stated_confidence_texts(rows)) == 6  # without known: the rows' own questions only
    assert guess("Guess: the Seine Probability: 0.9") == "the Seine"
    assert guess("Guess: Guess: green Probability: 0.2") == "green"  # LM-Polygraph's regex: after the last Guess:
    assert guess("blue") == "blue" and guess("Guess: Rome") == "Rome"


def hand_guess(answer: str) -> str:
    """The words of a verbalized answer after its last 'Guess:' and before 'Probability:'."""
    words = answer.split()
    words = words[:words.index("Probability:")] if "Probability:" in words else words
    last = max((k for k, w in enumerate(words) if w == "Guess:"), default=-1)
    return " ".join(words[last + 1:])


def test_assay_list_shows_the_section(capsys):
    assert main(["list", "demo_section"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("transformers "))
    assert "PRR with intervals" in line and "[transformers]" in line


@pytest.mark.slow
def test_the_demo_section_runs_end_to_end(tmp_path, capsys):
    assert main(["demo", "--section", "transformers", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    section = tmp_path / "transformers"
    assert sorted(p.name for p in (section / "run").iterdir()) == ["arrays.npz", "manager.json"]
    model_files = {p.name for p in (section / "tiny-model").iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= model_files
    assert sorted(p.name for p in section.iterdir()) == ["claims", "ensemble", "run", "tiny-model",
                                                         "tiny-model-seed-1", "tiny-model-seed-2", "tiny-nli",
                                                         "verbalized"]
    _check_the_ensemble_table(section, out)
    nli_files = {p.name for p in (section / "tiny-nli").iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= nli_files

    shutil.rmtree(section / "tiny-model")  # loading and rescoring need no model
    man = UEManager.load(section / "run")
    names = ["msp", "perplexity", "mean_token_entropy", "num_sem_sets[clustering=embedding]",
             "semantic_eigval_laplacian[clustering=embedding]", "mean_pointwise_mutual_information",
             "attention_score", "p_true", "eigenscore", "mahalanobis_distance", "semantic_entropy"]
    assert man.estimator_names == names and man.n_examples == 40 and man.n_resamples == 200

    # accuracy: exact match of the greedy answer with the QA file's answer
    rows = [json.loads(line) for line in qa_path().read_text(encoding="utf-8").splitlines()]
    q = np.array([float(a == r["answer"]) for a, r in zip(man.stats["answer"], rows)])
    np.testing.assert_array_equal(man.gen_metrics[("sequence", "accuracy")], q)
    # trained on the first 10 questions: both classes are present, so PRR and its intervals are defined
    assert f"({int(q.sum())} of 40 right: {int(q[:10].sum())} of the 10 trained questions, " \
           f"{int(q[10:].sum())} of the 30 unseen ones)" in out and 0 < q.sum() < 40

    # the whitebox estimators from the saved token statistics
    lp = [np.asarray(x, dtype=float) for x in man.stats["log_probs"]]
    ent = [np.asarray(x, dtype=float) for x in man.stats["token_entropies"]]
    np.testing.assert_allclose(man.estimations[("sequence", "msp")], [-x.sum() for x in lp], rtol=1e-9)
    np.testing.assert_allclose(man.estimations[("sequence", "perplexity")], [-x.mean() for x in lp], rtol=1e-9)
    np.testing.assert_allclose(man.estimations[("sequence", "mean_token_entropy")], [x.mean() for x in ent], rtol=1e-9)
    # equal sampled texts have cosine 1, so they are always in one semantic set
    sets = man.estimations[("sequence", "num_sem_sets[clustering=embedding]")]
    distinct = [len(set(s)) for s in man.stats["sample_texts"]]
    assert all(len(s) == 5 for s in man.stats["sample_texts"])
    assert all(1 <= v <= d for v, d in zip(sets, distinct))

    # NLI semantic entropy, by hand: the untrained NLI classifier's label of each ordered pair of samples
    # (one pair per forward pass, no padding), LM-Polygraph's greedy classes (a sample joins the first class whose
    # first member entails it both ways), then -mean_j log sum_{k in class(j)} P(sample k)
    np.testing.assert_allclose(man.estimations[("sequence", "semantic_entropy")],
                               hand_semantic_entropy(section / "tiny-nli", man.stats["sample_texts"],
                                                     man.stats["sample_log_probs"]), rtol=1e-9, atol=1e-12)

    # PRR: the saved score equals two recomputations; intervals are finite, bracket it, and are printed
    for name in names:
        u = man.estimations[("sequence", name)]
        key = ("sequence", name, "accuracy", "prr")
        assert man.metrics[key] == pytest.approx(hand_prr(u, q), abs=1e-12)
        assert man.metrics[key] == pytest.approx(prr_scores(u, q).raw, abs=1e-12)
        low, high = man.intervals[key]
        assert np.isfinite([low, high]).all() and low <= man.metrics[key] <= high
        assert f"| {name} | {man.metrics[key]:.4f} [{low:.4f}, {high:.4f}] |" in out

    # the paired comparison: score_b - score_a of the stored scores
    diff = (man.metrics[("sequence", "semantic_eigval_laplacian[clustering=embedding]", "accuracy", "prr")]
            - man.metrics[("sequence", "msp", "accuracy", "prr")])
    assert re.search(rf"semantic_eigval_laplacian\[clustering=embedding\] - msp: {diff:+.4f}; ", out)
    for other in ("p_true", "semantic_entropy"):
        diff = man.metrics[("sequence", other, "accuracy", "prr")] - man.metrics[("sequence", "msp", "accuracy", "prr")]
        assert f"{other} - msp: {diff:+.4f}; " in out
    # each printed comparison is the difference and the verdict, which quotes its own interval and p-value:
    # "is better" exactly when the printed p is below the printed alpha (one test, never p = 0.060 beside it)
    assert "'B - A' is b - a: the verdict's a is the estimator after the minus sign" in out
    lines = [x for x in out.splitlines() if x.startswith("Paired comparison of")]
    # four of the main table (the claim one among them), one of the verbalized table, two of the ensemble table
    assert len(lines) == 7
    for line in lines:
        m = re.search(r"; (.*p = ([0-9.e+-]+) (<|>=) ([0-9.e+-]+)\))$", line)
        assert m, line
        better = " is better on " in m.group(1)
        assert better == (m.group(3) == "<") == (float(m.group(2)) < float(m.group(4)))

    # the claim table: each answer word a claim, right when it is the reference's word there (rebuilt here)
    claims = UEManager.load(section / "claims")
    assert claims.estimator_names == ["maximum_claim_probability", "max_token_entropy_claim"]
    want_q, want_msp, want_ent = [], [], []
    for answer, r, x, h in zip(man.stats["answer"], rows, lp, ent):
        ref = r["answer"].split()
        for j, word in enumerate(answer.split()):
            want_q.append(float(j < len(ref) and word == ref[j]))
            want_msp.append(-x[j])
            want_ent.append(h[j])
    q_claim = np.concatenate(claims.gen_metrics[("claim", "claim_accuracy")])
    np.testing.assert_array_equal(q_claim, want_q)
    assert 0 < q_claim.sum() < q_claim.size
    got_msp = np.concatenate(claims.estimations[("claim", "maximum_claim_probability")])
    got_ent = np.concatenate(claims.estimations[("claim", "max_token_entropy_claim")])
    np.testing.assert_allclose(got_msp, want_msp, rtol=1e-9)
    np.testing.assert_allclose(got_ent, want_ent, rtol=1e-9)
    assert f"({int(q_claim.sum())} of {q_claim.size} claims right)" in out
    for name, u in (("maximum_claim_probability", got_msp), ("max_token_entropy_claim", got_ent)):
        key = ("claim", name, "claim_accuracy", "prr")
        assert claims.metrics[key] == pytest.approx(hand_prr(u, q_claim), abs=1e-12)
        low, high = claims.intervals[key]
        assert np.isfinite([low, high]).all() and low <= claims.metrics[key] <= high
        assert f"| {name} | {claims.metrics[key]:.4f} [{low:.4f}, {high:.4f}] |" in out
    diff = (claims.metrics[("claim", "max_token_entropy_claim", "claim_accuracy", "prr")]
            - claims.metrics[("claim", "maximum_claim_probability", "claim_accuracy", "prr")])
    assert f"max_token_entropy_claim - maximum_claim_probability: {diff:+.4f}; " in out

    # the verbalized table: verbalized_1s parses the stated confidence of each saved answer (recomputed here with the
    # regex); quality is the exact match of the guess; PRR (NaN pairs dropped) and the paired comparison with msp
    verbal = UEManager.load(section / "verbalized")
    vname = "verbalized_1s[confidence_regex='Probability: (\\d+\\.\\d+)']"
    assert verbal.estimator_names == ["msp", vname] and verbal.n_examples == 40
    assert all(t == f"Question: {r['question']}" for t, r in zip(verbal.stats["input_texts"], rows))
    stated = [re.search(r"Probability: (\d+\.\d+)", a) for a in verbal.stats["answer"]]
    want_v = np.array([1 - float(m.group(1)) if m else np.nan for m in stated])
    np.testing.assert_array_equal(verbal.estimations[("sequence", vname)], want_v)
    nan = int(np.isnan(want_v).sum())
    assert nan < 40 and f"{nan} of 40 answers state none" in out  # real stated confidences, the NaNs counted
    q_v = np.array([float(hand_guess(a).casefold() == r["answer"].casefold())
                    for a, r in zip(verbal.stats["answer"], rows)])
    np.testing.assert_array_equal(verbal.gen_metrics[("sequence", "guess_accuracy")], q_v)
    assert 0 < q_v.sum() < 40 and f"the guess ({int(q_v.sum())} of 40 right)" in out
    for name in ("msp", vname):
        u = verbal.estimations[("sequence", name)]
        keep = np.isfinite(u)
        key = ("sequence", name, "guess_accuracy", "prr")
        assert verbal.metrics[key] == pytest.approx(hand_prr(u[keep], q_v[keep]), abs=1e-12)
        low, high = verbal.intervals[key]
        assert np.isfinite([low, high]).all() and low <= verbal.metrics[key] <= high
        assert f"| {name} | {verbal.metrics[key]:.4f} [{low:.4f}, {high:.4f}] |" in out
    diff = verbal.metrics[("sequence", vname, "guess_accuracy", "prr")] - \
        verbal.metrics[("sequence", "msp", "guess_accuracy", "prr")]
    assert f"verbalized_1s - msp: {diff:+.4f}; " in out
    assert "they mean nothing about the method" in out

    # the families left out say why
    assert "verbalized_2s (it asks a follow-up question as a chat" in out
    assert "linguistic_1s (the model was taught" in out

    # the rescored UE metrics are in the printed second table; rescoring again here gives the same
    assert "roc_auc (accuracy)" in out and "prr[max_rejection=0.5] (accuracy)" in out
    again = man.rescore(["roc_auc"])
    roc = again[("sequence", "msp", "accuracy", "roc_auc")]
    assert f"{roc:.4f}" in out.split("rescored without the model")[1]


def _check_the_ensemble_table(section: Path, out: str) -> None:
    """The ensemble table: the saved manager's values are the three folders' ensemble decoding (recomputed here
    for the first prompts, read by the estimator classes), its PRR the hand one, printed with intervals."""
    from assay_transformers.demo import ENSEMBLE_ESTIMATORS
    from assay_transformers.ensemble import ModelEnsemble
    from assay_transformers.generation import HFModel
    from assay_uncertainty.estimators_lmp_ensemble import ENSEMBLE_SEQUENCE_CLASSES, ENSEMBLE_TOKEN_CLASSES

    man = UEManager.load(section / "ensemble")
    assert man.estimator_names == ["msp", *ENSEMBLE_ESTIMATORS] and man.n_examples == 40
    folders = [section / f for f in ("tiny-model", "tiny-model-seed-1", "tiny-model-seed-2")]
    ens = ModelEnsemble([HFModel(str(f), device="cpu") for f in folders], ensembling_mode="pe", num_beams=3)
    stats = {"ensemble_token_scores": [ens.token_scores(p, max_new_tokens=4, stop_strings=["Q:"])
                                       for p in man.stats["input_texts"][:4]]}
    classes = {**ENSEMBLE_TOKEN_CLASSES, **ENSEMBLE_SEQUENCE_CLASSES}
    q = np.asarray(man.gen_metrics[("sequence", "accuracy")], dtype=float)
    for name in ENSEMBLE_ESTIMATORS:
        u = np.asarray(man.estimations[("sequence", name)], dtype=float)
        np.testing.assert_allclose(u[:4], classes[name]()(stats), rtol=1e-9)
        key = ("sequence", name, "accuracy", "prr")
        assert man.metrics[key] == pytest.approx(hand_prr(u, q), abs=1e-12)
        low, high = man.intervals[key]
        assert np.isfinite([low, high]).all() and low <= man.metrics[key] <= high
        assert f"| {name} | {man.metrics[key]:.4f} [{low:.4f}, {high:.4f}] |" in out
    for name in ENSEMBLE_ESTIMATORS[::2]:  # the two compared with MSP
        diff = man.metrics[("sequence", name, "accuracy", "prr")] - man.metrics[("sequence", "msp", "accuracy", "prr")]
        assert f"{name} - msp: {diff:+.4f}; " in out
