"""unitxt's ``metrics.*`` catalog names in assay, against unitxt 1.26.10 run live on the same inputs.

For every entry assay loads whose unitxt computation runs offline, unitxt's own metric is fetched
from its local catalog (``unitxt.artifact.fetch_artifact``) and applied with
``unitxt.test_utils.metrics.apply_metric``; ``assay.evaluate(metrics=[name])`` must report the
same score names, main score, instance scores and global scores, and intervals for the same
scores. Interval *values* are not compared: unitxt draws a BCa bootstrap from its own random
state, assay a percentile bootstrap from its seed; both must enclose the score.

Two entries are compared with an independent reference instead, because unitxt computes them
through a Hugging Face ``evaluate`` module that it fetches from the Hub at run time: ``metrics.wer``
(jiwer's corpus WER, what that module computes) and ``metrics.squad`` (values derived by hand
under the official SQuAD v1.1 rules). NLTK's ``punkt_tab`` sentence model, which unitxt's Rouge
downloads, is not on this machine: both sides split sentences with the same stand-in.

Every test runs with sockets blocked.
"""

from __future__ import annotations

import math
import re

import jiwer
import nltk
import pytest
import unitxt.artifact as unitxt_artifact  # the reference, installed by make setup (a missing one fails)

import assay

# slow: importing unitxt (datasets, pandas) takes seconds
# no_network (conftest.py): every socket connection fails the test
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_network")]


@pytest.fixture
def offline_nltk(monkeypatch):
    """unitxt's NLTK mixins call nltk.download (network) and sent_tokenize (punkt_tab, not on disk):
    no download, and one sentence splitter (at ., ! or ? followed by space) for unitxt and assay."""
    monkeypatch.setattr(nltk, "download", lambda *a, **k: True)
    monkeypatch.setattr(nltk, "sent_tokenize", lambda text, *a, **k: [s for s in re.split(r"(?<=[.!?])\s+", text) if s])


def unitxt_run(name, predictions, references, task_data=None):
    from unitxt.test_utils.metrics import apply_metric

    metric, _ = unitxt_artifact.fetch_artifact(name)
    out = apply_metric(metric, predictions, references, task_data)
    return [o["score"]["instance"] for o in out], out[0]["score"]["global"]


def assay_run(name, predictions, references, task_data=None, n_resamples=100):
    res = assay.evaluate(predictions, references, task_data=task_data, metrics=[name], n_resamples=n_resamples,
                         seed=0)
    return [r["score"]["instance"] for r in res], res.global_scores


