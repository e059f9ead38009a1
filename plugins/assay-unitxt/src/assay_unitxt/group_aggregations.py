"""Aggregations of grouped instance scores for unitxt's ``group_mean`` reduction.

An :class:`~assay.metrics.InstanceMetric` whose ``reduction_map`` is
``{"group_mean": {"agg_func": [name, function, resample_groups], "score_fields": [...]}}``
groups its instance scores by ``task_data["group_id"]``, applies ``function`` to each group,
and reports the mean of the group values (see ``docs/unitxt.md``). ``function`` receives the
group's list of instance scores, or, when the class sets ``subgroup_column``, a dict from each
value of that ``task_data`` field to its list of scores (a ``defaultdict(list)``: a missing
sub-group is an empty list). NaN instance scores are passed through; the functions below
leave them out.

These are the aggregations unitxt offers, under its names and with its conventions, written
from their published definitions:

- :func:`nan_mean`, :func:`nan_max`, :func:`nan_std`: NaN-ignoring mean / max / population
  standard deviation (NaN when nothing is left).
- :func:`mean_subgroup_score`: the mean score of some sub-groups (``["original"]``).
- :func:`performance_drop_rate`: ``1 - mean(comparison) / mean(control)`` (Zhu et al. 2023,
  PromptBench); 0 when both means are 0, NaN when only the control mean is 0 or a side is empty.
- :func:`normalized_cohens_h`: Cohen's h of the two mean scores (as proportions),
  ``2 (asin sqrt(p_comparison) - asin sqrt(p_control))``, divided by pi and clipped to [-1, 1];
  scores must lie in [0, 1].
- :func:`normalized_hedges_g`: Hedges' g of the two samples (difference of means over the
  pooled standard deviation, ``ddof=1``; the small-sample factor
  ``(n - 3) / (n - 2.25) * sqrt((n - 2) / n)`` for ``3 < n < 50``), clipped to [-5, 5] and
  divided by 5 (a difference with no spread is infinite, so +-1); NaN when a side is empty or
  both have one score.
- :func:`interpret_effect_size`: Cohen's / Sawilowsky's words for ``|x|``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError

__all__ = [
    "interpret_effect_size", "mean_subgroup_score", "nan_max", "nan_mean", "nan_std", "normalized_cohens_h",
    "normalized_hedges_g", "performance_drop_rate", "validate_subgroup_types",
]


def _finite(values: Iterable[Any]) -> np.ndarray:
    arr = np.asarray(list(values), dtype=np.float64).ravel()
    return arr[~np.isnan(arr)]


def nan_mean(values: Iterable[Any]) -> float:
    """Mean of the non-NaN values; NaN when there are none."""
    v = _finite(values)
    return float(v.mean()) if v.size else math.nan


def nan_max(values: Iterable[Any]) -> float:
    """Largest non-NaN value; NaN when there are none."""
    v = _finite(values)
    return float(v.max()) if v.size else math.nan


def nan_std(values: Iterable[Any]) -> float:
    """Population standard deviation (``ddof=0``) of the non-NaN values; NaN when there are none."""
    v = _finite(values)
    return float(v.std()) if v.size else math.nan


def validate_subgroup_types(subgroup_scores_dict: Mapping[str, Sequence[float]], control_subgroup_types: Sequence[str],
                            comparison_subgroup_types: Sequence[str]) -> tuple[Any, list[str], list[str]]:
    """Drop NaN scores (in place, as unitxt) and de-duplicate the two lists of sub-group names."""
    for what, names in (("control_subgroup_types", control_subgroup_types),
                        ("comparison_subgroup_types", comparison_subgroup_types)):
        if not isinstance(names, list):
            raise InvalidParameterError(f"'{what}' must be a list of sub-group names; got {names!r:.60}.")
    if hasattr(subgroup_scores_dict, "update"):
        subgroup_scores_dict.update({k: [s for s in v if not math.isnan(s)]
                                     for k, v in subgroup_scores_dict.items()})
    return subgroup_scores_dict, list(dict.fromkeys(control_subgroup_types)), \
        list(dict.fromkeys(comparison_subgroup_types))


def _pooled(scores: Mapping[str, Sequence[float]], names: Sequence[str]) -> np.ndarray:
    return _finite(s for name in names for s in scores.get(name, ()))


def mean_subgroup_score(subgroup_scores_dict: Mapping[str, Sequence[float]], subgroup_types: list[str]) -> float:
    """Mean of the scores of the sub-groups ``subgroup_types``; NaN when they hold none."""
    scores, names, _ = validate_subgroup_types(subgroup_scores_dict, subgroup_types, [])
    v = _pooled(scores, names)
    return float(v.mean()) if v.size else math.nan


def _two_sides(scores: Any, control: list[str], comparison: list[str]) -> tuple[np.ndarray, np.ndarray]:
    scores, control, comparison = validate_subgroup_types(scores, control, comparison)
    return _pooled(scores, control), _pooled(scores, comparison)


def performance_drop_rate(subgroup_scores_dict: Mapping[str, Sequence[float]], control_subgroup_types: list[str],
                          comparison_subgroup_types: list[str]) -> float:
    """``1 - mean(comparison) / mean(control)``: the relative drop from the control sub-groups."""
    a, b = _two_sides(subgroup_scores_dict, control_subgroup_types, comparison_subgroup_types)
    if not a.size or not b.size:
        return math.nan
    control, comparison = float(a.mean()), float(b.mean())
    if control == 0:
        return 0.0 if comparison == 0 else math.nan
    return 1.0 - comparison / control


_EFFECT_WORDS = ((0.01, "essentially zero"), (0.2, "very small"), (0.5, "small"), (0.8, "medium"),
                 (1.2, "large"), (2.0, "very large"), (math.inf, "huge"))


def interpret_effect_size(x: float) -> str:
    """Cohen's / Sawilowsky's rule-of-thumb words for an effect size ``|x|`` (thresholds .01 .2 .5 .8 1.2 2)."""
    ax = abs(float(x))
    return next(word for bound, word in _EFFECT_WORDS if ax < bound)


def normalized_cohens_h(subgroup_scores_dict: Mapping[str, Sequence[float]], control_subgroup_types: list[str],
                        comparison_subgroup_types: list[str], interpret: bool = False) -> Any:
    """Cohen's h between the two mean scores, divided by pi (in [-1, 1]); with ``interpret``, also the words."""
    for name, values in subgroup_scores_dict.items():
        bad = [s for s in values if not math.isnan(s) and not 0 <= s <= 1]
        if bad:
            raise InvalidParameterError(f"normalized_cohens_h: scores of sub-group {name!r} must lie in [0, 1] "
                                        f"(proportions); got {bad[0]!r}.")
    a, b = _two_sides(subgroup_scores_dict, control_subgroup_types, comparison_subgroup_types)
    if not a.size or not b.size:
        h = norm = math.nan
    else:
        h = 2.0 * (math.asin(math.sqrt(float(b.mean()))) - math.asin(math.sqrt(float(a.mean()))))
        norm = float(np.clip(h / math.pi, -1.0, 1.0))
    return (norm, interpret_effect_size(h)) if interpret else norm


