"""A path pool's files are read (opened and parsed) once per shard, metrics or not (issue 12)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from assay_counting_format import CountingJsonLines
from assay_metric_samples import SampleAccuracy, SampleMedianAE

from assay import DataPool, EvaluatorBase
from assay.metrics.resample import Resampling


class JsonExact(EvaluatorBase):
    """Items ``{"right": r, "total": t}``: tally (r, t); metric instance (r, [t])."""

    def sentence_evaluator(self, sent, w_vector):
        return sent["right"], sent["total"]

    def metric_inputs(self, sent, w_vector):
        return float(sent["right"]), [float(sent["total"])]


@pytest.fixture
def files(tmp_path):
    rows = [[(2, 3), (1, 1)], [(0, 2)], [(3, 3), (0, 1)], [(4, 4)]]
    paths = []
    for i, part in enumerate(rows):
        p = tmp_path / f"part{i}.jsonl"
        p.write_text("".join(json.dumps({"right": r, "total": t}) + "\n" for r, t in part))
        paths.append(str(p))
    return paths


@pytest.mark.parametrize("executor", ["serial", "threads[workers=2]", "processes[workers=2]"])
@pytest.mark.parametrize("with_metrics", [False, True])
def test_each_file_is_read_once(files, tmp_path, executor, with_metrics):
    log = tmp_path / "reads.log"
    pool = DataPool.from_paths(files, format=CountingJsonLines(str(log)))
    metrics = [SampleAccuracy(), SampleMedianAE()] if with_metrics else None
    r = JsonExact().parallelEvaluate(pool, None, executor=executor, num_shards=3, metrics=metrics, n_resamples=0)
    reads = Counter(line.split(" ", 1)[1].strip() for line in log.read_text().splitlines())
    assert reads == Counter({p: 1 for p in files})  # once each, in whatever process ran the shard
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == (10, 14, 6)
    if with_metrics:  # sentences entirely right: (1,1) (3,3) (4,4) -> 3 of 6
        assert r.metrics["accuracy"] == pytest.approx(3 / 6)


def test_sequential_reads_each_file_once(files, tmp_path):
    log = tmp_path / "reads.log"
    pool = DataPool.from_paths(files, format=CountingJsonLines(str(log)), num_shards=2)
    JsonExact().sequentialEvaluate(pool, None, metrics=[SampleAccuracy()], n_resamples=10)
    assert sorted(line.split(" ", 1)[1].strip() for line in log.read_text().splitlines()) == sorted(files)


def test_a_shard_without_pool_positions_gives_no_intervals_with_a_warning(files):
    # a third-party pool whose shards know neither their offset ('start') nor their files ('first_file')
    from assay.core.pool import PathShard

    pool = DataPool.from_paths(files, format="jsonl")
    shards = [PathShard(s.index, s.paths, s.format, s.data_format) for s in pool.shards(2)]
    assert all(s.first_file is None for s in shards)
    ev = JsonExact()
    from assay.executors.builtin import SerialExecutor

    with SerialExecutor(progress=False) as executor, pytest.warns(UserWarning, match="pool positions"):
        r = ev._run(pool, None, ev.sentence_evaluator, executor, shards, metrics=[SampleAccuracy()],
                    resampling=Resampling(n_resamples=20))
    assert r.metrics["accuracy"] == pytest.approx(3 / 6)  # the scores are still there
    assert not any(k.endswith("_ci_low") for k in r.metrics)
