"""The tests that send SIGHUP or Ctrl-C pass when the suite runs with those signals ignored (issue 27, item 20).

A suite started under ``nohup`` inherits SIGHUP ignored, one started as a background job of a
non-interactive shell SIGINT ignored; every child the tests start inherits that, and Python
never turns a SIGINT into ``KeyboardInterrupt`` when it starts with SIGINT ignored. Each test
that signals a child now sets, in the child, the disposition it relies on. This runs those
tests in a pytest whose SIGINT and SIGHUP are ignored, as such a suite would be.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIGNALLING = [
    "tests/robustness/test_executor_faults.py::test_ctrl_c_with_threads_returns_promptly_and_the_process_exits",
    "tests/robustness/test_plugins_robustness.py::test_a_real_ctrl_c_while_loading_still_interrupts",
    "tests/robustness/test_executor_faults.py::test_killing_the_parent_leaves_no_worker_two_seconds_later",
    "tests/robustness/test_executor_faults.py::test_sigterm_during_a_run_is_an_interruption_after_the_workers_are_stopped",
]
IGNORING = (
    "import signal, sys, pytest\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
    "sys.exit(pytest.main(sys.argv[1:]))\n"
)


@pytest.mark.slow
def test_the_signalling_tests_pass_with_sigint_and_sighup_ignored():
    run = subprocess.run([sys.executable, "-c", IGNORING, "-q", "-p", "no:cacheprovider", "-k", "not SIGKILL",
                          *SIGNALLING], cwd=ROOT, capture_output=True, text=True, timeout=540)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout
