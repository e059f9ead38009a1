"""``HuggingfaceMetric``: a Hugging Face ``evaluate`` module as an assay metric, loaded offline only.

unitxt's wrapper runs as written::

    HuggingfaceMetric(hf_metric_name="bleu", main_score="bleu", prediction_type=str,
                      hf_additional_input_fields_pass=["num1", "num2"],
                      hf_additional_input_fields_pass_one_value=["tokenize"])

assay never reaches a network at run time. ``hf_metric_name`` is either a local path (a
metric script ``.../name.py`` or the folder holding ``name/name.py``), loaded with
``evaluate.load(path)`` in offline mode, or a Hub name (``"bleu"``, ``"user/metric"``) that
must already be in the local ``evaluate`` module cache (``HF_MODULES_CACHE``, by default
``~/.cache/huggingface/modules``), where any earlier ``evaluate.load("bleu")`` on a machine
with network put it. A name that is in neither place is an error that says so and what to
do; assay never downloads it. The common modules (bleu, rouge, squad, f1, ...) need no script:
the ``evaluate:`` namespace computes them offline (``assay.load_metric("evaluate:bleu")``, see
:mod:`assay_interop.evaluate_modules`).
"""

from __future__ import annotations

import contextlib
import importlib
import math
import numbers
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.errors import EvaluationError, InvalidParameterError, UnknownNameError
from assay.metrics.base import Metric
from assay.plugins.deps import require

__all__ = ["HuggingfaceMetric", "load_evaluate_module"]

