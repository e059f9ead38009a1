"""Regressions of the batch-dependence and mix bugs the estimator grid found (assay-transformers'
tests/test_estimator_grid.py): each was a value that changed with the batch size or with the estimators
run beside it, or an estimator that could not run in a model run at all."""

from __future__ import annotations

import numpy as np
import pytest

from assay.uncertainty import Estimator, StatCalculator
from assay.uncertainty.base import EXAMPLE_POSITIONS
from assay_uncertainty import estimators_claim as ec
from assay_uncertainty import estimators_density as ed
from assay_uncertainty import estimators_info as ei
from assay_uncertainty.manager import UEManager


def _batches(est, stats, sizes):
    """The estimator called on consecutive slices of every statistic, joined."""
    out, start = [], 0
    for size in sizes:
        out.extend(est({k: v[start:start + size] for k, v in stats.items()}))
        start += size
    return out


# --------------------------------------------------------------------------- random_baseline_claim
def test_random_baseline_claim_with_a_seed_gives_the_same_draws_for_any_batch_size():
    k = (2, 1, 3, 2, 1)
    claims = {"claims": [[{"aligned_token_ids": [0]}] * n for n in k]}
    whole = ec.RandomBaselineClaim(seed=7)(claims)
    # example i draws its claims' numbers from RandomState([7, i])
    for i, n in enumerate(k):
        np.testing.assert_array_equal(whole[i], np.random.RandomState([7, i]).rand(n))
    # the model loop's batches carry the examples' positions: any batch size gives the same numbers
    # (before: a generator made again at each call drew the first numbers again for every batch)
    for sizes in ([1] * 5, [2, 2, 1]):
        with_positions = {**claims, EXAMPLE_POSITIONS: list(range(5))}
        got = _batches(ec.RandomBaselineClaim(seed=7), with_positions, sizes)
        np.testing.assert_array_equal(np.concatenate(got), np.concatenate(whole))
    # a run resumed from its cache computes only the examples not done (3 and 4 here): the same numbers
    rest = ec.RandomBaselineClaim(seed=7)({"claims": claims["claims"][3:], EXAMPLE_POSITIONS: [3, 4]})
    np.testing.assert_array_equal(np.concatenate(rest), np.concatenate(whole[3:]))
    with pytest.raises(Exception, match="positions for 5 examples"):
        ec.RandomBaselineClaim(seed=7)({**claims, EXAMPLE_POSITIONS: [0, 1]})


# --------------------------------------------------------------------------- label_prob
def test_label_prob_reads_the_class_ids_the_model_runs_semantic_classes_give():
    ids = [np.array([0, 0, 1]), np.array([0, 1, 2, 1]), np.array([0])]
    got = ei.LabelProb()({"semantic_classes_entail": ids})
    np.testing.assert_allclose(got, [1 - 2 / 3, 1 - 2 / 4, 0.0], rtol=0, atol=1e-12)
    # the same classes in LM-Polygraph's layout give the same values
    lmp = {"class_to_sample": {0: [[0, 1], [2]], 1: [[0], [1, 3], [2]], 2: [[0]]},
           "sample_to_class": {0: {0: 0, 1: 0, 2: 1}, 1: {0: 0, 1: 1, 2: 2, 3: 1}, 2: {0: 0}}}
    np.testing.assert_allclose(ei.LabelProb()({"semantic_classes_entail": lmp}), got, rtol=0, atol=1e-12)
    with pytest.raises(Exception, match="array of class ids per example"):
        ei.LabelProb()({"semantic_classes_entail": [np.array([0.5, 1.0])]})


# --------------------------------------------------------------------------- the density estimators
def _hyperplane_embeddings(n, d, seed):
    """Embeddings as a transformer's last layer norm leaves them: zero mean over the features, so they lie in a
    hyperplane and the covariance is singular (jittered): an ill-conditioned inverse, as in a real model."""
    x = np.random.default_rng(seed).normal(size=(n, d))
    x = (x - x.mean(1, keepdims=True)) / x.std(1, keepdims=True)
    return x * np.linspace(0.5, 2.0, d) + 0.1


@pytest.mark.filterwarnings("ignore::UserWarning")  # MinCovDet: "not full rank" (the hyperplane)
@pytest.mark.parametrize("cls", [ed.MahalanobisDistanceSeq, ed.RelativeMahalanobisDistanceSeq, ed.RDESeq,
                                 ed.PPLMDSeq])
def test_density_values_do_not_depend_on_the_batch(cls):
    rng = np.random.default_rng(0)
    train = {"train_embeddings_decoder": _hyperplane_embeddings(48, 32, 1),
             "background_train_embeddings_decoder": _hyperplane_embeddings(40, 32, 2),
             "train_greedy_log_likelihoods": [-rng.uniform(0, 3, 4) for _ in range(48)]}
    est = cls(train_stats=train)
    stats = {"embeddings_decoder": _hyperplane_embeddings(7, 32, 3),
             "greedy_log_likelihoods": [-rng.uniform(0, 3, 4) for _ in range(7)]}
    whole = est(stats)
    for sizes in ([1] * 7, [2, 2, 2, 1], [3, 4]):
        np.testing.assert_array_equal(_batches(est, stats, sizes), whole, err_msg=str(sizes))
    # each value is the example scored alone (before: one matrix product over the batch, whose rounding the
    # ill-conditioned inverse covariance turned into differences of ~1e-4 between batch sizes)
    for i in range(7):
        np.testing.assert_array_equal(est({k: v[i:i + 1] for k, v in stats.items()}), whole[i:i + 1])


# --------------------------------------------------------------------------- the model loop: shared statistics
class _Greedy(StatCalculator):
    name, stats, dependencies = "fake_greedy", ("answer", "log_probs", "token_entropies"), ("input_texts",)

    def __init__(self):
        super().__init__()

    def __call__(self, stats):
        texts = list(stats["input_texts"])
        return {"answer": texts, "log_probs": [-0.1 * np.arange(1, len(t) + 1) for t in texts],
                "token_entropies": [np.ones(len(t)) for t in texts]}


class _BackendWithTokenizer:
    """A backend whose shared statistics hold a ``tokenizer`` (as assay-transformers' does)."""

    def calculators(self, **_):
        return [_Greedy()]

    def shared_stats(self, seed=None):
        return {"tokenizer": str.upper}


class _ReadsTokenizer(Estimator):
    """Declares the shared ``tokenizer`` as a dependency (as LM-Polygraph's Focus does)."""

    name, level, dependencies = "reads_tokenizer", "sequence", ("tokenizer", "answer")

    def __init__(self):
        super().__init__()

    def __call__(self, stats):
        return np.array([float(len(stats["tokenizer"](a))) for a in stats["answer"]])


def test_an_estimator_may_declare_a_statistic_the_backend_shares():
    records = [{"input": "x" * (i + 1)} for i in range(3)]
    man = UEManager(records, model=_BackendWithTokenizer(), estimators=[_ReadsTokenizer()], batch_size=2)
    man()  # before: StatDependencyError "No statistic 'tokenizer' ... no stat calculator produces it"
    np.testing.assert_array_equal(man.estimations[("sequence", "reads_tokenizer")], [1.0, 2.0, 3.0])
    assert "tokenizer" not in man.stats  # shared statistics are never kept
