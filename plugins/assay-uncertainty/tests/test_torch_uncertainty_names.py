"""torch-uncertainty 0.13.0's class names load assay's metrics (issue 24), and the classes assay had
before it give torch-uncertainty's values, run live on random inputs.

Every name is registered with the torch-uncertainty class name as an alias (``other_names``);
the families added for issue 24 are compared in their own test files
(``test_selective_torch_uncertainty.py``, ``test_conformal_calibration_torch_uncertainty.py``,
``test_smooth_ece_torch_uncertainty.py``, ``test_grouping_loss_torch_uncertainty.py``), and
``VariationRatio`` and ``FPRx`` in theirs. Options keep assay's spelling where it had one
(``n_bins`` where torch-uncertainty says ``num_bins``; brier takes no ``num_classes``).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import tomllib
import torch

from assay.plugins import load_metric, load_ue_metric

METRIC_NAMES = {
    "AdaptiveCalibrationError": "adaptive_ece", "BrierScore": "brier", "CategoricalNLL": "nll",
    "Disagreement": "disagreement", "Entropy": "ensemble_entropy", "MutualInformation": "mutual_information",
    "VariationRatio": "variation_ratio", "CalibrationError": "calibration_error",
    "ClasswiseCalibrationError": "classwise_calibration_error", "SmoothCalibrationError": "smooth_ece",
    "GroupingLoss": "grouping_loss", "CoverageRate": "coverage_rate", "SetSize": "set_size",
    "AURC": "selective_aurc", "AUGRC": "selective_augrc", "CovAtxRisk": "cov_at_x_risk", "CovAt5Risk": "cov_at_5_risk",
    "RiskAtxCov": "risk_at_x_cov", "RiskAt80Cov": "risk_at_80_cov", "SCODAURC": "scod_aurc", "SCODAUGRC": "scod_augrc",
    "SCODCovAtxRisk": "scod_cov_at_x_risk", "SCODCovAt5Risk": "scod_cov_at_5_risk",
    "SCODRiskAtxCov": "scod_risk_at_x_cov", "SCODRiskAt80Cov": "scod_risk_at_80_cov",
}
#: constructor options the classes need (no default)
NEEDS = {"ClasswiseCalibrationError": "[num_classes=3]", "CovAtxRisk": "[risk_threshold=0.1]",
         "RiskAtxCov": "[cov_threshold=0.5]", "SCODCovAtxRisk": "[risk_threshold=0.1]",
         "SCODRiskAtxCov": "[cov_threshold=0.5]"}


def test_every_classification_class_of_torch_uncertainty_has_a_name():
    spec = importlib.util.find_spec("torch_uncertainty")  # the folder, without running its __init__
    assert spec is not None and spec.submodule_search_locations, "torch-uncertainty is not installed: make setup"
    init = Path(next(iter(spec.submodule_search_locations))) / "metrics" / "classification" / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    exported = {alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert len(exported) == 27
    assert exported - set(METRIC_NAMES) == {"FPR95", "FPRx"}  # UE metrics (scores against OOD labels)


@pytest.mark.parametrize("alias", sorted(METRIC_NAMES))
def test_the_class_name_loads_the_same_metric(alias):
    options = NEEDS.get(alias, "")
    assert type(load_metric(alias + options)) is type(load_metric(METRIC_NAMES[alias] + options))


def test_fpr_names_and_the_declarations():
    assert type(load_ue_metric("FPR95")) is type(load_ue_metric("FPRx")) is type(load_ue_metric("fpr_at_recall"))
    pyproject = Path(__file__).parents[1] / "pyproject.toml"
    groups = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["entry-points"]
    assert set(METRIC_NAMES) | set(METRIC_NAMES.values()) <= set(groups["assay.metrics"])
    assert {"FPR95", "FPRx"} <= set(groups["assay.ue_metrics"])


def peer(cls, *args, **options) -> float:
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        m = cls(**options)
        m.update(*[torch.as_tensor(a) for a in args])
        return float(m.compute())
    finally:
        torch.set_default_dtype(old)


def probs(seed: int, ensemble: bool = False):
    rng = np.random.default_rng(500 + seed)
    b, n, c = int(rng.integers(10, 200)), int(rng.integers(2, 6)), int(rng.integers(2, 6))
    p = rng.dirichlet(np.ones(c) * 0.8, (b, n) if ensemble else b)
    return p, rng.integers(0, c, b), c


@pytest.mark.parametrize("seed", range(5))
def test_brier_and_nll(tu_classification, seed):
    p, y, c = probs(seed)
    theirs = peer(tu_classification["brier_score"].BrierScore, p, y, num_classes=c)
    assert load_metric("BrierScore").update(p, y).compute() == pytest.approx(theirs, rel=1e-12)
    theirs = peer(tu_classification["categorical_nll"].CategoricalNLL, p, y)
    assert load_metric("CategoricalNLL").update(p, y).compute() == pytest.approx(theirs, rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("alias", "stem"), [("Disagreement", "disagreement"), ("Entropy", "entropy"),
                                             ("MutualInformation", "mutual_information")])
def test_ensemble_metrics(tu_classification, seed, alias, stem):
    p, _, _ = probs(seed, ensemble=True)  # (B, N, C), torch-uncertainty's order for these three
    theirs = peer(getattr(tu_classification[stem], alias), p)
    assert load_metric(alias).update(p).compute() == pytest.approx(theirs, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_adaptive_calibration_error(tu_classification, seed, norm):
    p, y, c = probs(seed)  # at least 10 rows: n_bins=10 equal-mass bins
    theirs = peer(tu_classification["adaptive_calibration_error"].AdaptiveCalibrationError, p, y, task="multiclass",
                  num_classes=c, num_bins=10, norm=norm)
    ours = load_metric(f"AdaptiveCalibrationError[n_bins=10,norm={norm}]").update(p, y).compute()
    assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-7)  # its bins sum in float32 (torchmetrics' cast)
