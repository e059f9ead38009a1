"""LM-Polygraph 0.7.0's Focus and FocusClaim run live against assay's on the same statistics.

Everything is local and built here: a word-level tokenizer folder (``tokenizers`` +
``transformers``), a spaCy pipeline folder whose attribute and entity rulers tag a few words
(proper nouns, numbers, a date, a place), an IDF table and a small JSON-lines corpus. LM-Polygraph's
classes load their IDF table and spaCy model in ``__init__`` (downloading a spaCy model that is
not an installed package), so they are built with ``object.__new__`` and given the same table and
pipeline as ``IDFStats``: their ``__call__`` and ``token_level_focus_scores`` run unchanged. Its
``calcu_idf`` runs live on the same corpus and tokenizer folder to check assay's IDF table.

LM-Polygraph decodes the generated tokens with ``tokenizer.batch_decode(token_ids)``: with
transformers 4 each id is decoded on its own (the method's meaning, and what assay does); with
transformers 5 (installed here) a flat list of ids is one sequence, so LM-Polygraph would match the
whole answer as one token. Its classes get the tokenizer wrapped in :class:`PerToken`, whose
``batch_decode`` has the transformers-4 meaning; everything else is the real tokenizer.
"""

from __future__ import annotations

import json
import pickle
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import spacy
from datasets import load_dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from assay.errors import InvalidParameterError
from assay_uncertainty import estimators_focus as ef

WORDS = ["[UNK]", "Paris", "is", "the", "capital", "of", "France", "in", "1999", "and", "it", "was", "big", "a",
         "city", "Rome", "very", "old", "2001", "there"]
