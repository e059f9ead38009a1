"""Model-judged metrics: a judge model reads a prompt built from each instance and answers with a score.

``assay.load_metric("llm_as_judge[model=FOLDER, cache_dir=DIR]")`` builds a
:class:`LLMJudge`: for every instance it fills a **judge prompt template** with the
prediction, the references and the instance's ``task_data`` fields, sends the prompts in
batches to a **judge model** behind an inference engine (:mod:`assay_transformers.judge_engines`:
a local Hugging Face model folder, or any object with ``identity`` and ``generate``),
and **parses** each answer into a score. The global score is the mean of the instance
scores, with intervals, streaming and :func:`assay.compare` as for any instance metric.

**Unparsable answers.** An answer the parser cannot read scores NaN (left out of the
mean, as every NaN instance score is), with a warning that counts them and shows the
first; the instance score ``<main score>_unparsable`` is 1.0 for them and 0.0 otherwise,
so its global value is the fraction of unparsable answers. ``on_unparsable="zero"`` scores
them 0.0 instead, as unitxt's post-processors do (``cast_to_float_return_zero_if_failed``).

**Per-instance judgements.** Every judgement (prompt, raw answer, score, whether it came
from the cache) is a :class:`Judgement`, kept in the metric's :attr:`LLMJudge.judgements`
in instance order; :func:`judgements` reads them from the results of :func:`assay.evaluate`.

**Resumable.** With ``cache_dir``, each judgement is appended to a JSON Lines file there as
soon as its batch is answered (:mod:`assay_transformers.judge_cache`), keyed by a hash of
the judge's identity, its generation settings and the prompt; a run that is killed and
started again judges only the prompts not saved yet.

**Provenance.** The metric's signature entry names the judge by its identity (a local
folder: its name and a hash of its files) and the template by its name and a hash of its
text; the cache folder, batch size, device and progress bar are left out (they do not
change the numbers).

**RAG metrics** (:data:`RAG_DEFINITIONS`): faithfulness, context relevance and answer
correctness with unitxt 1.26.10's judge templates (``templates.rag_eval.*``: instruction,
input format and ``Answer: `` prefix, rendered as unitxt's ``formats.empty`` renders them)
and its score parsing (the first word or number of the answer, lower-cased; ``yes`` -> 1 and
anything else 0, or a 0-10 rating divided by 10), registered as ``rag_judge.<unitxt main score>``.
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from assay.errors import EvaluationError, InvalidParameterError
from assay.metrics import BulkInstanceMetric
from assay.validation import check_bool, check_int
from assay_transformers.judge_cache import JudgementCache
from assay_transformers.judge_engines import OpenAIJudgeEngine, RuleJudge, engine_settings, get_hf_engine

__all__ = ["DEFAULT_TEMPLATE", "PARSERS", "RAG_DEFINITIONS", "TEMPLATES", "Judgement", "JudgeTemplate", "LLMJudge",
           "RAG_CLASSES", "RagDefinition", "judgements", "parse_answer",
           "rag_judge_class"]


# --------------------------------------------------------------------------- parsing
# unitxt's processors.take_first_word: the first number (with an optional minus and decimals) or word
_FIRST_TOKEN = re.compile(r"(-*[0-9]+(\.[0-9]+)*)|(\w+)")

#: the parsers: how a judge's answer becomes a score (None: unparsable)
PARSERS = ("0_10", "yes_no", "number")


def parse_answer(answer: str, parser: str) -> float | None:
    """The score of a judge's answer, or None when the parser cannot read it.

    The first token is the first number or word of the answer (unitxt's ``take_first_word``),
    lower-cased; then

    - ``"0_10"``: a rating on 0-10, divided by 10 (unitxt's ``scale_0_10_to_0_1``; a rating
      outside 0-10 is kept as it is scaled, as unitxt does: ``12`` gives 1.2);
    - ``"yes_no"``: ``yes`` -> 1.0, ``no`` -> 0.0 (unitxt's ``predictions_yes_1_else_0`` also gives 0.0
      for any other word; here that is unparsable);
    - ``"number"``: the number as it is.

    A first token that is not a finite number (for ``0_10`` and ``number``), or neither
    ``yes`` nor ``no``, is unparsable (None).
    """
    match = _FIRST_TOKEN.search(answer)
    token = answer[match.start():match.end()].lower() if match else ""
    if parser == "yes_no":
        return 1.0 if token == "yes" else 0.0 if token == "no" else None
    try:
        value = float(token)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return value / 10.0 if parser == "0_10" else value


# --------------------------------------------------------------------------- templates
def _capital_newlines(parts: Sequence[str]) -> str:
    """Join ``parts`` as unitxt's ``\\N`` notation does: the text so far loses its trailing newlines and
    gets exactly one, unless it is empty (then nothing is added)."""
    out = ""
    for i, part in enumerate(parts):
        if i:
            out = out.rstrip("\n")
            out = out + "\n" if out else ""
        out += part
    return out


def _serialize(value: Any) -> str:
    """A field's text in a prompt: a list as its items joined by ``", "`` (unitxt's ``ListSerializer``)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


