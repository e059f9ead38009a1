"""The building blocks of uncertainty estimation: estimators, statistics, generation and UE metrics.

Orientation contract (DESIGN.md): an :class:`Estimator` returns *uncertainty* (higher =
more uncertain); a :class:`GenerationMetric` returns *quality* (higher = better; binary
correctness is 1 / 0); a :class:`UEMetric` is called as ``ue_metric(uncertainty, quality)``
and returns one float. Conversions (confidence = -uncertainty, risk = 1 - quality) happen
inside the metric, never at the call site.

Statistics are named columns: ``stats["log_probs"]`` holds one value per example (a list
of arrays for ragged values such as token log-probabilities, or an array whose first axis
is the example). A :class:`StatCalculator` turns the columns it ``dependencies`` into the
columns it produces (``stats``); the :class:`~assay.uncertainty.UEManager` orders
calculators as a dependency graph and runs each once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics.base import Metric
from assay.validation import check_array, check_finite, check_same_length, undefined_metric

__all__ = [
    "EXAMPLE_POSITIONS",
    "LEVELS",
    "Estimator",
    "GenerationMetric",
    "StatCalculator",
    "UEMetric",
    "check_level",
    "check_ue_inputs",
    "nan_with_warning",
]

#: the levels an estimation or a generation metric lives at
LEVELS: tuple[str, ...] = ("sequence", "token", "claim")

#: the statistic a model run gives every batch besides the data's columns: each example's position in the
#: run (0-based ints), so a model backend's calculators seed or name an example the same way whichever batch
#: computes it (a run resumed from its cache skips the examples done)
EXAMPLE_POSITIONS = "example_positions"


def check_level(level: str, *, owner: str = "level") -> str:
    """Return ``level`` if it is one of :data:`LEVELS`, else raise naming ``owner``."""
    if level not in LEVELS:
        raise InvalidParameterError(
            f"The 'level' of {owner} must be one of {', '.join(map(repr, LEVELS))}; got {level!r}."
        )
    return level


class _Named:
    name: str = ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, level={getattr(self, 'level', None)!r})"


class _Leveled(_Named):
    """A callable on statistics that lives at one level and reads declared statistics."""

    level: str = "sequence"
    dependencies: tuple[str, ...] = ()
    _role = "object"

    def __init__(self, level: str | None = None, dependencies: Sequence[str] | None = None) -> None:
        if level is not None:
            self.level = level
        if dependencies is not None:
            self.dependencies = tuple(dependencies)
        check_level(self.level, owner=f"{self._role} {self.name or type(self).__name__!r}")

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray | list[np.ndarray]:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(stats)")


class Estimator(_Leveled):
    """An uncertainty estimator: statistics in, one uncertainty per example (or per token / claim) out.

    Parameters
    ----------
    level : {"sequence", "token", "claim"}
        ``"sequence"``: ``__call__`` returns a 1-D array with one value per example.
        ``"token"`` / ``"claim"``: a list with one 1-D array per example, as long as that
        example's tokens / claims.
    dependencies : sequence of str
        The statistics (columns) the estimator reads.

    Notes
    -----
    Subclasses set ``name`` (the registered name) and implement :meth:`__call__`.
    Higher output = more uncertain.
    """

    _role = "estimator"


class StatCalculator(_Named):
    """Computes named statistics from other statistics, once for all estimators.

    Parameters
    ----------
    stats : sequence of str
        The statistics this calculator produces (the keys of the dict it returns).
    dependencies : sequence of str
        The statistics it needs.
    """

    stats: tuple[str, ...] = ()
    dependencies: tuple[str, ...] = ()

    def __init__(self, stats: Sequence[str] | None = None, dependencies: Sequence[str] | None = None) -> None:
        if stats is not None:
            self.stats = tuple(stats)
        if dependencies is not None:
            self.dependencies = tuple(dependencies)
        if not self.stats:
            raise InvalidParameterError(
                f"StatCalculator {self.name or type(self).__name__!r} must produce at least one statistic "
                f"('stats'); got {self.stats!r}."
            )

    def __call__(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(stats)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(stats={self.stats!r}, dependencies={self.dependencies!r})"


class GenerationMetric(_Leveled):
    """Quality of the generated output, one value per example (or per token / claim); higher = better.

    Parameters
    ----------
    level : {"sequence", "token", "claim"}
    dependencies : sequence of str
        The statistics it reads (stored labels, answers and references ...).
    """

    _role = "generation metric"


def check_ue_inputs(
    uncertainty: Any, quality: Any, *, name: str = "ue_metric", binary: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Validate the two inputs of a UE metric; return them as 1-D float arrays.

    Raises :class:`~assay.errors.InvalidParameterError` (from :mod:`assay.validation`)
    for a wrong shape or dtype, a length mismatch, NaN or infinite values, naming the
    first (the manager drops NaN pairs before calling, see its NaN policy), and, with
    ``binary=True``, quality values other than 0 and 1.
    """
    u = check_array(uncertainty, "uncertainty", owner=name, ndim=1, shape="(N,) (one value per example)",
                    finite=False)
    q = check_array(quality, "quality", owner=name, ndim=1, shape="(N,) (one value per example)", finite=False)
    check_same_length(name, uncertainty=u, quality=q)
    for label, arr in (("uncertainty", u), ("quality", q)):
        try:
            check_finite(arr, label, owner=name)
        except InvalidParameterError as exc:
            raise InvalidParameterError(
                f"{exc} Drop those examples first (UEManager does, see its nan_policy)."
            ) from None
    if binary and q.size and not np.all((q == 0) | (q == 1)):
        first = int(np.flatnonzero((q != 0) & (q != 1))[0])
        raise InvalidParameterError(
            f"{name}: `quality[{first}]` is {float(q[first])!r}; expected binary quality (1 = correct, 0 = failure)."
        )
    return u, q


