"""Whitebox statistics of a Hugging Face model, as stat calculators (LM-Polygraph's names).

Each calculator reads ``input_texts`` (one prompt per example of the batch) and runs the
model; the manager's model loop calls them batch by batch. Per example:

``greedy_tokens``
    The greedy token ids, up to and *including* the EOS token when the model generated
    one (LM-Polygraph's cut), else up to the token that completed a stop string, else
    ``max_new_tokens`` tokens.
``greedy_texts``
    Their text, without the EOS token and without the stop string.
``greedy_log_probs``
    ``(T, V)`` array: at each of the ``T`` steps, ``log_softmax`` of the model's logits
    over the vocabulary, including the EOS step when EOS was generated.
``greedy_log_likelihoods``
    ``(T,)``: the log-probability of each greedy token (``greedy_log_probs[t, token_t]``).
``entropy``
    ``(T,)``: the entropy (nats) of each row of ``greedy_log_probs``.
``sample_texts``, ``sample_tokens``, ``sample_log_probs``
    ``samples_n`` sampled answers (temperature / top-k / top-p of ``generation_params``;
    drawn one prompt at a time, seeded by the run's seed and the example's position (the
    model loop's ``example_positions``), so they do not depend on the batch size, nor on
    which examples a resumed run skips),
    their token ids (cut as the greedy ones, EOS included), and per sample the
    log-probability of each sampled token under the model's own distribution. Note:
    ``sample_log_probs`` follows assay's stored-output schema (one list of token
    log-probabilities per sample, as ``assay-uncertainty``'s ``sample_likelihoods``
    calculator reads it); LM-Polygraph's ``sample_log_probs`` is its per-sample sum, which
    assay calls ``sample_log_likelihoods``.

The stored-output fields the ``assay-uncertainty`` estimators read are derived from
these (:class:`StoredOutputFields`): ``answer`` = ``greedy_texts``, ``log_probs`` =
``greedy_log_likelihoods`` (so ``msp`` is LM-Polygraph's MaximumSequenceProbability,
EOS included) and ``token_entropies`` = ``entropy``.

Hidden states, attentions, the answer without its prompt, P(True) prompts and sample
embeddings: :mod:`assay_transformers.whitebox_stats` (LM-Polygraph's names), run only when
an estimator needs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import EXAMPLE_POSITIONS, StatCalculator
from assay_transformers.generation_params import check_generation_params
from assay_transformers.whitebox_stats import whitebox_calculators

__all__ = ["EntropyCalculator", "GreedyProbsCalculator", "SamplingGenerationCalculator", "StoredOutputFields",
           "calculators_for", "row_entropy"]


def row_entropy(log_probs: np.ndarray) -> np.ndarray:
    """Entropy (nats) of each row of log-probabilities: ``-sum_v p_v log p_v`` over the finite entries."""
    lp = np.asarray(log_probs, dtype=np.float64)
    if lp.size == 0:
        return np.zeros(lp.shape[0] if lp.ndim else 0)
    finite = np.isfinite(lp)
    safe = np.where(finite, lp, 0.0)
    return -np.sum(np.where(finite, np.exp(safe) * safe, 0.0), axis=-1)


def _prompts(stats: Mapping[str, Any]) -> list[str]:
    if "input_texts" not in stats:
        raise InvalidParameterError("The model's stat calculators read 'input_texts' (one prompt per example); the "
                                    "batch has none.")
    return list(stats["input_texts"])


class _ModelCalculator(StatCalculator):
    def __init__(self, model: Any, *, max_new_tokens: int = 100, generation_params: Mapping[str, Any] | None = None,
                 seed: int | None = None) -> None:
        super().__init__()
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise InvalidParameterError(f"'max_new_tokens' must be an integer >= 1; got {max_new_tokens!r}.")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise InvalidParameterError(f"'seed' must be an integer >= 0 or None; got {seed!r}.")
        self.model = model
        self.max_new_tokens = max_new_tokens
        self.generation_params = check_generation_params(generation_params)
        self.seed = seed
        self.calls = 0

    def _next_seed(self) -> int | None:
        """A seed per call: the run's seed mixed with the call number (for sampling: the example's position)."""
        call, self.calls = self.calls, self.calls + 1
        return self._seed_of(call)

    def _seed_of(self, position: int) -> int | None:
        """The seed of the example at ``position``: the run's seed mixed with it (None: no seed)."""
        if self.seed is None:
            return None
        return int(np.random.SeedSequence([self.seed, position]).generate_state(1)[0])

    def _positions(self, stats: Mapping[str, Any], count: int) -> list[int]:
        """The batch's examples' positions in the run: the model loop's ``example_positions``, else counted from
        the calls so far (batches given in order, none skipped)."""
        if EXAMPLE_POSITIONS in stats:
            positions = [int(p) for p in stats[EXAMPLE_POSITIONS]]
            if len(positions) != count:
                raise InvalidParameterError(f"The batch has {count} prompts and {len(positions)} "
                                            f"{EXAMPLE_POSITIONS!r}.")
        else:
            positions = list(range(self.calls, self.calls + count))
        self.calls = max(positions, default=self.calls - 1) + 1
        return positions