@attrs.frozen
class JudgeTemplate:
    """A judge prompt: ``instruction``, then ``input_format`` filled with the instance's fields, then ``target_prefix``.

    Rendered as unitxt's ``formats.empty`` renders an ``InputOutputTemplate``
    (``{instruction}\\N{source}\\N{target_prefix}``, see :func:`_capital_newlines`). A
    template given as one string is ``input_format`` alone (no instruction, no prefix).
    ``parser`` is the default parser of its answers (:func:`parse_answer`).
    """

    name: str
    instruction: str
    input_format: str
    target_prefix: str = ""
    parser: str = "0_10"

    @property
    def digest(self) -> str:
        """The first 12 hex digits of the SHA-256 of the template's text (instruction, input format, prefix)."""
        text = "\0".join((self.instruction, self.input_format, self.target_prefix))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    def fields(self) -> list[str]:
        """The field names ``input_format`` uses, in order."""
        import string

        return [f for _, f, _, _ in string.Formatter().parse(self.input_format) if f]

    def render(self, fields: Mapping[str, Any], *, owner: str = "the judge template", index: int | None = None) -> str:
        values = {k: _serialize(v) for k, v in fields.items()}
        try:
            source = self.input_format.format_map(values)
        except KeyError as exc:
            where = f" instance {index}" if index is not None else " an instance"
            raise InvalidParameterError(
                f"{owner}: template {self.name!r} uses the field {exc.args[0]!r}, which{where} does not have; it has "
                f"{', '.join(sorted(values)) or 'no fields'} (task_data keys are fields too).") from None
        except (IndexError, ValueError) as exc:
            raise InvalidParameterError(f"{owner}: template {self.name!r} is not a valid format string ({exc}); "
                                        "write fields as {name} and literal braces as {{ }}.") from None
        parts = [self.instruction] if self.instruction else []
        parts.append(source)
        if self.target_prefix:
            parts.append(self.target_prefix)
        return _capital_newlines(parts)


#: the default template of ``llm_as_judge``: a 0-10 rating of the prediction against the references
DEFAULT_TEMPLATE = JudgeTemplate(
    name="default",
    instruction=("You are given one or more reference answers and a prediction from a model. Compare the "
                 "\"Prediction\" with the \"Reference\" to determine whether the prediction says what the reference "
                 "says.\nOn a scale of 0 to 10, how well does the prediction match the reference? Reply with your "
                 "rating score without any preceding explanation.\n"),
    input_format="Reference: {references}\n\nPrediction: {prediction}\n",
    target_prefix="Answer: ",
    parser="0_10",
)

