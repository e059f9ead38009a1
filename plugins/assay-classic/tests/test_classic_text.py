"""Exact match, token overlap, edit distance (hand values) and BLEU against sacreBLEU."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import sacrebleu

from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay_classic.functional import bleu_scorer, bleu_segment_stats, corpus_bleu, normalize_answer
from assay_classic.text import Bleu, CharEditDistance, ExactMatch, TokenOverlap

ATOL = 1e-9


def compute(metric, predictions, references):
    return metric.update(predictions, references).compute_scores()


def test_exact_match_options():
    preds, refs = ["Paris ", "rome"], [["Paris"], ["Rome", "Milan"]]
    assert compute(ExactMatch(), preds, refs)["exact_match"] == 0.0
    assert compute(ExactMatch(strip=True), preds, refs)["exact_match"] == 0.5
    assert compute(ExactMatch(strip=True, ignore_case=True), preds, refs)["exact_match"] == 1.0
    with pytest.raises(InvalidParameterError, match="type str; instance 1"):
        ExactMatch().update(["a", 3], [["a"], ["3"]])


def test_token_overlap_hand():
    # "The cat sat!" -> cat sat; "cat sat on mat" -> 4 tokens; c = 2: P = 1, R = 1/2, F1 = 2*2/(2+4)
    out = compute(TokenOverlap(), ["The cat sat!"], [["cat sat on mat"]])
    assert out["token_precision"] == pytest.approx(1.0, abs=ATOL)
    assert out["token_recall"] == pytest.approx(0.5, abs=ATOL)
    assert out["token_f1"] == pytest.approx(4 / 6, abs=ATOL)
    # repeated tokens count as a multiset: "a a b" vs "a b b" (normalize off) -> c = 2 of 3 and 3
    out = compute(TokenOverlap(normalize=False), ["a a b"], [["a b b"]])
    assert out["token_f1"] == pytest.approx(2 * 2 / 6, abs=ATOL)
    # best reference wins; an empty prediction follows zero_division
    out = compute(TokenOverlap(), ["dog"], [["cat", "the dog"]])
    assert out["token_f1"] == 1.0
    assert compute(TokenOverlap(), [""], [["x"]])["token_precision"] == 0.0
    assert compute(TokenOverlap(zero_division=1.0), [""], [["x"]])["token_precision"] == 1.0
    assert normalize_answer("The  Quick, brown fox.") == "quick brown fox"


def test_char_edit_distance_hand():
    # kitten -> sitting: 3 edits, longer string 7
    out = compute(CharEditDistance(), ["kitten", "", "abc"], [["sitting"], [""], ["xyz", "abd"]])
    assert out["char_edit_distance"] == pytest.approx((3 / 7 + 0.0 + 1 / 3) / 3, abs=ATOL)
    assert compute(CharEditDistance(normalize=False), ["kitten"], ["sitting"])["char_edit_distance"] == 3.0
    assert CharEditDistance().higher_is_better is False


HYPS = [
    "The cat sat on the mat.",
    "There is a dog in the garden!",
    "I am 25 years old, and you?",
    "",
    "Completely unrelated words here",
    "Hello , world",
]
REFS = [
    ["The cat is sitting on the mat.", "A cat sat on the mat."],
    ["A dog is in the garden.", "There's a dog in the garden."],
    ["I'm 25 years old, and you?", "I am twenty-five, and you?"],
    ["Nothing to say.", "Empty."],
    ["Some other sentence entirely.", "Nothing in common."],
    ["Hello, world", "hello world"],
]


def streams(refs):
    return [list(s) for s in zip(*refs)]


@pytest.mark.parametrize(
    "options",
    [{}, {"lowercase": True}, {"tokenize": "intl"}, {"smooth_method": "floor", "smooth_value": 0.1},
     {"smooth_method": "none"}, {"max_ngram_order": 2}, {"effective_order": True}],
)
def test_corpus_bleu_equals_sacrebleu(options):
    sacre_opts = {("use_effective_order" if k == "effective_order" else k): v for k, v in options.items()}
    if "max_ngram_order" in options:
        want = sacrebleu.metrics.BLEU(**options).corpus_score(HYPS, streams(REFS)).score
    else:
        want = sacrebleu.corpus_bleu(HYPS, streams(REFS), **sacre_opts).score
    out = compute(Bleu(**options), HYPS, REFS)
    assert out["bleu"] == pytest.approx(want, abs=ATOL)
    assert corpus_bleu(HYPS, REFS, **options) == pytest.approx(want, abs=ATOL)


def test_bleu_instance_scores_are_sentence_bleu():
    metric = Bleu()
    inter = metric.map_all(HYPS, REFS)
    got = [d["bleu"] for d in metric.instance_scores(inter)]
    for g, h, r in zip(got, HYPS, REFS):
        assert g == pytest.approx(sacrebleu.sentence_bleu(h, r).score, abs=ATOL)


def test_bleu_statistics_are_additive_and_merge():
    scorer = bleu_scorer()
    stats = bleu_segment_stats(HYPS, REFS, scorer)
    # sacreBLEU's own corpus statistics are the sum of the segment rows
    whole = sacrebleu.corpus_bleu(HYPS, streams(REFS))
    assert stats[:, 0].sum() == whole.sys_len and stats[:, 1].sum() == whole.ref_len
    assert stats[:, 2:6].sum(0).tolist() == list(whole.counts)
    assert stats[:, 6:].sum(0).tolist() == list(whole.totals)
    a = Bleu().update(HYPS[:2], REFS[:2])
    b = pickle.loads(pickle.dumps(Bleu().update(HYPS[2:], REFS[2:])))
    assert a.merge(b).compute_scores()["bleu"] == pytest.approx(whole.score, abs=ATOL)


def test_bleu_degenerate_and_errors():
    with pytest.warns(UndefinedMetricWarning, match="no data"):
        assert math.isnan(Bleu().compute_scores()["bleu"])
    with pytest.raises(InvalidParameterError, match="smooth_method"):
        Bleu(smooth_method="plus-one")
    with pytest.raises(InvalidParameterError, match="non-empty list of strings"):
        Bleu().update(["x"], [[]])
    # no n-gram matched at all: sacreBLEU defines 0.0
    assert compute(Bleu(), ["aaa bbb"], [["ccc ddd"]])["bleu"] == 0.0


def test_bleu_single_reference_string_layout():
    rng = np.random.default_rng(0)
    words = ["a", "b", "c", "d", "e"]
    hyps = [" ".join(rng.choice(words, 8)) for _ in range(20)]
    refs = [" ".join(rng.choice(words, 8)) for _ in range(20)]
    assert compute(Bleu(), hyps, refs)["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=ATOL)


def test_bleu_of_empty_strings_is_sacrebleus_zero():
    # empty hypothesis and reference: sacreBLEU defines 0.0 (not "no data")
    hyps, refs = ["", "a b"], [[""], ["c d"]]
    assert compute(Bleu(), hyps, refs)["bleu"] == sacrebleu.corpus_bleu(hyps, [[r[0] for r in refs]]).score == 0.0
    assert Bleu().instance_scores(Bleu().map_all([""], [[""]]))[0]["bleu"] == sacrebleu.sentence_bleu("", [""]).score