class GreedyProbsCalculator(_ModelCalculator):
    """``input_texts`` -> ``greedy_texts``, ``greedy_tokens``, ``greedy_log_probs``, ``greedy_log_likelihoods``."""

    name = "greedy_probs"
    stats = ("greedy_texts", "greedy_tokens", "greedy_log_probs", "greedy_log_likelihoods")
    dependencies = ("input_texts",)

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        self._next_seed()
        gens = self.model.generate(_prompts(stats), max_new_tokens=self.max_new_tokens, do_sample=False,
                                   generation_params=self.generation_params)
        out: dict[str, list] = {k: [] for k in self.stats}
        for (g,) in gens:
            out["greedy_texts"].append(g.text)
            out["greedy_tokens"].append(np.asarray(g.tokens, dtype=np.int64))
            out["greedy_log_probs"].append(g.log_probs)
            out["greedy_log_likelihoods"].append(g.token_log_probs)
        return out


class SamplingGenerationCalculator(_ModelCalculator):
    """``input_texts`` -> ``sample_texts``, ``sample_tokens``, ``sample_log_probs`` (``samples_n`` per example)."""

    name = "sampling_generation"
    stats = ("sample_texts", "sample_tokens", "sample_log_probs")
    dependencies = ("input_texts",)

    def __init__(self, model: Any, *, samples_n: int = 10, **kwargs: Any) -> None:
        if isinstance(samples_n, bool) or not isinstance(samples_n, int) or samples_n < 1:
            raise InvalidParameterError(f"'samples_n' must be an integer >= 1; got {samples_n!r}.")
        super().__init__(model, **kwargs)
        self.samples_n = samples_n

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        # one prompt at a time (its samples_n sequences in one batch), seeded by the run's seed and the
        # example's position: the samples do not depend on batch_size, and no prompt is padded
        gens = []
        prompts = _prompts(stats)
        for prompt, position in zip(prompts, self._positions(stats, len(prompts))):
            gens.extend(self.model.generate([prompt], max_new_tokens=self.max_new_tokens, do_sample=True,
                                            num_return_sequences=self.samples_n,
                                            generation_params=self.generation_params, seed=self._seed_of(position),
                                            rows=False))
        out: dict[str, list] = {k: [] for k in self.stats}
        for samples in gens:
            out["sample_texts"].append([g.text for g in samples])
            out["sample_tokens"].append([np.asarray(g.tokens, dtype=np.int64) for g in samples])
            out["sample_log_probs"].append([g.token_log_probs for g in samples])
        return out


class EntropyCalculator(StatCalculator):
    """``greedy_log_probs`` -> ``entropy``: the entropy of each step's distribution (LM-Polygraph's ``entropy``)."""

    name = "entropy"
    stats = ("entropy",)
    dependencies = ("greedy_log_probs",)

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        return {"entropy": [row_entropy(lp) for lp in stats["greedy_log_probs"]]}


class StoredOutputFields(StatCalculator):
    """The stored-output fields the ``assay-uncertainty`` estimators read, from the greedy statistics.

    ``answer`` = ``greedy_texts``, ``log_probs`` = ``greedy_log_likelihoods``,
    ``token_entropies`` = ``entropy``.
    """

    name = "stored_output_fields"
    stats = ("answer", "log_probs", "token_entropies")
    dependencies = ("greedy_texts", "greedy_log_likelihoods", "entropy")

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        return {"answer": list(stats["greedy_texts"]),
                "log_probs": [np.asarray(v, dtype=np.float64) for v in stats["greedy_log_likelihoods"]],
                "token_entropies": [np.asarray(v, dtype=np.float64) for v in stats["entropy"]]}


def calculators_for(model: Any, *, max_new_tokens: int = 100, generation_params: Mapping[str, Any] | None = None,
                    samples_n: int = 10, seed: int | None = None) -> list[StatCalculator]:
    """The calculators of one manager run with ``model`` (an :class:`~assay_transformers.generation.HFModel`)."""
    return [GreedyProbsCalculator(model, max_new_tokens=max_new_tokens, generation_params=generation_params, seed=seed),
            EntropyCalculator(), StoredOutputFields(),
            SamplingGenerationCalculator(model, samples_n=samples_n, max_new_tokens=max_new_tokens,
                                         generation_params=generation_params, seed=seed),
            *whitebox_calculators(model)]