# unitxt 1.26.10's judge templates (catalog templates.rag_eval.*), their texts as unitxt ships them
_UNITXT_TEMPLATES = [
    JudgeTemplate(
        name="rag_eval.faithfulness.judge_with_question_simplified",
        instruction=(
            "You are given a question, the corresponding evidence and a prediction from a model. "
            "Compare the \"Prediction\" and the \"Evidence\" to determine whether all the information of "
            "the prediction is present in the evidence or can be inferred from the evidence. You must "
            "answer \"no\" if there are any specific details in the prediction that are not mentioned in "
            "the evidence or cannot be inferred from the evidence. Answer only \"Yes\" or \"No\".\n\n"),
        input_format="Question: {question}\n\nEvidence: {contexts}\n\nPrediction: {answer}\n",
        target_prefix="Answer: ",
        parser="yes_no"),
    JudgeTemplate(
        name="rag_eval.faithfulness.judge_no_question_simplified",
        instruction=(
            "You are given a grounding evidence and a prediction from a model. Compare the "
            "\"Prediction\" and the \"Evidence\" to determine whether all the information of the "
            "prediction is present in the evidence or can be inferred from the evidence. You must "
            "answer \"no\" if there are any specific details in the prediction that are not mentioned in "
            "the evidence or cannot be inferred from the evidence. Answer only \"Yes\" or \"No\".\n"),
        input_format="Evidence: {contexts}\n\nPrediction: {answer}\n",
        target_prefix="Answer: ",
        parser="yes_no"),
    JudgeTemplate(
        name="rag_eval.context_relevance.judge_context_relevance_ares",
        instruction=(
            "Given the following question and document, you must analyze the provided document and "
            "determine whether it is sufficient for answering the question. In your evaluation, you "
            "should consider the content of the document and how it relates to the provided question. "
            "Answer with only yes/no.\n"),
        input_format="Question: {question}\n\nDocument: {contexts}\n",
        target_prefix="Answer: ",
        parser="yes_no"),
    JudgeTemplate(
        name="rag_eval.context_relevance.judge_context_relevance_ares_numeric",
        instruction=(
            "Given the following question and document, you must analyze the provided document and "
            "determine to what extent it is sufficient for answering the question. In your evaluation, "
            "you should consider the content of the document and how it relates to the provided "
            "question.\nOn a scale of 0 to 10, to what extent is the document sufficient for answering "
            "the question? Reply with your rating score without any preceding explanation.\n"),
        input_format="Question: {question}\n\nDocument: {contexts}\n",
        target_prefix="Answer: ",
        parser="0_10"),
    JudgeTemplate(
        name="rag_eval.answer_correctness.judge_loose_match_no_context",
        instruction=(
            "You are given a question, the corresponding ground-truth answer and a prediction from a "
            "model. Compare the \"Ground-truth answer\" and the \"Prediction\" to determine whether the "
            "prediction correctly answers the question.\nThere should be no contradicting statements in "
            "the prediction. The prediction may contain extra information. If the prediction states "
            "something as a possibility, treat it as a definitive answer.\nThe prediction must contain "
            "all the important information presented in the ground truths, but doesn't have to fully "
            "match it.\nAnswer with only yes/no.\n"),
        input_format="Question: {question}\n\nGround-truth answer: {ground_truths}\n\nPrediction: {answer}\n",
        target_prefix="Answer: ",
        parser="yes_no"),
    JudgeTemplate(
        name="rag_eval.answer_correctness.judge_loose_match_no_context_numeric",
        instruction=(
            "You are given a question, the corresponding ground-truth answer and a prediction from a "
            "model. Compare the \"Ground-truth answer\" and the \"Prediction\" to determine whether the "
            "prediction correctly answers the question.\nThere should be no contradicting statements in "
            "the prediction. The prediction may contain extra information. If the prediction states "
            "something as a possibility, treat it as a definitive answer.\nThe prediction must contain "
            "all the important information presented in the ground truths, but doesn't have to fully "
            "match it.\nOn a scale of 0 to 10, to what extent does the prediction answer the question? "
            "Reply with your rating score without any preceding explanation.\n"),
        input_format="Question: {question}\n\nGround-truth answer: {ground_truths}\n\nPrediction: {answer}.\n\n",
        target_prefix="Answer: ",
        parser="0_10"),
]

