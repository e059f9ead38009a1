r"""LM-Polygraph 0.7.0's model statistics beyond generation: hidden states, attentions, prompts.

The estimators of LM-Polygraph's information-, attention-, P(True)-, density- and sample-
embedding-based families (``assay_uncertainty.estimators_info``, ``estimators_density``,
``assay_transformers.polygraph_semantic``) read statistics that only the model can give. The
calculators here compute them for a Hugging Face causal or seq2seq model
(:class:`~assay_transformers.generation.HFModel`), with LM-Polygraph's names and meanings, so
that LM-Polygraph's estimator classes and assay's give the same values on them. The model
backend adds them to every manager run (:func:`whitebox_calculators`); the statistics graph
runs only the ones an estimator asks for.

**Batch size never changes a number.** LM-Polygraph computes most of these on the padded
batch (its ``embeddings_decoder`` averages over the pad positions too; its
``forwardpass_attention_weights`` feeds the pad tokens to the model; its ``attention_all``
reads the first example's attention for every example of the batch). Here each example is
one forward pass over its own tokens, without padding: the values equal LM-Polygraph's at
batch size 1 (the tests run LM-Polygraph's calculators live on the same model) and are the
same for any batch size. The prompt's tokens are the tokenizer's for that prompt alone,
as the greedy generation of :class:`~assay_transformers.generation.HFModel` reads it.

Per example (``T`` = the greedy tokens, EOS included when generated; ``P`` the prompt's
tokens; for a causal model the sequence is prompt + answer, for a seq2seq model the encoder
reads the prompt and the decoder ``[decoder_start] + answer``):

``embeddings_decoder``
    ``(D,)``: the last layer's hidden state averaged over the positions generation ran the
    model on. Causal: the ``P`` prompt positions and the first ``T - 1`` answer tokens
    (the last token is generated, never fed back). Seq2seq: the ``T`` decoder positions
    ``[start] + answer[:-1]``. LM-Polygraph's ``GreedyProbsCalculator(output_hidden_states=True)``
    and ``EmbeddingsCalculator``.
``embeddings_encoder`` (seq2seq only)
    ``(D,)``: the encoder's last hidden state averaged over the prompt.
``attention_all``
    ``(L * H, T, T)``: row ``j`` (``j >= 1``), columns ``< j``: the attention of the
    token fed at step ``j`` (answer token ``j - 1``) to answer tokens ``0 .. j - 1``, for each
    layer and head (layer-major); row 0 is zero. Seq2seq: the decoder's self-attention.
    LM-Polygraph's ``attention_all`` (RAUQ reads it).
``forwardpass_attention_weights``
    ``(L, H, S, S)``: the attentions of one forward pass over prompt + answer
    (``S = P + T``); seq2seq: the decoder self-attentions over ``[start] + answer``
    (LM-Polygraph's calculator fails on a seq2seq model: it passes no decoder input).
    LM-Polygraph's ``AttentionForwardPassCalculator`` (AttentionScore reads it).
``attention_weights_eliciting_prompt`` (causal only)
    ``(L * H, T)``: the attention the last token of LM-Polygraph's eliciting prompt
    (a few-shot "decide if the answer is correct, reply Y or N" prompt holding the question,
    then the answer's tokens, then ``"\n\nDecision:"``) pays to the answer's tokens.
    LM-Polygraph's ``AttentionElicitingPromptCalculator`` (CSL reads it); on a seq2seq
    model LM-Polygraph's calculator fails and this one is an error saying so.
``greedy_lm_log_probs``, ``greedy_lm_log_likelihoods``
    The answer scored without the prompt (PMI, CPMI), as LM-Polygraph's
    ``GreedyLMProbsCalculator`` computes it: the decoded answer (EOS text included) is
    tokenized again and run alone (seq2seq: as both encoder and decoder input); for token
    ``j`` of the answer (aligned from the end) the log-softmax at the position *of* token
    ``j`` (LM-Polygraph's indexing, which reads the distribution after ``y_j``, not before
    it), and ``greedy_lm_log_probs`` the rows of the first ``T - 1`` of those positions.
    Where re-tokenizing gives fewer tokens than the answer, the answer's own ids are run
    (LM-Polygraph's fallback, which it applies to the whole batch; here to that example).
``p_true``, ``p_true_sampling``
    The log-probability of the token "True" as the next token after LM-Polygraph's P(True)
    prompt (``"Question: {q}\n Possible answer:{a}\n Is the possible answer:\n (A) True\n
    (B) False\n The possible answer is:"``; with sampling, ``"Here are some ideas that were
    brainstormed: {s}"`` with the sampled answers joined by ", "). LM-Polygraph asks
    ``generate`` for at least one new token, so EOS is masked (transformers sets its logit to
    -inf; LM-Polygraph's logits sanitizer then lifts it to the row's smallest logit) before
    the log-softmax: the same is done here. "True" must be one token of the tokenizer
    (BOS / EOS aside), else an error (LM-Polygraph: an assertion).
``p_true_claim``
    Per claim of ``claims`` (one list per example): the same log-probability after
    LM-Polygraph's claim prompt (``"Question: {q}\n Possible answer:{a}\n Is the possible
    answer True or False? The possible answer is: "``, ``a`` the claim's text), as its
    ``ClaimPromptCalculator`` computes it (:class:`ClaimPTruePrompt`).
``sample_embeddings``
    Per sample, ``(D,)``: causal, the hidden state of layer ``L // 2`` (of the
    ``L + 1`` hidden states, embeddings first) at the last position generation fed the
    model (the prompt's last token when the sample has one token, else the sample's
    second-to-last token, EOS counted); seq2seq, the decoder's last layer averaged over the
    sample's decoder positions. LM-Polygraph's ``SamplingGenerationCalculator``
    (EigenScore reads it).

**Attention** comes from the model's eager attention: a model loaded with another
implementation (``sdpa``, the default) is switched to ``eager`` for these forward passes
and back afterwards.

The model itself (:class:`PolygraphModel`, ``stats["model"]``) is in every batch's
statistics, as LM-Polygraph's manager passes it: the P(True)-empirical and verbalized-2S
estimators call its ``generate_texts``; RAUQ and AttentionScore read its config.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import StatCalculator
from assay_uncertainty.estimators_claim import claim_token_ids

__all__ = [
    "ELICITING_PROMPT", "ELICITING_SUFFIX", "P_TRUE_CLAIM_PROMPT", "P_TRUE_PROMPT", "P_TRUE_SAMPLING_PROMPT",
    "ClaimPTruePrompt", "ElicitingPromptAttention",
    "GreedyAttention", "GreedyLMProbs", "HiddenStateEmbeddings", "PTruePrompt", "PolygraphModel",
    "SampleEmbeddings", "whitebox_calculators",
]

#: LM-Polygraph 0.7.0's P(True) prompt (``stat_calculators/prompt.py``, ``PromptCalculator``)
P_TRUE_PROMPT = ("Question: {q}\n Possible answer:{a}\n "
                 "Is the possible answer:\n (A) True\n (B) False\n The possible answer is:")
#: LM-Polygraph 0.7.0's P(True) prompt with brainstormed samples (``SamplingPromptCalculator``)
P_TRUE_SAMPLING_PROMPT = ("Question: {q}\n Here are some ideas that were brainstormed: {s}\n Possible answer:{a}\n "
                          "Is the possible answer:\n (A) True\n (B) False\n The possible answer is:")
#: LM-Polygraph 0.7.0's P(True) prompt for one claim (``ClaimPromptCalculator``; ``a`` is the claim's text)
P_TRUE_CLAIM_PROMPT = ("Question: {q}\n Possible answer:{a}\n "
                       "Is the possible answer True or False? The possible answer is: ")
#: LM-Polygraph 0.7.0's eliciting prompt for CSL (``attention_eliciting_prompt.py``), its indentation included
ELICITING_PROMPT = """Read the following question with optional context and decide if the answer correctly answer the question. Focus on the answer, and reply Y or N.
            Context: Luxor International Airport is a airport near Luxor in Egypt (EG). It is 353 km away from the nearest seaport (Duba). The offical IATA for this airport is LXR.
            Question: Luxor international airport is in which country?
            Answer: It is in the United States, and its IATA is LXR.
            Decision: N. (The airport is in Egypt, not the United States.)
            Context: Harry is a good witcher.
            Question: How old is Harry?
            Answer: Harry practices witchcraft.
            Decision: N. (The answer does not mention Harry\'s age.)
            Question: What is the capital of Kenya?
            Answer: Nairobi is the capital of Kenya.
            Decision: Y.
            Question: Who has won the most Premier League titles since 2015?
            Answer: Manchester City have win the most Premier League title after 2015.
            Decision: Y. (Grammar errors are ignored.)
            Question: {q}
            Answer: """  # noqa: E501 - LM-Polygraph's prompt, verbatim
#: what follows the answer in the eliciting prompt
ELICITING_SUFFIX = "\n\nDecision:"


def _need(stats: Mapping[str, Any], key: str, who: str) -> Any:
    if key not in stats:
        raise InvalidParameterError(f"Stat calculator {who!r} reads {key!r}; the batch's statistics have "
                                    f"{', '.join(sorted(map(str, stats))) or 'none'}.")
    return stats[key]


def _numpy(t: Any) -> np.ndarray:
    """A tensor as a float32 numpy array (bfloat16 has no numpy type)."""
    return t.detach().float().cpu().numpy()


@contextmanager
def _eager_attention(model: Any) -> Iterator[None]:
    """The model with eager attention for the block (other implementations return no attention weights)."""
    config = model.config
    before = getattr(config, "_attn_implementation", None)
    if before in (None, "eager") or not callable(getattr(model, "set_attn_implementation", None)):
        yield
        return
    model.set_attn_implementation("eager")
    try:
        yield
    finally:
        model.set_attn_implementation(before)


class _WhiteboxCalculator(StatCalculator):
    """A calculator that runs ``model`` (an :class:`~assay_transformers.generation.HFModel`) once per example."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    @property
    def _seq2seq(self) -> bool:
        return self.model.type == "seq2seq"

    def _prompt_ids(self, text: str) -> list[int]:
        return list(self.model.tokenizer(text)["input_ids"])

    def _tensor(self, ids: Sequence[int]) -> Any:
        import torch  # deferred: torch is imported when a model runs

        return torch.tensor([list(ids)], dtype=torch.long, device=self.model.device)

    def _start_id(self) -> int:
        m = self.model.model
        start = getattr(m.generation_config, "decoder_start_token_id", None)
        if start is None:
            start = m.config.decoder_start_token_id
        return int(start)

    def _forward(self, prompt: str, answer: Sequence[int], **flags: Any) -> tuple[Any, int]:
        """One forward pass over ``prompt`` + ``answer`` (seq2seq: decoder ``[start] + answer``);
        returns the output and the position of the answer's first token in the (decoder) sequence."""
        import torch  # deferred: torch is imported when a model runs

        ids = self._prompt_ids(prompt)
        with torch.no_grad():
            if self._seq2seq:
                out = self.model.model(input_ids=self._tensor(ids), decoder_input_ids=self._tensor(
                    [self._start_id(), *answer]), **flags)
                return out, 1
            return self.model.model(input_ids=self._tensor([*ids, *answer]), **flags), len(ids)


class HiddenStateEmbeddings(_WhiteboxCalculator):
    """``input_texts``, ``greedy_tokens`` -> ``embeddings_decoder`` (+ ``embeddings_encoder`` for seq2seq)."""

    name = "hidden_state_embeddings"
    dependencies = ("input_texts", "greedy_tokens")

    def __init__(self, model: Any) -> None:
        self.stats = ("embeddings_decoder", "embeddings_encoder") if model.type == "seq2seq" else (
            "embeddings_decoder",)
        super().__init__(model)

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, list] = {k: [] for k in self.stats}
        for prompt, tokens in zip(_need(stats, "input_texts", self.name), _need(stats, "greedy_tokens", self.name)):
            tokens = [int(t) for t in tokens]
            res, first = self._forward(prompt, tokens[:-1], output_hidden_states=True)
            if self._seq2seq:
                out["embeddings_decoder"].append(_numpy(res.decoder_hidden_states[-1][0]).mean(0))
                out["embeddings_encoder"].append(_numpy(res.encoder_hidden_states[-1][0]).mean(0))
            else:
                out["embeddings_decoder"].append(_numpy(res.hidden_states[-1][0]).mean(0))
        return out


