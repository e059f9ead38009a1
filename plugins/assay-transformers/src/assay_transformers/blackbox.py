"""Black-box models for the UEManager: a model behind an OpenAI-compatible endpoint (model backend ``openai``).

>>> man = UEManager(records, estimators=["lexical_similarity", "num_sem_sets"],           # doctest: +SKIP
...                 stat_calculators=["semantic_matrix[nli_model=path/to/nli]"],
...                 model=OpenAIModel("http://127.0.0.1:8000/v1", name="my-model"), samples_n=5)

The backend sends each prompt to the server (:class:`~assay_transformers.openai_api.OpenAIClient`)
and gives LM-Polygraph's black-box statistics (its ``BlackboxGreedyTextsCalculator`` and
``BlackboxSamplingGenerationCalculator``), per example:

``greedy_texts`` (and ``answer``, the stored-output field)
    The answer at ``temperature=0``.
``sample_texts``
    ``samples_n`` answers sampled with ``generation_params`` (``temperature``, default 1.0,
    ``top_p``, ``stop_strings``), the prompt's requests seeded by the run's seed and the
    example's position (so, on a server that honours ``seed``, they do not depend on
    ``batch_size``).
``blackbox_greedy_texts``, ``blackbox_sample_texts``
    The same lists under LM-Polygraph's ``blackbox_`` names (its manager copies a statistic
    ``X`` into ``blackbox_X``).

With ``logprobs=True`` (a server that returns log-probabilities, e.g. llama-cpp-python's or
vLLM's; one that returns none is an error naming the request), also, from the greedy answer
(LM-Polygraph's ``BlackboxGreedyTextsCalculator`` on a model with ``supports_logprobs``):

``greedy_tokens``, ``greedy_log_likelihoods`` (= ``log_probs``)
    The tokens (strings) and each one's log-probability, as the server returned them (the
    end-of-sequence token that stopped the answer is not among them: the APIs leave it out).
``greedy_tokens_alternatives``
    LM-Polygraph's layout: per step, the chosen token and its log-probability first, then the
    other ``top_logprobs`` alternatives in the server's order.
``entropy`` (with ``top_logprobs > 0``)
    LM-Polygraph's black-box entropy: per step, ``-sum_a p_a log p_a`` over the returned
    alternatives (one per distinct token text), not renormalised, a truncation of the full
    distribution's entropy. LM-Polygraph computes it from ``greedy_log_probs``, a 50,000-wide row
    filled by hashing the token strings with Python's per-process ``hash`` (two alternatives whose
    hashes collide count once); that row is not given here (not reproducible), the entropy is
    the same sum without collisions.
``top_logprobs`` (with ``top_logprobs > 0``)
    assay's stored-output field: per step, the alternatives' log-probabilities (one per distinct
    token text), from which assay's ``token_entropies`` renormalises.

and from the samples ``sample_log_probs`` (per sample, its tokens' log-probabilities; assay's
stored-output layout, from which ``sample_log_likelihoods`` is derived; LM-Polygraph's black-box
sampling gives no log-probabilities).

The estimators that run on them: ``msp`` / ``perplexity`` (and LM-Polygraph's
``MaximumSequenceProbability`` / ``Perplexity`` / ``MaximumTokenProbability``) on the greedy
log-probabilities; LM-Polygraph's ``MeanTokenEntropy`` / ``TokenEntropy`` on ``entropy``; assay's
``mean_token_entropy`` / ``max_token_entropy`` on ``token_entropies``; ``mc_sequence_entropy``,
``mc_normalized_sequence_entropy`` on the samples' log-probabilities. Without log-probabilities,
the sample-based estimators: ``lexical_similarity``, ``num_distinct_answers``, and with an NLI
model folder (``semantic_matrix``) ``num_sem_sets``, ``eigval_laplacian``, ``deg_mat``,
``eccentricity``, ``semantic_entropy`` (with ``class_probability_estimation="frequency"``: the
default ``"sum"`` needs ``sample_log_probs``, so ``logprobs=True``) ...

**Failures.** A request that fails after its retries or times out raises
:class:`~assay_transformers.openai_api.ModelRequestError` naming the URL, the model and the
example's position; the manager keeps the batches finished before it (``UEManager.partial``)
and this backend keeps every answer it received (``answers_cached``): running a manager again
with the same backend object sends only the requests not answered yet. To survive the
process itself (a kill, a crashed machine), give the manager ``cache_dir=``: every finished
batch is written to disk and a run started again sends only the requests of the examples
not done (:mod:`assay_uncertainty.manager.resume`; this backend's :meth:`OpenAIModel.fingerprint`
keys the cache).

``generation_params``: ``top_k`` and ``repetition_penalty`` have no OpenAI API equivalent and
are an error, not ignored.

**The model object** (``stats["model"]``, as LM-Polygraph's manager passes its model): every
batch's statistics hold a :class:`BlackboxPolygraphModel` whose ``generate_texts`` sends each
input (a prompt, or a chat as a list of messages) to the same endpoint, one request per input
and answer, with the run's ``generation_params`` (``do_sample=True``: ``temperature``, default
1.0, ``top_p``, ``stop_strings``; ``do_sample=False``: ``temperature=0``), and, with the run's
``seed``, a seed made of it, the input and the call's options (so the replies depend neither on
the batch size nor on which estimator asks first, on a server that honours ``seed``). So the
estimators that ask the model a follow-up question run on a black-box model:
``p_true_empirical`` (``PTrueEmpirical``) and ``verbalized_2s`` (``Verbalized2S``, a chat;
``endpoint="chat"`` only). ``min_new_tokens`` has no OpenAI API field and is not sent (as
LM-Polygraph's ``BlackboxModel`` drops it): an empty reply where ``min_new_tokens > 0`` warns.
Each reply is kept with the answers (``answers_cached``); a request that fails raises
:class:`~assay_transformers.openai_api.ModelRequestError` naming the follow-up prompt.
LM-Polygraph's ``BlackboxModel.generate_texts`` returns one *list* per input when
``num_return_sequences > 1`` (so its ``PTrueEmpirical`` tests list membership, not substrings);
this one returns the flat list LM-Polygraph's ``WhiteboxModel`` returns, which the estimators
are written for.
"""

