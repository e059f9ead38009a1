"""Paired significance: ``assay.compare(a, b, metric=...)``.

Two systems scored on the same instances are compared on the difference
``delta = score(b) - score(a)`` (``a`` is the baseline):

paired bootstrap (the test that decides)
    Both systems are resampled with the **same** weights (one draw of the shared
    :class:`~assay.metrics.resample.Resampler`, the Poisson bootstrap of ``evaluate``; an
    additive metric's two statistics blocks are resampled as one, so the draw is shared);
    ``delta_b`` is the difference on resample ``b``. Interval: percentile of ``delta_b``
    (:func:`~assay.metrics.intervals.percentile_interval`). The verdict names a better
    system when that interval excludes 0; ``p_value`` (``p_value_percentile``) is the
    p-value that inverts it (:func:`~assay.metrics.intervals.percentile_p_value`: about
    twice the share of ``delta_b`` beyond 0, interpolated by the interval's own quantile
    rule), so the interval excludes 0 at ``confidence_level`` exactly when
    ``p_value < 1 - confidence_level``.
second tests (reported, never deciding)
    Shifted bootstrap, ``p_value_bootstrap``: two-sided p-value of ``delta = 0`` by the
    shift method (Berg-Kirkpatrick et al. 2012), with the +1 correction:
    ``p = (1 + #{|delta_b - delta| >= |delta|}) / (B + 1)``. Approximate randomization,
    ``p_value_randomization``: under the null hypothesis the two systems' outputs are
    exchangeable per instance (per cluster with ``groups``): each round swaps every pair
    with probability 1/2 and recomputes the difference ``delta_r``;
    ``p = (1 + #{|delta_r| >= |delta|}) / (R + 1)`` (Noreen 1989; Riezler & Maxwell 2005).
    Both test other hypotheses than the interval does and may fall on the other side of
    ``1 - confidence_level`` than the verdict.

Additive metrics need no ``map`` again: a swap moves ``s_b - s_a`` from one total to the
other, and with few distinct difference rows the number of swaps per row is binomial.
"""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import attrs
import numpy as np

from assay.errors import InvalidParameterError
from assay.jsonio import to_jsonable
from assay.metrics._params import check_resampling, check_seed, new_seed
from assay.metrics.base import Metric, take
from assay.metrics.catalog import resolve_metric
from assay.metrics.intervals import percentile_interval, percentile_p_value
from assay.metrics.resample import MAX_DISTINCT, Resampler, check_cost, drop_empty, empty_note
from assay.provenance import check_signatures

__all__ = ["Comparison", "compare", "format_p_value"]


