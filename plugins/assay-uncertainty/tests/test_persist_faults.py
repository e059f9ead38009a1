"""Fault injection on saves: kill -9, a full disk, an exception between the files.

After each fault, loading gives the complete old save or the complete new one (compared
value by value with the manager that was saved), never a mix and never a silent half.
Bounded in time: every subprocess wait has a timeout.
"""

from __future__ import annotations

import errno
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import assay_uncertainty.manager.persist as persist
from assay.errors import SaveFormatError
from assay.metrics.results import EvaluationResults, load_results
from assay_uncertainty.manager import UEManager

STEPS = ["tmp-created", "npz-written", "json-written", "tmp-complete", "old-moved", "new-moved", "old-removed"]
#: the steps after which the new save is in place
NEW_AFTER = {"new-moved", "old-removed"}

BUILD = textwrap.dedent("""
    import warnings
    import numpy as np
    from assay_uncertainty.manager import UEManager

    def build(seed, n=300):
        rng = np.random.default_rng(seed)
        recs = []
        for i in range(n):
            k = int(rng.integers(1, 6))
            recs.append({"log_probs": (-rng.random(k) * 3).round(6).tolist(), "correct": int(rng.random() < 0.6),
                         "claim_spans": [[0, k]], "claim_correct": [int(rng.random() < 0.5)]})
        man = UEManager(recs, estimators=["msp", "claim_probability"], gen_metrics=["accuracy", "claim_accuracy"],
                        ue_metrics=["prr", "roc_auc"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            man()
        man.notes.append(f"seed {seed}")
        return man
""")
_ns: dict = {}
exec(BUILD, _ns)  # the same builder runs in the subprocesses
build = _ns["build"]


def assert_same(a, b):
    for x, y in ((a.estimations, b.estimations), (a.gen_metrics, b.gen_metrics)):
        assert x.keys() == y.keys()
        for k in x:
            if k[0] == "sequence":
                np.testing.assert_array_equal(x[k], y[k])
            else:
                assert len(x[k]) == len(y[k]) and all(np.array_equal(u, v) for u, v in zip(x[k], y[k]))
    assert a.metrics.keys() == b.metrics.keys()
    assert all(a.metrics[k] == b.metrics[k] or (math.isnan(a.metrics[k]) and math.isnan(b.metrics[k]))
               for k in a.metrics)
    assert a.notes == b.notes and a.n_examples == b.n_examples
    assert a.stats.keys() == b.stats.keys()
    for k in a.stats:
        assert len(a.stats[k]) == len(b.stats[k])
        for u, v in zip(a.stats[k], b.stats[k]):
            assert np.array_equal(np.asarray(u, dtype=float), np.asarray(v, dtype=float)), k


def which(loaded, old, new) -> str:
    """'old' or 'new' when ``loaded`` equals one of them exactly; fails otherwise."""
    for name, ref in (("old", old), ("new", new)):
        try:
            assert_same(loaded, ref)
            return name
        except AssertionError:
            continue
    raise AssertionError("the loaded save is neither the old one nor the new one")


@pytest.fixture(scope="module")
def old_new():
    return build(1), build(2)


def _leftovers(parent: Path, name: str = "run") -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name != name)


# ---------------------------------------------------------------- exceptions and a full disk, in process
@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("exc", [OSError(errno.ENOSPC, "No space left on device"), RuntimeError("boom")])
def test_failure_at_each_step_leaves_old_or_new(tmp_path, monkeypatch, old_new, step, exc):
    old, new = old_new
    run = tmp_path / "run"
    old.save(run)

    def fail(name):
        if name == step:
            raise exc

    monkeypatch.setattr(persist, "_step", fail)
    with pytest.raises(type(exc)):
        new.save(run)
    monkeypatch.undo()
    got = which(UEManager.load(run), old, new)
    assert got == ("new" if step in NEW_AFTER else "old")
    # nothing half-written is left beside it, except an .old folder the next save removes
    assert [p for p in _leftovers(tmp_path) if ".tmp-" in p] == []
    new.save(run)
    assert _leftovers(tmp_path) == [] and which(UEManager.load(run), old, new) == "new"


def test_full_disk_inside_the_npz_writer(tmp_path, monkeypatch, old_new):
    old, new = old_new
    run = tmp_path / "run"
    old.save(run)
    real = np.savez

    def savez_then_enospc(file, **arrays):
        real(file, **{k: arrays[k] for k in list(arrays)[:2]})  # a part is written, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez", savez_then_enospc)
    with pytest.raises(OSError, match="No space left"):
        new.save(run)
    monkeypatch.undo()
    assert which(UEManager.load(run), old, new) == "old" and _leftovers(tmp_path) == []


