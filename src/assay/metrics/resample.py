"""The one resampling engine behind every confidence interval and paired test.

A :class:`Resampler` describes one bootstrap draw over ``n`` instances: the number of
resamples, the seed, and optionally clusters (``groups``: whole clusters are drawn)
and strata (``strata``: each stratum is resampled within itself, keeping its size).
Everything that is evaluated in one call (all metrics, both systems of a comparison)
is resampled from the same draw.

Additive statistics never need ``map`` again: the totals of resample ``b`` are
``sum_u c_bu * s_u`` where ``c_bu`` is how often unit ``u`` is drawn. Two paths
compute them:

- **few distinct rows** (accuracy, exact match: the statistics take a handful of
  values): the number of draws that land on each distinct row is multinomial with
  probabilities ``n_j / n``, so each resample costs one multinomial draw over the
  distinct rows; no index matrix exists. This has exactly the distribution of drawing
  ``n`` indices uniformly with replacement.
- **indices** (continuous statistics, or metrics that are not additive): resamples are
  drawn in chunks of ``b`` rows of ``n`` indices, with ``b`` chosen so that a chunk's
  arrays stay under ``max_bytes`` (256 MiB by default): memory does not grow with
  ``n_resamples``, and at ``n = 10,000,000`` one resample is processed at a time.

Draws use ``numpy.random.default_rng(seed)``; the same seed, data size, groups and
strata give the same resamples.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, overload

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics._params import check_n_resamples, check_seed

__all__ = ["Resampler", "codes", "distinct_rows"]

#: try the multinomial path when the statistics have at most this many distinct rows
MAX_DISTINCT = 256


def codes(labels: Any, n: int, what: str) -> np.ndarray:
    """Integer codes ``0..G-1`` for a sequence of hashable labels (first-seen order)."""
    if len(labels) != n:
        raise InvalidParameterError(f"'{what}' must have one label per instance ({n}); got {len(labels)}.")
    arr = np.asarray(labels)
    if arr.dtype.kind in "iub" and arr.ndim == 1:
        _, inv = np.unique(arr, return_inverse=True)
        return inv.astype(np.intp)
    mapping: dict[Any, int] = {}
    return np.array([mapping.setdefault(_hashable(x), len(mapping)) for x in labels], dtype=np.intp)


_CHUNK = 1 << 20


def _small_int_columns(rows: np.ndarray) -> list[tuple[int, float, int]] | None:
    """``(column, min, size)`` of the columns that vary, when all hold small integers; else None.

    One column at a time, in chunks (a preallocated buffer for the integrality test), so the
    scan allocates nothing of the size of the rows.
    """
    n = len(rows)
    out = []
    buf = np.empty(min(n, _CHUNK), dtype=np.float64)
    for j in range(rows.shape[1]):
        col = rows[:, j]
        lo, hi = float(col.min()), float(col.max())
        if lo == hi:
            continue
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo >= 2**20:
            return None
        for s in range(0, n, _CHUNK):
            part = col[s:s + _CHUNK]
            floor = np.floor(part, out=buf[:len(part)])
            if not np.array_equal(floor, part):
                return None
        out.append((j, lo, int(hi - lo) + 1))
    return out


def _distinct_small_ints(rows: np.ndarray, cols: list[tuple[int, float, int]], limit: int
                         ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`distinct_rows` for small-integer columns, one chunk of keys at a time (memory: one chunk)."""
    n = len(rows)
    radix = 1
    for _, _, size in cols:
        radix *= size
    if radix > 4 * n + 1024 or radix > 2**40:
        return None
    counts = np.zeros(radix, dtype=np.int64)
    first = np.full(radix, -1, dtype=np.int64)
    for s in range(0, n, _CHUNK):
        part = rows[s:s + _CHUNK]
        keys = np.zeros(len(part), dtype=np.int64)
        r = 1
        for j, lo, size in cols:
            keys += (part[:, j] - lo).astype(np.int64) * r
            r *= size
        counts += np.bincount(keys, minlength=radix)
        new, at = np.unique(keys, return_index=True)
        unseen = first[new] < 0
        first[new[unseen]] = s + at[unseen]
    present = np.flatnonzero(counts)
    if len(present) > limit:
        return None
    return rows[first[present]], counts[present]


