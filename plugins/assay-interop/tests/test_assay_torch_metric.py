"""``assay_interop.AssayTorchMetric``: assay metrics as torchmetrics metrics (issue 24, item 1).

Every value is compared with an independent computation on the same inputs: scikit-learn,
torchmetrics' own classes, torch-uncertainty 0.13.0's ``Disagreement`` (loaded from its
file, as in assay-uncertainty's tests) or a hand derivation.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import lightning as L
import numpy as np
import pytest
import torch
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score
from torchmetrics import MetricCollection
from torchmetrics.classification import MulticlassCalibrationError

import assay_interop
from assay.errors import InvalidParameterError
from assay.plugins import load_metric


def torch_uncertainty_module(relative: str):
    """torch-uncertainty 0.13.0's ``metrics/<relative>`` loaded from its file (its package __init__ imports Lightning
    extras that are not installed; make setup step 7 installs the package --no-deps)."""
    spec = importlib.util.find_spec("torch_uncertainty")
    if spec is None or not spec.submodule_search_locations:
        raise AssertionError("torch-uncertainty==0.13.0 is not installed: run `make setup` (step 7)")
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    mod_spec = importlib.util.spec_from_file_location("_peer_tu_" + path.stem, path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tu_disagreement():
    return torch_uncertainty_module("metrics/classification/disagreement.py").Disagreement


def test_is_a_torchmetrics_metric_with_the_assay_metric_inside():
    m = assay_interop.AssayTorchMetric("f1[average=macro]")
    import torchmetrics

    assert isinstance(m, torchmetrics.Metric)
    assert m.name == "f1[average=macro]"
    assert m.higher_is_better is True


def test_forward_returns_the_batch_value_and_compute_everything():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    p = np.where(rng.random(300) < 0.6, y, rng.integers(0, 3, 300))
    m = assay_interop.AssayTorchMetric("f1[average=macro]")
    batch_values = [m(torch.from_numpy(p[i:i + 100]), torch.from_numpy(y[i:i + 100])) for i in (0, 100, 200)]
    for i, v in zip((0, 100, 200), batch_values):
        assert isinstance(v, torch.Tensor) and v.dtype == torch.float64 and v.ndim == 0
        assert float(v) == pytest.approx(f1_score(y[i:i + 100], p[i:i + 100], average="macro"), abs=1e-12)
    total = m.compute()
    assert isinstance(total, torch.Tensor) and total.device.type == "cpu"
    assert float(total) == pytest.approx(f1_score(y, p, average="macro"), abs=1e-12)
    m.reset()
    with pytest.warns(Warning):
        assert math.isnan(float(m.compute()))
    m.update(torch.from_numpy(p[:10]), torch.from_numpy(y[:10]))
    assert float(m.compute()) == pytest.approx(f1_score(y[:10], p[:10], average="macro"), abs=1e-12)


def test_gathered_metric_roc_auc_and_its_assay_state():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 500)
    s = rng.random(500) + 0.3 * y
    m = assay_interop.AssayTorchMetric("roc_auc")
    for i in range(0, 500, 128):
        m.update(torch.from_numpy(s[i:i + 128]), torch.from_numpy(y[i:i + 128]))
    assert float(m.compute()) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    # the state is assay's tally: the same as the assay metric's after the same updates
    ref = load_metric("roc_auc")
    for i in range(0, 500, 128):
        ref.update(s[i:i + 128], y[i:i + 128])
    np.testing.assert_array_equal(m.state.intermediates(), ref.state.intermediates())
    assert m.state.n == ref.state.n == 500
    assert m.metric.compute_scores() == ref.compute_scores()
    # and it merges with other assay metrics as any state does
    other = load_metric("roc_auc").update(s[:50], y[:50])
    merged = m.metric.merge(other)
    assert merged.compute() == pytest.approx(roc_auc_score(np.r_[y, y[:50]], np.r_[s, s[:50]]), abs=1e-12)


def test_additive_state_matches_one_assay_metric_bit_for_bit():
    rng = np.random.default_rng(2)
    probs = rng.dirichlet(np.ones(4), 400)
    y = rng.integers(0, 4, 400)
    m = assay_interop.AssayTorchMetric("ece[n_bins=15]")
    ref = load_metric("ece[n_bins=15]")
    for i in range(0, 400, 64):
        m.update(torch.from_numpy(probs[i:i + 64]), torch.from_numpy(y[i:i + 64]))
        ref.update(probs[i:i + 64], y[i:i + 64])
    np.testing.assert_array_equal(m.state.totals, ref.state.totals)
    assert float(m.compute()).hex() == float(ref.compute()).hex()
    tm = MulticlassCalibrationError(num_classes=4, n_bins=15, norm="l1")
    tm.update(torch.from_numpy(probs), torch.from_numpy(y))
    assert float(m.compute()) == pytest.approx(float(tm.compute()), abs=1e-6)  # torchmetrics: float32


def test_metric_collection_membership_and_accuracy():
    rng = np.random.default_rng(3)
    y = torch.from_numpy(rng.integers(0, 2, 200))
    s = torch.from_numpy(rng.random(200))
    p = (s > 0.5).long()
    coll = MetricCollection({"acc": assay_interop.AssayTorchMetric("accuracy"),
                             "f1": assay_interop.AssayTorchMetric("f1[average=macro]")})
    out = coll(p, y)
    assert set(out) == {"acc", "f1"}
    assert float(out["acc"]) == pytest.approx(accuracy_score(y.numpy(), p.numpy()), abs=1e-12)
    done = coll.compute()
    assert float(done["f1"]) == pytest.approx(f1_score(y.numpy(), p.numpy(), average="macro"), abs=1e-12)
    coll.reset()
    assert int(coll["acc"].n) == 0


def test_compute_follows_the_inputs_device():
    m = assay_interop.AssayTorchMetric("accuracy")
    m.update(torch.tensor([1, 0, 1]), torch.tensor([1, 1, 1]))
    assert m.compute().device == torch.device("cpu")
    assert float(m.compute()) == pytest.approx(2 / 3)


def test_errors_name_the_problem():
    with pytest.raises(InvalidParameterError, match="registered metric name"):
        assay_interop.AssayTorchMetric(3)
    with pytest.raises(ValueError):
        assay_interop.AssayTorchMetric("accuracy", not_an_option=True)
    m = assay_interop.AssayTorchMetric("disagreement")
    with pytest.raises(InvalidParameterError, match="predictions alone"):
        m.update(torch.rand(2, 3, 2), torch.tensor([0, 1]))


def test_ue_metric_instance_aurc_in_torch_uncertainty_convention():
    from assay.plugins import load_ue_metric

    tu_aurc = torch_uncertainty_module("metrics/classification/risk_coverage.py").AURC
    rng = np.random.default_rng(4)
    probs = torch.from_numpy(rng.dirichlet(np.ones(3), 300))
    y = torch.from_numpy(rng.integers(0, 3, 300))
    conf, pred = probs.max(-1)
    m = assay_interop.AssayTorchMetric(load_ue_metric("aurc[convention=torch-uncertainty]"))
    m.update(1 - conf, (pred == y).double())
    peer = tu_aurc()
    peer.update(probs, y)
    assert float(m.compute()) == pytest.approx(float(peer.compute()), abs=1e-6)


# --------------------------------------------------------------------------- Lightning, the seed example
class _Ensemble(L.LightningModule):
    """A tiny ensemble (3 linear members, 2 classes) that logs disagreement from a MetricCollection."""

    def __init__(self, tu_cls) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.members = torch.nn.ModuleList(torch.nn.Linear(4, 2) for _ in range(3))
        self.assay = MetricCollection({"disagreement": assay_interop.AssayTorchMetric("disagreement")},
                                      prefix="assay_")
        self.peer = MetricCollection({"disagreement": tu_cls()}, prefix="tu_")
        self.batch_values: list[tuple[float, float]] = []

    def forward(self, x):
        return torch.stack([m(x).softmax(-1) for m in self.members], dim=1)  # (B, N, C)

    def validation_step(self, batch, batch_idx):
        (x,) = batch
        probs = self(x)
        a, b = self.assay(probs), self.peer(probs)
        self.batch_values.append((float(a["assay_disagreement"]), float(b["tu_disagreement"])))
        self.log_dict(self.assay, on_step=False, on_epoch=True)
        self.log_dict(self.peer, on_step=False, on_epoch=True)


def test_lightning_validation_step_logs_the_same_as_torch_uncertainty(tu_disagreement):
    torch.manual_seed(1)
    x = torch.randn(96, 4) * 3
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x), batch_size=32)
    model = _Ensemble(tu_disagreement)
    trainer = L.Trainer(accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    logged = trainer.validate(model, loader, verbose=False)[0]
    assert logged["assay_disagreement"] == pytest.approx(logged["tu_disagreement"], abs=1e-6)
    assert 0 < logged["assay_disagreement"] < 1  # the members do disagree on some inputs
    for ours, theirs in model.batch_values:  # forward: the batch value
        assert ours == pytest.approx(theirs, abs=1e-6)


def test_the_documented_seed_example(tu_disagreement):
    probs = torch.tensor([[[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]], [[0.4, 0.6], [0.5, 0.5], [0.3, 0.7]]])
    ours = MetricCollection([assay_interop.AssayTorchMetric("disagreement")])
    theirs = tu_disagreement()
    ours.update(probs)
    theirs.update(probs)
    value = ours.compute()["AssayTorchMetric"]
    assert isinstance(value, torch.Tensor)
    assert float(value) == pytest.approx(1 / 3, abs=1e-12)  # by hand: votes (0,0,0) -> 0, (1,0,1) -> 2/3
    assert float(value) == pytest.approx(float(theirs.compute()), abs=1e-6)


def test_importing_the_plugin_does_not_import_torch():
    """torch and torchmetrics are imported by assay_interop.torch_module only, on first use of the name."""
    import subprocess
    import sys

    code = ("import sys, assay_interop; before = 'torch' in sys.modules or 'torchmetrics' in sys.modules; "
            "assay_interop.AssayTorchMetric; print(before, 'torchmetrics' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


def test_metric_collection_compute_groups_share_equal_states():
    """MetricCollection puts metrics whose states are equal after the first update in one compute group (it
    updates only the first); both still compute their own value from the shared state."""
    rng = np.random.default_rng(5)
    s, y = rng.random(200), rng.integers(0, 2, 200)
    coll = MetricCollection({"auc": assay_interop.AssayTorchMetric("roc_auc"),
                             "auc_again": assay_interop.AssayTorchMetric("roc_auc"),
                             "acc": assay_interop.AssayTorchMetric("accuracy")})
    for i in range(0, 200, 50):
        coll.update(torch.from_numpy(s[i:i + 50]), torch.from_numpy(y[i:i + 50]))
    assert sorted(map(sorted, coll.compute_groups.values())) == [["acc"], ["auc", "auc_again"]]
    out = coll.compute()
    assert float(out["auc"]) == float(out["auc_again"]) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_reduction_none_returns_the_per_example_tensor(tu_disagreement):
    probs = torch.from_numpy(np.random.default_rng(6).dirichlet(np.ones(3), (40, 5)))
    m = assay_interop.AssayTorchMetric("disagreement[reduction=none]")
    m.update(probs[:15])
    m.update(probs[15:])
    peer = tu_disagreement(reduction="none")
    peer.update(probs)
    ours = m.compute()
    assert ours.shape == (40,) and ours.dtype == torch.float64
    np.testing.assert_allclose(ours.numpy(), peer.compute().double().numpy(), atol=1e-6)
