"""AlignScore as a generation metric: LM-Polygraph's ``AlignScore``, on a local safetensors model folder.

AlignScore (Zha et al., ACL 2023, "AlignScore: Evaluating Factual Consistency with a Unified
Alignment Function") scores how well a *claim* is supported by a *context* with a RoBERTa
encoder and a 3-way classification head (aligned / contradicting / neutral) on its pooled
output. Its ``nli_sp`` mode, which LM-Polygraph 0.7.0 uses, is:

1. the context is split into sentences, and the sentences are grouped into chunks of about
   350 words (``n = words // 350 + 1`` chunks wanted; ``max(sentences // n, 1)`` sentences per
   chunk, joined by a space);
2. the claim is split into sentences;
3. every (chunk, claim sentence) pair is encoded as one pair (truncating the chunk, padded to
   the tokenizer's maximum length), and the softmax probability of the head's first class
   ("aligned") is taken;
4. the score is the mean over claim sentences of the maximum over chunks.

This module is our own implementation of that published computation (the reference code
loads a pickled Lightning checkpoint and downloads spaCy and NLTK data; assay does neither).
Written here because no release of the reference installs beside numpy 2 / transformers 5.

**Model folder** (``model=``): a Hugging Face RoBERTa folder (``config.json``, tokenizer
files) whose ``model.safetensors`` holds the AlignScore model's state dict under the
reference's names: ``base_model.*`` (the RoBERTa encoder with its pooler) and
``tri_layer.weight`` / ``tri_layer.bias`` (the 3-way head); other keys (the MLM, binary and
regression heads) are ignored. The weights are read with safetensors only; nothing is
unpickled. A reference checkpoint (``AlignScore-large.ckpt``) converts once, where it is
trusted: keep the ``base_model.*`` and ``tri_layer.*`` entries of ``torch.load(ckpt)["state_dict"]``
(``.contiguous()``), write them with ``safetensors.torch.save_file`` to ``model.safetensors``,
and add roberta-large's ``config.json`` and tokenizer files.

**Sentence splitting**: the reference splits with NLTK's ``sent_tokenize`` (Punkt, whose data
is downloaded). assay splits at ``.``, ``!`` or ``?`` (with closing quotes or brackets)
followed by white space (:func:`split_sentences`); Punkt additionally keeps known
abbreviations ("Dr. Smith") together, so on such texts the split, and the value, can differ.

**Which text is the claim** (LM-Polygraph's options): ``target_is_claims=True`` (default)
scores the reference as the claim against the answer as context; ``False`` the answer
against the reference. ``source_as_target=True`` replaces the reference by the input text
(``input_texts``), optionally cut by ``source_ignore_regex`` (its first group; an input
that does not match is an error). Empty texts become ``"(empty)"``, as in LM-Polygraph.
Several references: the largest value.

**A claim sentence too long for the model** (truncating the context alone cannot fit the
pair): that pair is cut with ``longest_first`` (both texts). The reference does this for the
whole mini-batch holding such a pair, so where a mini-batch mixes it with pairs that fit,
their values can differ from the reference's; pairs that fit are never cut here beyond the
context.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import GenerationMetric
from assay.validation import check_bool, check_int, check_str
from assay_transformers.loading import model_folder_option
from assay_uncertainty.gen_metrics_text import answers_and_references

__all__ = ["AlignScoreMetric", "split_sentences", "context_chunks"]

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'\)\]]*\s+")
_CHUNK_WORDS = 350


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: split after ``.``, ``!`` or ``?`` (and closing quotes/brackets) and white space."""
    parts = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        end = m.start() + len(m.group(0).rstrip())
        parts.append(text[start:end].strip())
        start = m.end()
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def context_chunks(context: str) -> list[str]:
    """The context's sentences grouped into chunks of about 350 words (AlignScore's rule, module docstring)."""
    sentences = split_sentences(context) or [""]
    wanted = len(context.strip().split()) // _CHUNK_WORDS + 1
    size = max(len(sentences) // wanted, 1)
    return [" ".join(sentences[i:i + size]) for i in range(0, len(sentences), size)]


class AlignScoreMetric(GenerationMetric):
    """AlignScore (``nli_sp``) of each answer and its reference, on a local safetensors model folder (module docstring).

    Parameters
    ----------
    lang : str
        LM-Polygraph's argument (unused there too); only ``"en"``.
    ckpt_path : None
        LM-Polygraph's argument (a pickled checkpoint, downloaded by default). Rejected: give
        ``model=`` a safetensors folder instead.
    batch_size : int
        Pairs per forward pass (the value does not depend on it).
    target_is_claims, source_ignore_regex, source_as_target
        LM-Polygraph's options (module docstring).
    model : str or path
        The model folder; required when the metric scores.
    device : str or None
        Torch device (default: CUDA when available, else CPU, as LM-Polygraph).
    """

    name = "align_score"
    level = "sequence"

    def __init__(self, lang: str = "en", ckpt_path: Any = None, batch_size: int = 16, target_is_claims: bool = True,
                 source_ignore_regex: str | None = None, source_as_target: bool = False, *, model: Any = None,
                 device: str | None = None) -> None:
        owner = f"generation metric {self.name!r}"
        self.lang = check_str(lang, "lang", owner=owner, allow_empty=False)
        if self.lang != "en":
            raise InvalidParameterError(f"The 'lang' parameter of {owner} must be 'en' (AlignScore is English); "
                                        f"got {lang!r}.")
        if ckpt_path is not None:
            raise InvalidParameterError(
                f"The 'ckpt_path' parameter of {owner} is not supported: it names a pickled Lightning checkpoint, "
                "which assay never loads. Convert it once to a safetensors model folder and give model=FOLDER "
                "(see the module docstring of assay_transformers.alignscore).")
        self.model = model_folder_option(model, owner)
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=owner)
        self.target_is_claims = check_bool(target_is_claims, "target_is_claims", owner=owner)
        self.source_as_target = check_bool(source_as_target, "source_as_target", owner=owner)
        if source_ignore_regex is not None:
            check_str(source_ignore_regex, "source_ignore_regex", owner=owner, allow_empty=False)
            try:
                self._regex: re.Pattern[str] | None = re.compile(source_ignore_regex)
            except re.error as exc:
                raise InvalidParameterError(f"The 'source_ignore_regex' parameter of {owner} is not a valid regular "
                                            f"expression: {exc}.") from None
            if self._regex.groups < 1:
                raise InvalidParameterError(f"The 'source_ignore_regex' parameter of {owner} must have a group (the "
                                            f"part of the input kept); got {source_ignore_regex!r}.")
            if not self.source_as_target:
                raise InvalidParameterError(f"The 'source_ignore_regex' parameter of {owner} applies only with "
                                            "source_as_target=True.")
        else:
            self._regex = None
        self.source_ignore_regex = source_ignore_regex
        self.device = None if device is None else check_str(device, "device", owner=owner, allow_empty=False)
        self._loaded: Any = None
        super().__init__()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_loaded": None}  # the model is loaded again where the metric is used

    # -- model -------------------------------------------------------------------------------------------------
    def _load(self) -> Any:
        if self.model is None:
            raise InvalidParameterError(
                f"generation metric {self.name!r} needs a local model folder: align_score[model=/path/to/folder] "
                "(LM-Polygraph's default checkpoint would be downloaded and unpickled; assay does neither).")
        if self._loaded is not None:
            return self._loaded
        # deferred: torch, transformers and safetensors are heavy and needed only when scoring
        import torch
        from safetensors.torch import load_file
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        folder = Path(self.model)
        weights = folder / "model.safetensors"
        if not weights.is_file():
            raise InvalidParameterError(f"generation metric {self.name!r}: {str(folder)!r} has no model.safetensors "
                                        "(the AlignScore state dict; module docstring).")
        state = load_file(str(weights))
        for key in ("tri_layer.weight", "tri_layer.bias"):
            if key not in state:
                raise InvalidParameterError(f"generation metric {self.name!r}: {str(weights)!r} has no {key!r} "
                                            "(the AlignScore 3-way head); is it an AlignScore state dict?")
        config = AutoConfig.from_pretrained(str(folder))
        encoder = AutoModel.from_config(config, add_pooling_layer=True)
        prefix = "base_model."
        enc_state = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
        missing, _ = encoder.load_state_dict(enc_state, strict=False)
        missing = [k for k in missing if not k.endswith("position_ids")]
        if missing:
            raise InvalidParameterError(f"generation metric {self.name!r}: {str(weights)!r} lacks encoder weights "
                                        f"{missing[:5]} (expected under {prefix!r}).")
        head = torch.nn.Linear(config.hidden_size, 3)
        head.load_state_dict({"weight": state["tri_layer.weight"], "bias": state["tri_layer.bias"]})
        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        encoder.to(device).eval()
        head.to(device).eval()
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        max_length = int(tokenizer.model_max_length)
        positions = getattr(config, "max_position_embeddings", None)
        if positions is not None:
            offset = (config.pad_token_id + 1) if config.model_type in ("roberta", "xlm-roberta") else 0
            max_length = min(max_length, int(positions) - offset)
        self._loaded = (torch, encoder, head, tokenizer, max_length, device)
        return self._loaded

    def _aligned(self, contexts: list[str], claims: list[str]) -> np.ndarray:
        """The head's "aligned" probability of each (context, claim) pair."""
        torch, encoder, head, tokenizer, max_length, device = self._load()
        out = []
        for start in range(0, len(contexts), self.batch_size):
            ctx, clm = contexts[start:start + self.batch_size], claims[start:start + self.batch_size]
            ids = []
            for c, h in zip(ctx, clm):
                try:  # the context is cut; a claim longer than the model's length alone cuts both
                    ids.append(tokenizer(c, h, truncation="only_first", max_length=max_length))
                except Exception:  # noqa: BLE001 - tokenizers raise a plain Exception for "cannot truncate"
                    ids.append(tokenizer(c, h, truncation="longest_first", max_length=max_length))
            batch = tokenizer.pad(ids, padding="longest", return_tensors="pt").to(device)
            with torch.no_grad():
                pooled = encoder(**batch).pooler_output
                probs = torch.softmax(head(pooled), dim=-1)[:, 0]
            out.append(probs.double().cpu().numpy())
        return np.concatenate(out) if out else np.zeros(0)

    def score(self, contexts: Sequence[str], claims: Sequence[str]) -> np.ndarray:
        """AlignScore of each claim against its context (mean over claim sentences of the max over context chunks)."""
        pair_ctx: list[str] = []
        pair_claim: list[str] = []
        shapes = []
        for context, claim in zip(contexts, claims, strict=True):
            chunks = context_chunks(context)
            sentences = split_sentences(claim)
            if not sentences:
                raise InvalidParameterError(f"generation metric {self.name!r}: the claim {claim!r:.80} has no "
                                            "sentence.")
            shapes.append((len(chunks), len(sentences)))
            for chunk in chunks:
                for sentence in sentences:
                    pair_ctx.append(chunk)
                    pair_claim.append(sentence)
        probs = self._aligned(pair_ctx, pair_claim)
        out, start = np.empty(len(shapes)), 0
        for i, (n_chunks, n_sent) in enumerate(shapes):
            block = probs[start:start + n_chunks * n_sent].reshape(n_chunks, n_sent)
            out[i] = float(block.max(axis=0).mean())
            start += n_chunks * n_sent
        return out

    # -- metric ------------------------------------------------------------------------------------------------
    def _source(self, text: str) -> str:
        if self._regex is None:
            return text
        found = self._regex.search(text)
        if not found:
            raise InvalidParameterError(f"generation metric {self.name!r}: the input text {text!r:.80} does not "
                                        f"match source_ignore_regex {self.source_ignore_regex!r}.")
        return str(found.group(1))

    def __call__(self, stats: Mapping[str, Any], target_texts: Sequence[Any] | None = None) -> np.ndarray:
        owner = f"generation metric {self.name!r}"
        if self.source_as_target:
            if "input_texts" not in stats:
                raise InvalidParameterError(f"{owner} with source_as_target=True needs the 'input_texts' statistic.")
            sources = [self._source(str(s)) for s in stats["input_texts"]]
            texts, refs = answers_and_references(stats, sources, owner)
        else:
            texts, refs = answers_and_references(stats, target_texts, owner)
        if not texts:
            return np.zeros(0)

        def filled(x: str) -> str:
            return x if x.strip() else "(empty)"

        contexts, claims = [], []
        for text, rs in zip(texts, refs):
            for ref in rs:
                answer, target = filled(text), filled(ref)
                contexts.append(answer if self.target_is_claims else target)
                claims.append(target if self.target_is_claims else answer)
        values = self.score(contexts, claims)
        out, start = np.empty(len(texts)), 0
        for i, rs in enumerate(refs):
            out[i] = np.max(values[start:start + len(rs)])
            start += len(rs)
        return out

