"""A ``processes`` worker killed while it starts (issue 27, item 16): the run ends in one line naming
the shard, and the worker prints no traceback.

During a run the parent turns SIGTERM into ``Interrupted`` (``terminate_as_interrupt``); a forked
worker used to inherit that handler until its own code undid it, so a SIGTERM in between raised
``Interrupted`` in the worker and multiprocessing printed its traceback on stderr. The script below
makes the start slow (a ``multiprocessing`` after-fork callback that sleeps) so the test can kill
the worker inside that window.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork start method, Linux /proc")

SCRIPT = textwrap.dedent('''
    import os, signal, sys, time
    from multiprocessing import util

    # the dispositions this test relies on, whatever the suite was started under (nohup, a background job)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)

    from assay import load_executor
    from assay.errors import AssayError

    PIDS = sys.argv[1]

    class SlowStart:
        pass

    def slow_start(_obj):  # runs in each worker while multiprocessing bootstraps it, before assay's worker code
        with open(PIDS, "a") as f:
            f.write(f"{os.getpid()}\\n")
        time.sleep(30)

    KEEP = SlowStart()
    util.register_after_fork(KEEP, slow_start)

    def double(task, shared):
        return 2 * task

    if __name__ == "__main__":
        try:
            load_executor("processes", workers=1, start_method="fork").run(double, [0, 1], None)
        except AssayError as exc:
            print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
            sys.exit(2)
''')


def test_a_worker_killed_while_starting_prints_no_traceback_and_the_error_names_the_shard(tmp_path):
    script = tmp_path / "slow_start.py"
    script.write_text(SCRIPT)
    pids = tmp_path / "pids"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen([sys.executable, str(script), str(pids)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30
        while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        worker = int(pids.read_text().split()[0])
        os.kill(worker, signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 2, err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: WorkerDiedError: ")
    assert f"Worker process {worker} killed by signal SIGTERM while running shard 0" in lines[0]
