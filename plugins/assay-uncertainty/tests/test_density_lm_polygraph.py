"""The density-based estimators give LM-Polygraph 0.7.0's values, run live on the same statistics (issue 28, item 3).

LM-Polygraph's classes (``estimators/mahalanobis_distance.py``, ``relative_mahalanobis_distance.py``,
``rde.py``, ``ppl_md.py``; torch and scikit-learn, installed) are imported with bare parent packages
(conftest.py). They fit on the first call's ``train_embeddings_*`` statistics; assay's estimators
are called on the same dictionary. LM-Polygraph computes the distances in float32, assay in float64:
values agree to relative 1e-6.
"""

from __future__ import annotations

import os
import pickle
import sys

import numpy as np
import pytest

from assay.errors import InvalidParameterError
from assay_uncertainty.estimators_density import (
    MahalanobisDistanceSeq,
    PPLMDSeq,
    RDESeq,
    RelativeMahalanobisDistanceSeq,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lm_polygraph_peers import lm_polygraph_module

RTOL = 1e-6


def _stats(seed=0, n_train=300, n_bg=250, n=40, dim=6, kind="decoder"):
    rng = np.random.default_rng(seed)
    mix = np.diag(rng.uniform(0.5, 2, dim)) + 0.3 * rng.normal(size=(dim, dim))  # covariance condition < 400
    train = rng.normal(size=(n_train, dim)) @ mix + 0.5
    test = np.vstack([rng.normal(size=(n // 2, dim)) @ mix + 0.5, rng.normal(size=(n - n // 2, dim)) * 3])
    return {
        f"train_embeddings_{kind}": train,
        f"background_train_embeddings_{kind}": rng.normal(size=(n_bg, dim)) * 2 - 1,
        f"embeddings_{kind}": test,
        "train_greedy_log_likelihoods": [-rng.random(int(k)) * 3 for k in rng.integers(1, 9, n_train)],
        "greedy_log_likelihoods": [-rng.random(int(k)) * 3 for k in rng.integers(1, 9, n)],
    }


@pytest.fixture(scope="module")
def lp():
    return {name: lm_polygraph_module(f"estimators.{name}")
            for name in ("mahalanobis_distance", "relative_mahalanobis_distance", "rde", "ppl_md")}


def _theirs(cls, stats):
    return np.asarray(cls(stats), dtype=np.float64)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", ["decoder", "encoder"])
def test_mahalanobis_distance(lp, seed, kind):
    stats = _stats(seed, kind=kind)
    theirs = _theirs(lp["mahalanobis_distance"].MahalanobisDistanceSeq(embeddings_type=kind), stats)
    ours = MahalanobisDistanceSeq(embeddings_type=kind)(stats)
    np.testing.assert_allclose(ours, theirs, rtol=RTOL)
    assert ours[-1] > ours[0]  # the far examples are the last half


def test_an_ill_conditioned_covariance_is_computed_in_float64(lp):
    """LM-Polygraph's float32 distances lose digits with the covariance's condition number; assay's do not."""
    rng = np.random.default_rng(7)
    rotation = np.linalg.qr(rng.normal(size=(5, 5)))[0]
    scales = np.array([1.0, 1.0, 1.0, 1.0, 1e-3])  # a rotated thin direction: condition number about 1e6
    train = (rng.normal(size=(400, 5)) * scales) @ rotation
    test = (rng.normal(size=(30, 5)) * scales) @ rotation
    stats = {"train_embeddings_decoder": train, "embeddings_decoder": test}
    ours = MahalanobisDistanceSeq()(stats)
    d = test - train.mean(axis=0)
    exact = np.sqrt(np.einsum("nd,nd->n", d, np.linalg.solve(np.cov(train, rowvar=False), d.T).T))
    np.testing.assert_allclose(ours, exact, rtol=1e-9)
    theirs = _theirs(lp["mahalanobis_distance"].MahalanobisDistanceSeq(), stats)
    np.testing.assert_allclose(theirs, exact, rtol=1e-1)  # float32: digits lost, not the meaning
    assert np.max(np.abs(theirs / exact - 1)) > 1e-6  # so the two differ by more than the tolerance above


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_relative_mahalanobis_distance(lp, seed):
    stats = _stats(seed)
    theirs = _theirs(lp["relative_mahalanobis_distance"].RelativeMahalanobisDistanceSeq(), stats)
    np.testing.assert_allclose(RelativeMahalanobisDistanceSeq()(stats), theirs, rtol=RTOL, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_rde(lp, seed):
    """60 training examples: a 60-dimensional kernel-PCA space, so MinCovDet warns that the covariance is not of
    full rank (LM-Polygraph's estimator does the same); the values still agree."""
    stats = _stats(seed, n_train=60)
    theirs = _theirs(lp["rde"].RDESeq(), stats)
    np.testing.assert_allclose(RDESeq()(stats), theirs, rtol=RTOL)


@pytest.mark.slow
def test_rde_with_a_full_kernel_pca_space(lp):
    """160 training examples: LM-Polygraph's 100 kernel-PCA components (MinCovDet in 100 dimensions: seconds)."""
    stats = _stats(3, n_train=160)
    theirs = _theirs(lp["rde"].RDESeq(), stats)
    np.testing.assert_allclose(RDESeq()(stats), theirs, rtol=RTOL)


@pytest.mark.parametrize("md_type", ["MD", "RMD"])
@pytest.mark.parametrize("seed", [0, 1])
def test_ppl_md(lp, seed, md_type):
    stats = _stats(seed)
    theirs = _theirs(lp["ppl_md"].PPLMDSeq(md_type=md_type), stats)
    np.testing.assert_allclose(PPLMDSeq(md_type=md_type)(stats), theirs, rtol=0, atol=1e-12)


def test_the_rank_equals_lm_polygraphs_with_ties_and_nans(lp):
    from assay_uncertainty.estimators_density import _rank

    rng = np.random.default_rng(0)
    for _ in range(200):
        source = np.round(rng.normal(size=int(rng.integers(1, 30))), 1)  # rounded: ties
        target = np.round(rng.normal(size=int(rng.integers(0, 30))), 1)
        if rng.random() < 0.3:
            source[rng.integers(0, source.size)] = np.nan
        if rng.random() < 0.3 and target.size:
            target[rng.integers(0, target.size)] = np.nan
        np.testing.assert_array_equal(_rank(target, source), lp["ppl_md"].rank(target, source))


def test_a_fitted_estimator_does_not_refit_on_later_calls(lp):
    """Both fit once: a second call with other training statistics scores with the first fit."""
    first, second = _stats(0), _stats(5)
    second = {**second, "embeddings_decoder": first["embeddings_decoder"]}
    ours, theirs = MahalanobisDistanceSeq(), lp["mahalanobis_distance"].MahalanobisDistanceSeq()
    a, ta = ours(first), _theirs(theirs, first)
    b, tb = ours(second), _theirs(theirs, second)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ta, tb)
    np.testing.assert_allclose(b, tb, rtol=RTOL)


def test_train_stats_option_and_fit_equal_the_first_call_fit(tmp_path):
    stats = _stats(3, n_train=60, n_bg=50)
    train = {k: v for k, v in stats.items() if k.startswith(("train_", "background_"))}
    evaluated = {k: v for k, v in stats.items() if k not in train}
    flat = np.concatenate(train["train_greedy_log_likelihoods"])
    lens = np.array([len(x) for x in train["train_greedy_log_likelihoods"]])
    np.savez(tmp_path / "train.npz", train_embeddings_decoder=train["train_embeddings_decoder"],
             background_train_embeddings_decoder=train["background_train_embeddings_decoder"],
             train_greedy_log_likelihoods=flat, train_greedy_log_likelihoods__lengths=lens)
    for cls in (MahalanobisDistanceSeq, RelativeMahalanobisDistanceSeq, PPLMDSeq, RDESeq):
        want = cls()(stats)
        np.testing.assert_array_equal(cls(train_stats=train)(evaluated), want)
        np.testing.assert_array_equal(cls(train_stats=str(tmp_path / "train.npz"))(evaluated), want)
        np.testing.assert_array_equal(cls().fit(train)(evaluated), want)


@pytest.mark.parametrize("cls", [MahalanobisDistanceSeq, RelativeMahalanobisDistanceSeq, RDESeq, PPLMDSeq])
def test_state_round_trip_and_pickling(cls):
    stats = _stats(4, n_train=60, n_bg=50)
    est = cls()
    want = est(stats)
    evaluated = {"embeddings_decoder": stats["embeddings_decoder"],
                 "greedy_log_likelihoods": stats["greedy_log_likelihoods"]}
    state = est.fitted_state()
    assert all(isinstance(v, np.ndarray) and v.dtype == np.float64 for v in state.values())
    again = cls(**est.fitted_options()).load_fitted_state(state)
    np.testing.assert_array_equal(again(evaluated), want)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est))(evaluated), want)


def test_batches_give_the_same_values():
    stats = _stats(6)
    est = PPLMDSeq(train_stats={k: v for k, v in stats.items() if k.startswith("train_")})
    whole = est(stats)
    parts = [est({"embeddings_decoder": stats["embeddings_decoder"][i:i + 7],
                  "greedy_log_likelihoods": stats["greedy_log_likelihoods"][i:i + 7]}) for i in range(0, 40, 7)]
    np.testing.assert_array_equal(np.concatenate(parts), whole)


@pytest.mark.parametrize("cls", [MahalanobisDistanceSeq, RelativeMahalanobisDistanceSeq, RDESeq, PPLMDSeq])
def test_snake_and_lm_polygraph_names_load_the_same_estimator(cls):
    from assay.plugins import load

    assert type(load("estimator", cls.name)) is cls
    assert type(load("estimator", cls.__name__)) is cls


def test_errors_name_the_problem():
    with pytest.raises(InvalidParameterError, match="not fitted.*train_embeddings_decoder"):
        MahalanobisDistanceSeq()({"embeddings_decoder": np.zeros((2, 3))})
    with pytest.raises(InvalidParameterError, match="normalize=True is not supported"):
        MahalanobisDistanceSeq(normalize=True)
    with pytest.raises(InvalidParameterError, match="parameters_path"):
        RDESeq(parameters_path="somewhere")
    with pytest.raises(InvalidParameterError, match="md_type"):
        PPLMDSeq(md_type="XD")
    train = {"train_embeddings_decoder": np.random.default_rng(0).normal(size=(20, 3))}
    est = MahalanobisDistanceSeq(train_stats=train)
    with pytest.raises(InvalidParameterError, match="dimension 4.*dimension 3"):
        est({"embeddings_decoder": np.zeros((2, 4))})
    with pytest.raises(InvalidParameterError, match="embeddings_decoder"):
        est({"embeddings_encoder": np.zeros((2, 3))})
    with pytest.raises(InvalidParameterError, match="background_train_embeddings_decoder"):
        RelativeMahalanobisDistanceSeq(train_stats={"train_embeddings_decoder": np.zeros((5, 2))})
    with pytest.raises(InvalidParameterError, match="arrays"):
        MahalanobisDistanceSeq().load_fitted_state({"centroid": np.zeros(2)})


def test_a_singular_covariance_warns():
    rng = np.random.default_rng(0)
    with pytest.warns(RuntimeWarning, match="singular"):
        MahalanobisDistanceSeq(train_stats={"train_embeddings_decoder": rng.normal(size=(4, 6))})
