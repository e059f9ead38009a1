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

from typing import Any, Mapping, Sequence

import numpy as np

from assay.errors import InvalidParameterError
from assay.validation import check_array, check_finite, check_same_length, undefined_metric

__all__ = [
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


class UEMetric(_Named):
    """Scores how well uncertainty ranks (or calibrates against) quality: ``metric(uncertainty, quality) -> float``.

    Parameters
    ----------
    higher_is_better : bool
        Orientation of the score (PRR: True; AURC: False).

    Notes
    -----
    Subclasses set ``name``, ``higher_is_better``, ``requires_binary`` (quality must be
    0 / 1, e.g. ROC-AUC) and implement :meth:`_score` on validated, non-empty, finite
    1-D arrays. Empty input gives NaN with an :class:`~assay.errors.UndefinedMetricWarning`;
    NaN, infinite, non-numeric or mis-shaped input is an error naming the first bad position.
    """

    higher_is_better: bool = True
    requires_binary: bool = False

    def __init__(self, higher_is_better: bool | None = None) -> None:
        if higher_is_better is not None:
            self.higher_is_better = bool(higher_is_better)

    def __call__(self, uncertainty: Any, quality: Any) -> float:
        u, q = check_ue_inputs(uncertainty, quality, name=self.name or type(self).__name__,
                               binary=self.requires_binary)
        if u.size == 0:
            return undefined_metric(f"{self.name or type(self).__name__}: empty input; the score is NaN.")
        return float(self._score(u, q))

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        raise NotImplementedError(f"{type(self).__name__} must implement _score(u, q)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, higher_is_better={self.higher_is_better!r})"
