"""Second-cycle split files: most-uncertain querying and the random / best / worst baselines."""

from __future__ import annotations

import pytest

from assay.errors import InvalidParameterError
from assay_segmentation import active_learning as al

SPLITS = {"train": ["t1"], "val": ["v1"], "id_unlabeled_pool": ["a", "b", "c", "d"],
          "ood_unlabeled_pool": ["x", "y"]}


def test_query_most_uncertain():
    u = {"a": 0.1, "b": 0.9, "c": 0.5, "d": 0.2, "x": 0.8, "y": 0.5}
    pool = SPLITS["id_unlabeled_pool"] + SPLITS["ood_unlabeled_pool"]
    # int(6 * 0.5) = 3: b (.9), x (.8), then c and y tie at .5 -> c comes first in the pool
    assert al.query_most_uncertain(u, pool) == ["b", "x", "c"]
    assert al.query_most_uncertain(u, pool, fraction=0.34) == ["b", "x"]  # int(2.04) = 2


def test_query_missing_uncertainty():
    with pytest.raises(InvalidParameterError, match="No aggregated uncertainty"):
        al.query_most_uncertain({"a": 1.0}, ["a", "b"])


def test_second_cycle_splits_moves_queried_to_train():
    new = al.second_cycle_splits(SPLITS, ["b", "x"])
    assert new["train"] == ["t1", "b", "x"]
    assert new["id_unlabeled_pool"] == ["a", "c", "d"]
    assert new["ood_unlabeled_pool"] == ["y"]
    assert new["val"] == ["v1"] and new["queried"] == ["b", "x"]
    with pytest.raises(InvalidParameterError, match="not in the unlabeled pools"):
        al.second_cycle_splits(SPLITS, ["t1"])


def test_baselines():
    best = al.baseline_query(SPLITS, "best", seed=1)
    assert len(best) == 3 and best[:2] == ["x", "y"] and best[2] in SPLITS["id_unlabeled_pool"]
    worst = al.baseline_query(SPLITS, "worst", seed=1)
    assert len(worst) == 3 and set(worst) <= set(SPLITS["id_unlabeled_pool"])
    rand = al.baseline_query(SPLITS, "random", seed=1)
    assert len(rand) == 3 and len(set(rand)) == 3
    assert rand == al.baseline_query(SPLITS, "random", seed=1)  # seeded
    with pytest.raises(InvalidParameterError, match="baseline"):
        al.baseline_query(SPLITS, "oracle")


def test_write_and_read_splits(tmp_path):
    path = al.write_splits(tmp_path / "m" / "splits_seed1.json", al.second_cycle_splits(SPLITS, ["a"]))
    back = al.read_splits(path)
    assert back["train"] == ["t1", "a"] and back["id_unlabeled_pool"] == ["b", "c", "d"]
    (tmp_path / "bad.json").write_text('{"train": []}')
    with pytest.raises(InvalidParameterError, match="id_unlabeled_pool"):
        al.read_splits(tmp_path / "bad.json")