@attrs.frozen
class Comparison:
    """The outcome of :func:`compare` (``difference = score_b - score_a``).

    One test decides: the paired percentile bootstrap. :attr:`verdict` names the better
    system only when the interval ``[ci_low, ci_high]`` excludes 0 at ``confidence_level``
    (:attr:`significant`, :attr:`better`); otherwise it says there is no significant
    difference. :attr:`p_value` is that test's p-value (``p_value_percentile``, the
    inversion of the interval), so ``significant`` is exactly
    ``p_value < 1 - confidence_level``; the verdict quotes both. ``p_value_bootstrap``
    (shifted bootstrap) and ``p_value_randomization`` (approximate randomization) are
    second tests, reported beside it and labelled so. ``str(comparison)`` (what
    ``assay compare`` prints) ends with the verdict.
    """

    metric: str
    score_name: str
    n: int
    score_a: float
    score_b: float
    difference: float
    ci_low: float
    ci_high: float
    confidence_level: float
    #: the p-value of ``b - a = 0`` that inverts the percentile interval (the verdict's test; see :attr:`p_value`)
    p_value_percentile: float
    #: second test: the shifted paired bootstrap
    p_value_bootstrap: float
    #: second test: approximate randomization
    p_value_randomization: float
    n_resamples: int
    seed: int
    higher_is_better: bool
    notes: tuple[str, ...] = ()
    #: the provenance signatures of ``a`` and ``b`` (:mod:`assay.provenance`); "" when a side has none
    signature_a: str = ""
    signature_b: str = ""

    @property
    def p_value(self) -> float:
        """The p-value of the test that decides the verdict (``p_value_percentile``).

        It inverts the paired percentile-bootstrap interval: the interval at level ``c``
        excludes 0 exactly when ``p_value < 1 - c`` (so :attr:`significant` is
        ``p_value < 1 - confidence_level``). NaN when the interval is NaN.
        """
        return self.p_value_percentile

    @property
    def significant(self) -> bool:
        """Whether the paired-bootstrap interval of ``b - a`` excludes 0 (at ``confidence_level``)."""
        return bool(math.isfinite(self.ci_low) and math.isfinite(self.ci_high)
                    and (self.ci_low > 0 or self.ci_high < 0))

    @property
    def better(self) -> str | None:
        """``"a"`` or ``"b"`` when the difference is significant (:attr:`significant`), else ``None``."""
        if not self.significant:
            return None
        return "b" if (self.ci_low > 0) == self.higher_is_better else "a"

    @property
    def verdict(self) -> str:
        """One sentence: which system is better, only when the interval of ``b - a`` excludes 0.

        Otherwise "no significant difference" (or "undetermined" when the interval is NaN).
        It quotes the interval and its p-value (:attr:`p_value`) against
        ``alpha = 1 - confidence_level``, printed with as many digits as it takes for the
        printed numbers to compare as the exact ones do (``p = 0.04998 < 0.05``, never
        ``p = 0.050 < 0.05``).
        """
        level = f"{self.confidence_level:.0%}" if round(self.confidence_level * 100, 6).is_integer() \
            else f"{self.confidence_level:.2%}"
        interval = f"the {level} paired-bootstrap interval of b - a, [{self.ci_low:+.4g}, {self.ci_high:+.4g}]"
        if not (math.isfinite(self.ci_low) and math.isfinite(self.ci_high)):
            return f"undetermined on {self.score_name}: the interval of b - a is undefined (NaN), so is its p-value"
        p, alpha = format_p_value(self.p_value, 1.0 - self.confidence_level)
        if self.better is None:
            return (f"no significant difference on {self.score_name} at the {level} level ({interval}, includes 0; "
                    f"p = {p} >= {alpha})")
        side = ""
        if self.p_value == 0:  # 0 is outside every interval: say why a p-value is exactly 0
            side = f"every resampled difference is {'above' if self.ci_low > 0 else 'below'} 0, "
        return f"{self.better} is better on {self.score_name} ({interval}, excludes 0; {side}p = {p} < {alpha})"

    def summary(self) -> str:
        """The text ``assay compare`` prints (same as ``str(comparison)``)."""
        return str(self)

    def to_dict(self) -> dict[str, Any]:
        d = attrs.asdict(self)
        d["notes"] = list(self.notes)
        d["p_value"] = self.p_value
        d["significant"] = self.significant
        d["better"] = self.better
        d["verdict"] = self.verdict
        return d

    def __str__(self) -> str:
        lines = [
            f"{self.score_name} ({self.metric}), {self.n} paired instances",
            f"  a: {self.score_a:.4f}   b: {self.score_b:.4f}   b - a: {self.difference:+.4f} "
            f"[{self.ci_low:+.4f}, {self.ci_high:+.4f}] ({self.confidence_level:.0%} paired percentile bootstrap)",
            f"  p-value: {format_p_value(self.p_value, 1.0 - self.confidence_level)[0]} (inverts that interval: "
            "the test that decides)",
            f"  second tests, not deciding: p = {self.p_value_randomization:.4g} (approximate randomization), "
            f"{self.p_value_bootstrap:.4g} (shifted bootstrap); {self.n_resamples} rounds, seed {self.seed}",
            f"  {self.verdict}",
        ]
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  signature {side}: {sig}" for side, sig in (("a", self.signature_a), ("b", self.signature_b))
                  if sig]
        return "\n".join(lines)


def format_p_value(p: float, alpha: float) -> tuple[str, str]:
    """``p`` and ``alpha`` as text, with the fewest significant digits (3 at least) that keep ``p < alpha``.

    The printed numbers compare as the exact ones do: ``p = 0.04999`` against ``alpha = 0.05``
    prints ``0.04999`` and ``0.05``, never ``0.05`` and ``0.05`` beside "excludes 0".
    """
    below = p < alpha
    for digits in range(3, 17):
        ps, alphas = f"{p:.{digits}g}", f"{alpha:.{digits}g}"
        if (float(ps) < float(alphas)) == below:
            return ps, alphas
    return f"{p:.17g}", f"{alpha:.17g}"  # 17 significant digits give the floats back exactly


