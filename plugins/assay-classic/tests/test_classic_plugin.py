"""Registration, loading by name, the conformance kit, and evaluate() with intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sacrebleu

import assay
import assay_classic.plugin as classic_plugin
from assay.errors import InvalidParameterError
from assay.plugins import PluginSystem, use_plugin_system
from assay.testing import test_metric

REGISTERED = [
    "accuracy", "exact_match", "precision", "recall", "f1", "matthews_corrcoef", "token_overlap",
    "char_edit_distance", "spearman", "kendall_tau", "pearson", "mae", "mse", "rmse", "roc_auc", "bleu",
]


@pytest.fixture
def system():
    ps = PluginSystem(entry_points=False)
    ps.register_plugin(classic_plugin, name="classic")
    with use_plugin_system(ps):
        yield ps


def test_every_name_is_registered_with_a_description(system):
    registry = system.registry("metric")
    assert sorted(REGISTERED) == sorted(n for n in registry.names() if n in REGISTERED)
    for name in REGISTERED:
        assert registry.get(name).description


def test_load_with_overrides(system):
    m = assay.load_metric("f1[average=macro, score_prefix=m_]")
    assert (m.average, m.score_prefix) == ("macro", "m_")
    assert assay.load_metric("bleu[tokenize=intl, lowercase=true]").lowercase is True
    with pytest.raises(InvalidParameterError, match="averag"):
        assay.load_metric("f1[averge=macro]")


def test_additive_declarations(system):
    # additive metrics bootstrap by a count-matrix product; the others keep per-instance values
    for name in ["accuracy", "exact_match", "precision", "recall", "f1", "f1[average=micro]", "mae", "mse",
                 "rmse", "bleu", "token_overlap", "char_edit_distance", "f1[average=macro, labels=[0, 1, 2]]"]:
        assert assay.load_metric(name).additive, name
    for name in ["roc_auc", "spearman", "kendall_tau", "pearson"]:
        assert not assay.load_metric(name).additive, name


# Hand-derived expectations; test_metric also checks order, chunking, shard-then-merge,
# one-at-a-time and pickling.
CASES = [
    ("accuracy", [1, 2, 3, 4, 5], [[1], [0], [3], [4, 5], [6]],
     [{"accuracy": 1.0}, {"accuracy": 0.0}, {"accuracy": 1.0}, {"accuracy": 1.0}, {"accuracy": 0.0}],
     {"accuracy": 0.6}),
    ("exact_match[ignore_case=true]", ["A", "b", "c", "D", "e"], [["a"], ["B"], ["x"], ["d"], ["y", "E"]],
     None, {"exact_match": 0.8}),
    # binary, pos 1: refs 1 0 1 1 0 0, preds 1 1 0 1 0 1 -> tp 2, fp 2, fn 1
    ("precision", [1, 1, 0, 1, 0, 1], [[1], [0], [1], [1], [0], [0]], None, {"precision": 0.5}),
    ("recall", [1, 1, 0, 1, 0, 1], [[1], [0], [1], [1], [0], [0]], None, {"recall": 2 / 3}),
    ("f1", [1, 1, 0, 1, 0, 1], [[1], [0], [1], [1], [0], [0]], None, {"f1": 4 / 7}),
    # macro over a b c: refs a a b c b c, preds a b b c c c
    # a: tp1 fn1 -> F 2/3; b: tp1 fp1 fn1 -> 1/2; c: tp2 fp1 -> 4/5
    ("f1[average=macro]", list("abbccc"), [[x] for x in "aabcbc"], None, {"f1": (2 / 3 + 1 / 2 + 4 / 5) / 3}),
    ("f1[average=macro, labels=[a, b, c]]", list("abbccc"), [[x] for x in "aabcbc"], None,
     {"f1": (2 / 3 + 1 / 2 + 4 / 5) / 3}),
    ("f1[average=micro]", list("abbccc"), [[x] for x in "aabcbc"], None, {"f1": 4 / 6}),
    # weighted by supports a 2, b 2, c 2 -> same as macro here
    ("f1[average=weighted]", list("abbccc"), [[x] for x in "aabcbc"], None, {"f1": (2 / 3 + 1 / 2 + 4 / 5) / 3}),
    # multi-label micro: tp = 1 + 1 + 0, fp = 0 + 1 + 1, fn = 1 + 0 + 1 -> 4 / (4 + 2 + 2)
    ("f1[average=micro, multi_label=true]", [["x"], ["x", "y"], ["z"]], [[["x", "y"]], [["y"]], [["x"]]],
     None, {"f1": 0.5}),
    # binary MCC: TP 2 FP 1 TN 2 FN 0 -> 4 / 6
    ("matthews_corrcoef", [1, 1, 0, 0, 1], [[1], [0], [0], [0], [1]], None, {"matthews_corrcoef": 2 / 3}),
    ("matthews_corrcoef[labels=[0, 1]]", [1, 1, 0, 0, 1], [[1], [0], [0], [0], [1]], None,
     {"matthews_corrcoef": 2 / 3}),
    ("token_overlap", ["the cat", "a dog ran", "x"], [["cat"], ["dog"], ["y"]],
     [{"token_f1": 1.0}, {"token_f1": 2 / 3, "token_precision": 0.5, "token_recall": 1.0}, {"token_f1": 0.0}],
     {"token_f1": (1 + 2 / 3 + 0) / 3}),
    ("char_edit_distance", ["kitten", "flaw", "abc"], [["sitting"], ["lawn"], ["abc"]],
     [{"char_edit_distance": 3 / 7}, {"char_edit_distance": 2 / 4}, {"char_edit_distance": 0.0}],
     {"char_edit_distance": (3 / 7 + 0.5) / 3}),
    ("mae", [1.0, 2.0, 4.0], [[1.0], [3.0], [1.0]], [{"mae": 0.0}, {"mae": 1.0}, {"mae": 3.0}], {"mae": 4 / 3}),
    ("mse", [1.0, 2.0, 4.0], [[1.0], [3.0], [1.0]], [{"mse": 0.0}, {"mse": 1.0}, {"mse": 9.0}], {"mse": 10 / 3}),
    ("rmse", [1.0, 2.0, 4.0], [[1.0], [3.0], [1.0]], None, {"rmse": math.sqrt(10 / 3)}),
    ("spearman", [1.0, 2.0, 3.0, 4.0], [[10.0], [20.0], [40.0], [30.0]], None, {"spearman": 0.8}),
    ("kendall_tau", [1.0, 2.0, 3.0, 4.0], [[10.0], [20.0], [40.0], [30.0]], None, {"kendall_tau": 4 / 6}),
    ("pearson", [1.0, 2.0, 3.0], [[1.0], [2.0], [4.0]], None, {"pearson": 3 / math.sqrt(2 * 14 / 3)}),
    # pairs: (0.35 > 0.1), (0.35 < 0.4), (0.8 > both), (0.4 = 0.4 tie) -> positives 0.35, 0.8, 0.4
    # negatives 0.1, 0.4: 0.35 -> 1; 0.8 -> 2; 0.4 -> 1 + 0.5 -> (1 + 2 + 1.5) / 6
    ("roc_auc", [0.1, 0.4, 0.35, 0.8, 0.4], [[0], [0], [1], [1], [1]], None, {"roc_auc": 4.5 / 6}),
]


@pytest.mark.parametrize("name, predictions, references, instance_targets, global_target", CASES,
                         ids=[c[0] for c in CASES])
def test_conformance(system, name, predictions, references, instance_targets, global_target):
    test_metric(assay.load_metric(name), predictions, references, instance_targets, global_target)


def test_bleu_conformance_equals_sacrebleu(system):
    hyps = ["the cat sat on the mat", "a quick brown fox", "hello there world", "nothing matches", "the end"]
    refs = [["the cat is on the mat"], ["the quick brown fox jumps"], ["hello world"], ["zzz"], ["the end ."]]
    corpus = sacrebleu.corpus_bleu(hyps, [[r[0] for r in refs]]).score
    sentences = [{"bleu": sacrebleu.sentence_bleu(h, r).score} for h, r in zip(hyps, refs)]
    test_metric(assay.load_metric("bleu"), hyps, refs, sentences, {"bleu": corpus})


def test_evaluate_with_intervals(system):
    rng = np.random.default_rng(0)
    refs = rng.integers(0, 3, 300).tolist()
    preds = np.where(rng.random(300) < 0.7, refs, rng.integers(0, 3, 300)).tolist()
    res = assay.evaluate(preds, [[r] for r in refs], metrics=["accuracy", "f1[average=macro, score_prefix=m_]"],
                         n_resamples=200, seed=0)
    glob = res[0]["score"]["global"]
    import sklearn.metrics as sk
    assert glob["accuracy"] == pytest.approx(sk.accuracy_score(refs, preds), abs=1e-12)
    assert glob["m_f1"] == pytest.approx(sk.f1_score(refs, preds, average="macro"), abs=1e-12)
    for key in ("accuracy", "m_f1"):
        assert glob[f"{key}_ci_low"] <= glob[key] <= glob[f"{key}_ci_high"]
        assert glob[f"{key}_ci_high"] - glob[f"{key}_ci_low"] > 0


def test_missing_dependency_names_the_install_command(monkeypatch):
    from assay.errors import MissingDependencyError
    from assay_classic.functional import correlation

    monkeypatch.setitem(__import__("sys").modules, "scipy.stats", None)  # makes `import scipy.stats` fail
    with pytest.raises(MissingDependencyError, match="pip install scipy"):
        correlation([1.0, 2.0, 3.0], [1.0, 2.0, 2.5], method="spearman")


def test_plugin_import_is_light():
    import subprocess
    import sys

    code = ("import sys, assay_classic.plugin as p\n"
            "[p.metric_class(n) for n in p.METRICS]\n"
            "print(sorted(m for m in ('scipy', 'sacrebleu', 'rapidfuzz', 'sklearn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
