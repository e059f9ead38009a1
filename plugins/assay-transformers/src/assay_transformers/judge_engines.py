"""Inference engines for model-judged metrics: a judge model that turns prompts into answers.

An engine is any object with

- ``identity``: a string naming the model exactly (it keys the judgement cache and is the
  ``model`` of the metric's provenance signature), and
- ``generate(prompts) -> list[str]``: one answer per prompt, in order;

and optionally ``settings``, a dict of the generation settings that change the answers
(part of the cache key). :class:`OpenAIJudgeEngine` asks a model behind an OpenAI-compatible
HTTP endpoint (identity ``openai:<model name>``). :class:`HFJudgeEngine` runs a local Hugging Face model folder
(greedy decoding, through :class:`~assay_transformers.generation.HFModel`, loaded with
``local_files_only=True`` by :func:`~assay_transformers.loading.load_model`); its identity
is the folder's name and a SHA-256 of every file in it (:func:`folder_digest`), so the
same weights at another path are the same judge, and other weights are another judge.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from assay.errors import EvaluationError, InvalidParameterError
from assay.validation import check_int
from assay_transformers.loading import folder_digest  # kept importable from here (its documented place)

__all__ = ["HFJudgeEngine", "JudgeEngine", "OpenAIJudgeEngine", "RuleJudge", "engine_settings", "folder_digest",
           "get_hf_engine"]


@runtime_checkable
class JudgeEngine(Protocol):
    """What a judge metric needs of its model: an ``identity`` and ``generate(prompts)``."""

    identity: str

    def generate(self, prompts: Sequence[str]) -> list[str]:
        """One answer per prompt, in order."""


def engine_settings(engine: Any) -> dict[str, Any]:
    """The engine's generation settings (``settings``, default none), checked to be a dict."""
    settings = getattr(engine, "settings", None) or {}
    if not isinstance(settings, dict):
        raise InvalidParameterError(f"The judge engine {engine!r}: 'settings' must be a dict; got "
                                    f"{type(settings).__name__}.")
    return settings


