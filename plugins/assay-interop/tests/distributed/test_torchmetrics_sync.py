"""``AssayTorchMetric`` across two real processes (``gloo``), synced by torchmetrics' own machinery.

One module-scoped run of ``torchmetrics_worker.py`` on two ranks; the tests compare what each
rank computed with (1) one process over all the data, with the libraries the metrics follow
(scikit-learn, torchmetrics, torch-uncertainty 0.13.0), and (2) bit for bit, one assay metric
that made the same updates rank after rank (rank 0's first, as torchmetrics gathers them).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score
from torchmetrics.classification import MulticlassCalibrationError

from assay.plugins import load_metric, load_ue_metric

pytestmark = pytest.mark.slow  # two real processes

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("torchsync_cases", HERE / "torchsync_cases.py")
cases_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases_mod)
CASES = cases_mod.cases()


def _tu(relative: str):
    spec = importlib.util.find_spec("torch_uncertainty")
    if spec is None or not spec.submodule_search_locations:
        raise AssertionError("torch-uncertainty==0.13.0 is not installed: run `make setup` (step 7)")
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    mod_spec = importlib.util.spec_from_file_location("_peer_tu_sync_" + path.stem, path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch() -> tuple[list[int], list[str], list[str]]:
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()), "WORLD_SIZE": "2",
           "PYTHONPATH": os.pathsep.join([*sys.path, os.environ.get("PYTHONPATH", "")])}
    procs = [subprocess.Popen([sys.executable, str(HERE / "torchmetrics_worker.py"), str(rank)], env=env, cwd=HERE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for rank in (0, 1)]
    outs, errs = [], []
    try:
        for p in procs:
            out, err = p.communicate(timeout=300)
            outs.append(out)
            errs.append(err)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    return [p.returncode for p in procs], outs, errs


@pytest.fixture(scope="module")
def ranks() -> list[dict]:
    for _attempt in range(3):  # the free port may be taken between choosing and binding it
        codes, outs, errs = _launch()
        if codes == [0, 0] or "address already in use" not in "".join(errs).lower():
            break
    assert codes == [0, 0], f"worker exit codes {codes}\n--- rank 0\n{errs[0]}\n--- rank 1\n{errs[1]}"
    results = [json.loads(out.strip().splitlines()[-1]) for out in outs]
    for r in results:
        assert "crash" not in r, r["crash"]
    return results


def _all(case: dict, key: str) -> np.ndarray:
    """The case's column over all data in rank order (rank 0's rows, then rank 1's)."""
    return np.concatenate([cases_mod.part(case[key], r) for r in (0, 1)])


def independent(key: str) -> float:
    case = CASES[key]
    if key == "accuracy":
        return accuracy_score(case["target"], case["preds"])
    if key == "f1_macro":
        return f1_score(case["target"], case["preds"], average="macro")
    if key == "roc_auc":
        return roc_auc_score(case["target"], case["preds"])
    if key == "ece":
        m = MulticlassCalibrationError(num_classes=3, n_bins=15, norm="l1")
        m.update(torch.from_numpy(case["preds"]), torch.from_numpy(case["target"]))
        return float(m.compute())
    if key == "aurc":
        m = _tu("metrics/classification/risk_coverage.py").AURC()
        m.update(torch.from_numpy(case["probs"]), torch.from_numpy(case["labels"]))
        return float(m.compute())
    if key == "disagreement":
        m = _tu("metrics/classification/disagreement.py").Disagreement()
        m.update(torch.from_numpy(case["preds"]))
        return float(m.compute())
    raise KeyError(key)


def one_process_in_rank_order(key: str) -> float:
    """One assay metric making the ranks' updates (batches of 40) rank after rank."""
    case = CASES[key]
    m = load_ue_metric(case["ue_metric"]) if "ue_metric" in case else load_metric(case["metric"])
    for r in (0, 1):
        preds, target = cases_mod.part(case["preds"], r), cases_mod.part(case["target"], r)
        for i in range(0, len(preds), 40):
            m.update(preds[i:i + 40], None if target is None else target[i:i + 40])
    return float(m.compute())


