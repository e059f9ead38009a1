"""scikit-learn metric functions as assay global metrics: ``"sklearn:balanced_accuracy_score"``.

Any scoring function of :mod:`sklearn.metrics` (``*_score``, ``*_error``, ``*_loss``,
``*_deviance``, ``matthews_corrcoef``) loads by name; ``[key=value]`` options are passed
to the function as keywords::

    >>> import assay
    >>> m = assay.load_metric("sklearn:f1_score[average=macro]")      # doctest: +SKIP
    >>> m.update([0, 1, 2, 2], [[0], [1], [1], [2]]).compute_scores()["f1_score"]  # doctest: +SKIP
    0.777...

The metric is a :class:`~assay.metrics.GlobalMetric`: the function runs on the gathered
predictions and references, as ``function(y_true, y_pred, **options)``, so
``assay.evaluate`` gives its bootstrap intervals (the function re-run on each resample)
and ``assay.compare`` its paired tests. ``y_true`` is built from each instance's
references by :func:`assay_interop._common.target_of` (``[y]`` -> ``y``); ``y_pred`` is
the predictions, as an array when they form one (probability rows for ``log_loss`` or
``roc_auc_score[multi_class=ovr]``). Numeric predictions and targets get assay's input check:
a NaN or infinity is an :class:`~assay.errors.InvalidParameterError` naming the metric and the
position, before scikit-learn sees them.
"""

from __future__ import annotations

import inspect
import numbers
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from assay.errors import EvaluationError, InvalidParameterError, UnknownNameError
from assay.metrics import GlobalMetric
from assay_interop._common import check_numeric_inputs, close_matches, require, spec, target_of

__all__ = ["SklearnMetric", "resolve", "scoring_functions"]

NAMESPACE = "sklearn"
_SCORING = re.compile(r"(_score|_error|_loss|_deviance|_corrcoef)\Z")
#: scoring functions of sklearn.metrics that do not score predictions against references
_NOT_PAIRED = {"silhouette_score": "it scores features X against cluster labels",
               "calinski_harabasz_score": "it scores features X against cluster labels",
               "davies_bouldin_score": "it scores features X against cluster labels",
               "consensus_score": "it compares two sets of biclusters"}
_LOWER_IS_BETTER = ("_error", "_loss", "_deviance")


def scoring_functions() -> dict[str, Callable[..., Any]]:
    """The public scoring functions of :mod:`sklearn.metrics` this namespace loads, by name."""
    metrics = require("sklearn.metrics")
    return {name: getattr(metrics, name) for name in sorted(metrics.__all__)
            if _SCORING.search(name) and name not in _NOT_PAIRED and inspect.isfunction(getattr(metrics, name, None))}


def _function(name: str) -> Callable[..., Any]:
    functions = scoring_functions()
    if name in functions:
        return functions[name]
    metrics = require("sklearn.metrics")
    if name in _NOT_PAIRED or name in getattr(metrics, "__all__", ()):
        why = _NOT_PAIRED.get(name, "it does not return one score of predictions against references")
        raise InvalidParameterError(
            f"sklearn.metrics.{name} cannot be an assay metric: {why}. The 'sklearn:' namespace loads the scoring "
            f"functions ({', '.join(list(functions)[:6])}, ...)." + close_matches(name, functions))
    raise UnknownNameError(f"No scikit-learn metric function named {name!r} (sklearn:{name})."
                           f"{close_matches(name, functions)}")


def _check_options(name: str, function: Callable[..., Any], options: Mapping[str, Any]) -> None:
    params = list(inspect.signature(function).parameters.values())
    accepted = [p.name for p in params[2:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    for key in options:
        if key not in accepted:
            raise InvalidParameterError(
                f"Unknown option {key!r} for {spec(NAMESPACE, name, options)}: sklearn.metrics.{name} takes "
                f"{', '.join(accepted) or 'no options'}.{close_matches(key, accepted, n=3)}")


def resolve(name: str, **options: Any) -> SklearnMetric:
    """The resolver of the ``sklearn`` namespace: ``resolve("f1_score", average="macro")``."""
    prefix = options.pop("score_prefix", "")
    metric = SklearnMetric(name, score_prefix=prefix, **options)
    metric.name = spec(NAMESPACE, name, options)
    return metric


class SklearnMetric(GlobalMetric):
    """A scikit-learn metric function as an assay global metric.

    Parameters
    ----------
    function : str
        The name of a scoring function of :mod:`sklearn.metrics` (``"balanced_accuracy_score"``);
        an unknown name is an :class:`~assay.errors.UnknownNameError` listing close matches,
        an unknown option an :class:`~assay.errors.InvalidParameterError`.
    score_prefix : str
        As for every metric.
    **options
        Keyword arguments of the function (``average="macro"``, ``labels=[0, 1, 2]`` ...).

    Notes
    -----
    The score is named after the function (``balanced_accuracy_score``); it is the main
    score. Functions whose names end in ``_error``, ``_loss`` or ``_deviance`` are lower =
    better, the others higher = better. Instance scores are not reported (a corpus-level
    function is not a mean of instance values). Errors the function raises (scikit-learn's
    parameter validation included) are re-raised as
    :class:`~assay.errors.InvalidParameterError` naming the metric as the user spelt it.

    Examples
    --------
    >>> m = SklearnMetric("balanced_accuracy_score")                  # doctest: +SKIP
    >>> m.update([0, 1, 1, 1], [[0], [1], [0], [1]]).compute_scores()["score"]  # doctest: +SKIP
    0.75
    """

    per_instance = False
    requirements = {"sklearn": "scikit-learn"}

    def __init__(self, function: str, *, score_prefix: str = "", **options: Any) -> None:
        super().__init__(score_prefix=score_prefix)
        if not isinstance(function, str):
            raise InvalidParameterError(f"SklearnMetric's 'function' must be a function name (str); got "
                                        f"{type(function).__name__} {function!r:.60}.")
        _check_options(function, _function(function), options)
        self.function = function
        self.options = dict(options)
        self.main_score = function
        self.higher_is_better = not function.endswith(_LOWER_IS_BETTER)

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> float:
        function = getattr(require("sklearn.metrics"), self.function)
        y_true = _as_array([target_of(r) for r in references])
        y_pred = _as_array(predictions)
        where = spec(NAMESPACE, self.function, self.options)
        check_numeric_inputs(y_pred, y_true, where)
        try:
            value = function(y_true, y_pred, **self.options)
        except (ValueError, TypeError) as exc:
            raise InvalidParameterError(f"{where}: scikit-learn rejected the call: {exc}") from exc
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if not isinstance(value, numbers.Real):
            shape = f" of shape {value.shape}" if hasattr(value, "shape") else ""
            raise EvaluationError(
                f"{where} returned a {type(value).__name__}{shape}, not one number; choose an option that "
                "reduces it to one score (average='macro', multioutput='uniform_average').")
        return float(value)


def _as_array(values: list[Any]) -> Any:
    """``values`` as an array when they form a regular numeric or string array, else the list."""
    try:
        arr = np.asarray(values)
    except ValueError:  # ragged rows
        return values
    return arr if arr.dtype.kind in "biufU" else values