def _close(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return b == pytest.approx(a, rel=1e-9, abs=1e-12)


def _numbers(d):
    return {k: v for k, v in d.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def compare(name, predictions, references, task_data=None, *, list_scores=(), skip_ci=frozenset()):
    u_inst, u_glob = unitxt_run(name, predictions, references, task_data)
    a_inst, a_glob = assay_run(name, predictions, references, task_data)
    assert a_glob["score_name"] == u_glob["score_name"]
    u_ci = {k for k in u_glob if "_ci_" in k} - set(skip_ci)
    a_ci = {k for k in a_glob if "_ci_" in k}
    assert a_ci == u_ci, f"interval names: assay {sorted(a_ci)}, unitxt {sorted(u_ci)}"
    u_vals = {k: v for k, v in _numbers(u_glob).items() if "_ci_" not in k}
    a_vals = {k: v for k, v in _numbers(a_glob).items() if "_ci_" not in k}
    assert set(a_vals) == set(u_vals), f"global scores: assay {sorted(a_vals)}, unitxt {sorted(u_vals)}"
    for k, v in u_vals.items():
        assert _close(v, a_vals[k]), f"{name} global {k}: unitxt {v}, assay {a_vals[k]}"
    for k in a_ci:
        if k.endswith("_ci_low"):
            base = k[: -len("_ci_low")]
            low, high, value = a_glob[k], a_glob[base + "_ci_high"], a_glob[base]
            assert low <= value + 1e-12 and value <= high + 1e-12, (k, low, value, high)
    assert set(list_scores) == {k for k, v in u_glob.items() if isinstance(v, list)}
    for i, (u, a) in enumerate(zip(u_inst, a_inst)):
        if not a:
            # a metric without instance scores (unitxt's process_single_instances=False): unitxt's are NaN
            assert all(math.isnan(v) for v in _numbers(u).values()), (i, u)
            continue
        assert a["score_name"] == u["score_name"]
        u_i, a_i = _numbers(u), _numbers(a)
        assert set(a_i) == set(u_i), f"instance {i}: assay {sorted(a_i)}, unitxt {sorted(u_i)}"
        for k, v in u_i.items():
            assert _close(v, a_i[k]), f"{name} instance {i} {k}: unitxt {v}, assay {a_i[k]}"
    return u_glob, a_glob


TEXT_P = ["the cat sat on the mat", "a dog ran", "birds sing in trees", "Hello World", "xyz"]
TEXT_R = [["the cat sat on a mat"], ["a dog ran in the park", "dogs run"], ["birds sang in the tree"],
          ["hello  world"], ["abc"]]
LABEL_P = ["cat", "dog", "cat", "bird", "dog", "cat", "fish", "dog"]
LABEL_R = [["cat"], ["dog"], ["dog"], ["bird"], ["cat"], ["cat"], ["bird"], ["dog"]]
RANK_P = [["a", "b", "c"], ["x", "y"], ["q", "r", "a", "s"], ["m"], ["u", "v", "w", "z"]]
RANK_R = [[["b", "c"]], [["z"]], [["a", "q", "a"]], [["m", "n"]], [["z"]]]
# 15 instances: a bootstrap resample with one distinct value (an undefined correlation) is unlikely
NUM_P = [1.0, 2.0, 3.5, 4.0, 2.5, 0.5, 5.0, 6.5, 3.0, 7.0, 1.5, 8.0, 4.5, 6.0, 9.0]
NUM_R = [[1.0], [3.0], [2.0], [4.0], [2.0], [1.0], [5.5], [6.0], [3.0], [8.0], [0.0], [7.0], [5.0], [6.0], [9.5]]

CASES = {
    "metrics.accuracy": (["a", "b", "c", "1"], [["a"], ["x"], ["c", "d"], [1]], None),
    "metrics.string_containment": (TEXT_P, [["cat"], ["cat", "dog"], ["fly"], ["World"], ["z"]], None),
    "metrics.token_overlap": (TEXT_P, TEXT_R, None),  # assay-classic's UnitxtTokenOverlap
    "metrics.f1_micro": (LABEL_P, LABEL_R, None),
    "metrics.f1_macro": (LABEL_P, LABEL_R, None),
    "metrics.mrr": (RANK_P, RANK_R, None),
    "metrics.map": (RANK_P, RANK_R, None),
    "metrics.retrieval_at_k": (RANK_P, RANK_R, None),
    "metrics.anls": (TEXT_P, TEXT_R, None),
    "metrics.char_edit_distance": (TEXT_P, [[r[0]] for r in TEXT_R], None),
    "metrics.char_edit_dist_accuracy": (TEXT_P, [[r[0]] for r in TEXT_R], None),
    "metrics.jaccard_index": ([["a", "b"], ["c"], ["d", "e", "f"]], [[["a", "c"]], [["c"], ["d"]], [["f"]]], None),
    "metrics.jaccard_index_words": (TEXT_P, TEXT_R, None),
    "metrics.unsorted_list_exact_match": ([["a", "b"], ["c"], ["b", "a"]], [[["b", "a"]], [["d"]], [["a", "b"]]], None),
    "metrics.string_containment_ratio": (["alice met bob", "carol", "nobody"], [["x"], ["y"], ["z"]],
                                         [{"entities": ["alice", "bob", "eve"]}, {"entities": ["carol"]},
                                          {"entities": ["dan", "erin"]}]),
    "metrics.mean_squared_error": (NUM_P, NUM_R, None),
    "metrics.root_mean_squared_error": (NUM_P, NUM_R, None),
    "metrics.relaxed_correctness": (["10.4", "Cat", "5%", "12", "0", "abc", "3.2"],
                                    [["10"], ["cat"], ["0.06"], ["11"], ["0"], ["ABC"], ["3.3", "9"]],
                                    [{"type": t} for t in ["human_test", "augmented_test", "human_test",
                                                           "human_test", "augmented_test", "x", "human_test"]]),
    "metrics.websrc_squad_f1": (["The red car!", "blue", "", "a b c d", "Jobs: 3"],
                                [["a red car"], ["green"], ["x"], ["b c e"], ["jobs : 3", "y"]],
                                [{"domain": d} for d in ["auto", "auto", "book", "jobs", "jobs"]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_entry_matches_unitxt(name):
    predictions, references, task_data = CASES[name]
    compare(name, predictions, references, task_data)


def test_normalized_sacrebleu_matches_unitxt():
    # unitxt's list-valued counts, totals and precisions are not scores in assay (docs/unitxt-catalog.md)
    compare("metrics.normalized_sacrebleu", TEXT_P, TEXT_R, list_scores=("counts", "totals", "precisions"))


def test_f1_weighted_matches_unitxt():
    compare("metrics.f1_weighted", LABEL_P, LABEL_R)


def test_kendalltau_b_matches_unitxt():
    u, a = compare("metrics.kendalltau_b", NUM_P, NUM_R)
    from scipy.stats import kendalltau

    assert a["kendalltau_b"] == pytest.approx(kendalltau([r[0] for r in NUM_R], NUM_P, variant="b").statistic)


@pytest.mark.parametrize("name", ["metrics.spearman", "metrics.pearson"])
def test_correlations_match_unitxt(name):
    compare(name, NUM_P, NUM_R)


BIN_P = [0.9, 0.2, 0.6, 0.4, 0.8, 0.1, 0.7, 0.3, 0.55, 0.65, 0.05, 0.95]
BIN_R = [[1.0], [0.0], [0.0], [1.0], [1.0], [0.0], [1.0], [1.0], [0.0], [1.0], [0.0], [1.0]]


@pytest.mark.parametrize("name", ["metrics.f1_binary", "metrics.roc_auc"])
def test_binary_metrics_match_unitxt(name):
    compare(name, BIN_P, BIN_R)


@pytest.mark.parametrize("name", ["metrics.accuracy_binary", "metrics.max_accuracy_binary", "metrics.max_f1_binary"])
def test_thresholded_binary_metrics_match_unitxt(name):
    compare(name, BIN_P, BIN_R)
    compare(name, [0.2, 0.2, 0.7, 0.7, 0.1234, 0.1236, 1.3], [[0.0], [1.0], [1.0], [0.0], [1.0], [0.0], [1.0]])


def test_matthews_correlation_equals_scikit_learn():
    # unitxt computes it with evaluate's matthews_correlation module, fetched from the Hub: scikit-learn's formula
    from sklearn.metrics import matthews_corrcoef

    inst, glob = assay_run("metrics.matthews_correlation", LABEL_P, LABEL_R, n_resamples=0)
    assert glob["score_name"] == "matthews_correlation"
    assert glob["matthews_correlation"] == pytest.approx(matthews_corrcoef([r[0] for r in LABEL_R], LABEL_P))


MULTI_P = [["a", "b"], ["c"], [], ["a", "d"], ["b", "c"]]
MULTI_R = [[["a"]], [["c", "b"]], [["a"]], [["a", "d"]], [["b"]]]


@pytest.mark.parametrize("name", [f"metrics.{m}_{a}_multi_label" for m in ("f1", "precision", "recall")
                                  for a in ("micro", "macro")])
def test_multi_label_metrics_match_unitxt(name):
    compare(name, MULTI_P, MULTI_R)
    compare(name, [["x"], ["a"]], [[["a"]], [["a"]]])  # one label: unitxt's labels=[1] guard


def test_exact_match_mm_matches_unitxt():
    compare("metrics.exact_match_mm", ["A", "(b) because", "option c", "the answer is d", "", "e"],
            [["a"], ["B"], ["C"], ["x", "d"], ["a"], ["ee"]])


@pytest.mark.parametrize("name", ["metrics.precision_binary", "metrics.recall_binary"])
def test_precision_recall_binary_match_unitxt(name):
    # unitxt reports score_ci_low/high here, but they are f1_binary_neg's interval (the last one it computed),
    # not the main score's: assay gives no interval to a main score outside ci_scores
    u, a = compare(name, BIN_P, BIN_R, skip_ci={"score_ci_low", "score_ci_high"})
    assert u["score_ci_high"] == u["f1_binary_neg_ci_high"]


def test_ndcg_matches_unitxt():
    preds = [0.9, 0.2, "0.4", 0.5, 3.0, 1.0, 2.0, "1e-1", 7, 0.7]
    refs = [[2.0], [0.0], [1.0], [1.0], [0.0], [3.0], [1.0], [0.0], [2.0], ["1"]]
    td = [{"query": q} for q in ["q1", "q1", "q1", "q1", "q2", "q2", "q2", "q3", "q3", "q4"]]
    compare("metrics.ndcg", preds, refs, td)


@pytest.mark.parametrize(("preds", "refs", "place"), [
    ([0.9, "n/a", 0.5], [[2.0], [0.0], [1.0]], r"predictions\[1\] is 'n/a'"),  # unitxt ranks it last
    ([0.9, 0.2, 0.5], [[2.0], [math.inf], [1.0]], r"references\[1\]\[0\] is inf"),
    ([0.9, 0.2, None], [[2.0], [0.0], [1.0]], r"predictions\[2\] is None"),
])
def test_ndcg_rejects_a_value_that_does_not_cast(preds, refs, place):
    td = [{"query": "q1"}] * 3
    with pytest.raises(assay.errors.InvalidParameterError, match=place):
        assay.evaluate(preds, refs, metrics=["metrics.ndcg"], task_data=td, n_resamples=0)


def test_prediction_length_matches_unitxt():
    # unitxt's instance score is a one-element list ([11]); assay's is the number
    refs = [[r[0]] for r in TEXT_R]
    u_inst, u_glob = unitxt_run("metrics.prediction_length", TEXT_P, refs)
    a_inst, a_glob = assay_run("metrics.prediction_length", TEXT_P, refs)
    assert {k: a_glob[k] for k in u_glob} == u_glob
    assert not [k for k in a_glob if "_ci_" in k]  # no intervals on either side
    assert [a["prediction_length"] for a in a_inst] == [u["prediction_length"][0] for u in u_inst]
    assert [a["prediction_length"] for a in a_inst] == [float(len(p)) for p in TEXT_P]


NER_P = [[("John Smith", "PER"), ("Pariss", "LOC")], [("IBM", "ORG"), ("Bob", "PER"), ("Bob", "PER")], [],
         [("Rome", "CITY"), ("Londn", "LOC")], [("International Business Machines", "ORG")]]
NER_R = [[[("John Smyth", "PER"), ("Paris", "LOC")]], [[("I.B.M.", "ORG"), ("Bobby", "PER")]], [[("X", "MISC")]],
         [[("Rome", "LOC"), ("London", "LOC")]], [[("International Business Machine", "ORG")]]]


@pytest.mark.parametrize("name", ["metrics.fuzzyner", "metrics.metric_based_ner"])
def test_similarity_ner_matches_unitxt(name, monkeypatch):
    # fuzzyner: fuzzywuzzy's ratio, 76 or more matches; fuzzywuzzy uses difflib unless python-Levenshtein is
    # installed, and assay computes the difflib ratio: the reference is pinned to it.
    # metric_based_ner: metrics.accuracy of the texts (an exact match) reaches 0.75
    import difflib

    from fuzzywuzzy import fuzz

    monkeypatch.setattr(fuzz, "SequenceMatcher", difflib.SequenceMatcher)
    compare(name, NER_P, NER_R)


def test_fuzzyner_by_hand():
    # "Pariss"/"Paris": difflib ratio 2*5/11 = 0.909 -> 91, a match; "Londn"/"London": 2*5/11 -> 91;
    # "John Smith"/"John Smyth": 2*9/20 -> 90; "Bob"/"Bobby": 2*3/8 = 0.75 -> 75 < 76; "IBM"/"I.B.M.": 2*3/9 -> 67
    _, glob = assay_run("metrics.fuzzyner", NER_P[:2], NER_R[:2], n_resamples=0)
    # PER: predicted John Smith (match), Bob x2 (no match) -> precision 1/3; references John Smyth (match),
    # Bobby (none) -> recall 1/2; LOC: 1/1 and 1/1; ORG: 0/1 and 0/1
    assert glob["f1_PER"] == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert glob["f1_LOC"] == 1.0 and glob["f1_ORG"] == 0.0
    assert glob["f1_micro"] == pytest.approx(2 * (2 / 5) * (2 / 4) / (2 / 5 + 2 / 4))


def test_kpa_matches_unitxt():
    preds = ["yes", "none", "yes", "yes", "none", "yes", "no"]
    refs = [["yes"], ["yes"], ["none"], ["yes"], ["none"], ["yes"], ["yes"]]
    td = [{"keypoint": k} for k in ["k1", "k1", "k2", "k2", "k3", "k1", "k3"]]
    compare("metrics.kpa", preds, refs, td)


TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
             "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
             "required": ["city"]}}},
         {"type": "function", "function": {"name": "book", "parameters": {
             "type": "object", "properties": {"who": {"type": "object"}}, "additionalProperties": False}}}]
CALLS_P = [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
           {"name": "get_weather", "arguments": {"city": "Rome", "days": "3"}},
           {"name": "book", "arguments": {"who": {"first": "Ann"}, "when": "now"}},
           {"name": "cancel", "arguments": {}},
           {"name": "book", "arguments": {}}]
CALLS_R = [[{"name": "get_weather", "arguments": {"days": 3, "city": "Paris"}}],
           [{"name": "get_weather", "arguments": {"city": "Rome", "days": 3}},
            {"name": "get_weather", "arguments": {"city": "Roma"}}],
           [{"name": "book", "arguments": {"who": {"first": "Ann"}}}],
           [{"name": "cancel", "arguments": {"id": "7"}}],
           [{"name": "book", "arguments": {}}]]


def test_tool_calling_matches_unitxt():
    compare("metrics.tool_calling", CALLS_P, CALLS_R, [{"__tools__": TOOLS}] * len(CALLS_P))


def test_tool_calling_by_hand():
    inst, _ = assay_run("metrics.tool_calling", CALLS_P, CALLS_R, [{"__tools__": TOOLS}] * len(CALLS_P),
                        n_resamples=0)
    # equal up to key order; days "3" breaks the schema; an extra argument breaks additionalProperties;
    # no tool named cancel; an empty call to book is valid
    assert [i["exact_match"] for i in inst] == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert [i["argument_schema_validation"] for i in inst] == [1.0, 0.0, 0.0, 0.0, 1.0]
    # {city, days} against {city, days} (1) and {city} (1): recall 1; precision max(2/2, 1/2) = 1
    assert inst[1]["argument_name_recall"] == 1.0 and inst[1]["argument_value_precision"] == 0.5
    assert inst[3]["argument_name_precision"] == 0.0 and inst[3]["argument_name_recall"] == 0.0


def test_multi_turn_tool_calling_matches_unitxt():
    preds = [CALLS_P[:2], CALLS_P[2:], [CALLS_P[4]]]
    refs = [[CALLS_P[:2]], [CALLS_P[2:]], [[CALLS_P[4]]]]
    u, a = compare("metrics.tool_calling.multi_turn.validity", preds, refs, [{"__tools__": TOOLS}] * 3)
    assert a["argument_schema_validation"] == pytest.approx((1 / 2 + 1 / 3 + 1) / 3)


# 4 conversations; a turn is len(dialog) // 2; conversation c2 repeats turn 2 (the later one counts);
# c3's turns sort as text: assistant_turn_1, assistant_turn_10, assistant_turn_2
TURNS = [("c1", 2, "a", "a"), ("c1", 4, "b", "b"), ("c1", 6, "c", "x"), ("c2", 4, "a", "b"), ("c2", 4, "a", "a"),
         ("c2", 2, "q", "q"), ("c3", 4, "a", "a"), ("c3", 20, "b", "x"), ("c3", 2, "z", "z"), ("c4", 2, "m", "n")]


@pytest.mark.parametrize("name", ["metrics.multi_turn.accuracy", "metrics.multi_turn.sequential_success_accuracy"])
def test_multi_turn_matches_unitxt(name):
    preds = [p for _, _, p, _ in TURNS]
    refs = [[r] for _, _, _, r in TURNS]
    td = [{"conversation": {"id": c, "dialog": [{"role": "user", "content": "x"}] * n}} for c, n, _, _ in TURNS]
    u, a = compare(name, preds, refs, td)
    # by hand: mean per conversation: c1 2/3, c2 1 (turn 2 replaced), c3 2/3, c4 0
    # sequential: c1 2/3 (fails at turn 3), c2 1, c3 1/3 (turn 1, then turn 10 fails), c4 0
    expected = (2 / 3 + 1 + 2 / 3 + 0) / 4 if name.endswith(".accuracy") else (2 / 3 + 1 + 1 / 3 + 0) / 4
    assert a["score"] == pytest.approx(expected)


BATTLES = [("m1", "m2", 2.0, 1), ("m2", "m3", -1.0, -2), ("m1", "m3", 0.0, 0), ("m4", "m1", 1.5, 3),
           ("m3", "m4", 3.0, -1), ("m2", "m1", -2.0, 2), ("m4", "m2", 0.0, 1), ("m3", "m1", 1.0, 1),
           ("m2", "m4", 2.5, 2), ("m1", "m4", -1.0, 0), ("m3", "m2", 0.5, -3), ("m4", "m3", -2.0, 1)]


def test_weighted_win_rate_correlation_matches_unitxt():
    preds = [p for _, _, p, _ in BATTLES]
    refs = [[r] for _, _, _, r in BATTLES]
    td = [{"model_a": a, "model_b": b} for a, b, _, _ in BATTLES]
    compare("metrics.weighted_win_rate_correlation", preds, refs, td)


def test_ner_matches_unitxt():
    preds = [[("John", "PER"), ("Paris", "LOC")], [("IBM", "ORG"), ("Bob", "PER"), ("Bob", "PER")], [],
             [("Rome", "CITY")]]
    refs = [[[("John", "PER"), ("London", "LOC")]], [[("IBM", "ORG"), ("Bob", "PER")]], [[("X", "MISC")]],
            [[("Rome", "LOC")]]]
    compare("metrics.ner", preds, refs)


@pytest.mark.parametrize("name", ["metrics.key_value_extraction.accuracy",
                                  "metrics.key_value_extraction.token_overlap"])
def test_key_value_extraction_matches_unitxt(name):
    preds = [{"name": "John Smith", "age": "31"}, {"name": "Ann", "city": "Rome"}, {"age": "40", "zip": "123"}]
    refs = [[{"name": "John Smith", "age": "30"}], [{"name": "Ann Lee", "city": "Rome"}], [{"age": "40"}]]
    compare(name, preds, refs)


@pytest.mark.parametrize("name", ["metrics.rouge", "metrics.rouge_with_confidence_intervals"])
def test_rouge_matches_unitxt(offline_nltk, name):
    preds = ["The cat sat. It was happy!", "a dog ran in the park", "birds sing"]
    refs = [["The cat sat on the mat. It was glad."], ["a dog ran", "the dog runs in a park"], ["birds sang. loud"]]
    compare(name, preds, refs)


def test_rouge_without_punkt_says_what_to_do(monkeypatch):

    def missing(*a, **k):
        raise LookupError("Resource punkt_tab not found.")

    monkeypatch.setattr(nltk, "sent_tokenize", missing)
    with pytest.raises(assay.errors.EvaluationError, match=r"punkt_tab.*sent_split_newline=false"):
        assay.evaluate(["a b. c"], [["a b"]], metrics=["metrics.rouge"], n_resamples=0)
    # without the split the other ROUGE types are unchanged and rougeLsum reads the text's newlines
    res = assay.evaluate(["a b. c"], [["a b"]], metrics=["metrics.rouge[sent_split_newline=false]"], n_resamples=0)
    assert res.global_scores["rouge1"] == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))


