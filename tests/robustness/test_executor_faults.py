"""Fault injection for the local executors (``threads``, ``processes``): nothing hangs, nothing is left behind.

Each test bounds its own time: hung tasks sleep far longer than the assertion allows, so
a test that passes proves the bound, and a regression fails (by the elapsed-time
assertion or by the subprocess timeout) instead of hanging the suite.

Faults injected: a hung worker (processes, threads), a hung worker that ignores SIGTERM,
a worker forked while a parent thread holds a lock, a parent killed by SIGKILL / SIGTERM /
SIGHUP (fork, spawn, forkserver), SIGTERM to the parent during a run, Ctrl-C with a 20 s
threads task, an unpicklable model / evaluator / sentence evaluator under spawn and
forkserver, an unpicklable result, a script without a main guard (spawn, forkserver),
``sys.exit`` / ``KeyboardInterrupt`` / a custom ``BaseException`` in a sentence evaluator
(processes, threads, spawn), bad ``timeout`` values.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from assay import DataPool, EvaluatorBase, load_executor
from assay.errors import EvaluationError, EvaluationTimeoutError, InvalidParameterError
from assay.executors.base import Interrupted

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fault injection uses Linux /proc")

METHODS = [m for m in ("fork", "spawn", "forkserver") if m in multiprocessing.get_all_start_methods()]


# --------------------------------------------------------------------------- helpers
def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie is dead: it only waits to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X")


def wait_until(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def read_pids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def run_script(path: Path, *args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=timeout,
                          env=env(), cwd=path.parent)


# Module-level task functions (inherited by fork workers; the tests that spawn import a copy from tmp_path).
def record_and_hang(task, shared):
    """Write this worker's PID to ``shared`` (a path); task 1 hangs, the others return."""
    with open(shared, "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")
    if task == 1:
        time.sleep(60)
    return task


def hang_ignoring_sigterm(task, shared):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(shared, "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")
    time.sleep(60)


HELD = threading.Lock()


def take_the_held_lock(task, shared):
    with HELD:  # a fork copies the lock held by a parent thread: it is never released in the child
        return task


def sleep_on(task, shared):
    if task == shared:
        time.sleep(20)
    return task


def return_a_lock(task, shared):
    return threading.Lock() if task == 1 else task


class Tally(EvaluatorBase):
    def sentence_evaluator(self, sent, w_vector):
        return sent, 1


def exit_on_five(sent, w_vector):
    if sent == 5:
        sys.exit(3)
    return 1, 1


def interrupt_on_five(sent, w_vector):
    if sent == 5:
        raise KeyboardInterrupt
    return 1, 1


class Custom(BaseException):
    pass


def custom_on_five(sent, w_vector):
    if sent == 5:
        raise Custom("boom")
    return 1, 1


SPAWN_HELPERS = '''
import sys


def exit_on_five(sent, w_vector):
    if sent == 5:
        sys.exit(3)
    return 1, 1


def one(sent, w_vector):
    return 1, 1


class LockedModel:
    def __init__(self):
        import threading
        self.lock = threading.Lock()


class LockedEvaluator:
    def __init__(self):
        import threading
        self.lock = threading.Lock()

    def sentence_evaluator(self, sent, w_vector):
        return 1, 1
'''


