"""``evaluate``'s ``squad`` and ``squad_v2``: the official SQuAD v1.1 and v2.0 rules (0-100).

The official evaluation scripts are no library (``evaluate`` vendors them): assay implements
their rules here. Answers are normalised (lower case, punctuation and the articles a / an /
the removed, whitespace collapsed); exact match and token F1 take the best gold answer.
squad_v2 also scores unanswerable questions (no gold answer: only an empty prediction is
right), applies ``no_answer_threshold`` to each prediction's ``no_answer_probability``, splits
the scores into ``HasAns_*`` and ``NoAns_*``, and finds the best thresholds (``best_*``).

Inputs, per instance, in assay's layout or in evaluate's:

- prediction: the answer text, or evaluate's dict ``{"id", "prediction_text"}`` (squad_v2:
  and ``"no_answer_probability"``; a plain text has probability 0);
- references: the list of gold answer texts (empty for an unanswerable question), or
  evaluate's dict ``{"id", "answers": {"text": [...], "answer_start": [...]}}`` (alone or as
  the one element of the list).

Instances are paired by position (evaluate pairs by ``id``: with distinct ids the two agree);
ids given on both sides must match.
"""

from __future__ import annotations

import collections
import re
import string
from collections.abc import Mapping
from typing import Any, ClassVar

from assay.errors import InvalidParameterError
from assay_interop.evaluate_modules.base import Module

__all__ = ["MODULES", "normalize_answer"]

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _token_f1(gold: list[str], pred: list[str]) -> float:
    same = sum((collections.Counter(gold) & collections.Counter(pred)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


class _Squad(Module):
    per_instance = True

    def _parse(self, prediction: Any, references: Any) -> tuple[str, list[str], float]:
        """(prediction text, gold answer texts, no-answer probability) of one instance."""
        pred_id = ref_id = None
        no_answer = 0.0
        if isinstance(prediction, Mapping):
            if "prediction_text" not in prediction:
                raise InvalidParameterError(f"{self.where}: a prediction dict needs 'prediction_text' (evaluate's "
                                            f"format); got keys {sorted(prediction)}.")
            pred_id = prediction.get("id")
            no_answer = prediction.get("no_answer_probability", 0.0)
            prediction = prediction["prediction_text"]
        if isinstance(references, (list, tuple)) and len(references) == 1 and isinstance(references[0], Mapping):
            references = references[0]
        if isinstance(references, Mapping):
            answers = references.get("answers")
            golds = answers.get("text") if isinstance(answers, Mapping) else None
            if golds is None:
                raise InvalidParameterError(f"{self.where}: a reference dict needs 'answers': {{'text': [...]}} "
                                            f"(evaluate's format); got {references!r:.100}.")
            ref_id = references.get("id")
            references = golds
        if pred_id is not None and ref_id is not None and pred_id != ref_id:
            raise InvalidParameterError(f"{self.where}: the prediction's id {pred_id!r} differs from its reference's "
                                        f"id {ref_id!r}; assay pairs instances by position.")
        if not isinstance(prediction, str):
            raise InvalidParameterError(f"{self.where}: the prediction must be a text or evaluate's dict; got "
                                        f"{prediction!r:.80}.")
        if isinstance(references, str) or not isinstance(references, (list, tuple)) or \
                not all(isinstance(r, str) for r in references):
            raise InvalidParameterError(f"{self.where}: the references must be a list of answer texts or evaluate's "
                                        f"dict; got {references!r:.80}.")
        if not isinstance(no_answer, (int, float)) or isinstance(no_answer, bool):
            raise InvalidParameterError(f"{self.where}: no_answer_probability must be a number; got {no_answer!r}.")
        return prediction, list(references), float(no_answer)


class Squad(_Squad):
    name = "squad"
    keys = ("exact_match", "f1")
    main_score = "f1"

    def map(self, prediction: Any, references: Any) -> tuple[float, float]:
        pred, golds, _ = self._parse(prediction, references)
        if not golds:
            raise InvalidParameterError(f"{self.where}: SQuAD v1.1 needs at least one gold answer per question "
                                        "(use evaluate:squad_v2 for unanswerable questions).")
        norm = normalize_answer(pred)
        tokens = norm.split()
        exact = max(float(norm == normalize_answer(g)) for g in golds)
        f1 = max(_token_f1(normalize_answer(g).split(), tokens) for g in golds)
        return exact, f1

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        n = len(items)
        return {"exact_match": 100.0 * sum(e for e, _ in items) / n, "f1": 100.0 * sum(f for _, f in items) / n}


def _v2_f1(gold: str, pred: str) -> float:
    gold_toks = normalize_answer(gold).split() if gold else []
    pred_toks = normalize_answer(pred).split() if pred else []
    if not gold_toks or not pred_toks:  # a no-answer on either side: right only when both are
        return float(gold_toks == pred_toks)
    return _token_f1(gold_toks, pred_toks)


class SquadV2(_Squad):
    name = "squad_v2"
    keys = ("exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total", "NoAns_exact", "NoAns_f1",
            "NoAns_total", "best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh")
    main_score = "f1"
    defaults: ClassVar[dict[str, Any]] = {"no_answer_threshold": 1.0}

    def map(self, prediction: Any, references: Any) -> tuple[float, float, bool, float, bool]:
        pred, golds, no_answer = self._parse(prediction, references)
        has_answer = bool(golds)
        golds = [g for g in golds if normalize_answer(g)] or [""]
        exact = max(float(normalize_answer(g) == normalize_answer(pred)) for g in golds)
        f1 = max(_v2_f1(g, pred) for g in golds)
        return exact, f1, has_answer, no_answer, bool(pred)

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        threshold = self.options["no_answer_threshold"]
        # a prediction whose no-answer probability passes the threshold answers "no answer"
        exact = [float(not has) if p > threshold else e for e, _, has, p, _ in items]
        f1 = [float(not has) if p > threshold else f for _, f, has, p, _ in items]
        out: dict[str, Any] = _summary(exact, f1, range(len(items)))
        for prefix, want in (("HasAns", True), ("NoAns", False)):
            chosen = [i for i, item in enumerate(items) if item[2] is want]
            if chosen:
                out.update({f"{prefix}_{k}": v for k, v in _summary(exact, f1, chosen).items()})
        for key, column in (("exact", 0), ("f1", 1)):
            out[f"best_{key}"], out[f"best_{key}_thresh"] = _best_threshold(items, column)
        return out


def _summary(exact: list[float], f1: list[float], chosen: Any) -> dict[str, float]:
    chosen = list(chosen)
    n = len(chosen)
    return {"exact": 100.0 * sum(exact[i] for i in chosen) / n, "f1": 100.0 * sum(f1[i] for i in chosen) / n,
            "total": n}


def _best_threshold(items: list[Any], column: int) -> tuple[float, float]:
    """The official script's best no-answer threshold: walk the instances by rising probability."""
    score = best = float(sum(1 for item in items if not item[2]))
    best_thresh = 0.0
    for i in sorted(range(len(items)), key=lambda k: items[k][3]):
        raw, has_answer, probability, answered = items[i][column], items[i][2], items[i][3], items[i][4]
        score += raw if has_answer else (-1.0 if answered else 0.0)
        if score > best:
            best, best_thresh = score, probability
    return 100.0 * best / len(items), best_thresh


MODULES: dict[str, type[Module]] = {m.name: m for m in (Squad, SquadV2)}