def test_wer_equals_jiwer_corpus_wer():
    preds = ["the cat sat on mat", "a dog ran in the park today", "birds"]
    refs = [["the cat sat on the mat"], ["a dog ran in the park"], ["birds sang"]]
    _, glob = assay_run("metrics.wer", preds, refs, n_resamples=0)
    assert glob["score_name"] == "wer"
    assert glob["wer"] == pytest.approx(jiwer.wer([r[0] for r in refs], preds))
    # by hand: 1 deletion of 6 words, 1 insertion against 6, 1 deletion of 2 -> 3 / 14
    assert glob["wer"] == pytest.approx(3 / 14)


def test_bleu_equals_nltk_corpus_bleu():
    # unitxt computes metrics.bleu with evaluate's `bleu` module, fetched from the Hub: with one reference per
    # instance its formula is NLTK's corpus BLEU without smoothing, on 13a tokens
    from nltk.translate.bleu_score import corpus_bleu
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    tok = Tokenizer13a()
    preds = ["the cat sat on the mat.", "a dog ran in the park today", "birds sing in trees", "Hello, World!"]
    refs = [["the cat sat on a mat."], ["a dog ran in the park"], ["birds sang in the trees"], ["hello world!"]]
    inst, glob = assay_run("metrics.bleu", preds, refs)
    assert glob["score_name"] == "bleu"
    assert glob["bleu"] == pytest.approx(corpus_bleu([[tok(r[0]).split()] for r in refs],
                                                     [tok(p).split() for p in preds]))
    assert glob["bleu_ci_low"] <= glob["bleu"] <= glob["bleu_ci_high"]
    assert inst[0]["bleu"] == pytest.approx(corpus_bleu([[tok(refs[0][0]).split()]], [tok(preds[0]).split()]))
    # 13a splits off "." "," "!": 7 + 7 + 4 + 4 prediction tokens, 7 + 6 + 5 + 3 reference tokens
    assert glob["translation_length"] == 22 and glob["reference_length"] == 21


