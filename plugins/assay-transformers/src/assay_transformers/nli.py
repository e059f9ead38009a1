"""NLI statistics of the sampled answers, from an NLI model in a local folder (never a download).

``semantic_matrix`` (:class:`SemanticMatrixCalculator`) scores every ordered pair of an
example's distinct sampled answers with a sequence-classification model whose config names
the labels ``ENTAILMENT``, ``NEUTRAL`` and ``CONTRADICTION`` (``label2id``), as LM-Polygraph's
``SemanticMatrixCalculator`` does with DeBERTa-large-MNLI: the pairs of
``itertools.product(unique, unique)`` (``unique`` = ``np.unique`` of the answers, sorted), in
batches of ``batch_size`` pairs, each pair tokenised as (premise, hypothesis); softmax of
the logits; the ``(U, U)`` matrices spread back to ``(K, K)`` over the samples. Statistics
per example: ``semantic_matrix_entail``, ``semantic_matrix_contra`` (probabilities),
``semantic_matrix_entail_logits``, ``semantic_matrix_contra_logits``,
``semantic_matrix_classes`` (argmax label id) and ``entailment_id`` (the ENTAILMENT label
id, repeated per example: assay's statistics are columns).

``greedy_semantic_matrix`` (:class:`GreedySemanticMatrixCalculator`) scores the greedy answer
against each distinct sample both ways, (greedy, sample) in batches of ``batch_size`` pairs
and (sample, greedy) in the same batches: per example ``(K,)`` arrays
``greedy_semantic_matrix_{entail,neutral,contra}_{forward,backward}`` and their means
``greedy_semantic_matrix_{entail,neutral,contra}``, as LM-Polygraph's
``GreedySemanticMatrixCalculator``. ``concat_greedy_semantic_matrix``
(:class:`ConcatGreedySemanticMatrixCalculator`) prepends the question
(``no_fewshot_input_texts``, LM-Polygraph's name: the prompt without few-shot examples) to
both texts, without a separator, as LM-Polygraph does; its statistics are prefixed ``concat_``.

``semantic_classes`` (:class:`SemanticClassesCalculator`) turns the argmax classes into
LM-Polygraph's greedy semantic classes ``semantic_classes_entail``: sample ``j`` joins the
first class whose first member ``f`` has ``classes[f, j]`` and ``classes[j, f]`` both
ENTAILMENT, else opens a new class; one ``(K,)`` integer array of class ids per example.

The model loads on first use (torch and transformers imported then), on ``device``
(None: CUDA when available, else CPU), with ``local_files_only=True`` and no remote code.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import StatCalculator
from assay.validation import check_int
from assay_transformers.loading import _check_device, _check_folder, _check_weights

__all__ = ["ConcatGreedySemanticMatrixCalculator", "GreedySemanticMatrixCalculator", "NLIModel",
           "SemanticClassesCalculator", "SemanticMatrixCalculator", "greedy_classes", "softmax"]

_LABELS = ("ENTAILMENT", "NEUTRAL", "CONTRADICTION")


class NLIModel:
    """A sequence-classification NLI model and its tokenizer, loaded from ``path`` on first use.

    Parameters
    ----------
    path : folder written by ``save_pretrained`` (config with ``label2id`` naming
        ENTAILMENT, NEUTRAL and CONTRADICTION; weights; tokenizer files)
    batch_size : pairs per forward pass (LM-Polygraph's ``Deberta.batch_size``, default 10)
    device : ``"cpu"``, ``"cuda"`` ... or None (CUDA when available)
    """

    def __init__(self, path: str | os.PathLike[str], *, batch_size: int = 10, device: str | None = None,
                 owner: str = "NLI model") -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidParameterError(f"{owner}: 'nli_model' must be the path of a local model folder; got "
                                        f"{type(path).__name__}.")
        self.path = _check_folder(path)
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=owner)
        self.device_option = device
        self.owner = owner
        self._model: Any = None
        self._tokenizer: Any = None
        self.label2id: dict[str, int] = {}

    def load(self) -> None:
        """Load the model and tokenizer (once)."""
        if self._model is not None:
            return
        import torch  # deferred: torch and transformers load with the model, not with the plugin
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.device = _check_device(torch, self.device_option)
        _check_weights(self.path)
        try:
            tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True, trust_remote_code=False)
            model = AutoModelForSequenceClassification.from_pretrained(self.path, local_files_only=True,
                                                                       trust_remote_code=False)
        except (OSError, ValueError) as exc:
            raise InvalidParameterError(f"{self.owner}: cannot load the NLI model folder {str(self.path)!r}: "
                                        f"{exc}") from None
        label2id = {str(k).upper(): int(v) for k, v in (model.config.label2id or {}).items()}
        missing = [lab for lab in _LABELS if lab not in label2id]
        if missing:
            raise InvalidParameterError(
                f"{self.owner}: the NLI model {str(self.path)!r} names no {', '.join(missing)} label in its config's "
                f"label2id ({model.config.label2id!r}); an NLI model's labels are ENTAILMENT, NEUTRAL and "
                "CONTRADICTION.")
        self.label2id = label2id
        model.to(self.device)
        model.eval()
        self._model, self._tokenizer = model, tokenizer

    def logits(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """``(len(pairs), n_labels)`` float64 logits of (premise, hypothesis) pairs, ``batch_size`` at a time."""
        self.load()
        import torch  # deferred (see load)

        out = []
        with torch.no_grad():
            for start in range(0, len(pairs), self.batch_size):
                batch = pairs[start:start + self.batch_size]
                encoded = self._tokenizer(batch, padding=True, return_tensors="pt").to(self.device)
                out.append(self._model(**encoded).logits.double().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, self._model.config.num_labels))


def softmax(x: np.ndarray) -> np.ndarray:
    """Row-wise softmax of ``(n, labels)`` logits (float64)."""
    if not len(x):
        return x
    z = np.exp(x - x.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


class SemanticMatrixCalculator(StatCalculator):
    """``sample_texts`` -> the NLI matrices of each example's samples (module docstring).

    Parameters
    ----------
    nli_model : path of a local NLI model folder (required; nothing is downloaded)
    batch_size : pairs per forward pass (default 10, as LM-Polygraph's Deberta)
    device : torch device or None (CUDA when available)
    """

    name = "semantic_matrix"
    stats = ("semantic_matrix_entail", "semantic_matrix_contra", "semantic_matrix_classes",
             "semantic_matrix_entail_logits", "semantic_matrix_contra_logits", "entailment_id")
    dependencies = ("sample_texts",)

    def __init__(self, nli_model: str | os.PathLike[str], batch_size: int = 10, device: str | None = None) -> None:
        self.nli = NLIModel(nli_model, batch_size=batch_size, device=device,
                            owner=f"stat calculator {self.name!r}")
        super().__init__()

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, list[Any]] = {k: [] for k in self.stats}
        for texts in stats["sample_texts"]:
            unique, inv = np.unique(np.asarray(list(texts), dtype=str), return_inverse=True)
            u = len(unique)
            logits = self.nli.logits([(str(a), str(b)) for a, b in itertools.product(unique, unique)])
            ent, con = self.nli.label2id["ENTAILMENT"], self.nli.label2id["CONTRADICTION"]
            probs = softmax(logits)

            def full(col: np.ndarray, u: int = u, inv: np.ndarray = inv) -> np.ndarray:
                return col.reshape(u, u)[inv][:, inv]

            out["semantic_matrix_entail"].append(full(probs[:, ent]))
            out["semantic_matrix_contra"].append(full(probs[:, con]))
            out["semantic_matrix_entail_logits"].append(full(logits[:, ent]))
            out["semantic_matrix_contra_logits"].append(full(logits[:, con]))
            out["semantic_matrix_classes"].append(full(probs.argmax(axis=-1) if len(probs) else
                                                       np.zeros(0, dtype=np.int64)))
            out["entailment_id"].append(ent)
        return out


class GreedySemanticMatrixCalculator(StatCalculator):
    """``greedy_texts``, ``sample_texts`` -> NLI probabilities of (greedy, sample) both ways (module docstring).

    Parameters
    ----------
    nli_model, batch_size, device
        As for :class:`SemanticMatrixCalculator`.
    """

    name = "greedy_semantic_matrix"
    prefix = "greedy_semantic_matrix"
    dependencies: tuple[str, ...] = ("greedy_texts", "sample_texts")

    def __init__(self, nli_model: str | os.PathLike[str], batch_size: int = 10, device: str | None = None) -> None:
        self.nli = NLIModel(nli_model, batch_size=batch_size, device=device, owner=f"stat calculator {self.name!r}")
        self.stats = tuple(f"{self.prefix}_{k}{d}" for k in ("entail", "neutral", "contra")
                           for d in ("_forward", "_backward", ""))
        super().__init__()

    def _texts(self, stats: Mapping[str, Any], i: int) -> tuple[str, list[str]]:
        return str(stats["greedy_texts"][i]), [str(t) for t in stats["sample_texts"][i]]

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, list[Any]] = {k: [] for k in self.stats}
        for i in range(len(stats["sample_texts"])):
            greedy, texts = self._texts(stats, i)
            unique, inv = np.unique(np.asarray(texts, dtype=str), return_inverse=True)
            fwd = softmax(self.nli.logits([(greedy, str(u)) for u in unique]))[inv]
            bwd = softmax(self.nli.logits([(str(u), greedy) for u in unique]))[inv]
            for label, upper in (("entail", "ENTAILMENT"), ("neutral", "NEUTRAL"), ("contra", "CONTRADICTION")):
                col = self.nli.label2id[upper]
                out[f"{self.prefix}_{label}_forward"].append(fwd[:, col])
                out[f"{self.prefix}_{label}_backward"].append(bwd[:, col])
                out[f"{self.prefix}_{label}"].append((fwd[:, col] + bwd[:, col]) / 2.0)
        return out


class ConcatGreedySemanticMatrixCalculator(GreedySemanticMatrixCalculator):
    """As :class:`GreedySemanticMatrixCalculator` with the question prepended to both texts (module docstring)."""

    name = "concat_greedy_semantic_matrix"
    prefix = "concat_greedy_semantic_matrix"
    dependencies = ("greedy_texts", "no_fewshot_input_texts", "sample_texts")

    def _texts(self, stats: Mapping[str, Any], i: int) -> tuple[str, list[str]]:
        q = str(stats["no_fewshot_input_texts"][i])
        greedy, texts = super()._texts(stats, i)
        return q + greedy, [q + t for t in texts]


def greedy_classes(is_entailment: np.ndarray) -> np.ndarray:
    """LM-Polygraph's greedy classes from a ``(K, K)`` boolean entailment matrix: one class id per sample."""
    firsts: list[int] = []
    out = np.empty(len(is_entailment), dtype=np.int64)
    for j in range(len(is_entailment)):
        for c, f in enumerate(firsts):
            if is_entailment[f, j] and is_entailment[j, f]:
                out[j] = c
                break
        else:
            out[j] = len(firsts)
            firsts.append(j)
    return out


class SemanticClassesCalculator(StatCalculator):
    """``semantic_matrix_classes``, ``entailment_id`` -> ``semantic_classes_entail`` (module docstring)."""

    name = "semantic_classes"
    stats = ("semantic_classes_entail",)
    dependencies = ("sample_texts", "semantic_matrix_classes", "entailment_id")

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        ids = stats["entailment_id"]
        out = []
        for i, texts in enumerate(stats["sample_texts"]):
            ent = ids if np.ndim(ids) == 0 else ids[i]  # LM-Polygraph passes one id for the batch
            classes = np.asarray(stats["semantic_matrix_classes"][i]).reshape(len(texts), len(texts))
            out.append(greedy_classes(classes == int(ent)))
        return {"semantic_classes_entail": out}
