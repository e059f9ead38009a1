"""Two `assay run`s into one output folder: the second is an error naming the folder and the first's pid
(issue 27, item 15); a lock left by a killed run is taken over with a note. Real processes throughout.

Process A holds the folder's lock with :func:`output_lock`, the function ``assay run`` takes
it with, and waits; process B is a real ``assay run`` into the same folder.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from assay_segmentation.downstream import run_experiments
from assay_segmentation.downstream.lock import LOCK_NAME, FolderInUseError, StaleLockWarning, output_lock
from assay_segmentation.downstream.results import MANIFEST

pytestmark = pytest.mark.slow

CONFIG = """
base_path: data
output_path: out
experiments:
  - iter_params: {pred_model: [M], seed: [1]}
    naming_scheme_version: "seed{seed}"
    prediction_models:
      M: {unc_types: [u], aggregations: {mean: image_mean}}
tasks: [segmentation_performance]
task_params:
  segmentation_performance: {datasets: [id]}
"""

HOLD = textwrap.dedent("""
    import sys, time
    from assay_segmentation.downstream.lock import output_lock
    with output_lock(sys.argv[1]):
        print("locked", flush=True)
        time.sleep(120)
""")


def _config(tmp_path: Path) -> Path:
    folder = tmp_path / "data" / "M" / "seed1" / "id"
    arrays = {"pred_seg": [[1, 0], [0, 0]], "u": [[0.1, 0.2], [0.3, 0.4]], "ref_segs": [[[1, 1], [0, 0]]]}
    for kind, array in arrays.items():
        (folder / kind).mkdir(parents=True, exist_ok=True)
        np.save(folder / kind / "a.npy", np.asarray(array))
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    return path


def _hold(folder: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def _assay_run(config: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "assay", "run", str(config), "-q"], capture_output=True, text=True,
                          timeout=120)


def test_a_second_run_into_a_folder_in_use_is_an_error_naming_folder_and_pid(tmp_path):
    config = _config(tmp_path)
    out = tmp_path / "out"
    holder = _hold(out)
    try:
        second = _assay_run(config)
    finally:
        holder.kill()
        holder.wait()
    assert second.returncode == 2, second.stderr
    assert f"{out}: the output folder is in use by another assay run (pid {holder.pid}" in second.stderr
    assert "Traceback" not in second.stderr
    assert not list(out.rglob("*.json"))  # B wrote nothing: no result file, no manifest


def test_a_lock_left_by_a_killed_run_is_taken_over_with_a_note(tmp_path):
    config = _config(tmp_path)
    out = tmp_path / "out"
    holder = _hold(out)
    os.kill(holder.pid, signal.SIGKILL)  # SIGKILL: no handler can run, the lock file stays behind
    holder.wait()
    assert (out / LOCK_NAME).is_file()
    run = _assay_run(config)
    assert run.returncode == 0, run.stderr
    assert f"took over the lock left by pid {holder.pid}" in run.stderr and "is no longer running" in run.stderr
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["files"] == ["M/seed1/id/segmentation_performance.json"]
    assert not (out / LOCK_NAME).exists()  # released at the end of the run


def test_runs_one_after_the_other_need_no_takeover(tmp_path, recwarn):
    config = _config(tmp_path)
    for _ in range(2):
        run_experiments(config)
    assert not [w for w in recwarn if issubclass(w.category, StaleLockWarning)]
    assert not (tmp_path / "out" / LOCK_NAME).exists()


def test_python_api_raises_while_another_process_holds_the_folder(tmp_path):
    config = _config(tmp_path)
    holder = _hold(tmp_path / "out")
    try:
        with pytest.raises(FolderInUseError, match=rf"pid {holder.pid}"):
            run_experiments(config)
        with pytest.raises(FolderInUseError), output_lock(tmp_path / "out"):
            pass
    finally:
        holder.kill()
        holder.wait()
    with pytest.warns(StaleLockWarning, match=rf"pid {holder.pid}"), output_lock(tmp_path / "out"):
        pass  # the holder was killed: its lock file is stale and taken over