class GreedyAttention(_WhiteboxCalculator):
    """``input_texts``, ``greedy_tokens`` -> ``attention_all``, ``forwardpass_attention_weights``."""

    name = "greedy_attention"
    stats = ("attention_all", "forwardpass_attention_weights")
    dependencies = ("input_texts", "greedy_tokens")

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, list] = {k: [] for k in self.stats}
        with _eager_attention(self.model.model):
            for prompt, tokens in zip(_need(stats, "input_texts", self.name),
                                      _need(stats, "greedy_tokens", self.name)):
                tokens = [int(t) for t in tokens]
                res, first = self._forward(prompt, tokens, output_attentions=True)
                layers = res.decoder_attentions if self._seq2seq else res.attentions
                att = np.concatenate([_numpy(a) for a in layers])  # (L, H, S, S)
                out["forwardpass_attention_weights"].append(att)
                n = len(tokens)
                heads = att.reshape(-1, att.shape[-2], att.shape[-1])  # (L * H, S, S), layer-major
                grid = np.zeros((heads.shape[0], n, n))
                for j in range(1, n):
                    grid[:, j, :j] = heads[:, first + j - 1, first:first + j]
                out["attention_all"].append(grid)
        return out


class ElicitingPromptAttention(_WhiteboxCalculator):
    """``input_texts``, ``greedy_tokens`` -> ``attention_weights_eliciting_prompt`` (causal models; CSL)."""

    name = "eliciting_prompt_attention"
    stats = ("attention_weights_eliciting_prompt",)
    dependencies = ("input_texts", "greedy_tokens")

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        import torch  # deferred: torch is imported when a model runs

        if self._seq2seq:
            raise InvalidParameterError(
                "attention_weights_eliciting_prompt (CSL) is defined for causal models only: LM-Polygraph's "
                "AttentionElicitingPromptCalculator runs the prompt, answer and suffix as one sequence, which a "
                "seq2seq model has no single attention over.")
        tok = self.model.tokenizer
        suffix = list(tok([ELICITING_SUFFIX], add_special_tokens=False)["input_ids"][0])
        out = []
        with _eager_attention(self.model.model):
            for prompt, tokens in zip(_need(stats, "input_texts", self.name),
                                      _need(stats, "greedy_tokens", self.name)):
                tokens = [int(t) for t in tokens]
                ids = [*tok([ELICITING_PROMPT.format(q=prompt)])["input_ids"][0], *tokens, *suffix]
                with torch.no_grad():
                    res = self.model.model(input_ids=self._tensor(ids), output_attentions=True)
                n = len(tokens)
                start = next((p for p in range(len(ids) - n, -1, -1) if ids[p:p + n] == tokens), None)
                if start is None:  # LM-Polygraph's default when the answer is not found (it always is here)
                    start = len(ids) - 4 - n
                att = np.concatenate([_numpy(a) for a in res.attentions])  # (L, H, S, S)
                out.append(att[:, :, len(ids) - 1, start:start + n].reshape(-1, n))
        return {"attention_weights_eliciting_prompt": out}


