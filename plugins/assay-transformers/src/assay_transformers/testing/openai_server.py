"""A real OpenAI-compatible server for tests: ``transformers serve`` on a tiny local model folder.

Nothing is downloaded: :func:`build_tiny_chat_model` saves a tiny random GPT-2 model (a
word-level tokenizer on a small vocabulary, a chat template, sampling switched on in its
``generation_config.json``) to a folder, and :func:`start_server` runs
``transformers serve FOLDER`` in a subprocess with ``HF_HUB_OFFLINE=1``, on a free port of
127.0.0.1, and waits until ``/health`` answers. The server needs the ``[serve]`` extra of
assay-transformers (``openai``, ``fastapi``, ``uvicorn``, ``accelerate``; ``make setup`` installs them with
the test extra).

In a test (the pytest plugin :mod:`assay_transformers.testing.pytest_plugin`, loaded in
every pytest run where assay-transformers is installed, provides the session fixture
``openai_server``; any plugin's tests can use it without importing anything)::

    def test_my_judge(openai_server):
        from assay_transformers.openai_api import OpenAIClient

        client = OpenAIClient(openai_server.base_url, model=openai_server.model)
        answers = client.complete("what is the capital of france", n=3, max_tokens=8,
                                  temperature=1.0, seed=0)

Or by hand, for a server of one's own (a test that kills it, another folder)::

    with start_server(build_tiny_chat_model(tmp_path / "m")) as server:
        ...
        server.kill()   # SIGKILL: the requests after it fail as a dead server's do

What this server does (transformers 5.x): it ignores ``n`` (one choice per request, the
client asks again) and ``logprobs`` (no log-probabilities), honours ``seed`` (it seeds torch
before generating, so a request with the same prompt and seed gives the same answer),
``temperature`` (0: greedy), ``top_p`` and ``max_tokens``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["WORDS", "LocalServer", "build_tiny_chat_model", "free_port", "launch", "start_server"]

#: the tiny model's vocabulary (besides ``<pad>``, ``<eos>``, ``<unk>``)
WORDS = ["the", "a", "capital", "of", "france", "paris", "is", "what", "who", "river", "city", "big", "small", "red",
         "blue", "answer", "question", "yes", "no", "one", "two", "three"]

#: the chat template: the messages' contents, space-separated (the word-level tokenizer splits on spaces)
CHAT_TEMPLATE = "{% for m in messages %}{{ m['content'] }} {% endfor %}"


def build_tiny_chat_model(folder: str | os.PathLike[str], *, seed: int = 0, words: list[str] | None = None) -> Path:
    """Save a tiny random GPT-2 chat model with its tokenizer to ``folder``; return the folder.

    ``words``: its vocabulary besides the special tokens (default :data:`WORDS`; no spaces in a
    word: the tokenizer splits on whitespace), e.g. with ``"True"`` or numbers for a test of
    P(True) or verbalized confidence.

    The weights are scaled up (``initializer_range=0.25``) so that answers vary from token to
    token; ``generation_config.json`` samples (``do_sample=True``, ``top_k=0``) unless a request
    sets ``temperature=0``, so sampled answers differ and greedy ones are greedy.
    """
    # deferred: torch, tokenizers and transformers are heavy; only a test building a model loads them
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import GenerationConfig, GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    folder = Path(folder)
    words = list(WORDS if words is None else words)
    if not words or len(set(words)) != len(words) or any(not isinstance(w, str) or not w or w.split() != [w]
                                                         for w in words):
        raise ValueError(f"build_tiny_chat_model: 'words' must be distinct non-empty words without spaces; got "
                         f"{words!r}.")
    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", "<unk>", *words])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.decoder = decoders.WordPiece(prefix="##")  # joins the words with spaces
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    tok.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=32, n_layer=2, n_head=2, bos_token_id=1,
                     eos_token_id=1, pad_token_id=0, initializer_range=0.25)
    model = GPT2LMHeadModel(cfg)
    model.generation_config = GenerationConfig(do_sample=True, top_k=0, top_p=1.0, temperature=1.0, bos_token_id=1,
                                               eos_token_id=1, pad_token_id=0)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def free_port() -> int:
    """A TCP port of 127.0.0.1 free now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer:
    """A running ``transformers serve`` subprocess: ``base_url`` (``http://127.0.0.1:PORT/v1``), ``model``
    (the name its requests must carry: the folder's path), ``port``, ``process``; ``stop()``, ``kill()``."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, model: str, log: Path) -> None:
        self.process, self.port, self.model, self.log = process, port, model, log
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def __repr__(self) -> str:
        return f"LocalServer({self.base_url!r}, model={self.model!r}, pid={self.process.pid})"

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the server (its process group: the server and nothing else); wait until it is gone."""
        self._signal(signal.SIGKILL)

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds."""
        if not self.alive():
            return
        self._signal(signal.SIGTERM, timeout)
        if self.alive():
            self.kill()

    def _signal(self, sig: int, timeout: float = 10.0) -> None:
        if self.alive():
            # the server was started in a session of its own: its group holds it and its children only
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _serve_command(model_dir: Path, port: int) -> list[str]:
    exe = shutil.which("transformers", path=str(Path(sys.executable).parent)) or shutil.which("transformers")
    head = [exe] if exe else [sys.executable, "-c", "from transformers.cli.transformers import main; main()"]
    return [*head, "serve", str(model_dir), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu",
            "--dtype", "float32", "--log-level", "warning"]


def start_server(model_dir: str | os.PathLike[str], *, port: int | None = None, startup_timeout: float = 180.0,
                 log: str | os.PathLike[str] | None = None) -> LocalServer:
    """Start ``transformers serve`` on ``model_dir`` (offline) and wait until it answers ``/health``.

    ``log``: the file the server's output goes to (default: ``serve-PORT.log`` beside the
    folder). A server that exits or does not answer within ``startup_timeout`` seconds is
    stopped and a ``RuntimeError`` shows its log's last lines.
    """
    model_dir = Path(model_dir).resolve()
    port = port or free_port()
    log_path = Path(log) if log is not None else model_dir.parent / f"serve-{port}.log"
    return launch(_serve_command(model_dir, port), port=port, model=str(model_dir), log=log_path,
                  probe="/health", what="transformers serve", startup_timeout=startup_timeout)


def launch(command: list[str], *, port: int, model: str, log: Path, probe: str, what: str,
           startup_timeout: float = 180.0, server_class: type[LocalServer] = LocalServer,
           **attributes: Any) -> LocalServer:
    """Run ``command`` (a server listening on 127.0.0.1:``port``) offline, in a session of its own, its output
    to ``log``; wait until ``GET probe`` answers 200 and return it as ``server_class(...)`` with ``attributes``.

    A server that exits or does not answer within ``startup_timeout`` seconds is stopped and a
    ``RuntimeError`` names ``what`` and shows its log's last lines.
    """
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                   start_new_session=True)
    server = server_class(process, port, model, log, **attributes)
    deadline = time.monotonic() + startup_timeout
    last_error: Exception | None = None  # why the last probe failed (said if the server never answers)
    while time.monotonic() < deadline:
        if not server.alive():
            raise RuntimeError(f"{what} exited with code {process.returncode} before answering; "
                               f"its log ({log}):\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{probe}", timeout=2) as r:
                if r.status == 200:
                    return server
        except (urllib.error.URLError, OSError) as exc:  # not listening yet: probe again until the deadline
            last_error = exc
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"{what} did not answer {probe} within {startup_timeout:g} s (last probe: "
                       f"{last_error!r}); its log ({log}):\n{server.log_tail()}")
