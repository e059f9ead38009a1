"""The ``evaluate:`` namespace: evaluate's result keys and scales, values from the libraries its modules wrap.

evaluate's module scripts are not on PyPI (neither its wheel nor its sdist ships them), so these
tests call the library each module wraps (scikit-learn, SciPy, sacrebleu, rouge-score, jiwer,
NLTK) the way that module calls it, or derive the value by hand where the module vendors a
script (NMT BLEU, SQuAD); docs/metrics.md says so.
"""

from __future__ import annotations

import math

import jiwer
import nltk
import numpy as np
import pytest
import sacrebleu
from nltk.translate import bleu_score, meteor_score
from rouge_score import rouge_scorer, scoring
from sacrebleu.metrics import CHRF, TER
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from scipy import stats
from sklearn import metrics as skm

import assay
from assay.errors import EvaluationError, InvalidParameterError, UnknownNameError

HYPS = ["the cat sat on the mat .", "a quick brown fox jumps", "hello world, hello!", "It is 3 o'clock ",
        "nothing here", "The big dog barked at the mailman."]
REFS = ["the cat sat on a mat.", "the quick brown fox jumped", "Hello world!", "It is 3 o'clock", "something there",
        "A big dog barked loudly at the mail man."]
REFS2 = [[r, r.upper()] for r in REFS]


def _labels(n=80, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.7, y, rng.integers(0, k, n))
    return y.tolist(), p.tolist()


