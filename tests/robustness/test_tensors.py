"""Metrics take torch tensors, ``__array__`` objects and DLPack objects, converted once in assay.validation.

Expected values are hand derivations (or scikit-learn), never assay run on numpy input.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

import assay
from assay.errors import InvalidParameterError
from assay.validation import as_array, check_array, check_labels, check_probabilities, check_same_length


class DLPackOnly:
    """An array that speaks only DLPack (no ``__array__``, no ``__len__``)."""

    def __init__(self, values):
        self._a = np.asarray(values)

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class OldDLPack(DLPackOnly):
    """A producer of the first DLPack protocol: ``__dlpack__(stream=None)`` only."""

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__(stream=stream)


class ArrayLike:
    def __init__(self, values):
        self._a = np.asarray(values)

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)


class RefusesConversion:
    def __array__(self, dtype=None, copy=None):
        raise TypeError("implicit conversion to a host array is not allowed")


# ------------------------------------------------------------------ the conversion itself
def test_as_array_converts_foreign_arrays_and_leaves_the_rest():
    t = torch.tensor([[1.0, 2.0]], requires_grad=True)
    assert isinstance(as_array(t), np.ndarray) and as_array(t).tolist() == [[1.0, 2.0]]
    assert as_array(DLPackOnly([3, 4])).tolist() == [3, 4]
    assert as_array(OldDLPack([5.0])).tolist() == [5.0]
    assert as_array(ArrayLike([6])).tolist() == [6]
    bf = as_array(torch.tensor([0.5, 0.25], dtype=torch.bfloat16))  # numpy has no bfloat16
    assert bf.dtype == np.float32 and bf.tolist() == [0.5, 0.25]
    half = as_array(torch.tensor([0.5], dtype=torch.float16))
    assert half.dtype == np.float16
    sparse = torch.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse()
    assert as_array(sparse).tolist() == [[0.0, 1.0], [2.0, 0.0]]
    neg = torch.tensor([1.0, -2.0])._neg_view()  # a lazy negative view: numpy() alone refuses it
    assert as_array(neg).tolist() == [-1.0, 2.0]
    listed = as_array([torch.tensor(1.5, requires_grad=True), torch.tensor(2.5)])
    assert listed == [1.5, 2.5] and all(type(v) is float for v in listed)  # scalar tensors: numbers
    for plain in ([1, 2], ("a", "b"), "text", 3, None, {"k": 1}):
        assert as_array(plain) is plain
    a = np.arange(3)
    assert as_array(a) is a


def test_checks_take_tensors_and_name_the_position():
    assert check_array(torch.tensor([1, 2]), "x").tolist() == [1.0, 2.0]
    p = check_probabilities(torch.tensor([[0.25, 0.75]], dtype=torch.float64), owner="ece")
    assert p.tolist() == [[0.25, 0.75]]
    with pytest.raises(InvalidParameterError, match=r"ece: `probs\[0, 1\]` is NaN"):
        check_probabilities(torch.tensor([[0.5, float("nan")]]), owner="ece")
    assert check_labels(torch.tensor([0, 2, 1]), integer=True, n_classes=3).tolist() == [0, 2, 1]
    assert check_labels([torch.tensor(1), torch.tensor(0)]) == [1, 0]  # a list of scalar tensors
    with pytest.raises(InvalidParameterError, match=r"`labels\[1\]` is 3; expected a class index in \[0, 2\]"):
        check_labels(torch.tensor([0, 3]), integer=True, n_classes=3)
    assert check_same_length("ece", probs=DLPackOnly([1, 2]), labels=torch.tensor([0, 1])) == 2


def test_an_object_that_cannot_be_read_names_the_parameter():
    with pytest.raises(InvalidParameterError, match=r"ece: cannot read `probs` .*RefusesConversion.*__dlpack__"):
        check_probabilities(RefusesConversion(), owner="ece")
    with pytest.raises(InvalidParameterError, match=r"MeanAbsoluteError: cannot read `predictions`"):
        assay.load_metric("mae").update(RefusesConversion(), [[1.0]])


# ------------------------------------------------------------------ metrics
def test_metrics_take_cpu_tensors_with_grad():
    preds = torch.tensor([1.0, 2.0, 4.0], requires_grad=True)
    refs = torch.tensor([[1.0], [3.0], [2.0]])
    assert assay.load_metric("mae").update(preds, refs).compute() == pytest.approx((0 + 1 + 2) / 3)
    assert preds.requires_grad and preds.grad is None
    acc = assay.load_metric("accuracy").update(torch.tensor([1, 2, 3]), torch.tensor([[1], [2], [4]]))
    assert acc.compute() == pytest.approx(2 / 3)


def test_calibration_takes_tensors_hand_derived():
    # 2 bins; p = .9, .8 in bin 1 (conf .85, acc 1/2, gap .35), .3 in bin 0 (conf .3, acc 0, gap .3)
    p = torch.tensor([0.9, 0.8, 0.3], requires_grad=True)
    y = torch.tensor([1, 0, 0])
    ece = assay.load_metric("ece[n_bins=2]").update(p, y).compute()
    assert ece == pytest.approx(2 / 3 * 0.35 + 1 / 3 * 0.3, abs=1e-6)  # float32 input
    brier = assay.load_metric("brier").update(torch.tensor([[0.7, 0.2, 0.1]]), torch.tensor([0])).compute()
    assert brier == pytest.approx(0.09 + 0.04 + 0.01, abs=1e-6)


def test_ensemble_metric_takes_a_list_of_tensors_with_grad():
    batch = [torch.tensor([[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]], requires_grad=True),
             torch.tensor([[0.4, 0.6], [0.5, 0.5], [0.3, 0.7]], requires_grad=True)]
    assert assay.load_metric("disagreement").update(batch).compute() == pytest.approx(1 / 3)


def test_ue_metric_call_and_evaluate_take_tensors_and_dlpack():
    rng = np.random.default_rng(3)
    u = rng.random(40)
    q = (rng.random(40) < 0.5).astype(float)
    want = roc_auc_score(1 - q, u)  # failures (q = 0) should have high uncertainty
    got = assay.load_ue_metric("roc_auc")(torch.from_numpy(u), torch.from_numpy(q))
    assert got == pytest.approx(want, abs=1e-12)
    res = assay.evaluate(DLPackOnly([1.0, 2.0, 4.0]), DLPackOnly([[1.0], [3.0], [2.0]]), metrics=["mae"],
                         n_resamples=0)
    assert res.global_scores["mae"] == pytest.approx(1.0)
    assert assay.load_metric("mae").update(ArrayLike([0.0, 1.0]), ArrayLike([[1.0], [1.0]])).compute() == 0.5
    assert assay.load_metric("mae").update(DLPackOnly([0.0, 3.0]), DLPackOnly([[1.0], [1.0]])).compute() == 1.5


def test_numpy_inputs_never_import_torch():
    code = (
        "import sys, numpy as np, assay\n"
        "assay.evaluate(np.array([1.0, 2.0]), np.array([[1.0], [3.0]]), metrics=['mae'], n_resamples=20)\n"
        "assay.load_metric('ece').update(np.array([0.9, 0.2]), np.array([1, 0])).compute()\n"
        "assay.load_metric('disagreement').update(np.full((2, 3, 2), 0.5)).compute()\n"
        "assay.load_ue_metric('prr')(np.array([0.1, 0.5, 0.9]), np.array([1.0, 0.0, 0.0]))\n"
        "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"


def test_compute_scores_keeps_the_named_scores():
    m = assay.load_metric("mae").update(torch.tensor([1.0, 3.0]), torch.tensor([[1.0], [1.0]]))
    assert m.compute() == 1.0 and isinstance(m.compute(), float)
    assert m.compute_scores() == {"mae": 1.0, "score": 1.0, "score_name": "mae"}
    assert not math.isnan(m.compute())


# ------------------------------------------------------------------ device arrays (no GPU on the test machines)
class OnCuda(DLPackOnly):
    """A DLPack producer on a CUDA device (kDLCUDA = 2): it gives a capsule only for a host copy."""

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device != (1, 0):  # kDLCPU
            raise BufferError("the data lives on cuda:0; ask for dl_device=(kDLCPU, 0)")
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return (2, 0)


def test_a_device_array_is_copied_to_the_host_through_dlpack():
    got = as_array(OnCuda([0.25, 0.75]))
    assert isinstance(got, np.ndarray) and got.tolist() == [0.25, 0.75]
    m = assay.load_metric("roc_auc")
    assert m.update(OnCuda([0.1, 0.9, 0.4]), [0, 1, 1]).compute() == roc_auc_score([0, 1, 1], [0.1, 0.9, 0.4])


def test_a_cuda_tensor_is_copied_to_the_host(monkeypatch):
    """torch refuses ``.numpy()`` on a CUDA tensor unless ``force=True`` (which copies it to the host):
    emulate that refusal on a CPU tensor and check the conversion still reads it."""
    real = torch.Tensor.numpy

    def numpy_like_cuda(self, *, force=False):
        if not force:
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                            "to host memory first.")
        return real(self, force=True)

    monkeypatch.setattr(torch.Tensor, "numpy", numpy_like_cuda)
    t = torch.tensor([1.0, 0.0, 1.0])
    assert as_array(t).tolist() == [1.0, 0.0, 1.0]
    acc = assay.evaluate(t, [[1.0], [1.0], [1.0]], metrics=["accuracy"], n_resamples=0)[0]["score"]["global"]
    assert acc["accuracy"] == pytest.approx(2 / 3)
