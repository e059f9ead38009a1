"""What every ``evaluate:`` module shares: the module description, the metric class, result flattening.

A :class:`Module` describes one Hugging Face ``evaluate`` module as ``evaluate`` documents it:
its ``compute()`` arguments and their defaults, its configurations (``evaluate.load(name,
config_name)``), its result keys, and two functions: ``map`` turns one instance into what the
module needs of it (tokens, edit counts, a label), ``reduce`` turns a list of those into
``evaluate``'s result dict. :class:`EvaluateModuleMetric` runs a module as an assay metric:
``map`` once per instance, ``reduce`` on the whole collection, on each instance alone (instance
scores) and on each bootstrap resample (intervals), so no instance is tokenized or scored twice.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from assay.errors import EvaluationError, InvalidParameterError
from assay.metrics import Metric
from assay_interop._common import close_matches, spec, target_of

__all__ = ["NAMESPACE", "EvaluateModuleMetric", "Module", "flatten_result", "one_reference", "text", "texts"]

NAMESPACE = "evaluate"


class Module:
    """One ``evaluate`` module: its arguments, configurations, result keys, ``map`` and ``reduce``.

    Subclasses set the class attributes (``defaults``: the ``compute()`` keywords) and implement
    :meth:`map` and :meth:`reduce`; :meth:`check` validates option values beyond their names (``average=None`` ...).
    A subclass that sets ``name`` but not ``keys`` (or ``main_score``) is a single-score module:
    its result key and main score are its name.
    """

    #: the module's name in ``evaluate`` (``evaluate.load(name)``)
    name: ClassVar[str]
    #: the keys of ``evaluate``'s result dict, in its order (lists are flattened, see flatten_result)
    keys: ClassVar[tuple[str, ...]]
    main_score: ClassVar[str]
    higher_is_better: ClassVar[bool] = True
    #: the options in force: defaults updated with the user's
    options: dict[str, Any]
    #: compute() keyword -> evaluate's default
    defaults: ClassVar[Mapping[str, Any]] = {}
    #: compute() keywords assay does not take, -> why (named in the error)
    rejected: ClassVar[Mapping[str, str]] = {}
    #: the configuration names of evaluate.load(name, config_name); None: the default one
    configs: ClassVar[tuple[str | None, ...]] = (None,)
    #: instance scores are meaningful (False for correlations, ROC AUC, binary F1 ...)
    per_instance: ClassVar[bool] = False
    #: importable module -> pip distribution
    requirements: ClassVar[Mapping[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = vars(cls)
        if "name" in own:
            if "keys" not in own:
                cls.keys = (cls.name,)
            if "main_score" not in own:
                cls.main_score = cls.name

    def __init__(self, config: str | None, options: Mapping[str, Any]) -> None:
        self.config = config
        self.options = {**self.defaults, **options}
        self.given = dict(options)
        #: the metric as the user spelt it, for messages
        self.where = spec(NAMESPACE, self.name, _spelt(self))

    def check(self) -> None:
        """Reject option values assay cannot honour (the defaults always pass)."""

    def result_keys(self) -> tuple[str, ...]:
        """The keys of the result for these options (``return_pvalue=True`` adds one)."""
        return self.keys

    def map(self, prediction: Any, references: Any) -> Any:
        raise NotImplementedError

    def reduce(self, items: list[Any]) -> Mapping[str, Any]:
        raise NotImplementedError


def flatten_result(result: Mapping[str, Any]) -> dict[str, float]:
    """``evaluate``'s result as assay scores: numbers as floats, a list ``k`` as ``k_1`` ... ``k_n``.

    BLEU's ``precisions`` become ``precisions_1`` ... ``precisions_4`` (the n-gram orders);
    sacrebleu's ``counts``, ``totals`` and ``precisions`` likewise. ``None`` becomes NaN.
    """
    out: dict[str, float] = {}
    for key, value in result.items():
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if isinstance(value, (list, tuple)):
            for i, v in enumerate(value, start=1):
                out[f"{key}_{i}"] = float(v)
        elif value is None:
            out[key] = math.nan
        elif isinstance(value, (numbers.Real, np.generic)):
            out[key] = float(value)
        else:
            raise InvalidParameterError(f"evaluate result {key!r} is a {type(value).__name__}, not a number.")
    return out


def text(value: Any, where: str) -> str:
    """``value`` if it is a string (a prediction), or an error naming the place."""
    if not isinstance(value, str):
        raise InvalidParameterError(f"{where}: a prediction must be a string; got {type(value).__name__} "
                                    f"{value!r:.80}.")
    return value


def texts(value: Any, what: str, where: str) -> list[str]:
    """``value`` as a list of strings (one string is a list of one), or an error naming the place."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(t, str) for t in items):
        raise InvalidParameterError(f"{where}: {what} must be a string or a non-empty list of strings; got "
                                    f"{value!r:.80}.")
    return list(items)


