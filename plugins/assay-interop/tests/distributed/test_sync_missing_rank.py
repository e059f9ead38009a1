"""A rank that dies or never calls ``sync`` (issue 27, item 16): the rank left waiting gets one
clear error naming the missing rank, not torch's raw gloo ``RuntimeError``.

Two real processes (gloo over loopback) per case; the group's timeout is 5 s.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # two processes importing torch per case

HERE = Path(__file__).parent


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_pair(absent: int) -> dict:
    """The waiting rank's JSON line (the other rank exits right after the group is up)."""
    for _attempt in range(3):  # the free port may be taken between choosing and binding it
        env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()),
               "PYTHONPATH": os.pathsep.join([*sys.path, os.environ.get("PYTHONPATH", "")])}
        procs = [subprocess.Popen([sys.executable, str(HERE / "gloo_missing_rank.py"), str(rank), str(absent)],
                                  env=env, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for rank in (0, 1)]
        outs = []
        try:
            for p in procs:
                outs.append(p.communicate(timeout=120))
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
        if "address already in use" not in "".join(err for _, err in outs).lower():
            break
    waiting = 1 - absent
    assert procs[absent].returncode == 3, outs[absent][1]
    assert procs[waiting].returncode == 0, outs[waiting][1]
    return json.loads(outs[waiting][0].strip().splitlines()[-1])


def test_rank_1_never_calls_sync_rank_0_gets_an_error_naming_it():
    got = run_pair(absent=1)
    assert got["error"] == "EvaluationTimeoutError", got
    assert "TimeoutError" in got["mro"]
    assert got["message"].startswith("assay.distributed.sync: rank 1 of the group did not call sync within 5 s")
    assert "\n" not in got["message"]


def test_rank_0_dies_rank_1_gets_an_error_naming_it():
    got = run_pair(absent=0)
    assert got["error"] in ("WorkerDiedError", "EvaluationTimeoutError"), got
    assert "rank 0" in got["message"] and "RuntimeError" not in got["message"]
    assert "\n" not in got["message"]
