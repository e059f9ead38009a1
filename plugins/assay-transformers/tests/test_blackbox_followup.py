"""The black-box backend's model object (``stats["model"]``): follow-up questions on a real server (issue 28).

``PTrueEmpirical`` and ``Verbalized2S`` ask the model a second question through
``stats["model"].generate_texts``. On the ``openai`` backend that object is
:class:`~assay_transformers.blackbox.BlackboxPolygraphModel`, which sends the question to the
same endpoint. Checked here on a real ``transformers serve`` (a tiny chat model whose vocabulary
holds "True" and a few numbers, so the verdicts and the stated confidences vary): the value
through the UEManager equals LM-Polygraph 0.7.0's own class called on the run's statistics
with a model object of its own on the same endpoint (a fresh backend: its requests go to the
server again), at batch sizes 1, 2 and 5. The cheap checks (errors naming the request) need no
server.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from assay.errors import InvalidParameterError
from assay.plugins import get_registry
from assay.uncertainty import UEManager

PROMPTS = ["the capital of france is", "what", "who is the big red river city of two", "yes no a small blue",
           "a small river"]
BATCH_SIZES = (1, 2, 5)
SEED, MAX_NEW = 11, 4
#: the served model's vocabulary: the default words, verdict words (three of them contain "True") and numbers
EXTRA_WORDS = ["True", "False", "True.", "True,", *(f"0.{i}" for i in range(1, 10))]
CONFIDENCE = {"confidence_prompt": "how sure are you", "confidence_regex": r"(0\.\d)", "max_new_tokens": 10}


@pytest.fixture(scope="module")
def verdict_server(tmp_path_factory):
    from assay_transformers.testing.openai_server import WORDS, build_tiny_chat_model, start_server

    folder = build_tiny_chat_model(tmp_path_factory.mktemp("verdict-server") / "tiny-chat",
                                   words=[*WORDS, *EXTRA_WORDS])
    server = start_server(folder)
    try:
        yield server
    finally:
        server.stop()


def _backend(server):
    from assay_transformers.blackbox import OpenAIModel

    return OpenAIModel(server.base_url, name=server.model)


def _runs(server, cls: str, options: dict) -> dict[int, UEManager]:
    runs = {}
    for b in BATCH_SIZES:
        est = get_registry("estimator").get(cls).create(**options)
        man = UEManager([{"input": p} for p in PROMPTS], model=_backend(server), estimators=[est], gen_metrics=[],
                        ue_metrics=[], batch_size=b, max_new_tokens=MAX_NEW, samples_n=2, seed=SEED,
                        generation_params={"temperature": 1.5}, progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NaN-with-a-warning values (no confidence stated) are compared as NaN
            man()
        runs[b] = man
    return runs


def lp_class(lpm, module: str, cls: str):
    """LM-Polygraph 0.7.0's estimator class ``cls`` from ``lm_polygraph.estimators.<module>`` (imported live)."""
    return getattr(lpm(f"estimators.{module}"), cls)


def _theirs(server, lpm, module: str, cls: str, options: dict, man: UEManager):
    """LM-Polygraph's class on the run's statistics, with a model object of its own on the same endpoint."""
    from assay_transformers.blackbox import BlackboxPolygraphModel

    backend = _backend(server)
    model = BlackboxPolygraphModel(backend, generation_params=man.generation_params, seed=SEED)
    stats = {"input_texts": list(man.stats["input_texts"]), "greedy_texts": list(man.stats["answer"]),
             "model": model}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = np.asarray(lp_class(lpm, module, cls)(**options)(stats), dtype=np.float64)
    assert backend.client.requests > 0  # its replies came from the server, not from the run's cache
    return values


@pytest.mark.slow
def test_p_true_empirical_on_the_black_box_server_equals_lm_polygraphs_at_any_batch_size(verdict_server, lpm):
    options = {"num_samples": 8}
    runs = _runs(verdict_server, "PTrueEmpirical", options)
    ours = {b: np.asarray(m.estimations[("sequence", "p_true_empirical")], dtype=np.float64) for b, m in runs.items()}
    assert runs[1].stats["answer"] == runs[2].stats["answer"] == runs[5].stats["answer"]
    theirs = _theirs(verdict_server, lpm, "p_true_empirical", "PTrueEmpirical", options, runs[1])
    for b in BATCH_SIZES:
        np.testing.assert_array_equal(ours[b], theirs, err_msg=f"batch size {b}")
    # not a constant: some sampled verdicts contain "True", and not the same share for every example
    assert (theirs < 1).any() and len(set(theirs.tolist())) > 1, theirs


@pytest.mark.slow
def test_verbalized_2s_on_the_black_box_server_equals_lm_polygraphs_at_any_batch_size(verdict_server, lpm):
    runs = _runs(verdict_server, "Verbalized2S", CONFIDENCE)
    ours = {b: np.asarray(m.estimations[("sequence", "verbalized_2s")], dtype=np.float64) for b, m in runs.items()}
    theirs = _theirs(verdict_server, lpm, "verbalized_2s", "Verbalized2S", CONFIDENCE, runs[1])
    for b in BATCH_SIZES:  # (NaN equals NaN here: a reply without a confidence is NaN in both)
        np.testing.assert_array_equal(ours[b], theirs, err_msg=f"batch size {b}")
    assert np.isfinite(theirs).sum() >= 2 and len(set(theirs[np.isfinite(theirs)].tolist())) > 1, theirs


