"""ROUGE and BLEU generation metrics equal rouge-score, sacreBLEU and LM-Polygraph 0.7.0's classes (issue 28, item 4).

LM-Polygraph's ``generation_metrics/rouge.py``, ``bleu.py`` and ``aggregated_metric.py`` are imported
with bare parent packages (as conftest.py does for its estimators), and run live on the same texts.
"""

from __future__ import annotations

import os
import pickle
import sys

import numpy as np
import pytest

from assay.errors import InvalidParameterError
from assay_uncertainty.gen_metrics_text import BLEUMetric, RougeMetric
from assay_uncertainty.manager import UEManager

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lm_polygraph_peers import lm_polygraph_module

HYPS = ["The capital of France is Paris.", "paris", "It was running quickly", "", "forty-two", "a b c d e f",
        "The cats sat on the mat", "Émile Zola wrote it", "no overlap at all", "42."]
REFS = ["Paris", "Paris is the capital of France", "runs quick", "something", "42", "f e d c b a",
        "the cat sat on a mat.", "emile zola", "completely different words", "42"]


@pytest.fixture(scope="module")
def lp():
    return {m: lm_polygraph_module(f"generation_metrics.{m}") for m in ("rouge", "bleu", "aggregated_metric")}


@pytest.mark.parametrize("rouge_name", ["rouge1", "rouge2", "rougeL"])
@pytest.mark.filterwarnings("ignore:generation metric 'rouge'")
def test_rouge_equals_lm_polygraph_and_rouge_score(lp, rouge_name):
    from rouge_score.rouge_scorer import RougeScorer

    ours = RougeMetric(rouge_name)({"greedy_texts": HYPS}, REFS)
    theirs = lp["rouge"].RougeMetric(rouge_name)({"greedy_texts": HYPS}, REFS)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    scorer = RougeScorer([rouge_name], use_stemmer=True)
    direct = []
    for h, r in zip(HYPS, REFS):
        best = scorer.score(r, r)[rouge_name].fmeasure  # 1, or 0 for a reference without a word (word pair: rouge2)
        direct.append(scorer.score(r, h)[rouge_name].fmeasure / best if best else np.nan)
    np.testing.assert_allclose(ours, direct, rtol=0, atol=1e-12)
    assert ours[6] > 0 and ours[8] == 0


def test_bleu_equals_lm_polygraph_and_sacrebleu(lp):
    from sacrebleu.metrics import BLEU

    ours = BLEUMetric()({"greedy_texts": HYPS}, REFS)
    np.testing.assert_allclose(ours, lp["bleu"].BLEUMetric()({"greedy_texts": HYPS}, REFS), rtol=0, atol=1e-12)
    bleu = BLEU(effective_order=True, lowercase=True)
    direct = [bleu.sentence_score(h.strip().rstrip("."), [r.strip().rstrip(".")]).score for h, r in zip(HYPS, REFS)]
    np.testing.assert_allclose(ours, direct, rtol=0, atol=1e-12)
    assert ours[5] > 0 and ours[9] == pytest.approx(100.0)  # "42." and "42": the full stop stripped


def test_several_references_take_the_best_as_lm_polygraphs_aggregated_metric(lp):
    targets = [[r, h.upper()] if i % 2 else [r] for i, (h, r) in enumerate(zip(HYPS, REFS))]
    for ours, base in ((RougeMetric("rouge2"), lp["rouge"].RougeMetric("rouge2")),
                       (BLEUMetric(), lp["bleu"].BLEUMetric())):
        theirs = lp["aggregated_metric"].AggregatedMetric(base)({"greedy_texts": HYPS}, targets)
        np.testing.assert_allclose(ours({"answer": HYPS, "references": targets}), theirs, rtol=0, atol=1e-12)


def test_a_reference_without_words_is_nan_with_a_warning(lp):
    with pytest.warns(RuntimeWarning, match="NaN for 1 example"):
        ours = RougeMetric()({"answer": ["a", "b"], "reference": ["a", "..."]})
    theirs = lp["rouge"].RougeMetric("rougeL")({"greedy_texts": ["a", "b"]}, ["a", "..."])
    assert ours[0] == theirs[0] == 1.0 and np.isnan(ours[1]) and np.isnan(theirs[1])


def test_the_manager_runs_them_by_name():
    records = [{"answer": h, "reference": r, "log_probs": [-0.1 * (i + 1)]} for i, (h, r) in enumerate(zip(HYPS, REFS))]
    man = UEManager(records, estimators=["msp"], gen_metrics=["rouge[rouge_name=rouge1]", "bleu"],
                    ue_metrics=["prr"])
    man()
    np.testing.assert_array_equal(man.gen_metrics[("sequence", "rouge[rouge_name=rouge1]")],
                                  RougeMetric("rouge1")({"answer": HYPS}, REFS))
    np.testing.assert_array_equal(man.gen_metrics[("sequence", "bleu")], BLEUMetric()({"answer": HYPS}, REFS))
    assert np.isfinite(man.metrics[("sequence", "msp", "bleu", "prr")])


def test_lm_polygraph_class_names_load_the_same_metrics():
    from assay.plugins import load

    assert isinstance(load("generation_metric", "RougeMetric[rouge_name=rouge2]"), RougeMetric)
    assert load("generation_metric", "RougeMetric[rouge_name=rouge2]").rouge_name == "rouge2"
    assert isinstance(load("generation_metric", "BLEUMetric"), BLEUMetric)


def test_options_and_inputs_are_checked():
    with pytest.raises(InvalidParameterError, match="rouge_name"):
        RougeMetric("rougeLsum")
    with pytest.raises(InvalidParameterError, match="'greedy_texts' or 'answer'"):
        BLEUMetric()({"reference": ["a"]})
    with pytest.raises(InvalidParameterError, match="references"):
        BLEUMetric()({"answer": ["a"]})
    with pytest.raises(InvalidParameterError, match=r"target_texts\[0\]"):
        BLEUMetric()({"answer": ["a"]}, [[]])
    with pytest.raises(InvalidParameterError, match="2 texts"):
        RougeMetric()({"answer": ["a", "b"]}, ["a"])
    m = RougeMetric("rouge2")
    m({"answer": ["a b"]}, ["a b"])
    assert pickle.loads(pickle.dumps(m))({"answer": ["a b"]}, ["a b"])[0] == 1.0
