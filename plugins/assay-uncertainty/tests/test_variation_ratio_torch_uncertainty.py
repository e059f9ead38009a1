"""``variation_ratio`` against torch-uncertainty 0.13.0's ``VariationRatio``, run live (issue 27, item 4).

torch-uncertainty defaults to ``probabilistic=True`` and its ``update`` reads ``(members, batch,
classes)`` (``probs.transpose(0, 1)``) although its docstring says ``(batch, members, classes)``;
assay defaults to ``probabilistic=False`` and reads ``(B, N, C)``. The docs say so next to the
default, with the value each gives on torch-uncertainty's docstring example: these tests run
that example through the peer and check the numbers the docs print. The peer module is loaded
from its file (conftest.py).
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from assay_uncertainty import ensemble
from assay_uncertainty.ensemble import VariationRatio

EXAMPLE = [[[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]], [[0.4, 0.6], [0.5, 0.5], [0.3, 0.7]]]
DOCS = Path(__file__).resolve().parents[3] / "docs" / "uncertainty.md"


def peer(module, probs, **options) -> float:
    """torch-uncertainty's value, float64 throughout (its vote share divides ints in the default dtype)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        m = module.VariationRatio(**options)
        m.update(torch.tensor(probs, dtype=torch.float64))
        return float(m.compute())
    finally:
        torch.set_default_dtype(old)


def test_the_docstring_example_through_both(tu_variation_ratio):
    # by hand, torch-uncertainty (members first): example e has members EXAMPLE[0][e], EXAMPLE[1][e];
    # each mean is (0.55, 0.45): 1 - 0.55 = 0.45 probabilistic; votes (0, 1), (0, 0 tie), (0, 1): 1/2, 0, 1/2
    tu_default = peer(tu_variation_ratio, EXAMPLE)
    tu_votes = peer(tu_variation_ratio, EXAMPLE, probabilistic=False)
    assert tu_default == pytest.approx(0.45, abs=1e-12)
    assert tu_votes == pytest.approx(1 / 3, abs=1e-12)
    # assay (B, N, C): example 1 votes 0, 0, 0 (mean .7 .3) -> 0; example 2 votes 1, 0, 1 (mean .4 .6) -> 1/3
    assert VariationRatio().update(EXAMPLE).compute() == pytest.approx(1 / 6, abs=1e-12)
    assert VariationRatio(probabilistic=True).update(EXAMPLE).compute() == pytest.approx((0.3 + 0.4) / 2, abs=1e-12)
    members_first = np.transpose(EXAMPLE, (1, 0, 2))
    assert VariationRatio(probabilistic=True).update(members_first).compute() == pytest.approx(tu_default, abs=1e-12)
    assert VariationRatio().update(members_first).compute() == pytest.approx(tu_votes, abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_random_ensembles_agree_once_the_axes_are_swapped(tu_variation_ratio, seed):
    rng = np.random.default_rng(seed)
    b, n, c = int(rng.integers(1, 30)), int(rng.integers(1, 8)), int(rng.integers(2, 6))
    p = rng.dirichlet(np.ones(c), (b, n))  # (B, N, C)
    for probabilistic in (True, False):
        theirs = peer(tu_variation_ratio, np.transpose(p, (1, 0, 2)).tolist(), probabilistic=probabilistic)
        ours = VariationRatio(probabilistic=probabilistic).update(p).compute()
        assert ours == pytest.approx(theirs, abs=1e-12)


def test_the_docs_state_the_default_and_both_values(tu_variation_ratio):
    tu_default = f"{peer(tu_variation_ratio, EXAMPLE):.2f}"  # 0.45
    tu_votes = f"{peer(tu_variation_ratio, EXAMPLE, probabilistic=False):.4f}"  # 0.3333
    ours = f"{VariationRatio().update(EXAMPLE).compute():.4f}"  # 0.1667
    doc = VariationRatio.__doc__
    page = DOCS.read_text(encoding="utf-8")
    for text in (doc, page):
        flat = re.sub(r"\s+", " ", text)
        assert "probabilistic=True" in flat and "probabilistic=False" in flat
        assert "(N, B, C)" in flat
        for value in (tu_default, tu_votes, ours):
            assert value in flat, value
    # the docstring's examples run as written
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(VariationRatio, "VariationRatio", globs=vars(ensemble).copy()):
        runner.run(test)
    assert runner.summarize(verbose=False).attempted >= 4
    assert runner.summarize(verbose=False).failed == 0
