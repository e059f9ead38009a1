"""The OpenAI-compatible client against a real local server (``transformers serve`` on a tiny model).

The session fixture ``openai_server`` comes from ``assay_transformers.testing.pytest_plugin``.
The greedy answer is checked against the same model folder run locally by transformers
(:class:`~assay_transformers.generation.HFModel`), the reference the server must agree with.
"""

from __future__ import annotations

import pytest

from assay_transformers.openai_api import ModelRequestError, OpenAIClient
from assay_transformers.testing.openai_server import CHAT_TEMPLATE, WORDS, free_port

PROMPT = "what is the capital of france"


def test_greedy_answer_equals_the_local_model(openai_server):
    from assay_transformers.generation import HFModel

    client = OpenAIClient(openai_server.base_url, model=openai_server.model)
    (answer,) = client.complete(PROMPT, max_tokens=6, temperature=0)
    local = HFModel(openai_server.model)
    assert local.tokenizer.chat_template == CHAT_TEMPLATE
    templated = local.tokenizer.apply_chat_template([{"role": "user", "content": PROMPT}], tokenize=False)
    ((expected,),) = local.generate([templated], max_new_tokens=6)
    assert answer.text == expected.text
    assert answer.text  # the scaled-up random weights give words, not an immediate EOS
    assert client.requests == 1


def test_completions_endpoint_sends_the_prompt_as_is(openai_server):
    from assay_transformers.generation import HFModel

    client = OpenAIClient(openai_server.base_url, model=openai_server.model, endpoint="completions")
    (answer,) = client.complete(PROMPT, max_tokens=6, temperature=0)
    ((expected,),) = HFModel(openai_server.model).generate([PROMPT], max_new_tokens=6)  # no chat template
    assert answer.text == expected.text


def test_n_samples_seeded_and_reproducible(openai_server):
    from assay_transformers.openai_api import NIgnoredWarning

    client = OpenAIClient(openai_server.base_url, model=openai_server.model)
    with pytest.warns(NIgnoredWarning, match="returned 1 choice"):
        first = client.complete(PROMPT, n=4, max_tokens=6, temperature=1.0, seed=7, index=3)
    assert len(first) == 4
    assert client.requests == 4  # transformers serve ignores n: one choice per request, asked again
    assert client.n_honoured is False
    for c in first:
        assert all(w in WORDS for w in c.text.split())
    assert len({c.text for c in first}) > 1  # sampling, not greedy
    again = client.complete(PROMPT, n=4, max_tokens=6, temperature=1.0, seed=7, index=3)
    assert [c.text for c in again] == [c.text for c in first]
    # the k-th answer uses seed + k: asking from seed 8 gives the answers after the first
    shifted = client.complete(PROMPT, n=3, max_tokens=6, temperature=1.0, seed=8)
    assert [c.text for c in shifted] == [c.text for c in first[1:]]


def test_logprobs_not_returned_are_recorded(openai_server):
    client = OpenAIClient(openai_server.base_url, model=openai_server.model, logprobs=True)
    (answer,) = client.complete(PROMPT, max_tokens=4, temperature=0)
    assert client.logprobs_returned is False  # transformers serve returns none
    assert answer.token_log_probs is None and answer.tokens is None


def test_dead_server_is_an_error_naming_the_request():
    port = free_port()  # nothing listens there
    client = OpenAIClient(f"http://127.0.0.1:{port}/v1", model="m", max_retries=0, timeout=5)
    with pytest.raises(ModelRequestError) as info:
        client.complete(PROMPT, index=12)
    msg = str(info.value)
    assert f"http://127.0.0.1:{port}/v1/chat/completions" in msg and "prompt 12" in msg
    assert "APIConnectionError" in msg
    assert info.value.index == 12 and info.value.endpoint == "chat"


def test_timeout_is_an_error_naming_the_request(openai_server):
    client = OpenAIClient(openai_server.base_url, model=openai_server.model, endpoint="completions",
                          timeout=0.001, max_retries=1)
    with pytest.raises(ModelRequestError, match=r"/v1/completions .*prompt 5 failed: no answer within 0.001 s"):
        client.complete(PROMPT, max_tokens=50, index=5)


def test_unknown_model_is_an_http_error(openai_server):
    client = OpenAIClient(openai_server.base_url, model="not-served", max_retries=0)
    with pytest.raises(ModelRequestError, match=r"prompt 0 failed: HTTP 4\d\d"):
        client.complete(PROMPT, index=0)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"base_url": "localhost:8000"}, "'base_url' must be an http"),
    ({"model": ""}, "'model' must be a non-empty string"),
    ({"endpoint": "responses"}, "'endpoint' must be one of chat, completions"),
    ({"timeout": 0}, "'timeout' must be a number > 0"),
    ({"max_retries": -1}, "'max_retries' must be an integer >= 0"),
    ({"system_prompt": "s", "endpoint": "completions"}, "'system_prompt' is a string, for endpoint='chat' only"),
])
def test_options_are_checked(kwargs, match):
    from assay.errors import InvalidParameterError

    args = {"base_url": "http://127.0.0.1:1/v1", "model": "m", **kwargs}
    with pytest.raises(InvalidParameterError, match=match):
        OpenAIClient(args.pop("base_url"), args.pop("model"), **args)


def test_logprobs_are_read_from_the_openai_response_types():
    """The log-probability path on the ``openai`` package's own response types (the local server returns none)."""
    import numpy as np
    from openai.types import Completion as TextCompletion
    from openai.types.chat import ChatCompletion

    tops = [[("par", -0.1), ("lyon", -2.5)], [("is", -0.2), ("ee", -1.9)]]
    content = [{"token": t[0][0], "logprob": t[0][1], "bytes": None,
                "top_logprobs": [{"token": a, "logprob": v, "bytes": None} for a, v in t]} for t in tops]
    chat = ChatCompletion.model_validate({
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"content": content},
                     "message": {"role": "assistant", "content": "paris"}}]})
    text = TextCompletion.model_validate({
        "id": "y", "object": "text_completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "length", "text": "paris",
                     "logprobs": {"tokens": ["par", "is"], "token_logprobs": [-0.1, -0.2],
                                  "top_logprobs": [dict(t) for t in tops]}}]})
    for endpoint, response in (("chat", chat), ("completions", text)):
        client = OpenAIClient("http://127.0.0.1:1/v1", "m", endpoint=endpoint, logprobs=True)
        c = client._completion(response.choices[0], endpoint == "chat", 0)
        assert c.text == "paris" and c.tokens == ["par", "is"]
        np.testing.assert_array_equal(c.token_log_probs, [-0.1, -0.2])
        assert c.top_log_probs == tops