from __future__ import annotations

import os
import warnings
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import EXAMPLE_POSITIONS, StatCalculator
from assay_transformers.generation_params import check_generation_params
from assay_transformers.openai_api import Completion, ModelRequestError, OpenAIClient

__all__ = ["UNSUPPORTED_PARAMS", "BlackboxGreedyTextsCalculator", "BlackboxPolygraphModel",
           "BlackboxSamplingCalculator", "OpenAIModel", "blackbox_entropy"]

#: generation parameters an OpenAI-compatible endpoint has no field for
UNSUPPORTED_PARAMS = ("top_k", "repetition_penalty")


class OpenAIModel:
    """A model behind an OpenAI-compatible endpoint, as a UEManager model backend (module docstring).

    Parameters
    ----------
    model : the server's API root (``"http://127.0.0.1:8000/v1"``), or an
        :class:`~assay_transformers.openai_api.OpenAIClient` (then no other option)
    name : the model name sent with each request (required with a URL)
    endpoint, api_key, timeout, max_retries, logprobs, top_logprobs, system_prompt :
        as :class:`~assay_transformers.openai_api.OpenAIClient`
    """

    def __init__(self, model: Any, *, name: str | None = None, endpoint: str = "chat", api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 2, logprobs: bool = False, top_logprobs: int = 5,
                 system_prompt: str | None = None) -> None:
        if isinstance(model, OpenAIModel):
            model = model.client
        self.client: OpenAIClient
        if isinstance(model, OpenAIClient):
            if name is not None:
                raise InvalidParameterError("OpenAIModel: 'name' comes from the OpenAIClient given; pass one or the "
                                            "other.")
            self.client = model
        elif isinstance(model, (str, os.PathLike)):
            if name is None:
                raise InvalidParameterError(f"OpenAIModel({str(model)!r}) needs 'name': the model name the server "
                                            "serves (model_options={'name': ...}, or model.name in a config).")
            self.client = OpenAIClient(str(model), name, endpoint=endpoint, api_key=api_key, timeout=timeout,
                                       max_retries=max_retries, logprobs=logprobs, top_logprobs=top_logprobs,
                                       system_prompt=system_prompt)
        else:
            raise InvalidParameterError(f"OpenAIModel: the model must be an http(s) URL or an OpenAIClient; got "
                                        f"{type(model).__name__}.")
        #: every answer received, by request: a manager run again with this backend sends only the others
        self.answers_cached: dict[tuple[Any, ...], list[Completion]] = {}

    @staticmethod
    def accepts(model: Any) -> bool:
        """Whether this backend takes ``model``: an http(s) URL, an OpenAIClient or an OpenAIModel."""
        if isinstance(model, (OpenAIClient, OpenAIModel)):
            return True
        return isinstance(model, str) and model.startswith(("http://", "https://"))

    @property
    def base_stats(self) -> tuple[str, ...]:
        """The stored-output fields this model gives (the manager's loop computes them for every run)."""
        if not self.client.logprobs:
            return ("answer",)
        return ("answer", "log_probs", "top_logprobs") if self.client.top_logprobs else ("answer", "log_probs")

    def __repr__(self) -> str:
        return f"OpenAIModel({self.client!r})"

    def fingerprint(self) -> dict[str, Any]:
        """What identifies this model's answers, for a resumable run's cache (``UEManager(cache_dir=...)``): the
        server's URL, the model name, the endpoint and the request options (never the API key). A server that
        serves another model under the same name is not detected."""
        c = self.client
        return {"backend": "openai", "url": c.base_url, "model": c.model, "endpoint": c.endpoint,
                "logprobs": c.logprobs, "top_logprobs": c.top_logprobs, "system_prompt": c.system_prompt}

    def calculators(self, *, max_new_tokens: int = 100, generation_params: Mapping[str, Any] | None = None,
                    samples_n: int = 10, seed: int | None = None) -> list[StatCalculator]:
        """The stat calculators of one manager run (module docstring)."""
        opts = {"max_new_tokens": max_new_tokens, "generation_params": _params(generation_params), "seed": seed}
        return [BlackboxGreedyTextsCalculator(self, **opts),
                BlackboxSamplingCalculator(self, samples_n=samples_n, **opts)]

    def shared_stats(self, *, seed: int | None = None,
                     generation_params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """What every batch's statistics hold besides the columns: ``model``, a :class:`BlackboxPolygraphModel`
        on this backend with the run's ``seed`` and ``generation_params`` (module docstring)."""
        return {"model": BlackboxPolygraphModel(self, generation_params=_params(generation_params), seed=seed)}

    def complete(self, prompt: str | Sequence[Mapping[str, str]], *, index: int | None, n: int, max_tokens: int,
                 temperature: float | None, top_p: float | None, stop: Sequence[str] | None, seed: int | None,
                 request: str | None = None) -> list[Completion]:
        """The client's answers to one prompt (or chat), from the cache when this request was answered before;
        ``request`` names it in errors instead of "prompt {index}"."""
        asked = prompt if isinstance(prompt, str) else ("chat", repr(prompt))  # (the client checks the chat)
        key = (self.client.url, self.client.model, self.client.logprobs, asked, n, max_tokens, temperature, top_p,
               tuple(stop or ()), seed)
        if key not in self.answers_cached:
            got = self.client.complete(prompt, n=n, max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                                       stop=stop, seed=seed, index=index, request=request)
            if self.client.logprobs and any(c.token_log_probs is None for c in got):
                raise self._error(index, request, "returned no log-probabilities, and logprobs=True asks for them: "
                                  "this server does not return them; run with logprobs=False (text-only statistics)")
            if self.client.logprobs and self.client.top_logprobs and any(
                    not all(c.top_log_probs or []) or len(c.top_log_probs or []) != len(c.tokens or []) for c in got):
                raise self._error(index, request, f"returned tokens without their top_logprobs alternatives (asked "
                                  f"for {self.client.top_logprobs}): this server does not return them; run with "
                                  "top_logprobs=0 (no entropy statistics)")
            self.answers_cached[key] = got
        return self.answers_cached[key]


    def _error(self, index: int | None, request: str | None, cause: str) -> ModelRequestError:
        c = self.client
        where = request or f"prompt {index}"
        return ModelRequestError(f"The request to {c.url} (model {c.model!r}) for {where} {cause}.", url=c.url,
                                 endpoint=c.endpoint, model=c.model, index=index)


def _alternatives(top: Sequence[tuple[str, float]]) -> dict[str, float]:
    """One log-probability per distinct token text (a later duplicate replaces an earlier one, as LM-Polygraph's
    dictionary does)."""
    return {t: float(v) for t, v in top}


def blackbox_entropy(top: Sequence[tuple[str, float]]) -> float:
    """LM-Polygraph's black-box step entropy: ``-sum p log p`` over the distinct alternatives' finite log-probabilities,
    not renormalised (module docstring)."""
    lp = np.array([v for v in _alternatives(top).values() if np.isfinite(v)], dtype=np.float64)
    return float(-np.sum(np.exp(lp) * lp))


class _BlackboxCalculator(StatCalculator):
    def __init__(self, model: OpenAIModel, stats: Sequence[str], *, max_new_tokens: int,
                 generation_params: Mapping[str, Any], seed: int | None) -> None:
        super().__init__(stats=stats)
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise InvalidParameterError(f"'max_new_tokens' must be an integer >= 1; got {max_new_tokens!r}.")
        self.model = model
        self.max_new_tokens = max_new_tokens
        self.params = dict(generation_params)
        self.seed = seed
        self.position = 0  # the next example's position in the run (the batches come in order)

    def _prompts(self, stats: Mapping[str, Any]) -> list[tuple[int, str]]:
        """``(position, prompt)`` of each example of the batch: the position from the model loop's
        ``example_positions``, else counted from the batches so far (given in order, none skipped)."""
        if "input_texts" not in stats:
            raise InvalidParameterError("The black-box model's stat calculators read 'input_texts' (one prompt per "
                                        "example); the batch has none.")
        prompts = list(stats["input_texts"])
        if EXAMPLE_POSITIONS in stats:
            positions = [int(p) for p in stats[EXAMPLE_POSITIONS]]
            if len(positions) != len(prompts):
                raise InvalidParameterError(f"The batch has {len(prompts)} prompts and {len(positions)} "
                                            f"{EXAMPLE_POSITIONS!r}.")
        else:
            positions = list(range(self.position, self.position + len(prompts)))
        self.position = max(positions, default=self.position - 1) + 1
        return list(zip(positions, prompts))


class BlackboxGreedyTextsCalculator(_BlackboxCalculator):
    """``input_texts`` -> ``greedy_texts`` (``temperature=0``), its copies ``answer`` and
    ``blackbox_greedy_texts``; with ``logprobs``: ``greedy_tokens``, ``greedy_log_likelihoods``
    (= ``log_probs``), ``greedy_tokens_alternatives``."""

    name = "blackbox_greedy_texts"
    dependencies = ("input_texts",)

    def __init__(self, model: OpenAIModel, **kwargs: Any) -> None:
        stats = ["greedy_texts", "answer", "blackbox_greedy_texts"]
        if model.client.logprobs:
            stats += ["greedy_tokens", "greedy_log_likelihoods", "log_probs", "greedy_tokens_alternatives"]
            if model.client.top_logprobs:
                stats += ["entropy", "top_logprobs"]
        super().__init__(model, stats, **kwargs)

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, list[Any]] = {k: [] for k in self.stats}
        for index, prompt in self._prompts(stats):
            (c,) = self.model.complete(prompt, index=index, n=1, max_tokens=self.max_new_tokens, temperature=0.0,
                                       top_p=None, stop=self.params.get("stop_strings"), seed=None)
            for key in ("greedy_texts", "answer", "blackbox_greedy_texts"):
                out[key].append(c.text)
            if self.model.client.logprobs:
                out["greedy_tokens"].append(list(c.tokens or []))
                out["greedy_log_likelihoods"].append(np.asarray(c.token_log_probs, dtype=np.float64))
                out["log_probs"].append(np.asarray(c.token_log_probs, dtype=np.float64))
                alts = []
                lps = [] if c.token_log_probs is None else c.token_log_probs.tolist()
                for tok, lp, top in zip(c.tokens or [], lps, c.top_log_probs or []):
                    alts.append([(tok, float(lp))] + [(t, v) for t, v in top if t != tok])
                out["greedy_tokens_alternatives"].append(alts)
                if "entropy" in out:
                    steps = c.top_log_probs or []
                    out["entropy"].append(np.array([blackbox_entropy(top) for top in steps], dtype=np.float64))
                    out["top_logprobs"].append([sorted(_alternatives(top).values(), reverse=True) for top in steps])
        return out