@pytest.fixture
def spawn_helpers(tmp_path, monkeypatch):
    """A module importable by spawned workers (its folder is on sys.path, which they inherit)."""
    (tmp_path / "fault_helpers_mod.py").write_text(SPAWN_HELPERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    sys.modules.pop("fault_helpers_mod", None)
    return importlib.import_module("fault_helpers_mod")


@pytest.fixture(autouse=True)
def no_leftover_children():
    yield
    assert multiprocessing.active_children() == []


# --------------------------------------------------------------------------- timeouts
def test_hung_worker_times_out_within_the_bound_names_the_shard_and_leaves_no_worker(tmp_path):
    pids = tmp_path / "pids"
    t0 = time.monotonic()
    with pytest.raises(EvaluationTimeoutError, match=r"timeout of 1 s per shard.*shard 1 ran longer") as info:
        load_executor("processes[workers=2, timeout=1]").run(record_and_hang, [0, 1, 2], str(pids))
    elapsed = time.monotonic() - t0
    assert elapsed < 1 + 3, elapsed  # the bound, plus the kill grace and some slack for a loaded machine
    assert info.value.shard == 1
    assert isinstance(info.value, TimeoutError) and isinstance(info.value, EvaluationError)
    workers = set(read_pids(pids))
    assert len(workers) == 2
    assert not [p for p in workers if alive(p)]


def test_worker_that_ignores_sigterm_is_killed_after_the_grace(tmp_path):
    pids = tmp_path / "pids"
    t0 = time.monotonic()
    with pytest.raises(EvaluationTimeoutError, match="shard 0"):
        load_executor("processes", workers=1, timeout=0.5).run(hang_ignoring_sigterm, [0], str(pids))
    assert time.monotonic() - t0 < 0.5 + 1 + 2.5  # timeout + kill grace + slack
    assert not [p for p in read_pids(pids) if alive(p)]


def test_fork_while_a_parent_thread_holds_a_lock_ends_in_a_timeout_not_a_hang():
    release = threading.Event()
    holder = threading.Thread(target=lambda: (HELD.acquire(), release.wait(10), HELD.release()))
    holder.start()
    try:
        wait_until(HELD.locked, 2)
        t0 = time.monotonic()
        with pytest.raises(EvaluationTimeoutError, match=r"shards? 0"):
            load_executor("processes", workers=2, timeout=0.5, start_method="fork").run(
                take_the_held_lock, [0, 1], None)
        assert time.monotonic() - t0 < 4
    finally:
        release.set()
        holder.join()


def test_threads_timeout_returns_at_once_and_names_the_shard():
    t0 = time.monotonic()
    with pytest.raises(EvaluationTimeoutError, match=r"shard 2 ran longer") as info:
        load_executor("threads", workers=2, timeout=0.3).run(sleep_on, [0, 1, 2, 3], 2)
    assert time.monotonic() - t0 < 2
    assert info.value.shard == 2


@pytest.mark.parametrize("executor", ["threads[workers=2]", "processes[workers=2]"])
def test_parallel_evaluate_passes_timeout_to_the_executor(executor):
    pool = DataPool(list(range(8)), num_shards=4)
    t0 = time.monotonic()
    with pytest.raises(EvaluationTimeoutError, match="0.4 s per shard"):
        EvaluatorBase().parallelEvaluate(pool, None, _hang_on_item_5, executor=executor, timeout=0.4)
    assert time.monotonic() - t0 < 4
    # ... and a generous timeout changes nothing: 8 items of (1, 1)
    r = EvaluatorBase().parallelEvaluate(pool, None, _one, executor=executor, timeout=30)
    assert (r.correct_num, r.gold_set_size) == (8, 8)


def _hang_on_item_5(sent, w_vector):
    if sent == 5:
        time.sleep(20)
    return 1, 1


def _one(sent, w_vector):
    return 1, 1


@pytest.mark.parametrize("bad", [0, -1, "5", True, float("nan"), float("inf"), [3]])
@pytest.mark.parametrize("name", ["threads", "processes"])
def test_bad_timeout_names_the_parameter(name, bad):
    with pytest.raises(InvalidParameterError, match="'timeout'"):
        load_executor(name, timeout=bad)


@pytest.mark.parametrize("bad", [0, -2.5, "soon"])
def test_bad_timeout_on_parallel_evaluate_names_the_parameter(bad):
    with pytest.raises(InvalidParameterError, match="'timeout'"):
        Tally().parallelEvaluate([1, 0], None, executor="threads", timeout=bad)


def test_timeout_with_a_built_executor_or_serial_is_refused():
    with pytest.raises(InvalidParameterError, match="'timeout' parameter applies only"):
        Tally().parallelEvaluate([1, 0], None, executor=load_executor("threads"), timeout=5)
    with pytest.raises(InvalidParameterError, match="timeout"):
        Tally().parallelEvaluate([1, 0], None, executor="serial", timeout=5)


def test_timeout_through_the_executor_spec():
    assert load_executor("processes[timeout=30]").timeout == 30.0
    assert load_executor("threads[timeout=2.5]").timeout == 2.5


# --------------------------------------------------------------------------- parent death
#: the first lines of every script these tests signal: the dispositions the tests rely on, set in the
#: child, since a child inherits "ignored" from a suite run under nohup (SIGHUP) or as a background
#: job (SIGINT), and Python then never turns Ctrl-C into KeyboardInterrupt
CHILD_SIGNALS = (
    "import signal\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "signal.signal(signal.SIGHUP, signal.SIG_DFL)\n"
    "signal.signal(signal.SIGTERM, signal.SIG_DFL)\n"
)

PARENT_SCRIPT = CHILD_SIGNALS + '''
import os, sys, time
from assay import load_executor

def hang(task, shared):
    with open(shared, "a") as f:
        f.write(f"{{os.getpid()}}\\n")
    time.sleep(30)

if __name__ == "__main__":
    load_executor("processes", workers=2, start_method={method!r}).run(hang, [0, 1], sys.argv[1])
'''


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_killing_the_parent_leaves_no_worker_two_seconds_later(tmp_path, method, sig):
    script = tmp_path / "parent.py"
    script.write_text(PARENT_SCRIPT.format(method=method))
    pids = tmp_path / "pids"
    parent = subprocess.Popen([sys.executable, str(script), str(pids)], env=env(), cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: len(read_pids(pids)) == 2, 15), "the workers did not start"
        workers = read_pids(pids)
        parent.send_signal(sig)
        parent.wait(timeout=5)
        assert wait_until(lambda: not any(alive(p) for p in workers), 2.0), \
            f"workers still alive after {sig.name} to the parent: {[p for p in workers if alive(p)]}"
        if sig != signal.SIGKILL:
            assert f"{sig.name} received" in parent.stderr.read().decode()
    finally:
        parent.kill()
        parent.wait()
        parent.stderr.close()
        for p in read_pids(pids):  # never leave a stray worker on the machine, even on failure
            if alive(p):
                os.kill(p, signal.SIGKILL)


SIGTERM_SCRIPT = CHILD_SIGNALS + '''
import multiprocessing, os, signal, sys, time
from assay import load_executor

def hang(task, shared):
    with open(shared, "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(30)

if __name__ == "__main__":
    try:
        load_executor(sys.argv[2], workers=2).run(hang, [0, 1], sys.argv[1])
    except KeyboardInterrupt as exc:
        print("interrupted:", type(exc).__name__, exc)
        print("children:", multiprocessing.active_children())
        print("handler restored:", signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
'''


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["processes", "threads"])
def test_sigterm_during_a_run_is_an_interruption_after_the_workers_are_stopped(tmp_path, executor):
    script = tmp_path / "term.py"
    script.write_text(SIGTERM_SCRIPT)
    pids = tmp_path / "pids"
    parent = subprocess.Popen([sys.executable, str(script), str(pids), executor], env=env(), cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: len(read_pids(pids)) == 2, 15)
        t0 = time.monotonic()
        parent.send_signal(signal.SIGTERM)
        out, err = parent.communicate(timeout=5)
        assert time.monotonic() - t0 < 3
        if executor == "processes":  # checked before the clean-up below kills any stray
            assert not [p for p in read_pids(pids) if alive(p)]
    finally:
        parent.kill()
        parent.wait()
        for p in read_pids(pids):  # never leave a stray worker on the machine, even on failure
            if executor == "processes" and alive(p):
                os.kill(p, signal.SIGKILL)
    assert "interrupted: Interrupted SIGTERM received" in out, (out, err)
    assert "children: []" in out
    assert "handler restored: True" in out


