"""LM-Polygraph 0.7.0's claim-level estimators, each run live against assay's on the same statistics.

Random statistics (fixed seeds) with LM-Polygraph's names and shapes, and claims as
LM-Polygraph's ``Claim`` (``aligned_token_ids``: a random subset of the generated tokens, some
examples without claims); values agree to 1e-6. LM-Polygraph's ``claim_conditioned_probability``
and ``frequency_scoring`` modules import ``Claim`` from ``stat_calculators.extract_claims``, which
imports the OpenAI client and LM-Polygraph's model zoo (not installed): while they load, a module
holding a ``Claim`` dataclass with the same three fields stands in for it (the estimators use
the name in type hints only). AttentionScoreClaim reads the layer from a model config folder:
a ``transformers`` GPT-2 config saved to ``tmp_path`` (no download).
"""

from __future__ import annotations

import dataclasses
import pathlib
import sys
import types

import numpy as np
import pytest
import torch
from boostedprob import calculate_boostedprob
from transformers import GPT2Config

import assay
from assay.errors import InvalidParameterError
from assay.uncertainty import UEManager
from assay_uncertainty import estimators_claim as ec
from assay_uncertainty import estimators_focus as ef
from assay_uncertainty import plugin_claim

N, V = 8, 30


@dataclasses.dataclass
class Claim:  # LM-Polygraph's lm_polygraph.stat_calculators.extract_claims.Claim, field for field
    claim_text: str
    sentence: str
    aligned_token_ids: list


def _log_softmax(x):
    x = np.asarray(x, dtype=np.float64)
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def _claims(rng, lengths):
    out = []
    for k in lengths:
        n_claims = int(rng.integers(0, 4))
        out.append([Claim(f"c{j}", "s", sorted(rng.choice(k, size=int(rng.integers(1, k + 1)), replace=False).tolist()))
                    for j in range(n_claims)])
    return out


def _stats(seed=0, n=N, vocab=V):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 9, n)
    glp = [_log_softmax(rng.normal(0, 3, (k, vocab))) for k in lengths]
    toks = [g.argmax(-1) for g in glp]
    claims = _claims(rng, lengths)
    claims[0] = claims[0] or [Claim("c", "s", [0])]  # at least one claim, and one example without (below)
    claims[-1] = []
    return {
        "greedy_log_probs": glp,
        "greedy_tokens": [list(t) for t in toks],
        "greedy_log_likelihoods": [g[np.arange(len(t)), t] for g, t in zip(glp, toks)],
        "greedy_lm_log_likelihoods": [np.log(rng.uniform(0.01, 1, k)) for k in lengths],
        "entropy": [rng.uniform(0.0, 3.0, k) for k in lengths],
        "token_similarity": [rng.uniform(0.0, 0.9, k) for k in lengths],
        "claims": claims,
    }


def _same(ours, theirs):
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(o, dtype=np.float64), np.asarray(t, dtype=np.float64),
                                   rtol=0, atol=1e-6)


def _copy(stats):
    return {k: [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in col] for k, col in stats.items()}


@pytest.fixture(scope="module")
def claim_module(lm_polygraph):
    """``lm_polygraph.estimators.claim.<name>``, with the stand-in ``extract_claims`` while it loads."""

    def load(name):
        added = []
        for pkg in ("lm_polygraph.stat_calculators",):
            if pkg not in sys.modules:
                sys.modules[pkg] = types.ModuleType(pkg)
                sys.modules[pkg].__path__ = []
                added.append(pkg)
        stand_in = types.ModuleType("lm_polygraph.stat_calculators.extract_claims")
        stand_in.Claim = Claim
        key = "lm_polygraph.stat_calculators.extract_claims"
        before = sys.modules.get(key)
        sys.modules[key] = stand_in
        try:
            return lm_polygraph(f"estimators.claim.{name}")
        finally:
            if before is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = before
            for pkg in added:
                sys.modules.pop(pkg, None)

    return load