@pytest.mark.parametrize("nth", [1, 2, 3])
def test_full_disk_at_each_fsync(tmp_path, monkeypatch, old_new, nth):
    old, new = old_new
    run = tmp_path / "run"
    old.save(run)
    real, calls = os.fsync, []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == nth:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="No space left"):
        new.save(run)
    monkeypatch.undo()
    assert which(UEManager.load(run), old, new) == "old" and _leftovers(tmp_path) == []


def test_first_save_that_fails_leaves_nothing(tmp_path, monkeypatch, old_new):
    monkeypatch.setattr(persist, "_step", lambda name: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full"))
                        if name == "json-written" else None)
    with pytest.raises(OSError):
        old_new[1].save(tmp_path / "run")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(FileNotFoundError):
        UEManager.load(tmp_path / "run")


def test_mixed_pair_of_two_saves_never_loads(tmp_path, old_new):
    """The reported bug: new arrays beside old metrics loaded silently with the wrong PRR."""
    old, new = old_new
    old.save(tmp_path / "a")
    new.save(tmp_path / "b")
    (tmp_path / "a" / "arrays.npz").write_bytes((tmp_path / "b" / "arrays.npz").read_bytes())
    with pytest.raises(SaveFormatError, match=r"manager.json: field 'npz.(size|sha256)'"):
        UEManager.load(tmp_path / "a")


# ---------------------------------------------------------------- kill -9, in a subprocess
CHILD = textwrap.dedent("""
    import sys, time
    import assay_uncertainty.manager.persist as persist
    from assay_uncertainty.manager import UEManager
    run, step, marker, source = sys.argv[1:5]
    man = UEManager.load(source)

    def pause(name):
        if name == step:
            open(marker, "w").close()
            time.sleep(60)  # killed here

    persist._step = pause
    man.save(run)
""")

LOOP = textwrap.dedent("""
    import sys
    from assay_uncertainty.manager import UEManager
    run, marker = sys.argv[1:3]
    mans = [UEManager.load(p) for p in sys.argv[3:5]]
    open(marker, "w").close()
    i = 0
    while True:
        mans[i % 2].save(run)
        i += 1
""")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    return env


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"the child ended early: {proc.communicate()[1][-2000:]}")
        if time.monotonic() > end:
            proc.kill()
            raise AssertionError("the child never reached the pause point")
        time.sleep(0.02)


