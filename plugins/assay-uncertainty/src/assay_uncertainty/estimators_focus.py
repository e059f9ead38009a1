"""LM-Polygraph 0.7.0's Focus and FocusClaim (Zhang et al. 2023, "Enhancing Uncertainty-Based
Hallucination Detection with Stronger Focus", EMNLP), from local files only (issue 28).

Focus scores the keywords of an answer (tokens inside a named entity or a noun, number or proper
noun, found by a spaCy pipeline) by their surprise and their distribution's entropy, after
weighting the step's probabilities by the token's inverse document frequency (IDF), plus a
share (``gamma``) of the scores of the earlier tokens they attend to. Per example and generated
token ``t`` (``greedy_log_probs`` row ``z_t``, token ``y_t``):

- ``q_t = normalize(idf * p_t 1[p_t >= p])`` (the first ``len(idf)`` entries weighted when the
  vocabulary is longer than the IDF table);
- ``hc_t = -log(q_t[y_t] + 1e-5) + 2^{H_2(q_t)}`` (``H_2`` the entropy in bits);
- with ``W`` the attention among the generated tokens (``attention_all``: the maximum over the
  first axis of a 3-D array, over the first two of a 4-D one), rows of keyword tokens
  normalised (``/ (row sum + 1e-6)``) and the others 0:
  ``f_t = hc_t + gamma sum_{s<t} W_{t,s} f_s``.

Focus is the mean of ``f_t`` over the keywords (NaN with a warning where there is none);
FocusClaim the mean of ``f_t`` over each claim's tokens.

Where LM-Polygraph fetches, assay reads local files: the IDF table ``path`` is a ``.npy`` array
(``numpy.load`` without pickle; LM-Polygraph pickles it, and assay never unpickles a file), and
where it does not exist it is computed from ``idf_dataset``, a local data file or folder that
``datasets.load_dataset`` reads (JSON lines, CSV, Parquet, text; never a hub name), with the
tokenizer folder ``model_name``, exactly as LM-Polygraph's ``calcu_idf`` computes it, then saved
there. ``spacy_path`` is an installed spaCy pipeline's name or a pipeline folder (LM-Polygraph
downloads a missing one; here it is an error). spaCy, datasets and transformers are imported
only when an estimator is built (``pip install assay-uncertainty[focus]`` adds spaCy).
"""

from __future__ import annotations

import logging
import math
import os
import random
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import Estimator, nan_with_warning
from assay_uncertainty.estimators_claim import claim_token_ids

__all__ = ["NER_TYPES", "POS_TAGS", "Focus", "FocusClaim", "compute_idf", "load_idf_table", "token_focus_scores"]

log = logging.getLogger(__name__)

#: LM-Polygraph's named-entity types and part-of-speech tags that make a token a keyword
NER_TYPES = ("PERSON", "DATE", "ORG", "GPE", "NORP", "ORDINAL", "PRODUCT", "CARDINAL", "LOC", "FAC", "EVENT",
             "WORK_OF_ART", "LAW", "LANGUAGE", "TIME", "PERCENT", "MONEY", "QUANTITY")
POS_TAGS = ("NOUN", "NUM", "PROPN")


def compute_idf(tokenizer: Any, texts: list[str], vocab_size: int, offset: int = 0) -> np.ndarray:
    """``log(N / (df_v + 1))`` for every token id ``v < vocab_size``, ``df_v`` the texts containing ``v``."""
    df: dict[int, int] = defaultdict(int)
    for text in texts:
        for tok in set(tokenizer(text)["input_ids"][offset:]):
            df[tok] += 1
    return np.array([math.log(len(texts) / (df[i] + 1)) for i in range(vocab_size)], dtype=np.float64)