def one_reference(references: Any, where: str) -> Any:
    """The single reference of an instance (``[y]`` or ``y``), or an error saying the module takes one."""
    if isinstance(references, (list, tuple)) and len(references) != 1 and all(isinstance(r, str) for r in references):
        raise InvalidParameterError(f"{where} takes one reference per prediction (as evaluate's module does); got "
                                    f"{len(references)}: {references!r:.80}.")
    return target_of(references)


class EvaluateModuleMetric(Metric):
    """A Hugging Face ``evaluate`` module computed by assay, offline: ``evaluate:NAME[option=value]``.

    Parameters
    ----------
    module : Module
        The module description (see :func:`assay_interop.evaluate_modules.resolve`).
    score_prefix : str
        As for every metric.

    Notes
    -----
    The scores are ``evaluate``'s result keys with its values and scales (list values
    flattened, see :func:`flatten_result`); ``score`` is the module's main key. Intervals
    re-run ``reduce`` on each bootstrap resample of the per-instance intermediates.
    """

    def __init__(self, module: Module, *, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.module = module
        self.main_score = module.main_score
        self.higher_is_better = module.higher_is_better
        self.per_instance = module.per_instance
        self.requirements = dict(module.requirements)
        self.name = spec(NAMESPACE, module.name, _spelt(module))

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> Any:
        return self.module.map(prediction, references)

    def reduce(self, intermediates: Any) -> dict[str, float]:
        items = list(intermediates)
        if not items:  # evaluate raises too (each library in its own words): one message for all
            raise EvaluationError(f"Metric {self.name!r} has seen no data (call update first).")
        return flatten_result(self.module.reduce(items))


def _spelt(module: Module) -> dict[str, Any]:
    """The options as the user gave them, for the metric's name."""
    return {"config_name": module.config, **module.given} if module.config is not None else dict(module.given)


def check_names(module_cls: type[Module], config: str | None, options: Mapping[str, Any]) -> None:
    """Unknown or rejected option names and configurations are an error naming the accepted ones."""
    where = spec(NAMESPACE, module_cls.name, options)
    if config not in module_cls.configs:
        named = [c for c in module_cls.configs if c is not None]
        if not named:
            raise InvalidParameterError(f"{where}: evaluate's {module_cls.name!r} has no configurations; got "
                                        f"config_name={config!r}.")
        need = "" if None in module_cls.configs else " (required)"
        raise InvalidParameterError(f"{where}: config_name{need} must be one of {', '.join(named)}; got {config!r}."
                                    + close_matches(str(config), named, n=3))
    for key in options:
        if key in module_cls.rejected:
            raise InvalidParameterError(f"{where}: option {key!r} is not supported: {module_cls.rejected[key]}.")
        if key not in module_cls.defaults:
            accepted = sorted(module_cls.defaults)
            raise InvalidParameterError(
                f"Unknown option {key!r} for {where}: evaluate's {module_cls.name!r} takes "
                f"{', '.join(accepted) or 'no options'}{' and config_name' if module_cls.configs != (None,) else ''}."
                + close_matches(key, accepted, n=3))


def choice(module: Module, key: str, allowed: Sequence[Any], why: str = "") -> None:
    """``module.options[key]`` must be one of ``allowed``."""
    value = module.options[key]
    if value not in allowed:
        raise InvalidParameterError(
            f"{module.where}: {key}={value!r} is not supported; use one of "
            f"{', '.join(repr(a) for a in allowed)}{why}.")
