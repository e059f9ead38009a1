"""torch-uncertainty's documented ``Disagreement`` example, run as written with only the import changed.

The example (torch_uncertainty/metrics/classification/disagreement.py, the class docstring)
prints ``tensor(0.3333)``. By hand: example 1 votes (0, 0, 0) -> disagreement 0; example 2
votes (1, 0, 1) ([0.5, 0.5] ties to the first class, as ``torch.argmax``) -> 1 - C(2,2)/C(3,2)
= 2/3; the mean is 1/3, the sum 2/3.
"""

from __future__ import annotations

import math

import pytest
import torch

from assay_uncertainty import Disagreement


def test_documented_example_prints_the_number(capsys):
    probs = torch.tensor(
        [
            [[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]],  # Example 1, 3 estimators
            [[0.4, 0.6], [0.5, 0.5], [0.3, 0.7]],  # Example 2, 3 estimators
        ]
    )

    ds = Disagreement(reduction="mean")
    ds.update(probs)
    result = ds.compute()
    print(result)

    printed = capsys.readouterr().out.strip()
    assert printed.startswith("0.3333")
    assert float(printed) == pytest.approx(1 / 3, abs=1e-12)
    assert float(result) == pytest.approx(1 / 3, abs=1e-12)
    assert isinstance(result, float)


def test_the_other_reductions_and_the_named_scores():
    probs = torch.tensor([[[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]], [[0.4, 0.6], [0.5, 0.5], [0.3, 0.7]]])
    assert Disagreement(reduction="sum").update(probs).compute() == pytest.approx(2 / 3)
    per_example = Disagreement(reduction="none").update(probs).compute()
    assert per_example.shape == (2,) and per_example.tolist() == pytest.approx([0.0, 2 / 3])
    scores = Disagreement(reduction="mean").update(probs).compute_scores()
    assert scores["disagreement"] == scores["score"] == pytest.approx(1 / 3)
    assert scores["score_name"] == "disagreement"


def test_streaming_batches_of_tensors_with_grad_and_float64():
    a = torch.tensor([[[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]]], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([[[0.4, 0.6], [0.5, 0.5], [0.3, 0.7]]], requires_grad=True)
    ds = Disagreement()
    ds.update(a)
    ds.update(b)
    assert ds.compute() == pytest.approx(1 / 3)
    assert a.requires_grad and b.requires_grad  # the caller's tensors are untouched
    ds.reset()
    with pytest.warns(Warning, match="no data"):
        assert math.isnan(ds.compute())