def test_bleu_several_references_by_hand():
    # "a b c d" against "a b c d e f" and "a b x": the shortest reference (3 tokens) is r; every n-gram
    # of the prediction is in the first reference: precisions 1, BP 1 (c = 4 > r = 3) -> BLEU 1
    _, glob = assay_run("metrics.bleu", ["a b c d"], [["a b c d e f", "a b x"]], n_resamples=0)
    assert glob["bleu"] == 1.0 and glob["length_ratio"] == pytest.approx(4 / 3)
    # against "a b c d e f" alone: BP = exp(1 - 6/4)
    _, glob = assay_run("metrics.bleu", ["a b c d"], [["a b c d e f"]], n_resamples=0)
    assert glob["bleu"] == pytest.approx(math.exp(1 - 6 / 4))


def test_squad_by_hand():
    preds = ["The Eiffel Tower", "in 1889.", "Paris, France"]
    refs = [["Eiffel tower", "the tower"], ["1887"], ["Paris"]]
    inst, glob = assay_run("metrics.squad", preds, refs, n_resamples=0)
    # normalised: "eiffel tower" == "eiffel tower" (EM 1, F1 1); "in 1889" vs "1887" (0, 0);
    # "paris france" vs "paris": precision 1/2, recall 1 -> F1 2/3, EM 0
    assert [i["f1"] for i in inst] == pytest.approx([1.0, 0.0, 2 / 3])
    assert [i["exact_match"] for i in inst] == pytest.approx([1.0, 0.0, 0.0])
    assert glob["score_name"] == "f1"
    assert glob["f1"] == pytest.approx((1 + 2 / 3) / 3)
    assert glob["exact_match"] == pytest.approx(1 / 3)


