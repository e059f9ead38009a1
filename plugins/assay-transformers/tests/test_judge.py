"""Model-judged metrics (issue 25 item 2): parsing, records, resuming, intervals, compare, provenance.

Two kinds of judge: a test-local engine (:class:`ScriptedJudge`, the engine protocol: an
``identity`` and ``generate``) whose answers are set by the test, for the parsing, record and
resume logic; and a tiny random GPT-2 built here and saved to a folder, run end to end through
``llm_as_judge[model=FOLDER]``, whose answers are checked against ``transformers``' own greedy
generation on the same prompts. unitxt 1.26.10 (installed by ``make setup``) is the reference
for the RAG templates' prompts and the score parsing.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import assay
from assay.errors import EvaluationError, InvalidParameterError, SignatureMismatchError
from assay_transformers.judge import (
    DEFAULT_TEMPLATE,
    RAG_DEFINITIONS,
    TEMPLATES,
    LLMJudge,
    judgements,
    parse_answer,
)
from assay_transformers.judge_cache import JudgementCache


class ScriptedJudge:
    """A judge whose answer to a prompt is the answer of the first key (a word of the prompt) it contains."""

    def __init__(self, answers, identity="scripted-judge:v1", fail_after=None):
        self.answers = answers
        self.identity = identity
        self.settings = {"kind": "scripted"}
        self.prompts = []
        self.fail_after = fail_after

    def generate(self, prompts):
        out = []
        for p in prompts:
            if self.fail_after is not None and len(self.prompts) >= self.fail_after:
                raise RuntimeError("judge went away")
            self.prompts.append(p)
            out.append(next(a for k, a in self.answers.items() if k in p))
        return out


ANSWERS = {"alpha": "8", "bravo": "3 out of 10", "charlie": "Rating: 9", "delta": "10", "echo": "0", "foxtrot": "5"}
PREDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
REFS = [["ref one"], ["ref two"], ["ref three"], ["ref four"], ["ref five"], ["ref six"]]


# --------------------------------------------------------------------------- parsing, against unitxt
def test_parse_answer_matches_unitxt_postprocessors():
    from unitxt.processors import ScaleNumberToZeroOneReturnZeroIfFails, TakeFirstWord, YesToOneElseZero

    first, scale, yes = TakeFirstWord(), ScaleNumberToZeroOneReturnZeroIfFails(), YesToOneElseZero()

    def unitxt_0_10(answer):  # take_first_word, lower_case, cast_to_float_return_zero_if_failed, scale_0_10_to_0_1
        token = first.process_value(answer).lower()
        try:
            value = float(token)
        except ValueError:
            value = 0.0
        return scale.process_value(value)

    def unitxt_yes_no(answer):  # take_first_word, lower_case, predictions_yes_1_else_0, cast
        return float(yes.process_value(first.process_value(answer).lower()))

    numeric = ["8", " 7.5 because", "10", "0", "-3", "12", "3 out of 10", "Rating: 9", "", "nine"]
    for a in numeric:
        mine = parse_answer(a, "0_10")
        ref = unitxt_0_10(a)
        if mine is None:  # unparsable here; unitxt gives 0.0
            assert ref == 0.0, a
        else:
            assert mine == pytest.approx(ref), a
    assert [parse_answer(a, "0_10") for a in ["Rating: 9", "", "nine"]] == [None, None, None]
    for a in ["Yes", "yes, it is", "No.", "no", "Maybe", "", "The answer is yes"]:
        mine = parse_answer(a, "yes_no")
        ref = unitxt_yes_no(a)
        assert (ref == 0.0 if mine is None else mine == ref), a
    assert parse_answer("Maybe", "yes_no") is None and parse_answer("No.", "yes_no") == 0.0
    assert parse_answer("42 apples", "number") == 42.0


# --------------------------------------------------------------------------- RAG prompts, against unitxt
def test_rag_templates_render_as_unitxt_formats_empty():
    from unitxt.artifact import fetch_artifact
    from unitxt.operators import SequentialOperator

    fields = {"question": "Who wrote it?", "contexts": ["The first doc.", "The second doc."],
              "answer": "Someone wrote it.", "ground_truths": ["A writer", "An author"], "choices": ["yes", "no"]}
    targets = {"is_faithful": ["-"], "is_context_relevant": ["-"], "is_correct": ["-"], "number_val": -1}
    for d in RAG_DEFINITIONS.values():
        template, _ = fetch_artifact("templates." + d.template)
        ref = SequentialOperator(steps=[template, "formats.empty"]).process_instance(
            {"input_fields": dict(fields), "reference_fields": dict(targets)})["source"]
        assert TEMPLATES[d.template].render(fields) == ref, d.template


# --------------------------------------------------------------------------- scripted engine: records, NaN
def test_scores_records_and_unparsable_nan(tmp_path):
    engine = ScriptedJudge(ANSWERS)
    m = LLMJudge(model=engine, cache_dir=tmp_path / "c", batch_size=4)
    with pytest.warns(UserWarning, match=r"1 of 6 judge answers could not be read.*'Rating: 9'"):
        res = assay.evaluate(PREDS, REFS, metrics=[m], n_resamples=200, seed=1)
    expected = [0.8, 0.3, math.nan, 1.0, 0.0, 0.5]
    got = [r["score"]["instance"]["llm_as_judge"] for r in res]
    np.testing.assert_allclose(got, expected)
    assert [r["score"]["instance"]["llm_as_judge_unparsable"] for r in res] == [0, 0, 1, 0, 0, 0]
    g = res.global_scores
    assert g["llm_as_judge"] == pytest.approx((0.8 + 0.3 + 1.0 + 0.0 + 0.5) / 5)
    assert g["llm_as_judge_unparsable"] == pytest.approx(1 / 6)
    assert g["llm_as_judge_ci_low"] <= g["llm_as_judge"] <= g["llm_as_judge_ci_high"]
    assert g["llm_as_judge_ci_low"] < g["llm_as_judge_ci_high"]
    recs = judgements(res)
    assert len(recs) == 6 and [r.answer for r in recs] == [ANSWERS[p] for p in PREDS]
    assert not any(r.cached for r in recs) and [r.parsed for r in recs] == [True, True, False, True, True, True]
    hand = ("You are given one or more reference answers and a prediction from a model. Compare the \"Prediction\" "
            "with the \"Reference\" to determine whether the prediction says what the reference says.\nOn a scale "
            "of 0 to 10, how well does the prediction match the reference? Reply with your rating score without any "
            "preceding explanation.\nReference: ref one\n\nPrediction: alpha\nAnswer: ")
    assert recs[0].prompt == hand and engine.prompts[0] == hand
    # unitxt's convention: an unparsable answer scores 0.0
    with pytest.warns(UserWarning, match=r"scored 0.0 \(on_unparsable='zero'\)"):
        z = assay.evaluate(PREDS, REFS, metrics=[LLMJudge(model=ScriptedJudge(ANSWERS), on_unparsable="zero")],
                           n_resamples=0)
    assert z[2]["score"]["instance"]["llm_as_judge"] == 0.0
    assert z.global_scores["llm_as_judge"] == pytest.approx((0.8 + 0.3 + 1.0 + 0.0 + 0.5) / 6)


def test_user_template_task_data_fields_and_errors():
    engine = ScriptedJudge({"alpha": "yes", "bravo": "no"})
    m = assay.load_metric("llm_as_judge", model=engine, template="Q: {question}\nIs {prediction} right? yes/no",
                          parser="yes_no")
    res = assay.evaluate(["alpha", "bravo"], [["x"], ["y"]], metrics=[m],
                         task_data=[{"question": "first?"}, {"question": "second?"}], n_resamples=0)
    assert engine.prompts == ["Q: first?\nIs alpha right? yes/no", "Q: second?\nIs bravo right? yes/no"]
    assert [r["score"]["instance"]["llm_as_judge"] for r in res] == [1.0, 0.0]
    with pytest.raises(InvalidParameterError, match=r"uses the field 'question', which instance 0 does not have"):
        assay.evaluate(["alpha"], [["x"]], metrics=[LLMJudge(model=engine, template="{question} {prediction}")])
    with pytest.raises(InvalidParameterError, match="needs model="):
        assay.evaluate(["alpha"], [["x"]], metrics=["llm_as_judge"])
    with pytest.raises(InvalidParameterError, match="'parser' must be one of"):
        LLMJudge(model=engine, parser="stars")
    with pytest.raises(InvalidParameterError, match=r"max_new_tokens=4 cannot apply to this judge"):
        LLMJudge(model=engine, max_new_tokens=4)
    with pytest.raises(InvalidParameterError, match=r"name the model it serves with api_model="):
        LLMJudge(model="http://127.0.0.1:1/v1")
    with pytest.raises(InvalidParameterError, match=r"api_model= and endpoint= are for a model behind an HTTP"):
        LLMJudge(model=engine, api_model="m")


def test_rag_judge_faithfulness_and_context_relevance():
    engine = ScriptedJudge({"Paris is big": "Yes", "Lyon": "No, it is not", "doc about Rome": "7"})
    m = assay.load_metric("rag_judge.faithfulness_q_c_a", model=engine)
    td = [{"question": "What is Paris?", "contexts": ["Paris is big."]},
          {"question": "What is Lyon?", "contexts": ["Lyon is a city."]}]
    res = assay.evaluate(["Paris is big", "Lyon is small"], None, metrics=[m], task_data=td, n_resamples=0)
    assert [r["score"]["instance"]["faithfulness_q_c_a"] for r in res] == [1.0, 0.0]
    assert engine.prompts[0].endswith("Question: What is Paris?\n\nEvidence: Paris is big.\n\nPrediction: Paris is "
                                      "big\nAnswer: ")
    cr = assay.load_metric("rag_judge.context_relevance_q_c_ares_numeric", model=engine)
    res = assay.evaluate([["doc about Rome", "another"]], None, metrics=[cr], task_data=[{"question": "Rome?"}],
                         n_resamples=0)
    assert res[0]["score"]["instance"]["context_relevance_q_c_ares_numeric"] == pytest.approx(0.7)
    assert "Document: doc about Rome, another\n" in engine.prompts[-1]


# --------------------------------------------------------------------------- resume and the cache file
def test_resume_after_failure_does_not_rejudge(tmp_path):
    cache = tmp_path / "judgements"
    dying = ScriptedJudge(ANSWERS, fail_after=3)
    with pytest.raises(RuntimeError, match="judge went away"):
        assay.evaluate(PREDS, REFS, metrics=[LLMJudge(model=dying, cache_dir=cache, batch_size=1)], n_resamples=0)
    (file,) = cache.glob("judge-*.jsonl")
    saved = [json.loads(line) for line in file.read_text().splitlines()]
    assert [s["answer"] for s in saved] == ["8", "3 out of 10", "Rating: 9"]
    again = ScriptedJudge(ANSWERS)
    with pytest.warns(UserWarning, match="could not be read"):
        res = assay.evaluate(PREDS, REFS, metrics=[LLMJudge(model=again, cache_dir=cache, batch_size=2)],
                             n_resamples=0)
    assert [p for p in again.prompts] == [r.prompt for r in judgements(res)[3:]]  # only the last three judged
    assert [r.cached for r in judgements(res)] == [True, True, True, False, False, False]
    np.testing.assert_allclose([r["score"]["instance"]["llm_as_judge"] for r in res],
                               [0.8, 0.3, math.nan, 1.0, 0.0, 0.5])
    # a judge with another identity shares nothing
    other = ScriptedJudge(ANSWERS, identity="scripted-judge:v2")
    with pytest.warns(UserWarning):
        assay.evaluate(PREDS, REFS, metrics=[LLMJudge(model=other, cache_dir=cache)], n_resamples=0)
    assert len(other.prompts) == 6


def test_cache_torn_last_line_is_dropped_and_edited_line_is_an_error(tmp_path):
    c = JudgementCache(tmp_path, "judge:x", {"a": 1})
    c.add(["p1", "p2"], ["yes", "no"])
    with c.path.open("ab") as fh:
        fh.write(b'{"key": "abc", "model": "judge:x", "pro')  # a write cut short by a kill
    fresh = JudgementCache(tmp_path, "judge:x", {"a": 1})
    with pytest.warns(UserWarning, match="ends with an incomplete line"):
        assert fresh.get("p1") == "yes"
    assert fresh.get("p3") is None and len(fresh) == 2
    assert c.path.read_bytes().endswith(b"\n")  # truncated: the next append starts a line of its own
    fresh.add(["p3"], ["maybe"])
    assert JudgementCache(tmp_path, "judge:x", {"a": 1}).get("p3") == "maybe"
    lines = c.path.read_text().splitlines()
    record = json.loads(lines[1])
    record["answer"] = "yes"
    record["prompt"] = "edited"
    lines[1] = json.dumps(record)
    c.path.write_text("\n".join(lines) + "\n")
    with pytest.raises(EvaluationError, match=r"line 2 of the judgement cache .*edited"):
        JudgementCache(tmp_path, "judge:x", {"a": 1}).get("p1")


# --------------------------------------------------------------------------- provenance and compare
def test_signature_names_judge_and_template_not_cache_dir(tmp_path):
    with pytest.warns(UserWarning):
        a = assay.evaluate(PREDS, REFS, metrics=[LLMJudge(model=ScriptedJudge(ANSWERS), cache_dir=tmp_path / "a")],
                           n_resamples=50)
    sig = a.info["signature"]
    digest = hashlib.sha256("\0".join((DEFAULT_TEMPLATE.instruction, DEFAULT_TEMPLATE.input_format,
                                       DEFAULT_TEMPLATE.target_prefix)).encode()).hexdigest()[:12]
    assert f"llm_as_judge[model=scripted-judge:v1, template=default@{digest}]" in sig
    assert "cache_dir" not in sig and str(tmp_path) not in sig
    with pytest.warns(UserWarning):
        b = assay.evaluate(PREDS, REFS, metrics=[LLMJudge(model=ScriptedJudge(ANSWERS), cache_dir=tmp_path / "b",
                                                          template="Rate {prediction} vs {references}")],
                           n_resamples=50)
    assert "template=user@" in b.info["signature"]
    with pytest.raises(SignatureMismatchError, match="llm_as_judge"):
        assay.compare(a, b, metric="llm_as_judge")


def test_paired_comparison_of_two_systems():
    answers = {"s1-": "2", "s2-": "9", "s3-": "4", "s4-": "7", "s5-": "5"}
    system_a = ["s1-a", "s2-a", "s3-a", "s4-a", "s5-a"]
    system_b = ["s1-b", "s2-b", "s3-b", "s4-b", "s5-b"]
    refs = [["r"]] * 5
    judge_a = ScriptedJudge({**{k + "a": v for k, v in answers.items()}})
    judge_b = ScriptedJudge({k + "b": str(min(10, int(v) + 2)) for k, v in answers.items()})
    # the same judge identity: b's answers are each a's plus 2 (capped at 10)
    a = assay.evaluate(system_a, refs, metrics=[LLMJudge(model=judge_a)], n_resamples=200, seed=0)
    b = assay.evaluate(system_b, refs, metrics=[LLMJudge(model=judge_b)], n_resamples=200, seed=0)
    cmp = assay.compare(a, b, metric="llm_as_judge", n_resamples=500, seed=0)
    hand_a = np.mean([0.2, 0.9, 0.4, 0.7, 0.5])
    hand_b = np.mean([0.4, 1.0, 0.6, 0.9, 0.7])
    assert cmp.score_a == pytest.approx(hand_a) and cmp.score_b == pytest.approx(hand_b)
    assert cmp.difference == pytest.approx(hand_b - hand_a)
    assert cmp.ci_low > 0  # b is better on every instance


# --------------------------------------------------------------------------- a real Hugging Face judge
def build_judge_model(folder, seed=0):
    """A tiny random GPT-2 whose vocabulary has the digits and yes/no, with room for long prompts."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = ["<pad>", "<eos>", "<unk>", *[str(i) for i in range(11)], "yes", "no", "Answer:", "Prediction:",
             "Reference:", "the", "a", "cat", "dog", "sat"]
    tk = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.decoder = decoders.WordPiece(prefix="##")
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=len(words), n_positions=256, n_embd=32, n_layer=2, n_head=2, bos_token_id=1,
                     eos_token_id=1, pad_token_id=0, initializer_range=0.3)
    GPT2LMHeadModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def judge_dir(tmp_path_factory):
    # seed 1: the judge gives both parsed and unparsable answers on CAT_PREDS
    return build_judge_model(tmp_path_factory.mktemp("tiny-judge") / "judge", seed=1)


