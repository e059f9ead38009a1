"""``lexical_similarity`` gives LM-Polygraph 0.7.0's ``LexicalSimilarity``, run live (issue 27, item 3).

LM-Polygraph scores each pair of samples with rouge-score's ``RougeScorer([metric],
use_stemmer=True)``; assay's whitespace ROUGE-L stays available as ``metric="rougeL-whitespace"``.
The peer's module is imported with bare parent packages (conftest.py: ``lm_polygraph/__init__``
imports its model zoo, not installed; ``estimators/lexical_similarity.py``, ``estimator.py`` and
``utils/common.py`` run as written).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.errors import InvalidParameterError
from assay_uncertainty.estimators import LexicalSimilarity

SAMPLES = [
    ["Paris.", "paris"],
    ["the cats sat", "the cat sat"],
    ["The capital is Paris", "Paris, France", "It's Paris!", "paris"],
    ["running quickly", "runs quick", "ran"],
    ["", "something"],
    ["", ""],
    ["42", "42.0", "forty-two"],
    ["Émile Zola wrote it", "emile zola", "Zola"],
    ["a b c d e f", "f e d c b a", "a c e", "b d f"],
]


def theirs(module, metric, batch):
    with np.errstate(all="ignore"):
        return module.LexicalSimilarity(metric=metric)({"sample_texts": batch})


def test_the_issues_pairs(lp_lexical_similarity):
    got = LexicalSimilarity()({"sample_texts": [["Paris.", "paris"], ["the cats sat", "the cat sat"]]})
    assert got.tolist() == [-1.0, -1.0]
    assert theirs(lp_lexical_similarity, "rougeL", [["Paris.", "paris"], ["the cats sat", "the cat sat"]]).tolist() \
        == [-1.0, -1.0]
    # the whitespace variant, under its own name: "paris." != "paris"; LCS 2 of 3 tokens each
    old = LexicalSimilarity(metric="rougeL-whitespace")({"sample_texts": [["Paris.", "paris"],
                                                                          ["the cats sat", "the cat sat"]]})
    assert old[0] == 0.0 and old[1] == pytest.approx(-2 / 3)


@pytest.mark.parametrize("metric", ["rougeL", "rouge1", "rouge2"])
def test_every_sample_set_agrees_with_lm_polygraph(lp_lexical_similarity, metric):
    ours = LexicalSimilarity(metric=metric)({"sample_texts": SAMPLES})
    np.testing.assert_allclose(ours, theirs(lp_lexical_similarity, metric, SAMPLES), rtol=0, atol=1e-15)


def test_random_word_samples_agree_with_lm_polygraph(lp_lexical_similarity):
    rng = np.random.default_rng(3)
    words = ["cat", "cats", "sat", "sitting", "The", "the", "mat,", "Mat", "on", "running", "ran", "runs", "!", "42"]
    batch = [[" ".join(rng.choice(words, int(rng.integers(0, 7)))) for _ in range(int(rng.integers(2, 6)))]
             for _ in range(50)]
    np.testing.assert_allclose(LexicalSimilarity()({"sample_texts": batch}),
                               theirs(lp_lexical_similarity, "rougeL", batch), rtol=0, atol=1e-15)


def test_fewer_than_two_samples_is_nan_and_an_unknown_metric_an_error():
    assert math.isnan(LexicalSimilarity()({"sample_texts": [["only one"]]})[0])
    with pytest.raises(InvalidParameterError, match="rougeL-whitespace"):
        LexicalSimilarity(metric="rougeLsum")


def test_rouge_scoring_leaves_the_root_logger_alone(monkeypatch):
    # rouge-score's RougeScorer without a tokenizer logs through absl, which calls logging.basicConfig()
    # when the root logger has no handler: the application's logging (and the EVALUATOR lines' format) changed
    import logging

    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # pytest's capture handlers out of the way
    got = LexicalSimilarity()({"sample_texts": [["the cats sat", "the cat sat"]]})
    assert got.tolist() == [-1.0] and logging.getLogger().handlers == []