def _numbers(n=80, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return x.tolist(), (x + rng.normal(size=n)).tolist()


def _f32(values):
    """evaluate's cast of a Value("float") feature: float32, handed over as Python floats."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def _scores(name, preds, refs, **options):
    return assay.load_metric(f"evaluate:{name}", **options).update(preds, refs).compute_scores()


@pytest.mark.parametrize("name, options, expected", [
    ("accuracy", {}, lambda y, p: {"accuracy": skm.accuracy_score(y, p)}),
    ("accuracy", {"normalize": False}, lambda y, p: {"accuracy": skm.accuracy_score(y, p, normalize=False)}),
    ("f1", {"average": "macro"}, lambda y, p: {"f1": skm.f1_score(y, p, average="macro")}),
    ("precision", {"average": "weighted"}, lambda y, p: {"precision": skm.precision_score(y, p, average="weighted")}),
    ("recall", {"average": "micro"}, lambda y, p: {"recall": skm.recall_score(y, p, average="micro")}),
    ("matthews_correlation", {}, lambda y, p: {"matthews_correlation": skm.matthews_corrcoef(y, p)}),
    ("glue", {"config_name": "cola"}, lambda y, p: {"matthews_correlation": skm.matthews_corrcoef(y, p)}),
    ("glue", {"config_name": "mnli"}, lambda y, p: {"accuracy": skm.accuracy_score(y, p)}),
])
def test_label_modules_equal_sklearn(system, name, options, expected):
    y, p = _labels()
    want = expected(y, p)
    got = _scores(name, p, [[v] for v in y], **options)
    assert {k: got[k] for k in want} == pytest.approx(want, rel=1e-15)
    assert got["score"] == want[next(iter(want))]


def test_binary_modules_and_glue_mrpc(system):
    y, p = _labels(k=2)
    assert _scores("f1", p, [[v] for v in y])["f1"] == skm.f1_score(y, p)  # evaluate's default average="binary"
    got = _scores("glue", p, [[v] for v in y], config_name="mrpc")
    assert (got["accuracy"], got["f1"]) == (np.mean(np.array(y) == np.array(p)), skm.f1_score(y, p))
    assert got["score_name"] == "accuracy"
    rng = np.random.default_rng(2)
    s = rng.random(len(y)).tolist()
    assert _scores("roc_auc", s, [[v] for v in y])["roc_auc"] == skm.roc_auc_score(y, _f32(s))
    probs = rng.dirichlet(np.ones(3), 80)
    y3, _ = _labels()
    got = _scores("roc_auc", list(probs), [[v] for v in y3], config_name="multiclass", multi_class="ovr")
    assert got["roc_auc"] == skm.roc_auc_score(y3, _f32(probs), multi_class="ovr")


def test_number_modules_equal_sklearn_and_scipy(system):
    x, z = _numbers()
    refs = [[v] for v in x]
    x32, z32 = _f32(x), _f32(z)
    assert _scores("mae", z, refs)["mae"] != skm.mean_absolute_error(x, z)  # the float32 cast shows
    x, z = x32, z32
    assert _scores("mae", z, refs)["mae"] == skm.mean_absolute_error(x, z)
    assert _scores("mse", z, refs)["mse"] == skm.mean_squared_error(x, z)
    assert _scores("mse", z, refs, squared=False)["mse"] == skm.root_mean_squared_error(x, z)
    got = _scores("pearsonr", z, refs, return_pvalue=True)
    r, pv = stats.pearsonr(x, z)
    assert (got["pearsonr"], got["p-value"]) == (r, pv)
    got = _scores("spearmanr", z, refs, return_pvalue=True)
    rho, pv = stats.spearmanr(x, z)
    assert (got["spearmanr"], got["spearmanr_pvalue"]) == (rho, pv)
    assert set(_scores("spearmanr", z, refs)) == {"spearmanr", "score", "score_name"}
    got = _scores("glue", z, refs, config_name="stsb")
    x, z = x.astype(np.float32), z.astype(np.float32)  # glue hands evaluate's features over as NumPy arrays
    assert (got["pearson"], got["spearmanr"]) == (stats.pearsonr(z, x)[0], stats.spearmanr(z, x)[0])
    assert assay.load_metric("evaluate:mae").higher_is_better is False


def test_exact_match_options(system):
    preds, refs = ["The Cat!", "dog 12", "a-b"], [["the cat"], ["dog"], ["ab"]]
    assert _scores("exact_match", preds, refs)["exact_match"] == 0.0
    assert _scores("exact_match", preds, refs, ignore_case=True, ignore_punctuation=True)["exact_match"] == 2 / 3
    got = _scores("exact_match", preds, refs, ignore_case=True, ignore_punctuation=True, ignore_numbers=True,
                  regexes_to_ignore=[" $"])
    # the regexes run first, on "dog 12" (no trailing space yet); removing the digits then leaves "dog ", not "dog"
    assert got["exact_match"] == 2 / 3
    got = _scores("exact_match", preds, refs, ignore_case=True, ignore_punctuation=True, regexes_to_ignore=[" \\d+"])
    assert got["exact_match"] == 1.0
    assert _scores("exact_match", ["dog 1"], [["dog"]], regexes_to_ignore=[" \\d"])["exact_match"] == 1.0


def test_bleu_keys_and_values_equal_nltk_corpus_bleu(system):
    """evaluate's bleu (NMT's) equals NLTK's corpus BLEU with one reference each (shortest = closest length) and
    predictions of at least 4 tokens (NLTK counts a denominator of 1 for an order a prediction is too short for)."""
    tok = Tokenizer13a()
    hyps, refs = HYPS[:4] + HYPS[5:], REFS[:4] + REFS[5:]
    assert min(len(tok(h).split()) for h in hyps) >= 4
    got = _scores("bleu", hyps, [[r] for r in refs])
    expected = bleu_score.corpus_bleu([[tok(r).split()] for r in refs], [tok(h).split() for h in hyps])
    assert got["bleu"] == pytest.approx(expected, rel=1e-12)
    assert 0 < got["bleu"] < 1  # evaluate's scale, 0-1
    assert set(got) == {"bleu", "precisions_1", "precisions_2", "precisions_3", "precisions_4", "brevity_penalty",
                        "length_ratio", "translation_length", "reference_length", "score", "score_name"}
    hyp_len = sum(len(tok(h).split()) for h in hyps)
    ref_len = sum(len(tok(r).split()) for r in refs)
    assert (got["translation_length"], got["reference_length"]) == (hyp_len, ref_len)
    assert got["brevity_penalty"] == pytest.approx(min(1.0, math.exp(1 - ref_len / hyp_len)), rel=1e-12)


def test_bleu_multi_reference_and_smoothing_by_hand(system):
    # hyp "a b c" against "a b d" and "x b c d e": unigrams a,b,c all matched (3/3); bigrams ab (ref 1), bc (ref 2)
    # 2/2; order 3: "a b c" in neither, 0/1. Reference length: the shortest reference, 3 -> ratio 1, bp 1.
    got = _scores("bleu", ["a b c"], [["a b d", "x b c d e"]], max_order=3)
    assert [got[f"precisions_{i}"] for i in (1, 2, 3)] == [1.0, 1.0, 0.0]
    assert got["bleu"] == 0.0 and got["brevity_penalty"] == 1.0 and got["reference_length"] == 3
    got = _scores("bleu", ["a b c"], [["a b d", "x b c d e"]], max_order=3, smooth=True)
    assert [got[f"precisions_{i}"] for i in (1, 2, 3)] == [1.0, 1.0, 0.5]
    assert got["bleu"] == pytest.approx(0.5 ** (1 / 3), rel=1e-12)


def test_sacrebleu_chrf_ter_equal_sacrebleu(system):
    streams = [[r[0] for r in REFS2], [r[1] for r in REFS2]]
    got = _scores("sacrebleu", HYPS, REFS2)
    out = sacrebleu.corpus_bleu(HYPS, streams)
    assert got["score"] == out.score and got["bp"] == out.bp and (got["sys_len"], got["ref_len"]) == (
        out.sys_len, out.ref_len)
    assert [got[f"counts_{i}"] for i in range(1, 5)] == out.counts
    assert [got[f"precisions_{i}"] for i in range(1, 5)] == out.precisions
    got = _scores("sacrebleu", HYPS, [[r] for r in REFS], lowercase=True, tokenize="char")
    assert got["score"] == sacrebleu.corpus_bleu(HYPS, [REFS], lowercase=True, tokenize="char").score
    got = _scores("chrf", HYPS, REFS2, word_order=2)
    assert got["score"] == CHRF(word_order=2).corpus_score(HYPS, streams).score
    assert (got["char_order"], got["word_order"], got["beta"]) == (6, 2, 2)
    got = _scores("ter", HYPS, REFS2, normalized=True, case_sensitive=True)
    out = TER(normalized=True, case_sensitive=True).corpus_score(HYPS, streams)
    assert (got["score"], got["num_edits"], got["ref_length"]) == (out.score, out.num_edits, out.ref_length)
    assert assay.load_metric("evaluate:ter").higher_is_better is False
    with pytest.raises(InvalidParameterError, match="same number of references"):
        _scores("sacrebleu", HYPS[:2], [["a"], ["b", "c"]])


def test_wer_cer_equal_jiwer(system):
    refs = [[r] for r in REFS]
    words = [jiwer.process_words(r, h) for r, h in zip(REFS, HYPS)]
    want = sum(w.substitutions + w.deletions + w.insertions for w in words) / sum(
        w.substitutions + w.deletions + w.hits for w in words)
    assert _scores("wer", HYPS, refs)["wer"] == want
    assert _scores("wer", HYPS, refs, concatenate_texts=True)["wer"] == jiwer.process_words(REFS, HYPS).wer
    chars = [jiwer.process_characters(r, h) for r, h in zip(REFS, HYPS)]
    want = sum(c.substitutions + c.deletions + c.insertions for c in chars) / sum(
        c.substitutions + c.deletions + c.hits for c in chars)
    assert _scores("cer", HYPS, refs)["cer"] == want
    with pytest.raises(InvalidParameterError, match="one reference per prediction"):
        _scores("wer", ["a"], [["a", "b"]])


@pytest.mark.parametrize("options, multi", [({}, False), ({"use_stemmer": True, "rouge_types": ["rougeL", "rouge2"]},
                                                          True)])
def test_rouge_equals_rouge_score_bootstrap_aggregate(system, options, multi):
    refs = REFS2 if multi else [[r] for r in REFS]
    types = options.get("rouge_types", ["rouge1", "rouge2", "rougeL", "rougeLsum"])
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=options.get("use_stemmer", False))
    aggregator = scoring.BootstrapAggregator()
    for r, h in zip(refs, HYPS):
        aggregator.add_scores(scorer.score_multi(r, h) if multi else scorer.score(r[0], h))
    np.random.seed(11)  # evaluate's aggregate draws 1,000 resamples from NumPy's global state
    want = {k: v.mid.fmeasure for k, v in aggregator.aggregate().items()}
    m = assay.load_metric("evaluate:rouge", **options).update(HYPS, refs)
    np.random.seed(11)
    got = m.compute_scores()
    assert {k: got[k] for k in types} == want
    assert got["score_name"] == types[0]


def test_squad_by_hand(system):
    preds = [{"id": "1", "prediction_text": "The Eiffel tower"}, {"id": "2", "prediction_text": "in 1999"}]
    refs = [{"id": "1", "answers": {"text": ["Eiffel Tower", "tower"], "answer_start": [0, 7]}},
            {"id": "2", "answers": {"text": ["1998"], "answer_start": [3]}}]
    got = _scores("squad", preds, [[r] for r in refs])
    # 1: "eiffel tower" == normalised gold -> EM 1, F1 1; 2: "in 1999" vs "1998": no common token -> 0, 0
    assert (got["exact_match"], got["f1"]) == (50.0, 50.0)
    # assay's layout: plain texts; "big red dog" vs "red dog": precision 2/3, recall 1 -> F1 0.8
    got = _scores("squad", ["big red dog"], [["red dog", "cat"]])
    assert got["exact_match"] == 0.0 and got["f1"] == pytest.approx(80.0, rel=1e-12)
    with pytest.raises(InvalidParameterError, match="differs from its reference"):
        _scores("squad", preds, [[refs[1]], [refs[0]]])


def test_squad_v2_by_hand(system):
    preds = [{"prediction_text": "red dog", "no_answer_probability": 0.2},
             {"prediction_text": "", "no_answer_probability": 0.9},
             {"prediction_text": "blue", "no_answer_probability": 0.6}]
    refs = [[["big red dog"]], [[]], [[]]]
    refs = [{"answers": {"text": r[0], "answer_start": [0] * len(r[0])}} for r in refs]
    got = _scores("squad_v2", preds, [[r] for r in refs])
    # raw exact: 0, 1 (no answer, empty prediction), 0; raw f1: 0.8, 1, 0 (threshold 1.0: nothing is "no answer")
    assert (got["exact"], got["f1"], got["total"]) == pytest.approx((100 / 3, 180 / 3, 3))
    assert (got["HasAns_exact"], got["HasAns_f1"], got["HasAns_total"]) == pytest.approx((0.0, 80.0, 1))
    assert (got["NoAns_exact"], got["NoAns_f1"], got["NoAns_total"]) == pytest.approx((50.0, 50.0, 2))
    # best threshold (f1): start at 2 (both unanswerable right when all abstain); by rising probability:
    # 0.2 has answer +0.8 -> 2.8 (best, thresh 0.2); 0.6 answered unanswerable -1 -> 1.8; 0.9 empty +0 -> 1.8
    assert (got["best_f1"], got["best_f1_thresh"]) == pytest.approx((280 / 3, 0.2))
    assert (got["best_exact"], got["best_exact_thresh"]) == pytest.approx((200 / 3, 0.0))
    got = _scores("squad_v2", preds, [[r] for r in refs], no_answer_threshold=0.5)
    # 0.6 and 0.9 now abstain: both unanswerable -> 1 each; the first keeps 0 / 0.8
    assert (got["exact"], got["f1"]) == pytest.approx((200 / 3, 280 / 3))


@pytest.fixture
def restored_wordnet():
    """NLTK's lazy ``wordnet`` turns into the reader it loads: put the unloaded one back afterwards."""
    wordnet = nltk.corpus.wordnet
    cls, state = wordnet.__class__, dict(wordnet.__dict__)
    yield
    wordnet.__class__ = cls
    wordnet.__dict__.clear()
    wordnet.__dict__.update(state)


