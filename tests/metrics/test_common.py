"""The common suite: every registered metric, through the same invariances.

Runs each metric registered in this environment (assay-classic, assay-uncertainty ...
when installed) and the sample metrics of these tests, on the sample inputs each
declares (``examples=`` in its registration metadata, or an ``examples`` class
attribute): order, chunking, shard-then-merge, one-at-a-time and pickling must not
change the scores, and the declared ``global_target`` must match. A metric that declares
no examples fails here: the suite cannot check it.
"""

from __future__ import annotations

import assay_metric_samples
import pytest

from assay.plugins import PluginSystem
from assay.testing import check_invariances, check_scores


def _cases():
    systems = [("installed", PluginSystem()), ("samples", PluginSystem(entry_points=False))]
    systems[1][1].register_plugin(assay_metric_samples, "assay_metric_samples")
    cases = []
    for origin, system in systems:
        for entry in system.registry("metric"):
            if origin == "installed" and entry.plugin == "assay_metric_samples":
                continue
            examples = entry.metadata.get("examples") or getattr(entry.factory, "examples", None) or [None]
            for i, ex in enumerate(examples):
                cases.append(pytest.param(entry, ex, id=f"{entry.name}-{i}"))
    return cases


@pytest.mark.parametrize(("entry", "example"), _cases())
def test_registered_metric_conforms(entry, example):
    assert example is not None, (
        f"metric {entry.name!r} (plugin {entry.plugin!r}) declares no examples: register it with "
        "examples=[{'predictions': ..., 'references': ..., 'global_target': {...}}] or set the class attribute"
    )
    metric = entry.create(**example.get("overrides", {}))
    got = check_invariances(metric, example["predictions"], example.get("references"), example.get("task_data"),
                            atol=example.get("atol", 1e-9))  # the example's tolerance, as assay check-plugin
    if "global_target" in example:
        check_scores(got, example["global_target"], atol=example.get("atol", 1e-9))