def _reference_answers(folder, prompts, max_new_tokens):
    """transformers' own greedy generation, one prompt at a time (no padding)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()
    out = []
    for p in prompts:
        enc = tok(p, return_tensors="pt")
        with torch.no_grad():
            seq = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=0,
                                 eos_token_id=1)
        out.append(tok.decode(seq[0, enc["input_ids"].shape[1]:], skip_special_tokens=True).strip())
    return out


def _digest(folder):
    h = hashlib.sha256()
    for p in sorted(q for q in folder.rglob("*") if q.is_file()):
        h.update(p.relative_to(folder).as_posix().encode() + b"\0" + str(p.stat().st_size).encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


CAT_PREDS = ["the cat sat", "a dog", "the dog sat", "a cat", "cat", "dog sat", "the cat", "a dog sat"]
CAT_REFS = [["the cat sat"], ["a dog"], ["the cat"], ["a dog sat"], ["cat"], ["the dog"], ["the cat"], ["dog"]]


def test_hf_judge_end_to_end_records_cache_and_signature(judge_dir, tmp_path):
    spec = f"llm_as_judge[model='{judge_dir}', cache_dir='{tmp_path / 'cache'}', batch_size=3, max_new_tokens=4]"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # random weights: some answers are not numbers
        res = assay.evaluate(CAT_PREDS, CAT_REFS, metrics=[spec], n_resamples=200, seed=0)
    recs = judgements(res)
    assert len(recs) == len(CAT_PREDS)
    prompts = [DEFAULT_TEMPLATE.render({"prediction": p, "references": r}) for p, r in zip(CAT_PREDS, CAT_REFS)]
    assert [r.prompt for r in recs] == prompts
    assert [r.answer for r in recs] == _reference_answers(judge_dir, prompts, 4)
    for r, inst in zip(recs, res):
        s = inst["score"]["instance"]["llm_as_judge"]
        assert (math.isnan(s) and not r.parsed) or (s == r.score and r.parsed)
    valid = [r.score for r in recs if r.parsed]
    g = res.global_scores
    assert g["llm_as_judge_unparsable"] == pytest.approx(1 - len(valid) / len(recs))
    if valid:
        assert g["llm_as_judge"] == pytest.approx(np.mean(valid))
        low, high = g["llm_as_judge_ci_low"], g["llm_as_judge_ci_high"]
        # a resample that draws only unparsable instances has no score: then the interval is NaN, with a note
        assert (low <= g["llm_as_judge"] <= high) or (math.isnan(low) and "llm_as_judge" in res.info["ci_notes"])
    assert f"model=hf:judge@{_digest(judge_dir)}" in res.info["signature"]
    # everything is saved: a second run judges nothing
    from assay_transformers.judge_engines import get_hf_engine

    engine = get_hf_engine(judge_dir, max_new_tokens=4)
    before = engine.generated
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        again = assay.evaluate(CAT_PREDS, CAT_REFS, metrics=[spec], n_resamples=0)
    assert engine.generated == before
    assert all(r.cached for r in judgements(again))
    assert [r.answer for r in judgements(again)] == [r.answer for r in recs]
    # a second system, judged by the same model and template: a paired comparison
    other = [p + " the" for p in CAT_PREDS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        b = assay.evaluate(other, CAT_REFS, metrics=[spec], n_resamples=200, seed=0)
    recs_b = judgements(b)
    assert [r.answer for r in recs_b] == _reference_answers(
        judge_dir, [DEFAULT_TEMPLATE.render({"prediction": p, "references": r}) for p, r in zip(other, CAT_REFS)], 4)
    cmp = assay.compare(res, b, n_resamples=300, seed=0)  # one metric: its name is the spec with its options
    assert cmp.score_a == pytest.approx(np.mean(valid))
    assert cmp.score_b == pytest.approx(np.mean([r.score for r in recs_b if r.parsed]))


_CHILD = textwrap.dedent("""
    import os, signal, sys, warnings
    signal.signal(signal.SIGINT, signal.SIG_DFL)   # the default dispositions this test relies on
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from assay_transformers.judge import LLMJudge
    from assay_transformers.judge_engines import HFJudgeEngine

    folder, cache, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
    hf = HFJudgeEngine(folder, max_new_tokens=4)

    class KilledAfter:
        identity, settings, calls = hf.identity, hf.settings, 0
        def generate(self, prompts):
            if KilledAfter.calls == kill_at:   # kill_at batches answered and saved: die mid-run
                os.kill(os.getpid(), signal.SIGKILL)
            KilledAfter.calls += 1
            return hf.generate(prompts)

    import assay
    warnings.simplefilter("ignore")
    assay.evaluate(sys.argv[4:], [["the cat"]] * len(sys.argv[4:]),
                   metrics=[LLMJudge(model=KilledAfter(), cache_dir=cache, batch_size=1)], n_resamples=0)
    print("finished")