def test_interrupted_is_a_keyboard_interrupt_naming_the_signal():
    exc = Interrupted(signal.SIGTERM)
    assert isinstance(exc, KeyboardInterrupt) and exc.signum == signal.SIGTERM
    assert "SIGTERM" in str(exc)


# --------------------------------------------------------------------------- Ctrl-C with threads
CTRL_C_SCRIPT = CHILD_SIGNALS + '''
import sys, time
from assay import load_executor

def slow(task, shared):
    print("started", flush=True)
    time.sleep(20)
    return task

if __name__ == "__main__":
    load_executor("threads", workers=1).run(slow, [0], None)
'''


def test_ctrl_c_with_threads_returns_promptly_and_the_process_exits(tmp_path):
    script = tmp_path / "ctrl_c.py"
    script.write_text(CTRL_C_SCRIPT)
    parent = subprocess.Popen([sys.executable, str(script)], env=env(), cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "started"
        t0 = time.monotonic()
        parent.send_signal(signal.SIGINT)
        _, err = parent.communicate(timeout=10)
        assert time.monotonic() - t0 < 2.5, "Ctrl-C waited for the running task"
        assert "KeyboardInterrupt" in err
    finally:
        parent.kill()
        parent.wait()


# --------------------------------------------------------------------------- pickling (spawn / forkserver)
NON_FORK = [m for m in ("spawn", "forkserver") if m in METHODS]


@pytest.mark.parametrize("method", NON_FORK)
def test_unpicklable_model_is_named_with_the_start_method(spawn_helpers, method):
    pool = DataPool(list(range(4)), num_shards=2)
    with pytest.raises(InvalidParameterError, match=rf"start method '{method}'.*the model \(w_vector\)") as info:
        EvaluatorBase().parallelEvaluate(pool, spawn_helpers.LockedModel(), spawn_helpers.one,
                                         executor=f"processes[workers=2, start_method={method}]")
    assert "LockedModel" in str(info.value) and "lock" in str(info.value)


def test_unpicklable_evaluator_is_named(spawn_helpers):
    ev = spawn_helpers.LockedEvaluator()
    with pytest.raises(InvalidParameterError, match=r"the sentence evaluator .*the evaluator \(a fault_helpers_mod"
                                                    r"\.LockedEvaluator object\)"):
        EvaluatorBase().parallelEvaluate([1, 2], None, ev.sentence_evaluator,
                                         executor="processes[workers=2, start_method=spawn]")


def test_unpicklable_sentence_evaluator_is_named(spawn_helpers):
    with pytest.raises(InvalidParameterError, match=r"the sentence evaluator \(a builtins.function object\)"):
        EvaluatorBase().parallelEvaluate([1, 2], None, lambda s, w: (1, 1),
                                         executor="processes[workers=2, start_method=spawn]")


def test_unpicklable_result_names_the_shard():
    with pytest.raises(EvaluationError, match=r"result of shard 1 \(lock\) could not be pickled") as info:
        load_executor("processes", workers=1, start_method="fork").run(return_a_lock, [0, 1], None)
    assert info.value.shard == 1


NO_GUARD_SCRIPT = '''
from assay import EvaluatorBase

def one(sent, w_vector):
    return 1, 1

r = EvaluatorBase().parallelEvaluate(list(range(4)), None, one, executor="processes[workers=2, start_method={method}]")
print("accuracy", r.accuracy)
'''


@pytest.mark.slow
@pytest.mark.parametrize("method", NON_FORK)
def test_missing_main_guard_is_refused_with_the_advice(tmp_path, method):
    script = tmp_path / "no_guard.py"
    script.write_text(NO_GUARD_SCRIPT.format(method=method))
    done = run_script(script)
    assert done.returncode != 0
    assert "if __name__ == '__main__':" in done.stderr
    assert "line 7" in done.stderr and "no_guard.py" in done.stderr
    assert "BrokenPipeError" not in done.stderr and "out-of-memory" not in done.stderr
    guarded = tmp_path / "guarded.py"
    body = NO_GUARD_SCRIPT.format(method=method).split("\n")
    guarded.write_text("\n".join(body[:6] + ["if __name__ == '__main__':"] + ["    " + b for b in body[6:]]))
    ok = run_script(guarded)
    assert ok.returncode == 0, ok.stderr
    assert "accuracy 1.0" in ok.stdout


# --------------------------------------------------------------------------- BaseException in a worker
@pytest.mark.parametrize("evaluator", [exit_on_five, interrupt_on_five, custom_on_five],
                         ids=["sys.exit", "KeyboardInterrupt", "BaseException"])
@pytest.mark.parametrize("executor", ["processes[workers=2]", "threads[workers=2]"])
def test_base_exception_in_a_worker_is_an_evaluation_error_naming_shard_and_item(evaluator, executor):
    pool = DataPool(list(range(8)), num_shards=4)  # item 5 is in shard 2 (items 4, 5)
    with pytest.raises(EvaluationError) as info:
        EvaluatorBase().parallelEvaluate(pool, None, evaluator, executor=executor)
    assert (info.value.shard, info.value.item) == (2, 5)
    assert "shard 2" in str(info.value)
    # the caller survived and can run again
    r = EvaluatorBase().parallelEvaluate(pool, None, _one, executor=executor)
    assert r.gold_set_size == 8


def test_sys_exit_in_a_spawned_worker_is_an_evaluation_error(spawn_helpers):
    pool = DataPool(list(range(8)), num_shards=4)
    with pytest.raises(EvaluationError) as info:
        EvaluatorBase().parallelEvaluate(pool, None, spawn_helpers.exit_on_five,
                                         executor="processes[workers=2, start_method=spawn]")
    assert (info.value.shard, info.value.item) == (2, 5)


GUARD_VARIANT_SCRIPT = '''
import sys
from assay import EvaluatorBase

def one(sent, w_vector):
    return 1, 1

try:
    if __name__ == "__main__" and len(sys.argv) > 0:
        r = EvaluatorBase().parallelEvaluate([1, 2], None, one, executor="processes[workers=2, start_method=spawn]")
        print("accuracy", r.accuracy)
except OSError:
    raise
'''


@pytest.mark.slow
def test_a_guard_inside_try_with_a_condition_is_recognised(tmp_path):
    script = tmp_path / "variant.py"
    script.write_text(GUARD_VARIANT_SCRIPT)
    done = run_script(script)
    assert done.returncode == 0, done.stderr
    assert "accuracy 1.0" in done.stdout


def fail_fast_or_sleep(task, shared):
    if task == 0:
        time.sleep(0.1)
        raise ValueError("task 0 failed")
    time.sleep(20)
    return task


def test_threads_failure_returns_without_waiting_for_a_running_task():
    t0 = time.monotonic()
    with pytest.raises(ValueError, match="task 0 failed"):
        load_executor("threads", workers=2).run(fail_fast_or_sleep, [0, 1], None)
    assert time.monotonic() - t0 < 2


def test_an_application_signal_handler_stays_in_charge():
    from assay.executors.base import terminate_as_interrupt

    def mine(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        with terminate_as_interrupt():
            assert signal.getsignal(signal.SIGTERM) is mine
        with terminate_as_interrupt():
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with terminate_as_interrupt():
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_no_handler_is_installed_from_another_thread():
    from assay.executors.base import terminate_as_interrupt

    seen = []

    def body():
        with terminate_as_interrupt():
            seen.append(signal.getsignal(signal.SIGTERM))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [signal.getsignal(signal.SIGTERM)]


# --------------------------------------------------------------------------- a fork worker stuck before it starts
# (issue 27, item 14): no timeout= given, yet the run ends, naming the shard
STARTUP_LOCK = threading.Lock()


class _TakesTheStartupLock:
    pass


_STARTUP_HOOK = _TakesTheStartupLock()


def _take_startup_lock(_obj):  # runs in each worker while multiprocessing bootstraps it (before assay's worker code)
    if os.environ.get("ASSAY_TEST_STARTUP_LOCK") == str(os.getppid()):
        with STARTUP_LOCK:
            pass


multiprocessing.util.register_after_fork(_STARTUP_HOOK, _take_startup_lock)


def test_a_fork_worker_stuck_on_a_lock_before_it_starts_ends_in_an_error_naming_the_shard(monkeypatch):
    """A parent thread holds a lock that the worker needs while it starts: without timeout= the run used to hang."""
    monkeypatch.setenv("ASSAY_TEST_STARTUP_LOCK", str(os.getpid()))
    release = threading.Event()
    holder = threading.Thread(target=lambda: (STARTUP_LOCK.acquire(), release.wait(20), STARTUP_LOCK.release()))
    holder.start()
    result: dict = {}

    def run():
        ex = load_executor("processes", workers=1, start_method="fork")
        ex.start_timeout = 1.0
        try:
            result["value"] = ex.run(divmod, [7, 9], 4)
        except Exception as exc:  # noqa: BLE001 - the test reads it
            result["error"] = exc

    try:
        wait_until(STARTUP_LOCK.locked, 2)
        t0 = time.monotonic()
        runner = threading.Thread(target=run, daemon=True)
        runner.start()
        runner.join(10)
        elapsed = time.monotonic() - t0
        assert not runner.is_alive(), "the run hung on the worker that never started"
    finally:
        release.set()
        holder.join()
    error = result.get("error")
    assert isinstance(error, EvaluationTimeoutError), result
    assert error.shard == 0 and elapsed < 1 + 1 + 3  # start bound + kill grace + slack
    assert "did not start within 1 s and never ran shard 0" in str(error)
    assert "start_method='forkserver'" in str(error)


def test_the_start_bound_applies_to_fork_only_and_a_fast_start_passes():
    ex = load_executor("processes", workers=2, start_method="fork")
    assert ex.start_timeout == 60.0
    ex.start_timeout = 0.5
    assert ex.run(divmod, [7, 9, 11], 4) == [(1, 3), (2, 1), (2, 3)]  # workers up in milliseconds
