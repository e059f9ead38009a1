"""The last offline ``metrics.*`` entries of unitxt 1.26.10, against unitxt run live on the same inputs.

``metrics.sacrebleu`` is unitxt's ``metric_pipeline`` around Hugging Face evaluate's ``sacrebleu``
module, which unitxt fetches from the Hub at run time. The test runs unitxt's own pipeline (its
``copy`` and ``map_instance_values`` steps, its ``HuggingfaceMetric``, instance and global scores)
with only ``unitxt.metrics.hf_evaluate_load`` replaced by a stand-in that calls ``sacrebleu`` as
evaluate's module script does (transposed reference streams, ``tokenize`` passed only when set).

Every test runs with sockets blocked.
"""

from __future__ import annotations

import importlib.util
import math

import pytest
import sacrebleu
import unitxt.artifact as unitxt_artifact  # the reference, installed by make setup (a missing one fails)
import unitxt.metrics as unitxt_metrics

import assay
from assay.errors import InvalidParameterError, MissingDependencyError
from assay_unitxt.catalog import hf_sacrebleu

# slow: importing unitxt (datasets, pandas) takes seconds
# offline: conftest's no_network fails a test that opens a socket or resolves a name
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_network")]




class _EvaluateSacrebleu:
    """What evaluate's ``sacrebleu`` module script computes (its ``_compute``), for unitxt's HuggingfaceMetric."""

    def compute(self, predictions, references, smooth_method="exp", smooth_value=None, force=False,
                lowercase=False, tokenize=None, use_effective_order=False):
        if isinstance(references[0], str):
            references = [[ref] for ref in references]
        count = len(references[0])
        assert all(len(refs) == count for refs in references)
        streams = [[refs[i] for refs in references] for i in range(count)]
        out = sacrebleu.corpus_bleu(predictions, streams, smooth_method=smooth_method, smooth_value=smooth_value,
                                    force=force, lowercase=lowercase, use_effective_order=use_effective_order,
                                    **({"tokenize": tokenize} if tokenize else {}))
        return {"score": out.score, "counts": out.counts, "totals": out.totals, "precisions": out.precisions,
                "bp": out.bp, "sys_len": out.sys_len, "ref_len": out.ref_len}


@pytest.fixture
def offline_hf_sacrebleu(monkeypatch):
    monkeypatch.setattr(unitxt_metrics, "hf_evaluate_load", lambda path, *a, **k: _EvaluateSacrebleu())


def unitxt_run(name, predictions, references, task_data=None):
    from unitxt.test_utils.metrics import apply_metric

    metric, _ = unitxt_artifact.fetch_artifact(name)
    out = apply_metric(metric, predictions, references, task_data)
    return [o["score"]["instance"] for o in out], out[0]["score"]["global"]


def assay_run(name, predictions, references, task_data=None, n_resamples=100):
    res = assay.evaluate(predictions, references, task_data=task_data, metrics=[name], n_resamples=n_resamples,
                         seed=0)
    return [r["score"]["instance"] for r in res], res.global_scores


