"""A tiny random Llama model as a Hugging Face folder and as a GGUF file, built at test time (nothing downloaded).

:func:`build_tiny_llama` saves a tiny random ``LlamaForCausalLM`` (float32) with a byte-level
BPE tokenizer on a small vocabulary (the printable ASCII characters, the words of
:data:`~assay_transformers.testing.openai_server.WORDS` merged into one token each, and the two
special tokens ``<start>`` / ``<stop>``) to ``FOLDER/hf``, and writes the same weights and
tokenizer to ``FOLDER/tiny-llama.gguf`` (all tensors float32) with the ``gguf`` package's
writer (:func:`write_gguf`), the file llama.cpp and llama-cpp-python's OpenAI server load.

The two are the same model: the test computes log-probabilities with the Hugging Face folder
(transformers, float32) and compares them with what llama.cpp's server returns; the token ids
match because llama.cpp's BPE tokenizer (pre-tokenizer ``gpt-2``, the same merges) and the
Hugging Face one (``tokenizers``' byte-level BPE) split the texts the same way
(``tests/test_llama_cpp_server.py`` checks it with llama.cpp's own tokenizer).

Why our own converter: llama.cpp's ``convert_hf_to_gguf.py`` is in llama-cpp-python's source
archive but not in the installed package (pip keeps no copy of it), and it recognises a BPE
tokenizer only by the hash of its output on a fixed text, from a list of published models, so it
rejects a tokenizer built here. :func:`write_gguf` writes the few metadata keys and tensors of the
``llama`` architecture that llama.cpp reads, with the ``gguf`` package's ``GGUFWriter``.

The special tokens are of the NORMAL token type, so llama.cpp renders them as their text
(``"<stop>"``) in log-probability alternatives instead of an empty string: each token's text is
then unique and names one token id (:attr:`TinyLlama.piece_ids`). llama.cpp still ends a
generation at ``<stop>`` (the file's EOS id).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from assay_transformers.testing.openai_server import CHAT_TEMPLATE, WORDS

__all__ = ["BOS", "EOS", "TinyLlama", "build_tiny_llama", "write_gguf"]

#: the special tokens' texts (ids 0 and 1)
BOS, EOS = "<start>", "<stop>"


@attrs.frozen
class TinyLlama:
    """What :func:`build_tiny_llama` made: ``hf_dir`` (a Hugging Face model folder), ``gguf`` (the same model as
    one GGUF file) and ``piece_ids`` (each token's text, as llama.cpp returns it, to its id)."""

    hf_dir: Path
    gguf: Path
    piece_ids: dict[str, int]


def _byte_chars() -> dict[int, str]:
    """GPT-2's byte-level alphabet: each byte's stand-in character (printable bytes stand for themselves)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


def _vocabulary() -> tuple[list[str], list[tuple[str, str]]]:
    """The tokens (in id order) and the BPE merges (in rank order)."""
    byte_char = _byte_chars()
    singles = [byte_char[b] for b in [*range(32, 127), ord("\n")]]  # printable ASCII, space ("Ġ"), newline ("Ċ")
    tokens = [BOS, EOS, *singles]
    merges: list[tuple[str, str]] = []
    seen = set(tokens)
    space = byte_char[ord(" ")]
    for word in WORDS:
        for start in (space, ""):  # " paris" (after a space) and "paris" (at the start of a text)
            pieces = [start, *word] if start else list(word)
            acc = pieces[0]
            for ch in pieces[1:]:
                merged = acc + ch
                if merged not in seen:
                    merges.append((acc, ch))
                    tokens.append(merged)
                    seen.add(merged)
                acc = merged
    return tokens, merges


def _tokenizer(tokens: list[str], merges: list[tuple[str, str]]) -> Any:
    # deferred: tokenizers and transformers are heavy; only a test building a model loads them
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tk.decoder = decoders.ByteLevel()
    # llama.cpp puts BOS first when the GGUF says add_bos_token (a completions prompt; not a chat one)
    tk.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", special_tokens=[(BOS, 0)])
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, bos_token=BOS, eos_token=EOS)
    tok.chat_template = CHAT_TEMPLATE
    return tok


def build_tiny_llama(folder: str | os.PathLike[str], *, seed: int = 0, hidden_size: int = 64, layers: int = 2,
                     heads: int = 4, kv_heads: int = 2, init_range: float = 0.25) -> TinyLlama:
    """Save a tiny random Llama model to ``FOLDER/hf`` and as ``FOLDER/tiny-llama.gguf`` (module docstring).

    ``kv_heads < heads``: grouped-query attention, so that the conversion of both projections is
    exercised. ``init_range`` scales the random weights up (as ``build_tiny_chat_model`` does) so
    the next-token distributions are far from uniform: answers and log-probabilities vary.
    """
    # deferred: torch and transformers are heavy; only a test building a model loads them
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    folder = Path(folder)
    tokens, merges = _vocabulary()
    tok = _tokenizer(tokens, merges)
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tokens), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                      num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
                      max_position_embeddings=256, rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=0,
                      eos_token_id=1, pad_token_id=None, initializer_range=init_range)
    model = LlamaForCausalLM(cfg).float().eval()
    with torch.no_grad():  # the norms' weights random too (they start at 1), so the conversion of each shows
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
    model.generation_config = GenerationConfig(bos_token_id=0, eos_token_id=1)
    hf_dir = folder / "hf"
    model.save_pretrained(hf_dir)
    tok.save_pretrained(hf_dir)
    gguf_path = write_gguf(model, tokens, merges, folder / "tiny-llama.gguf")
    pieces = {tok.decode([i], skip_special_tokens=False): i for i in range(len(tokens))}
    if len(pieces) != len(tokens):  # the vocabulary above gives each token its own text
        raise RuntimeError("tiny llama: two tokens share a text")
    return TinyLlama(hf_dir=hf_dir, gguf=gguf_path, piece_ids=pieces)


def _rope_rows(w: np.ndarray, n_head: int) -> np.ndarray:
    """Reorder a q/k projection's rows from Hugging Face's rotary layout to llama.cpp's.

    Hugging Face's Llama rotates dimension ``i`` of a head with dimension ``i + d/2`` (``rotate_half``);
    llama.cpp's ``llama`` architecture rotates adjacent pairs ``(2i, 2i + 1)``. Within each head,
    row ``i`` of the first half goes to ``2i`` and row ``i`` of the second half to ``2i + 1``.
    """
    d = w.shape[0] // n_head
    return w.reshape(n_head, 2, d // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _rope_theta(cfg: Any) -> float:
    theta = getattr(cfg, "rope_theta", None)
    if theta is None:  # transformers 5: inside rope_parameters
        theta = (getattr(cfg, "rope_parameters", None) or {}).get("rope_theta", 10000.0)
    return float(theta)


def write_gguf(model: Any, tokens: list[str], merges: list[tuple[str, str]], path: str | os.PathLike[str]) -> Path:
    """Write a Hugging Face ``LlamaForCausalLM`` and its byte-level BPE vocabulary as a float32 GGUF file.

    Only what llama.cpp's ``llama`` architecture reads: the hyper-parameters, the tokenizer
    (``gpt2`` model, ``gpt-2`` pre-tokenizer, tokens, types, merges, BOS/EOS, ``add_bos_token``),
    the chat template, and the tensors under llama.cpp's names (module docstring: why not
    llama.cpp's own script).
    """
    # deferred: gguf is a test dependency (the [llama] extra), loaded by the tests that build a GGUF file
    import gguf

    cfg = model.config
    n_head, n_kv = cfg.num_attention_heads, cfg.num_key_value_heads
    path = Path(path)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("assay tiny llama")
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_rope_freq_base(_rope_theta(cfg))
    w.add_rope_dimension_count(cfg.hidden_size // n_head)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.NORMAL] * len(tokens))
    w.add_token_merges([f"{a} {b}" for a, b in merges])
    w.add_bos_token_id(0)
    w.add_eos_token_id(1)
    w.add_add_bos_token(True)
    w.add_chat_template(CHAT_TEMPLATE)
    sd = {k: v.detach().to("cpu").float().numpy() for k, v in model.state_dict().items()}
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    per_layer = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
                 "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
                 "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
                 "mlp.down_proj": "ffn_down"}
    for i in range(cfg.num_hidden_layers):
        for hf, cpp in per_layer.items():
            names[f"model.layers.{i}.{hf}.weight"] = f"blk.{i}.{cpp}.weight"
    missing = sorted(set(sd) - set(names))
    if missing:
        raise ValueError(f"write_gguf: tensors without a GGUF name: {missing}")
    for hf, cpp in names.items():
        arr = sd[hf]
        if hf.endswith("q_proj.weight"):
            arr = _rope_rows(arr, n_head)
        elif hf.endswith("k_proj.weight"):
            arr = _rope_rows(arr, n_kv)
        w.add_tensor(cpp, np.ascontiguousarray(arr, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