def test_meteor_equals_nltk_with_a_wordnet_on_disk(system, tmp_path, monkeypatch, restored_wordnet):
    """A WordNet without entries (no synonyms): METEOR's exact and stem matches, as NLTK computes them."""
    folder = tmp_path / "corpora" / "wordnet"
    folder.mkdir(parents=True)
    (folder / "lexnames").write_text("00\tadj.all\t3\n01\tadj.pert\t3\n02\tadv.all\t4\n")
    for pos in ("adj", "adv", "noun", "verb"):
        for kind in ("index", "data"):
            (folder / f"{kind}.{pos}").write_text("")
        (folder / f"{pos}.exc").write_text("")
    (folder / "index.sense").write_text("")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path), *nltk.data.path])
    refs = [[r] for r in ["the cats sat on a mat", "a fast brown fox jumped"]] + [["one two", "two one three"]]
    hyps = ["the cat sat on the mat", "a quick brown fox jumps", "one two three"]

    def tok(text):
        return nltk.word_tokenize(text, preserve_line=True)

    want = np.mean([meteor_score.meteor_score([tok(r) for r in rs], tok(h), alpha=0.8)
                    for rs, h in zip(refs, hyps)])
    got = _scores("meteor", hyps, refs, split_sentences=False, alpha=0.8)
    assert got["meteor"] == pytest.approx(want, rel=1e-15)
    assert 0 < got["meteor"] < 1