def load_idf_table(model_name: str, path: str, idf_dataset: str, idf_seed: int, idf_dataset_size: int,
                   idf_dataset_text_column: str = "text") -> np.ndarray:
    """The IDF table at ``path`` (``.npy``), computed from the local ``idf_dataset`` and saved there if absent."""
    if os.path.exists(path):
        try:
            return np.asarray(np.load(path, allow_pickle=False), dtype=np.float64).reshape(-1)
        except ValueError as exc:
            raise InvalidParameterError(f"focus: the IDF table {path!r} is not a .npy array ({exc}); assay never "
                                        "unpickles files (LM-Polygraph pickles it): save it with numpy.save.") from exc
    if not os.path.exists(idf_dataset):
        raise InvalidParameterError(f"focus: no IDF table at {path!r}, and idf_dataset={idf_dataset!r} is not a local "
                                    "file or folder to compute it from (assay never downloads a dataset).")
    if not os.path.isdir(model_name):
        raise InvalidParameterError(f"focus: model_name={model_name!r} must be a local tokenizer folder to compute the "
                                    "IDF table with (assay never downloads one).")
    # datasets and transformers are deferred: heavy optional dependencies, needed only to build the table
    from datasets import load_dataset
    from transformers import AutoTokenizer

    loaded = load_dataset(idf_dataset)
    data = list(loaded["train"])
    rng = random.Random(idf_seed)
    rng.shuffle(data)
    if 0 < idf_dataset_size < len(data):
        data = rng.sample(data, idf_dataset_size)
    tokenizer = AutoTokenizer.from_pretrained(model_name, use_fast=True, local_files_only=True, trust_remote_code=False)
    offset = 1 if "facebook" in model_name else 0  # LM-Polygraph's rule: skip a BART-style leading token
    idf = compute_idf(tokenizer, [d[idf_dataset_text_column] for d in data], len(tokenizer.vocab), offset)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    np.save(path, idf, allow_pickle=False)
    if not os.path.exists(path) and os.path.exists(path + ".npy"):
        os.replace(path + ".npy", path)
    return idf


def _load_spacy(spacy_path: str) -> Any:
    # spaCy is deferred: an optional dependency (the focus extra), needed only to parse answers
    import spacy

    try:
        return spacy.load(spacy_path)
    except OSError as exc:
        raise InvalidParameterError(f"focus: spaCy cannot load {spacy_path!r} (an installed pipeline's name or a "
                                    f"pipeline folder; assay never downloads one): {exc}") from exc


def _attention(weights: Any) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 3:
        return w.max(axis=0)
    if w.ndim == 4:
        return w.max(axis=(0, 1))
    if w.ndim == 2:
        return w
    raise InvalidParameterError(f"focus: an attention_all entry must be 2-, 3- or 4-D; got shape {w.shape}.")


def _keywords(nlp: Any, text: str, decodings: list[str], ner: tuple[str, ...], pos: tuple[str, ...]) -> np.ndarray:
    """LM-Polygraph's walk: each decoded token is matched to the next spaCy token that contains it or is in it."""
    sentence = nlp(text)
    mask = np.zeros(len(decodings), dtype=bool)  # one decoding per generated token
    span_index = 0
    for i, token in enumerate(decodings):
        tok = token.strip()
        while span_index < len(sentence) and tok not in sentence[span_index].text and \
                sentence[span_index].text not in tok:
            span_index += 1
        if span_index >= len(sentence):
            log.warning("focus: decoded token %r not found in the spaCy parse of %r; later tokens are not keywords",
                        token, text)
            break
        span = sentence[span_index]
        if span.text not in ner and (span.ent_type_ in ner or span.pos_ in pos):
            mask[i] = True
    return mask