#: the former name of :func:`assay.validation.undefined_metric` (NaN with an ``UndefinedMetricWarning``)
nan_with_warning = undefined_metric


class UEMetric(Metric):
    """Scores how well uncertainty ranks (or calibrates against) quality; a :class:`~assay.metrics.Metric`.

    The call ``ue_metric(uncertainty, quality) -> float`` scores two arrays with one value
    per example. A UE metric is also a map/reduce metric over **rows** ``(u_i, q_i)``:
    :meth:`map_batch` validates a batch and maps each example to its row (an ``(n, 2)``
    float array; the uncertainty is the "prediction", the quality the "reference"), and
    :meth:`reduce` scores any collection of rows. The rows are *gathered* (not additive):
    shards concatenate them in order and a bootstrap resample re-runs :meth:`reduce` on
    the rows at the resampled indices. So everything a metric has, a UE metric has:

    - the call: ``prr(u, q)``;
    - streaming: ``m.update(u_batch, q_batch)`` ... ``m.compute()`` (the main score, a float)
      or ``m.compute_scores()`` (named scores, ``score``, ``score_name``); ``m.reset()``;
    - sharding: ``m_1.merge(m_2, ...)`` equals one pass over the concatenated batches;
    - intervals and paired comparison: ``assay.evaluate(u, q, metrics=[m], n_resamples=...)``
      and ``assay.compare(results_a, results_b, metric=m.name)``, on shared resample indices
      (the :class:`~assay.uncertainty.UEManager` uses exactly these).

    Subclassing :class:`~assay.metrics.Metric` (rather than wrapping UE metrics in an
    adapter metric) keeps one object per registered name: nothing duplicates the
    streaming state, the resampling or the comparison, and a loaded UE metric goes
    straight into ``assay.evaluate``.

    Parameters
    ----------
    higher_is_better : bool, optional
        Orientation of the score (PRR: True; AURC: False); default: the class's.
    score_prefix : str
        Prepended to the score names :meth:`compute` and ``assay.evaluate`` report.

    Notes
    -----
    **The protocol** (what a UE metric implements; the conformance suite relies on it):

    - ``name``: the registered name; it is also ``main_score``, the name of the score.
    - ``higher_is_better``, ``requires_binary`` (quality must be 0 / 1, e.g. ROC-AUC) and
      ``requires_unit_interval`` (uncertainty must be ``1 - P(correct)`` in [0, 1]).
    - :meth:`_score` ``(u, q) -> float`` on validated, non-empty, finite 1-D arrays; or,
      for a metric with **named extra scores**, :meth:`_scores` ``(u, q) -> {name: float}``
      returning ``main_score`` and every name listed in ``extra_scores`` (PRR returns
      ``prr`` and ``prr_normalized``). The manager stores and resamples whatever names
      the metric declares; no name is special anywhere else.
    - Orientation: ``u`` higher = more uncertain, ``q`` higher = better (risk ``1 - q``);
      the result must not depend on the order of the examples (ties grouped).

    Empty input gives NaN for every score with an :class:`~assay.errors.UndefinedMetricWarning`;
    NaN, infinite, non-numeric or mis-shaped input is an error naming the first bad position.
    Instance scores are not defined (``per_instance = False``).

    Examples
    --------
    >>> class FailureAt(UEMetric):
    ...     name = "failure_at_top"
    ...     higher_is_better = False
    ...     def _score(self, u, q):
    ...         return float(1 - q[u.argmin()])
    >>> m = FailureAt()
    >>> m([0.1, 0.9], [1, 0])
    0.0
    >>> m.update([0.1], [1]).update([0.9], [0]).compute_scores()["failure_at_top"]
    0.0
    """

    name: str = ""
    higher_is_better: bool = True
    requires_binary: bool = False
    requires_unit_interval: bool = False
    #: names of the scores :meth:`_scores` returns beside ``main_score`` (they get intervals too)
    extra_scores: tuple[str, ...] = ()
    per_instance = False
    needs_references = True

    def __new__(cls, *args: Any, **kwargs: Any) -> UEMetric:
        # subclasses' __init__ need not call ours: the per-instance score_prefix exists anyway
        obj = super().__new__(cls)
        obj.__dict__["score_prefix"] = ""
        return obj

    def __init__(self, higher_is_better: bool | None = None, *, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        if higher_is_better is not None:
            self.higher_is_better = bool(higher_is_better)

    # ---------------------------------------------------------------- the metric protocol
    @property
    def main_score(self) -> str:  # type: ignore[override]
        """The name of the score: the metric's ``name`` (its class name when unnamed)."""
        return self.name or type(self).__name__

    @property
    def score_names(self) -> tuple[str, ...]:
        """``main_score`` and the ``extra_scores``, in that order."""
        return (self.main_score, *tuple(self.extra_scores))

    @property
    def score_names_for_ci(self) -> tuple[str, ...]:
        """Every score gets an interval: ``main_score`` and the ``extra_scores``."""
        return self.score_names

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> Any:
        """The row ``[u, q]`` of one example (``prediction`` = uncertainty, ``references`` = quality)."""
        return self.map_batch([prediction], [references], None)[0]

    def map_batch(self, predictions: Any, references: Any, task_data: Any = None) -> np.ndarray:
        """Validate a batch (see :func:`check_ue_inputs`) and return its rows, an ``(n, 2)`` float array."""
        u, q = check_ue_inputs(predictions, references, name=self.main_score, binary=self.requires_binary)
        return np.column_stack([u, q]) if u.size else np.zeros((0, 2))

    def reduce(self, intermediates: Any) -> dict[str, float]:
        """Named scores of a collection of rows (NaN for each, with a warning, when there is none)."""
        rows = np.asarray(intermediates, dtype=np.float64).reshape(-1, 2)
        if rows.shape[0] == 0:
            undefined_metric(f"{self.main_score}: empty input; the score is NaN.")
            return {name: math.nan for name in self.score_names}
        u, q = rows[:, 0], rows[:, 1]
        return {k: float(v) for k, v in self._scores(u, q).items()}

    def all_scores(self, uncertainty: Any, quality: Any) -> dict[str, float]:
        """Every named score (``main_score`` and the ``extra_scores``) of validated inputs."""
        return self.reduce(self.map_batch(uncertainty, quality))

    def __call__(self, uncertainty: Any, quality: Any) -> float:
        return self.all_scores(uncertainty, quality)[self.main_score]

    # ---------------------------------------------------------------- to implement
    def _scores(self, u: np.ndarray, q: np.ndarray) -> dict[str, float]:
        """Named scores of validated, non-empty rows; by default ``{main_score: _score(u, q)}``.

        A subclass written before UE metrics were metrics, that overrides ``__call__`` and
        not ``_score``, is scored through its call.
        """
        cls = type(self)
        if cls._score is UEMetric._score and cls.__call__ is not UEMetric.__call__:
            return {self.main_score: float(self(u, q))}
        return {self.main_score: float(self._score(u, q))}

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        raise NotImplementedError(f"{type(self).__name__} must implement _score(u, q)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, higher_is_better={self.higher_is_better!r})"