@pytest.mark.parametrize(("module", "cls_name"), [
    ("max_probability", "MaximumClaimProbability"),
    ("perplexity", "PerplexityClaim"),
    ("token_entropy", "MaxTokenEntropyClaim"),
    ("pointwise_mutual_information", "PointwiseMutualInformationClaim"),
    ("self_certainty", "SelfCertaintyClaim"),
    ("token_sar", "TokenSARClaim"),
])
@pytest.mark.parametrize("seed", [1, 2])
def test_claim_estimator_equals_lm_polygraph(claim_module, module, cls_name, seed):
    stats = _stats(seed)
    ours = getattr(ec, cls_name)()(stats)
    assert [len(o) for o in ours] == [len(c) for c in stats["claims"]]
    theirs = getattr(claim_module(module), cls_name)()(_copy(stats))  # PMI-claim writes into its input
    _same(ours, theirs)


def test_self_certainty_claim_leaves_out_minus_infinity_as_lm_polygraph_does(claim_module):
    stats = _stats(3)
    for g in stats["greedy_log_probs"]:
        g[:, :5] = -np.inf
    _same(ec.SelfCertaintyClaim()(stats), claim_module("self_certainty").SelfCertaintyClaim()(stats))


def test_pmi_claim_leaves_its_input_alone():
    stats = _stats(4)
    before = [np.array(v) for v in stats["greedy_lm_log_likelihoods"]]
    ec.PointwiseMutualInformationClaim()(stats)
    for a, b in zip(stats["greedy_lm_log_likelihoods"], before):
        np.testing.assert_array_equal(a, b)


def test_perplexity_claim_by_hand():
    stats = {"greedy_log_likelihoods": [np.log([0.5, 0.25, 0.125])],
             "claims": [[{"aligned_token_ids": [0, 2]}, Claim("c", "s", [1])]]}
    got = ec.PerplexityClaim()(stats)[0]
    np.testing.assert_allclose(got, [(np.log(2) + np.log(8)) / 2, np.log(4)])
    np.testing.assert_allclose(ec.MaximumClaimProbability()(stats)[0], [np.log(16), np.log(4)])


def test_a_claim_without_tokens_is_nan_with_a_warning():
    stats = {"greedy_log_likelihoods": [[-1.0, -2.0]], "claims": [[Claim("c", "s", []), Claim("d", "s", [1])]]}
    with pytest.warns(UserWarning, match="claim 0 has no tokens"):
        got = ec.PerplexityClaim()(stats)[0]
    np.testing.assert_allclose(got, [np.nan, 2.0])


def test_a_ccp_claim_without_tokens_is_nan_with_a_warning():
    alts = [[[(3, np.log(0.6)), (4, np.log(0.4))]]]
    stats = {"claims": [[Claim("c", "s", []), Claim("d", "s", [0])]], "greedy_tokens_alternatives": alts,
             "greedy_tokens_alternatives_nli": [[[["", "contra"], ["contra", ""]]]],
             "greedy_tokens_alternatives_fact_pref_nli": [[[], [[["", "contra"], ["contra", ""]]]]]}
    for context in ("no_context", "fact_pref"):
        with pytest.warns(UserWarning, match="claim 0 has no tokens"):
            got = ec.ClaimConditionedProbabilityClaim(nli_context=context)(stats)[0]
        np.testing.assert_allclose(got, [np.nan, -0.6])  # alternative 1 contradicts: CCP = 0.6 / (0.6 + 0.4)


def test_a_token_index_past_the_answer_is_an_error():
    stats = {"greedy_log_likelihoods": [[-1.0, -2.0]], "claims": [[Claim("c", "s", [0, 2])]]}
    with pytest.raises(InvalidParameterError, match="example 0, claim 0: token index 2 is past"):
        ec.PerplexityClaim()(stats)
    with pytest.raises(InvalidParameterError, match="must have 'aligned_token_ids'"):
        ec.PerplexityClaim()({"greedy_log_likelihoods": [[-1.0]], "claims": [[{"tokens": [0]}]]})


