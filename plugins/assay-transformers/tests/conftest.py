"""Tiny models built here, from small configs with seeded random weights, saved to a temporary folder.

A GPT-2-shaped causal model and a T5 seq2seq model (2 layers, hidden 32) share a word-level
tokenizer built with the ``tokenizers`` library on a 27-word vocabulary. Their weights are
scaled up from the default initialisation so that greedy generations vary from token to
token (the default 0.02 makes a random model repeat one token).
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

WORDS = ["the", "a", "capital", "of", "france", "paris", "is", "what", "who", "river", "city", "big", "small", "red",
         "blue", "answer", "question", "yes", "no", "one", "two", "three"]


def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", "<unk>", *WORDS])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.decoder = decoders.WordPiece(prefix="##")  # joins the words with spaces
    return PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


def build_causal(folder, seed=0):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    tok = build_tokenizer()
    cfg = GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=1,
                     eos_token_id=1, pad_token_id=0, initializer_range=0.25)
    GPT2LMHeadModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def build_seq2seq(folder, seed=0):
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    tok = build_tokenizer()
    cfg = T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
                   eos_token_id=1, pad_token_id=0, decoder_start_token_id=0, initializer_factor=2.0)
    T5ForConditionalGeneration(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def model_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny-models")
    return {"causal": build_causal(root / "causal"), "seq2seq": build_seq2seq(root / "seq2seq")}


# --------------------------------------------------------------------------- LM-Polygraph 0.7.0, live
def lm_polygraph_module(dotted: str):
    """``lm_polygraph.<dotted>`` imported with bare parent packages, as assay-uncertainty's tests do.

    lm-polygraph is installed without its dependencies (``make setup``); its package
    ``__init__`` files import its model zoo (openai ...), not installed. The parent packages
    are put in ``sys.modules`` as bare packages pointing at the installed folders, and
    ``lm_polygraph.utils.model`` (imported by the stat calculators for type hints only:
    ``Model``, ``WhiteboxModel``) as a module holding two empty classes, so the estimator or
    stat-calculator file and the files it imports run as written. All are removed afterwards.
    A missing lm-polygraph is a failure naming ``make setup``, never a skip.
    """
    import importlib
    import importlib.util
    import sys
    import types
    from pathlib import Path

    spec = importlib.util.find_spec("lm_polygraph")
    if spec is None or not spec.submodule_search_locations:
        raise AssertionError("lm-polygraph==0.7.0 is not installed: run `make setup` (it installs the peers of the "
                             "differential tests with --no-deps, scripts/setup.sh step 7)")
    root = Path(next(iter(spec.submodule_search_locations)))
    bare = {"lm_polygraph": root, "lm_polygraph.estimators": root / "estimators", "lm_polygraph.utils": root / "utils",
            "lm_polygraph.stat_calculators": root / "stat_calculators",
            "lm_polygraph.generation_metrics": root / "generation_metrics"}
    added = []
    for name, folder in bare.items():
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(folder)]
            sys.modules[name] = pkg
            added.append(name)
    if "lm_polygraph.utils.model" not in sys.modules:
        stub = types.ModuleType("lm_polygraph.utils.model")
        stub.Model = type("Model", (), {})
        stub.WhiteboxModel = type("WhiteboxModel", (), {})
        sys.modules["lm_polygraph.utils.model"] = stub
        added.append("lm_polygraph.utils.model")
    try:
        return importlib.import_module(f"lm_polygraph.{dotted}")
    finally:
        for name in added:
            sys.modules.pop(name, None)


def build_nli(folder, seed=0):
    """A tiny random BERT sequence classifier with LM-Polygraph's NLI labels, saved with its tokenizer."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    tok = build_tokenizer()
    labels = ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"]  # deberta-large-mnli's order
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, num_labels=3, pad_token_id=0,
                     id2label=dict(enumerate(labels)), label2id={x: i for i, x in enumerate(labels)},
                     initializer_range=0.5)
    BertForSequenceClassification(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def nli_dir(tmp_path_factory):
    return build_nli(tmp_path_factory.mktemp("tiny-nli") / "nli")


@pytest.fixture(scope="session")
def lpm():
    """:func:`lm_polygraph_module` (test modules cannot import conftest under --import-mode=importlib)."""
    return lm_polygraph_module


@pytest.fixture(scope="session")
def tiny_tokenizer():
    """:func:`build_tokenizer`, for tests that save a model of their own."""
    return build_tokenizer


@pytest.fixture(scope="session")
def whitebox_models(tmp_path_factory):
    """A 3-layer GPT-2 with room for LM-Polygraph's eliciting prompt (512 positions) and a 3-layer T5 (RAUQ's
    middle layers need 3), on :func:`build_tokenizer`: ``{"causal": folder, "seq2seq": folder}``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration

    root = tmp_path_factory.mktemp("whitebox")
    tok = build_tokenizer()
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=512, n_embd=32, n_layer=3, n_head=2,
                               bos_token_id=1, eos_token_id=1, pad_token_id=0,
                               initializer_range=0.25)).save_pretrained(root / "causal")
    tok.save_pretrained(root / "causal")
    torch.manual_seed(0)
    T5ForConditionalGeneration(T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=3,
                                        num_decoder_layers=3, num_heads=4, eos_token_id=1, pad_token_id=0,
                                        decoder_start_token_id=0,
                                        initializer_factor=2.0)).save_pretrained(root / "seq2seq")
    tok.save_pretrained(root / "seq2seq")
    return {"causal": root / "causal", "seq2seq": root / "seq2seq"}


def build_cross_encoder(folder, seed=1):
    """A tiny random BERT with one output (a cross-encoder's shape), saved with its tokenizer."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    tok = build_tokenizer()
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128, num_labels=1, pad_token_id=0,
                     initializer_range=0.5)
    BertForSequenceClassification(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def cross_encoder_dir(tmp_path_factory):
    return build_cross_encoder(tmp_path_factory.mktemp("tiny-cross-encoder") / "ce")