def _numbers(d):
    return {k: v for k, v in d.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def compare(name, predictions, references, task_data=None, *, list_scores=()):
    u_inst, u_glob = unitxt_run(name, predictions, references, task_data)
    a_inst, a_glob = assay_run(name, predictions, references, task_data)
    assert a_glob["score_name"] == u_glob["score_name"]
    assert {k for k in a_glob if "_ci_" in k} == {k for k in u_glob if "_ci_" in k}
    u_vals = {k: v for k, v in _numbers(u_glob).items() if "_ci_" not in k}
    a_vals = {k: v for k, v in _numbers(a_glob).items() if "_ci_" not in k}
    assert set(a_vals) == set(u_vals), f"global scores: assay {sorted(a_vals)}, unitxt {sorted(u_vals)}"
    for k, v in u_vals.items():
        assert a_vals[k] == pytest.approx(v, rel=1e-9, abs=1e-12), (name, k)
    for k in a_glob:
        if k.endswith("_ci_low"):
            base = k[: -len("_ci_low")]
            assert a_glob[k] <= a_glob[base] + 1e-12 <= a_glob[base + "_ci_high"] + 2e-12
    assert set(list_scores) == {k for k, v in u_glob.items() if isinstance(v, list)}
    for i, (u, a) in enumerate(zip(u_inst, a_inst)):
        u_i, a_i = _numbers(u), _numbers(a)
        assert set(a_i) == set(u_i), f"instance {i}: assay {sorted(a_i)}, unitxt {sorted(u_i)}"
        for k, v in u_i.items():
            assert a_i[k] == pytest.approx(v, rel=1e-9, abs=1e-12) or (math.isnan(v) and math.isnan(a_i[k])), (i, k)
    return u_glob, a_glob


SACRE_P = ["the cat sat on the mat.", "a dog ran in the park today", "birds sing in trees", "Hello, World!",
           "xyz", "It is raining cats and dogs"]
SACRE_R = [["the cat sat on a mat."], ["a dog ran in the park"], ["birds sang in the trees"], ["hello world!"],
           ["abc"], ["it rains cats and dogs"]]
LISTS = ("counts", "totals", "precisions")


@pytest.mark.usefixtures("offline_hf_sacrebleu")
@pytest.mark.parametrize("task_data", [None, [{"target_language": "en"}] * len(SACRE_P)])
def test_sacrebleu_matches_unitxt(task_data):
    _, glob = compare("metrics.sacrebleu", SACRE_P, SACRE_R, task_data, list_scores=LISTS)
    assert glob["sacrebleu"] == pytest.approx(sacrebleu.corpus_bleu(SACRE_P, [[r[0] for r in SACRE_R]]).score)
    assert glob["score_name"] == "sacrebleu"


@pytest.mark.usefixtures("offline_hf_sacrebleu")
def test_sacrebleu_several_references_matches_unitxt():
    refs = [[r[0], r[0].upper()] for r in SACRE_R]
    compare("metrics.sacrebleu", SACRE_P, refs, list_scores=LISTS)


def test_sacrebleu_rejects_a_language_outside_unitxts_mapping_and_mixed_languages(monkeypatch):
    with pytest.raises(InvalidParameterError, match="'de'.*normalized_sacrebleu"):
        assay_run("metrics.sacrebleu", SACRE_P[:2], SACRE_R[:2], [{"target_language": "de"}] * 2)
    # two tokenizers in one collection (a second language mapped for the test): unitxt passes one value
    monkeypatch.setitem(hf_sacrebleu.TOKENIZERS, "xx", "char")
    with pytest.raises(InvalidParameterError, match="several target languages"):
        assay_run("metrics.sacrebleu", SACRE_P[:2], SACRE_R[:2],
                  [{"target_language": "en"}, {"target_language": "xx"}], n_resamples=0)


def test_sacrebleu_japanese_needs_mecab():
    task_data = [{"target_language": "ja"}] * 2
    if importlib.util.find_spec("MeCab") is None:
        with pytest.raises(MissingDependencyError, match="mecab-python3.*'ja'"):
            assay_run("metrics.sacrebleu", SACRE_P[:2], SACRE_R[:2], task_data)
    else:
        _, glob = assay_run("metrics.sacrebleu", SACRE_P[:2], SACRE_R[:2], task_data, n_resamples=0)
        want = sacrebleu.corpus_bleu(SACRE_P[:2], [[r[0] for r in SACRE_R[:2]]], tokenize="ja-mecab").score
        assert glob["sacrebleu"] == pytest.approx(want)


SQL_P = ["```sql\nSELECT name FROM users WHERE id = 1\n```",  # fenced, equal up to case
         "Here is the query: SELECT a AS x, b FROM t ORDER BY a; and more text",  # aliases, a label
         "select b, a from t order by a",  # columns as a set
         "SELECT COUNT(*) FROM orders WHERE total > 10",  # different clause
         "I cannot answer that",  # no SQL
         "SELECT * FROM t WHERE",  # does not parse
         "WITH c AS (SELECT 1 AS one) SELECT one FROM c",  # not a plain SELECT for sqlglot_equivalence
         "SELECT t.a FROM t JOIN u ON t.id = u.id",
         "SELECT  name\nFROM users\tWHERE id=1 ;"]
SQL_R = [["select name from users where id = 1"], ["SELECT a, b FROM t ORDER BY a"], ["SELECT a, b FROM t ORDER BY a"],
         ["SELECT COUNT(*) FROM orders WHERE total > 100"], ["SELECT 1"], ["SELECT * FROM t"],
         ["WITH c AS (SELECT 1 AS one) SELECT one FROM c"], ["SELECT t.a FROM u JOIN t ON u.id = t.id"],
         ["SELECT name FROM users WHERE id = 1"]]


def test_text2sql_non_execution_accuracy_matches_unitxt():
    _, glob = compare("metrics.text2sql.non_execution_accuracy", SQL_P, SQL_R)
    assert glob["score_name"] == "sqlglot_equivalence"
    # the inputs exercise every score both ways (no score is constant here)
    inst, _ = assay_run("metrics.text2sql.non_execution_accuracy", SQL_P, SQL_R, n_resamples=0)
    for key in ("sqlglot_validity", "sqlparse_validity", "sqlglot_equivalence", "sqlglot_optimized_equivalence",
                "sqlparse_equivalence", "sql_exact_match", "sql_syntactic_equivalence"):
        assert {i[key] for i in inst} == {0.0, 1.0}, key


def test_extract_sql_by_hand():
    from assay_unitxt.catalog.text2sql import extract_sql

    assert extract_sql("x ```SQL\nSELECT 1;\n``` SELECT 2;") == "SELECT 1;"
    assert extract_sql("Run: select a from t; then select b from u;") == "select a from t;"
    assert extract_sql("answer:\nDELETE FROM t") == "DELETE FROM t"
    assert extract_sql("we select things") == ""


def _rerank_data():
    # q1: gold p3 ranked 3rd of 7; q2: gold tied with two others (trec_eval's tie order decides); q3: gold
    # ranked 1st of 2; q4: two gold passages, one beyond rank 5; q5: no gold
    rows = [("q1", "p1", "0.9", 0), ("q1", "p2", "0.8", 0), ("q1", "p3", "0.7", 1), ("q1", "p4", "0.6", 0),
            ("q1", "p5", "0.5", 0), ("q1", "p6", "0.4", 0), ("q1", "p7", "0.3", 0),
            ("q2", "a", "0.5", 0), ("q2", "b", "0.5", 1), ("q2", "c", "0.5", 0),
            ("q3", "x", "0.2", 1), ("q3", "y", "0.1", 0),
            ("q4", "d1", "0.95", 1), ("q4", "d2", "0.9", 0), ("q4", "d3", "0.85", 0), ("q4", "d4", "0.8", 0),
            ("q4", "d5", "0.75", 0), ("q4", "d6", "0.1", 1),
            ("q5", "e1", "0.3", 0), ("q5", "e2", "0.6", 0)]
    preds = [p for _, _, p, _ in rows]
    refs = [[str(r)] for *_, r in rows]
    task_data = [{"query_id": q, "passage_id": d} for q, d, _, _ in rows]
    return preds, refs, task_data


@pytest.mark.filterwarnings("ignore::assay.errors.UndefinedMetricWarning")
def test_rerank_recall_matches_unitxt(monkeypatch):
    # unitxt checks for the distribution "pytrec_eval", whose sdist does not build here; pytrec-eval-terrier
    # (the maintained fork, wheels on PyPI) installs the same importable pytrec_eval module, which unitxt imports
    check = unitxt_metrics.RerankRecall.check_missing_requirements
    monkeypatch.setattr(unitxt_metrics.RerankRecall, "check_missing_requirements",
                        lambda self, requirements=None: check(self, ["pandas"]))
    preds, refs, task_data = _rerank_data()
    _, glob = compare("metrics.rerank_recall", preds, refs, task_data)
    assert glob["score_name"] == "recall_at_5"
    # q1: gold at rank 3 -> recall@1 = recall@2 = 0, recall@5 = 1; q4: 1 of 2 gold in the top 5 -> 0.5
    assert glob["recall_at_5"] > glob["recall_at_1"]


def test_rerank_recall_errors():
    with pytest.raises(InvalidParameterError, match="query_id"):
        assay_run("metrics.rerank_recall", ["0.5"], [["1"]], [{"passage_id": "p"}])
    with pytest.raises(InvalidParameterError, match="integer relevance"):
        assay_run("metrics.rerank_recall", ["0.5"], [["yes"]], [{"query_id": "q", "passage_id": "p"}])
    for bad in ("abc", "nan", None):  # unitxt ranks a non-numeric score as NaN; assay names the prediction
        with pytest.raises(InvalidParameterError, match=r"predictions\[0\]"):
            assay_run("metrics.rerank_recall", [bad, "0.4"], [["1"], ["0"]],
                      [{"query_id": "q", "passage_id": "p"}, {"query_id": "q", "passage_id": "r"}], n_resamples=0)


F1S_P = ["The cat's hat isn't red.", "hello world", "x", "New York-based U.K. firms (e.g. ACME) cost $5.50!",
         "a a b", ""]
F1S_R = [["the cat's hat is red", "A hat"], ["Hello, world!"], ["y"], ["UK firms based in New York cost 5.50 dollars"],
         ["a b b"], ["nothing"]]


@pytest.fixture
def english_folder(tmp_path):
    import spacy  # in the test extra (a missing one fails)

    folder = tmp_path / "en_pipeline"
    spacy.blank("en").to_disk(folder)
    return str(folder)


def test_f1_strings_matches_unitxt_on_a_local_english_pipeline(monkeypatch, english_folder):
    """unitxt loads spaCy's en_core_web_sm by name (downloading it when missing): here its spacy.load is
    pointed at a locally built English pipeline folder, which assay is given as spacy_model."""
    import spacy

    load = spacy.load
    monkeypatch.setattr(spacy, "load", lambda name, **kw: load(english_folder if name == "en_core_web_sm" else name,
                                                               **kw))
    u_inst, u_glob = unitxt_run("metrics.f1_strings", F1S_P, F1S_R)
    for spelling in (f"metrics.f1_strings[spacy_model={english_folder}]", "metrics.f1_strings[spacy_model=blank:en]"):
        a_inst, a_glob = assay_run(spelling, F1S_P, F1S_R)
        assert {k: v for k, v in a_glob.items() if k != "num_of_instances"} == pytest.approx(
            {k: v for k, v in u_glob.items() if k != "num_of_instances"})
        for u, a in zip(u_inst, a_inst):  # unitxt's instance score is a one-element list
            assert u["score_name"] == a["score_name"] == "f1_strings"
            assert a["f1_strings"] == pytest.approx(u["f1_strings"][0])
    assert u_glob["score_name"] == "f1_strings" and not any("_ci_" in k for k in u_glob)
    assert len({i["f1_strings"][0] for i in u_inst}) > 3  # the inputs give distinct values


def test_f1_strings_downloads_nothing():
    from assay_unitxt.catalog.f1_strings import SpacyPipelineNotFoundError

    with pytest.raises(SpacyPipelineNotFoundError, match="no_such_pipeline.*downloads nothing"):
        assay_run("metrics.f1_strings[spacy_model=no_such_pipeline]", ["a"], [["a"]], n_resamples=0)