PLAIN = ["is", "the", "of", "in", "and", "it", "was", "a", "very", "there"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("focus")
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(root / "tokenizer")
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    for words, pos in ((["Paris", "France", "Rome"], "PROPN"), (["1999", "2001"], "NUM"), (["capital", "city"], "NOUN"),
                       (PLAIN, "X"), (["big", "old"], "ADJ")):
        for w in words:
            ruler.add([[{"ORTH": w}]], {"POS": pos})
    ents = nlp.add_pipe("entity_ruler")
    ents.add_patterns([{"label": "GPE", "pattern": "Paris"}, {"label": "GPE", "pattern": "France"},
                       {"label": "DATE", "pattern": "1999"}, {"label": "PERSON", "pattern": "Rome"}])
    nlp.to_disk(root / "spacy")
    corpus = root / "corpus"
    corpus.mkdir()
    rng = np.random.default_rng(0)
    with open(corpus / "train.jsonl", "w") as fh:
        for _ in range(40):
            fh.write(json.dumps({"text": " ".join(rng.choice(WORDS[1:], size=int(rng.integers(3, 9))))}) + "\n")
    return root


class PerToken:
    """A tokenizer whose ``batch_decode`` of a flat list of ids decodes each id (transformers 4's meaning)."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def batch_decode(self, ids, **kwargs):
        return [self.tokenizer.decode([int(i)], **kwargs) for i in ids]


def _stats(folders, seed, n=6, keywords=True):
    rng = np.random.default_rng(seed)
    tokenizer = AutoTokenizer.from_pretrained(folders / "tokenizer")
    glp, toks, texts, atts = [], [], [], []
    for i in range(n):
        k = int(rng.integers(2, 8))
        ids = rng.integers(1, len(WORDS), k)
        if keywords or i % 2:
            # Paris or France first: a keyword whatever follows (LM-Polygraph's walk matches substrings, so a
            # later "Paris" may be matched to an earlier "a")
            ids[0] = 1 + int(rng.integers(0, 2)) * 5
        else:
            ids = np.array([WORDS.index(w) for w in rng.choice(PLAIN, size=k)])
        z = rng.normal(0, 2.5, (k, len(WORDS)))
        z[np.arange(k), ids] += 3.0
        glp.append(z - np.log(np.exp(z).sum(-1, keepdims=True)))
        toks.append(ids.tolist())
        texts.append(" ".join(WORDS[t] for t in ids))
        a = np.tril(rng.uniform(0.05, 1, (3, k, k)))
        atts.append(a / a.sum(-1, keepdims=True))
    claims = [[SimpleNamespace(claim_text="c", sentence="s", aligned_token_ids=sorted(
        rng.choice(len(t), size=int(rng.integers(1, len(t) + 1)), replace=False).tolist()))
        for _ in range(int(rng.integers(1, 3)))] for t in toks]  # LM-Polygraph's Claim's fields
    return {"greedy_log_probs": glp, "greedy_tokens": toks, "greedy_texts": texts, "attention_all": atts,
            "tokenizer": tokenizer, "claims": claims}


def _theirs(lm_polygraph, cls_name, folders, idf, p, gamma):
    mod = lm_polygraph("estimators.focus") if cls_name == "Focus" else lm_polygraph("estimators.claim.focus")
    base = lm_polygraph("estimators.focus")
    est = object.__new__(getattr(mod, cls_name))
    est.p, est.gamma = p, gamma
    est.idf_stats = base.IDFStats(token_idf=idf, NER_type=list(ef.NER_TYPES), pos_tag=list(ef.POS_TAGS),
                                  nlp=spacy.load(folders / "spacy"))
    return est


def _ours(cls, folders, idf, p, gamma, tmp_path):
    path = tmp_path / "idf.npy"
    np.save(path, idf)
    return cls(gamma=gamma, p=p, model_name=str(folders / "tokenizer"), path=str(path), idf_dataset="unused",
               trust_remote_code=False, idf_seed=0, idf_dataset_size=-1, spacy_path=str(folders / "spacy"))


def _same(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=0, atol=1e-6)


@pytest.mark.parametrize(("p", "gamma", "idf_len"), [(0.01, 0.9, len(WORDS)), (0.0, 0.5, len(WORDS)),
                                                     (0.05, 1.2, len(WORDS) - 4)])
def test_focus_equals_lm_polygraph(lm_polygraph, folders, tmp_path, p, gamma, idf_len):
    idf = np.random.default_rng(1).uniform(0.2, 3.0, idf_len)
    stats = _stats(folders, 2, keywords=False)  # some examples without a keyword: NaN in both
    theirs = _theirs(lm_polygraph, "Focus", folders, idf, p, gamma)({**stats,
                                                                     "tokenizer": PerToken(stats["tokenizer"])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _ours(ef.Focus, folders, idf, p, gamma, tmp_path)(stats)
    assert np.isnan(theirs).any() and np.isfinite(theirs).any()
    _same(ours, theirs)


@pytest.mark.parametrize(("p", "gamma"), [(0.01, 0.9), (0.0, 0.3)])
def test_focus_claim_equals_lm_polygraph(lm_polygraph, folders, tmp_path, p, gamma):
    idf = np.random.default_rng(3).uniform(0.2, 3.0, len(WORDS))
    stats = _stats(folders, 4, keywords=True)
    theirs = _theirs(lm_polygraph, "FocusClaim", folders, idf, p, gamma)({**stats,
                                                                          "tokenizer": PerToken(stats["tokenizer"])})
    ours = _ours(ef.FocusClaim, folders, idf, p, gamma, tmp_path)(stats)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        _same(o, t)


def test_focus_claim_without_a_keyword_is_nan_with_a_warning(folders, tmp_path):
    stats = _stats(folders, 5, n=2, keywords=False)  # example 0 has no keyword
    with pytest.warns(UserWarning, match="example 0, claim 0 has no Focus score"):
        got = _ours(ef.FocusClaim, folders, np.ones(len(WORDS)), 0.01, 0.9, tmp_path)(stats)
    assert np.isnan(got[0]).all() and np.isfinite(got[1]).all()


def test_idf_table_equals_lm_polygraphs_calcu_idf(lm_polygraph, folders, tmp_path, monkeypatch):
    mod = lm_polygraph("estimators.focus")
    # datasets 3+ no longer takes trust_remote_code; LM-Polygraph passes it: drop it, load the same local folder
    monkeypatch.setattr(mod, "load_dataset", lambda name, trust_remote_code=False: load_dataset(name))
    for size in (-1, 25):
        theirs_path = tmp_path / f"theirs{size}.pkl"
        mod.calcu_idf(str(folders / "tokenizer"), str(theirs_path), str(folders / "corpus"), False, 7, size)
        with open(theirs_path, "rb") as fh:  # written by LM-Polygraph in this test
            theirs = pickle.load(fh)
        ours = ef.load_idf_table(str(folders / "tokenizer"), str(tmp_path / f"ours{size}.npy"),
                                 str(folders / "corpus"), 7, size)
        _same(ours, theirs)
        _same(np.load(tmp_path / f"ours{size}.npy"), theirs)  # saved, and read back next time


def test_focus_refuses_what_it_would_fetch_or_unpickle(folders, tmp_path):
    kw = {"gamma": 0.9, "p": 0.01, "model_name": str(folders / "tokenizer"), "trust_remote_code": False,
          "idf_seed": 0, "idf_dataset_size": -1, "spacy_path": str(folders / "spacy")}
    with pytest.raises(InvalidParameterError, match="not a local file or folder"):
        ef.Focus(path=str(tmp_path / "none.npy"), idf_dataset="wikitext", **kw)
    pkl = tmp_path / "idf.pkl"
    pkl.write_bytes(pickle.dumps(np.ones(3)))
    with pytest.raises(InvalidParameterError, match="never unpickles"):
        ef.Focus(path=str(pkl), idf_dataset="wikitext", **kw)
    np.save(tmp_path / "idf.npy", np.ones(len(WORDS)))
    with pytest.raises(InvalidParameterError, match="spaCy cannot load"):
        ef.Focus(path=str(tmp_path / "idf.npy"), idf_dataset="x", **{**kw, "spacy_path": str(tmp_path / "nope")})
