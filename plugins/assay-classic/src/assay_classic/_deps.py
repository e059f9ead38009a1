"""Lazy imports of the heavy libraries this plugin builds on, with install hints.

scipy, rapidfuzz, sacrebleu and rouge-score are imported inside the metrics that need them, never at
module top level, so ``import assay`` and plugin discovery stay cheap. A missing library is
a :class:`assay.errors.MissingDependencyError` that carries the ``pip install`` command.
"""

from __future__ import annotations

from types import ModuleType

from assay.plugins import deps

__all__ = ["REQUIREMENTS", "require"]

#: import name -> (distribution to install, what it is used for)
REQUIREMENTS: dict[str, tuple[str, str]] = {
    "scipy.stats": ("scipy", "the correlation metrics (spearman, kendall_tau, pearson)"),
    "rapidfuzz.distance": ("rapidfuzz", "the char_edit_distance metric"),
    "sacrebleu.metrics": ("sacrebleu", "the bleu, chrf and ter metrics"),
    "rouge_score.rouge_scorer": ("rouge-score", "the rouge metric"),
}


def require(module: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the package to install."""
    package, purpose = REQUIREMENTS.get(module, (None, ""))
    return deps.require(module, package=package, purpose=purpose)