# --------------------------------------------------------------------------------------- BoostedProb
def test_boosted_prob_claim_equals_boostedprob_per_example(claim_module):
    stats = _stats(5)
    ours = ec.BoostedProbClaim()(stats)
    for o, z, toks, claims in zip(ours, stats["greedy_log_probs"], stats["greedy_tokens"], stats["claims"]):
        b = calculate_boostedprob(torch.tensor(z), torch.tensor(toks)).numpy()
        _same([o], [[-np.mean(b[c.aligned_token_ids]) for c in claims]])


def test_lm_polygraphs_boosted_prob_claim_fails_on_a_batch_as_documented(claim_module):
    # it passes the whole batch's greedy_tokens with each example's (T, V) log-probabilities
    stats = _stats(5, n=1)
    with pytest.raises(RuntimeError):
        claim_module("boostedprob_score").BoostedProbClaim()(stats)


# --------------------------------------------------------------------------------------- attention
def _attention(rng, layers, heads, size):
    w = np.tril(rng.uniform(0.05, 1.0, (layers, heads, size, size)))
    return w / w.sum(-1, keepdims=True)


@pytest.mark.parametrize("padded", [False, True])
def test_attention_score_claim_equals_lm_polygraph(claim_module, tmp_path, padded):
    GPT2Config(n_layer=5, n_head=2, n_embd=8).save_pretrained(tmp_path)
    rng = np.random.default_rng(6)
    stats = _stats(6)
    sizes = [len(t) + int(rng.integers(2, 5)) for t in stats["greedy_tokens"]]
    atts = [_attention(rng, 5, 2, s) for s in sizes]
    if padded:  # LM-Polygraph's batch: NaN-padded to the longest
        top = max(sizes)
        out = []
        for a in atts:
            p = np.full((5, 2, top, top), np.nan)
            p[:, :, : a.shape[2], : a.shape[3]] = a
            out.append(p)
        atts = out
    stats["forwardpass_attention_weights"] = atts
    theirs = claim_module("attention_score").AttentionScoreClaim(model_name=str(tmp_path))(stats)
    ours = ec.AttentionScoreClaim(model_name=str(tmp_path))
    assert ours.layer == 2
    _same(ours(stats), theirs)
    _same(ec.AttentionScoreClaim(layer=2)(stats), theirs)
    with pytest.raises(InvalidParameterError, match="must be a local model folder"):
        ec.AttentionScoreClaim(model_name="gpt2")


# --------------------------------------------------------------------------------------- P(True), random
def test_p_true_claim_equals_lm_polygraph_in_both_layouts(claim_module):
    stats = _stats(7)
    counts = [len(c) for c in stats["claims"]]
    flat = np.log(np.random.default_rng(7).uniform(0.01, 1, sum(counts)))
    theirs = claim_module("p_true").PTrueClaim()({**stats, "p_true_claim": list(flat)})
    _same(ec.PTrueClaim()({**stats, "p_true_claim": list(flat)}), theirs)
    nested = [list(p) for p in np.split(flat, np.cumsum(counts)[:-1])]
    _same(ec.PTrueClaim()({**stats, "p_true_claim": nested}), theirs)
    with pytest.raises(InvalidParameterError, match="values for the batch's"):
        ec.PTrueClaim()({**stats, "p_true_claim": list(flat[:-1])})


def test_random_baseline_claim_equals_lm_polygraph_under_the_same_global_seed(claim_module):
    stats = _stats(8)
    np.random.seed(123)
    theirs = claim_module("random_baseline").RandomBaselineClaim()(stats)
    np.random.seed(123)
    _same(ec.RandomBaselineClaim()(stats), theirs)
    state = np.random.get_state()[1].copy()
    a, b = ec.RandomBaselineClaim(seed=4)(stats), ec.RandomBaselineClaim(seed=4)(stats)
    _same(a, b)
    np.testing.assert_array_equal(np.random.get_state()[1], state)  # its own generator


# --------------------------------------------------------------------------------------- NLI-based
_LABELS = ("entail", "neutral", "contra")


def _nli_to_samples(rng, claims, k=5):
    return [[[dict(zip(_LABELS, rng.dirichlet(np.ones(3)).tolist())) for _ in range(k)] for _ in ex]
            for ex in claims]