KEYS = ["accuracy", "f1_macro", "roc_auc", "ece", "aurc", "disagreement"]


@pytest.mark.parametrize("key", KEYS)
def test_two_processes_give_the_value_of_one_process_over_all_data(ranks, key):
    expected = independent(key)
    tol = 1e-12 if key in ("accuracy", "f1_macro", "roc_auc") else 1e-6  # the torch peers compute in float32
    for r in ranks:
        assert float.fromhex(r[key]["synced"]) == pytest.approx(expected, abs=tol)
        assert r[key]["synced"] == float(one_process_in_rank_order(key)).hex()  # bit for bit


@pytest.mark.parametrize("key", KEYS)
def test_each_rank_keeps_its_own_state_after_the_synced_compute(ranks, key):
    case = CASES[key]
    n = len(case["preds"])
    assert [r[key]["n_local"] for r in ranks] == [len(range(0, n, 2)), len(range(1, n, 2))]
    assert ranks[0][key]["local"] != ranks[0][key]["synced"] or ranks[1][key]["local"] != ranks[1][key]["synced"]


def test_forward_with_dist_sync_on_step_gives_the_batch_value_over_both_ranks(ranks):
    case = CASES["accuracy"]
    preds = np.concatenate([cases_mod.part(case["preds"], r)[:50] for r in (0, 1)])
    target = np.concatenate([cases_mod.part(case["target"], r)[:50] for r in (0, 1)])
    expected = accuracy_score(target, preds)
    for r in ranks:
        assert float.fromhex(r["step"]["value"]) == pytest.approx(expected, abs=1e-12)


def test_a_rank_without_data(ranks):
    """Additive: the value of rank 0's data on both ranks. Gathered: rank 0 has it, rank 1 an error naming why."""
    acc, auc = CASES["accuracy"], CASES["roc_auc"]
    expected = accuracy_score(cases_mod.part(acc["target"], 0), cases_mod.part(acc["preds"], 0))
    for r in ranks:
        assert float.fromhex(r["accuracy_rank1_empty"]["synced"]) == pytest.approx(expected, abs=1e-12)
    expected = roc_auc_score(cases_mod.part(auc["target"], 0), cases_mod.part(auc["preds"], 0))
    assert float.fromhex(ranks[0]["roc_auc_rank1_empty"]["synced"]) == pytest.approx(expected, abs=1e-12)
    assert ranks[1]["roc_auc_rank1_empty"]["error"] == "InvalidParameterError"
    assert "at least one instance" in ranks[1]["roc_auc_rank1_empty"]["message"]


@pytest.mark.parametrize("key", ["accuracy", "roc_auc"])
def test_an_epoch_of_forward_with_dist_sync_on_step(ranks, key):
    """Each step's value is the batch over both ranks; compute at the end the value over both ranks' data
    (and, for accuracy, torchmetrics' own MulticlassAccuracy run the same way)."""
    case = CASES[key]
    score = accuracy_score if key == "accuracy" else (lambda t, p: roc_auc_score(t, p))

    def both(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        p = np.concatenate([cases_mod.part(case["preds"], r)[lo:hi] for r in (0, 1)])
        t = np.concatenate([cases_mod.part(case["target"], r)[lo:hi] for r in (0, 1)])
        return t, p

    for r in ranks:
        epoch = r[key + "_epoch"]
        for step, lo in zip(epoch["steps"], range(0, 120, 40)):
            assert float.fromhex(step) == pytest.approx(score(*both(lo, lo + 40)), abs=1e-12)
        assert float.fromhex(epoch["compute"]) == pytest.approx(score(*both(0, 120)), abs=1e-12)
        assert epoch["n"] == 120  # this rank's own instances (torchmetrics restores them after the sync)
        if key == "accuracy":
            assert float.fromhex(epoch["compute"]) == pytest.approx(epoch["peer"], abs=1e-6)