#: the judge templates by name: ``default`` and unitxt's ``rag_eval.*`` (``template=NAME``)
TEMPLATES: dict[str, JudgeTemplate] = {t.name: t for t in [DEFAULT_TEMPLATE, *_UNITXT_TEMPLATES]}


@attrs.frozen
class Judgement:
    """One instance's judgement: the prompt sent, the judge's raw answer, the parsed score (NaN when
    unparsable and ``on_unparsable="nan"``), whether the parser read it, and whether the answer came from
    the cache (saved by an earlier run) rather than from the judge model."""

    prompt: str
    answer: str
    score: float
    parsed: bool
    cached: bool

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _check_template(template: Any, default: JudgeTemplate, owner: str) -> JudgeTemplate:
    if template is None:
        return default
    if isinstance(template, JudgeTemplate):
        return template
    if isinstance(template, str) and template in TEMPLATES:
        return TEMPLATES[template]
    if isinstance(template, str) and "{" in template:
        return JudgeTemplate(name="user", instruction="", input_format=template, target_prefix="",
                             parser=default.parser)
    raise InvalidParameterError(
        f"{owner}: 'template' must be a template name ({', '.join(TEMPLATES)}), a JudgeTemplate, or a prompt string "
        f"with fields in braces such as 'Rate {{prediction}} against {{references}} from 0 to 10:'; got "
        f"{template!r:.80}.")


