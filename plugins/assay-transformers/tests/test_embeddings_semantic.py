"""The semantic estimators on hand-built similarity matrices (no model): values derived by hand in
the test, or computed independently (numpy.linalg.eigvals / scipy.linalg.eigh as LM-Polygraph
does, a hand-written cluster search)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import InvalidParameterError
from assay_transformers.semantic import DegMat, Eccentricity, NumSemSets, SemanticEigValLaplacian, SemanticEntropy


def _fixed(matrices):
    """A similarity callable returning the given matrix for the example with that many samples."""
    by_size = {len(m): np.asarray(m, dtype=float) for m in matrices}
    return lambda texts: by_size[len(texts)]


def _texts(*sizes):
    return {"sample_texts": [[f"s{i}" for i in range(k)] for k in sizes]}


def _blocks(sizes, order=None):
    """Disconnected cliques (all-ones blocks), rows optionally permuted."""
    m = sum(sizes)
    s = np.zeros((m, m))
    start = 0
    for k in sizes:
        s[start:start + k, start:start + k] = 1.0
        start += k
    if order is not None:
        s = s[np.ix_(order, order)]
    return s


# cliques of sizes 2, 3, 1, interleaved: answers 0..5 belong to classes a b a c b b
ORDER = [0, 2, 1, 5, 3, 4]
CLIQUES = _blocks([2, 3, 1], ORDER)


def test_cliques_hand_derived():
    stats = _texts(6)
    sim = _fixed([CLIQUES])
    assert NumSemSets(similarity=sim)(stats)[0] == 3
    # discrete semantic entropy: class shares 2/6, 3/6, 1/6
    want = -sum(p * math.log(p) for p in (2 / 6, 3 / 6, 1 / 6))
    assert SemanticEntropy(similarity=sim)(stats)[0] == pytest.approx(want, abs=1e-12)
    # L of an all-ones k-block is I - J/k: eigenvalues 0 once and 1 (k - 1 times); sum max(0, 1 - lambda) = #blocks
    assert SemanticEigValLaplacian(similarity=sim)(stats)[0] == pytest.approx(3.0, abs=1e-9)
    # 1 - sum W / K^2 = 1 - (4 + 9 + 1) / 36
    assert DegMat(similarity=sim)(stats)[0] == pytest.approx(1 - 14 / 36, abs=1e-12)
    # the kernel of L is spanned by the block indicators: centred projection has trace c - 1
    assert Eccentricity(similarity=sim)(stats)[0] == pytest.approx(math.sqrt(3 - 1), abs=1e-9)


def test_one_clique_is_certain_and_no_samples_is_nan():
    stats = _texts(4, 0)
    sim = _fixed([np.ones((4, 4)), np.zeros((0, 0))])
    for cls, certain in ((NumSemSets, 1.0), (SemanticEntropy, 0.0), (SemanticEigValLaplacian, 1.0), (DegMat, 0.0),
                         (Eccentricity, 0.0)):
        out = cls(similarity=sim)(stats)
        assert out[0] == pytest.approx(certain, abs=1e-9), cls.name
        assert math.isnan(out[1]), cls.name


def test_chain_separates_components_from_greedy_classes():
    # 0~1 and 1~2 but not 0~2: one connected component; LM-Polygraph's greedy classes {0, 1}, {2}
    s = np.array([[1.0, 0.9, 0.1], [0.9, 1.0, 0.9], [0.1, 0.9, 1.0]])
    stats = _texts(3)
    assert NumSemSets(similarity=_fixed([s]))(stats)[0] == 1
    want = -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))
    assert SemanticEntropy(similarity=_fixed([s]))(stats)[0] == pytest.approx(want, abs=1e-12)


def test_equivalence_needs_both_directions_and_respects_threshold():
    s = np.array([[1.0, 0.95], [0.5, 1.0]])  # 0 -> 1 similar, 1 -> 0 not
    stats = _texts(2)
    assert NumSemSets(similarity=_fixed([s]))(stats)[0] == 2
    assert NumSemSets(similarity=_fixed([s]), threshold=0.5)(stats)[0] == 1
    assert NumSemSets(similarity=_fixed([s]), threshold=0.96)(stats)[0] == 2


def test_semantic_entropy_with_likelihoods_is_lm_polygraphs_formula():
    s = np.array([[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]])  # classes {0, 1}, {2}
    ll = [-1.0, -2.0, -3.0]
    stats = {**_texts(3), "sample_log_likelihoods": [ll]}
    est = SemanticEntropy(similarity=_fixed([s]), likelihoods=True)
    assert est.dependencies == ("sample_texts", "sample_log_likelihoods")
    lp0 = math.log(math.exp(-1.0) + math.exp(-2.0))
    want = -(lp0 + lp0 + (-3.0)) / 3
    assert est(stats)[0] == pytest.approx(want, abs=1e-12)
    with pytest.raises(InvalidParameterError, match=r"sample_log_likelihoods\[0\]"):
        est({**_texts(3), "sample_log_likelihoods": [[-1.0, -2.0]]})


def test_random_matrices_against_numpy_and_scipy():
    from scipy.linalg import eigh

    rng = np.random.default_rng(7)
    for k in (2, 3, 5, 8):
        a = rng.uniform(0.0, 1.0, (k, k))
        np.fill_diagonal(a, 1.0)  # asymmetric, in [0, 1] like NLI probabilities
        stats = _texts(k)
        w = (a + a.T) / 2
        d_inv = np.linalg.inv(np.sqrt(np.diag(w.sum(axis=1))))
        lap = np.eye(k) - d_inv @ w @ d_inv
        want_eig = sum(max(0.0, 1 - lam) for lam in np.linalg.eigvals(lap).real)
        assert SemanticEigValLaplacian(similarity=_fixed([a]))(stats)[0] == pytest.approx(want_eig, abs=1e-9)
        assert DegMat(similarity=_fixed([a]))(stats)[0] == pytest.approx(np.trace(k - np.diag(w.sum(1))) / k**2)
        vals, vecs = eigh(lap)  # LM-Polygraph's eccentricity, step by step
        kept = vecs[:, vals < 0.9].T
        want_ecc = np.linalg.norm(np.asarray([-np.linalg.norm(x - x.mean(0), 2) for x in kept]), 2)
        assert Eccentricity(similarity=_fixed([a]))(stats)[0] == pytest.approx(want_ecc, abs=1e-9)


def test_matrix_stat_matches_assay_uncertainty_eigval_laplacian():
    from assay_uncertainty.estimators import EigValLaplacian

    rng = np.random.default_rng(3)
    mats = [rng.uniform(0, 1, (k, k)) for k in (3, 4)]
    est = SemanticEigValLaplacian(matrix_stat="similarity_matrix")
    assert est.dependencies == ("similarity_matrix",)
    got = est({"similarity_matrix": mats})
    np.testing.assert_allclose(got, EigValLaplacian()({"similarity_matrix": mats}), atol=1e-12)


def test_negative_similarities_are_no_edges():
    s = np.full((3, 3), -0.5)
    np.fill_diagonal(s, 1.0)  # W = I: three isolated answers
    stats = _texts(3)
    assert SemanticEigValLaplacian(similarity=_fixed([s]))(stats)[0] == pytest.approx(3.0)
    assert DegMat(similarity=_fixed([s]))(stats)[0] == pytest.approx(1 - 3 / 9)


def test_rouge_l_similarity():
    stats = {"sample_texts": [["the cat", "The cat", "a dog runs"]]}
    assert NumSemSets(similarity="rougeL")(stats)[0] == 2  # case-folded ROUGE-L: 1, 1 | 0
    assert DegMat(similarity="rougeL")(stats)[0] == pytest.approx(1 - 5 / 9)


@pytest.mark.parametrize("matrix, match", [
    (np.array([[1.0, np.nan], [0.2, 1.0]]), r"example 0 holds nan at \[0, 1\]"),
    (np.ones((3, 3)), r"shape \(3, 3\); expected \(2, 2\)"),
    (np.ones(4), "shape"),
    ([["a", "b"], ["c", "d"]], "not numeric"),
])
def test_bad_similarity_matrices_are_errors_naming_the_example(matrix, match):
    with pytest.raises(InvalidParameterError, match=match):
        NumSemSets(similarity=lambda texts: matrix)(_texts(2))


@pytest.mark.parametrize("stats, match", [
    ({"sample_texts": ["just a string"]}, r"sample_texts\[0\] must be a list"),
    ({"sample_texts": [["a", 3]]}, r"sample_texts\[0\]\[1\] must be a str"),
])
def test_bad_sample_texts(stats, match):
    with pytest.raises(InvalidParameterError, match=match):
        DegMat(similarity="rougeL")(stats)


def test_bad_options():
    with pytest.raises(InvalidParameterError, match="similarity"):
        NumSemSets(similarity="cosine")
    with pytest.raises(InvalidParameterError, match="takes no 'threshold'"):
        DegMat(similarity="rougeL", threshold=0.5)
    with pytest.raises(InvalidParameterError, match="threshold"):
        NumSemSets(similarity="rougeL", threshold=float("nan"))
    with pytest.raises(InvalidParameterError, match="batch_size"):
        DegMat(similarity="rougeL", batch_size=0)
    with pytest.raises(InvalidParameterError, match="likelihoods"):
        SemanticEntropy(similarity="rougeL", likelihoods="yes")
    with pytest.raises(InvalidParameterError, match="matrix_stat"):
        DegMat(matrix_stat="")
    with pytest.raises(InvalidParameterError, match="model"):
        DegMat(model=42)


def test_a_matrix_of_the_wrong_shape_from_a_stat_is_an_error():
    with pytest.raises(InvalidParameterError, match="example 1"):
        DegMat(matrix_stat="similarity_matrix")({"similarity_matrix": [np.ones((2, 2)), np.ones((2, 3))]})


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 7), seed=st.integers(0, 2**32 - 1))
def test_graph_estimators_do_not_depend_on_the_order_of_the_samples(k, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-0.2, 1.0, (k, k))
    np.fill_diagonal(a, 1.0)
    perm = rng.permutation(k)
    b = a[np.ix_(perm, perm)]
    stats = _texts(k)
    for cls in (NumSemSets, SemanticEigValLaplacian, DegMat, Eccentricity):
        x, y = cls(similarity=_fixed([a]))(stats)[0], cls(similarity=_fixed([b]))(stats)[0]
        assert x == pytest.approx(y, abs=1e-7), cls.name