def test_frequency_scoring_claim_equals_lm_polygraph(claim_module):
    rng = np.random.default_rng(9)
    stats = _stats(9)
    stats["nli_to_sample_texts"] = _nli_to_samples(rng, stats["claims"])
    theirs = claim_module("frequency_scoring").FrequencyScoringClaim()(stats)
    _same(ec.FrequencyScoringClaim()(stats), theirs)


def test_frequency_scoring_claim_by_hand():
    pairs = [{"entail": 0.7, "neutral": 0.2, "contra": 0.1}, {"entail": 0.1, "neutral": 0.1, "contra": 0.8},
             {"entail": 0.1, "neutral": 0.5, "contra": 0.4}, {"entail": 0.1, "neutral": 0.1, "contra": 0.8}]
    got = ec.FrequencyScoringClaim()({"claims": [[Claim("c", "s", [0])]], "nli_to_sample_texts": [[pairs]]})
    np.testing.assert_allclose(got[0], [2 - 1])


def _alternatives(rng, stats, n_alt=4, words=False):
    vocab = ["the", "a", "Paris", "Rome", "of", "city", "is", "big"]
    alts, nli = [], []
    for toks in stats["greedy_tokens"]:
        ex_alts, ex_nli = [], []
        for _ in toks:
            ids = rng.choice(V, size=n_alt, replace=False)
            lps = np.sort(np.log(rng.dirichlet(np.ones(n_alt + 1))[:n_alt]))[::-1]
            ex_alts.append([(vocab[int(t) % len(vocab)] if words else int(t), float(lp)) for t, lp in zip(ids, lps)])
            mat = [["" for _ in range(n_alt)] for _ in range(n_alt)]
            for a in range(n_alt):
                mat[0][a], mat[a][0] = rng.choice(_LABELS), rng.choice(_LABELS)
            ex_nli.append(mat)
        alts.append(ex_alts)
        nli.append(ex_nli)
    return alts, nli


def _stop(t):
    return t in ("the", "a", "of", "is", 3, 7)


@pytest.mark.parametrize("words", [False, True])
def test_ccp_claim_no_context_equals_lm_polygraph(claim_module, words):
    rng = np.random.default_rng(10)
    stats = _stats(10)
    stats["greedy_tokens_alternatives"], stats["greedy_tokens_alternatives_nli"] = _alternatives(rng, stats,
                                                                                                 words=words)
    cls = claim_module("claim_conditioned_probability").ClaimConditionedProbabilityClaim
    _same(ec.ClaimConditionedProbabilityClaim(is_stopword=_stop)(stats), cls(is_stopword=_stop)(stats))
    if not words:  # token ids: LM-Polygraph's default finds no id among NLTK's words; ours does not read the corpus
        _same(ec.ClaimConditionedProbabilityClaim()(stats), cls(is_stopword=lambda t: False)(stats))


def test_ccp_claim_fact_pref_equals_lm_polygraph(claim_module):
    rng = np.random.default_rng(11)
    stats = _stats(11)
    alts, _ = _alternatives(rng, stats, words=True)
    stats["greedy_tokens_alternatives"] = alts
    per_claim = []
    for ex_claims, ex_alts in zip(stats["claims"], alts):
        per_claim.append([[_alternatives(rng, {"greedy_tokens": [[0]]}, n_alt=len(ex_alts[0]))[1][0][0]
                           for _ in c.aligned_token_ids] for c in ex_claims])
    stats["greedy_tokens_alternatives_fact_pref_nli"] = per_claim
    cls = claim_module("claim_conditioned_probability").ClaimConditionedProbabilityClaim
    theirs = cls(nli_context="fact_pref", is_stopword=_stop)(stats)
    ours = ec.ClaimConditionedProbabilityClaim(nli_context="fact_pref", is_stopword=_stop)
    assert ours.dependencies == ("claims", "greedy_tokens_alternatives", "greedy_tokens_alternatives_fact_pref_nli")
    _same(ours(stats), theirs)
    with pytest.raises(InvalidParameterError, match="nli_context"):
        ec.ClaimConditionedProbabilityClaim(nli_context="claim")


