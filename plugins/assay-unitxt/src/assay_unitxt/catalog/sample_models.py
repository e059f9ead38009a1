"""Tiny models with seeded random weights, for the sample inputs (``examples``) of the reward and perplexity entries.

assay's conformance suite (``assay check-plugin``, the common tests) runs every registered metric on
its sample inputs. No reward model or language model is packaged with assay, so these entries' samples
run on a tiny model built here on first use, in a temporary folder, from a fixed seed (the global
random state is left as it was): a 2-layer BERT classifier with one output (a reward model's shape)
and a 2-layer T5, on a word-level tokenizer of a few words. They score nothing meaningful; they only
let the suite check the invariances (order, chunking, sharding, pickling).
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["sample_model"]

_WORDS = ["the", "a", "cat", "sat", "on", "mat", "dog", "ran", "in", "park", "dogs", "paris", "is", "big"]


def _tokenizer() -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", "<unk>", *_WORDS])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.post_processor = processors.TemplateProcessing(single="$A <eos>", pair="$A <eos> $B <eos>",
                                                      special_tokens=[("<eos>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>",
                                   model_max_length=64)


@functools.cache
def sample_model(kind: str) -> str | None:
    """The folder of the tiny ``kind`` model (``"reward"`` or ``"seq2seq"``), built once per process;
    None when torch, transformers or tokenizers is not installed."""
    try:
        import torch  # deferred: heavy optional dependencies, needed only to build the sample model
        import transformers
    except ImportError:
        return None
    folder = Path(tempfile.mkdtemp(prefix=f"assay-unitxt-sample-{kind}-"))
    tok = _tokenizer()
    model: Any
    config: Any
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        if kind == "reward":
            config = transformers.BertConfig(  # num_labels: a PretrainedConfig keyword its stubs do not list
                vocab_size=len(tok), hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                max_position_embeddings=64, num_labels=1, pad_token_id=0, initializer_range=0.5)  # type: ignore[call-arg]
            model = transformers.BertForSequenceClassification(config)
        else:
            config = transformers.T5Config(  # decoder_start_token_id: a PretrainedConfig keyword
                vocab_size=len(tok), d_model=16, d_kv=8, d_ff=32, num_layers=2, num_decoder_layers=2, num_heads=2,
                eos_token_id=1, pad_token_id=0, decoder_start_token_id=0,  # type: ignore[call-arg]
                initializer_factor=2.0)
            model = transformers.T5ForConditionalGeneration(config)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)