def _intermediates(res: Any, metric: Any, which: str) -> tuple[Metric, Any]:
    """The metric and its intermediates for results ``res`` (stored, or re-mapped)."""
    records = getattr(res, "records", {}) or {}
    if isinstance(metric, str) and metric in records:
        stored: tuple[Metric, Any] = records[metric]
        return stored
    if metric is None:
        names = list(getattr(res, "info", {}).get("metrics", []))
        if len(names) != 1:
            raise InvalidParameterError(
                f"'metric' must name the metric to compare; results {which} hold {names or 'no metrics'}."
            )
        metric = names[0]
        if metric in records:
            stored = records[metric]
            return stored
    m = resolve_metric(metric)[0] if isinstance(metric, str) else metric.clone()
    if not isinstance(m, Metric):
        raise InvalidParameterError(f"'metric' must be a registered name or a Metric; got {type(metric).__name__}.")
    preds = res.predictions if hasattr(res, "predictions") else None
    if preds is None:
        raise InvalidParameterError(f"results {which} carry no predictions to score with {metric!r}.")
    return m, m.map_all(preds, res.references, res.task_data)


def compare(a: Any, b: Any, metric: Any = None, *, n_resamples: int = 1000, confidence_level: float = 0.95,
            seed: int | None = 0, score: str | None = None, groups: Any = None,
            allow_signature_mismatch: bool = False) -> Comparison:
    """Paired bootstrap and approximate randomization test of ``score(b) - score(a)``.

    Parameters
    ----------
    a, b : EvaluationResults
        Results of :func:`assay.evaluate` (or :func:`assay.metrics.api.load_results`) on the
        same instances, in the same order.
    metric : str or Metric, optional
        The metric to compare (a name used in both evaluations, or any registered name or
        Metric, then computed from the stored predictions). Optional when the results hold
        one metric.
    n_resamples : int
        Bootstrap resamples and randomization rounds.
    seed : int or None
        Seed, an int ``>= 0`` (``None``: a fresh one); recorded in the result.
    score : str, optional
        Which score of the metric (default: its main score).
    groups : sequence, optional
        Cluster label per instance (clusters are resampled and swapped whole).
    allow_signature_mismatch : bool
        By default results whose provenance signatures (``info["signature"]``, see
        :mod:`assay.provenance`) differ in a way that changes the numbers (a metric's
        options or convention, the resampling settings, the seed) raise
        :class:`~assay.errors.SignatureMismatchError` listing the differences; ``True``
        compares them anyway, with the differences in ``notes``. Version differences are
        only noted.
    """
    n_resamples = check_cost(check_resampling(n_resamples, confidence_level, owner="assay.compare"),
                             owner="assay.compare")
    seed = check_seed(seed, owner="assay.compare")
    if n_resamples < 1:
        raise InvalidParameterError("'n_resamples' must be at least 1 for a comparison.")
    if len(a) != len(b):
        raise InvalidParameterError(f"Results to compare must cover the same instances; got {len(a)} and {len(b)}.")
    ra, rb = getattr(a, "references", None), getattr(b, "references", None)
    if ra is not None and rb is not None and to_key(ra) != to_key(rb):
        raise InvalidParameterError("Results to compare have different references: they are not paired.")
    seed = new_seed() if seed is None else seed
    # provenance (issue 16): refuse results computed differently, unless allowed
    sig_a, sig_b = getattr(a, "info", {}).get("signature"), getattr(b, "info", {}).get("signature")
    sig_notes = check_signatures(sig_a, sig_b, allow=bool(allow_signature_mismatch))
    ma, ia = _intermediates(a, metric, "a")
    mb, ib = _intermediates(b, metric, "b")
    if groups is None:
        groups = getattr(a, "info", {}).get("groups")
    name = score or ma.main_score
    n = len(a)
    notes: list[str] = list(sig_notes)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        sa, sb = ma.scores_of(ia)[name], mb.scores_of(ib)[name]
        delta = sb - sa
        rs = Resampler(n, n_resamples=n_resamples, seed=seed, groups=groups, owner="assay.compare")
        boot, dropped = _bootstrap_deltas(rs, ma, ia, ib, name)
        if dropped:
            notes.append(f"bootstrap: {empty_note(dropped, n_resamples)}")
        perm = _randomization_deltas(rs, ma, ia, ib, name, np.random.default_rng([seed, 1]))
    lo, hi, why = percentile_interval(boot, confidence_level)
    if why:
        notes.append(f"interval: {why}")
    p_pct = percentile_p_value(boot)  # inverts [lo, hi]: lo > 0 or hi < 0 <=> p_pct < 1 - confidence_level
    if not math.isfinite(delta) or not np.all(np.isfinite(boot)) or boot.size == 0:
        p_boot = math.nan
        notes.append("shifted-bootstrap p-value undefined: the score is NaN on the data or on some resamples, "
                     "or no resample drew an instance")
    else:
        p_boot = (1 + int(np.count_nonzero(np.abs(boot - delta) >= abs(delta)))) / (len(boot) + 1)
    if not math.isfinite(delta) or not np.all(np.isfinite(perm)):
        p_perm = math.nan
        notes.append("randomization p-value undefined: the score is NaN on the data or on some rounds")
    else:
        p_perm = (1 + int(np.count_nonzero(np.abs(perm) >= abs(delta) - 1e-12 * max(1.0, abs(delta))))) \
            / (n_resamples + 1)
    return Comparison(metric=ma.name or type(ma).__name__, score_name=(ma.score_prefix or "") + name, n=n,
                      score_a=sa, score_b=sb, difference=delta, ci_low=lo, ci_high=hi,
                      confidence_level=confidence_level, p_value_percentile=p_pct, p_value_bootstrap=p_boot,
                      p_value_randomization=p_perm,
                      n_resamples=n_resamples, seed=seed, higher_is_better=bool(ma.higher_is_better),
                      notes=tuple(notes), signature_a=sig_a or "", signature_b=sig_b or "")