def test_meteor_without_nltk_data_says_what_to_do(system, monkeypatch):
    def missing(*args, **kwargs):
        raise LookupError("Resource punkt_tab not found.")

    monkeypatch.setattr(nltk, "word_tokenize", missing)
    with pytest.raises(EvaluationError, match=r"never downloads.*nltk.downloader wordnet punkt_tab"):
        _scores("meteor", ["a"], [["a"]])


def test_intervals_compare_and_instance_scores(system):
    y, p = _labels(120)
    refs = [[v] for v in y]
    res = assay.evaluate(p, refs, metrics=["evaluate:accuracy"], n_resamples=200, seed=0)
    g = res.global_scores
    assert g["score"] == skm.accuracy_score(y, p)
    assert g["score_ci_low"] < g["score"] < g["score_ci_high"]
    assert [s["accuracy"] for s in res.instance_scores] == [float(a == b) for a, b in zip(p, y)]
    res = assay.evaluate(HYPS, [[r] for r in REFS], metrics=["evaluate:bleu"], n_resamples=100, seed=0)
    assert res.global_scores["score_ci_low"] <= res.global_scores["score"] <= res.global_scores["score_ci_high"]


def test_unknown_names_options_and_configs(system):
    with pytest.raises(UnknownNameError, match="sacrebleu"):
        assay.load_metric("evaluate:sacreblue")
    with pytest.raises(InvalidParameterError, match="Unknown option 'use_stemer'.*use_stemmer"):
        assay.load_metric("evaluate:rouge[use_stemer=true]")
    with pytest.raises(InvalidParameterError, match="config_name \\(required\\) must be one of"):
        assay.load_metric("evaluate:glue")
    with pytest.raises(InvalidParameterError, match="sample_weight.*not supported"):
        assay.load_metric("evaluate:accuracy", sample_weight=[1, 2])
    with pytest.raises(InvalidParameterError, match="average=None"):
        assay.load_metric("evaluate:f1", average=None)
    with pytest.raises(InvalidParameterError, match="use_aggregator"):
        assay.load_metric("evaluate:rouge[use_aggregator=false]")
    m = assay.load_metric("evaluate:glue[config_name=stsb]")
    assert m.name == "evaluate:glue[config_name=stsb]" and m.main_score == "pearson"
    assert "evaluate:anything" in assay.get_registry("metric")