""")


def test_killed_run_resumes_without_rejudging(judge_dir, tmp_path):
    cache = tmp_path / "cache"
    child = subprocess.run([sys.executable, "-c", _CHILD, str(judge_dir), str(cache), "3", *CAT_PREDS],
                           capture_output=True, text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    assert "finished" not in child.stdout
    (file,) = cache.glob("judge-*.jsonl")
    assert len(file.read_text().splitlines()) == 3

    from assay_transformers.judge_engines import HFJudgeEngine

    class Counting:
        def __init__(self):
            self.hf = HFJudgeEngine(judge_dir, max_new_tokens=4)
            self.identity, self.settings, self.prompts = self.hf.identity, self.hf.settings, []

        def generate(self, prompts):
            self.prompts.extend(prompts)
            return self.hf.generate(prompts)

    resumed, fresh = Counting(), Counting()
    refs = [["the cat"]] * len(CAT_PREDS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = assay.evaluate(CAT_PREDS, refs, metrics=[LLMJudge(model=resumed, cache_dir=cache, batch_size=1)],
                             n_resamples=0)
        full = assay.evaluate(CAT_PREDS, refs, metrics=[LLMJudge(model=fresh, cache_dir=tmp_path / "other")],
                              n_resamples=0)
    prompts = [DEFAULT_TEMPLATE.render({"prediction": p, "references": ["the cat"]}) for p in CAT_PREDS]
    assert resumed.prompts == prompts[3:]  # the three saved before the kill are not judged again
    assert [r.cached for r in judgements(res)] == [True] * 3 + [False] * 5
    assert [r.answer for r in judgements(res)] == [r.answer for r in judgements(full)]
    np.testing.assert_array_equal([r["score"]["instance"]["llm_as_judge"] for r in res],
                                  [r["score"]["instance"]["llm_as_judge"] for r in full])
    assert len(file.read_text().splitlines()) == len(CAT_PREDS)


# --------------------------------------------------------------------------- a real OpenAI-compatible server
def test_openai_endpoint_judge_end_to_end(openai_server, tmp_path):
    """``transformers serve`` on a tiny chat model (the fixture of assay_transformers.testing): answers equal the
    same folder's greedy answers run locally; records, intervals, compare, and a resumed run after a failure."""
    from assay_transformers.judge_engines import HFJudgeEngine, OpenAIJudgeEngine

    words = ["paris", "the river", "a city", "blue", "red", "one two", "france", "what is it"]
    preds_a, preds_b = words, [w + " is big" for w in words]
    refs = [["paris"]] * len(words)
    cache = tmp_path / "cache"
    options = dict(model=openai_server.base_url, api_model=openai_server.model, parser="yes_no",
                   template="is {prediction} the answer {reference} yes or no", max_new_tokens=3, batch_size=2)

    class FailsAfterThree:  # the real server, and a judge run that stops (a crash) after three prompts
        def __init__(self):
            self.inner = OpenAIJudgeEngine(openai_server.base_url, openai_server.model, max_new_tokens=3)
            self.identity, self.settings = self.inner.identity, self.inner.settings

        def generate(self, prompts):
            if self.inner.generated + len(prompts) > 3:
                return self.inner.generate(prompts[: 3 - self.inner.generated]) + [None]
            return self.inner.generate(prompts)

    crashing = LLMJudge(**{**options, "model": FailsAfterThree(), "api_model": None, "max_new_tokens": 16},
                        cache_dir=cache)  # an engine object sets its own answer length
    with pytest.raises(EvaluationError, match="answers for 2 prompts"):
        assay.evaluate(preds_a, refs, metrics=[crashing], n_resamples=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # random weights: some answers are neither yes nor no
        a = assay.evaluate(preds_a, refs, metrics=[LLMJudge(**options, cache_dir=cache)], n_resamples=200, seed=0)
        b = assay.evaluate(preds_b, refs, metrics=[LLMJudge(**options, cache_dir=cache)], n_resamples=200, seed=0)
    engine_a = a.records["llm_as_judge"][0].engine
    assert engine_a.generated == len(words) - 2  # the two answers of the first batch were saved before the failure
    recs_a, recs_b = judgements(a), judgements(b)
    assert [r.cached for r in recs_a] == [True, True] + [False] * (len(words) - 2)
    local = HFJudgeEngine(openai_server.model, max_new_tokens=3, chat_template=True)
    assert [r.answer for r in recs_a] == local.generate([r.prompt for r in recs_a])
    assert [r.answer for r in recs_b] == local.generate([r.prompt for r in recs_b])
    assert recs_a[0].prompt == "is paris the answer paris yes or no"

    def by_hand(recs):  # yes -> 1, no -> 0, else left out: the first word of the answer
        first = [r.answer.split()[0].lower() if r.answer.split() else "" for r in recs]
        return [1.0 if w == "yes" else 0.0 if w == "no" else math.nan for w in first]

    hand_a, hand_b = by_hand(recs_a), by_hand(recs_b)
    np.testing.assert_array_equal([r["score"]["instance"]["llm_as_judge"] for r in a], hand_a)
    assert "model=openai:" in a.info["signature"]
    assert not all(math.isnan(x) for x in hand_a) and not all(math.isnan(x) for x in hand_b)
    cmp = assay.compare(a, b, metric="llm_as_judge", n_resamples=300, seed=0)
    assert cmp.score_a == pytest.approx(np.nanmean(hand_a))
    assert cmp.score_b == pytest.approx(np.nanmean(hand_b))
    assert cmp.difference == pytest.approx(np.nanmean(hand_b) - np.nanmean(hand_a))


def test_progress_bar_counts_the_prompts_judged(capsys, tmp_path):
    engine = ScriptedJudge(ANSWERS)
    with pytest.warns(UserWarning):
        assay.evaluate(PREDS, REFS, metrics=[LLMJudge(model=engine, progress=True, batch_size=4,
                                                      cache_dir=tmp_path)], n_resamples=0)
    err = capsys.readouterr().err
    assert "llm_as_judge: judging" in err and "6/6" in err
    with pytest.warns(UserWarning):  # everything saved: nothing to judge, no bar
        assay.evaluate(PREDS, REFS, metrics=[LLMJudge(model=ScriptedJudge(ANSWERS), progress=True,
                                                      cache_dir=tmp_path)], n_resamples=0)
    assert "judging" not in capsys.readouterr().err