class LLMJudge(BulkInstanceMetric):
    """A judge model's score of each prediction (unitxt's ``llm_as_judge`` family); the global score is the mean.

    Parameters
    ----------
    model : str, path or engine
        Required to score (a metric without one loads, and its first scoring is an error
        saying so). The judge: a local Hugging Face model folder (loaded offline, greedy answers), the URL
        of an OpenAI-compatible endpoint (``"http://127.0.0.1:8000/v1"``, with ``api_model``), or an
        engine object with ``identity`` and ``generate(prompts)``
        (:class:`~assay_transformers.judge_engines.JudgeEngine`).
    template : str, JudgeTemplate or None
        The judge prompt: a name in :data:`TEMPLATES`, a :class:`JudgeTemplate`, or one format
        string whose ``{fields}`` are ``prediction``, ``references`` (joined by ``", "``),
        ``reference`` (the first) and the keys of the instance's ``task_data``. Default: the
        metric's own (``llm_as_judge``: :data:`DEFAULT_TEMPLATE`, a 0-10 rating against the references).
    parser : {"0_10", "yes_no", "number"} or None
        How an answer becomes a score (:func:`parse_answer`); default: the template's.
    cache_dir : str, path or None
        Save every judgement there as it is made, and read saved ones instead of judging
        again (:mod:`assay_transformers.judge_cache`). None: nothing is saved.
    batch_size : int
        Prompts per call of the judge (and per save).
    max_new_tokens, device, dtype : for a model folder: answer length, where and in which precision it runs
    on_unparsable : {"nan", "zero"}
        An answer the parser cannot read scores NaN (with a warning counting them) or, as in unitxt, 0.0.
    progress : bool or None
        A tqdm progress bar of the prompts judged; None: when standard error is a terminal.
    api_model, endpoint : for a URL ``model``: the name of the model the server serves, and
        ``"chat"`` or ``"completions"`` (:class:`~assay_transformers.judge_engines.OpenAIJudgeEngine`)
    """

    name = "llm_as_judge"
    main_score = "llm_as_judge"
    score_names = ("llm_as_judge", "llm_as_judge_unparsable")
    ci_scores = ("llm_as_judge",)
    prediction_type = str
    examples = [{"predictions": ["alpha", "bravo", "charlie", "delta"],
                 "references": [["a"], ["b"], ["c", "cc"], ["d"]],
                 "overrides": {"model": RuleJudge({"alpha": "8", "bravo": "3 of 10", "charlie": "10", "delta": "0"})},
                 "global_target": {"llm_as_judge": (0.8 + 0.3 + 1.0 + 0.0) / 4, "llm_as_judge_unparsable": 0.0}}]
    _default_template = DEFAULT_TEMPLATE
    _prediction_field = "prediction"

    def __init__(self, *, model: Any = None, template: Any = None, parser: str | None = None,
                 cache_dir: str | os.PathLike[str] | None = None, batch_size: int = 8, max_new_tokens: int = 16,
                 device: str | None = None, dtype: str | None = "float32", on_unparsable: str = "nan",
                 progress: bool | None = None, api_model: str | None = None, endpoint: str = "chat",
                 score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        owner = f"metric {self.name!r}"
        self.template = _check_template(template, self._default_template, owner)
        if parser is not None and parser not in PARSERS:
            raise InvalidParameterError(f"{owner}: 'parser' must be one of {', '.join(PARSERS)}; got {parser!r}.")
        self.parser = parser if parser is not None else self.template.parser
        if on_unparsable not in ("nan", "zero"):
            raise InvalidParameterError(f"{owner}: 'on_unparsable' must be 'nan' or 'zero'; got {on_unparsable!r}.")
        self.on_unparsable = on_unparsable
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=owner)
        self.max_new_tokens = check_int(max_new_tokens, "max_new_tokens", low=1, owner=owner)
        self.device, self.dtype = device, dtype
        self.progress = None if progress is None else check_bool(progress, "progress", owner=owner)
        self.cache_dir = None if cache_dir is None else os.fspath(cache_dir)
        self.model = model
        self.api_model, self.endpoint = api_model, endpoint
        # no model: the metric loads (every registered name must), and its first scoring is the error
        self.engine = self._engine(model, owner) if model is not None else None
        self._cache = JudgementCache(self.cache_dir, self.engine.identity, engine_settings(self.engine)) \
            if self.cache_dir is not None and self.engine is not None else None
        self.__dict__["_judgements"] = []

    def _engine(self, model: Any, owner: str) -> Any:
        is_url = isinstance(model, str) and model.startswith(("http://", "https://"))
        is_folder = isinstance(model, (str, os.PathLike)) and not is_url
        # every option honoured or rejected: the model options of one kind of judge are errors with another
        unused = [f"{k}={v!r}" for k, v, default, applies in (
            ("device", self.device, None, is_folder), ("dtype", self.dtype, "float32", is_folder),
            ("max_new_tokens", self.max_new_tokens, 16, is_folder or is_url)) if v != default and not applies]
        if unused:
            raise InvalidParameterError(
                f"{owner}: {', '.join(unused)} cannot apply to this judge ({model!r:.60}): device and dtype are for a "
                "model folder, max_new_tokens for a model folder or an endpoint; an engine object sets its own.")
        if is_url:
            if not isinstance(self.api_model, str) or not self.api_model:
                raise InvalidParameterError(
                    f"{owner}: model={model!r} is an HTTP endpoint; name the model it serves with api_model=, as in "
                    f"{self.name}[model='{model}', api_model=NAME].")
            return OpenAIJudgeEngine(model, self.api_model, endpoint=self.endpoint, max_new_tokens=self.max_new_tokens)
        if self.api_model is not None or self.endpoint != "chat":
            raise InvalidParameterError(f"{owner}: api_model= and endpoint= are for a model behind an HTTP endpoint "
                                        "(model='http://...'); this model is not one.")
        if isinstance(model, (str, os.PathLike)):
            return get_hf_engine(model, max_new_tokens=self.max_new_tokens, device=self.device, dtype=self.dtype)
        if isinstance(getattr(model, "identity", None), str) and callable(getattr(model, "generate", None)):
            if not model.identity:
                raise InvalidParameterError(f"{owner}: the judge engine {model!r} has an empty identity.")
            return model
        raise InvalidParameterError(
            f"{owner}: 'model' must be a local model folder or an engine with a str identity and generate(prompts); "
            f"got {type(model).__name__}: {model!r:.60}.")

    # ------------------------------------------------------------------ records
    @property
    def judgements(self) -> list[Judgement]:
        """The judgements of every instance this metric has scored since it was made or reset, in order."""
        return self.__dict__.setdefault("_judgements", [])

    def reset(self) -> LLMJudge:
        super().reset()
        self.__dict__["_judgements"] = []
        return self

    def clone(self) -> LLMJudge:
        """A copy with the same options and an empty state, sharing the judge engine and its cache (a
        loaded model, or a user's engine object, is never copied)."""
        shared = ("engine", "_cache", "model")
        new = copy.copy(self)
        new.__dict__ = copy.deepcopy({k: v for k, v in self.__dict__.items()
                                      if k not in (*shared, "_state", "_judgements")})
        new.__dict__.update({k: self.__dict__[k] for k in shared}, _judgements=[])
        return new

    def provenance_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The signature's options: the judge's identity for ``model``, ``name@hash`` for the template; the
        options that do not change the numbers (cache folder, batch size, device, progress bar) left out."""
        left_out = ("model", "template", "parser", "cache_dir", "batch_size", "device", "progress", "api_model")
        out = {k: v for k, v in options.items() if k not in left_out}
        out["model"] = self.engine.identity if self.engine is not None else None
        out["template"] = f"{self.template.name}@{self.template.digest}"
        if self.parser != self._default_template.parser:
            out["parser"] = self.parser
        return dict(sorted(out.items()))

    # ------------------------------------------------------------------ scoring
    def instance_fields(self, prediction: Any, references: Any, task_data: Any, index: int) -> dict[str, Any]:
        """The fields a template can use for one instance."""
        fields: dict[str, Any] = {}
        if task_data is not None:
            if not isinstance(task_data, Mapping):
                raise InvalidParameterError(f"metric {self.name!r}: the task_data of instance {index} must be a dict "
                                            f"of fields; got {type(task_data).__name__}.")
            fields.update(task_data)
        if references is not None:
            refs = [references] if isinstance(references, str) else list(references)
            for j, ref in enumerate(refs):
                if not isinstance(ref, str):
                    raise InvalidParameterError(f"metric {self.name!r}: references[{index}, {j}] must be a text; "
                                                f"got {type(ref).__name__} {ref!r}.")
            fields["references"] = refs
            if refs:
                fields["reference"] = refs[0]
        fields["prediction"] = prediction
        if self._prediction_field != "prediction":  # unitxt's judge tasks: the prediction fills its field
            fields[self._prediction_field] = prediction
            if references is not None:
                fields["ground_truths"] = fields["references"]
        return fields

    def prompts(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                task_data: Sequence[Any] | None) -> list[str]:
        """The judge prompt of each instance."""
        n = len(predictions)
        refs = references if references is not None else [None] * n
        tds = task_data if task_data is not None else [None] * n
        owner = f"metric {self.name!r}"
        return [self.template.render(self.instance_fields(p, r, t, i), owner=owner, index=i)
                for i, (p, r, t) in enumerate(zip(predictions, refs, tds))]

    def judge(self, prompts: Sequence[str]) -> tuple[list[str], list[bool]]:
        """The judge's answer to each prompt and whether it came from the cache; new answers are saved per batch."""
        if self.engine is None:
            raise InvalidParameterError(
                f"metric {self.name!r} needs model=: a local Hugging Face model folder (the judge), the URL of an "
                "OpenAI-compatible endpoint with api_model=, or an engine object with identity and generate(prompts), "
                f"as in {self.name}[model=/path/to/judge, cache_dir=judgements].")
        answers: dict[str, str] = {}
        cached: set[str] = set()
        todo: list[str] = []
        for p in dict.fromkeys(prompts):
            saved = self._cache.get(p) if self._cache is not None else None
            if saved is None:
                todo.append(p)
            else:
                answers[p] = saved
                cached.add(p)
        if todo:
            from tqdm.auto import tqdm  # deferred: only a run that judges shows a bar

            bar = tqdm(total=len(todo), desc=f"{self.name}: judging", unit="prompt",
                       disable=None if self.progress is None else not self.progress)
            try:
                for start in range(0, len(todo), self.batch_size):
                    batch = todo[start:start + self.batch_size]
                    got = list(self.engine.generate(batch))
                    if len(got) != len(batch) or not all(isinstance(a, str) for a in got):
                        raise EvaluationError(f"metric {self.name!r}: the judge {self.engine.identity!r} returned "
                                              f"{len(got)} answers for {len(batch)} prompts, or an answer that is "
                                              "not a str.")
                    if self._cache is not None:
                        self._cache.add(batch, got)
                    answers.update(zip(batch, got))
                    bar.update(len(batch))
            finally:
                bar.close()
        return [answers[p] for p in prompts], [p in cached for p in prompts]

    def compute_bulk(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                     task_data: Sequence[Any] | None) -> list[dict[str, float]]:
        prompts = self.prompts(predictions, references, task_data)
        answers, from_cache = self.judge(prompts)
        scores, records, bad = [], [], []
        for i, (prompt, answer, hit) in enumerate(zip(prompts, answers, from_cache)):
            value = parse_answer(answer, self.parser)
            parsed = value is not None
            if not parsed:
                bad.append(i)
                value = 0.0 if self.on_unparsable == "zero" else math.nan
            assert value is not None
            records.append(Judgement(prompt=prompt, answer=answer, score=value, parsed=parsed, cached=hit))
            scores.append({self.main_score: value, f"{self.main_score}_unparsable": 0.0 if parsed else 1.0})
        if bad:
            first = answers[bad[0]]
            what = ("scored NaN (left out of the mean)" if self.on_unparsable == "nan"
                    else "scored 0.0 (on_unparsable='zero')")
            warnings.warn(f"metric {self.name!r}: {len(bad)} of {len(prompts)} judge answers could not be read by the "
                          f"{self.parser!r} parser and are {what}; the first, of instance {bad[0]}: {first!r:.80}. "
                          f"The score {self.main_score}_unparsable counts them.", UserWarning, stacklevel=2)
        self.judgements.extend(records)
        return scores


