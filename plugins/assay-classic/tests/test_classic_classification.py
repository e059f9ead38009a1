"""Accuracy, precision / recall / F-beta and MCC against hand derivations and scikit-learn."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
import sklearn.metrics as sklearn_metrics  # declared in the plugin's test extra
from sklearn.preprocessing import MultiLabelBinarizer

from assay.errors import InvalidParameterError
from assay_classic.classification import F1, Accuracy, MatthewsCorrcoef, Precision, Recall
from assay_classic.functional import UndefinedMetricWarning, label_counts, precision_recall_fscore

ATOL = 1e-9


def score(metric, predictions, references):
    return metric.update(predictions, references).compute_scores()[metric.main_score]


# ----------------------------------------------------------------------------- hand-derived cases
def test_accuracy_hand_and_multiple_references():
    # 3 vs [5]: miss; 799 vs [800]: miss; 50 vs [50]: hit -> 1/3
    assert score(Accuracy(), [3, 799, 50], [[5], [800], [50]]) == pytest.approx(1 / 3, abs=ATOL)
    # a prediction counts when it is any of its references
    assert score(Accuracy(), ["a", "b"], [["x", "a"], ["c"]]) == 0.5


def test_binary_f1_hand():
    # refs 1 1 0 0 1 0, preds 1 0 0 1 1 1: tp = 2 (idx 0, 4), fp = 2 (idx 3, 5), fn = 1 (idx 1)
    refs, preds = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 1]
    assert score(Precision(), preds, refs) == pytest.approx(2 / 4, abs=ATOL)
    assert score(Recall(), preds, refs) == pytest.approx(2 / 3, abs=ATOL)
    assert score(F1(), preds, refs) == pytest.approx(2 * 2 / (2 * 2 + 2 + 1), abs=ATOL)
    # F-beta, beta = 2: 5 tp / (5 tp + 4 fn + fp) = 10 / (10 + 4 + 2)
    assert score(F1(beta=2), preds, refs) == pytest.approx(10 / 16, abs=ATOL)


def test_macro_micro_weighted_hand():
    # labels a, b, c. refs a a b c, preds a b b b
    # a: tp 1 fp 0 fn 1 -> P 1, R 1/2, F 2/3; b: tp 1 fp 2 fn 0 -> P 1/3, R 1, F 1/2; c: tp 0 fp 0 fn 1 -> 0
    refs, preds = ["a", "a", "b", "c"], ["a", "b", "b", "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # precision of c is 0/0
        assert score(F1(average="macro"), preds, refs) == pytest.approx((2 / 3 + 1 / 2 + 0) / 3, abs=ATOL)
        assert score(Precision(average="macro"), preds, refs) == pytest.approx((1 + 1 / 3 + 0) / 3, abs=ATOL)
    # micro on single-label data is the accuracy: 2 / 4
    assert score(F1(average="micro"), preds, refs) == pytest.approx(0.5, abs=ATOL)
    # weighted by support (2, 1, 1)
    assert score(F1(average="weighted"), preds, refs) == pytest.approx((2 * 2 / 3 + 1 / 2 + 0) / 4, abs=ATOL)


def test_matthews_hand():
    # binary: TP 2, FP 1, TN 2, FN 0 -> (2*2 - 1*0) / sqrt(3 * 2 * 3 * 2) = 4 / 6
    assert score(MatthewsCorrcoef(), [1, 1, 0, 0, 1], [1, 0, 0, 0, 1]) == pytest.approx(2 / 3, abs=ATOL)
    # constant predictions: the denominator is zero -> 0.0 (scikit-learn's convention)
    assert score(MatthewsCorrcoef(), [1, 1, 1], [1, 0, 1]) == 0.0


def test_zero_division_convention():
    # no positive predicted and none true: precision, recall and F are 0 / 0
    for zd, expected in [(0.0, 0.0), (1.0, 1.0)]:
        assert score(F1(zero_division=zd), [0, 0], [0, 0]) == expected
    assert math.isnan(score(F1(zero_division=math.nan), [0, 0], [0, 0]))
    with pytest.warns(UndefinedMetricWarning, match="F-score is ill-defined"):
        assert score(F1(), [0, 0], [0, 0]) == 0.0
    with pytest.raises(InvalidParameterError, match="zero_division"):
        F1(zero_division=0.5)


def test_invalid_options_and_binary_misuse():
    with pytest.raises(InvalidParameterError, match="'average'.*Got 'mean'"):
        F1(average="mean")
    with pytest.raises(InvalidParameterError, match="average='binary' needs at most two labels"):
        F1().update([0, 1, 2], [0, 1, 2])
    with pytest.raises(InvalidParameterError, match="multi_label"):
        F1(multi_label=True)
    # as scikit-learn: two labels present and pos_label is neither
    with pytest.raises(InvalidParameterError, match="'pos_label'.*Got 1 instead"):
        F1().update(["spam", "ham"], ["ham", "spam"])


def test_additive_layout():
    # the fast path is used wherever the label set is known
    assert F1().additive and F1(average="micro").additive and F1(average="macro", labels=[0, 1]).additive
    assert Accuracy().additive and MatthewsCorrcoef(labels=[0, 1]).additive
    assert not F1(average="macro").additive  # labels discovered from the data: pairs are kept


def test_batched_counts_equal_rowwise():
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 5, size=(7, 4, 3))
    batched = precision_recall_fscore(counts, average="macro", zero_division=0.0)
    for b in range(7):
        single = precision_recall_fscore(counts[b], average="macro", zero_division=0.0)
        for got, want in zip(batched, single):
            assert got[b] == pytest.approx(want, abs=ATOL)


# ----------------------------------------------------------------------------- scikit-learn
@pytest.mark.parametrize("average", ["binary", "micro", "macro", "weighted"])
@pytest.mark.parametrize("zero_division", ["warn", 0.0, 1.0, math.nan])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_prf_equals_sklearn(average, zero_division, seed):
    rng = np.random.default_rng(seed)
    n_labels = 2 if average == "binary" else 5
    refs = rng.integers(0, n_labels, 40).tolist()
    preds = rng.integers(0, n_labels + (0 if average == "binary" else 1), 40).tolist()  # a label never true
    kwargs = {"average": average, "zero_division": zero_division}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ours, theirs in [
            (Precision(**kwargs), sklearn_metrics.precision_score),
            (Recall(**kwargs), sklearn_metrics.recall_score),
            (F1(**kwargs), sklearn_metrics.f1_score),
        ]:
            want = theirs(refs, preds, **kwargs)
            got = score(ours, preds, refs)
            assert got == pytest.approx(want, abs=ATOL, nan_ok=True), (ours, average, zero_division)
        want = sklearn_metrics.fbeta_score(refs, preds, beta=0.5, **kwargs)
        assert score(F1(beta=0.5, **kwargs), preds, refs) == pytest.approx(want, abs=ATOL, nan_ok=True)


@pytest.mark.parametrize("average", ["micro", "macro", "weighted"])
def test_prf_with_labels_equals_sklearn(average):
    rng = np.random.default_rng(7)
    refs = rng.choice(["x", "y", "z", "w"], 50).tolist()
    preds = rng.choice(["x", "y", "z", "w"], 50).tolist()
    labels = ["y", "z", "q"]  # a subset, plus a label that never occurs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = sklearn_metrics.f1_score(refs, preds, labels=labels, average=average, zero_division=0.0)
        metric = F1(average=average, labels=labels, zero_division=0.0)
        assert metric.additive
        assert score(metric, preds, refs) == pytest.approx(want, abs=ATOL)


def test_binary_pos_label_strings_equals_sklearn():
    refs = ["spam", "ham", "spam", "spam", "ham"]
    preds = ["spam", "spam", "ham", "spam", "ham"]
    want = sklearn_metrics.f1_score(refs, preds, pos_label="ham")
    assert score(F1(pos_label="ham"), preds, refs) == pytest.approx(want, abs=ATOL)


@pytest.mark.parametrize("average", ["micro", "macro", "weighted"])
@pytest.mark.parametrize("with_labels", [False, True])
def test_multilabel_equals_sklearn(average, with_labels):
    rng = np.random.default_rng(3)
    universe = ["a", "b", "c", "d"]
    refs = [[x for x in universe if rng.random() < 0.4] for _ in range(30)]
    preds = [[x for x in universe if rng.random() < 0.4] for _ in range(30)]
    labels = universe if with_labels else sorted({x for s in refs + preds for x in s})
    binarizer = MultiLabelBinarizer(classes=labels).fit([labels])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = sklearn_metrics.f1_score(binarizer.transform(refs), binarizer.transform(preds), average=average,
                                        zero_division=0.0)
        metric = F1(average=average, multi_label=True, labels=universe if with_labels else None, zero_division=0.0)
        # references given as [[labels]] (one reference, a label set) for half of the instances
        wrapped = [[r] if i % 2 else r for i, r in enumerate(refs)]
        assert score(metric, preds, wrapped) == pytest.approx(want, abs=ATOL)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("with_labels", [False, True])
def test_matthews_equals_sklearn(seed, with_labels):
    rng = np.random.default_rng(seed)
    refs = rng.integers(0, 4, 60).tolist()
    preds = np.where(rng.random(60) < 0.6, refs, rng.integers(0, 4, 60)).tolist()
    metric = MatthewsCorrcoef(labels=[0, 1, 2, 3] if with_labels else None)
    assert score(metric, preds, refs) == pytest.approx(sklearn_metrics.matthews_corrcoef(refs, preds), abs=ATOL)


def test_accuracy_equals_sklearn():
    rng = np.random.default_rng(5)
    refs, preds = rng.integers(0, 3, 100).tolist(), rng.integers(0, 3, 100).tolist()
    assert score(Accuracy(), preds, refs) == pytest.approx(sklearn_metrics.accuracy_score(refs, preds), abs=ATOL)


def test_label_counts_kernel_equals_sklearn_confusion():
    rng = np.random.default_rng(9)
    refs, preds = rng.integers(0, 3, 80), rng.integers(0, 3, 80)
    mcm = sklearn_metrics.multilabel_confusion_matrix(refs, preds, labels=[0, 1, 2])
    counts = label_counts(refs.tolist(), preds.tolist(), [0, 1, 2])
    np.testing.assert_array_equal(counts[:, 0], mcm[:, 1, 1])
    np.testing.assert_array_equal(counts[:, 1], mcm[:, 0, 1])
    np.testing.assert_array_equal(counts[:, 2], mcm[:, 1, 0])


def test_streaming_merge_and_pickle_keep_values():
    rng = np.random.default_rng(11)
    refs, preds = rng.integers(0, 3, 90).tolist(), rng.integers(0, 3, 90).tolist()
    want = sklearn_metrics.f1_score(refs, preds, average="macro")
    for labels in (None, [0, 1, 2]):
        shards = [F1(average="macro", labels=labels).update(preds[i:i + 30], refs[i:i + 30]) for i in (0, 30, 60)]
        merged = pickle.loads(pickle.dumps(shards[0])).merge(*shards[1:])
        assert merged.compute_scores()["f1"] == pytest.approx(want, abs=ATOL)


def test_label_sets_without_multi_label_is_a_clear_error():
    with pytest.raises(InvalidParameterError, match="multi_label=true"):
        F1(average="micro").update(["a"], [[["a", "b"]]])
    with pytest.raises(InvalidParameterError, match="instance 0 has a prediction of type list"):
        F1(average="micro").update([["a"]], [["a"]])


@pytest.mark.parametrize("average", ["macro", "weighted"])
@pytest.mark.parametrize("zero_division", [0.0, 1.0, math.nan])
@pytest.mark.parametrize("kind", ["numbers", "strings", "tuples"])
def test_instance_scores_equal_sklearn_on_each_instance(average, zero_division, kind):
    rng = np.random.default_rng(2)
    refs, preds = rng.integers(0, 3, 12).tolist(), rng.integers(0, 3, 12).tolist()
    encode = {"numbers": lambda v: v, "strings": lambda v: f"c{v}", "tuples": lambda v: ("c", v)}[kind]
    refs_k, preds_k = [[encode(v)] for v in refs], [encode(v) for v in preds]  # references as [label]
    for cls, theirs in [(F1, sklearn_metrics.f1_score), (Precision, sklearn_metrics.precision_score),
                        (Recall, sklearn_metrics.recall_score)]:
        metric = cls(average=average, zero_division=zero_division)
        inter = metric.map_all(preds_k, refs_k)
        assert isinstance(inter, np.ndarray) == (kind != "tuples")
        got = [d[metric.main_score] for d in metric.instance_scores(inter)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = [theirs([r], [p], average=average, zero_division=zero_division) for r, p in zip(refs, preds)]
        np.testing.assert_allclose(got, want, atol=ATOL)
        # and the global value on labels of that kind
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert metric.reduce(inter)[metric.main_score] == pytest.approx(
                theirs(refs, preds, average=average, zero_division=zero_division), abs=ATOL, nan_ok=True)
    mcc = MatthewsCorrcoef()
    got = [d["matthews_corrcoef"] for d in mcc.instance_scores(mcc.map_all(preds_k, refs_k))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert got == [sklearn_metrics.matthews_corrcoef([r], [p]) for r, p in zip(refs, preds)]


def test_mixed_label_kinds_are_an_error_and_keep_the_state():
    with pytest.raises(InvalidParameterError, match="mix strings and numbers"):
        F1(average="macro").update(["a", 1], ["a", 1])
    m = F1(average="macro").update([1, 2], [1, 1])
    with pytest.raises(InvalidParameterError, match="different kinds across updates"):
        m.update(["a"], ["b"])
    # the failed update left the state as it was: F1 of refs 1 1, preds 1 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = sklearn_metrics.f1_score([1, 1], [1, 2], average="macro")
    assert m.compute_scores()["f1"] == pytest.approx(want, abs=ATOL)


def test_matthews_corrcoef_without_data_is_nan_with_a_warning():
    # before: NaN silently (every other classic metric warned); found by `assay check-plugin`
    import math

    from assay import UndefinedMetricWarning, load_metric

    with pytest.warns(UndefinedMetricWarning, match="matthews_corrcoef is undefined without data"):
        score = load_metric("matthews_corrcoef").compute_scores()["matthews_corrcoef"]
    assert math.isnan(score)