class HFJudgeEngine:
    """A local Hugging Face model folder as a judge: greedy answers of at most ``max_new_tokens`` tokens.

    Parameters
    ----------
    folder : path of a folder written by ``save_pretrained`` (never downloaded)
    max_new_tokens : int, answer length limit (a judge answers with a word or a number)
    device, dtype : as for :func:`~assay_transformers.loading.load_model`
    chat_template : bool or None
        Wrap each prompt as one user message with the tokenizer's chat template. ``None``
        (default): when the tokenizer has one; ``True`` requires one.

    The model is loaded on the first :meth:`generate` (never at construction); answers are
    stripped of surrounding whitespace.
    """

    def __init__(self, folder: str | os.PathLike[str], *, max_new_tokens: int = 16, device: str | None = None,
                 dtype: str | None = "float32", chat_template: bool | None = None) -> None:
        from assay_transformers.loading import _check_folder

        self.folder = _check_folder(folder).resolve()
        self.max_new_tokens = check_int(max_new_tokens, "max_new_tokens", low=1, owner="HFJudgeEngine")
        self.device, self.dtype = device, dtype
        if chat_template is not None and not isinstance(chat_template, bool):
            raise InvalidParameterError(f"HFJudgeEngine: 'chat_template' must be True, False or None; got "
                                        f"{chat_template!r}.")
        self.chat_template = chat_template
        self._model: Any = None
        self._lock = threading.Lock()
        self.generated = 0  #: prompts sent to the model by this engine

    @property
    def identity(self) -> str:
        """``hf:<folder name>@<first 16 hex digits of folder_digest>`` (files changed since: a new digest)."""
        return f"hf:{self.folder.name}@{folder_digest(self.folder)[:16]}"

    @property
    def settings(self) -> dict[str, Any]:
        return {"decoding": "greedy", "max_new_tokens": self.max_new_tokens,
                "chat_template": self.chat_template}

    def __repr__(self) -> str:
        return f"HFJudgeEngine({str(self.folder)!r}, max_new_tokens={self.max_new_tokens})"

    def __deepcopy__(self, memo: dict[int, Any]) -> HFJudgeEngine:
        return self  # copies of a metric share the loaded model

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_lock")
        state["_model"] = None  # loaded again from the folder in the other process
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def model(self) -> Any:
        """The :class:`~assay_transformers.generation.HFModel` (loaded on first use)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    from assay_transformers.generation import HFModel

                    self._model = HFModel(self.folder, device=self.device, dtype=self.dtype)
        return self._model

    def _wrap(self, prompts: list[str]) -> list[str]:
        tok = self.model.tokenizer
        has = bool(getattr(tok, "chat_template", None))
        if self.chat_template is True and not has:
            raise InvalidParameterError(f"{self!r}: chat_template=True but the tokenizer of {str(self.folder)!r} "
                                        "has no chat template.")
        if not has or self.chat_template is False:
            return prompts
        return [tok.apply_chat_template([{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True)
                for p in prompts]

    def generate(self, prompts: Sequence[str]) -> list[str]:
        prompts = list(prompts)
        if not prompts:
            return []
        out = self.model.generate(self._wrap(prompts), max_new_tokens=self.max_new_tokens, rows=False)
        if len(out) != len(prompts):  # pragma: no cover - HFModel returns one list per prompt
            raise EvaluationError(f"{self!r} returned {len(out)} answers for {len(prompts)} prompts.")
        self.generated += len(prompts)
        return [seqs[0].text.strip() for seqs in out]


_ENGINES: dict[tuple[Any, ...], HFJudgeEngine] = {}
_ENGINES_LOCK = threading.Lock()


def get_hf_engine(folder: str | os.PathLike[str], *, max_new_tokens: int = 16, device: str | None = None,
                  dtype: str | None = "float32", chat_template: bool | None = None) -> HFJudgeEngine:
    """The process-wide :class:`HFJudgeEngine` of these settings (the model is loaded once per process)."""
    key = (str(Path(folder).expanduser().resolve()), max_new_tokens, device, dtype, chat_template)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = HFJudgeEngine(folder, max_new_tokens=max_new_tokens, device=device, dtype=dtype,
                                                   chat_template=chat_template)
    return engine


class OpenAIJudgeEngine:
    """A model behind an OpenAI-compatible HTTP endpoint as a judge: greedy answers (``temperature=0``).

    Parameters
    ----------
    base_url : the server's API root (``"http://127.0.0.1:8000/v1"``)
    model : the model name sent with each request; the judge's identity is ``openai:<model>``
    endpoint : ``"chat"`` (the prompt as one user message; the server applies the chat template) or
        ``"completions"`` (the prompt as it is)
    max_new_tokens : answer length limit (``max_tokens`` of each request)
    timeout, max_retries : per request, as for :class:`~assay_transformers.openai_api.OpenAIClient`

    The requests go through :class:`~assay_transformers.openai_api.OpenAIClient` (the ``openai``
    package, ``pip install 'assay-transformers[openai]'``), one request per prompt, in order; a
    request that still fails after its retries is a
    :class:`~assay_transformers.openai_api.ModelRequestError` naming the URL, the model and the
    prompt (the batches answered before it are saved when the metric has a ``cache_dir``). The API
    key is read from ``OPENAI_API_KEY`` (a local server needs none), never from an option, so it
    is never in a catalog name, a signature or the cache.
    """

    def __init__(self, base_url: str, model: str, *, endpoint: str = "chat", max_new_tokens: int = 16,
                 timeout: float = 60.0, max_retries: int = 2) -> None:
        from assay_transformers.openai_api import OpenAIClient

        self.max_new_tokens = check_int(max_new_tokens, "max_new_tokens", low=1, owner="OpenAIJudgeEngine")
        self.client = OpenAIClient(base_url, model, endpoint=endpoint, timeout=timeout, max_retries=max_retries)
        self.identity = f"openai:{model}"
        self.generated = 0  #: prompts answered by the server for this engine

    @property
    def settings(self) -> dict[str, Any]:
        return {"decoding": "greedy", "max_new_tokens": self.max_new_tokens, "endpoint": self.client.endpoint}

    def __repr__(self) -> str:
        return f"OpenAIJudgeEngine({self.client.base_url!r}, model={self.client.model!r})"

    def __deepcopy__(self, memo: dict[int, Any]) -> OpenAIJudgeEngine:
        return self  # copies of a metric share the client

    def generate(self, prompts: Sequence[str]) -> list[str]:
        out = []
        for i, prompt in enumerate(prompts):
            (answer,) = self.client.complete(prompt, n=1, max_tokens=self.max_new_tokens, temperature=0, index=i)
            out.append(answer.text.strip())
            self.generated += 1
        return out


class RuleJudge:
    """A judge without a model: the answer to a prompt is the answer of the first rule whose key the prompt contains.

    For examples, conformance checks and dry runs of a judging setup (templates, parsing, the
    cache) without loading a model; its identity is ``rules:<hash of the rules and default>``.

    >>> RuleJudge({"Paris": "9", "Lyon": "2"}).generate(["Prediction: Paris", "Prediction: Rome"])
    ['9', '']
    """

    def __init__(self, rules: dict[str, str], default: str = "") -> None:
        if not isinstance(rules, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in rules.items()):
            raise InvalidParameterError(f"RuleJudge: 'rules' must be a dict of str to str; got {rules!r:.80}.")
        if not isinstance(default, str):
            raise InvalidParameterError(f"RuleJudge: 'default' must be a str; got {default!r:.80}.")
        self.rules, self.default = dict(rules), default
        text = json.dumps([sorted(self.rules.items()), default], ensure_ascii=False)
        self.identity = f"rules:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"

    def __repr__(self) -> str:
        return f"RuleJudge({len(self.rules)} rules, identity={self.identity!r})"

    def generate(self, prompts: Sequence[str]) -> list[str]:
        return [next((a for k, a in self.rules.items() if k in p), self.default) for p in prompts]