@pytest.mark.parametrize("name", ["bleu", "sacrebleu", "wer", "squad", "exact_match"])
def test_shards_merge_and_pickle_to_one_pass(system, name):
    import pickle

    refs = [[r] for r in REFS]
    whole = assay.load_metric(f"evaluate:{name}").update(HYPS, refs).compute_scores()
    first = pickle.loads(pickle.dumps(assay.load_metric(f"evaluate:{name}").update(HYPS[:3], refs[:3])))
    second = assay.load_metric(f"evaluate:{name}").update(HYPS[3:], refs[3:])
    assert first.merge(second).compute_scores() == whole


@pytest.mark.slow
def test_compare_two_systems(system):
    y, a = _labels(150, seed=3)
    _, b = _labels(150, seed=4)
    b = [t if i % 5 else (t + 1) % 3 for i, t in enumerate(y)]  # right 80 % of the time; a about 70 %
    refs = [[v] for v in y]
    ra = assay.evaluate(a, refs, metrics=["evaluate:f1[average=macro]"], n_resamples=0)
    rb = assay.evaluate(b, refs, metrics=["evaluate:f1[average=macro]"], n_resamples=0)
    c = assay.compare(ra, rb, metric="evaluate:f1[average=macro]", n_resamples=300, seed=0)
    assert (c.score_a, c.score_b) == (skm.f1_score(y, a, average="macro"), skm.f1_score(y, b, average="macro"))
    assert c.ci_low <= c.difference <= c.ci_high