def test_ccp_claim_by_hand():
    # greedy p=0.5 entails itself, alt 1 (p=0.3) entails, alt 2 (p=0.2) contradicts: CCP = 0.8 / 1.0
    alts = [[[("Paris", np.log(0.5)), ("paris", np.log(0.3)), ("Rome", np.log(0.2))]]]
    nli = [[[["", "entail", "contra"], ["neutral", "", ""], ["contra", "", ""]]]]
    stats = {"claims": [[Claim("c", "s", [0])]], "greedy_tokens_alternatives": alts,
             "greedy_tokens_alternatives_nli": nli}
    np.testing.assert_allclose(ec.ClaimConditionedProbabilityClaim(is_stopword=lambda t: False)(stats)[0], [-0.8])
    # a stopword: every alternative entails
    np.testing.assert_allclose(ec.ClaimConditionedProbabilityClaim(is_stopword=lambda t: True)(stats)[0], [-1.0])


def test_claims_from_spans_feed_the_claim_estimators():
    stats = {"claim_spans": [[[0, 2], [2, 3]], []], "greedy_log_likelihoods": [[-1.0, -2.0, -4.0], [-1.0]]}
    stats.update(ec.ClaimsFromSpans()(stats))
    assert stats["claims"] == [[{"aligned_token_ids": [0, 1]}, {"aligned_token_ids": [2]}], []]
    got = ec.MaximumClaimProbability()(stats)
    np.testing.assert_allclose(got[0], [3.0, 4.0])
    assert got[1].size == 0


def test_the_manager_runs_claim_estimators_by_both_names_on_assays_claim_data():
    recs = [{"log_probs": [-0.1, -0.2], "correct": 1, "claim_spans": [[0, 1], [1, 2]], "claim_correct": [1, 0]},
            {"log_probs": [-1.0], "correct": 0, "claim_spans": [[0, 1]], "claim_correct": [0]},
            {"log_probs": [-0.5, -0.3, -0.9], "correct": 1, "claim_spans": [[0, 3]], "claim_correct": [1]}]
    man = UEManager(recs, estimators=["perplexity_claim", "MaximumClaimProbability"], gen_metrics=["claim_accuracy"],
                    ue_metrics=["roc_auc"])
    man()
    got = man.estimations[("claim", "perplexity_claim")]
    np.testing.assert_allclose(np.concatenate(got), [0.1, 0.2, 1.0, (0.5 + 0.3 + 0.9) / 3])
    np.testing.assert_allclose(np.concatenate(man.estimations[("claim", "MaximumClaimProbability")]),
                               [0.1, 0.2, 1.0, 1.7])
    # uncertainty 0.1, 0.2, 1.0, 0.567 for correct 1, 0, 0, 1: of the 4 (wrong, correct) pairs the wrong claim is
    # the more uncertain in 3 (0.2 > 0.1, 1.0 > 0.1, 1.0 > 0.567)
    assert man.metrics[("claim", "perplexity_claim", "claim_accuracy", "roc_auc")] == pytest.approx(0.75)


_REGISTERED = [c for c, _, _ in plugin_claim._CLASSES] + [ef.Focus, ef.FocusClaim]


@pytest.mark.parametrize("cls", _REGISTERED, ids=lambda c: c.__name__)
def test_the_snake_name_and_the_class_name_load_the_same_class(cls):
    registry = assay.plugins.get_registry("estimator")
    assert registry.get(cls.__name__).factory is registry.get(cls.name).factory is cls
    assert registry.get(cls.__name__).metadata["alias_of"] == cls.name


def test_every_claim_class_of_lm_polygraph_is_registered(lm_polygraph):
    folder = pathlib.Path(lm_polygraph("estimators.estimator").__file__).parent / "claim"
    theirs = set()
    for f in folder.glob("*.py"):
        theirs.update(line.split("class ")[1].split("(")[0] for line in f.read_text().splitlines()
                      if line.startswith("class ") and "(Estimator)" in line)
    assert len(theirs) == 13
    assert theirs == {c.__name__ for c in _REGISTERED} - {"Focus"}
