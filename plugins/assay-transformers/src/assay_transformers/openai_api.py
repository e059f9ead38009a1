"""A language model behind an OpenAI-compatible HTTP endpoint: sampled answers, and log-probabilities
where the server returns them.

>>> client = OpenAIClient("http://127.0.0.1:8000/v1", model="my-model")           # doctest: +SKIP
>>> answers = client.complete("Q: what is the capital of france? A:", n=5,          # doctest: +SKIP
...                           max_tokens=16, temperature=1.0, seed=0, index=0)
>>> [a.text for a in answers]                                                         # doctest: +SKIP

The requests go through the ``openai`` package (``pip install 'assay-transformers[openai]'``),
imported when a client is created. ``endpoint="chat"`` (default) sends the prompt as one
user message to ``/chat/completions`` (after an optional system message);
``endpoint="completions"`` sends it as is to the legacy ``/completions``. A prompt may also be
a chat, a list of ``{"role": ..., "content": ...}`` messages (``endpoint="chat"`` only), sent as
is (after the system message, unless the chat starts with one of its own).

**n answers.** One request asks for ``n`` choices; a server that returns fewer (several
servers ignore ``n``: ``transformers serve`` and llama-cpp-python's server among them) is
asked again for the missing ones, each further request with the next seed (``seed + 1``,
``seed + 2`` ...) when a seed is given, so the answers are reproducible on a server that
honours ``seed`` and does not depend on which other prompts were sent before. The first time a
client sees it, it warns (:class:`NIgnoredWarning`: the ``n`` answers cost ``n`` requests) and
sets :attr:`OpenAIClient.n_honoured` to False (True once a server returned several choices).

**Log-probabilities.** With ``logprobs=True`` the request asks for them (``top_logprobs``
alternatives per token); a server that returns them fills :attr:`Completion.tokens`,
:attr:`Completion.token_log_probs` and :attr:`Completion.top_log_probs` (the alternatives in the
server's order on the chat endpoint, as LM-Polygraph reads them; by decreasing log-probability
on the completions endpoint, whose JSON gives them as an object), one that does not leaves them
``None``: :attr:`OpenAIClient.logprobs_returned` records what the last request got, and the
black-box backend (:mod:`assay_transformers.blackbox`) makes a statistic that needs them an
error naming the request, never a silent NaN. Which servers return them: docs/blackbox.md.

**Failures.** Each request has a ``timeout`` (seconds) and is retried ``max_retries`` times
(the ``openai`` client's own retry with backoff, on connection errors, timeouts, 408, 409,
429 and 5xx answers). A request that still fails raises :class:`ModelRequestError`, naming
the URL, the model, the prompt's index (``index=``) and the cause; what was received
before it is kept by the caller (the manager keeps the finished batches, see
:mod:`assay_uncertainty.manager.model_loop`).

The API key: ``api_key=`` or, when None, the ``OPENAI_API_KEY`` environment variable the
``openai`` client reads; a local server that needs none gets the placeholder ``"EMPTY"``.
The key is never shown in ``repr`` nor saved.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, cast

import attrs
import numpy as np

from assay.errors import AssayError, InvalidParameterError, MissingDependencyError

__all__ = ["ENDPOINTS", "Completion", "ModelRequestError", "NIgnoredWarning", "OpenAIClient"]

#: the request kinds a client sends: chat messages or a plain prompt
ENDPOINTS = ("chat", "completions")


class ModelRequestError(AssayError, RuntimeError):
    """A request to a model server failed (after its retries) or timed out.

    The message names the URL, the endpoint, the model, the prompt's index and the cause;
    the same are attributes (``url``, ``endpoint``, ``model``, ``index``).
    """

    def __init__(self, message: str, *, url: str, endpoint: str, model: str, index: int | None) -> None:
        super().__init__(message)
        self.url, self.endpoint, self.model, self.index = url, endpoint, model, index


class NIgnoredWarning(UserWarning):
    """A server returned fewer choices than the request's ``n``: the client asks again for the rest, one request
    per missing answer (module docstring). Once per client."""


@attrs.frozen
class Completion:
    """One answer: its text, why it ended, and, where the server returned them, its tokens (strings),
    the log-probability of each (``(T,)``) and the top alternatives at each step (``[(token, logprob), ...]``)."""

    text: str
    finish_reason: str | None = None
    tokens: list[str] | None = None
    token_log_probs: np.ndarray | None = None
    top_log_probs: list[list[tuple[str, float]]] | None = None


def _positive(value: Any, name: str, *, integer: bool = False, zero: bool = False) -> Any:
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    ok = ok and not isinstance(value, bool) and np.isfinite(value) and (value >= 0 if zero else value > 0)
    if not ok:
        what = "an integer" if integer else "a number"
        raise InvalidParameterError(f"OpenAIClient: {name!r} must be {what} {'>= 0' if zero else '> 0'}; got "
                                    f"{value!r}.")
    return value


class OpenAIClient:
    """Requests to one model of an OpenAI-compatible server (module docstring).

    Parameters
    ----------
    base_url : the server's API root, e.g. ``"http://127.0.0.1:8000/v1"``
    model : the model name sent with each request
    endpoint : ``"chat"`` (default) or ``"completions"``
    api_key : None: ``OPENAI_API_KEY``, else the placeholder ``"EMPTY"``
    timeout : seconds per request (default 60)
    max_retries : further tries of a request that failed (default 2)
    logprobs : ask for the tokens' log-probabilities (default False)
    top_logprobs : alternatives per token asked for with ``logprobs`` (default 5; 0: none)
    system_prompt : for ``endpoint="chat"``: a system message sent before the prompt
    """

    def __init__(self, base_url: str, model: str, *, endpoint: str = "chat", api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 2, logprobs: bool = False, top_logprobs: int = 5,
                 system_prompt: str | None = None) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InvalidParameterError(f"OpenAIClient: 'base_url' must be an http(s) URL; got {base_url!r}.")
        if not isinstance(model, str) or not model:
            raise InvalidParameterError(f"OpenAIClient: 'model' must be a non-empty string; got {model!r}.")
        if endpoint not in ENDPOINTS:
            raise InvalidParameterError(f"OpenAIClient: 'endpoint' must be one of {', '.join(ENDPOINTS)}; got "
                                        f"{endpoint!r}.")
        if not isinstance(logprobs, bool):
            raise InvalidParameterError(f"OpenAIClient: 'logprobs' must be true or false; got {logprobs!r}.")
        if system_prompt is not None and (endpoint != "chat" or not isinstance(system_prompt, str)):
            raise InvalidParameterError("OpenAIClient: 'system_prompt' is a string, for endpoint='chat' only; got "
                                        f"{system_prompt!r} with endpoint={endpoint!r}.")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.endpoint = endpoint
        self.timeout = float(_positive(timeout, "timeout"))
        self.max_retries = int(_positive(max_retries, "max_retries", integer=True, zero=True))
        self.logprobs = logprobs
        self.top_logprobs = int(_positive(top_logprobs, "top_logprobs", integer=True, zero=True))
        self.system_prompt = system_prompt
        #: whether the last answered request returned log-probabilities (None before any request)
        self.logprobs_returned: bool | None = None
        #: the number of HTTP requests answered so far
        self.requests = 0
        #: whether the server honours ``n``: False once it returned fewer choices than asked, True once it returned
        #: several; None before either was seen
        self.n_honoured: bool | None = None
        try:
            # deferred: openai is an optional dependency (the [openai] extra), loaded with the first client
            import openai
        except ImportError as exc:
            raise MissingDependencyError("openai", purpose="models behind an OpenAI-compatible endpoint "
                                         "(pip install 'assay-transformers[openai]')") from exc
        self._openai = openai
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY") or "EMPTY"
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=self.timeout,
                                     max_retries=self.max_retries)

    def __repr__(self) -> str:
        return (f"OpenAIClient({self.base_url!r}, model={self.model!r}, endpoint={self.endpoint!r}, "
                f"logprobs={self.logprobs})")

    @property
    def url(self) -> str:
        """The full URL the requests go to."""
        return f"{self.base_url}/{'chat/completions' if self.endpoint == 'chat' else 'completions'}"

    # ------------------------------------------------------------------ requests
    def complete(self, prompt: str | Sequence[Mapping[str, str]], *, n: int = 1, max_tokens: int = 100,
                 temperature: float | None = None, top_p: float | None = None, stop: Sequence[str] | None = None,
                 seed: int | None = None, index: int | None = None, request: str | None = None) -> list[Completion]:
        """``n`` answers to ``prompt`` (a string, or a chat: module docstring); ``index`` names the prompt
        in errors ("for prompt 3"), ``request`` replaces that name when given ("for follow-up prompt 0 of ...").

        ``temperature=0`` asks for the greedy answer; None leaves the server's default.
        """
        where = request or f"prompt {index}"
        if not isinstance(prompt, str):
            ok = isinstance(prompt, Sequence) and len(prompt) > 0 and all(
                isinstance(m, Mapping) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                for m in prompt)
            if not ok:
                raise InvalidParameterError(f"OpenAIClient: {where} must be a string or a non-empty chat (a list of "
                                            f"{{'role': str, 'content': str}} messages); got {prompt!r:.200}.")
            if self.endpoint != "chat":
                raise InvalidParameterError(f"OpenAIClient: {where} is a chat (a list of messages); the "
                                            "'completions' endpoint takes a string: use endpoint='chat'.")
        _positive(n, "n", integer=True)
        _positive(max_tokens, "max_tokens", integer=True)
        if seed is not None:
            _positive(seed, "seed", integer=True, zero=True)
        out: list[Completion] = []
        tries = 0
        while len(out) < n:
            got = self._request(prompt, n=n - len(out), max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                                stop=stop, seed=None if seed is None else seed + tries, index=index, request=request)
            if not got:
                raise self._error(index, f"the server returned no choices (asked for {n - len(out)})", request)
            self._note_choices(len(got), n - len(out))
            out.extend(got[: n - len(out)])
            tries += 1
        return out

    def _note_choices(self, got: int, asked: int) -> None:
        """Record whether the server honours ``n``; warn the first time it does not."""
        if got < asked:
            if self.n_honoured is not False:
                warnings.warn(f"OpenAIClient: {self.url} (model {self.model!r}) returned {got} choice(s) for "
                              f"n={asked}: the server ignores 'n'; the client asks again for each missing answer (one "
                              "request each, the seed + 1, + 2 ... when a seed is given).", NIgnoredWarning,
                              stacklevel=3)
            self.n_honoured = False
        elif got > 1 and self.n_honoured is None:
            self.n_honoured = True

    def _error(self, index: int | None, cause: str, request: str | None = None) -> ModelRequestError:
        where = f" for {request}" if request else "" if index is None else f" for prompt {index}"
        return ModelRequestError(f"The request to {self.url} (model {self.model!r}){where} failed: {cause}.",
                                 url=self.url, endpoint=self.endpoint, model=self.model, index=index)

    def _request(self, prompt: str | Sequence[Mapping[str, str]], *, n: int, max_tokens: int,
                 temperature: float | None, top_p: float | None, stop: Sequence[str] | None, seed: int | None,
                 index: int | None, request: str | None = None) -> list[Completion]:
        args: dict[str, Any] = {"model": self.model, "n": n, "max_tokens": max_tokens}
        for key, value in (("temperature", temperature), ("top_p", top_p), ("seed", seed)):
            if value is not None:
                args[key] = value
        if stop:
            args["stop"] = list(stop)
        chat = self.endpoint == "chat"
        if self.logprobs:
            if chat:
                # top_logprobs sent even when 0: llama-cpp-python's server returns no log-probabilities at all for
                # logprobs=true without top_logprobs
                args["logprobs"] = True
                args["top_logprobs"] = self.top_logprobs
            else:
                args["logprobs"] = self.top_logprobs
        try:
            if chat:
                if isinstance(prompt, str):
                    turns: list[Any] = [{"role": "user", "content": prompt}]
                else:
                    turns = [{"role": m["role"], "content": m["content"]} for m in prompt]
                own_system = turns[0]["role"] == "system"
                messages: list[Any] = ([{"role": "system", "content": self.system_prompt}]
                                       if self.system_prompt and not own_system else [])
                messages.extend(turns)
                response = self._client.chat.completions.create(messages=messages, **args)
            else:
                # (a chat for this endpoint is rejected by complete(), before any request)
                response = self._client.completions.create(prompt=cast(str, prompt), **args)
        except self._openai.APITimeoutError as exc:
            raise self._error(index, f"no answer within {self.timeout:g} s, {self.max_retries} retries "
                                     f"({type(exc).__name__})", request) from exc
        except self._openai.APIStatusError as exc:
            raise self._error(index, f"HTTP {exc.status_code} after {self.max_retries} retries: "
                                     f"{str(exc)[:300]}", request) from exc
        except self._openai.APIError as exc:
            raise self._error(index, f"{type(exc).__name__} after {self.max_retries} retries: {exc}",
                              request) from exc
        self.requests += 1
        choices = sorted(response.choices or [], key=lambda c: c.index)
        completions = [self._completion(c, chat, index, request) for c in choices]
        self.logprobs_returned = bool(completions) and all(c.token_log_probs is not None for c in completions)
        return completions

    def _completion(self, choice: Any, chat: bool, index: int | None, request: str | None = None) -> Completion:
        text = (choice.message.content if chat else choice.text)
        if text is None:
            raise self._error(index, "a choice without text (content is null)", request)
        lp = getattr(choice, "logprobs", None)
        tokens = values = top = None
        if lp is not None:
            if chat and getattr(lp, "content", None) is not None:
                tokens = [t.token for t in lp.content]
                values = [t.logprob for t in lp.content]
                top = [[(a.token, float(a.logprob)) for a in (t.top_logprobs or [])] for t in lp.content]
            elif not chat and getattr(lp, "token_logprobs", None) is not None:
                tokens = list(lp.tokens or [])
                values = list(lp.token_logprobs)
                top = [sorted(((k, float(v)) for k, v in (d or {}).items()), key=lambda kv: -kv[1])
                       for d in (lp.top_logprobs or [{}] * len(values))]
        arr = None if values is None else np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)
        return Completion(text=text, finish_reason=getattr(choice, "finish_reason", None), tokens=tokens,
                          token_log_probs=arr, top_log_probs=top)