def distinct_rows(rows: np.ndarray, limit: int = MAX_DISTINCT) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct rows of ``rows`` and how often each occurs, or None if more than ``limit``.

    Linear time for small-integer columns (counts through one mixed-radix key and
    ``bincount``, one chunk of 2**20 rows at a time, so the temporaries stay small at 10
    million rows); other columns are coded with a 1-D ``unique`` first. Rows come in the
    order of their keys, each represented by its first occurrence.
    """
    n = len(rows)
    if n == 0:
        return rows[:0], np.zeros(0, dtype=np.int64)
    small = _small_int_columns(rows) if rows.ndim == 2 else None
    if small is not None:
        out = _distinct_small_ints(rows, small, limit)
        if out is not None or len(small) == 0:
            return out
    keys = np.zeros(n, dtype=np.int64)
    radix = 1
    for j in np.flatnonzero(np.any(rows != rows[0], axis=0)):
        col = rows[:, j]
        lo, hi = col.min(), col.max()
        if hi - lo < 2**20 and np.all(col == np.floor(col)):
            code, size = (col - lo).astype(np.int64), int(hi - lo) + 1
        else:
            vals, code = np.unique(col, return_inverse=True)
            size = len(vals)
            if size > limit:
                return None
        if radix * size > 2**62 // max(size, 1):
            keys = np.unique(keys, return_inverse=True)[1].astype(np.int64)
            radix = int(keys.max()) + 1
            if radix > limit:
                return None
        keys += code.reshape(-1) * radix
        radix *= size
    if radix <= 4 * n + 1024:
        counts = np.bincount(keys, minlength=radix)
        present = np.flatnonzero(counts)
        counts = counts[present]
    else:
        present, counts = np.unique(keys, return_counts=True)
    if len(present) > limit:
        return None
    where = np.empty(radix if radix <= 4 * n + 1024 else 0, dtype=np.intp)
    if len(where):
        where[keys] = np.arange(n)
        first = where[present]
    else:
        first = np.searchsorted(np.sort(keys), present)
        first = np.argsort(keys, kind="stable")[first]
    return rows[first], counts


def _hashable(x: Any) -> Any:
    return tuple(x) if isinstance(x, (list, np.ndarray)) else x


class Resampler:
    """One bootstrap draw over ``n`` instances.

    Parameters
    ----------
    n : int
        Number of instances.
    n_resamples : int
        Number of bootstrap resamples ``B``.
    seed : int
        Seed of ``numpy.random.default_rng``: an int ``>= 0``.
    groups : sequence, optional
        Cluster label per instance: clusters are drawn with replacement, whole.
    strata : sequence, optional
        Stratum label per instance: each stratum is resampled separately, keeping its
        size (with ``groups``, a cluster must lie in one stratum).
    max_bytes : int
        Memory bound for one chunk of the index path.
    """

    def __init__(self, n: int, *, n_resamples: int, seed: int, groups: Any = None, strata: Any = None,
                 max_bytes: int = 256 * 2**20) -> None:
        self.n_resamples = check_n_resamples(n_resamples, minimum=1, owner="Resampler")
        self.seed = check_seed(seed, allow_none=False, owner="Resampler")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise InvalidParameterError(f"The 'n' parameter of Resampler must be a non-negative int; got {n!r}.")
        self.n = int(n)
        self.max_bytes = max_bytes
        self.groups = None if groups is None else codes(groups, n, "groups")
        st = None if strata is None else codes(strata, n, "strata")
        if self.groups is not None:
            self.n_units = int(self.groups.max()) + 1 if n else 0
            order = np.argsort(self.groups, kind="stable")
            self._members = order
            self._offsets = np.concatenate([[0], np.cumsum(np.bincount(self.groups, minlength=self.n_units))])
            if st is not None:
                unit_st = np.full(self.n_units, -1)
                unit_st[self.groups] = st
                if np.any(unit_st[self.groups] != st):
                    raise InvalidParameterError("Every cluster in 'groups' must lie within one stratum of 'strata'.")
                st = unit_st
        else:
            self.n_units = n
        self.unit_strata = st
        if st is None:
            self._strata_units = [np.arange(self.n_units)]
        else:
            order = np.argsort(st, kind="stable")
            bounds = np.cumsum(np.bincount(st))
            self._strata_units = np.split(order, bounds[:-1])

    # ------------------------------------------------------------------ units
    def unit_stats(self, stats: np.ndarray) -> np.ndarray:
        """Statistics per unit: summed over each cluster's members (or the rows themselves)."""
        if self.groups is None:
            return stats
        out = np.zeros((self.n_units, stats.shape[1]))
        np.add.at(out, self.groups, stats)
        return out

    def unit_instances(self, units: np.ndarray) -> np.ndarray:
        """Instance indices of the given units, concatenated in the order given."""
        if self.groups is None:
            return units
        starts, ends = self._offsets[units], self._offsets[units + 1]
        lengths = ends - starts
        if len(units) == 0:
            return np.zeros(0, dtype=np.intp)
        pos = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        return self._members[np.arange(lengths.sum()) + pos]

    # ------------------------------------------------------------------ the draw
    @overload
    def run(self, stats: np.ndarray, on_indices: Callable[[int, np.ndarray], None] | None = ...) -> np.ndarray: ...
    @overload
    def run(self, stats: None = ..., on_indices: Callable[[int, np.ndarray], None] | None = ...) -> None: ...
    @overload
    def run(self, stats: np.ndarray | None = ...,
            on_indices: Callable[[int, np.ndarray], None] | None = ...) -> np.ndarray | None: ...
    def run(self, stats: np.ndarray | None = None,
            on_indices: Callable[[int, np.ndarray], None] | None = None) -> np.ndarray | None:
        """Resample totals of additive ``stats`` (``(n, K)``) and/or visit each resample's indices.

        Returns the ``(B, K)`` array of resampled totals (or ``None`` without ``stats``).
        ``on_indices(b, index)`` is called with the instance indices of resample ``b``
        (clusters expanded) when given; the totals then come from the same indices.
        """
        rng = np.random.default_rng(self.seed)
        su = None if stats is None else self.unit_stats(np.asarray(stats, dtype=float))
        if on_indices is None and su is not None:
            few = self._distinct(su)
            if few is not None:
                return self._multinomial(rng, su, few)
        return self._indices(rng, su, on_indices)

    def _distinct(self, su: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]] | None:
        """Per stratum: (distinct rows, their counts), when few enough; else None."""
        out = []
        for units in self._strata_units:
            rows = su[units] if len(self._strata_units) > 1 else su
            probe = rows[:: max(1, len(rows) // 2048)]
            if distinct_rows(probe) is None:
                return None
            found = distinct_rows(rows)
            if found is None:
                return None
            out.append(found)
        return out

    def _multinomial(self, rng: np.random.Generator, su: np.ndarray,
                     few: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        totals = np.zeros((self.n_resamples, su.shape[1]))
        for uniq, counts in few:
            m = int(counts.sum())
            draws = rng.multinomial(m, counts / m, size=self.n_resamples)
            totals += draws @ uniq
        return totals

    def _chunk(self, k: int) -> int:
        per_resample = self.n_units * (8 + 8 * max(1, min(k, 2))) + 1
        return int(max(1, min(self.n_resamples, self.max_bytes // per_resample)))

    def _indices(self, rng: np.random.Generator, su: np.ndarray | None,
                 on_indices: Callable[[int, np.ndarray], None] | None) -> np.ndarray | None:
        B = self.n_resamples
        k = 0 if su is None else su.shape[1]
        totals = np.empty((B, k))  # (B, 0) without stats, and None is returned
        varying: list[int] = []
        columns: list[np.ndarray] = []
        if su is not None and len(su):
            # a constant column needs no draw: every resample has n_units units, so its total is n_units * c
            const = np.all(su == su[0], axis=0)
            totals[:, const] = self.n_units * su[0, const]
            varying = np.flatnonzero(~const).tolist()
            columns = [np.ascontiguousarray(su[:, j]) for j in varying] if len(varying) <= 2 else []
        elif su is not None:
            totals[:] = 0.0
        chunk = self._chunk(len(varying))
        dtype = np.intp  # what take() and fancy indexing use: no conversion copy
        for start in range(0, B, chunk):
            b = min(chunk, B - start)
            parts = []
            for units in self._strata_units:
                m = len(units)
                draw = rng.integers(0, m, size=(b, m), dtype=dtype) if m else np.zeros((b, 0), dtype=dtype)
                parts.append(units[draw] if len(self._strata_units) > 1 else draw)
            idx = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
            if su is not None:
                if len(varying) <= 2:
                    for j, col in zip(varying, columns):
                        totals[start:start + b, j] = np.take(col, idx).sum(axis=1)
                elif len(varying):
                    counts = np.stack([np.bincount(row, minlength=self.n_units) for row in idx]).astype(float)
                    totals[start:start + b][:, varying] = counts @ su[:, varying]
            if on_indices is not None:
                for r in range(b):
                    on_indices(start + r, self.unit_instances(idx[r]) if self.groups is not None else idx[r])
        return None if su is None else totals

    # ------------------------------------------------------------------ jackknife (BCa)
    def jackknife_blocks(self, max_blocks: int = 2000) -> tuple[list[np.ndarray], str | None]:
        """Blocks of units left out one at a time: every unit alone when there are at most
        ``max_blocks`` units, else a seeded random partition into ``max_blocks`` blocks
        (a grouped jackknife, noted in the returned message)."""
        if self.n_units <= max_blocks:
            return [np.array([u]) for u in range(self.n_units)], None
        perm = np.random.default_rng(self.seed).permutation(self.n_units)
        note = f"BCa acceleration from a grouped jackknife ({max_blocks} random blocks of units)"
        return np.array_split(perm, max_blocks), note

    def instances_without(self, block: np.ndarray) -> np.ndarray:
        keep = np.ones(self.n_units, dtype=bool)
        keep[block] = False
        units = np.flatnonzero(keep)
        return self.unit_instances(units) if self.groups is not None else units
