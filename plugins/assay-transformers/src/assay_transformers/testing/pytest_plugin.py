"""pytest fixtures of assay-transformers (entry point ``pytest11``: ``assay-transformers``).

``openai_server``
    Session-scoped: a real ``transformers serve`` process on a tiny random chat model built in
    a temporary folder (offline), as a :class:`~assay_transformers.testing.openai_server.LocalServer`
    (``base_url``, ``model``); stopped at the end of the session. Use it with
    :class:`~assay_transformers.openai_api.OpenAIClient`::

        def test_answers(openai_server):
            client = OpenAIClient(openai_server.base_url, model=openai_server.model)
            assert client.complete("what is the capital of france", max_tokens=4, temperature=0)

    Do not kill it (it is shared); a test that kills a server starts its own with
    :func:`~assay_transformers.testing.openai_server.start_server`.

``llama_cpp_server``
    Session-scoped: llama-cpp-python's OpenAI server (``python -m llama_cpp.server``), the one
    that returns log-probabilities, on a tiny random Llama model converted to GGUF in a temporary
    folder (:mod:`assay_transformers.testing.tiny_gguf`; offline), as a
    :class:`~assay_transformers.testing.llama_cpp_server.LlamaCppServer` (``base_url``,
    ``model``, and ``tiny``: the Hugging Face folder of the same model, ``tiny.hf_dir``, and each
    token's id by its text, ``tiny.piece_ids``). Needs the ``[llama]`` extra; a test without it
    fails with the ImportError (never skipped). Do not kill it (it is shared).

This module is imported by pytest at start-up, so it imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def openai_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A running ``transformers serve`` on a tiny local chat model (module docstring)."""
    from assay_transformers.testing.openai_server import build_tiny_chat_model, start_server

    folder = build_tiny_chat_model(tmp_path_factory.mktemp("openai-server") / "tiny-chat")
    server = start_server(folder)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llama_cpp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A running llama-cpp-python OpenAI server on a tiny local Llama model in GGUF (module docstring)."""
    from assay_transformers.testing.llama_cpp_server import start_llama_cpp_server
    from assay_transformers.testing.tiny_gguf import build_tiny_llama

    tiny = build_tiny_llama(tmp_path_factory.mktemp("llama-cpp-server"))
    server = start_llama_cpp_server(tiny)
    try:
        yield server
    finally:
        server.stop()