def normalized_hedges_g(subgroup_scores_dict: Mapping[str, Sequence[float]], control_subgroup_types: list[str],
                        comparison_subgroup_types: list[str], interpret: bool = False) -> Any:
    """Hedges' g between the two samples, clipped to [-5, 5] and divided by 5; with ``interpret``, also the words."""
    a, b = _two_sides(subgroup_scores_dict, control_subgroup_types, comparison_subgroup_types)
    sizes = (a.size, b.size)
    if 0 in sizes or max(sizes) <= 1:
        g = norm = math.nan
    else:
        cap = 5.0
        var = sum((s.size - 1) * (float(s.var(ddof=1)) if s.size > 1 else 0.0) for s in (a, b))
        pooled_sd = math.sqrt(var / (a.size + b.size - 2))
        diff = float(b.mean() - a.mean())
        if diff == 0:
            g = 0.0
        elif pooled_sd == 0:  # no spread: an infinite effect, clipped to the cap below
            g = math.copysign(math.inf, diff)
        else:
            g = diff / pooled_sd
        n = a.size + b.size
        if 3 < n < 50:
            g *= ((n - 3) / (n - 2.25)) * math.sqrt((n - 2) / n)
        g = float(np.clip(g, -cap, cap))
        norm = g / cap
    return (norm, interpret_effect_size(g)) if interpret else norm