def token_focus_scores(stats: Mapping[str, Any], idf: np.ndarray, nlp: Any, p: float, gamma: float,
                       ner: tuple[str, ...] = NER_TYPES, pos: tuple[str, ...] = POS_TAGS
                       ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per example, ``f_t`` of every generated token (empty where there is no keyword) and the keyword mask."""
    tokenizer = stats["tokenizer"]
    scores, masks = [], []
    for z, att, toks, text in zip(stats["greedy_log_probs"], stats["attention_all"], stats["greedy_tokens"],
                                  stats["greedy_texts"]):
        toks = np.asarray(toks, dtype=np.int64).reshape(-1)
        # each token decoded on its own: what LM-Polygraph's batch_decode(token ids) does with transformers 4
        # (transformers 5 reads a flat list of ids as one sequence, and LM-Polygraph's matching then sees one token)
        decodings = [tokenizer.decode([int(t)], skip_special_tokens=True) for t in toks]
        mask = _keywords(nlp, text, decodings, ner, pos)
        prob = np.exp(np.asarray(z, dtype=np.float64))
        prob[prob < p] = 0
        if prob.shape[-1] > len(idf):
            prob[:, : len(idf)] = prob[:, : len(idf)] * idf
        else:
            prob = prob * idf
        with np.errstate(divide="ignore", invalid="ignore"):
            prob = prob / np.sum(prob, axis=-1, keepdims=True)
            ent = np.exp2(np.sum(-np.where(prob > 0, prob * np.log2(prob), 0.0), axis=-1))
            hc = -np.log(prob[np.arange(len(toks)), toks] + 1e-5) + ent
        if not mask.any():
            scores.append(np.zeros(0))
            masks.append(mask)
            continue
        w = _attention(att)
        if w.shape != (len(toks), len(toks)):
            raise InvalidParameterError(f"focus: attention_all must hold the attention among the {len(toks)} "
                                        f"generated tokens ((..., T, T)); got {w.shape} after the maximum.")
        weight = np.zeros_like(w)
        weight[mask] = w[mask] / (np.sum(w[mask], axis=1, keepdims=True) + 1e-6)
        focus: list[float] = []
        for i, row in enumerate(weight):
            focus.append(float(hc[i] + (gamma * (np.array(focus) * row[: len(focus)]).sum() if focus else 0.0)))
        scores.append(np.array(focus))
        masks.append(mask)
    return scores, masks


class _FocusBase(Estimator):
    def __init__(self, gamma: float, p: float, model_name: str, path: str, idf_dataset: str,
                 trust_remote_code: bool, idf_seed: int, idf_dataset_size: int, spacy_path: str,
                 idf_dataset_text_column: str = "text") -> None:
        self.gamma, self.p = float(gamma), float(p)
        if trust_remote_code and not os.path.exists(path):
            raise InvalidParameterError(f"{self.name}: trust_remote_code=True is refused: assay runs no code from a "
                                        "dataset (the local idf_dataset is read as data).")
        self.idf = load_idf_table(model_name, path, idf_dataset, int(idf_seed), int(idf_dataset_size),
                                  idf_dataset_text_column)
        self.nlp = _load_spacy(spacy_path)
        super().__init__()

    def _scores(self, stats: Mapping[str, Any]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        return token_focus_scores(stats, self.idf, self.nlp, self.p, self.gamma)


class Focus(_FocusBase):
    """LM-Polygraph's Focus, sequence level: the mean of ``f_t`` over the keywords (module docstring)."""

    name, level = "focus", "sequence"
    dependencies = ("greedy_log_probs", "greedy_tokens", "greedy_texts", "attention_all", "tokenizer")

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        out = []
        for i, (f, mask) in enumerate(zip(*self._scores(stats))):
            if f.size == 0:
                out.append(nan_with_warning(f"estimator 'focus': example {i} has no keyword; NaN.", stacklevel=3))
            else:
                out.append(float(np.mean(f[mask[: f.size]])))
        return np.array(out, dtype=np.float64)


class FocusClaim(_FocusBase):
    """LM-Polygraph's FocusClaim: per claim, the mean of ``f_t`` over its tokens (module docstring).

    An example without a keyword has no ``f_t``: its claims are NaN with a warning (LM-Polygraph
    raises an IndexError there).
    """

    name, level = "focus_claim", "claim"
    dependencies = ("greedy_log_probs", "greedy_tokens", "greedy_texts", "claims", "attention_all", "tokenizer")

    def __init__(self, gamma: float, p: float, model_name: str, path: str, idf_dataset: str,
                 trust_remote_code: bool, idf_seed: int, idf_dataset_size: int, spacy_path: str) -> None:
        super().__init__(gamma, p, model_name, path, idf_dataset, trust_remote_code, idf_seed, idf_dataset_size,
                         spacy_path)

    def __call__(self, stats: Mapping[str, Any]) -> list[np.ndarray]:
        out = []
        for i, ((f, _mask), claims) in enumerate(zip(zip(*self._scores(stats)), stats["claims"])):
            vals = []
            for j, claim in enumerate(claims):
                ids = claim_token_ids(claim, f"estimator 'focus_claim', example {i}, claim {j}")
                if f.size == 0 or ids.size == 0:
                    vals.append(nan_with_warning(f"estimator 'focus_claim': example {i}, claim {j} has no "
                                                 "Focus score (no keyword in the answer, or no tokens); NaN.",
                                                 stacklevel=3))
                else:
                    vals.append(float(np.mean(f[ids])))
            out.append(np.asarray(vals, dtype=np.float64))
        return out
