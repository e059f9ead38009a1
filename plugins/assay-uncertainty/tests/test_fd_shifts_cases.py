"""fd-shifts' published risk-coverage test cases hold under ``convention="fd-shifts"``.

Expected values: fd-shifts ``fd_shifts/tests/utils.py`` (``RC_STATS_TEST_CASES``, IML-DKFZ/fd-shifts,
``SC_test`` with ``AUC_DISPLAY_SCALE = 1``): AURC with linear interpolation, the achievable AURC with
fd-shifts' non-linear interpolation over the dominant points, E-AURC against fd-shifts' optimal AURC
(analytic for binary residuals, every example its own point otherwise), AUGRC. The inputs below are
the cases' definitions (100 examples; the confidences ``c`` are fd-shifts' ``confids``, higher = more
confident; ``p`` is the correctness, residual ``1 - p``). They were also checked by running fd-shifts'
``RiskCoverageStatsMixin`` on the same arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

from assay.plugins import load_ue_metric
from assay_uncertainty import risk_coverage as rc

N = 100
_rng = np.random.default_rng(0)
C = {
    "c_all_equal": np.full(N, 0.37),
    "c_alternating_01": np.arange(N) % 2,
    "c_alternating_10": (np.arange(N) + 1) % 2,
    "c_ascending": np.linspace(0.0, 1.0, N),
    "c_ascending_unnormalized": np.arange(-(N // 2), N // 2),
    "c_plateaus": np.repeat([0.2, 0.4, 0.6, 0.8], N // 4),
}
P = {
    "p_all_one": np.ones(N),
    "p_all_zero": np.zeros(N),
    "p_alternating_01": np.arange(N) % 2,
    # the alternating correctness shuffled inside each confidence plateau: no value may change
    "p_plateau_permutation": np.concatenate([_rng.permutation((np.arange(N) % 2)[i * 25:(i + 1) * 25])
                                             for i in range(4)]),
    "p_ascending": np.linspace(0.0, 1.0, N),
    "p_plateaus": np.repeat([0.2, 0.4, 0.6, 0.8], N // 4),
}

#: (id, confidences, correctness, (aurc, eaurc, aurc_achievable, eaurc_achievable, augrc))
CASES = [
    ("confid-all-equal_p-all-one", "c_all_equal", "p_all_one",
     (0.0, 0.0, 0.0, 0.0, 0)),
    ("confid-all-equal_p-all-zero", "c_all_equal", "p_all_zero",
     (1.0, 0.0, 1.0, 0.0, 0.5)),
    ("confid-all-equal_p-01", "c_all_equal", "p_alternating_01",
     (0.5, 0.3465735902799724, 0.5, 0.3465735902799724, 0.25)),
    ("confid-all-equal_p-asc", "c_all_equal", "p_ascending",
     (0.5, 0.2524999999999986, 0.5, 0.2524999999999986, 0.24999999999999997)),
    ("confid-all-equal_p-plateau", "c_all_equal", "p_plateaus",
     (0.5, 0.1817914679883058, 0.5, 0.1817914679883058, 0.25000000000000017)),
    ("confid-01_p-all-one", "c_alternating_01", "p_all_one",
     (0.0, 0.0, 0.0, 0.0, 0)),
    ("confid-01_p-all-zero", "c_alternating_01", "p_all_zero",
     (1.0, 0.0, 1.0, 0.0, 0.5)),
    ("confid-01_p-01", "c_alternating_01", "p_alternating_01",
     (0.125, -0.02842640972002758, 0.15342640972002733, 0, 0.125)),
    ("confid-01_p-asc", "c_alternating_01", "p_ascending",
     (0.49621212121212127, 0.24871212121211994, 0.4964992566638387, 0.24899925666383738, 0.24873737373737373)),
    ("confid-01_p-plateau", "c_alternating_01", "p_plateaus",
     (0.49699999999999944, 0.17879146798830492, 0.4972274112777597, 0.1790188792660652, 0.24899999999999978)),
    ("confid-10_p-all-one", "c_alternating_10", "p_all_one",
     (0.0, 0.0, 0.0, 0.0, 0)),
    ("confid-10_p-all-zero", "c_alternating_10", "p_all_zero",
     (1.0, 0.0, 1.0, 0.0, 0.5)),
    ("confid-10_p-01", "c_alternating_10", "p_alternating_01",
     (0.875, 0.7215735902799725, 0.5, 0.3465735902799724, 0.375)),
    ("confid-10_p-asc", "c_alternating_10", "p_ascending",
     (0.503787878787879, 0.2562878787878777, 0.5035007433361615, 0.25600074333616013, 0.25126262626262635)),
    ("confid-10_p-plateau", "c_alternating_10", "p_plateaus",
     (0.5029999999999994, 0.18479146798830492, 0.5027725887222393, 0.18456405671054477, 0.2509999999999998)),
    ("confid-asc_p-all-one", "c_ascending", "p_all_one",
     (0.0, 0.0, 0.0, 0.0, 0)),
    ("confid-asc_p-all-zero", "c_ascending", "p_all_zero",
     (1.0, 0.0, 1.0, 0.0, 0.5)),
    ("confid-asc_p-01", "c_ascending", "p_alternating_01",
     (0.48281112575762547, 0.3293847160375979, 0.4719992328225763, 0.3185728231025487, 0.2475)),
    ("confid-asc_p-asc", "c_ascending", "p_ascending",
     (0.24750000000000133, 0, 0.24753863826243439, 3.8638262433055015e-05, 0.16583333333333353)),
    ("confid-asc_p-plateau", "c_ascending", "p_plateaus",
     (0.3182085320116945, 0.0, 0.31821825302024953, 9.721008555008126e-06, 0.18750000000000108)),
    ("confid-asc-u_p-all-one", "c_ascending_unnormalized", "p_all_one",
     (0.0, 0.0, 0.0, 0.0, 0)),
    ("confid-asc-u_p-all-zero", "c_ascending_unnormalized", "p_all_zero",
     (1.0, 0.0, 1.0, 0.0, 0.5)),
    ("confid-asc-u_p-01", "c_ascending_unnormalized", "p_alternating_01",
     (0.48281112575762547, 0.3293847160375979, 0.4719992328225763, 0.3185728231025487, 0.2475)),
    ("confid-asc-u_p-asc", "c_ascending_unnormalized", "p_ascending",
     (0.24750000000000133, 0, 0.24753863826243439, 3.8638262433055015e-05, 0.16583333333333353)),
    ("confid-asc-u_p-plateau", "c_ascending_unnormalized", "p_plateaus",
     (0.3182085320116945, 0.0, 0.31821825302024953, 9.721008555008126e-06, 0.18750000000000108)),
    ("confid-plateaus_p-all-one", "c_plateaus", "p_all_one",
     (0.0, 0.0, 0.0, 0.0, 0)),
    ("confid-plateaus_p-all-zero", "c_plateaus", "p_all_zero",
     (1.0, 0.0, 1.0, 0.0, 0.5)),
    ("confid-plateaus_p-01", "c_plateaus", "p_alternating_01",
     (0.49083333333333334, 0.33740692361330576, 0.4887532971076239, 0.3353268873875963, 0.2475)),
    ("confid-plateaus_p-plateau-perm", "c_plateaus", "p_plateau_permutation",
     (0.49083333333333334, 0.33740692361330576, 0.4887532971076239, 0.3353268873875963, 0.2475)),
    ("confid-plateaus_p-asc", "c_plateaus", "p_ascending",
     (0.2632575757575754, 0.015757575757574083, 0.27047759219727724, 0.02297759219727591, 0.17108585858585845)),
    ("confid-plateaus_p-plateau", "c_plateaus", "p_plateaus",
     (0.31250000000000255, -0.005708532011691969, 0.31821825302024637, 9.72100855184399e-06, 0.18750000000000097)),
]

FUNCTIONS = {
    "aurc": lambda u, q: rc.aurc(u, q, convention="fd-shifts"),
    "eaurc": lambda u, q: rc.e_aurc(u, q, convention="fd-shifts"),
    "aurc_achievable": rc.aurc_achievable,
    "eaurc_achievable": rc.e_aurc_achievable,
    "augrc": rc.augrc,
}
METRICS = {"aurc": "aurc[convention=fd-shifts]", "eaurc": "e_aurc[convention=fd-shifts]",
           "aurc_achievable": "aurc_achievable", "eaurc_achievable": "e_aurc_achievable", "augrc": "augrc"}


KEYS = ("aurc", "eaurc", "aurc_achievable", "eaurc_achievable", "augrc")


@pytest.mark.parametrize("case_id, c, p, expected", CASES, ids=[case[0] for case in CASES])
def test_fd_shifts_rc_stats_test_cases(case_id, c, p, expected):
    u = -np.asarray(C[c], dtype=np.float64)  # assay: higher = more uncertain
    q = np.asarray(P[p], dtype=np.float64)
    for key, value in zip(KEYS, expected, strict=True):
        assert FUNCTIONS[key](u, q) == pytest.approx(value, abs=1e-9), key
        # the registered metrics give the same numbers
        assert load_ue_metric(METRICS[key])(u, q) == pytest.approx(value, abs=1e-9), key


def test_tied_risks_are_separate_points_of_the_fd_shifts_optimum_only():
    """confid-plateaus_p-plateau: a ranking that matches the risk plateaus is optimal under the
    tie-grouped optimum (E-AURC 0 under torch-uncertainty), below fd-shifts' per-example optimum."""
    u, q = -C["c_plateaus"].astype(float), P["p_plateaus"].astype(float)
    # fd-shifts' optimum by hand: R_k = (sum of the k smallest risks) / k at every k, trapezoid,
    # plus the flat segment from coverage 0 at R_1
    r = np.sort(1 - q)
    risk = np.cumsum(r) / np.arange(1, N + 1)
    optimum = np.sum((risk[1:] + risk[:-1]) / 2) / N + risk[0] / N
    assert rc.e_aurc(u, q, convention="fd-shifts") == pytest.approx(rc.aurc(u, q) - optimum, abs=1e-12)
    assert rc.e_aurc(u, q, convention="fd-shifts") < 0
    assert rc.e_aurc(u, q, convention="torch-uncertainty") == pytest.approx(0.0, abs=1e-12)


def test_achievable_aurc_of_a_hand_example():
    """Four examples, confidence order: ok, fail, ok, fail. ROC (fail = negative): (0, .5), (.5, .5),
    (.5, 1), (1, 1); upper hull from (0, 0): (0, .5), (.5, 1), (1, 1), so the dominant curve points keep
    1, 3 and 4 examples with 0, 1 and 2 failures. Area: 0 from coverage 0 to 1/4, then
    E(c) = (c - 1) / 2 on [1, 3]: integral of (c - 1) / (2c) = 1 - ln(3) / 2, then
    E(c) = c - 2 on [3, 4]: integral of (c - 2) / c = 1 - 2 ln(4/3); all divided by N = 4."""
    u = np.array([1.0, 2.0, 3.0, 4.0])
    q = np.array([1.0, 0.0, 1.0, 0.0])
    expected = (1 - np.log(3) / 2 + 1 - 2 * np.log(4 / 3)) / 4
    assert rc.aurc_achievable(u, q) == pytest.approx(expected, abs=1e-12)
    assert rc.e_aurc_achievable(u, q) == pytest.approx(expected - (0.5 + 0.5 * np.log(0.5)), abs=1e-12)
