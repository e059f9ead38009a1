"""Property tests of the UE metrics' declared orientation relations and tie invariance, on random samples.

The conformance checks test each relation on one sample; here Hypothesis draws many
(uncertainty with ties, binary quality), for every registered UE metric of the live
registry. The relations are the ones the metric declares (``orientation=`` on
registration), stated in docs/plugins.md.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.plugins import get_plugin_system
from assay.testing.metric_checks import declared

_ENTRIES = list(get_plugin_system().registry("ue_metric"))


@st.composite
def samples(draw):
    n = draw(st.integers(4, 24))
    u = np.array(draw(st.lists(st.integers(1, 9), min_size=n, max_size=n)), dtype=float) / 10  # ties likely
    q = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    q[:2] = (0.0, 1.0)  # both outcomes
    return u, q


def _call(metric, u, q):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(metric(u, q))


def _close(a, b):
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("entry", [e for e in _ENTRIES if e.metadata.get("orientation", "monotone") != "monotone"],
                         ids=lambda e: e.name)
@settings(max_examples=25, deadline=None)
@given(sample=samples())
def test_declared_relation_holds(entry, sample):
    u, q = sample
    metric = entry.create()
    relation = declared(entry, metric, "orientation", "monotone")
    base = _call(metric, u, q)
    if relation == "complement":
        assert _close(_call(metric, -u, q), 1.0 - base)
    elif relation == "negate":
        assert _close(_call(metric, -u, q), -base)
    else:
        assert relation == "reflect"
        assert _close(_call(metric, 1.0 - u, 1.0 - q), base)


@pytest.mark.parametrize("entry", [e for e in _ENTRIES if e.metadata.get("tie_aware", True)], ids=lambda e: e.name)
@settings(max_examples=15, deadline=None)
@given(sample=samples(), seed=st.integers(0, 2**16))
def test_tie_aware_metrics_ignore_the_order_within_ties(entry, sample, seed):
    u, q = sample
    metric = entry.create()
    rng = np.random.default_rng(seed)
    perm = np.arange(u.size)
    for value in np.unique(u):
        idx = np.flatnonzero(u == value)
        perm[idx] = rng.permutation(idx)
    assert _close(_call(metric, u[perm], q[perm]), _call(metric, u, q))