def judgements(results: Any, metric: str | None = None) -> list[Judgement]:
    """The per-instance :class:`Judgement` records of a judge metric in the results of :func:`assay.evaluate`.

    ``metric``: the metric's name (default: the only judge metric in the results). The records
    live in memory with the results (``results.records``); results loaded from a file do not
    carry them: the judge's cache file (``cache_dir``) holds every prompt and answer.
    """
    records = getattr(results, "records", None) or {}
    found = {name: m for name, (m, _) in records.items() if isinstance(m, LLMJudge)}
    if metric is None:
        if len(found) != 1:
            raise InvalidParameterError(
                f"judgements(): the results hold {len(found)} judge metrics ({', '.join(found) or 'none'}); name one "
                "with metric=. Results loaded from a file hold none: read the judge's cache_dir instead.")
        metric = next(iter(found))
    if metric not in found:
        raise InvalidParameterError(f"judgements(): no judge metric {metric!r} in these results; they hold "
                                    f"{', '.join(found) or 'none'}.")
    return list(found[metric].judgements)


# --------------------------------------------------------------------------- unitxt's RAG judges
@attrs.frozen
class RagDefinition:
    """One of unitxt's RAG judge metrics: its main score, template, the field the prediction fills
    (``answer``, or ``contexts`` for context relevance), whether it reads references, and its catalog name."""

    main_score: str
    template: str
    prediction_field: str
    needs_references: bool
    catalog_name: str