def test_load_metric_and_overrides():
    metric = assay.load_metric("metrics.retrieval_at_k[k_list=[2, 5]]")
    assert metric.main_score == "match_at_2"
    with pytest.raises(assay.errors.InvalidParameterError, match="metrics.anls"):
        assay.load_metric("metrics.anls[treshold=0.3]")
    assert assay.load_metric("metrics.spearman").n_resamples == 100  # the catalog's n_resamples


def test_every_loaded_name_is_registered_and_declared():
    from assay_unitxt.catalog import catalog_entries, load_status

    status = load_status()
    registry = assay.get_registry("metric")
    for name in status:
        assert name in registry, name
        # a model entry reads a local folder (test_unitxt_catalog_models.py)
        assert catalog_entries()[name]["needs"] in ("nothing", "model"), name
    assert len(catalog_entries()) == 624


# unitxt's test_grouped_instance_metrics data (also in test_unitxt_group_mean.py)
PREDICTIONS = ["A B", "BC D", "C", "123", "BCD", "10", "  BD", "AB", "I am a dog", "AB C", "AB 1", "GMA", "0.123",
               "BD", "abc"]
REFERENCES = [["B", "AB", "A"], ["A", "BC D", "BC DF"], ["c", " C"], ["13", "23", "234"], ["  ", " BD", " BDA"],
              ["1", "10", "100"], ["A", "B", "BD"], ["ABC", "ab", "BC"], ["I am a person", "I AM A DOG", "ABC"],
              ["AB CD", "AB", "ab"], ["AB 1", "AB1"], [" GMA 123", "GMA"], ["123", "0.12"], ["BDE", "BCE", "bdefs"],
              [" abcdefg", "AB", "abcd"]]
