"""``fpr_at_recall[convention=torch-uncertainty]`` is torch-uncertainty 0.13.0's ``FPRx``, run live (issue 27, item 2).

0.13 takes ``tau = sup{tau : TPR >= x}`` over whole tie groups; up to 0.12 it took the threshold
whose recall was nearest ``x``, which assay kept as ``convention="torch-uncertainty-0.12"``.
``FPRx`` is loaded from its file (conftest.py: ``torch_uncertainty/__init__`` imports Lightning,
not installed). It divides ``TP / P`` and compares in torch's default dtype: the comparisons run
with float64 as the default (assay's arithmetic), and one test pins the float32 difference.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch

from assay.plugins import load_ue_metric
from assay_uncertainty.ranking import FPRAtRecall


@contextlib.contextmanager
def default_dtype(dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def fprx(module, u, q, recall) -> float:
    """torch-uncertainty's FPRx: confidences = u (higher flags failure), target = failure (pos_label 1)."""
    with default_dtype(torch.float64):
        m = module.FPRx(recall_level=recall, pos_label=1)
        m.update(torch.tensor(u, dtype=torch.float64), torch.tensor(1 - np.asarray(q), dtype=torch.long))
        return float(m.compute())


def test_the_issues_example(tu_fpr):
    # u = [2, 1, 1], failure = [1, 1, 0]: threshold 2 gives recall 1/2, threshold 1 recall 1 with one
    # success flagged (FPR 1). 0.6 is first reached at threshold 1: FPR 1.0 (nearest recall, 0.12: 0.0)
    u, q = [2.0, 1.0, 1.0], [0, 0, 1]
    assert fprx(tu_fpr, u, q, 0.6) == 1.0
    assert load_ue_metric("fpr_at_recall[recall=0.6, convention=torch-uncertainty]")(u, q) == 1.0
    assert FPRAtRecall(recall=0.6, convention="torch-uncertainty-0.12")(u, q) == 0.0


def test_torch_uncertainty_docstring_example(tu_fpr):
    # FPRx's own example prints 0.75: confidences .9 .8 .7 .6 .4 .2 .1, targets 1 0 1 0 0 1 0
    u = [0.9, 0.8, 0.7, 0.6, 0.4, 0.2, 0.1]
    failure = [1, 0, 1, 0, 0, 1, 0]
    q = [1 - f for f in failure]
    assert fprx(tu_fpr, u, q, 0.95) == pytest.approx(0.75)
    assert FPRAtRecall(recall=0.95, convention="torch-uncertainty")(u, q) == pytest.approx(0.75)


@pytest.mark.parametrize("seed", range(40))
def test_random_and_tied_inputs_agree_with_fprx(tu_fpr, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    # few distinct values (many ties) in half the cases
    u = rng.integers(0, 5, n).astype(np.float64) if seed % 2 else rng.random(n)
    q = (rng.random(n) < 0.6).astype(np.float64)
    if q.min() == q.max():
        q[0] = 1 - q[0]
    for recall in (0.05, 0.3, 0.5, 0.6, 0.75, 0.9, 0.95, 1.0, float(rng.random())):
        ours = FPRAtRecall(recall=recall, convention="torch-uncertainty")(u, q)
        assert ours == fprx(tu_fpr, u, q, recall), (seed, recall)


def test_torch_uncertainty_compares_recall_in_float32(tu_fpr):
    # 20 failures at u = 20..1 and one success at 1.5, above the last failure: threshold 2 reaches
    # recall 19 / 20 with no success flagged, threshold 1 reaches 1 with the success flagged.
    # A level of 0.95 + 1e-9 is above 19 / 20: assay (float64) goes on to threshold 1, FPR 1, as
    # FPRx does in float64; under torch's default float32 FPRx rounds the level to 0.95 and stops
    # at threshold 2, FPR 0. At 0.95 itself all three agree (FPR 0).
    u = [float(v) for v in range(20, 0, -1)] + [1.5]
    q = [0] * 20 + [1]
    level = 0.95 + 1e-9
    assert FPRAtRecall(recall=level, convention="torch-uncertainty")(u, q) == 1.0
    assert fprx(tu_fpr, u, q, level) == 1.0
    m = tu_fpr.FPRx(recall_level=level, pos_label=1)
    m.update(torch.tensor(u), torch.tensor([1] * 20 + [0]))
    assert float(m.compute()) == 0.0
    assert FPRAtRecall(recall=0.95, convention="torch-uncertainty")(u, q) == fprx(tu_fpr, u, q, 0.95) == 0.0