_OFFLINE_ENV = ("HF_EVALUATE_OFFLINE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


@contextlib.contextmanager
def _offline(evaluate: Any) -> Iterator[None]:
    """Offline mode for ``evaluate`` and the Hub client while a module loads."""
    saved_env = {k: os.environ.get(k) for k in _OFFLINE_ENV}
    config = evaluate.config
    saved_flag = config.HF_EVALUATE_OFFLINE
    try:
        for k in _OFFLINE_ENV:
            os.environ[k] = "1"
        config.HF_EVALUATE_OFFLINE = True
        yield
    finally:
        config.HF_EVALUATE_OFFLINE = saved_flag
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _local_script(name: str) -> Path | None:
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".py":
        return path
    if path.is_dir() and (path / f"{path.name}.py").is_file():
        return path
    return None


def load_evaluate_module(name: str, *, experiment_id: str | None = None) -> Any:
    """An ``evaluate.EvaluationModule`` from a local path or the local cache, never from the network.

    Raises
    ------
    UnknownNameError
        ``name`` is neither a local metric script nor in the local ``evaluate`` cache.
    MissingDependencyError
        ``evaluate`` is not installed (``pip install evaluate``).
    """
    if not isinstance(name, str) or not name:
        raise InvalidParameterError(f"HuggingfaceMetric's 'hf_metric_name' must be a non-empty string; got {name!r}.")
    evaluate = require("evaluate", extra="huggingface", purpose="HuggingfaceMetric")
    loading = importlib.import_module("evaluate.loading")
    local = _local_script(name)
    with _offline(evaluate):
        if local is not None:
            return evaluate.load(str(local), experiment_id=experiment_id)
        if name.count("/") > 1 or name.endswith(".py") or os.sep in name.replace("/", "") or name.startswith("."):
            raise UnknownNameError(
                f"HuggingfaceMetric: no metric script at the local path {name!r} (expected a file 'NAME.py' or a "
                "folder 'NAME' holding 'NAME.py').")
        cached = ([f"evaluate-{t}--{name}" for t in ("metric", "comparison", "measurement")]
                  if "/" not in name else [name.replace("/", "--")])
        tried: list[str] = []  # why each cache entry could not be used, for the error below
        for candidate in cached:
            try:
                module = loading.CachedEvaluationModuleFactory(candidate).get_module()
            except (FileNotFoundError, OSError, AssertionError) as exc:
                tried.append(f"{candidate}: {type(exc).__name__}: {exc}".rstrip(": "))
                continue
            cls = loading.import_main_class(module.module_path)
            return cls(experiment_id=experiment_id, hash=module.hash)
    modules = getattr(evaluate.config, "HF_MODULES_CACHE", "the evaluate module cache")
    raise UnknownNameError(
        f"HuggingfaceMetric: the evaluate module {name!r} is not available offline: it is not a local path and "
        f"not in the local evaluate cache ({modules}). assay never downloads at run time. Either run "
        f"`python -c \"import evaluate; evaluate.load({name!r})\"` once on a machine with network access (it is "
        f"then cached; copy the cache folder along, or set HF_MODULES_CACHE to it), or pass the local path of the "
        f"metric script as hf_metric_name (a file '{name.split('/')[-1]}.py' or the folder holding it). "
        f"Cache entries tried: {'; '.join(tried)}."
    )


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class HuggingfaceMetric(Metric):
    """A Hugging Face ``evaluate`` module, computed on the whole collection (a global metric).

    Parameters
    ----------
    hf_metric_name : str
        A local metric script (``path/to/name.py`` or its folder) or a Hub name already in
        the local ``evaluate`` cache (see the module docstring); never downloaded.
    main_score : str
        The score reported as ``score`` (a key of the module's result, or the new name of
        ``hf_main_score``).
    prediction_type : type, optional
        Checked on every prediction.
    hf_main_score : str, optional
        The module's key for the main score, when it differs from ``main_score``.
    scale : float
        Divide ``main_score`` (and ``scaled_fields``) by this (unitxt: 100 turns a 0-100
        score into 0-1).
    scaled_fields : list of str, optional
    hf_compute_args : dict
        Extra keyword arguments of ``compute``.
    hf_additional_input_fields_pass : list of str
        ``task_data`` fields passed to ``compute`` as lists, one value per instance
        (``hf_additional_input_fields`` is unitxt's code spelling of the same).
    hf_additional_input_fields_pass_one_value : list of str
        ``task_data`` fields passed as one value; all instances must agree.
    experiment_id : str, optional
        ``evaluate``'s experiment id (for concurrent runs sharing a cache).
    score_prefix : str

    Notes
    -----
    Non-numeric entries of the module's result (lists such as BLEU's ``precisions``,
    strings) are left out: assay's scores are numbers. Instance scores re-run the module
    on each instance alone, as unitxt's global metrics do.
    """

    def __init__(self, hf_metric_name: str, main_score: str, *, prediction_type: Any = None,
                 hf_main_score: str | None = None, scale: float = 1.0, scaled_fields: Sequence[str] | None = None,
                 hf_compute_args: Mapping[str, Any] | None = None,
                 hf_additional_input_fields_pass: Sequence[str] = (),
                 hf_additional_input_fields: Sequence[str] = (),
                 hf_additional_input_fields_pass_one_value: Sequence[str] = (),
                 experiment_id: str | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        if not isinstance(hf_metric_name, str) or not hf_metric_name:
            raise InvalidParameterError(
                f"HuggingfaceMetric's 'hf_metric_name' must be a non-empty string; got {hf_metric_name!r}.")
        if not isinstance(main_score, str) or not main_score:
            raise InvalidParameterError(
                f"HuggingfaceMetric's 'main_score' must be a non-empty string; got {main_score!r}.")
        if not _number(scale) or not scale or not math.isfinite(scale):
            raise InvalidParameterError(f"HuggingfaceMetric's 'scale' must be a non-zero finite number; got {scale!r}.")
        for key, fields in (("hf_additional_input_fields_pass", hf_additional_input_fields_pass),
                            ("hf_additional_input_fields", hf_additional_input_fields),
                            ("hf_additional_input_fields_pass_one_value", hf_additional_input_fields_pass_one_value),
                            ("scaled_fields", scaled_fields or [])):
            if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
                raise InvalidParameterError(
                    f"HuggingfaceMetric's {key!r} must be a list of field names; got {fields!r}.")
        if hf_compute_args is not None and not isinstance(hf_compute_args, Mapping):
            raise InvalidParameterError(
                f"HuggingfaceMetric's 'hf_compute_args' must be a dict; got {type(hf_compute_args).__name__}.")
        self.hf_metric_name = hf_metric_name
        self.main_score = main_score
        self.prediction_type = prediction_type
        self.hf_main_score = hf_main_score
        self.scale = scale
        self.scaled_fields = list(scaled_fields) if scaled_fields is not None else None
        self.hf_compute_args = dict(hf_compute_args or {})
        self.hf_additional_input_fields_pass = list(hf_additional_input_fields_pass)
        self.hf_additional_input_fields = list(hf_additional_input_fields)
        self.hf_additional_input_fields_pass_one_value = list(hf_additional_input_fields_pass_one_value)
        self.experiment_id = experiment_id

    # the loaded module is not pickled: it loads again (offline) where it is used
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_hf_module", None)
        return state

    def module(self) -> Any:
        """The loaded ``evaluate`` module (loaded on first use)."""
        mod = self.__dict__.get("_hf_module")
        if mod is None:
            mod = load_evaluate_module(self.hf_metric_name, experiment_id=self.experiment_id)
            self.__dict__["_hf_module"] = mod
        return mod

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> tuple[Any, Any, Any]:
        return (prediction, references, task_data)

    def _field_values(self, field: str, task_data: list[Any]) -> list[Any]:
        """The values of the task_data ``field`` of every instance (an error naming the first that lacks it)."""
        for i, td in enumerate(task_data):
            if not isinstance(td, Mapping) or field not in td:
                raise InvalidParameterError(
                    f"HuggingfaceMetric {self.hf_metric_name!r} passes the task_data field {field!r}, which "
                    f"instance {i} lacks (task_data: {td!r:.80}).")
        return [td[field] for td in task_data]

    def _compute_args(self, task_data: list[Any]) -> dict[str, Any]:
        args: dict[str, Any] = {}
        for field in self.hf_additional_input_fields_pass + self.hf_additional_input_fields:
            args[field] = self._field_values(field, task_data)
        for field in self.hf_additional_input_fields_pass_one_value:
            values = self._field_values(field, task_data)
            distinct = [v for j, v in enumerate(values) if v not in values[:j]]
            if len(distinct) != 1:
                raise InvalidParameterError(
                    f"HuggingfaceMetric {self.hf_metric_name!r}: the task_data field {field!r} is passed as one "
                    f"value, so every instance must have the same; got {distinct!r:.120}.")
            args[field] = distinct[0]
        return args

    def reduce(self, intermediates: Sequence[tuple[Any, Any, Any]]) -> dict[str, float]:
        preds = [t[0] for t in intermediates]
        refs = [t[1] for t in intermediates]
        tds = [t[2] for t in intermediates]
        args = {**self._compute_args(tds), **self.hf_compute_args}
        result = self.module().compute(predictions=preds, references=refs, **args)
        if not isinstance(result, Mapping):
            raise EvaluationError(f"evaluate module {self.hf_metric_name!r} returned {type(result).__name__}, "
                                  "not a dict of scores.")
        result = dict(result)
        if self.hf_main_score:
            if self.hf_main_score not in result:
                raise EvaluationError(f"evaluate module {self.hf_metric_name!r} reported {sorted(result)}, not the "
                                      f"hf_main_score {self.hf_main_score!r}.")
            result[self.main_score] = result.pop(self.hf_main_score)
        if self.scale != 1.0:
            for field in [self.main_score, *(self.scaled_fields or [])]:
                if field in result and _number(result[field]):
                    result[field] = result[field] / self.scale
        return {k: (math.nan if v is None else float(v)) for k, v in result.items()
                if _number(v) or (v is None and k == self.main_score)}