class GreedyLMProbs(_WhiteboxCalculator):
    """``greedy_tokens`` -> ``greedy_lm_log_probs``, ``greedy_lm_log_likelihoods`` (the answer without its prompt)."""

    name = "greedy_lm_probs"
    stats = ("greedy_lm_log_probs", "greedy_lm_log_likelihoods")
    dependencies = ("greedy_tokens",)

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        import torch  # deferred: torch is imported when a model runs

        tok = self.model.tokenizer
        rows, lls = [], []
        for tokens in _need(stats, "greedy_tokens", self.name):
            tokens = [int(t) for t in tokens]
            ids = list(tok([tok.decode(tokens)])["input_ids"][0])
            if len(ids) < len(tokens):  # tokenizer(decode(t)) != t: LM-Polygraph runs the tokens themselves
                ids = tokens
            x = self._tensor(ids)
            with torch.no_grad():
                kwargs = {"decoder_input_ids": x} if self._seq2seq else {}
                logp = self.model.model(input_ids=x, attention_mask=torch.ones_like(x), **kwargs).logits
                logp = _numpy(logp.float().log_softmax(-1)[0])
            n = len(tokens)
            rows.append(logp[len(logp) - n:len(logp) - 1])
            lls.append(np.array([logp[len(logp) - n + j, t] for j, t in enumerate(tokens)], dtype=np.float64))
        return {"greedy_lm_log_probs": rows, "greedy_lm_log_likelihoods": lls}


