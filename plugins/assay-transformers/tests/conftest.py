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

WORDS = ["the", "a", "capital", "of", "france", "paris", "is", "what", "who", "river", "city", "big", "small", "red", "blue", "answer", "question", "yes", "no", "one", "two", "three"]


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
