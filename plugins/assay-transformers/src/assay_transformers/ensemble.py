"""A deep ensemble of Hugging Face models decoding together: LM-Polygraph's ``ensemble_token_scores``.

LM-Polygraph 0.7.0's ensemble estimators (``EPT*``, ``PET*``, ``EPS*``, ``PES*``; registered by
``assay-uncertainty``, :mod:`assay_uncertainty.estimators_lmp_ensemble`) read the statistic
``ensemble_token_scores``, which its ``EnsembleTokenLevelDataCalculator`` no longer computes (it
raises ``NotImplementedError``: its ensemble generation patched transformers' old beam search).
:class:`ModelEnsemble` computes it here from several local model folders that share a tokenizer
(Malinin & Gales 2021, "Uncertainty Estimation in Autoregressive Structured Prediction").

**Why our own decoding.** transformers' ``generate`` runs one model: it cannot average
several models' next-token distributions at each step, nor carry each member's running
log-probability of a beam (the ``ep`` posterior below needs it). So the ensemble decodes with
its own beam search: at each step every member runs a forward pass over the running beams
(prompt and the tokens so far; no key/value cache, so the cost grows with the square of the
answer length: fine for short answers, slow for long ones).

**The members.** ``M`` models: the backend's model and the folders of its ``ensemble``
option (LM-Polygraph's ensemble: the model and its ``_models_list``). They must agree on the
tokenizer's vocabulary (the same token for each id), its special tokens, the size of the
logits and the model type (all causal or all seq2seq), else an error names the folders; a
prompt that two members' tokenizers encode differently is an error too.

**The posteriors**, for a prefix ``y_<t`` with member ``m``'s next-token log-probabilities
``l_m(v) = log_softmax(logits_m)(v)`` and its log-probability of the prefix
``L_m = sum_{s<t} l_m(y_s)``:

- ``pe`` (product of expectations): ``log p_pe(v) = logsumexp_m l_m(v) - log M``;
- ``ep`` (expectation of products): ``log p_ep(v) = logsumexp_m (L_m + l_m(v)) - logsumexp_m L_m``.

``ensembling_mode`` (LM-Polygraph's option, default ``"pe"``) picks the posterior the beams
are decoded with and weighted by.

**Beam search** with ``B = num_beams`` beams (default 5, LM-Polygraph's
``num_return_sequences``): start from the empty answer; at each step extend every running
beam by every token, score each candidate by its running sum of ``log p_mode``, and keep the
best ``B - (beams finished so far)``; a beam finishes at an EOS token (kept), at the token that
completes a stop string (``generation_params["stop_strings"]``), or after ``max_new_tokens``
tokens. The ``B`` finished beams are ranked by ``S_b / T_b ** length_penalty`` (``S_b`` their
sum of ``log p_mode``, ``T_b`` their number of tokens). ``B = 1`` is greedy decoding of the
mode's posterior. Temperature, top-k and top-p do not apply (no sampling); a
``repetition_penalty`` is rejected.

**Token-level measures** at each step, for each posterior ``p`` (``pe`` and ``ep``), in nats:
``total_uncertainty = H(p)``; ``data_uncertainty = mean_m H(p_m)``; ``mutual_information =
total - data``; ``epkl_total_uncertainty = -sum_v p(v) mean_m l_m(v)``; ``epkl =
epkl_total_uncertainty - data_uncertainty``; ``rmi = epkl_total_uncertainty - total_uncertainty``
(LM-Polygraph's formulas); ``entropy = H(p)``; ``entropy_top{5,10,15}``: the entropy of ``p``'s
``K`` most probable tokens renormalised (LM-Polygraph's disabled code computed these three from
the decoding posterior in both dicts; here each dict's from its own posterior).

**The statistic** of one example (a dict; the manager's column holds one per example, which
:func:`assay_uncertainty.estimators_lmp_ensemble.batch_scores` stacks into LM-Polygraph's
whole-batch layout), with ``n_b = T_b ** length_penalty``:

- ``pe_token_level_scores``, ``ep_token_level_scores``: per measure a ``(B,)`` array, the beam's
  sum of that token-level measure over its ``T_b`` tokens divided by ``n_b``; and
  ``log_probas`` ``(M, B)``: member ``m``'s log-probability of beam ``b`` divided by ``n_b``
  (``probas = exp(log_probas)``; the same in both dicts);
- ``weights`` ``(B,)``: ``softmax_b(S_b / n_b)``, the beams' weights (decoding posterior);
  ``scores_unbiased``: ``S_b / n_b``;
- ``log_probas``, ``probas``, ``entropy``, ``entropy_top5/10/15``: as in the decoding mode's dict
  (LM-Polygraph's top-level keys);
- ``texts`` (``B`` strings) and ``tokens`` (``B`` arrays of token ids): the beams.

LM-Polygraph's disabled code divided ``log_probas`` by ``T_b + 1``, counting the seq2seq
decoder's start token as a generated one; here by the ``T_b`` tokens the members predicted.

Each example is decoded on its own (no padding), so the values do not depend on the batch size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import StatCalculator
from assay_transformers.generation_params import check_generation_params

__all__ = ["ENSEMBLE_GENERATION_PARAMS", "ENSEMBLING_MODES", "TOKEN_MEASURES", "Beam", "EnsembleTokenScoresCalculator",
           "ModelEnsemble", "check_ensemble_options"]

#: LM-Polygraph's ensembling modes: product of expectations, expectation of products
ENSEMBLING_MODES = ("pe", "ep")
#: the keys of ``ensemble_generation_params`` (LM-Polygraph's names) and their defaults
ENSEMBLE_GENERATION_PARAMS: dict[str, Any] = {"num_beams": 5, "length_penalty": 1.0}
#: the token-level measures of each posterior's dict, besides ``log_probas`` and ``probas``
TOKEN_MEASURES = ("total_uncertainty", "data_uncertainty", "mutual_information", "epkl_total_uncertainty", "epkl",
                  "rmi", "entropy", "entropy_top5", "entropy_top10", "entropy_top15")
_TOP_K = (5, 10, 15)


def check_ensemble_options(ensembling_mode: Any, params: Mapping[str, Any] | None) -> tuple[str, int, float]:
    """``(mode, num_beams, length_penalty)`` from the options; an error names the option that is wrong."""
    if ensembling_mode not in ENSEMBLING_MODES:
        raise InvalidParameterError(f"'ensembling_mode' must be one of {', '.join(ENSEMBLING_MODES)}; "
                                    f"got {ensembling_mode!r}.")
    params = dict(params or {})
    unknown = sorted(set(params) - set(ENSEMBLE_GENERATION_PARAMS))
    if unknown:
        raise InvalidParameterError(f"'ensemble_generation_params' has unknown keys {', '.join(map(repr, unknown))}; "
                                    f"known: {', '.join(ENSEMBLE_GENERATION_PARAMS)}.")
    beams = params.get("num_beams", ENSEMBLE_GENERATION_PARAMS["num_beams"])
    if isinstance(beams, bool) or not isinstance(beams, int) or beams < 1:
        raise InvalidParameterError(f"'ensemble_generation_params' num_beams must be an integer >= 1; got {beams!r}.")
    penalty = params.get("length_penalty", ENSEMBLE_GENERATION_PARAMS["length_penalty"])
    if isinstance(penalty, bool) or not isinstance(penalty, (int, float)) or not math.isfinite(penalty):
        raise InvalidParameterError(f"'ensemble_generation_params' length_penalty must be a finite number; "
                                    f"got {penalty!r}.")
    return str(ensembling_mode), int(beams), float(penalty)


@attrs.frozen
class Beam:
    """One finished beam: its tokens and text, each step's measures (``(T,)`` per name, keys
    ``"pe:<measure>"`` and ``"ep:<measure>"``), the members' token log-probabilities ``(M, T)``
    and the decoding posterior's ``(T,)``."""

    tokens: list[int]
    text: str
    measures: dict[str, np.ndarray]
    member_log_probs: np.ndarray
    mode_log_probs: np.ndarray