TASK_DATA = [{"group_id": g, "variant_type": v} for g, v in
             [("group1", "original")] + [("group1", "paraphrase")] * 4
             + [("group2", "original")] + [("group2", "paraphrase")] * 4
             + [("group3", "original")] + [("group3", "paraphrase")] * 3 + [("group4", "original")]]
ROBUSTNESS = sorted(n for n in __import__("assay_unitxt.catalog", fromlist=["load_status"]).load_status()
                    if n.startswith("metrics.robustness."))


def test_all_robustness_entries_load():
    assert len(ROBUSTNESS) == 19


@pytest.mark.parametrize("name", ROBUSTNESS)
def test_robustness_entry_matches_unitxt(name):
    """unitxt's group_mean test data (15 instances, 4 groups, original / paraphrase variants).

    The values match under unitxt's names; the score_name and the interval names are the base
    score's (assay-unitxt's group_mean convention, docs/unitxt.md), not unitxt's group name."""
    u_inst, u_glob = unitxt_run(name, PREDICTIONS, REFERENCES, TASK_DATA)
    a_inst, a_glob = assay_run(name, PREDICTIONS, REFERENCES, TASK_DATA, n_resamples=0)
    base = u_inst[0]["score_name"]  # accuracy, string_containment or f1
    assert a_glob["score_name"] == base
    assert a_glob["score"] == pytest.approx(u_glob["score"], rel=1e-12)
    for k, v in _numbers(u_glob).items():
        if "_ci_" not in k:
            assert _close(v, a_glob[k]), f"{name} global {k}: unitxt {v}, assay {a_glob[k]}"
    for u, a in zip(u_inst, a_inst):
        assert _numbers(u) == pytest.approx(_numbers(a))