class BlackboxSamplingCalculator(_BlackboxCalculator):
    """``input_texts`` -> ``sample_texts`` (``samples_n`` per example) and ``blackbox_sample_texts``;
    with ``logprobs``: ``sample_log_probs`` (per sample, its tokens' log-probabilities)."""

    name = "blackbox_sampling"
    dependencies = ("input_texts",)

    def __init__(self, model: OpenAIModel, *, samples_n: int = 10, **kwargs: Any) -> None:
        if isinstance(samples_n, bool) or not isinstance(samples_n, int) or samples_n < 1:
            raise InvalidParameterError(f"'samples_n' must be an integer >= 1; got {samples_n!r}.")
        stats = ["sample_texts", "blackbox_sample_texts"]
        if model.client.logprobs:
            stats.append("sample_log_probs")
        super().__init__(model, stats, **kwargs)
        self.samples_n = samples_n

    def _seed(self, index: int) -> int | None:
        """The example's seed: the run's seed mixed with the example's position (None: the server's own)."""
        if self.seed is None:
            return None
        return int(np.random.SeedSequence([self.seed, index]).generate_state(1)[0])

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, list[Any]] = {k: [] for k in self.stats}
        for index, prompt in self._prompts(stats):
            got = self.model.complete(prompt, index=index, n=self.samples_n, max_tokens=self.max_new_tokens,
                                      temperature=float(self.params.get("temperature", 1.0)),
                                      top_p=self.params.get("top_p"), stop=self.params.get("stop_strings"),
                                      seed=self._seed(index))
            texts = [c.text for c in got]
            out["sample_texts"].append(texts)
            out["blackbox_sample_texts"].append(list(texts))
            if self.model.client.logprobs:
                out["sample_log_probs"].append([np.asarray(c.token_log_probs, dtype=np.float64) for c in got])
        return out


