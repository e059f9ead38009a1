"""chrF and TER against sacreBLEU's corpus scores, ROUGE against the rouge-score package, and their cheap intervals."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest
from rouge_score import rouge_scorer
from sacrebleu.metrics import CHRF, TER

import assay
from assay.errors import InvalidParameterError, MissingDependencyError
from assay_classic.reference_text import Chrf, Rouge, Ter

HYPS = ["the cat sat on the mat", "hello world out there", "a b c d e", "nothing alike here",
        "The quick brown fox jumps", "it is raining today"]
REFS1 = ["the cat sat on a mat", "hello there world", "a b x d e", "completely different words",
         "the quick brown fox jumped", "today it rains"]
REFS2 = ["a cat was on the mat", "hello world", "a b c d", "nothing like this", "a fast brown fox jumps",
         "it is raining"]
TWO_REFS = [[a, b] for a, b in zip(REFS1, REFS2)]


@pytest.mark.parametrize("kwargs", [{}, {"word_order": 2}, {"lowercase": True, "beta": 1}])
def test_chrf_equals_sacrebleus_corpus_score(kwargs):
    ours = Chrf(**kwargs).update(HYPS, TWO_REFS).compute_scores()["chrf"]
    theirs = CHRF(**kwargs).corpus_score(HYPS, [REFS1, REFS2]).score
    assert ours == pytest.approx(theirs, abs=1e-9)
    single = Chrf(**kwargs).update(HYPS, [[r] for r in REFS1]).compute_scores()["chrf"]
    assert single == pytest.approx(CHRF(**kwargs).corpus_score(HYPS, [REFS1]).score, abs=1e-9)


@pytest.mark.parametrize("kwargs", [{}, {"case_sensitive": True}, {"normalized": True, "no_punct": True}])
def test_ter_equals_sacrebleus_corpus_score(kwargs):
    ours = Ter(**kwargs).update(HYPS, TWO_REFS).compute_scores()["ter"]
    assert ours == pytest.approx(TER(**kwargs).corpus_score(HYPS, [REFS1, REFS2]).score, abs=1e-9)
    single = Ter(**kwargs).update(HYPS, REFS1).compute_scores()["ter"]  # a bare string is one reference
    assert single == pytest.approx(TER(**kwargs).corpus_score(HYPS, [REFS1]).score, abs=1e-9)


def test_ter_hand_value():
    # "the cat sat" vs "the cat sat on": 1 insertion over 4 words; "hello" vs "hello there": 1 over 2
    assert Ter().update(["the cat sat", "hello"], ["the cat sat on", "hello there"]).compute_scores()["ter"] == \
        pytest.approx(100 * 2 / 6)


def test_a_varying_number_of_references_sums_each_segments_own_statistics():
    refs = [TWO_REFS[0], [REFS1[1]], TWO_REFS[2], [REFS2[3]], TWO_REFS[4], [REFS1[5]]]
    for ours_cls, theirs in ((Chrf, CHRF()), (Ter, TER())):
        # second computation: sacreBLEU's statistics of each segment alone, summed, then sacreBLEU's formula
        stats = [theirs._extract_corpus_statistics([h], [[r] for r in rs])[0] for h, rs in zip(HYPS, refs)]
        expected = theirs._compute_score_from_stats([sum(col) for col in zip(*stats)]).score
        assert ours_cls().update(HYPS, refs).compute_scores()[ours_cls.main_score] == pytest.approx(expected, abs=1e-9)


def test_rouge_equals_the_mean_of_rouge_scores_best_reference_fmeasures():
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    per = [scorer.score_multi(refs, h) for h, refs in zip(HYPS, TWO_REFS)]
    out = Rouge().update(HYPS, TWO_REFS).compute_scores()
    for t in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
        assert out[t] == pytest.approx(np.mean([p[t].fmeasure for p in per]), abs=1e-12)
    assert out["score_name"] == "rougeL"
    stem = Rouge(rouge_types=["rouge1"], use_stemmer=True).update(["cats running"], [["cat runs"]]).compute_scores()
    assert stem["rouge1"] == pytest.approx(1.0)  # Porter stems: cat / run on both sides
    assert Rouge(rouge_types=["rouge1"]).update(["cats running"], [["cat runs"]]).compute_scores()["rouge1"] == 0.0


def test_intervals_come_from_additive_statistics_and_shards_merge():
    for name in ("chrf", "ter", "rouge"):
        m = assay.load_metric(name)
        assert m.additive
        whole = assay.load_metric(name).update(HYPS, TWO_REFS).compute_scores()
        a = assay.load_metric(name).update(HYPS[:2], TWO_REFS[:2])
        b = pickle.loads(pickle.dumps(assay.load_metric(name).update(HYPS[2:], TWO_REFS[2:])))
        assert a.merge(b).compute_scores()["score"] == pytest.approx(whole["score"], abs=1e-9)
    res = assay.evaluate(HYPS, TWO_REFS, metrics=["chrf", "ter", "rouge"], n_resamples=300, seed=3)
    g = res[0]["score"]["global"]
    for key in ("chrf", "ter", "rougeL"):
        assert g[f"{key}_ci_low"] <= g[key] <= g[f"{key}_ci_high"]
        assert g[f"{key}_ci_low"] < g[f"{key}_ci_high"]
    # instance scores: sacreBLEU's sentence scores
    assert res[0]["score"]["instance"]["chrf"] == pytest.approx(CHRF().sentence_score(HYPS[0], TWO_REFS[0]).score)
    assert res[1]["score"]["instance"]["ter"] == pytest.approx(TER().sentence_score(HYPS[1], TWO_REFS[1]).score)


def test_bad_inputs_and_options_are_named():
    with pytest.raises(InvalidParameterError, match="instance 1"):
        Chrf().update(["a", "b"], [["a"], []])
    with pytest.raises(InvalidParameterError, match="instance 0"):
        Ter().update(["a"], [[3]])
    with pytest.raises(InvalidParameterError, match="type str; instance 0"):
        Ter().update([3], [["a"]])
    with pytest.raises(InvalidParameterError, match="'char_order'"):
        Chrf(char_order=-1)
    with pytest.raises(InvalidParameterError, match="char_order \\+ word_order"):
        Chrf(char_order=0)
    with pytest.raises(InvalidParameterError, match="'rouge_types'"):
        Rouge(rouge_types=["rougeX"])
    with pytest.raises(InvalidParameterError, match="'main_score'"):
        Rouge(rouge_types=["rouge1"], main_score="rougeL")
    with pytest.raises(InvalidParameterError, match="reference strings"):
        Rouge().update(["a"], [[]])


def test_no_data_gives_nan_with_a_warning():
    with pytest.warns(assay.UndefinedMetricWarning):
        assert np.isnan(Ter().compute_scores()["ter"])


def test_missing_rouge_score_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "rouge_score.rouge_scorer", None)  # `import rouge_score.rouge_scorer` fails
    with pytest.raises(MissingDependencyError, match="pip install rouge-score"):
        Rouge().update(["a"], [["a"]])


def test_rouge_leaves_the_root_logger_alone(monkeypatch):
    # rouge-score's RougeScorer without a tokenizer logs through absl, which calls logging.basicConfig()
    # when the root logger has no handler, configuring the application's logging behind its back
    import logging

    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # pytest's capture handlers out of the way
    out = Rouge(rouge_types=["rouge1"], use_stemmer=True).update(["cats running"], [["cat runs"]]).compute_scores()
    assert out["rouge1"] == pytest.approx(1.0) and logging.getLogger().handlers == []
