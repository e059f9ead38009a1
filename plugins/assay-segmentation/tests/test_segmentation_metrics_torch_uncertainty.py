"""The segmentation metrics against torch-uncertainty 0.13.0's classes, run live (issue 24, item 3).

The peer modules (``torch_uncertainty/metrics/segmentation/*.py``) are loaded from their files (the
``torch_uncertainty`` fixture of the root conftest.py) and get the batch ``(B, ...)`` whose ``B``
images are assay's instances. Random maps with a fixed seed, ties and images on which a binary
score is undefined included. Then: both names load the class, shards merge to the one-pass value,
and ``assay.evaluate`` gives an interval.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import assay
from assay.errors import InvalidParameterError
from assay.metrics.catalog import resolve_metric
from assay_segmentation import segmentation_metrics as sm

B, C, H, W = 6, 4, 10, 9
IGNORE = 255


@pytest.fixture(scope="module")
def tu(torch_uncertainty):
    return {name: torch_uncertainty(f"metrics.segmentation.{module}") for name, module in (
        ("miou", "mean_iou"), ("pavpu", "patch_accuracy_vs_uncertainty"), ("auroc", "seg_binary_auroc"),
        ("ap", "seg_binary_average_precision"), ("fpr95", "seg_fpr95"))}


@pytest.fixture(scope="module", autouse=True)
def float64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def probs_and_labels(seed: int, *, ignore: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(C, 0.7), (B, H, W)).transpose(0, 3, 1, 2)  # (B, C, H, W)
    # labels agree with the argmax two times in three, so IoU and accuracy are neither 0 nor 1
    labels = np.where(rng.random((B, H, W)) < 0.66, probs.argmax(axis=1), rng.integers(0, C, (B, H, W)))
    labels[0] = np.where(labels[0] == 3, 0, labels[0])  # a class absent from an image
    if ignore:
        labels[rng.random((B, H, W)) < 0.15] = IGNORE
    return probs, labels


def binary_maps(seed: int, *, ignore: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = (rng.random((B, H, W)) < rng.uniform(0.05, 0.5, (B, 1, 1))).astype(np.int64)
    scores = rng.normal(size=(B, H, W)) + 1.2 * labels
    scores[1] = np.round(scores[1])  # many ties
    labels[2] = 0  # no positive: undefined for all three
    labels[3] = 1  # no negative: undefined for AUROC and FPR95, AP = 1
    if ignore:
        labels[rng.random((B, H, W)) < 0.1] = IGNORE
    return scores, labels


def peer(cls, preds: np.ndarray, target: np.ndarray, *args, **options) -> float:
    m = cls(*args, **options)
    m.update(torch.tensor(preds), torch.tensor(target))
    return float(m.compute())


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.parametrize("scores", [True, False], ids=["class-scores", "label-maps"])
def test_mean_iou(tu, seed, ignore, scores):
    probs, labels = probs_and_labels(seed, ignore=ignore)
    preds = probs if scores else probs.argmax(axis=1)
    options = {"ignore_index": IGNORE} if ignore else {}
    theirs = peer(tu["miou"].MeanIntersectionOverUnion, preds, labels, num_classes=C, **options)
    ours = sm.MeanIntersectionOverUnion(num_classes=C, **options).update(preds, labels).compute()
    assert ours == pytest.approx(theirs, rel=1e-7)  # torchmetrics divides float32 counts


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("patch_size", "unc_threshold"), [(1, 0.35), (3, 0.35), (4, 0.3), (10, 0.4)])
def test_pavpu(tu, seed, patch_size, unc_threshold):
    probs, labels = probs_and_labels(seed)
    theirs = peer(tu["pavpu"].PAvPU, probs, labels, patch_size=patch_size, unc_threshold=unc_threshold)
    ours = sm.PAvPU(patch_size=patch_size, unc_threshold=unc_threshold).update(probs, labels).compute()
    assert ours == pytest.approx(theirs, rel=1e-12)
    if patch_size < 10:  # many patches of every kind (two patches per image are all alike at size 10)
        assert 0 < ours < 1


def test_pavpu_logits_and_ignored_pixels(tu):
    probs, labels = probs_and_labels(4, ignore=True)
    logits = np.log(probs) * 2.0  # outside [0, 1]: the peer takes a softmax (with a warning)
    m = tu["pavpu"].PAvPU(patch_size=3, unc_threshold=0.2)
    with pytest.warns(UserWarning, match="softmax"):
        m.update(torch.tensor(logits), torch.tensor(labels), ignore_mask=torch.tensor(labels == IGNORE))
    ours = sm.PAvPU(patch_size=3, unc_threshold=0.2, logits=True, ignore_index=IGNORE).update(logits, labels)
    assert ours.compute() == pytest.approx(float(m.compute()), rel=1e-12)
    with pytest.raises(InvalidParameterError, match=r"predictions\[0\] has values outside \[0, 1\].*logits=True"):
        sm.PAvPU(patch_size=3).update(logits, labels)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.parametrize("max_fpr", [None, 0.2, 0.5])
def test_segmentation_auroc(tu, seed, ignore, max_fpr):
    scores, labels = binary_maps(seed, ignore=ignore)
    options = {"ignore_index": IGNORE} if ignore else {}
    theirs = peer(tu["auroc"].SegmentationBinaryAUROC, scores, labels, max_fpr=max_fpr, **options)
    ours = sm.SegmentationBinaryAUROC(max_fpr=max_fpr, **options).update(scores, labels).compute()
    assert ours == pytest.approx(theirs, rel=1e-6)  # torchmetrics' curve is float32


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ignore", [False, True])
def test_segmentation_average_precision(tu, seed, ignore):
    scores, labels = binary_maps(seed, ignore=ignore)
    options = {"ignore_index": IGNORE} if ignore else {}
    theirs = peer(tu["ap"].SegmentationBinaryAveragePrecision, scores, labels, **options)
    ours = sm.SegmentationBinaryAveragePrecision(**options).update(scores, labels).compute()
    assert ours == pytest.approx(theirs, rel=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.parametrize("pos_label", [1, 0])
def test_segmentation_fpr95(tu, seed, ignore, pos_label):
    scores, labels = binary_maps(seed, ignore=ignore)
    options = {"ignore_index": IGNORE} if ignore else {}
    theirs = peer(tu["fpr95"].SegmentationFPR95, scores, labels, pos_label=pos_label, **options)
    ours = sm.SegmentationFPR95(pos_label=pos_label, **options).update(scores, labels).compute()
    assert ours == pytest.approx(theirs, rel=1e-6)


FAMILY = [("mean_iou", "MeanIntersectionOverUnion", {"num_classes": C}), ("pavpu", "PAvPU", {"patch_size": 3}),
          ("segmentation_auroc", "SegmentationBinaryAUROC", {}),
          ("segmentation_average_precision", "SegmentationBinaryAveragePrecision", {}),
          ("segmentation_fpr95", "SegmentationFPR95", {})]


@pytest.mark.parametrize(("name", "peer_name", "options"), FAMILY)
def test_registered_and_peer_names_load_the_class(name, peer_name, options):
    spec = f"[{', '.join(f'{k}={v}' for k, v in options.items())}]" if options else ""
    assert type(resolve_metric(name + spec)[0]) is type(resolve_metric(peer_name + spec)[0]) is getattr(sm, peer_name)


def test_shards_merge_to_the_one_pass_value_and_get_an_interval():
    probs = np.concatenate([probs_and_labels(s)[0] for s in range(4)])  # 24 images
    labels = np.concatenate([probs_and_labels(s)[1] for s in range(4)])
    scores = np.concatenate([binary_maps(s)[0] for s in range(4)])
    binary = np.concatenate([binary_maps(s)[1] for s in range(4)])
    cuts = [0, 1, 11, 12, 24]
    for name, peer_name, options in FAMILY:
        p, r = (probs, labels) if name in ("mean_iou", "pavpu") else (scores, binary)
        cls = getattr(sm, peer_name)
        one = cls(**options).update(p, r).compute()
        parts = [cls(**options).update(p[a:b], r[a:b]) for a, b in zip(cuts, cuts[1:])]
        assert parts[0].merge(*parts[1:]).compute() == pytest.approx(one, rel=1e-12), name
        spec = name + (f"[{', '.join(f'{k}={v}' for k, v in options.items())}]" if options else "")
        g = assay.evaluate(list(p), list(r), [spec], n_resamples=200, seed=0).global_scores
        assert g[name] == pytest.approx(one, rel=1e-12), name
        assert g[f"{name}_ci_low"] < one < g[f"{name}_ci_high"], name


def test_bad_inputs_are_errors_naming_the_image():
    with pytest.raises(InvalidParameterError, match=r"references\[1\] has label 4; expected 0 .. 3"):
        sm.MeanIntersectionOverUnion(num_classes=4).update([[0, 1], [2, 3]], [[0, 1], [2, 4]])
    with pytest.raises(InvalidParameterError, match=r"references\[0\] has label 2; expected 0 or 1"):
        sm.SegmentationBinaryAUROC().update([[0.1, 0.2]], [[0, 2]])
    with pytest.raises(InvalidParameterError, match=r"predictions\[0\] has shape \(3,\)"):
        sm.SegmentationFPR95().update([[0.1, 0.2, 0.3]], [[0, 1]])
    with pytest.raises(InvalidParameterError, match="num_classes"):
        sm.MeanIntersectionOverUnion(num_classes=0)


def test_no_defined_image_is_nan_with_a_warning(tu):
    for metric in (sm.SegmentationBinaryAUROC(), sm.SegmentationBinaryAveragePrecision(), sm.SegmentationFPR95()):
        with pytest.warns(assay.errors.UndefinedMetricWarning, match="no image"):
            assert np.isnan(metric.update([[0.2, 0.4]], [[0, 0]]).compute())
    assert np.isnan(peer(tu["auroc"].SegmentationBinaryAUROC, np.array([[0.2, 0.4]]), np.array([[0, 0]])))
    with pytest.warns(assay.errors.UndefinedMetricWarning, match="no pixel"):
        assert np.isnan(sm.MeanIntersectionOverUnion(num_classes=2, ignore_index=9).update([[0]], [[9]]).compute())


def test_required_options_are_named_at_the_first_update():
    # loadable by name alone (every registered metric is), but scoring needs the option
    with pytest.raises(InvalidParameterError, match=r"mean_iou needs num_classes="):
        assay.load_metric("MeanIntersectionOverUnion").update([[0, 1]], [[0, 1]])
    with pytest.raises(InvalidParameterError, match=r"pavpu needs patch_size="):
        assay.load_metric("pavpu").update(np.full((1, 2, 2, 2), 0.5), [[[0, 1], [0, 1]]])