def _name(member: Any) -> str:
    return str(getattr(member.model.config, "_name_or_path", "") or type(member.model).__name__)


def _logits_size(member: Any) -> int:
    head = member.model.get_output_embeddings() if callable(getattr(member.model, "get_output_embeddings", None)) \
        else None
    return int(head.weight.shape[0]) if head is not None else int(member.model.config.vocab_size)


class ModelEnsemble:
    """``M`` Hugging Face models (:class:`~assay_transformers.generation.HFModel`) decoding together (module docstring).

    Parameters
    ----------
    members : the models (two or more), the first one's tokenizer encodes and decodes
    ensembling_mode : {"pe", "ep"}, default "pe"
    num_beams : int, default 5
    length_penalty : float, default 1.0
    """

    def __init__(self, members: Sequence[Any], *, ensembling_mode: str = "pe", num_beams: int = 5,
                 length_penalty: float = 1.0) -> None:
        self.mode, self.num_beams, self.length_penalty = check_ensemble_options(
            ensembling_mode, {"num_beams": num_beams, "length_penalty": length_penalty})
        self.members = list(members)
        if len(self.members) < 2:
            raise InvalidParameterError(f"An ensemble needs two or more models; got {len(self.members)}.")
        first = self.members[0]
        vocab, size = first.tokenizer.get_vocab(), _logits_size(first)
        specials = {k: getattr(first.tokenizer, k, None) for k in ("eos_token_id", "pad_token_id", "bos_token_id")}
        for other in self.members[1:]:
            where = f"the ensemble's models {_name(first)!r} and {_name(other)!r}"
            if other.type != first.type:
                raise InvalidParameterError(f"{where} are of different types ({first.type} and {other.type}); the "
                                            "members must be all causal or all seq2seq.")
            theirs = other.tokenizer.get_vocab()
            if theirs != vocab:
                diff = sorted(set(vocab.items()) ^ set(theirs.items()))[:3]
                raise InvalidParameterError(
                    f"{where} have different tokenizer vocabularies ({len(vocab)} and {len(theirs)} tokens; e.g. "
                    f"{diff}); the members must share one tokenizer (the same token for each id).")
            their_specials = {k: getattr(other.tokenizer, k, None) for k in specials}
            if their_specials != specials or other.eos_ids != first.eos_ids:
                raise InvalidParameterError(f"{where} have different special tokens ({specials}, EOS {first.eos_ids} "
                                            f"and {their_specials}, EOS {other.eos_ids}).")
            if _logits_size(other) != size:
                raise InvalidParameterError(f"{where} give logits of different sizes ({size} and "
                                            f"{_logits_size(other)}); the members must share the vocabulary.")
        if self.num_beams > size:
            raise InvalidParameterError(f"'ensemble_generation_params' num_beams ({self.num_beams}) must be at most "
                                        f"the vocabulary size ({size}).")
        self.type, self.eos_ids, self.vocab_size = first.type, first.eos_ids, size

    def __repr__(self) -> str:
        names = ", ".join(repr(_name(m)) for m in self.members)
        return (f"ModelEnsemble([{names}], ensembling_mode={self.mode!r}, num_beams={self.num_beams}, "
                f"length_penalty={self.length_penalty})")

    # ------------------------------------------------------------------ the members' next-token log-probabilities
    def _encode(self, prompt: str) -> list[int]:
        ids = [list(m.tokenizer(prompt)["input_ids"]) for m in self.members]
        for m, other in zip(self.members[1:], ids[1:]):
            if other != ids[0]:
                raise InvalidParameterError(f"The ensemble's models {_name(self.members[0])!r} and {_name(m)!r} "
                                            f"encode the prompt {prompt!r:.80} differently.")
        if not ids[0] and self.type == "causal":
            raise InvalidParameterError(f"The prompt {prompt!r} encodes to no token; a causal model needs one.")
        return ids[0]

    def _start(self, member: Any, prompt_ids: list[int]) -> Any:
        """What each step's forward pass of ``member`` reuses: the encoder's output for a seq2seq model."""
        import torch

        if self.type != "seq2seq":
            return None
        ids = torch.tensor([prompt_ids], device=member.device)
        with torch.no_grad():
            return member.model.get_encoder()(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state

    def _next_log_probs(self, prompt_ids: list[int], prefixes: list[list[int]], encoded: list[Any]) -> Any:
        """``(M, R, V)`` float64: each member's next-token log-probabilities after each prefix (teacher-forced)."""
        import torch
        from transformers.modeling_outputs import BaseModelOutput

        rows = []
        for member, enc in zip(self.members, encoded):
            dev = member.device
            with torch.no_grad():
                if self.type == "seq2seq":
                    start = getattr(member.model.generation_config, "decoder_start_token_id", None)
                    if start is None:
                        start = member.model.config.decoder_start_token_id
                    dec = torch.tensor([[int(start), *p] for p in prefixes], device=dev)
                    hidden = enc.expand(len(prefixes), -1, -1)
                    mask = torch.ones(hidden.shape[:2], dtype=torch.long, device=dev)
                    logits = member.model(encoder_outputs=BaseModelOutput(last_hidden_state=hidden),
                                          attention_mask=mask, decoder_input_ids=dec).logits[:, -1, :]
                else:
                    ids = torch.tensor([prompt_ids + p for p in prefixes], device=dev)
                    logits = member.model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[:, -1, :]
            rows.append(torch.log_softmax(logits.double().cpu(), dim=-1))
        return torch.stack(rows)

    # ------------------------------------------------------------------ the measures of one step
    def _measures(self, lp: Any, cum: Any) -> tuple[dict[str, Any], Any]:
        """Each running beam's token-level measures (``{"pe:<m>": (R,), "ep:<m>": (R,)}``) and the decoding
        posterior ``(R, V)``, from the members' log-probabilities ``lp`` ``(M, R, V)`` and their log-probabilities
        of the prefixes ``cum`` ``(M, R)``."""
        import torch

        def weighted(p: Any, log: Any) -> Any:  # sum_v p(v) log(v), a token of probability 0 counting 0
            return torch.where(p > 0, p * log, torch.zeros_like(p)).sum(-1)

        m = lp.shape[0]
        posteriors = {"pe": torch.logsumexp(lp, 0) - math.log(m),
                      "ep": torch.logsumexp(lp + cum[:, :, None], 0) - torch.logsumexp(cum, 0)[:, None]}
        data = (-weighted(lp.exp(), lp)).mean(0)
        mean_lp = lp.mean(0)
        out: dict[str, Any] = {}
        for mode, post in posteriors.items():
            p = post.exp()
            total = -weighted(p, post)
            epkl_total = -weighted(p, mean_lp)
            vals = {"total_uncertainty": total, "data_uncertainty": data, "mutual_information": total - data,
                    "epkl_total_uncertainty": epkl_total, "epkl": epkl_total - data, "rmi": epkl_total - total,
                    "entropy": total}
            for k in _TOP_K:
                top = p.topk(min(k, p.shape[-1]), dim=-1).values
                q = top / top.sum(-1, keepdim=True)
                vals[f"entropy_top{k}"] = -weighted(q, torch.log(q))
            out.update({f"{mode}:{name}": v for name, v in vals.items()})
        return out, posteriors[self.mode]

    # ------------------------------------------------------------------ beam search
    def decode(self, prompt: str, *, max_new_tokens: int, stop_strings: Sequence[str] = ()) -> list[Beam]:
        """The ``num_beams`` beams for ``prompt``, best first (module docstring)."""
        import torch

        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise InvalidParameterError(f"'max_new_tokens' must be an integer >= 1; got {max_new_tokens!r}.")
        prompt_ids = self._encode(prompt)
        encoded = [self._start(member, prompt_ids) for member in self.members]
        n_members = len(self.members)
        # a running beam: (tokens, score, members' step log-probs, decoding step log-probs, measures per step)
        running: list[tuple[list[int], float, list[Any], list[float], list[dict[str, float]]]] = [
            ([], 0.0, [], [], [])]
        finished: list[Beam] = []
        scores: list[float] = []
        for step in range(max_new_tokens):
            lp = self._next_log_probs(prompt_ids, [r[0] for r in running], encoded)  # (M, R, V)
            cum = torch.tensor([[sum(float(x[i]) for x in r[2]) for r in running] for i in range(n_members)],
                               dtype=torch.float64).reshape(n_members, len(running))
            measures, post = self._measures(lp, cum)
            keep = self.num_beams - len(finished)
            cand = (torch.tensor([r[1] for r in running], dtype=torch.float64)[:, None] + post).reshape(-1)
            _, best = cand.topk(keep)
            nxt = []
            for flat in best.tolist():
                r, tok = divmod(flat, self.vocab_size)
                tokens, score, member_lps, mode_lps, steps = running[r]
                tokens = [*tokens, tok]
                score = score + float(post[r, tok])
                member_lps = [*member_lps, lp[:, r, tok].numpy()]
                mode_lps = [*mode_lps, float(post[r, tok])]
                steps = [*steps, {k: float(v[r]) for k, v in measures.items()}]
                text, stop = self._text(tokens, stop_strings)
                if stop or step == max_new_tokens - 1:
                    finished.append(Beam(tokens=tokens, text=text,
                                         measures={k: np.array([s[k] for s in steps]) for k in steps[0]},
                                         member_log_probs=np.stack(member_lps, axis=1),
                                         mode_log_probs=np.array(mode_lps)))
                    scores.append(score / len(tokens) ** self.length_penalty)
                else:
                    nxt.append((tokens, score, member_lps, mode_lps, steps))
            running = nxt
            if not running:
                break
        order = sorted(range(len(finished)), key=lambda i: -scores[i])
        return [finished[i] for i in order]

    def _text(self, tokens: list[int], stop_strings: Sequence[str]) -> tuple[str, bool]:
        """The beam's text and whether it has ended (EOS, or a stop string completed), as HFModel cuts answers."""
        decode = self.members[0].tokenizer.decode
        if tokens[-1] in self.eos_ids:
            return decode(tokens[:-1], skip_special_tokens=True), True
        text = decode(tokens, skip_special_tokens=True)
        hits = [text.find(s) for s in stop_strings if s in text]
        if hits:
            return text[: min(hits)], True
        return text, False

    def token_scores(self, prompt: str, *, max_new_tokens: int, stop_strings: Sequence[str] = ()) -> dict[str, Any]:
        """One example's ``ensemble_token_scores`` (module docstring)."""
        beams = self.decode(prompt, max_new_tokens=max_new_tokens, stop_strings=stop_strings)
        norm = np.array([len(b.tokens) ** self.length_penalty for b in beams])
        log_probas = np.stack([b.member_log_probs.sum(-1) for b in beams], axis=1) / norm  # (M, B)
        unbiased = np.array([b.mode_log_probs.sum() for b in beams]) / norm
        weights = np.exp(unbiased - unbiased.max())
        weights /= weights.sum()
        out: dict[str, Any] = {"weights": weights, "scores_unbiased": unbiased,
                               "texts": [b.text for b in beams],
                               "tokens": [np.asarray(b.tokens, dtype=np.int64) for b in beams]}
        for mode in ENSEMBLING_MODES:
            scores = {name: np.array([b.measures[f"{mode}:{name}"].sum() for b in beams]) / norm
                      for name in TOKEN_MEASURES}
            out[f"{mode}_token_level_scores"] = {**scores, "log_probas": log_probas, "probas": np.exp(log_probas)}
        own = out[f"{self.mode}_token_level_scores"]
        out.update({k: own[k] for k in ("log_probas", "probas", "entropy", "entropy_top5", "entropy_top10",
                                        "entropy_top15")})
        return out


class EnsembleTokenScoresCalculator(StatCalculator):
    """``input_texts`` -> ``ensemble_token_scores`` (one dict per example; :class:`ModelEnsemble`)."""

    name = "ensemble_token_data"
    stats = ("ensemble_token_scores",)
    dependencies = ("input_texts",)

    def __init__(self, ensemble: ModelEnsemble, *, max_new_tokens: int = 100,
                 generation_params: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        params = check_generation_params(generation_params)
        if "repetition_penalty" in params:
            raise InvalidParameterError("generation_params['repetition_penalty'] does not apply to the ensemble's "
                                        "beam search (ensemble_token_scores); leave it out with an ensemble.")
        self.ensemble, self.max_new_tokens = ensemble, max_new_tokens
        self.stop_strings = list(params.get("stop_strings", []))

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        if "input_texts" not in stats:
            raise InvalidParameterError("ensemble_token_scores reads 'input_texts' (one prompt per example); the "
                                        "batch has none.")
        return {"ensemble_token_scores": [
            self.ensemble.token_scores(str(p), max_new_tokens=self.max_new_tokens, stop_strings=self.stop_strings)
            for p in stats["input_texts"]]}
