"""``grouping_loss`` against torch-uncertainty 0.13.0's ``GroupingLoss``, run live (issue 24).

Both use glest (the peer's metric module imports it; assay defers the import). glest splits
the examples at random: torch-uncertainty passes no seed (numpy's global generator), and
assay sorts the rows before the split (so its value does not depend on the input order). The
comparison gives the peer the rows in that sorted order and seeds numpy's global generator the
same way before each, with ``random_state=None`` on assay's side: then the values are equal.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import assay
from assay.errors import InvalidParameterError
from assay_uncertainty.grouping import GroupingLoss


def data(seed: int, n: int = 500):
    rng = np.random.default_rng(400 + seed)
    x = rng.normal(size=(n, 4))
    p = np.exp(2 * x[:, :3])
    p /= p.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(3, p=row) for row in p])
    y[x[:, 3] > 1] = 0  # a group the probabilities do not see: grouping loss
    return p, y, x


def sorted_like_assay(p, y, x):
    conf, pred = p.max(axis=1), p.argmax(axis=1)
    rows = np.column_stack([conf, (pred == y).astype(float), x])
    order = np.lexsort(rows.T[::-1])
    return p[order], y[order], x[order]


@pytest.mark.parametrize("seed", range(3))
def test_matches_torch_uncertainty(tu_classification_grouping, seed):
    p, y, x = sorted_like_assay(*data(seed))
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its buffer warning
            m = tu_classification_grouping.GroupingLoss()
        m.update(torch.as_tensor(p), torch.as_tensor(y), torch.as_tensor(x))
        np.random.seed(seed)
        theirs = float(m.compute())
    finally:
        torch.set_default_dtype(old)
    rng_state = np.random.get_state()
    np.random.seed(seed)
    ours = GroupingLoss(random_state=None).update(*data(seed)).compute()  # the original order: assay sorts
    np.random.set_state(rng_state)
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)


def test_order_shards_and_intervals():
    p, y, x = data(1)
    one = GroupingLoss().update(p, y, x).compute()
    perm = np.random.default_rng(0).permutation(len(y))
    assert GroupingLoss().update(p[perm], y[perm], x[perm]).compute() == one
    a, b = GroupingLoss().update(p[:100], y[:100], x[:100]), GroupingLoss().update(p[100:], y[100:], x[100:])
    assert a.merge(b).compute() == one
    g = assay.evaluate(list(p), list(y), task_data=list(x), metrics=[GroupingLoss()], n_resamples=20,
                       seed=0).global_scores
    assert g["grouping_loss"] == pytest.approx(one)
    assert g["grouping_loss_ci_low"] < g["grouping_loss_ci_high"]


def test_a_hidden_group_raises_the_loss():
    p, y, x = data(2)
    with_group = GroupingLoss().update(p, y, x).compute()
    rng = np.random.default_rng(9)
    y_plain = np.array([rng.choice(3, p=row) for row in p])  # labels drawn from the probabilities: no hidden group
    assert GroupingLoss().update(p, y_plain, x).compute() < with_group


def test_errors_name_the_problem():
    with pytest.raises(InvalidParameterError, match="features"):
        GroupingLoss().update([[0.6, 0.4]], [0])
    with pytest.raises(InvalidParameterError, match="glest"):
        GroupingLoss().update([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3], [0.4, 0.6]], [0, 1, 1, 0, 0],
                              [[0.0], [1.0], [2.0], [3.0], [4.0]]).compute()