def to_key(x: Any) -> str:
    return json.dumps(to_jsonable(x), sort_keys=True, default=repr)


def _bootstrap_deltas(rs: Resampler, m: Metric, ia: Any, ib: Any, name: str) -> tuple[np.ndarray, int]:
    """``delta_b`` on every non-empty replicate (both systems on the same weights), and the empty ones left out."""
    B = rs.n_resamples
    if m.additive:
        A, Bs = np.asarray(ia, dtype=float), np.asarray(ib, dtype=float)
        k = A.shape[1]
        totals, size = rs.sums(np.concatenate([A, Bs], axis=1))  # one column group: one shared draw
        delta = m.reduce_totals_many(totals[:, k:])[name] - m.reduce_totals_many(totals[:, :k])[name]
        kept, dropped = drop_empty({name: np.asarray(delta, dtype=float)}, size[:, 0])
        return kept[name], dropped
    out = np.empty(B)
    size = np.zeros(B)

    def visit(b: int, index: np.ndarray) -> None:
        size[b] = len(index)
        if len(index):
            out[b] = float(m.reduce(take(ib, index))[name]) - float(m.reduce(take(ia, index))[name])

    rs.run(None, visit)
    kept, dropped = drop_empty({name: out}, size)
    return kept[name], dropped


def _randomization_deltas(rs: Resampler, m: Metric, ia: Any, ib: Any, name: str,
                          rng: np.random.Generator) -> np.ndarray:
    R = rs.n_resamples
    if m.additive:
        A, Bs = rs.unit_stats(np.asarray(ia, dtype=float)), rs.unit_stats(np.asarray(ib, dtype=float))
        D = Bs - A
        ta, tb = A.sum(axis=0), Bs.sum(axis=0)
        nz = np.any(D != 0, axis=1)
        uniq, counts = np.unique(D[nz], axis=0, return_counts=True) if nz.any() else (D[:0], np.zeros(0, int))
        if len(uniq) <= MAX_DISTINCT:
            if len(counts):
                moved = rng.binomial(counts, 0.5, size=(R, len(counts))) @ uniq
            else:
                moved = np.zeros((R, D.shape[1]))
        else:
            moved = np.empty((R, D.shape[1]))
            chunk = max(1, int(2**27 // max(1, len(D))))
            for s in range(0, R, chunk):
                e = min(R, s + chunk)
                moved[s:e] = (rng.random((e - s, len(D))) < 0.5).astype(float) @ D
        new_a, new_b = ta + moved, tb - moved
        diff: np.ndarray = m.reduce_totals_many(new_b)[name] - m.reduce_totals_many(new_a)[name]
        return diff
    out = np.empty(R)
    for r in range(R):
        swap_units = rng.random(rs.n_units) < 0.5
        swap = swap_units[rs.groups] if rs.groups is not None else swap_units
        xa, xb = _swap(ia, ib, swap)
        out[r] = float(m.reduce(xb)[name]) - float(m.reduce(xa)[name])
    return out


def _swap(ia: Any, ib: Any, swap: np.ndarray) -> tuple[Any, Any]:
    if isinstance(ia, np.ndarray) and isinstance(ib, np.ndarray):
        mask = swap.reshape((-1,) + (1,) * (ia.ndim - 1))
        return np.where(mask, ib, ia), np.where(mask, ia, ib)
    xa = [y if s else x for x, y, s in zip(ia, ib, swap.tolist())]
    xb = [x if s else y for x, y, s in zip(ia, ib, swap.tolist())]
    return xa, xb
