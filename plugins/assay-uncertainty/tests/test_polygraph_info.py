"""LM-Polygraph 0.7.0's information-based white-box estimators, each run live against assay's on the same statistics.

The statistics are random (fixed seeds) with LM-Polygraph's names and shapes; values agree to 1e-6.
RAUQ and AttentionScore read the layer / head counts from ``stats["model"].model.config`` when
not given: a ``transformers`` config object (built in the test, no download) stands in the
model's place, as it is the only part either class reads. PTrueEmpirical and Verbalized2S ask
the model through ``generate_texts``: a deterministic recording model answers both classes, and
the test checks that both asked the same questions with the same arguments.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from assay.errors import InvalidParameterError
from assay_uncertainty import estimators_info as info

N, V = 9, 40


def _log_softmax(x):
    x = np.asarray(x, dtype=np.float64)
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def _stats(seed=0, n=N, vocab=V):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 8, n)
    glp = [_log_softmax(rng.normal(0, 3, (k, vocab))) for k in lengths]
    toks = [g.argmax(-1) for g in glp]
    return {
        "greedy_log_probs": glp,
        "greedy_tokens": [list(t) for t in toks],
        "greedy_log_likelihoods": [g[np.arange(len(t)), t] for g, t in zip(glp, toks)],
        "greedy_lm_log_likelihoods": [np.log(rng.uniform(0.01, 1, k)) for k in lengths],
        "entropy": [rng.uniform(0.0, 0.15, k) for k in lengths],  # straddles CPMI's tau = 0.0656
    }


def _same(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64),
                               rtol=0, atol=1e-6)


@pytest.mark.parametrize(("module", "cls_name", "kwargs"), [
    ("pointwise_mutual_information", "MeanPointwiseMutualInformation", {}),
    ("conditional_pointwise_mutual_information", "MeanConditionalPointwiseMutualInformation", {}),
    ("conditional_pointwise_mutual_information", "MeanConditionalPointwiseMutualInformation",
     {"tau": 0.1, "lambd": 0.5}),
    ("renyi_neg", "RenyiNeg", {}),
    ("renyi_neg", "RenyiNeg", {"alpha": 1, "temperature": 1}),
    ("renyi_neg", "RenyiNeg", {"alpha": 2.5, "temperature": 0.7}),
    ("fisher_rao", "FisherRao", {}),
    ("fisher_rao", "FisherRao", {"temperature": 0.5}),
    ("self_certainty", "SelfCertainty", {}),
])
def test_sequence_estimator_equals_lm_polygraph(lm_polygraph, module, cls_name, kwargs):
    stats = _stats(1)
    theirs = getattr(lm_polygraph(f"estimators.{module}"), cls_name)(**kwargs)(stats)
    _same(getattr(info, cls_name)(**kwargs)(stats), theirs)


@pytest.mark.parametrize(("module", "cls_name", "kwargs"), [
    ("pointwise_mutual_information", "PointwiseMutualInformation", {}),
    ("conditional_pointwise_mutual_information", "ConditionalPointwiseMutualInformation", {}),
    ("conditional_pointwise_mutual_information", "ConditionalPointwiseMutualInformation", {"tau": 0.1, "lambd": 2}),
])
def test_token_estimator_equals_lm_polygraphs_concatenation(lm_polygraph, module, cls_name, kwargs):
    stats = _stats(2)
    ours = getattr(info, cls_name)(**kwargs)(stats)
    assert [len(o) for o in ours] == [len(x) - 1 for x in stats["greedy_log_likelihoods"]]
    _same(np.concatenate(ours), getattr(lm_polygraph(f"estimators.{module}"), cls_name)(**kwargs)(stats))


def test_self_certainty_leaves_out_minus_infinity_as_lm_polygraph_does(lm_polygraph):
    stats = _stats(3)
    for g in stats["greedy_log_probs"]:
        g[:, :5] = -np.inf  # a top-k-masked vocabulary
        g[:] = _log_softmax(g)
    _same(info.SelfCertainty()(stats), lm_polygraph("estimators.self_certainty").SelfCertainty()(stats))


def test_a_hand_computed_pmi_and_cpmi():
    stats = {"greedy_log_likelihoods": [np.log([0.5, 0.4, 0.2])],
             "greedy_lm_log_likelihoods": [np.log([0.9, 0.8, 0.1])], "entropy": [np.array([1.0, 0.01, 1.0])]}
    s = [np.log(0.5), np.log(0.4) - np.log(0.8), np.log(0.2) - np.log(0.1)]
    assert info.MeanPointwiseMutualInformation()(stats)[0] == pytest.approx(-np.mean(s))
    # CPMI: step 2's entropy is under tau, so only step 3 subtracts lambd * m_t
    c = [np.log(0.5), np.log(0.4), np.log(0.2) - 2.0 * np.log(0.1)]
    assert info.MeanConditionalPointwiseMutualInformation(tau=0.5, lambd=2.0)(stats)[0] == pytest.approx(-np.mean(c))


def test_renyi_and_fisher_rao_of_a_uniform_step():
    stats = {"greedy_log_probs": [np.full((2, 8), -np.log(8))]}
    # LM-Polygraph's alpha != 1 formula is the Renyi divergence from uniform minus 2 log V (the docstring says so)
    assert info.RenyiNeg()(stats)[0] == pytest.approx(-2 * np.log(8), abs=1e-12)
    assert info.RenyiNeg(alpha=1)(stats)[0] == pytest.approx(0.0, abs=1e-12)
    assert info.FisherRao()(stats)[0] == pytest.approx(0.0, abs=1e-6)


def test_label_prob_equals_lm_polygraph(lm_polygraph):
    rng = np.random.default_rng(4)
    c2s, s2c = {}, {}
    for i in range(N):
        k = int(rng.integers(1, 8))
        labels = rng.integers(0, 3, k)
        groups = [[j for j in range(k) if labels[j] == c] for c in sorted(set(labels))]
        c2s[i], s2c[i] = groups, {j: int(labels[j]) for j in range(k)}
    stats = {"semantic_classes_entail": {"class_to_sample": c2s, "sample_to_class": s2c}}
    _same(info.LabelProb()(stats), lm_polygraph("estimators.label_prob").LabelProb()(stats))


def test_csl_equals_lm_polygraph(lm_polygraph):
    stats = _stats(5)
    rng = np.random.default_rng(5)
    stats["attention_weights_eliciting_prompt"] = [rng.uniform(0, 1, (4, len(ll)))
                                                   for ll in stats["greedy_log_likelihoods"]]
    theirs = lm_polygraph("estimators.csl").CSL()({k: list(v) for k, v in stats.items()})
    _same(info.CSL()(stats), theirs)


def _config(layers, heads):
    from transformers import LlamaConfig  # a config object only: no weights, no download

    return SimpleNamespace(model=SimpleNamespace(config=LlamaConfig(num_hidden_layers=layers, num_attention_heads=heads,
                                                                    hidden_size=8 * heads)))


def _attention(rng, layers, heads, size):
    w = np.tril(rng.uniform(0.05, 1.0, (layers, heads, size, size)))
    return w / w.sum(-1, keepdims=True)


@pytest.mark.parametrize("kwargs", [{}, {"use_entropy": True}, {"instruct": True}, {"alpha": 0.37},
                                    {"n_layers": 5, "n_heads": 3}])
def test_rauq_equals_lm_polygraph(lm_polygraph, kwargs):
    rng = np.random.default_rng(6)
    stats = _stats(6)
    stats["attention_all"] = [_attention(rng, 5, 3, len(ll) + 2).reshape(15, len(ll) + 2, len(ll) + 2)
                              for ll in stats["greedy_log_likelihoods"]]
    stats["entropy"] = [rng.uniform(0, np.log(V), len(ll)) for ll in stats["greedy_log_likelihoods"]]
    stats["model"] = _config(5, 3)
    _same(info.RAUQ(**kwargs)(stats), lm_polygraph("estimators.rauq").RAUQ(**kwargs)(stats))


def test_rauq_without_layer_counts_or_model_is_an_error_naming_both():
    with pytest.raises(InvalidParameterError, match="n_layers.*model"):
        info.RAUQ()({"attention_all": [], "greedy_log_likelihoods": []})


@pytest.mark.parametrize("kwargs", [{}, {"layer": 0}, {"layer": 3, "gen_only": True}, {"gen_only": True}])
@pytest.mark.parametrize("layout", ["plain", "padded", "padded5"])
def test_attention_score_equals_lm_polygraph(lm_polygraph, kwargs, layout):
    rng = np.random.default_rng(7)
    stats = _stats(7)
    sizes = [len(t) + int(rng.integers(2, 5)) for t in stats["greedy_tokens"]]
    atts = [_attention(rng, 4, 2, s) for s in sizes]
    if layout != "plain":  # LM-Polygraph's batch: NaN-padded to the longest
        top = max(sizes)
        padded = []
        for a in atts:
            p = np.full((4, 2, top, top), np.nan)
            p[:, :, : a.shape[2], : a.shape[3]] = a
            padded.append(p[:, None] if layout == "padded5" else p)
        atts = padded
    stats["forwardpass_attention_weights"] = atts
    stats["model"] = _config(4, 2)
    theirs = lm_polygraph("estimators.attention_score").AttentionScore(**kwargs)(stats)
    _same(info.AttentionScore(**kwargs)(stats), theirs)


@pytest.mark.parametrize(("module", "cls_name", "stat"), [("p_true", "PTrue", "p_true"),
                                                           ("p_true_sampling", "PTrueSampling", "p_true_sampling")])
def test_p_true_equals_lm_polygraph(lm_polygraph, module, cls_name, stat):
    stats = {stat: list(np.log(np.random.default_rng(8).uniform(0.01, 1, N)))}
    _same(getattr(info, cls_name)()(stats), getattr(lm_polygraph(f"estimators.{module}"), cls_name)()(stats))


class RecordingModel:
    """Answers ``generate_texts`` from a hash of its input (deterministic), and records every call."""

    def __init__(self, replies):
        self.replies, self.calls = replies, []

    def generate_texts(self, inputs, **kwargs):
        self.calls.append((inputs, kwargs))
        n = kwargs.get("num_return_sequences", 1)
        out = []
        for x in inputs:
            h = sum(map(ord, str(x)))
            out.extend(self.replies[(h + j) % len(self.replies)] for j in range(n if len(inputs) == 1 else 1))
        return out


TEXTS = {"input_texts": [f"What is {i} + {i}?" for i in range(N)], "greedy_texts": [str(2 * i) for i in range(N)]}


@pytest.mark.parametrize("num_samples", [1, 7])
def test_p_true_empirical_equals_lm_polygraph(lm_polygraph, num_samples):
    ours_model, their_model = RecordingModel(["True", "False", " True", "Fal"]), RecordingModel(
        ["True", "False", " True", "Fal"])
    ours = info.PTrueEmpirical(num_samples=num_samples)({**TEXTS, "model": ours_model})
    theirs = lm_polygraph("estimators.p_true_empirical").PTrueEmpirical(num_samples=num_samples)(
        {**TEXTS, "model": their_model})
    _same(ours, theirs)
    assert ours_model.calls == their_model.calls and len(set(ours)) > 1


REGEX = r"[Cc]onfidence:\s*([0-9.]+)"
VERBAL = ["Paris. Confidence: 0.9", "confidence: 0.25 because", "no idea", "Confidence:1", "x confidence: .5"]


def test_verbalized_1s_equals_lm_polygraph(lm_polygraph):
    stats = {"greedy_texts": VERBAL}
    with pytest.warns(UserWarning, match="no confidence matches"):
        ours = info.Verbalized1S(confidence_regex=REGEX)(stats)
    _same(ours, lm_polygraph("estimators.verbalized_1s").Verbalized1S(confidence_regex=REGEX)(stats))
    assert np.isnan(ours[2]) and ours[0] == pytest.approx(0.1)


def test_verbalized_2s_equals_lm_polygraph(lm_polygraph):
    kwargs = {"confidence_prompt": "How confident are you? Answer 'Confidence: x'.", "confidence_regex": REGEX,
              "max_new_tokens": 7}
    ours_model, their_model = RecordingModel(VERBAL), RecordingModel(VERBAL)
    with pytest.warns(UserWarning, match="no confidence matches"):
        ours = info.Verbalized2S(**kwargs)({**TEXTS, "model": ours_model})
    theirs = lm_polygraph("estimators.verbalized_2s").Verbalized2S(**kwargs)({**TEXTS, "model": their_model})
    _same(ours, theirs)
    assert ours_model.calls == their_model.calls


def test_linguistic_1s_equals_lm_polygraph(lm_polygraph):
    expressions = {"Almost Certain": 0.95, "Likely": 0.7, "Very Likely": 0.9, "Unlikely": 0.2}
    stats = {"greedy_texts": ["Paris, Almost Certain", "Rome (Very Likely)", "dunno", "Unlikely Oslo", "likely"]}
    with pytest.warns(UserWarning, match="none of the expressions"):
        ours = info.Linguistic1S(expressions)(stats)
    _same(ours, lm_polygraph("estimators.linguistic_1s").Linguistic1S(expressions)(stats))
    # "Very Likely" contains "Likely", tried first in the mapping's order; case counts: LM-Polygraph's rule
    assert ours[1] == pytest.approx(0.3) and ours[3] == pytest.approx(0.8) and np.isnan(ours[4])


def test_a_regex_without_a_group_is_rejected_when_given():
    with pytest.raises(InvalidParameterError, match="group"):
        info.Verbalized1S()
    with pytest.raises(InvalidParameterError, match="regular expression"):
        info.Verbalized1S(confidence_regex="(")
    assert re.compile(REGEX).groups == 1


@pytest.mark.parametrize("vocab", [40, 1500])  # past 1024 boostedprob looks at the top 1024 only
@pytest.mark.parametrize("scale", [1.0, 4.0])  # flat and peaked steps: few or many dominant tokens
def test_boosted_prob_equals_lm_polygraph(lm_polygraph, vocab, scale):
    rng = np.random.default_rng(9)
    stats = _stats(9, vocab=vocab)
    stats["greedy_log_probs"] = [_log_softmax(rng.normal(0, scale, g.shape)) for g in stats["greedy_log_probs"]]
    # the generated token: the greedy one, or (every other step) one from the tail
    stats["greedy_tokens"] = [[int(g[t].argmax()) if t % 2 else int(rng.integers(0, vocab)) for t in range(len(g))]
                              for g in stats["greedy_log_probs"]]
    theirs = lm_polygraph("estimators.boostedprob_score").BoostedProbSequence()(stats)
    _same(info.BoostedProbSequence()(stats), theirs)


def test_boosted_prob_by_hand():
    # p = (0.6, 0.3, 0.05, 0.05): jumps 0.3 > 0.18 (after 1) and 0.25 > 0.09 (after 2): the last cut keeps 2 tokens
    z = np.log([[0.6, 0.3, 0.05, 0.05], [0.6, 0.3, 0.05, 0.05]])
    got = info.BoostedProbSequence.boosted(z, np.array([1, 3]))
    np.testing.assert_allclose(got, [0.9, 0.05])


def test_pmi_with_an_empty_generation_among_others():
    stats = {"greedy_log_likelihoods": [[-0.5, -0.2], [], [-1.0]],
             "greedy_lm_log_likelihoods": [[-1.0, -3.0], [], [-2.0]], "entropy": [[1.0, 1.0], [], [1.0]]}
    with pytest.warns(UserWarning, match="example 1 has no generated tokens"):
        got = info.MeanPointwiseMutualInformation()(stats)
    np.testing.assert_allclose(got, [-(-0.5 + (-0.2 + 3.0)) / 2, np.nan, 1.0])
    assert [t.tolist() for t in info.PointwiseMutualInformation()(stats)] == [[0.5], [], []]
    with pytest.raises(InvalidParameterError, match="every token"):
        info.MeanPointwiseMutualInformation()({**stats, "greedy_lm_log_likelihoods": [[-1.0], [], [-2.0]]})


def test_label_prob_one_dict_per_example_gives_the_same_values():
    batch = {"class_to_sample": {0: [[0, 1], [2]], 1: [[0], [1], [2], [3]]},
             "sample_to_class": {0: {0: 0, 1: 0, 2: 1}, 1: {0: 0, 1: 1, 2: 2, 3: 3}}}
    per_example = [{"class_to_sample": batch["class_to_sample"][i], "sample_to_class": batch["sample_to_class"][i]}
                   for i in (0, 1)]
    got = info.LabelProb()({"semantic_classes_entail": per_example})
    np.testing.assert_allclose(got, info.LabelProb()({"semantic_classes_entail": batch}))
    np.testing.assert_allclose(got, [1 - 2 / 3, 1 - 1 / 4])