class _PTrueBase(_WhiteboxCalculator):
    """The log-probability of the token "True" after a prompt (LM-Polygraph's ``BasePromptCalculator``)."""

    def _true_id(self) -> int:
        tok = self.model.tokenizer
        ids = [t for t in tok(["True"])["input_ids"][0] if t not in (tok.eos_token_id, tok.bos_token_id)]
        if len(ids) != 1:
            raise InvalidParameterError(
                f"{self.stats[0]}: the tokenizer splits 'True' into {len(ids)} tokens ({ids}); P(True) reads the "
                "log-probability of one token (LM-Polygraph asserts the same).")
        return int(ids[0])

    def _log_p_true(self, texts: Sequence[str]) -> list[float]:
        """Per prompt text, the log-probability of "True" as the next token (EOS masked, as LM-Polygraph)."""
        import torch  # deferred: torch is imported when a model runs

        if not texts:
            return []
        true_id = self._true_id()
        eos = sorted(self.model.eos_ids)
        out = []
        for text in texts:
            ids = self._prompt_ids(text)
            with torch.no_grad():
                if self._seq2seq:
                    logits = self.model.model(input_ids=self._tensor(ids),
                                              decoder_input_ids=self._tensor([self._start_id()])).logits
                else:
                    logits = self.model.model(input_ids=self._tensor(ids)).logits
            row = logits[0, -1].float()
            if eos:  # min_new_tokens=1 masks EOS; LM-Polygraph's sanitizer lifts it to the row's smallest logit
                keep = torch.ones_like(row, dtype=torch.bool)
                keep[eos] = False
                row = row.clone()
                row[eos] = row[keep].min()
            out.append(float(row.log_softmax(-1)[true_id]))
        return out