@pytest.mark.slow
def test_follow_up_replies_are_reproducible_and_greedy_without_sampling(verdict_server):
    from assay_transformers.blackbox import BlackboxPolygraphModel

    one = BlackboxPolygraphModel(_backend(verdict_server), seed=3)
    two = BlackboxPolygraphModel(_backend(verdict_server), seed=3)
    asked = {"max_new_tokens": 6, "num_return_sequences": 3, "do_sample": True}
    a = one.generate_texts(PROMPTS[:2], **asked)
    # the same seed gives the same replies, whatever the batch: one input at a time, in the other order
    b = two.generate_texts([PROMPTS[1]], **asked) + two.generate_texts([PROMPTS[0]], **asked)
    assert len(a) == 6 and a == b[3:] + b[:3]
    assert len(set(a)) > 1  # sampled
    # do_sample=False: temperature 0, the client's greedy answer
    greedy = one.generate_texts([PROMPTS[0]], max_new_tokens=6, num_return_sequences=2)
    (ref,) = _backend(verdict_server).client.complete(PROMPTS[0], max_tokens=6, temperature=0.0)
    assert greedy == [ref.text, ref.text]


def test_a_failed_follow_up_request_is_an_error_naming_it():
    from assay_transformers.blackbox import BlackboxPolygraphModel, OpenAIModel
    from assay_transformers.openai_api import ModelRequestError
    from assay_transformers.testing.openai_server import free_port

    dead = OpenAIModel(f"http://127.0.0.1:{free_port()}/v1", name="m", timeout=5.0, max_retries=0)
    model = BlackboxPolygraphModel(dead, seed=0)
    with pytest.raises(ModelRequestError, match=r"for follow-up prompt 0 of generate_texts \('first'\) failed"):
        model.generate_texts(["first", "second"], max_new_tokens=1)
    assert dead.client.requests == 0


def test_follow_up_options_are_checked():
    from assay_transformers.blackbox import BlackboxPolygraphModel, OpenAIModel

    backend = OpenAIModel("http://127.0.0.1:9/v1", name="m")
    with pytest.raises(InvalidParameterError, match="top_k"):
        BlackboxPolygraphModel(backend, generation_params={"top_k": 5})
    model = BlackboxPolygraphModel(backend)
    with pytest.raises(InvalidParameterError, match="'num_return_sequences' must be an integer >= 1"):
        model.generate_texts(["q"], num_return_sequences=0)
    with pytest.raises(InvalidParameterError, match="a list of inputs"):
        model.generate_texts("q")
    legacy = BlackboxPolygraphModel(OpenAIModel("http://127.0.0.1:9/v1", name="m", endpoint="completions"))
    with pytest.raises(InvalidParameterError, match="is a chat .* use endpoint='chat'"):
        legacy.generate_texts([[{"role": "user", "content": "q"}]])
    with pytest.raises(InvalidParameterError, match="must be a string or a non-empty chat"):
        model.generate_texts([[{"role": "user"}]])


def test_an_empty_reply_where_min_new_tokens_asks_for_more_warns(monkeypatch):
    """min_new_tokens has no API field: an empty reply is used as is, with a warning naming the request (the
    server's answer is replaced here by a fixed one: this checks the backend's handling, not the server)."""
    from assay_transformers.blackbox import BlackboxPolygraphModel, OpenAIModel
    from assay_transformers.openai_api import Completion

    backend = OpenAIModel("http://127.0.0.1:9/v1", name="m")
    asked = []

    def complete(prompt, **kw):
        asked.append((prompt, kw))
        return [Completion(text="" if prompt == "q" else "one two")] * kw["n"]

    monkeypatch.setattr(backend, "complete", complete)
    model = BlackboxPolygraphModel(backend, generation_params={"temperature": 0.7, "top_p": 0.9}, seed=4)
    with pytest.warns(UserWarning, match=r"follow-up prompt 0 of generate_texts \('q'\) got an empty reply though "
                                         r"min_new_tokens=1"):
        out = model.generate_texts(["q", "r"], min_new_tokens=1, max_new_tokens=2, num_return_sequences=2,
                                   do_sample=True)
    assert out == ["", "", "one two", "one two"]
    # the run's sampling parameters and a seed per input (different inputs, different seeds)
    (_, a), (_, b) = asked
    assert a["temperature"] == b["temperature"] == 0.7 and a["top_p"] == 0.9 and a["n"] == 2 and a["max_tokens"] == 2
    assert a["seed"] is not None and a["seed"] != b["seed"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # min_new_tokens=0: no warning
        model.generate_texts(["q"], max_new_tokens=2)
    assert asked[-1][1]["temperature"] == 0.0 and asked[-1][1]["seed"] is None and asked[-1][1]["top_p"] is None
