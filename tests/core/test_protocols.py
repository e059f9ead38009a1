"""The Protocols at the framework's seams (assay.core.protocols) fit what the framework hands across them."""

from __future__ import annotations

import pytest

from assay import DataPool, load_executor
from assay.core.pool import PathShard, Shard
from assay.core.protocols import ExecutorLike, Labelled, ShardLike
from assay.executors.base import Executor, task_label


def test_the_pools_shards_are_shards():
    shards = DataPool(list(range(5)), num_shards=2).shards()
    assert all(type(s) is Shard and isinstance(s, ShardLike) for s in shards)
    assert isinstance(PathShard(0, ("a.conllu",), "conllu", None), ShardLike)


def test_a_third_party_shard_fits_without_inheriting():
    class Rows:  # structural: nothing to inherit
        index = 3

        def __len__(self):
            return 0

        def __iter__(self):
            return iter(())

        def items(self):
            return []

        def pool_index(self, offset):
            return offset

        def describe(self, offset):
            return f"row {offset}"

    assert isinstance(Rows(), ShardLike)


def test_a_pool_an_item_and_a_half_shard_are_not_shards():
    class NoDescribe:
        index = 0

        def __len__(self):
            return 0

        def __iter__(self):
            return iter(())

        def items(self):
            return []

        def pool_index(self, offset):
            return offset

    for obj in (DataPool([1, 2]), 7, "sentence", NoDescribe()):
        assert not isinstance(obj, ShardLike), obj


def test_the_parsing_plugins_pair_shard_is_a_shard(tmp_path):
    from assay_parsing import stream  # make setup installs every first-party plugin
    text = "1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n\n1\tb\tb\tX\tX\t_\t0\troot\t_\t_\n\n"
    (tmp_path / "g.conllu").write_text(text)
    (tmp_path / "s.conllu").write_text(text)
    pool = stream.open_pairs(tmp_path / "g.conllu", tmp_path / "s.conllu", format="conllu", num_shards=2)
    assert all(isinstance(s, ShardLike) for s in pool.shards())


@pytest.mark.parametrize("name", ["serial", "threads", "processes"])
def test_the_builtin_executors_are_executors(name):
    with load_executor(name) as ex:
        assert isinstance(ex, Executor) and isinstance(ex, ExecutorLike)


def test_task_label_uses_a_labelled_tasks_index_else_the_position():
    class Task:
        def __init__(self, index):
            self.index = index

    assert isinstance(Task(4), Labelled)
    assert task_label(Task(4), 0) == 4
    assert task_label(Task(True), 2) == 2  # a bool is not a shard number
    assert task_label(Task("4"), 2) == 2
    assert task_label(17, 5) == 5  # a plain task has no index
