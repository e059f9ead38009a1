"""unitxt's ``metrics.robustness.*``: accuracy, string containment and token overlap reduced with
``group_mean`` over ``task_data["group_id"]`` (see ``docs/unitxt.md``, "group_mean").

The 19 classes are unitxt's (``GroupMeanAccuracy``, ``FixedGroupPDRParaphraseAccuracy`` ...), built
here from their three parts: the instance metric, the aggregation over a group (with
``subgroup_column = "variant_type"`` where it compares ``original`` with ``paraphrase``
instances) and whether the groups are fixed (resampled together).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import assay
from assay_unitxt.catalog.classification import Accuracy, StringContainment
from assay_unitxt.group_aggregations import (
    mean_subgroup_score,
    nan_mean,
    normalized_cohens_h,
    normalized_hedges_g,
    performance_drop_rate,
)

__all__ = ["KINDS", "robustness_metric"]


def _subgroups(fn: Callable[..., float], absval: bool, scd: Any) -> float:
    value = fn(subgroup_scores_dict=scd, control_subgroup_types=["original"], comparison_subgroup_types=["paraphrase"])
    return float(np.abs(value)) if absval else float(value)


def _only(kind: str, scd: Any) -> float:
    return float(mean_subgroup_score(subgroup_scores_dict=scd, subgroup_types=[kind]))


#: unitxt's aggregation name -> (function of a group's scores, whether it reads the variant_type subgroups)
AGGREGATIONS: dict[str, tuple[Callable[..., float], bool]] = {
    "mean": (nan_mean, False),
    "mean_baseline": (functools.partial(_only, "original"), True),
    "mean_paraphrase": (functools.partial(_only, "paraphrase"), True),
    "pdr_paraphrase": (functools.partial(_subgroups, performance_drop_rate, False), True),
    "norm_cohens_h_paraphrase": (functools.partial(_subgroups, normalized_cohens_h, False), True),
    "norm_hedges_g_paraphrase": (functools.partial(_subgroups, normalized_hedges_g, False), True),
    "absval_norm_cohens_h_paraphrase": (functools.partial(_subgroups, normalized_cohens_h, True), True),
    "absval_norm_hedges_g_paraphrase": (functools.partial(_subgroups, normalized_hedges_g, True), True),
}


#: sample inputs for assay's conformance checks: two groups, each with an original and paraphrases
EXAMPLES = [{"predictions": ["a", "b", "c", "d", "e", "f"], "references": [["a"], ["x"], ["c"], ["d"], ["y"], ["f"]],
             "task_data": [{"group_id": g, "variant_type": v} for g, v in
                           [("g1", "original"), ("g1", "paraphrase"), ("g1", "paraphrase"),
                            ("g2", "original"), ("g2", "paraphrase"), ("g2", "paraphrase")]]}]


def _class(base_name: str, aggregation: str, fixed: bool) -> type:
    bases: dict[str, Any] = {"accuracy": Accuracy, "string_containment": StringContainment}
    if base_name == "token_overlap":
        base = type(assay.load_metric("metrics.token_overlap"))  # assay-classic's UnitxtTokenOverlap
    else:
        base = bases[base_name]
    fn, subgroups = AGGREGATIONS[aggregation]
    spec: dict[str, Any] = {"agg_func": [aggregation, fn, fixed]}
    if base_name == "token_overlap":
        spec["score_fields"] = ["f1", "precision", "recall"]
    body: dict[str, Any] = {"reduction_map": {"group_mean": spec}, "__module__": __name__, "examples": EXAMPLES}
    if subgroups:
        body["subgroup_column"] = "variant_type"
    name = f"{'Fixed' if fixed else ''}Group_{aggregation}_{base_name}"
    if name not in globals():  # a module attribute: instances pickle by reference, as any class
        body["__qualname__"] = name
        globals()[name] = type(name, (base,), body)
    cls: type = globals()[name]
    return cls


def robustness_metric(kind: str, score_prefix: str = "") -> Any:
    """The metric of unitxt's catalog class ``kind`` (``"fixed_group_pdr_paraphrase_accuracy"``)."""
    fixed = kind.startswith("fixed_")
    rest = kind.removeprefix("fixed_").removeprefix("group_")
    for base_name in ("string_containment", "token_overlap", "accuracy"):
        if rest.endswith("_" + base_name):
            aggregation = rest[: -len(base_name) - 1]
            break
    else:
        raise KeyError(kind)
    return _class(base_name, aggregation, fixed)(score_prefix=score_prefix)


def _define_all() -> None:
    """Create every class at import, so that an instance unpickles in a process that never built it."""
    for kind in KINDS:
        robustness_metric(kind)


#: unitxt's 19 robustness classes, by catalog ``__type__``
KINDS = ["group_mean_accuracy", "fixed_group_mean_accuracy", "group_mean_string_containment",
         "fixed_group_mean_string_containment", "group_mean_token_overlap",
         *[f"fixed_group_{agg}_{base}" for base in ("accuracy", "string_containment")
           for agg in ("mean_baseline", "mean_paraphrase", "pdr_paraphrase", "norm_cohens_h_paraphrase",
                       "norm_hedges_g_paraphrase", "absval_norm_cohens_h_paraphrase",
                       "absval_norm_hedges_g_paraphrase")]]
_define_all()