def _params(generation_params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The run's generation parameters, checked: the ones an OpenAI-compatible endpoint has no field for are an
    error (module docstring)."""
    params = check_generation_params(generation_params)
    bad = [k for k in UNSUPPORTED_PARAMS if k in params]
    if bad:
        raise InvalidParameterError(
            f"generation_params {', '.join(map(repr, bad))}: an OpenAI-compatible endpoint has no such field; "
            f"a black-box model takes {', '.join(k for k in ('temperature', 'top_p', 'stop_strings'))}.")
    return dict(params)


class BlackboxPolygraphModel:
    """The black-box model as LM-Polygraph's estimators call it (``stats["model"]``): :meth:`generate_texts`
    on the endpoint of an :class:`OpenAIModel` (module docstring). ``model_path`` is the served model's name and
    ``model_type`` is ``"Blackbox"``, LM-Polygraph's ``BlackboxModel`` attributes.

    ``generation_params``: the run's (``temperature``, ``top_p``, ``stop_strings``); ``seed``: the run's (None:
    the server's own randomness, not reproducible).
    """

    model_type = "Blackbox"

    def __init__(self, backend: OpenAIModel, *, generation_params: Mapping[str, Any] | None = None,
                 seed: int | None = None) -> None:
        if not isinstance(backend, OpenAIModel):
            raise InvalidParameterError(f"BlackboxPolygraphModel: the backend must be an OpenAIModel; got "
                                        f"{type(backend).__name__}.")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise InvalidParameterError(f"BlackboxPolygraphModel: 'seed' must be an integer >= 0 or None; got "
                                        f"{seed!r}.")
        self.backend, self.params, self.seed = backend, _params(generation_params), seed
        self.model_path = backend.client.model

    def __repr__(self) -> str:
        return f"BlackboxPolygraphModel({self.backend.client!r}, seed={self.seed})"

    def _seed(self, item: Any, options: Mapping[str, Any]) -> int | None:
        if self.seed is None:
            return None
        mix = zlib.crc32(repr((item, sorted(options.items()))).encode())
        return int(np.random.SeedSequence([self.seed, mix]).generate_state(1)[0])

    def generate_texts(self, input_texts: Sequence[Any], *, max_new_tokens: int = 100, min_new_tokens: int = 0,
                       num_return_sequences: int = 1, do_sample: bool = False) -> list[str]:
        """The model's replies, ``num_return_sequences`` per input, input by input (a flat list, as
        LM-Polygraph's ``WhiteboxModel.generate_texts`` returns them); each input a prompt or a chat (a list of
        ``{"role", "content"}`` messages). ``do_sample=False``: ``temperature=0`` (greedy)."""
        for name, value, low in (("max_new_tokens", max_new_tokens, 1), ("min_new_tokens", min_new_tokens, 0),
                                 ("num_return_sequences", num_return_sequences, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidParameterError(f"generate_texts: {name!r} must be an integer >= {low}; got {value!r}.")
        if not isinstance(do_sample, bool):
            raise InvalidParameterError(f"generate_texts: 'do_sample' must be true or false; got {do_sample!r}.")
        if isinstance(input_texts, (str, Mapping)):
            raise InvalidParameterError("generate_texts: 'input_texts' is a list of inputs (prompts or chats); got "
                                        f"one {type(input_texts).__name__}.")
        options = {"max_new_tokens": max_new_tokens, "num_return_sequences": num_return_sequences,
                   "do_sample": do_sample}
        temperature = float(self.params.get("temperature", 1.0)) if do_sample else 0.0
        top_p = self.params.get("top_p") if do_sample else None
        out: list[str] = []
        for i, item in enumerate(input_texts):
            shown = item if isinstance(item, str) else (item[-1].get("content") if isinstance(item, Sequence) and item
                                                        and isinstance(item[-1], Mapping) else item)
            request = f"follow-up prompt {i} of generate_texts ({str(shown)[:60]!r})"
            got = self.backend.complete(item, index=None, n=num_return_sequences, max_tokens=max_new_tokens,
                                        temperature=temperature, top_p=top_p, stop=self.params.get("stop_strings"),
                                        seed=self._seed(item, options) if do_sample else None, request=request)
            texts = [c.text for c in got]
            if min_new_tokens > 0 and any(t == "" for t in texts):
                warnings.warn(f"generate_texts: {request} got an empty reply though min_new_tokens={min_new_tokens} "
                              "(an OpenAI-compatible endpoint has no field for it; the reply is used as is).",
                              UserWarning, stacklevel=2)
            out.extend(texts)
        return out
