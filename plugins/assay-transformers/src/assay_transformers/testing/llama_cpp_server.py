"""A real OpenAI-compatible server that returns log-probabilities, for tests: llama-cpp-python's server.

``transformers serve`` (:mod:`assay_transformers.testing.openai_server`) ignores ``logprobs``;
llama-cpp-python's server (``python -m llama_cpp.server``) returns them, on both endpoints
(``/v1/completions``: ``logprobs=K``; ``/v1/chat/completions``: ``logprobs=true``,
``top_logprobs=K``). :func:`start_llama_cpp_server` runs it on a GGUF file (the tiny model of
:func:`~assay_transformers.testing.tiny_gguf.build_tiny_llama`, built at test time: nothing is
downloaded) on a free port of 127.0.0.1 and waits until ``/v1/models`` answers. It needs the
``[llama]`` extra of assay-transformers (``llama-cpp-python[server]``, ``gguf``; ``make setup``
installs it, compiling llama.cpp for the CPU: see docs/blackbox.md).

In a test, the session fixture ``llama_cpp_server``
(:mod:`assay_transformers.testing.pytest_plugin`) gives a running one::

    def test_logprobs(llama_cpp_server):
        client = OpenAIClient(llama_cpp_server.base_url, model=llama_cpp_server.model, logprobs=True)
        (answer,) = client.complete("what is the capital of france", max_tokens=4, temperature=0)
        answer.token_log_probs     # the server's log-probabilities
        llama_cpp_server.tiny.hf_dir  # the Hugging Face folder of the same model (the reference)

What this server does (llama-cpp-python 0.3.36): the log-probabilities are the model's
(``log_softmax`` of the logits, before temperature or top-p), of the tokens it generated (not
of the end-of-sequence token that stops it); ``top_logprobs`` lists the K most likely tokens and
the chosen one when it is not among them. It ignores ``n`` (one choice per request; the client
asks again), honours ``seed`` (same prompt and seed: same answer), ``temperature`` (0: greedy),
``top_p`` and ``max_tokens``. The server is started with a float32 KV cache
(``--type_k 0 --type_v 0``; llama.cpp's default is float16) and one thread, so that its numbers
are the float32 model's, reproducible.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, cast

from assay_transformers.testing.openai_server import LocalServer, free_port, launch
from assay_transformers.testing.tiny_gguf import TinyLlama

__all__ = ["LlamaCppServer", "start_llama_cpp_server"]

#: the model name the server answers to (``--model_alias``)
ALIAS = "tiny-llama"

#: ggml's float32 type id (``--type_k`` / ``--type_v``: the KV cache in float32, not llama.cpp's float16)
GGML_TYPE_F32 = 0


class LlamaCppServer(LocalServer):
    """A running ``python -m llama_cpp.server``: as :class:`LocalServer`, plus ``gguf`` (the model file) and
    ``tiny`` (the :class:`~assay_transformers.testing.tiny_gguf.TinyLlama` it came from, or None)."""

    def __init__(self, process: Any, port: int, model: str, log: Path, *, gguf: Path,
                 tiny: TinyLlama | None = None) -> None:
        super().__init__(process, port, model, log)
        self.gguf, self.tiny = gguf, tiny


def _command(gguf: Path, port: int, n_ctx: int) -> list[str]:
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", ALIAS,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "1",
            "--n_threads_batch", "1", "--type_k", str(GGML_TYPE_F32), "--type_v", str(GGML_TYPE_F32),
            "--flash_attn", "false", "--logits_all", "true", "--verbose", "false"]


def start_llama_cpp_server(model: TinyLlama | str | os.PathLike[str], *, port: int | None = None,
                           n_ctx: int = 256, startup_timeout: float = 180.0,
                           log: str | os.PathLike[str] | None = None) -> LlamaCppServer:
    """Start llama-cpp-python's OpenAI server on ``model`` (a GGUF file or a :class:`TinyLlama`), offline.

    ``log``: the file the server's output goes to (default: ``llama-cpp-PORT.log`` beside the
    file). A server that exits or does not answer within ``startup_timeout`` seconds is stopped
    and a ``RuntimeError`` shows its log's last lines (a missing ``llama_cpp`` package among them:
    install the ``[llama]`` extra).
    """
    tiny, gguf = (model, model.gguf) if isinstance(model, TinyLlama) else (None, Path(model))
    gguf = gguf.resolve()
    if not gguf.is_file():
        raise FileNotFoundError(f"start_llama_cpp_server: no GGUF file at {gguf}")
    port = port or free_port()
    log_path = Path(log) if log is not None else gguf.parent / f"llama-cpp-{port}.log"
    server = launch(_command(gguf, port, n_ctx), port=port, model=ALIAS, log=log_path, probe="/v1/models",
                    what="llama-cpp-python's server (python -m llama_cpp.server)", startup_timeout=startup_timeout,
                    server_class=LlamaCppServer, gguf=gguf, tiny=tiny)
    return cast(LlamaCppServer, server)