#: unitxt 1.26.10's RAG judge metrics with a generic inference engine (``metrics.rag.*.generic_inference_engine_*``)
RAG_DEFINITIONS: dict[str, RagDefinition] = {d.main_score: d for d in [
    RagDefinition("faithfulness_q_c_a", "rag_eval.faithfulness.judge_with_question_simplified", "answer", False,
                  "metrics.rag.faithfulness.generic_inference_engine_q_c_a"),
    RagDefinition("faithfulness_c_a", "rag_eval.faithfulness.judge_no_question_simplified", "answer", False,
                  "metrics.rag.faithfulness.generic_inference_engine_c_a"),
    RagDefinition("context_relevance_q_c_ares", "rag_eval.context_relevance.judge_context_relevance_ares",
                  "contexts", False, "metrics.rag.context_relevance.generic_inference_engine_q_c_ares"),
    RagDefinition("context_relevance_q_c_ares_numeric",
                  "rag_eval.context_relevance.judge_context_relevance_ares_numeric", "contexts", False,
                  "metrics.rag.context_relevance.generic_inference_engine_q_c_ares_numeric"),
    RagDefinition("answer_correctness_q_a_gt_loose", "rag_eval.answer_correctness.judge_loose_match_no_context",
                  "answer", True, "metrics.rag.answer_correctness.generic_inference_engine_q_a_gt_loose"),
    RagDefinition("answer_correctness_q_a_gt_loose_numeric",
                  "rag_eval.answer_correctness.judge_loose_match_no_context_numeric", "answer", True,
                  "metrics.rag.answer_correctness.generic_inference_engine_q_a_gt_loose_numeric"),
]}


