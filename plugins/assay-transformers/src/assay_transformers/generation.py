"""Generation with a Hugging Face model: tokens and per-step log-softmax rows, cut at EOS or a stop string.

:class:`HFModel` wraps a model and its tokenizer (loaded from a folder, or given). Its
:meth:`~HFModel.generate` runs ``model.generate`` on a batch of prompts (left padding
for decoder-only models, with the attention mask and position ids that make padding
change no number) and returns, per prompt and per returned sequence, a
:class:`Generation`: the generated token ids, the log-softmax row of the model's raw
logits at each step (``(T, V)``, float32), and the text.

**Where a generation ends.** At the first EOS token (any id of the generation config's
``eos_token_id``), which is *kept* in the tokens and rows (its row is the step that
chose EOS) and left out of the text; else at the first token whose decoded prefix
contains a stop string (``generation_params["stop_strings"]``), kept in the tokens and
rows, the text cut before the stop string; else after ``max_new_tokens`` tokens. Stop
strings are applied after generation: a decoder's later tokens never change the rows
of earlier ones, so cutting afterwards gives the numbers generation would have given
had it stopped there.

**Sampling** uses ``temperature`` (default 1.0), ``top_k`` (default 0: off) and ``top_p``
(default 1.0) as given, never the model's or transformers' defaults (transformers' own
default is top-k 50). Other settings of the model's ``generation_config.json`` (a forced
first token, a repetition penalty ...) apply as ``model.generate`` applies them.

**Log-probabilities** are ``log_softmax`` of the model's raw logits (``output_logits``),
the model's own distribution, before temperature, top-k or top-p reshape it for
sampling (those change which token is drawn, not the reported probability).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from assay.errors import InvalidParameterError
from assay_transformers.ensemble import EnsembleTokenScoresCalculator, ModelEnsemble, check_ensemble_options
from assay_transformers.generation_params import GENERATION_PARAMS, check_generation_params
from assay_transformers.loading import folder_digest
from assay_transformers.stats import calculators_for

__all__ = ["GENERATION_PARAMS", "Generation", "HFModel", "check_generation_params"]


@attrs.frozen
class Generation:
    """One generated sequence: token ids, text, whether EOS ended it, the log-probability of each token
    (``(T,)``) and, when asked for, the per-step log-softmax rows (``(T, V)``, else None)."""

    tokens: list[int]
    token_log_probs: np.ndarray
    text: str
    ended_with_eos: bool
    log_probs: np.ndarray | None = None


class HFModel:
    """A Hugging Face model and tokenizer ready to generate; the ``transformers`` model backend.

    Parameters
    ----------
    model : folder path, ``(model, tokenizer)`` pair, or another :class:`HFModel`
    type : {"causal", "seq2seq"} or None (read from the model's config)
    device : for a path: where to load it (None: CUDA when available, else CPU)
    dtype : for a path: ``"float32"`` (default) ...; see :func:`~assay_transformers.loading.load_model`
    load_args : for a path: more ``from_pretrained`` arguments (not ``trust_remote_code``)
    trust_remote_code : for a path: run the folder's own Python (``auto_map``); a keyword of its
        own, so that a ``load_args`` mapping read from a config file cannot set it
    ensemble : more models (folders, pairs or :class:`HFModel`; folders loaded with the same ``type``,
        ``device``, ``dtype``, ``load_args`` and ``trust_remote_code``): with ``model`` they are a deep
        ensemble whose beam search gives LM-Polygraph's ``ensemble_token_scores``
        (:mod:`assay_transformers.ensemble`), for the ensemble estimators (EPT*, PET*, EPS*, PES*)
    ensembling_mode : {"pe", "ep"} (default "pe"), with ``ensemble`` only: the posterior the beams are
        decoded with and weighted by
    ensemble_generation_params : with ``ensemble`` only: ``num_beams`` (default 5), ``length_penalty`` (1.0)
    """

    def __init__(self, model: Any, *, type: str | None = None, device: str | None = None,
                 dtype: str | None = "float32", load_args: Mapping[str, Any] | None = None,
                 tokenizer: Any = None, trust_remote_code: bool = False, ensemble: Sequence[Any] | None = None,
                 ensembling_mode: str | None = None,
                 ensemble_generation_params: Mapping[str, Any] | None = None) -> None:
        from assay_transformers.loading import MODEL_TYPES, load_model, model_type_of

        asked_type = type  # the ensemble's other folders load with the type asked for, not the one read here
        if load_args and "trust_remote_code" in load_args:
            raise InvalidParameterError(
                "load_args['trust_remote_code']: running a model folder's own code is opted in only with the "
                "keyword trust_remote_code=True (assay ue --trust-remote-code), not through load_args.")
        #: the folder the model was loaded from and its load options (None: given as objects); see fingerprint()
        self.folder: Path | None = None
        self.load_options: dict[str, Any] = {}
        if isinstance(model, HFModel):
            self.folder, self.load_options = model.folder, dict(model.load_options)
            model, tokenizer, type = model.model, model.tokenizer, type or model.type
        if isinstance(model, (str, os.PathLike)):
            self.folder = Path(model).expanduser().resolve()
            self.load_options = {"dtype": dtype, "load_args": dict(load_args or {}),
                                 "trust_remote_code": trust_remote_code}
            model, tokenizer, type = load_model(model, type=type, device=device, dtype=dtype,
                                                trust_remote_code=trust_remote_code, **dict(load_args or {}))
        elif isinstance(model, tuple) and len(model) == 2 and tokenizer is None:
            model, tokenizer = model
        if not callable(getattr(model, "generate", None)):
            raise InvalidParameterError(
                f"The model must be a folder path, a (model, tokenizer) pair or a loaded Hugging Face model with "
                f"generate(); got {model.__class__.__name__}.")
        if tokenizer is None or not callable(tokenizer):
            raise InvalidParameterError("A loaded model needs its tokenizer: pass model=(model, tokenizer).")
        if type is not None and type not in MODEL_TYPES:
            raise InvalidParameterError(f"The model 'type' must be one of {', '.join(MODEL_TYPES)}; got {type!r}.")
        self.model: Any = model
        self.tokenizer: Any = tokenizer
        self.type = type or model_type_of(model)
        eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        if eos is None:
            eos = getattr(tokenizer, "eos_token_id", None)
        self.eos_ids = set(eos if isinstance(eos, (list, tuple)) else ([] if eos is None else [eos]))
        pad = getattr(tokenizer, "pad_token_id", None)
        if pad is None:
            pad = getattr(model.config, "pad_token_id", None)
        if pad is None:
            pad = min(self.eos_ids) if self.eos_ids else 0
        self.pad_id = int(pad)
        self.ensemble = self._ensemble(ensemble, ensembling_mode, ensemble_generation_params,
                                       type=asked_type, device=device, dtype=dtype, load_args=load_args,
                                       trust_remote_code=trust_remote_code)

    def _ensemble(self, ensemble: Sequence[Any] | None, mode: str | None, params: Mapping[str, Any] | None,
                  **load: Any) -> Any:
        """The :class:`~assay_transformers.ensemble.ModelEnsemble` of this model and ``ensemble`` (None without)."""
        if ensemble is None:
            for key, value in (("ensembling_mode", mode), ("ensemble_generation_params", params)):
                if value is not None:
                    raise InvalidParameterError(f"{key!r} applies to an ensemble; give the other models' folders "
                                                "in 'ensemble' too.")
            return None
        if isinstance(ensemble, (str, os.PathLike)) or not isinstance(ensemble, Sequence) or not ensemble:
            raise InvalidParameterError(f"'ensemble' must be a non-empty list of model folders (the ensemble's "
                                        f"models besides this one); got {ensemble!r:.120}.")
        mode_, beams, penalty = check_ensemble_options("pe" if mode is None else mode, params)
        members = [self, *(m if isinstance(m, HFModel) else HFModel(m, **load) for m in ensemble)]
        return ModelEnsemble(members, ensembling_mode=mode_, num_beams=beams, length_penalty=penalty)

    @staticmethod
    def accepts(model: Any) -> bool:
        """Whether this backend takes ``model``: a path, a ``(model, tokenizer)`` pair or an :class:`HFModel`
        (not an http(s) URL: the ``openai`` backend's)."""
        if isinstance(model, str) and model.startswith(("http://", "https://")):
            return False
        if isinstance(model, (str, os.PathLike, HFModel)):
            return True
        return isinstance(model, tuple) and len(model) == 2 and callable(getattr(model[0], "generate", None))

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    def __repr__(self) -> str:
        name = getattr(self.model.config, "_name_or_path", "") or type(self.model).__name__
        more = "" if self.ensemble is None else f", ensemble={self.ensemble!r}"
        return f"HFModel({name!r}, type={self.type!r}, device={str(self.device)!r}{more})"

    def fingerprint(self) -> dict[str, Any]:
        """What identifies this model's outputs, for a resumable run's cache (``UEManager(cache_dir=...)``).

        A model loaded from a folder: a SHA-256 of the folder's files (the judge's
        :func:`~assay_transformers.loading.folder_digest`, kept per process) and the load
        options; a model given as objects: a SHA-256 of its weights (every tensor of its
        ``state_dict``, read once per call: seconds for a model of several GB) and of its
        tokenizer's vocabulary. Both with the model's class, type, dtype and device type (the
        numbers of a GPU run are not a CPU run's).
        """
        import torch  # deferred: torch is heavy and needed only to read the weights

        if self.folder is not None:
            weights: dict[str, Any] = {"files_sha256": folder_digest(self.folder), **self.load_options}
        else:
            h = hashlib.sha256()
            for name, tensor in sorted(self.model.state_dict().items()):
                t = tensor.detach().contiguous().reshape(-1).cpu()
                h.update(f"{name}\0{t.dtype}\0{tuple(tensor.shape)}\0".encode())
                h.update(t.view(torch.uint8).numpy().tobytes())
            tok = self.tokenizer
            vocab = sorted(tok.get_vocab().items()) if callable(getattr(tok, "get_vocab", None)) else None
            text = json.dumps([type(tok).__name__, vocab, sorted(map(str, getattr(tok, "all_special_tokens", [])))],
                              ensure_ascii=False)
            weights = {"weights_sha256": h.hexdigest(),
                       "tokenizer_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
        return {"backend": "transformers", "class": type(self.model).__name__, "type": self.type,
                "dtype": str(getattr(self.model, "dtype", "")), "device": self.device.type, **weights}

    # ------------------------------------------------------------------ the StatCalculators
    def calculators(self, *, max_new_tokens: int = 100, generation_params: Mapping[str, Any] | None = None,
                    samples_n: int = 10, seed: int | None = None) -> list[Any]:
        """The stat calculators of this model for one manager run (see :mod:`assay_transformers.stats`), and
        with an ensemble its ``ensemble_token_scores`` (:mod:`assay_transformers.ensemble`)."""
        calcs = calculators_for(self, max_new_tokens=max_new_tokens, generation_params=generation_params,
                                samples_n=samples_n, seed=seed)
        if self.ensemble is not None:
            calcs.append(EnsembleTokenScoresCalculator(self.ensemble, max_new_tokens=max_new_tokens,
                                                       generation_params=generation_params))
        return calcs

    def shared_stats(self, *, seed: int | None = None) -> dict[str, Any]:
        """What every batch's statistics hold besides the columns, as LM-Polygraph's manager passes them:
        ``model`` (a :class:`~assay_transformers.whitebox_stats.PolygraphModel`) and ``tokenizer``."""
        from assay_transformers.whitebox_stats import PolygraphModel

        return {"model": PolygraphModel(self, seed=seed), "tokenizer": self.tokenizer}

    # ------------------------------------------------------------------ generation
    def _encode(self, texts: Sequence[str]) -> dict[str, Any]:
        tok = self.tokenizer
        side, pad = getattr(tok, "padding_side", "right"), tok.pad_token
        if pad is None and tok.eos_token is None:
            raise InvalidParameterError(
                "The tokenizer has neither a pad token nor an EOS token, so prompts cannot be batched; set "
                "tokenizer.pad_token first.")
        try:  # the pad id does not matter under the attention mask: borrow EOS (GPT-2 has no pad token)
            tok.padding_side = "left" if self.type == "causal" else "right"
            if pad is None:
                tok.pad_token = tok.eos_token
            enc = tok(list(texts), return_tensors="pt", padding=True)
        finally:
            tok.padding_side = side
            if pad is None:
                tok.pad_token = None
        return {"input_ids": enc["input_ids"].to(self.device), "attention_mask": enc["attention_mask"].to(self.device)}

    def generate(self, texts: Sequence[str], *, max_new_tokens: int, do_sample: bool = False,
                 num_return_sequences: int = 1, generation_params: Mapping[str, Any] | None = None,
                 seed: int | None = None, rows: bool = True) -> list[list[Generation]]:
        """Generate for each prompt; ``result[i][k]`` is prompt ``i``'s sequence ``k``.

        Greedy (``do_sample=False``) ignores temperature, top-k and top-p; stop strings
        apply to both. With ``do_sample`` and a ``seed``, the draws are reproducible for
        the same prompts in the same batch (the generator is seeded before the batch).
        ``rows=False`` keeps only each token's log-probability, not the ``(T, V)`` rows.
        """
        import torch
        from transformers import GenerationConfig

        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise InvalidParameterError(f"'max_new_tokens' must be an integer >= 1; got {max_new_tokens!r}.")
        params = check_generation_params(generation_params)
        stops = params.pop("stop_strings", [])
        texts = list(texts)
        if not texts:
            return []
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise InvalidParameterError(f"Prompt {i} must be a string; got {type(t).__name__}.")
        enc = self._encode(texts)
        cfg: dict[str, Any] = {"max_new_tokens": max_new_tokens, "do_sample": do_sample, "num_beams": 1,
                               "num_return_sequences": num_return_sequences, "return_dict_in_generate": True,
                               "output_logits": True, "pad_token_id": self.pad_id,
                               "eos_token_id": sorted(self.eos_ids) or None}
        if "repetition_penalty" in params:
            cfg["repetition_penalty"] = float(params["repetition_penalty"])
        if do_sample:
            # explicit, never None: transformers fills an unset value from the model's generation_config.json,
            # then from its global defaults (top_k=50); 0 turns top-k off
            cfg.update(temperature=float(params.get("temperature", 1.0)), top_k=int(params.get("top_k", 0)),
                       top_p=float(params.get("top_p", 1.0)))
        if self.type == "seq2seq":
            start = getattr(self.model.generation_config, "decoder_start_token_id", None)
            if start is None:
                start = getattr(self.model.config, "decoder_start_token_id", None)
            cfg["decoder_start_token_id"] = start
        gen_config = GenerationConfig(**cfg)
        with torch.random.fork_rng(devices=[self.device] if self.device.type == "cuda" else []):
            if seed is not None:
                torch.manual_seed(seed)
            with torch.no_grad():
                out = self.model.generate(**enc, generation_config=gen_config)
        logits = torch.stack(list(out.logits), dim=1)  # (B * R, steps, V)
        log_probs = torch.log_softmax(logits.float(), dim=-1)
        start = enc["input_ids"].shape[1] if self.type == "causal" else 1
        generated = out.sequences[:, start:]
        chosen = log_probs.gather(-1, generated.unsqueeze(-1)).squeeze(-1).cpu().numpy()  # (B * R, steps)
        full = log_probs.cpu().numpy() if rows else [None] * len(chosen)
        result: list[list[Generation]] = [[] for _ in texts]
        for row, (seq, tok_lp, lp) in enumerate(zip(generated.cpu().tolist(), chosen, full)):
            result[row // num_return_sequences].append(self._cut(seq, tok_lp, lp, stops))
        return result

    def _decode(self, tokens: list[int]) -> str:
        return self.tokenizer.decode(tokens, skip_special_tokens=True)

    def _cut(self, seq: list[int], tok_lp: np.ndarray, lp: np.ndarray | None, stops: list[str]) -> Generation:
        """The generation up to its end (see the module docstring)."""
        end, eos = len(seq), False
        for j, t in enumerate(seq):
            if t in self.eos_ids:
                end, eos = j + 1, True
                break
        text_tokens = seq[: end - 1] if eos else seq[:end]
        text = self._decode(text_tokens)
        if stops and any(s in text for s in stops):
            for j in range(len(text_tokens)):
                prefix = self._decode(text_tokens[: j + 1])
                hits = [prefix.find(s) for s in stops if s in prefix]
                if hits:
                    end, eos, text = j + 1, False, prefix[: min(hits)]
                    break
        return Generation(tokens=[int(t) for t in seq[:end]], token_log_probs=tok_lp[:end].astype(np.float64),
                          text=text, ended_with_eos=eos,
                          log_probs=None if lp is None else np.ascontiguousarray(lp[:end]))
