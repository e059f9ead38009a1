"""What both wrappers share: lazy imports with install hints, targets, close matches.

torch / torchmetrics and scikit-learn are imported here, on first use, never when the
plugin is imported: a missing library is a :class:`~assay.errors.MissingDependencyError`
carrying the ``pip install`` command.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

import numpy as np

from assay.plugins import deps, format_name
from assay.validation import check_finite

__all__ = ["REQUIREMENTS", "check_numeric_inputs", "close_matches", "require", "spec", "target_of"]

#: import name -> (distribution to install, what it is used for)
REQUIREMENTS: dict[str, tuple[str, str]] = {
    "torchmetrics": ("torchmetrics", "the 'torchmetrics:' metrics (it installs torch too)"),
    "sklearn.metrics": ("scikit-learn", "the 'sklearn:' metrics"),
    "rouge_score.rouge_scorer": ("rouge-score", "the 'evaluate:rouge' metric"),
    "rouge_score.scoring": ("rouge-score", "the 'evaluate:rouge' metric"),
}


def require(module: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the distribution to install."""
    package, purpose = REQUIREMENTS.get(module, (None, ""))
    return deps.require(module, package=package, purpose=purpose)


def close_matches(word: str, candidates: Iterable[str], *, n: int = 5) -> str:
    """`` Did you mean: a, b?`` (case-insensitive), or an empty string."""
    by_lower: dict[str, str] = {}
    for c in candidates:
        by_lower.setdefault(c.lower(), c)
    found = difflib.get_close_matches(word.lower(), list(by_lower), n=n, cutoff=0.6)
    if not found:
        found = [c for c in by_lower if word.lower() in c][:n]
    return f" Did you mean: {', '.join(by_lower[f] for f in found)}?" if found else ""


def spec(namespace: str, name: str, options: Mapping[str, Any]) -> str:
    """``"sklearn:f1_score[average=macro]"``: how the user spelt the metric, for messages."""
    return format_name(f"{namespace}:{name}", dict(options))


def target_of(references: Any) -> Any:
    """The library's target for one instance, from assay's references of that instance.

    A one-element list ``[y]`` is the target ``y`` (unitxt's layout); anything else (a
    scalar, a longer list such as a multi-label row or several reference texts) is the
    target itself.
    """
    if isinstance(references, (list, tuple, np.ndarray)) and len(references) == 1:
        return references[0]
    return references


def check_numeric_inputs(predictions: Any, targets: Any, where: str) -> None:
    """Raise naming the first NaN or infinite prediction or target (assay's input check for the wrapped metrics).

    Only numeric arrays are checked (``numpy.ndarray`` of a float kind): strings, integers and
    ragged lists are the library's to judge. The message names the metric as the user spelt it
    (``where``) and the position (``predictions[0]``, ``references[3, 1]``).
    """
    for name, arr, what in (("predictions", predictions, "predictions"), ("references", targets, "targets")):
        if isinstance(arr, np.ndarray) and arr.dtype.kind in "fc":
            check_finite(arr, name, owner=where, what=what)