@pytest.mark.slow
def test_kill_9_at_each_step_of_a_save(tmp_path, old_new):
    old, new = old_new
    new.save(tmp_path / "source")
    procs = {}
    for step in STEPS:  # one child per step, all at once
        run = tmp_path / step / "run"
        old.save(run)
        marker = tmp_path / step / "reached"
        procs[step] = (run, marker, subprocess.Popen(
            [sys.executable, "-c", CHILD, str(run), step, str(marker), str(tmp_path / "source")], env=_env(),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    try:
        for step, (run, marker, proc) in procs.items():
            _wait_for(marker, proc)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            assert proc.returncode == -signal.SIGKILL
            got = which(UEManager.load(run), old, new)
            assert got == ("new" if step in NEW_AFTER else "old"), step
            # the next save recovers: the loaded state becomes the folder, the leftovers go
            old.save(run)
            assert which(UEManager.load(run), old, new) == "old"
            assert _leftovers(run.parent) == ["reached"], step
    finally:
        for _, _, proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)


@pytest.mark.slow
def test_kill_9_at_random_moments_of_repeated_saves(tmp_path):
    old, new = build(1, n=3000), build(2, n=3000)
    old.save(tmp_path / "old")
    new.save(tmp_path / "new")
    run = tmp_path / "run"
    rng = np.random.default_rng(0)
    seen = set()
    for trial in range(3):
        marker = tmp_path / f"started{trial}"
        proc = subprocess.Popen([sys.executable, "-c", LOOP, str(run), str(marker),
                                 str(tmp_path / "old"), str(tmp_path / "new")], env=_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            _wait_for(marker, proc)
            time.sleep(0.05 + float(rng.random()) * 0.5)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        seen.add(which(UEManager.load(run), old, new))
    assert seen <= {"old", "new"}


# ---------------------------------------------------------------- EvaluationResults
def _results(value):
    g = {"accuracy": value, "score": value, "score_name": "accuracy", "num_of_instances": 1}
    return EvaluationResults([{"prediction": "NaN", "references": ["a"], "score": {"instance": {"accuracy": value},
                                                                                   "global": g}}], g, {"seed": 1})


@pytest.mark.parametrize("fault", ["fsync", "replace", "write", "unserialisable"])
def test_failed_results_write_keeps_the_old_file(tmp_path, monkeypatch, fault):
    path = tmp_path / "res.json"
    _results(0.25).save(path)
    before = path.read_bytes()
    new = _results(0.75)
    if fault == "fsync":
        monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full")))
    elif fault == "replace":
        monkeypatch.setattr(os, "replace", lambda a, b: (_ for _ in ()).throw(OSError(errno.EIO, "I/O error")))
    elif fault == "write":
        import assay.jsonio as jsonio

        monkeypatch.setattr(jsonio, "dumps", lambda data, indent=2: "{" * 100_000 + "".join(
            (_ for _ in ()).throw(OSError(errno.ENOSPC, "full"))))
    else:
        new.global_scores["bad"] = object()
    with pytest.raises((OSError, TypeError)):
        new.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["res.json"]
    assert load_results(path).global_scores["accuracy"] == 0.25


def test_results_kill_9_during_the_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "res.json"
    _results(0.25).save(path)
    marker = tmp_path / "reached"
    code = textwrap.dedent(f"""
        import os, time
        from assay.metrics.results import EvaluationResults
        g = {{"accuracy": 0.75}}
        res = EvaluationResults([{{"prediction": "x", "score": {{"instance": {{"accuracy": 0.75}}, "global": g}}}}],
                                g, {{}})
        real = os.replace
        def slow(a, b):
            open({str(marker)!r}, "w").close()
            time.sleep(60)
        os.replace = slow
        res.save({str(path)!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(marker, proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert load_results(path).global_scores["accuracy"] == 0.25


def test_results_non_finite_scores_are_standard_json_and_round_trip(tmp_path):
    path = tmp_path / "res.json"
    res = _results(math.inf)
    res.global_scores["score_ci_low"] = -math.inf
    res.global_scores["auc"] = math.nan
    res.save(path)

    def refuse(name):
        raise AssertionError(name)

    doc = json.loads(path.read_text(), parse_constant=refuse)
    assert doc["global"]["accuracy"] == "Infinity" and doc["global"]["auc"] == "NaN"
    back = load_results(path)
    assert back.global_scores["accuracy"] == math.inf and back.global_scores["score_ci_low"] == -math.inf
    assert math.isnan(back.global_scores["auc"]) and back[0]["score"]["instance"]["accuracy"] == math.inf
    assert back[0]["prediction"] == "NaN"  # text stays text


RESULT_TAMPERS = [
    (lambda d: [d], "<top level>"),
    (lambda d: {**d, "format": "other"}, "format"),
    (lambda d: {k: v for k, v in d.items() if k != "global"}, "global"),
    (lambda d: {**d, "global": [1]}, "global"),
    (lambda d: {**d, "info": "x"}, "info"),
    (lambda d: {**d, "instances": {}}, "instances"),
    (lambda d: {**d, "instances": [1]}, "instances[0]"),
    (lambda d: {**d, "instances": [{"prediction": "x"}]}, "instances[0].score.instance"),
    (lambda d: {**d, "instances": [{"score": {"instance": 3}}]}, "instances[0].score.instance"),
]


@pytest.mark.parametrize("edit, field", RESULT_TAMPERS)
def test_tampered_results_name_file_and_field(tmp_path, edit, field):
    path = tmp_path / "res.json"
    _results(0.5).save(path)
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    with pytest.raises(SaveFormatError, match=str(path)) as info:
        load_results(path)
    assert repr(field) in str(info.value)


@pytest.mark.parametrize("raw, what", [(b'{"format": ', "line 1, column 12"), (b"\xff\xfe", "not UTF-8"),
                                       (b'{"a": 1,\n "b": }', "line 2, column 7")])
def test_broken_results_file_names_file_line_and_column(tmp_path, raw, what):
    path = tmp_path / "res.json"
    path.write_bytes(raw)
    with pytest.raises(SaveFormatError, match=str(path)) as info:
        load_results(path)
    assert what in str(info.value)


def test_results_written_by_assay_0_1_with_bare_nan_still_load(tmp_path):
    path = tmp_path / "res.json"
    path.write_text('{"format": "assay.evaluation/1", "global": {"auc": NaN}, "info": {}, '
                    '"instances": [{"score": {"instance": {"auc": NaN}}}]}')
    assert math.isnan(load_results(path).global_scores["auc"])
