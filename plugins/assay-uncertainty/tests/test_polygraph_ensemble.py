"""LM-Polygraph 0.7.0's ensemble measures (EPT* / PET* / EPS* / PES*), run live on the same statistics (issue 28)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from assay.errors import InvalidParameterError
from assay_uncertainty.estimators_lmp_ensemble import ENSEMBLE_SEQUENCE_CLASSES, ENSEMBLE_TOKEN_CLASSES

N, M, B = 7, 4, 5


def _token_scores(rng, as_torch):
    def block():
        d = {k: rng.uniform(0, 3, (N, B)) for k in ("total_uncertainty", "data_uncertainty", "mutual_information",
                                                     "rmi", "epkl", "entropy_top5", "entropy_top10", "entropy_top15")}
        d["log_probas"] = rng.uniform(-30, -0.1, (N, M, B))
        return d

    w = rng.dirichlet(np.ones(B), N)
    return {"ensemble_token_scores": {"weights": torch.tensor(w) if as_torch else w,
                                      "pe_token_level_scores": block(), "ep_token_level_scores": block()}}


@pytest.fixture(scope="module")
def lp_token(lm_polygraph):
    return lm_polygraph("estimators.ensemble_token_measures")


@pytest.fixture(scope="module")
def lp_sequence(lm_polygraph):
    return lm_polygraph("estimators.ensemble_sequence_measures")


def test_sixteen_token_classes_and_six_sequence_classes_are_lm_polygraphs(lp_token, lp_sequence):
    theirs = {str(e) for e in lp_token.all_token_estimators()}
    assert set(ENSEMBLE_TOKEN_CLASSES) == theirs and len(theirs) == 16
    assert set(ENSEMBLE_SEQUENCE_CLASSES) == {"EPStu", "EPSrmi", "EPSrmiabs", "PEStu", "PESrmi", "PESrmiabs"}


@pytest.mark.parametrize("as_torch", [False, True])
@pytest.mark.parametrize("cls_name", sorted(ENSEMBLE_TOKEN_CLASSES))
def test_token_measure_equals_lm_polygraph(lp_token, cls_name, as_torch):
    stats = _token_scores(np.random.default_rng(11), as_torch)
    ours = ENSEMBLE_TOKEN_CLASSES[cls_name]()(stats)
    theirs = np.asarray(getattr(lp_token, cls_name)()(stats), dtype=np.float64)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
    assert ours.shape == (N,)


@pytest.mark.parametrize("cls_name", sorted(ENSEMBLE_SEQUENCE_CLASSES))
def test_sequence_measure_equals_lm_polygraph(lp_sequence, cls_name):
    rng = np.random.default_rng(5)
    stats = _token_scores(rng, False)
    # a beam the members give -inf to and very unequal members: the log-sum-exp stays exact
    stats["ensemble_token_scores"]["ep_token_level_scores"]["log_probas"][0, :, 1] = -np.inf
    stats["ensemble_token_scores"]["pe_token_level_scores"]["log_probas"][1, 0, :] = -200.0
    with np.errstate(all="ignore"):
        theirs = np.asarray(getattr(lp_sequence, cls_name)()(stats), dtype=np.float64)
        ours = ENSEMBLE_SEQUENCE_CLASSES[cls_name]()(stats)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)


def test_a_hand_computed_sequence_measure():
    # one example, two members, two beams: members' probabilities (0.5, 0.25) and (0.25, 0.25)
    lp = np.log([[[0.5, 0.25], [0.25, 0.25]]])
    ens = np.array([0.375, 0.25])
    v = ens / ens.sum()
    stats = {"ensemble_token_scores": {"weights": np.ones((1, 2)),
                                       "ep_token_level_scores": {"log_probas": lp}}}
    assert ENSEMBLE_SEQUENCE_CLASSES["EPStu"]()(stats)[0] == pytest.approx(-(v * ens).sum())
    rmi = np.mean([(v * (np.log(ens) - lp[0, m])).sum() for m in range(2)])
    assert ENSEMBLE_SEQUENCE_CLASSES["EPSrmi"]()(stats)[0] == pytest.approx(rmi)


def test_a_statistic_without_the_posterior_is_an_error_naming_it():
    with pytest.raises(InvalidParameterError, match="pe_token_level_scores"):
        ENSEMBLE_TOKEN_CLASSES["PETtu"]()({"ensemble_token_scores": {"weights": np.ones((1, 1))}})


def test_one_dict_per_example_gives_lm_polygraphs_values(lp_token, lp_sequence):
    stats = _token_scores(np.random.default_rng(13), False)
    data = stats["ensemble_token_scores"]
    per_example = [{"weights": data["weights"][i],
                    **{key: {m: v[i] for m, v in data[key].items()} for key in ("ep_token_level_scores",
                                                                                 "pe_token_level_scores")}}
                   for i in range(N)]
    for name, cls in {**ENSEMBLE_TOKEN_CLASSES, **ENSEMBLE_SEQUENCE_CLASSES}.items():
        module = lp_token if name in ENSEMBLE_TOKEN_CLASSES else lp_sequence
        theirs = np.asarray(getattr(module, name)()(stats), dtype=np.float64)
        np.testing.assert_allclose(cls()({"ensemble_token_scores": per_example}), theirs, rtol=0, atol=1e-6)