class PTruePrompt(_PTrueBase):
    """``input_texts``, ``greedy_texts`` (and ``sample_texts``) -> ``p_true`` or ``p_true_sampling``.

    ``sampling=False``: LM-Polygraph's ``PromptCalculator``; ``True``: its ``SamplingPromptCalculator``.
    """

    dependencies: tuple[str, ...] = ("input_texts", "greedy_texts")

    def __init__(self, model: Any, *, sampling: bool = False) -> None:
        self.sampling = bool(sampling)
        self.name = "p_true_sampling_prompt" if self.sampling else "p_true_prompt"
        self.stats = ("p_true_sampling",) if self.sampling else ("p_true",)
        if self.sampling:
            self.dependencies = ("input_texts", "greedy_texts", "sample_texts")
        super().__init__(model)

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        prompts, answers = _need(stats, "input_texts", self.name), _need(stats, "greedy_texts", self.name)
        samples = _need(stats, "sample_texts", self.name) if self.sampling else [[] for _ in prompts]
        template = P_TRUE_SAMPLING_PROMPT if self.sampling else P_TRUE_PROMPT
        texts = [template.format(q=q, s=", ".join(s), a=a) for q, a, s in zip(prompts, answers, samples)]
        return {self.stats[0]: self._log_p_true(texts)}