def _rag_example(d: RagDefinition) -> dict[str, Any]:
    """A conformance example: a :class:`RuleJudge` answering by the prediction's text (yes/no, or 0-10)."""
    numeric = TEMPLATES[d.template].parser == "0_10"
    answers = ["8", "2", "5"] if numeric else ["Yes", "no", "yes."]
    values = [0.8, 0.2, 0.5] if numeric else [1.0, 0.0, 1.0]
    marks = ["first thing", "second thing", "third thing"]
    if d.prediction_field == "contexts":
        predictions: list[Any] = [[m, "more"] for m in marks]
        task_data: list[dict[str, Any]] = [{"question": f"question {i}"} for i in range(3)]
    else:
        predictions = marks
        task_data = [{"question": f"question {i}", "contexts": [f"context {i}", "other"]} for i in range(3)]
    example: dict[str, Any] = {
        "predictions": predictions, "task_data": task_data,
        "overrides": {"model": RuleJudge(dict(zip(marks, answers)))},
        "global_target": {d.main_score: sum(values) / 3, f"{d.main_score}_unparsable": 0.0}}
    if d.needs_references:
        example["references"] = [["truth a"], ["truth b"], ["truth c", "truth d"]]
    return example


def _rag_class(d: RagDefinition) -> type[LLMJudge]:
    body = {
        "__module__": __name__,
        "__doc__": f"unitxt's ``{d.catalog_name}``: :class:`LLMJudge` with the template ``{d.template}`` "
                   f"(:data:`TEMPLATES`); the prediction is the ``{d.prediction_field}`` field, the others come from "
                   "``task_data``" + (" and the references are ``ground_truths``." if d.needs_references else "."),
        "name": f"rag_judge.{d.main_score}",
        "main_score": d.main_score,
        "score_names": (d.main_score, f"{d.main_score}_unparsable"),
        "ci_scores": (d.main_score,),
        "prediction_type": list[str] if d.prediction_field == "contexts" else str,
        "needs_references": d.needs_references,
        "examples": [_rag_example(d)],
        "_default_template": TEMPLATES[d.template],
        "_prediction_field": d.prediction_field,
    }
    cls_name = "Judge" + "".join(part.capitalize() for part in d.main_score.split("_"))
    body["__qualname__"] = cls_name
    return type(cls_name, (LLMJudge,), body)


#: the class of each RAG definition, by unitxt main score
RAG_CLASSES: dict[str, type[LLMJudge]] = {name: _rag_class(d) for name, d in RAG_DEFINITIONS.items()}
# module attributes, so that pickle finds them (sharded evaluation sends metrics to worker processes)
globals().update({cls.__name__: cls for cls in RAG_CLASSES.values()})


def rag_judge_class(main_score: str) -> type[LLMJudge]:
    """The :class:`LLMJudge` subclass of a RAG definition (:data:`RAG_DEFINITIONS`), by its unitxt main score."""
    if main_score not in RAG_CLASSES:
        raise InvalidParameterError(f"No RAG judge {main_score!r}; there are {', '.join(RAG_CLASSES)}.")
    return RAG_CLASSES[main_score]
