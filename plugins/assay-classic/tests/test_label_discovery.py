"""Label discovery: macro / weighted scores and MCC without labels= take the additive path for their intervals.

The reference is the same call with ``labels=`` the sorted union of the labels that occur (what
scikit-learn's ``unique_labels`` takes): identical point scores and identical interval bounds, and
the point scores equal scikit-learn's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import f1_score, matthews_corrcoef, precision_score, recall_score

import assay
from assay.errors import UndefinedMetricWarning

CASES = [("f1", "macro", f1_score), ("f1", "weighted", f1_score), ("precision", "macro", precision_score),
         ("recall", "weighted", recall_score), ("matthews_corrcoef", None, matthews_corrcoef)]


def run(spec, preds, refs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return assay.evaluate(preds, refs, metrics=[spec], n_resamples=300, seed=7).global_scores


@pytest.mark.parametrize("name, average, sk", CASES)
@pytest.mark.parametrize("kind", ["ints", "strings"])
def test_discovered_labels_give_the_labels_path_numbers(name, average, sk, kind):
    rng = np.random.default_rng(3)
    n = 400
    refs = rng.integers(0, 5, n)
    preds = np.where(rng.random(n) < 0.6, refs, rng.integers(0, 7, n))  # labels 5, 6 only predicted
    refs[:3] = 7  # label 7 only in the references
    if kind == "strings":
        refs, preds = [f"c{v}" for v in refs], [f"c{v}" for v in preds]
    else:
        refs, preds = refs.tolist(), preds.tolist()
    labels = sorted(set(refs) | set(preds))
    opts = f"average={average}, " if average else ""
    lab = ", ".join(f"'{x}'" for x in labels) if kind == "strings" else ", ".join(map(str, labels))
    found = run(f"{name}[{opts.rstrip(', ')}]" if average else name, preds, refs)
    given = run(f"{name}[{opts}labels=[{lab}]]", preds, refs)
    key = "matthews_corrcoef" if name == "matthews_corrcoef" else name
    assert (found[key], found[f"{key}_ci_low"], found[f"{key}_ci_high"]) == \
        (given[key], given[f"{key}_ci_low"], given[f"{key}_ci_high"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = sk(refs, preds, average=average, zero_division=0) if average else sk(refs, preds)
    assert found[key] == pytest.approx(expected, abs=1e-12)
    assert found[f"{key}_ci_low"] <= found[key] <= found[f"{key}_ci_high"]


def test_too_many_labels_keep_the_gathered_path_with_the_same_point_score():
    from assay_classic.classification import F1

    rng = np.random.default_rng(1)
    refs, preds = rng.integers(0, 50, 300).tolist(), rng.integers(0, 50, 300).tolist()
    m = F1(average="macro")
    twin = m.additive_for_intervals(m.map_all(preds, refs))
    assert twin is not None and twin[0].labels == sorted(set(refs) | set(preds))
    small = F1(average="macro")
    small.DISCOVERY_CELLS = 100  # a table larger than this: no twin, the gathered path stays
    assert small.additive_for_intervals(small.map_all(preds, refs)) is None