class ClaimPTruePrompt(_PTrueBase):
    """``input_texts``, ``claims``, ``greedy_tokens`` -> ``p_true_claim``: P(True) of each claim of the answer.

    LM-Polygraph's ``ClaimPromptCalculator``: per claim, :data:`P_TRUE_CLAIM_PROMPT` with
    ``q`` the example's prompt and ``a`` the claim's text, and the log-probability of "True"
    as the next token (as :class:`PTruePrompt`). LM-Polygraph reads the two from its
    ``claim_input_texts_concatenated`` and ``claim_texts_concatenated`` (the batch's claims end
    to end); here they come from ``input_texts`` and ``claims``, and the values are given per
    example (one list per example, one value per claim), the layout
    :class:`~assay_uncertainty.estimators_claim.PTrueClaim` reads besides LM-Polygraph's flat one,
    so the values do not depend on the batch.

    A claim's text is its ``claim_text`` (LM-Polygraph's ``Claim``, or a mapping with that key);
    a claim without one (claims made from ``claim_spans``) is given the text of its tokens,
    ``tokenizer.decode`` of ``greedy_tokens[aligned_token_ids]`` without special tokens
    (assay's addition; LM-Polygraph's claims always carry a text).
    """

    name = "p_true_claim_prompt"
    stats = ("p_true_claim",)
    dependencies = ("input_texts", "claims", "greedy_tokens")

    def _claim_text(self, claim: Any, tokens: Sequence[int], where: str) -> str:
        text = claim.get("claim_text") if isinstance(claim, Mapping) else getattr(claim, "claim_text", None)
        if text is not None:
            if not isinstance(text, str):
                raise InvalidParameterError(f"{where}: 'claim_text' must be a string; got {type(text).__name__}.")
            return text
        ids = claim_token_ids(claim, where)
        if ids.size and (ids.max() >= len(tokens) or ids.min() < -len(tokens)):
            raise InvalidParameterError(f"{where}: token index {int(ids.max())} is past the example's {len(tokens)} "
                                        "generated tokens.")
        return str(self.model.tokenizer.decode([int(tokens[k]) for k in ids], skip_special_tokens=True))

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        prompts, claims = _need(stats, "input_texts", self.name), _need(stats, "claims", self.name)
        tokens = _need(stats, "greedy_tokens", self.name)
        if not (len(prompts) == len(claims) == len(tokens)):
            raise InvalidParameterError(f"{self.name}: the batch has {len(prompts)} input_texts, {len(claims)} lists "
                                        f"of claims and {len(tokens)} greedy_tokens; one each per example.")
        texts, counts = [], []
        for i, (q, example, toks) in enumerate(zip(prompts, claims, tokens)):
            counts.append(len(example))
            for j, claim in enumerate(example):
                a = self._claim_text(claim, list(toks), f"stat calculator {self.name!r}, example {i}, claim {j}")
                texts.append(P_TRUE_CLAIM_PROMPT.format(q=q, a=a))
        flat = self._log_p_true(texts)
        out, k = [], 0
        for n in counts:
            out.append(np.asarray(flat[k:k + n], dtype=np.float64))
            k += n
        return {"p_true_claim": out}


