"""DataPool: sharding, the seed's cursor, reading files through data formats, lazy path pools."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay import DataPool, InvalidParameterError
from assay.core.formats import JsonLinesFormat
from assay.core.pool import PathPool, PathShard, Shard, split_evenly


def write_jsonl(path, items):
    path.write_text("".join(json.dumps(x) + "\n" for x in items), encoding="utf-8")
    return path


# ------------------------------------------------------------------ in-memory pools
def test_shards_by_hand():
    pool = DataPool(list(range(10)), num_shards=3)
    assert [list(s.items()) for s in pool.shards()] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert [(s.index, s.start, s.stop) for s in pool.shards()] == [(0, 0, 4), (1, 4, 7), (2, 7, 10)]


def test_more_shards_than_items_gives_empty_shards():
    shards = DataPool(["a", "b"]).shards(5)
    assert [list(s.items()) for s in shards] == [["a"], ["b"], [], [], []]
    assert [len(s) for s in shards] == [1, 1, 0, 0, 0]


def test_empty_pool_has_empty_shards():
    assert [list(s.items()) for s in DataPool([], num_shards=2).shards()] == [[], []]


def test_default_is_one_shard_and_argument_overrides_the_pool():
    pool = DataPool(list(range(5)), num_shards=2)
    assert len(pool.shards()) == 2 and len(pool.shards(4)) == 4
    assert len(DataPool(list(range(5))).shards()) == 1


@given(n=st.integers(0, 200), k=st.integers(1, 50))
def test_shards_are_contiguous_cover_once_and_balanced(n, k):
    items = list(range(n))
    shards = DataPool(items).shards(k)
    assert len(shards) == k
    assert [x for s in shards for x in s.items()] == items
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1
    assert [s.index for s in shards] == list(range(k))
    assert split_evenly(n, k) == [(s.start, s.stop) for s in shards]


@pytest.mark.parametrize("items", [tuple(range(7)), np.arange(7), range(7)])
def test_any_sized_sequence(items):
    shards = DataPool(items, num_shards=2).shards()
    assert [list(s.items()) for s in shards] == [[0, 1, 2, 3], [4, 5, 6]]


def test_items_are_kept_by_reference():
    items = [1, 2, 3]
    assert DataPool(items).items is items


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "4"])
def test_bad_num_shards_names_the_parameter(bad):
    with pytest.raises(InvalidParameterError, match="'num_shards' parameter"):
        DataPool([1], num_shards=bad)
    with pytest.raises(InvalidParameterError, match="'num_shards' parameter"):
        DataPool([1]).shards(bad)


@pytest.mark.parametrize("bad, hint", [((x for x in range(3)), "list"), ("text", "from_file"), (42, ""),
                                       ({"a": 1}, "values")])
def test_bad_items_name_the_parameter(bad, hint):
    with pytest.raises(InvalidParameterError, match="'items' parameter") as info:
        DataPool(bad)
    assert hint in str(info.value)


def test_a_pickled_shard_carries_only_its_own_items():
    pool = DataPool(list(range(1000)), num_shards=10)
    shard = pool.shards()[3]
    back = pickle.loads(pickle.dumps(shard))
    assert list(back.items()) == list(range(300, 400))
    assert (back.index, back.start, back.stop) == (3, 300, 400)
    assert back.pool_index(5) == 305 and back.describe(5) == "item 305"
    assert len(pickle.dumps(shard)) < len(pickle.dumps(list(range(1000)))) / 5


def test_cursor_methods_of_the_seed():
    pool = DataPool(["s1", "s2"])
    assert pool.get_sent_num() == 2
    seen = []
    while pool.has_next_data():
        seen.append(pool.get_next_data())
    assert seen == ["s1", "s2"]
    with pytest.raises(IndexError, match="past the end"):
        pool.get_next_data()
    pool.reset_index()
    assert pool.get_next_data() == "s1"


def test_sequence_protocol():
    pool = DataPool(["a", "b", "c"])
    assert len(pool) == 3 and pool[1] == "b" and list(pool) == ["a", "b", "c"]
    assert "3 items" in repr(pool)


# ------------------------------------------------------------------ from_file
def test_from_file_guesses_jsonl_from_the_extension(tmp_path):
    path = write_jsonl(tmp_path / "data.jsonl", [{"w": 1}, {"w": 2}, {"w": 3}])
    pool = DataPool.from_file(path, num_shards=2)
    assert list(pool) == [{"w": 1}, {"w": 2}, {"w": 3}]
    assert pool.format == "jsonl" and pool.source == str(path) and pool.num_shards == 2


def test_from_file_with_explicit_format_name_or_instance(tmp_path):
    path = write_jsonl(tmp_path / "data.txt", [1, 2])
    assert list(DataPool.from_file(path, format="jsonl")) == [1, 2]
    assert list(DataPool.from_file(path, format=JsonLinesFormat())) == [1, 2]


def test_unknown_extension_asks_for_the_format(tmp_path):
    path = write_jsonl(tmp_path / "data.weird", [1])
    with pytest.raises(InvalidParameterError, match=r"'format'.*jsonl \(\.jsonl, \.ndjson\)"):
        DataPool.from_file(path)


def test_bad_format_names_the_parameter(tmp_path):
    path = write_jsonl(tmp_path / "data.jsonl", [1])
    with pytest.raises(InvalidParameterError, match="'format'"):
        DataPool.from_file(path, format=3.5)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        DataPool.from_file(tmp_path / "nope.jsonl")


# ------------------------------------------------------------------ from_paths
@pytest.fixture
def five_files(tmp_path):
    paths = []
    for i in range(5):
        paths.append(write_jsonl(tmp_path / f"part-{i}.jsonl", [f"{i}.{j}" for j in range(i + 1)]))
    return tmp_path, paths


def test_from_paths_glob_groups_whole_files(five_files):
    root, paths = five_files
    pool = DataPool.from_paths(str(root / "*.jsonl"), num_shards=2)
    assert isinstance(pool, PathPool) and pool.format == "jsonl"
    shards = pool.shards()
    assert [s.paths for s in shards] == [tuple(map(str, paths[:3])), tuple(map(str, paths[3:]))]
    assert all(isinstance(s, PathShard) and s.format == "jsonl" for s in shards)
    items = [x for s in shards for x in s.items()]
    assert items == [f"{i}.{j}" for i in range(5) for j in range(i + 1)]
    assert len(pool) == 15 and pool.get_sent_num() == 15


def test_from_paths_is_lazy(five_files, monkeypatch):
    root, _ = five_files
    reads = []
    original = JsonLinesFormat.read
    monkeypatch.setattr(JsonLinesFormat, "read", lambda self, p: reads.append(p) or original(self, p))
    pool = DataPool.from_paths(root, format="jsonl", num_shards=5)
    shards = pool.shards()
    assert reads == []
    assert shards[2].items() == ["2.0", "2.1", "2.2"]
    assert reads == [str(root / "part-2.jsonl")]


def test_from_paths_list_keeps_the_given_order(five_files):
    _, paths = five_files
    pool = DataPool.from_paths([paths[1], paths[0]], format="jsonl")
    assert list(pool) == ["1.0", "1.1", "0.0"]


def test_from_paths_more_shards_than_files(five_files):
    root, _ = five_files
    shards = DataPool.from_paths(str(root / "part-[01].jsonl")).shards(4)
    assert [len(s.paths) for s in shards] == [1, 1, 0, 0]
    assert shards[3].items() == []


def test_path_shard_pickles_small_and_describes_items_by_file(five_files):
    root, paths = five_files
    shard = DataPool.from_paths(root, format="jsonl", num_shards=2).shards()[1]
    back = pickle.loads(pickle.dumps(shard))
    assert back.paths == shard.paths and back.format == "jsonl"
    items = back.items()
    assert items[4] == "4.0"
    assert back.describe(4) == f"item 0 of file {str(paths[4])!r} (item 4 of the shard)"
    assert back.pool_index(4) is None
    assert back.parse('"x"\n', source="mem") == ["x"]


def test_from_paths_errors_name_the_parameter(tmp_path):
    with pytest.raises(InvalidParameterError, match="'paths_or_glob'.*matched no file"):
        DataPool.from_paths(str(tmp_path / "*.jsonl"))
    with pytest.raises(FileNotFoundError, match="'paths_or_glob'"):
        DataPool.from_paths(str(tmp_path / "missing.jsonl"))
    with pytest.raises(InvalidParameterError, match="'paths_or_glob'"):
        DataPool.from_paths([])
    with pytest.raises(InvalidParameterError, match="'paths_or_glob'"):
        DataPool.from_paths(42)


def test_from_paths_keeps_uris_for_remote_executors():
    pool = DataPool.from_paths("hdfs://namenode:8020/data/*.jsonl", format="jsonl", num_shards=3)
    assert pool.paths == ("hdfs://namenode:8020/data/*.jsonl",)
    assert [s.paths for s in pool.shards()] == [("hdfs://namenode:8020/data/*.jsonl",), (), ()]


def test_shard_over_an_unsliceable_sequence():
    class OnlyIndex:
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if isinstance(i, slice):
                raise TypeError("no slices")
            return i * 10

    assert list(Shard(0, 1, 3, OnlyIndex()).items()) == [10, 20]


# ------------------------------------------------------------------ a shard iterates over its items (SFU toolkit)
def test_a_shard_iterates_over_its_items():
    shards = DataPool(list("abcdefg"), num_shards=3).shards()  # by hand: 3, 2, 2 items
    assert [list(s) for s in shards] == [["a", "b", "c"], ["d", "e"], ["f", "g"]]
    assert [len(s) for s in shards] == [3, 2, 2]
    seen = []
    for sent in shards[1]:
        seen.append(sent)
    assert seen == ["d", "e"]
    assert list(pickle.loads(pickle.dumps(shards[2]))) == ["f", "g"]  # as a worker receives it
    assert list(DataPool([], num_shards=2).shards()[0]) == []


def test_a_path_shard_iterates_over_its_files_items(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [1, 2])
    write_jsonl(tmp_path / "b.jsonl", [3])
    write_jsonl(tmp_path / "c.jsonl", [4, 5, 6])
    shards = DataPool.from_paths(str(tmp_path / "*.jsonl"), num_shards=2).shards()
    assert [list(s) for s in shards] == [[1, 2, 3], [4, 5, 6]]  # whole files: a+b, c
    assert [len(s) for s in shards] == [3, 3]
    assert [x for x in pickle.loads(pickle.dumps(shards[1]))] == [4, 5, 6]
