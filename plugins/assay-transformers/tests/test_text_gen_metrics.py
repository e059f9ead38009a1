"""SBERT and BERTScore generation metrics equal sentence-transformers, bert-score and LM-Polygraph 0.7.0's classes
(issue 28, item 4), on tiny model folders built here (a 2-layer BERT with random weights; nothing downloaded).

LM-Polygraph's ``SbertMetric`` and ``BertScoreMetric`` load hosted models in ``__init__``
(all-mpnet-base-v2, roberta-large); the tests build them without ``__init__`` and give them
the same local model, so their ``__call__`` runs as written on the same texts.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from assay.errors import InvalidParameterError
from assay_transformers.bertscore import BertScoreMetric
from assay_transformers.sbert import SentenceBertQuality
from assay_uncertainty.manager import UEManager

WORDS = ["the", "a", "capital", "of", "france", "paris", "is", "cat", "sat", "on", "mat", "dog", "ran", "blue", "sky",
         "red", "answer", "forty", "two", "42", "it", "was", "big", "small"]
HYPS = ["the capital of france is paris", "paris", "the cat sat on the mat", "a dog ran", "blue sky", "42",
        "it was big", "red red red"]
REFS = ["paris", "paris is the capital of france", "a cat sat on a mat", "the dog was small", "the sky is blue",
        "forty two", "it was small", "blue"]


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory):
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-bert")
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tok = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True, model_max_length=64)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, initializer_range=0.5)  # tokens differ
    BertModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def st_folder(bert_folder, tmp_path_factory):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    folder = tmp_path_factory.mktemp("tiny-sbert")
    word = Transformer(str(bert_folder), max_seq_length=64)
    pool = Pooling(word.get_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[word, pool], device="cpu").save(str(folder))
    return folder


def test_sbert_equals_sentence_transformers_and_lm_polygraph(st_folder, lpm):
    from sentence_transformers import SentenceTransformer, util

    ours = SentenceBertQuality(model=str(st_folder))({"greedy_texts": HYPS}, REFS)
    st = SentenceTransformer(str(st_folder), device="cpu", local_files_only=True)
    direct = util.pairwise_cos_sim(st.encode(HYPS, convert_to_tensor=True), st.encode(REFS, convert_to_tensor=True))
    np.testing.assert_allclose(ours, direct.numpy(), rtol=0, atol=1e-6)
    module = lpm("generation_metrics.sbert")
    theirs = module.SbertMetric.__new__(module.SbertMetric)
    theirs.sbert = st
    np.testing.assert_allclose(ours, theirs({"greedy_texts": HYPS}, REFS), rtol=0, atol=1e-6)
    assert ours.min() < 0.99 and ours.max() <= 1 + 1e-6


def _bert_scorer(folder, layers=2):
    from bert_score import BERTScorer

    return BERTScorer(model_type=str(folder), num_layers=layers, lang="en", device="cpu")


@pytest.mark.parametrize("score, index", [("precision", 0), ("recall", 1), ("f1", 2)])
def test_bert_score_equals_bert_score_package(bert_folder, score, index):
    ours = BertScoreMetric(model=str(bert_folder), score=score, device="cpu")({"answer": HYPS, "reference": REFS})
    direct = _bert_scorer(bert_folder).score(HYPS, REFS)[index].numpy()
    np.testing.assert_allclose(ours, direct, rtol=0, atol=1e-6)
    assert len(set(np.round(ours, 4))) > 3  # the tiny model separates the pairs


def test_bert_score_equals_lm_polygraphs_class_and_layer_option(bert_folder, lpm):
    module = lpm("generation_metrics.bert_score")
    theirs = module.BertScoreMetric.__new__(module.BertScoreMetric)
    theirs.scorer = _bert_scorer(bert_folder)
    ours = BertScoreMetric(model=str(bert_folder), device="cpu")
    np.testing.assert_allclose(ours({"greedy_texts": HYPS}, REFS), theirs({"greedy_texts": HYPS}, REFS),
                               rtol=0, atol=1e-6)
    first = BertScoreMetric(model=str(bert_folder), num_layers=1, device="cpu")({"answer": HYPS}, REFS)
    np.testing.assert_allclose(first, _bert_scorer(bert_folder, 1).score(HYPS, REFS)[0].numpy(), rtol=0, atol=1e-6)


def test_several_references_take_the_best(bert_folder, st_folder):
    targets = [[r, "red"] for r in REFS]
    for metric in (BertScoreMetric(model=str(bert_folder), device="cpu"), SentenceBertQuality(model=str(st_folder))):
        both = metric({"answer": HYPS, "references": targets})
        one = metric({"answer": HYPS}, REFS)
        red = metric({"answer": HYPS}, ["red"] * len(HYPS))
        np.testing.assert_allclose(both, np.maximum(one, red), rtol=0, atol=1e-6)


def test_the_manager_runs_them_by_name(bert_folder, st_folder):
    records = [{"answer": h, "reference": r, "log_probs": [-0.2 * (i + 1)]} for i, (h, r) in enumerate(zip(HYPS, REFS))]
    specs = [f"bert_score[model='{bert_folder}', device=cpu]", f"SbertMetric[model='{st_folder}']"]  # both names
    man = UEManager(records, estimators=["msp"], gen_metrics=specs, ue_metrics=["prr"])
    man()
    np.testing.assert_allclose(man.gen_metrics[("sequence", specs[0])], _bert_scorer(bert_folder).score(HYPS, REFS)[0],
                               rtol=0, atol=1e-6)
    assert np.isfinite(man.metrics[("sequence", "msp", specs[1], "prr")])


def test_bert_score_needs_a_local_folder(tmp_path, bert_folder):
    with pytest.raises(InvalidParameterError, match="local model folder.*assay downloads nothing"):
        BertScoreMetric()({"answer": ["a"]}, ["a"])
    with pytest.raises(InvalidParameterError, match="no such folder"):
        BertScoreMetric(model=str(tmp_path / "missing"))
    with pytest.raises(InvalidParameterError, match="score"):
        BertScoreMetric(model=str(bert_folder), score="F")
    metric = BertScoreMetric(model=str(bert_folder), device="cpu")
    metric({"answer": ["a"]}, ["a"])
    copy = pickle.loads(pickle.dumps(metric))
    assert copy._scorer is None and copy.model == metric.model
