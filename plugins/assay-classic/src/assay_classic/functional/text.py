"""Text kernels: exact match, token overlap (token F1) and normalized character edit distance.

Each compares one prediction with one or more references and keeps the best reference
(highest match or overlap, lowest distance), as unitxt and the SQuAD evaluation script do.
"""

from __future__ import annotations

import re
import string
import warnings
from collections import Counter
from collections.abc import Sequence

from assay.errors import InvalidParameterError
from assay_classic._deps import require
from assay_classic.functional._common import UndefinedMetricWarning, ZeroDivision, check_zero_division

__all__ = ["char_edit_distance", "exact_match", "normalize_answer", "token_overlap"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def _references(references: str | Sequence[str], metric: str) -> list[str]:
    refs = [references] if isinstance(references, str) else list(references)
    if not refs:
        raise InvalidParameterError(f"{metric} needs at least one reference per instance; got an empty list.")
    for ref in refs:
        if not isinstance(ref, str):
            raise InvalidParameterError(f"{metric} references must be strings; got {type(ref).__name__}: {ref!r}.")
    return refs


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalization: lower case, drop punctuation and the articles a / an / the, squash spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(
    prediction: str, references: str | Sequence[str], *, ignore_case: bool = False, strip: bool = False
) -> float:
    """1.0 when the prediction equals one of the references, else 0.0.

    ``ignore_case`` compares ``str.casefold()`` forms; ``strip`` removes leading and trailing
    white space first.
    """
    refs = _references(references, "exact_match")

    def norm(text: str) -> str:
        text = text.strip() if strip else text
        return text.casefold() if ignore_case else text

    pred = norm(str(prediction))
    return float(any(pred == norm(ref) for ref in refs))


def token_overlap(
    prediction: str,
    references: str | Sequence[str],
    *,
    normalize: bool = True,
    zero_division: ZeroDivision = 0.0,
) -> dict[str, float]:
    r"""Token precision, recall and F1 of a prediction against its best reference.

    Tokens are white-space separated words, after SQuAD's normalization when ``normalize``.
    With :math:`c` the size of the multiset intersection of prediction tokens (:math:`|p|`)
    and reference tokens (:math:`|r|`):

    .. math::

        P = c / |p|, \quad R = c / |r|, \quad F_1 = 2c / (|p| + |r|)

    A zero denominator (an empty prediction or reference) gives ``zero_division`` (default
    0.0, as SQuAD v1.1 and unitxt; ``"warn"`` also warns). With several references each
    score is its maximum over the references.
    """
    zero_division = check_zero_division(zero_division, metric="token_overlap")
    fill = 0.0 if zero_division == "warn" else float(zero_division)
    refs = _references(references, "token_overlap")

    def tokens(text: str) -> list[str]:
        return (normalize_answer(text) if normalize else text).split()

    pred = tokens(str(prediction))
    best = {"precision": -1.0, "recall": -1.0, "f1": -1.0}
    for ref in refs:
        gold = tokens(ref)
        common = sum((Counter(pred) & Counter(gold)).values())
        scores = {
            "precision": common / len(pred) if pred else fill,
            "recall": common / len(gold) if gold else fill,
            "f1": 2 * common / (len(pred) + len(gold)) if (pred or gold) else fill,
        }
        if zero_division == "warn" and not (pred and gold):
            warnings.warn(
                "token_overlap of an empty prediction or reference is ill-defined and set to 0.0.",
                UndefinedMetricWarning,
                stacklevel=2,
            )
        for key, value in scores.items():
            best[key] = max(best[key], value)
    return best


def char_edit_distance(prediction: str, references: str | Sequence[str], *, normalize: bool = True) -> float:
    r"""Levenshtein distance between characters (rapidfuzz), normalized, lowest over the references.

    .. math::

        d(p, r) = \frac{\mathrm{lev}(p, r)}{\max(|p|, |r|)}

    with unit costs for insertion, deletion and substitution; 0.0 when both strings are empty.
    With ``normalize=False`` the raw edit count. Lower is better.
    """
    refs = _references(references, "char_edit_distance")
    levenshtein = require("rapidfuzz.distance").Levenshtein
    measure = levenshtein.normalized_distance if normalize else levenshtein.distance
    pred = str(prediction)
    return float(min(measure(pred, ref) for ref in refs))