def test_bad_inputs_are_errors_naming_the_metric(system):
    with pytest.raises(InvalidParameterError, match=r"evaluate:mae: `predictions\[1\]` is NaN"):
        _scores("mae", [1.0, float("nan")], [[1.0], [2.0]])
    with pytest.raises(InvalidParameterError, match="integer labels"):
        _scores("accuracy", [1.5, 1], [[1], [1]])
    with pytest.raises(InvalidParameterError, match="evaluate:bleu: a prediction must be a string; got list"):
        _scores("bleu", [["a", "b"]], [["a b"]])
    with pytest.raises(EvaluationError, match="'evaluate:squad' has seen no data"):
        assay.load_metric("evaluate:squad").compute_scores()
    with pytest.warns(assay.errors.UndefinedMetricWarning, match="references are empty"):
        assert math.isnan(_scores("wer", ["a"], [[""]])["wer"])


@pytest.mark.parametrize("spec", ["evaluate:glue[config_name=stsb]", "evaluate:glue[config_name=qqp]",
                                  "evaluate:pearsonr[return_pvalue=true]", "evaluate:rouge[rouge_types=[rougeL]]",
                                  "evaluate:squad_v2", "evaluate:sacrebleu", "evaluate:bleu", "evaluate:chrf",
                                  "evaluate:ter", "evaluate:wer"])
def test_declared_result_keys_are_the_keys_computed(system, spec):
    """Each module declares evaluate's result keys (docs/metrics.md's table); the computed result has exactly those."""
    m = assay.load_metric(spec)
    if "glue" in spec or "pearsonr" in spec:
        preds, refs = [0, 1, 1, 0, 1], [[0], [1], [0], [0], [1]]
    else:
        preds, refs = HYPS, [[r] for r in REFS]
    computed = list(m.module.reduce(list(m.map_all(preds, refs))))
    declared = list(m.module.result_keys())
    if spec == "evaluate:squad_v2":  # as in evaluate, NoAns_* only when some question has no answer (none here)
        declared = [k for k in declared if not k.startswith("NoAns_")]
    assert computed == declared
