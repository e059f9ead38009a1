"""``assay_interop.distributed.sync`` (``assay.distributed.sync``) across two real processes (``gloo`` over loopback).

One module-scoped run of ``gloo_worker.py`` on two ranks does every distributed check and
prints JSON; the tests compare it, bit for bit (``float.hex``), with one process (this
one, which never imports torch) over all the data, in rank order.
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
from scipy.stats import spearmanr
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

import assay_interop.distributed as distributed
from assay.errors import InvalidParameterError, MissingDependencyError
from assay.plugins import load_metric

# two real processes (torch.distributed, gloo) run every check of this module
pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("distsync_cases", HERE / "distsync_cases.py")
cases_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases_mod)
CASES = cases_mod.cases()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch() -> tuple[list[int], list[str], list[str]]:
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()), "WORLD_SIZE": "2",
           "PYTHONPATH": os.pathsep.join([*sys.path, os.environ.get("PYTHONPATH", "")])}
    procs = [subprocess.Popen([sys.executable, str(HERE / "gloo_worker.py"), str(rank)], env=env, cwd=HERE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for rank in (0, 1)]
    outs, errs = [], []
    try:
        for p in procs:
            out, err = p.communicate(timeout=180)
            outs.append(out)
            errs.append(err)
    finally:
        for p in procs:  # a rank left waiting for the other: end it
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


def one_process(name: str, *parts: tuple[list, list]) -> dict:
    """Scores of one metric updated with ``parts`` in order, as ``float.hex`` strings."""
    m = load_metric(name)
    for predictions, references in parts:
        m.update(predictions, references)
    return cases_mod.encode(m.compute_scores())


def value(encoded: dict, key: str) -> float:
    return float.fromhex(encoded[key])


def everything(case: dict) -> tuple[list, list]:
    return case["predictions"], case["references"]


@pytest.mark.parametrize("key", ["accuracy", "f1_macro", "roc_auc", "spearman", "ece_dyadic", "roc_auc_rank1_empty"])
def test_two_processes_equal_one_process_over_all_data(ranks, key):
    """Counts, gathered intermediates and exact float sums: one update over everything, bit for bit."""
    case = CASES[key]
    expected = one_process(case["metric"], everything(case))
    for r in ranks:
        assert r[key]["scores"] == expected
        assert r[key]["n"] == len(case["predictions"])
        assert r[key]["is_same"]  # in place: the metric given is returned, holding the merged state


@pytest.mark.parametrize("key", ["roc_auc", "spearman", "f1_macro"])
def test_states_merge_in_rank_order(ranks, key):
    """The merged intermediates are rank 0's, then rank 1's: those of one process over the data in order."""
    case = CASES[key]
    m = load_metric(case["metric"]).update(*everything(case))
    expected = [[float(v).hex() for v in row] for row in m.state.intermediates().tolist()]
    assert ranks[0][key]["intermediates"] == ranks[1][key]["intermediates"] == expected
    reversed_order = load_metric(case["metric"]).update(*cases_mod.part(case, 1)).update(*cases_mod.part(case, 0))
    assert [[float(v).hex() for v in row] for row in reversed_order.state.intermediates().tolist()] != expected


def test_ece_float_sums_equal_one_process_in_rank_order(ranks):
    """Float tallies: the same as one process that updated with rank 0's data, then rank 1's."""
    case = CASES["ece"]
    expected = one_process(case["metric"], cases_mod.part(case, 0), cases_mod.part(case, 1))
    assert ranks[0]["ece"]["scores"] == expected
    assert ranks[1]["ece"]["scores"] == expected
    assert ranks[0]["ece"]["scores"] != one_process(case["metric"], cases_mod.part(case, 0))  # it did merge


def test_ece_against_a_hand_computation(ranks):
    case = CASES["ece"]
    p = np.asarray(case["predictions"])
    y = np.asarray(case["references"])
    conf, acc = p.max(axis=1), (p.argmax(axis=1) == y).astype(float)
    b = np.minimum((conf * 10).astype(int), 9)
    expected = sum(abs(acc[b == k].sum() - conf[b == k].sum()) for k in range(10)) / len(y)
    assert value(ranks[0]["ece"]["scores"], "ece") == pytest.approx(expected, rel=1e-12)


def test_merged_values_match_the_libraries(ranks):
    """A second implementation of each value (scikit-learn, scipy), to the last few bits."""
    acc, f1, auc, rho = CASES["accuracy"], CASES["f1_macro"], CASES["roc_auc"], CASES["spearman"]
    flat = lambda refs: [r[0] for r in refs]  # noqa: E731
    got = ranks[1]
    assert value(got["accuracy"]["scores"], "accuracy") == pytest.approx(
        accuracy_score(flat(acc["references"]), acc["predictions"]), rel=1e-15)
    assert value(got["f1_macro"]["scores"], "f1") == pytest.approx(
        f1_score(flat(f1["references"]), f1["predictions"], average="macro"), rel=1e-12)
    assert value(got["roc_auc"]["scores"], "roc_auc") == pytest.approx(
        roc_auc_score(flat(auc["references"]), auc["predictions"]), rel=1e-12)
    assert value(got["spearman"]["scores"], "spearman") == pytest.approx(
        spearmanr(rho["predictions"], flat(rho["references"]))[0], rel=1e-12)


def test_every_rank_ends_with_the_same_state(ranks):
    a, b = ranks
    for key in CASES:
        assert a[key] == b[key]


def test_not_inplace_returns_a_merged_copy_and_keeps_the_local_state(ranks):
    case = CASES["roc_auc"]
    merged = one_process("roc_auc", everything(case))
    for rank, r in enumerate(ranks):
        own = cases_mod.part(case, rank)
        assert r["not_inplace"]["merged"] == merged
        assert r["not_inplace"]["local"] == one_process("roc_auc", own)
        assert (r["not_inplace"]["local_n"], r["not_inplace"]["merged_n"]) == (len(own[0]), len(case["predictions"]))


def test_several_metrics_in_one_call(ranks):
    acc, ece = CASES["accuracy"], CASES["ece"]
    expected = [one_process(acc["metric"], everything(acc)),
                one_process(ece["metric"], cases_mod.part(ece, 0), cases_mod.part(ece, 1))]
    assert ranks[0]["several"] == ranks[1]["several"] == expected


def test_different_metrics_on_two_ranks_fail_on_both_without_hanging(ranks):
    for r in ranks:
        assert r["mismatch"]["error"] == "InvalidParameterError"
        assert "n_bins=15 on rank 1 and n_bins=10 on rank 0" in r["mismatch"]["message"]
        assert r["count_mismatch"]["error"] == "InvalidParameterError"
        assert "rank 1 synced 2 metric(s) and rank 0 synced 1" in r["count_mismatch"]["message"]
        assert r["class_mismatch"]["error"] == "InvalidParameterError"
        assert ("rank 1 synced a metric of class assay_uncertainty.calibration.ECE and rank 0 one of class "
                "assay_classic.classification.Accuracy") in r["class_mismatch"]["message"]
        # the group is still usable after the errors
        assert r["after_mismatch"] == one_process("accuracy", everything(CASES["accuracy"]))


def test_an_option_mismatch_names_the_option_the_user_set(ranks):
    """f1 macro on rank 0, micro on rank 1: the message names 'average' and both values, not 'additive'
    (which differs only because 'average' does)."""
    for r in ranks:
        assert r["average_mismatch"]["error"] == "InvalidParameterError"
        message = r["average_mismatch"]["message"]
        assert "average='micro' on rank 1 and average='macro' on rank 0" in message
        assert "additive" not in message


def test_world_size_1_is_a_no_op(ranks):
    w1 = ranks[0]["world_1"]
    alone = one_process("roc_auc", cases_mod.part(CASES["roc_auc"], 0))
    assert w1["alone"] == w1["synced"] == w1["copy"] == alone
    assert w1["is_same"] and w1["copy_is_new"] and w1["state_unchanged"]
    assert w1["n"] == CASES["roc_auc"]["split"]


def test_a_group_of_one_is_a_no_op_and_non_members_get_an_error(ranks):
    acc = CASES["accuracy"]
    r0, r1 = ranks[0]["subgroup"], ranks[1]["subgroup"]
    assert r0["error"] is None
    assert r0["scores"] == one_process("accuracy", cases_mod.part(acc, 0))  # its own data only
    assert r1["error"] == "InvalidParameterError"
    assert "'group' parameter of assay.distributed.sync" in r1["message"] and "global rank 1" in r1["message"]
    assert r1["scores"] == one_process("accuracy", cases_mod.part(acc, 1))


def test_no_process_group_is_a_clear_error(ranks):
    err = ranks[0]["no_group"]
    assert err["error"] == "InvalidParameterError" and err["invalid"]
    assert "no torch.distributed process group is initialised" in err["message"]
    assert "torch.distributed.init_process_group(" in err["message"]


def test_without_torch_the_error_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "torch.distributed", None)
    with pytest.raises(MissingDependencyError, match="pip install torch"):
        distributed.sync(load_metric("accuracy").update([1], [[1]]))


@pytest.mark.parametrize("bad", ["accuracy", 3, [load_metric("accuracy"), "f1"]])
def test_not_a_metric_is_an_error_naming_the_parameter(bad):
    with pytest.raises(InvalidParameterError, match="'metric' parameter of assay.distributed.sync"):
        distributed.sync(bad)


def test_inplace_must_be_a_bool():
    with pytest.raises(InvalidParameterError, match="'inplace' parameter"):
        distributed.sync(load_metric("accuracy"), inplace="no")


def test_importing_assay_does_not_import_torch():
    code = "import sys, assay, assay.distributed, assay_interop.distributed; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "False"