class SampleEmbeddings(_WhiteboxCalculator):
    """``input_texts``, ``sample_tokens`` -> ``sample_embeddings`` (one ``(D,)`` vector per sample)."""

    name = "sample_embeddings"
    stats = ("sample_embeddings",)
    dependencies = ("input_texts", "sample_tokens")

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        cfg = self.model.model.config
        layer = int(getattr(cfg, "text_config", cfg).num_hidden_layers // 2)
        out = []
        for prompt, samples in zip(_need(stats, "input_texts", self.name), _need(stats, "sample_tokens", self.name)):
            vecs = []
            for tokens in samples:
                tokens = [int(t) for t in tokens]
                if not tokens:
                    raise InvalidParameterError(f"{self.name}: a sample of the prompt {prompt[:60]!r} has no tokens.")
                res, first = self._forward(prompt, tokens[:-1], output_hidden_states=True)
                if self._seq2seq:
                    vecs.append(_numpy(res.decoder_hidden_states[-1][0]).mean(0))
                else:
                    vecs.append(_numpy(res.hidden_states[layer][0, first + len(tokens) - 2]))
            out.append(vecs)
        return {"sample_embeddings": out}


class PolygraphModel:
    """The model as LM-Polygraph's estimators call it (``stats["model"]``): ``.model``, ``.tokenizer``,
    ``.model_type``, ``.device()`` and :meth:`generate_texts`.

    ``seed``: the run's seed; each :meth:`generate_texts` input is drawn with a seed made of
    it and the input itself, so the draws depend neither on the batch size nor on the order
    in which estimators ask.
    """

    def __init__(self, hf: Any, *, seed: int | None = None) -> None:
        self.hf, self.seed = hf, seed
        self.model, self.tokenizer = hf.model, hf.tokenizer
        self.model_type = "Seq2SeqLM" if hf.type == "seq2seq" else "CausalLM"

    def device(self) -> Any:
        return self.hf.device

    def __repr__(self) -> str:
        return f"PolygraphModel({self.hf!r})"

    def _text(self, item: Any, i: int) -> str:
        if isinstance(item, str):
            return item
        if isinstance(item, Sequence) and all(isinstance(m, Mapping) for m in item):
            if getattr(self.tokenizer, "chat_template", None) is None:
                raise InvalidParameterError(
                    f"generate_texts: input {i} is a chat (a list of messages) and the tokenizer has no chat template "
                    "to format it (verbalized 2S asks a follow-up question as a chat: use an instruction model).")
            return str(self.tokenizer.apply_chat_template(list(item), add_generation_prompt=True, tokenize=False))
        raise InvalidParameterError(f"generate_texts: input {i} must be a string or a list of chat messages; got "
                                    f"{type(item).__name__}.")

    def generate_texts(self, input_texts: Sequence[Any], *, max_new_tokens: int = 100, min_new_tokens: int = 0,
                       num_return_sequences: int = 1, do_sample: bool = False) -> list[str]:
        """The model's replies (new tokens only, special tokens skipped): ``num_return_sequences`` per input,
        input by input, as LM-Polygraph's ``WhiteboxModel.generate_texts`` returns them (temperature 1, no
        top-k or top-p)."""
        import torch  # deferred: torch is imported when a model runs

        texts = [self._text(t, i) for i, t in enumerate(input_texts)]
        out: list[str] = []
        for text in texts:
            enc = self.hf._encode([text])
            kwargs: dict[str, Any] = {"max_new_tokens": int(max_new_tokens), "min_new_tokens": int(min_new_tokens),
                                      "num_return_sequences": int(num_return_sequences), "do_sample": bool(do_sample),
                                      "num_beams": 1, "pad_token_id": self.hf.pad_id,
                                      "eos_token_id": sorted(self.hf.eos_ids) or None}
            if do_sample:
                kwargs.update(temperature=1.0, top_k=0, top_p=1.0)
            with torch.random.fork_rng(devices=[self.device()] if self.device().type == "cuda" else []):
                if self.seed is not None:
                    mix = zlib.crc32(repr((text, sorted(kwargs.items()))).encode())
                    torch.manual_seed(int(np.random.SeedSequence([self.seed, mix]).generate_state(1)[0]))
                with torch.no_grad():
                    seqs = self.model.generate(**enc, **kwargs)
            start = enc["input_ids"].shape[1] if self.hf.type == "causal" else 1
            out.extend(self.tokenizer.decode(s[start:], skip_special_tokens=True) for s in seqs.cpu())
        return out


def whitebox_calculators(model: Any) -> list[StatCalculator]:
    """The calculators of this module for ``model`` (an :class:`~assay_transformers.generation.HFModel`)."""
    calcs: list[StatCalculator] = [HiddenStateEmbeddings(model), GreedyAttention(model), GreedyLMProbs(model),
                                   PTruePrompt(model), PTruePrompt(model, sampling=True), ClaimPTruePrompt(model),
                                   SampleEmbeddings(model)]
    if model.type == "causal":
        calcs.append(ElicitingPromptAttention(model))
    return calcs
