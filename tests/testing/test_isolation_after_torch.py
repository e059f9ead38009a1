"""check-plugin's forked child after the parent has used torch: it must not hang on torch's thread pool."""

from __future__ import annotations

import os
import time

import torch

from assay.testing import isolation


def test_a_forked_check_runs_torch_after_the_parent_used_its_thread_pool():
    torch.set_num_threads(max(2, torch.get_num_threads()))
    x = torch.randn(1500, 1500)
    assert float((x @ x).abs().sum()) > 0  # the parent's OpenMP pool is up
    pid = os.fork()
    if pid == 0:  # the child, as isolation._child starts it
        try:
            isolation._single_threaded_torch()
            y = torch.randn(1500, 1500)
            os._exit(0 if float((y @ y).abs().sum()) > 0 else 1)
        finally:
            os._exit(2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    raise AssertionError("the forked child hung on torch's thread pool")