@pytest.mark.parametrize("name", ["metrics.tool_calling.key_value.accuracy",
                                  "metrics.tool_calling.key_value.token_overlap"])
def test_tool_call_key_value_matches_unitxt(name):
    preds = [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "C"}},
             {"name": "book", "arguments": {"who": {"first": "Ann", "last": "Lee"},
                                            "stops": [{"home": {"city": "Rome"}}, {"work": {"city": "Oslo"}}]}},
             {"name": "find", "arguments": {"items": [{"id": "1", "q": "a"}, {"id": "2", "q": "b b"}]}}]
    refs = [[{"name": "get_weather", "arguments": {"city": "Paris", "unit": "F"}}],
            [{"name": "book", "arguments": {"who": {"first": "Ann", "last": "Li"},
                                            "stops": [{"home": {"city": "Rome"}}, {"work": {"city": "Bergen"}}]}}],
            [{"name": "find", "arguments": {"items": [{"id": "1", "q": "a"}, {"id": "3", "q": "b"}]}}]]
    compare(name, preds, refs)


def test_recommended_no_gpu_is_unitxts_list_of_rouge(offline_nltk):
    metric, _ = unitxt_artifact.fetch_artifact("metrics.qa.open.recommended_no_gpu")
    assert [type(m).__name__ for m in metric.items] == ["Rouge"]
    preds, refs = ["the cat sat. on the mat", "a dog"], [["the cat sat on the mat"], ["a dog ran"]]
    _, listed = assay_run("metrics.qa.open.recommended_no_gpu", preds, refs, n_resamples=0)
    _, rouge = assay_run("metrics.rouge", preds, refs, n_resamples=0)
    assert listed == rouge


def test_every_loaded_entry_is_compared_here():
    """Each name assay loads appears by its catalog name in a test of this file or a test_unitxt_catalog_* sibling."""
    from pathlib import Path

    from assay_unitxt.catalog import load_status

    here = "".join(p.read_text(encoding="utf-8") for p in Path(__file__).parent.glob("test_unitxt_catalog_*.py"))
    generated = set(ROBUSTNESS) | {f"metrics.{m}_{a}_multi_label" for m in ("f1", "precision", "recall")
                                   for a in ("micro", "macro")}
    # test_unitxt_catalog_pipelines.py parametrizes every loaded metrics.rag.* pipeline
    generated |= {n for n in load_status() if n.startswith("metrics.rag.")}
    missing = [n for n in load_status() if f'"{n}"' not in here and n not in generated]
    assert missing == []
