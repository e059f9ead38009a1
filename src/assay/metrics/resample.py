"""The one resampling engine: the shard-invariant Poisson bootstrap, with clusters and strata as options.

Every confidence interval and paired test of assay comes from here: :func:`assay.evaluate`,
:func:`assay.compare`, ``EvaluatorBase.sequentialEvaluate`` / ``parallelEvaluate`` with
``metrics=[...]`` (any shard count, any executor) and the UE manager's intervals. The same
data, metrics and seed give the same intervals, to the last bit, through each of them.

The scheme (:class:`Resampler`, options :class:`Resampling`)
-------------------------------------------------------------
**Poisson bootstrap** (Hanley & MacGibbon 2006; Chamandy, Muralidharan, Najmi & Naik 2012):
replicate ``b`` gives item ``i`` the weight ``w_bi ~ Poisson(1)``, independently, instead of
the multinomial counts of drawing ``n`` items with replacement. The two bootstraps have the
same asymptotics; the intervals are percentile (or BCa, Wilson) intervals of the replicate
scores. ``w_bi`` depends only on ``(seed, stream, position of i)``, so a shard generates the
weights of its own positions wherever shard boundaries fall:

- positions fall in blocks of :data:`BLOCK` items; the per-position weights of block ``j`` of
  stream ``s`` come from ``Generator(Philox(SeedSequence([seed, s, j])))``: ``R x BLOCK``
  uniforms in row-major order (replicate by replicate), each turned into a Poisson(1) draw by
  inverting its CDF (``W = #{k : u >= P(W <= k)}``; computed on the raw 64-bit words with integer
  thresholds and a lookup table, the same weights: :func:`_weights8`). The stream is 0 for an in-memory pool (and
  :func:`assay.evaluate`); a path pool's stream is the file's index, positions counting within
  the file.
- additive statistics ``s_i`` (one metric's columns at a time) need only the block's weighted
  sum ``sum_i w_bi s_i``. When the block holds at most :data:`FEW` distinct rows ``v`` (with
  counts ``c_v``) that sum is ``sum_v N_bv v`` with ``N_bv ~ Poisson(c_v)`` independent -- the
  same distribution, drawn directly: ``Generator(Philox(SeedSequence([seed, s, j, 1])))
  .poisson(c, size=(R, d))`` with the distinct rows in the order of ``numpy.lexsort(rows.T)``
  (last column first), accumulated row after row. Otherwise the per-position weights are used.
  Blocks add on a fixed aligned binary tree (:class:`PoissonReplicates`), so the totals are
  identical for any sharding.
- gathered (non-additive) metrics re-run ``reduce`` on each replicate with item ``i`` repeated
  ``w_bi`` times (the per-position weights).

**Clusters** (``groups=``): each cluster is a unit with one Poisson(1) weight, units numbered in
first-seen order and drawn as the positions above (a cluster's statistics are summed first).
**Strata** (``strata=``): the stratified bootstrap keeps each stratum's size, so within stratum
``h`` the weights are ``Multinomial(n_h; 1/n_h, ...)`` (Poisson(1) weights conditioned on their sum
being ``n_h``), drawn from ``default_rng([seed, 2])`` stratum after stratum, replicate chunk after
chunk; with clusters, each cluster must lie in one stratum.

The cost is bounded before anything is allocated (:func:`check_cost`): the replicate arrays must
fit in half the machine's memory and ``n_resamples x (n rounded up to a block)`` weights must stay
under :data:`MAX_WEIGHTS`; long resampling shows a tqdm progress bar (after two seconds).
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
from tqdm.auto import tqdm

from assay.core.tally import Tally, gathered, kept, merged_by, values_equal
from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.metrics._params import check_confidence_level, check_n_resamples, check_seed
from assay.metrics.base import take

__all__ = ["BLOCK", "DROPPED", "FEW", "MAX_DISTINCT", "MAX_WEIGHTS", "UNPOSITIONED", "PoissonReplicates",
           "Resampler", "Resampling", "additive_scores", "block_weights", "check_cost", "codes", "drop_empty",
           "empty_note", "gathered_scores",
           "poisson_weights", "shard_replicates"]

#: positions per block of weights (a constant: changing it changes every interval)
BLOCK = 4096
#: a block with at most this many distinct statistics rows draws one Poisson(count) per row
FEW = 256
#: the randomization test's binomial path: at most this many distinct difference rows
MAX_DISTINCT = 256
#: the most weights (``n_resamples`` x items, items rounded up to a block) one resampling may draw
MAX_WEIGHTS = 10**12

Node = tuple[int, int]  # (level, index): units [index * 2**level, (index + 1) * 2**level)


# ---------------------------------------------------------------------------- options and cost
def _memory_limit() -> int:
    """Half the machine's physical memory (8 GiB when the platform does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")) // 2
    except (ValueError, OSError, AttributeError):  # pragma: no cover - platforms without sysconf
        return 8 * 2**30


def check_cost(n_resamples: int, n: int = 1, width: int = 1, *, owner: str | None = None) -> int:
    """``n_resamples`` back when the resampling it implies fits; else a clear error naming it.

    The replicate arrays take ``n_resamples x 8 x (width + 2)`` bytes (``width`` statistics
    columns and scores): more than half the physical memory is refused; so are more than
    :data:`MAX_WEIGHTS` weights (``n_resamples x n``, ``n`` rounded up to :data:`BLOCK`), hours of work.
    """
    where = f" of {owner}" if owner else ""
    need = n_resamples * 8 * (max(1, width) + 2)
    limit = _memory_limit()
    if need > limit:
        raise InvalidParameterError(
            f"The 'n_resamples' parameter{where} is too large: {n_resamples} resamples need about "
            f"{need / 2**30:.3g} GiB for the replicate values, more than half this machine's memory "
            f"({limit / 2**30:.3g} GiB); use fewer (1,000 to 10,000 give stable 95% intervals).")
    weights = n_resamples * BLOCK * max(1, -(-n // BLOCK))
    if weights > MAX_WEIGHTS:
        raise InvalidParameterError(
            f"The 'n_resamples' parameter{where} is too large: {n_resamples} resamples of {n} instances draw "
            f"about {weights:.3g} weights (the limit is {MAX_WEIGHTS:.0e}, hours of work); use fewer "
            "(1,000 to 10,000 give stable 95% intervals).")
    return n_resamples


@attrs.frozen
class Resampling:
    """The options of a bootstrap: ``n_resamples`` (0: no intervals), ``confidence_level``, ``seed``."""

    n_resamples: int = 1000
    confidence_level: float = 0.95
    seed: int = 0

    @classmethod
    def checked(cls, n_resamples: Any, confidence_level: Any, seed: Any, *, owner: str) -> Resampling:
        """Validated options (through :mod:`assay.validation` and :func:`check_cost`); errors name ``owner``."""
        n = check_cost(check_n_resamples(n_resamples, owner=owner), owner=owner)
        level = check_confidence_level(confidence_level, owner=owner)
        s = check_seed(seed, allow_none=False, owner=owner)
        return cls(int(n), float(level), int(s))


def _progress(total: int, work: int, desc: str) -> Any:
    """A tqdm bar on stderr for ``total`` steps, shown after 2 s and only for long runs (``work`` weights)."""
    return tqdm(total=total, desc=desc, unit="resample" if desc.endswith("resamples") else "block",
                delay=2.0, leave=False, disable=work < 200_000_000)


# ---------------------------------------------------------------------------- per-position weights
def _poisson_one_cdf() -> np.ndarray:
    """``P(W <= k)`` for ``W ~ Poisson(1)``, ``k = 0, 1, ...`` until it reaches 1 in float64."""
    terms = [math.exp(-1.0)]
    while sum(terms) < 1.0 and len(terms) < 40:
        terms.append(terms[-1] / len(terms))
    return np.cumsum(terms)


_CDF = _poisson_one_cdf()


def _thresholds() -> np.ndarray:
    """``_CDF`` as thresholds on the raw 64-bit Philox words: ``raw >= T_k`` exactly when ``u >= P(W <= k)``.

    numpy's uniform is ``u = (raw >> 11) * 2**-53``; ``c * 2**53`` is exact in float64, so
    ``u >= c`` is ``raw >> 11 >= ceil(c * 2**53)``, i.e. ``raw >= ceil(c * 2**53) << 11``. CDF values
    of 1.0 are left out (no uniform reaches them).
    """
    return np.array([math.ceil(c * 2.0**53) << 11 for c in _CDF if c < 1.0], dtype=np.uint64)


_T = _thresholds()
_AMBIGUOUS = 255  # a table entry whose 2**48-wide bucket of raw words holds a threshold


def _table() -> np.ndarray:
    """The weight of each bucket of raw words sharing their top 16 bits (uint8), or :data:`_AMBIGUOUS`
    for the few buckets a threshold splits (about one word in 10**4 falls in one)."""
    lo = np.arange(2**16, dtype=np.uint64) << np.uint64(48)
    hi = lo | np.uint64(2**48 - 1)
    w_lo = np.searchsorted(_T, lo, side="right")
    w_hi = np.searchsorted(_T, hi, side="right")
    return np.where(w_lo == w_hi, w_lo, _AMBIGUOUS).astype(np.uint8)


_TABLE = _table()


class _Scratch(threading.local):
    """Per-thread work buffers of the weight draw, reused from block to block: allocating them afresh
    costs a page fault per 4 KiB each time (the buffers are above malloc's reuse threshold)."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, int], dtype: Any) -> np.ndarray:
        need = shape[0] * shape[1]
        a = self.arrays.get(name)
        if a is None or a.size < need:
            a = self.arrays[name] = np.empty(need, dtype=dtype)
        return a[:need].reshape(shape)


_SCRATCH = _Scratch()


def _weights8(bits: np.random.BitGenerator, rows: int) -> np.ndarray:
    """The next ``rows x BLOCK`` Poisson(1) weights of ``bits`` (uint8, a per-thread buffer: use it before
    the next call): one raw 64-bit word per weight, ``#{k : raw >= T_k}`` -- the same weights as inverting
    numpy's uniform through ``_CDF`` (see :func:`_thresholds`), found by a lookup of the word's top 16 bits
    and, in the rare buckets a threshold splits, an exact search.
    """
    raw = bits.random_raw((rows, BLOCK))
    top = np.right_shift(raw, np.uint64(48), out=_SCRATCH.get("top", raw.shape, np.uint64)).view(np.intp)
    w = _TABLE.take(top, out=_SCRATCH.get("w8", raw.shape, np.uint8), mode="wrap")  # in range: no checked copy
    amb = np.flatnonzero(np.equal(w, _AMBIGUOUS, out=_SCRATCH.get("amb", raw.shape, np.bool_)))
    if len(amb):
        w.flat[amb] = np.searchsorted(_T, raw.flat[amb], side="right")
    return w


def _block_bits(seed: int, stream: int, block: int, first: int = 0) -> np.random.BitGenerator:
    """The Philox generator of a block, skipped ahead to replicate ``first``."""
    bits = np.random.Philox(np.random.SeedSequence([seed, stream, block]))
    if first:
        bits.advance(first * BLOCK // 4)  # Philox yields four 64-bit words per step, one per weight
    return bits


def block_weights(seed: int, n_resamples: int, stream: int, block: int, first: int = 0) -> np.ndarray:
    """The Poisson(1) weights of replicates ``first .. first + n_resamples - 1`` of a block: ``(n_resamples, BLOCK)``.

    Uniforms from ``Generator(Philox(SeedSequence([seed, stream, block])))`` in row-major order
    (replicate ``r`` holds uniforms ``r * BLOCK ..``; a later replicate range skips ahead with
    ``Philox.advance``), inverted through the Poisson(1) CDF; int64. (Computed on the raw 64-bit
    words the uniforms come from, with the same result: :func:`_weights8`.)
    """
    bits = _block_bits(seed, stream, block, first)
    out = np.empty((n_resamples, BLOCK), dtype=np.int64)
    for r0 in range(0, n_resamples, _REPLICATE_CHUNK):
        m = min(_REPLICATE_CHUNK, n_resamples - r0)
        out[r0:r0 + m] = _weights8(bits, m)
    return out


def poisson_weights(seed: int, n_resamples: int, stream: int, start: int, stop: int, first: int = 0) -> np.ndarray:
    """Weights of positions ``start .. stop - 1`` of ``stream``: shape ``(n_resamples, stop - start)``."""
    if stop <= start:
        return np.zeros((n_resamples, 0), dtype=np.int64)
    parts = []
    for block in range(start // BLOCK, (stop - 1) // BLOCK + 1):
        lo, hi = max(start, block * BLOCK), min(stop, (block + 1) * BLOCK)
        parts.append(block_weights(seed, n_resamples, stream, block, first)[:, lo - block * BLOCK:hi - block * BLOCK])
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)


def _chunk_rows(n_resamples: int, n: int, max_bytes: int = 256 * 2**20) -> int:
    """Replicates per chunk so that a chunk's weights (``rows x n`` int64) stay under ``max_bytes``."""
    return int(max(1, min(n_resamples, max_bytes // (8 * max(1, n) + 1))))


def segment_weights(seed: int, n_resamples: int, segments: Sequence[tuple[int, int, int]]
                    ) -> Iterator[tuple[int, np.ndarray]]:
    """``(first replicate, weights)`` chunks over replicates: the weights of every position of
    ``segments`` (``(stream, start, count)``, in order), shape ``(chunk, n)``, memory bounded."""
    n = sum(c for _, _, c in segments)
    rows = _chunk_rows(n_resamples, max(n, BLOCK))
    for r0 in range(0, n_resamples, rows):
        b = min(rows, n_resamples - r0)
        parts = [poisson_weights(seed, b, s, a, a + c, r0) for s, a, c in segments if c]
        yield r0, (np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0] if parts
                   else np.zeros((b, 0), dtype=np.int64))


# ---------------------------------------------------------------------------- one block's sum
def _varying(rows: np.ndarray) -> np.ndarray:
    """The columns of ``rows`` that are not constant (NaN counts as varying)."""
    if not rows.shape[1] or not len(rows):
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero([not np.all(rows[:, j] == rows[0, j]) for j in range(rows.shape[1])])


def _lex_groups(rows: np.ndarray, varying: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Distinct rows of a block in ``lexsort(rows.T)`` order and their counts, or None if more than :data:`FEW`.

    Columns constant in the block do not change that (stable) order nor its groups, so the sort
    uses only ``varying`` (any superset of the block's varying columns gives the same result).
    """
    if varying is None:
        varying = _varying(rows)
    if len(varying) == 0:
        return rows[:1], np.array([len(rows)])
    keys = rows[:, varying]
    head = keys[:FEW + 1]
    if len(head) > FEW and len(np.unique(head, axis=0) if len(varying) > 1 else np.unique(head)) > FEW:
        return None  # more than FEW distinct rows already among the first FEW + 1: no need to sort the block
    order = np.argsort(keys[:, 0], kind="stable") if len(varying) == 1 else np.lexsort(keys.T)
    s = keys[order]
    change = s[1:] != s[:-1]
    starts = np.concatenate([[0], np.flatnonzero(change if len(varying) == 1 else np.any(change, axis=1)) + 1])
    if len(starts) > FEW:
        return None
    counts = np.diff(np.concatenate([starts, [len(s)]]))
    return rows[order[starts]], counts


def _few_sum(seed: int, R: int, stream: int, block: int, uniq: np.ndarray, counts: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """``sum_v N_v * uniq[v]`` with ``N_v ~ Poisson(counts[v])`` (the block's few-rows draw), and ``sum_v N_v``."""
    rng = np.random.Generator(np.random.Philox(np.random.SeedSequence([seed, stream, block, 1])))
    draws = rng.poisson(counts.astype(float), size=(R, len(counts))).astype(float)
    out = np.zeros((R, uniq.shape[1]))
    for t in range(len(counts)):  # elementwise, row after row: the same bits wherever it runs
        nz = np.flatnonzero(uniq[t])  # adding a zero product changes nothing: skip (label-count rows are sparse)
        if len(nz) == uniq.shape[1]:
            out += draws[:, t:t + 1] * uniq[t]
        elif len(nz):
            out[:, nz] += draws[:, t:t + 1] * uniq[t, nz]
    return out, draws.sum(axis=1)


def _position_sum(seed: int, R: int, stream: int, block: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``sum_i w_bi rows[i]`` with the block's per-position weights and ``sum_i w_bi``: float64, each
    replicate's sum in numpy's pairwise order along the positions (a function of the block's rows only).

    Replicates go :data:`_REPLICATE_CHUNK` at a time (the weights of a chunk stay in cache); a column
    of ones (a count) is the weights' sum itself.
    """
    n, k = rows.shape
    out = np.empty((R, k))
    size = np.empty(R)
    bits = _block_bits(seed, stream, block)
    ones = [j for j in range(k) if np.all(rows[:, j] == 1.0)]
    cols = [np.ascontiguousarray(rows[:, j]) for j in range(k)]
    step = -(-R // -(-R // _REPLICATE_CHUNK))  # equal chunks of at most _REPLICATE_CHUNK
    wf = _SCRATCH.get("wf", (step, n), np.float64)
    tmp = _SCRATCH.get("tmp", (step, n), np.float64)
    for r0 in range(0, R, step):
        m = min(step, R - r0)
        w, p = wf[:m], tmp[:m]
        np.copyto(w, _weights8(bits, m)[:, :n], casting="unsafe")
        np.add.reduce(w, axis=1, out=size[r0:r0 + m])
        for j in range(k):
            if j in ones:
                out[r0:r0 + m, j] = size[r0:r0 + m]
            else:
                np.multiply(w, cols[j], out=p)
                out[r0:r0 + m, j] = np.add.reduce(p, axis=1)
    return out, size


#: replicates whose per-position weights are drawn and summed at once (a 1 MiB float64 chunk)
_REPLICATE_CHUNK = 32


def _block_sum(seed: int, R: int, stream: int, block: int, rows: np.ndarray, parts: Sequence[int],
               varying: Sequence[np.ndarray] | None = None) -> np.ndarray:
    """The block's replicate sums ``(R, k + len(parts))``: each column group of ``parts`` (one metric each)
    on its own, then each group's replicate size (its weights' sum) in a column of its own.

    A function of the block's rows only (a shard and the parent compute the same bits).
    """
    k = rows.shape[1]
    out = np.zeros((R, k + len(parts)))
    at = 0
    for j, width in enumerate(parts):
        cols = rows[:, at:at + width]
        if len(cols):
            few = _lex_groups(cols, None if varying is None else varying[j])
            sums, size = (_few_sum(seed, R, stream, block, *few) if few is not None
                          else _position_sum(seed, R, stream, block, cols))
            out[:, at:at + width] = sums
            out[:, k + j] = size
        at += width
    return out


# ---------------------------------------------------------------------------- the aligned tree
def _tree(nodes: Mapping[Node, np.ndarray], units: int, level: int, index: int) -> np.ndarray | None:
    """The value of node ``(level, index)``: given, or left + right (a missing side is skipped)."""
    if index << level >= units:
        return None
    found = nodes.get((level, index))
    if found is not None or level == 0:
        return found
    left = _tree(nodes, units, level - 1, 2 * index)
    right = _tree(nodes, units, level - 1, 2 * index + 1)
    if left is None:
        return right
    return left if right is None else left + right


def _top(units: int) -> int:
    return max(0, math.ceil(math.log2(units))) if units > 1 else 0


def _dyadic(leaves: Mapping[int, np.ndarray], lo: int, hi: int) -> dict[Node, np.ndarray]:
    """The maximal aligned tree nodes covering units ``lo .. hi - 1`` (each computed from ``leaves``)."""
    base = {(0, u): v for u, v in leaves.items()}
    out: dict[Node, np.ndarray] = {}
    p = lo
    while p < hi:
        level = 0
        while p % (2 << level) == 0 and p + (2 << level) <= hi:
            level += 1
        value = _tree(base, hi, level, p >> level)
        assert value is not None
        out[(level, p >> level)] = value
        p += 1 << level
    return out


def _merge_nodes(a: Mapping[Node, np.ndarray], b: Mapping[Node, np.ndarray]) -> dict[Node, np.ndarray]:
    overlap = a.keys() & b.keys()
    if overlap:
        raise InvalidParameterError(
            f"Cannot merge replicate tallies that cover the same positions (nodes {sorted(overlap)[:3]}).")
    return {**a, **b}


def _nodes_equal(a: Mapping[Node, np.ndarray], b: Mapping[Node, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)


def _same_parts(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    if a and b and a != b:
        raise InvalidParameterError(f"Cannot merge replicate tallies of different statistics ({a} and {b} columns).")
    return a or b


@attrs.frozen
class PoissonReplicates(Tally):
    """One shard's (or the merged) part of every Poisson bootstrap replicate: a :class:`Tally`.

    Attributes
    ----------
    resampling : Resampling
        The options (must be equal to merge).
    unit : {"block", "file"}
        What a tree leaf is: a block of an in-memory pool's positions, or a file of a path pool.
    nodes : dict
        ``{(level, index): (R, k) array}``: weighted sums of the additive metrics' statistics
        over aligned ranges of leaves that lie wholly in one shard (merged by union).
    pieces : tuple
        ``(block, offset, rows)`` for blocks cut by a shard boundary (gathered).
    segments : tuple
        ``(stream, start, count)`` of the items tallied, in pool order (gathered); the
        gathered metrics' rows follow this order.
    parts : tuple of int
        The column count of each metric's statistics (each is resampled on its own).
    """

    resampling: Resampling
    unit: str = "block"
    nodes: dict[Node, np.ndarray] = merged_by(_merge_nodes, default=attrs.Factory(dict),
                                               eq=attrs.cmp_using(eq=_nodes_equal))
    pieces: tuple[Any, ...] = gathered(())
    segments: tuple[tuple[int, int, int], ...] = gathered(())
    width: int = kept(0, fn=max)
    parts: tuple[int, ...] = merged_by(_same_parts, default=())

    @property
    def n(self) -> int:
        """Items tallied."""
        return sum(c for _, _, c in self.segments)

    def weight_chunks(self) -> Iterator[tuple[int, np.ndarray]]:
        """Per-position weights of every item tallied, pool order, in replicate chunks (:func:`segment_weights`)."""
        rs = self.resampling
        return segment_weights(rs.seed, rs.n_resamples, self.segments)

    def totals(self) -> np.ndarray:
        """The replicate totals of the additive statistics: ``(R, width)``, identical for any sharding."""
        return self.sums()[0]

    def sums(self) -> tuple[np.ndarray, np.ndarray]:
        """``(totals (R, width), sizes (R, len(parts)))``: each group's replicate size is its weights' sum."""
        rs = self.resampling
        nodes = dict(self.nodes)
        if self.unit == "file":
            units = 1 + max((s for s, _, _ in self.segments), default=-1)
        else:
            units = -(-self.n // BLOCK)
            by_block: dict[int, list[tuple[int, np.ndarray]]] = {}
            for block, offset, rows in self.pieces:
                by_block.setdefault(block, []).append((offset, rows))
            for block, pieces in by_block.items():
                pieces.sort(key=lambda p: p[0])
                rows = np.concatenate([r for _, r in pieces], axis=0)
                nodes[(0, block)] = _block_sum(rs.seed, rs.n_resamples, 0, block, rows, self.parts or (self.width,))
        total = _tree(nodes, units, _top(units), 0) if units else None
        if total is None:
            total = np.zeros((rs.n_resamples, self.width + len(self.parts)))
        return total[:, :self.width], total[:, self.width:]


def shard_replicates(resampling: Resampling, rows: np.ndarray, *, start: int | None,
                     file_counts: Sequence[tuple[int, int]] = (), parts: Sequence[int] = ()) -> PoissonReplicates:
    """A shard's :class:`PoissonReplicates` from its additive statistics ``rows`` (``(n, k)``, pool order).

    ``start`` is the pool position of an in-memory shard's first item; for a path shard
    pass ``start=None`` and ``file_counts``: ``(file index in the pool, items)`` per file.
    ``parts`` splits the columns into the metrics' groups (default: one group).
    """
    rs = resampling
    R, k = rs.n_resamples, rows.shape[1]
    parts = tuple(parts) if parts else ((k,) if k else ())
    if sum(parts) != k:
        raise InvalidParameterError(f"The column groups {parts} do not add up to the {k} statistics columns.")
    leaves: dict[int, np.ndarray] = {}
    bounds = np.cumsum((0, *parts))
    varying = [_varying(rows[:, a:b]) for a, b in zip(bounds[:-1], bounds[1:])]  # once, not per block
    progress = _progress(-(-len(rows) // BLOCK), R * len(rows), "bootstrap blocks")
    if start is not None:
        n = len(rows)
        stop = start + n
        first_full, end_full = -(-start // BLOCK), stop // BLOCK
        pieces: list[tuple[int, int, np.ndarray]] = []
        if k and n:
            if first_full >= end_full:  # no whole block inside: the shard is pieces only
                edges = [(start, stop)]
            else:
                edges = [(start, first_full * BLOCK), (end_full * BLOCK, stop)]
                for block in range(first_full, end_full):
                    lo = block * BLOCK - start
                    leaves[block] = _block_sum(rs.seed, R, 0, block, rows[lo:lo + BLOCK], parts, varying)
                    progress.update()
            for a, b in edges:
                while a < b:  # a range may cross one block boundary when the shard is inside two blocks
                    block = a // BLOCK
                    c = min(b, (block + 1) * BLOCK)
                    pieces.append((block, a - block * BLOCK, rows[a - start:c - start]))
                    a = c
        progress.close()
        nodes = _dyadic(leaves, first_full, end_full) if leaves else {}
        return PoissonReplicates(rs, "block", nodes, tuple(pieces), ((0, start, n),) if n else (), k, parts)
    at = 0
    for f, count in file_counts:
        part = rows[at:at + count]
        at += count
        blocks = {}
        if k:
            for b in range(-(-count // BLOCK)):
                blocks[b] = _block_sum(rs.seed, R, f, b, part[b * BLOCK:(b + 1) * BLOCK], parts, varying)
                progress.update()
        units = len(blocks)
        value = _tree({(0, b): v for b, v in blocks.items()}, units, _top(units), 0) if units else None
        leaves[f] = np.zeros((R, k + len(parts))) if value is None else value
    progress.close()
    files = [f for f, _ in file_counts]
    nodes = _dyadic(leaves, files[0], files[-1] + 1) if files and k else {}
    return PoissonReplicates(rs, "file", nodes, (), tuple((f, 0, c) for f, c in file_counts), k, parts)


#: what a merge of replicate tallies that cannot be merged gives (the total has no intervals)
DROPPED = "dropped"
#: the replicates of a shard that does not know its items' pool positions (absorbing, as DROPPED)
UNPOSITIONED = "unpositioned"


def merge_replicates(a: Any, b: Any) -> Any:
    """``a + b`` when they tally disjoint positions in order (shard order), else :data:`DROPPED` with a warning.

    ``None`` (no resampling asked) is the identity; :data:`DROPPED` absorbs. Adding the
    results of two separate runs over different pools reuses positions (both start at 0),
    so their weights would be the same draws: the sum then carries no intervals.
    """
    if a is None or b is None:
        return a if b is None else b
    for sentinel in (UNPOSITIONED, DROPPED):
        if a == sentinel or b == sentinel:
            return sentinel
    last = max(((s, x + c) for s, x, c in a.segments if c), default=(-1, 0))
    first = min(((s, x) for s, x, c in b.segments if c), default=None)
    if a.resampling != b.resampling or a.unit != b.unit or (a.width and b.width and a.width != b.width) \
            or (a.parts and b.parts and a.parts != b.parts) or (first is not None and first < last):
        warnings.warn("The results tally overlapping pool positions or different resampling options; their sum "
                      "carries no confidence intervals.", UndefinedMetricWarning, stacklevel=3)
        return DROPPED
    return a + b


# ---------------------------------------------------------------------------- gathered metrics
def gathered_scores(metric: Any, inter: Any, names: Sequence[str], n_resamples: int,
                    chunks: Iterable[tuple[int, np.ndarray]], units: Callable[[np.ndarray], np.ndarray] | None = None
                    ) -> tuple[dict[str, np.ndarray], int]:
    """Replicate values of ``names`` for a gathered metric: ``reduce`` of each replicate's rows.

    ``chunks`` yields ``(first replicate, weights (chunk, n_units))``; ``units`` maps a unit
    index array to instance indices (clusters), identity by default. Item ``i`` appears
    ``w_bi`` times, in position order. Returns the values of the non-empty replicates
    (:func:`drop_empty`) and how many were empty.
    """
    out = {s: np.full(n_resamples, np.nan) for s in names}
    size = np.zeros(n_resamples)
    with warnings.catch_warnings(), np.errstate(all="ignore"), \
            _progress(n_resamples, n_resamples * max(1, len(inter)) * 20, "bootstrap resamples") as bar:
        warnings.simplefilter("ignore", RuntimeWarning)
        for r0, w in chunks:
            index = np.arange(w.shape[1])
            size[r0:r0 + len(w)] = w.sum(axis=1)
            for r in range(len(w)):
                if not size[r0 + r]:
                    bar.update()
                    continue  # an empty replicate: left out (drop_empty)
                pick = np.repeat(index, w[r])
                sc = metric.reduce(take(inter, units(pick) if units is not None else pick))
                for s in names:
                    out[s][r0 + r] = float(sc[s])
                bar.update()
    return drop_empty(out, size)


def drop_empty(values: Mapping[str, np.ndarray], size: np.ndarray) -> tuple[dict[str, np.ndarray], int]:
    """The replicate values without the replicates that drew no instance, and how many those were.

    A Poisson replicate is empty with probability ``e^-n`` (``n`` items, or clusters): its score
    is that of no data. The interval is that of the Poisson bootstrap given a non-empty
    replicate (what the multinomial bootstrap always draws); the caller notes how many were left out.
    """
    keep = size > 0
    dropped = int(np.count_nonzero(~keep))
    if not dropped:
        return dict(values), 0
    return {s: v[keep] for s, v in values.items()}, dropped


def empty_note(dropped: int, n_resamples: int) -> str:
    """The note of an interval whose replicates included empty ones."""
    return (f"{dropped} of {n_resamples} Poisson replicates drew no instance (each does with probability e^-n) "
            "and are left out")


def additive_scores(metric: Any, totals: np.ndarray, size: np.ndarray, names: Iterable[str]
                    ) -> tuple[dict[str, np.ndarray], int]:
    """Replicate values of ``names`` from an additive metric's replicate totals (empty replicates left out)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        many = metric.reduce_totals_many(totals)
    return drop_empty({n: np.asarray(many[n], dtype=float) for n in names}, size)


def replicate_scores(metric: Any, replicates: PoissonReplicates, cols: slice | None, sums: Any,
                     part: int | None, names: Iterable[str]) -> tuple[dict[str, np.ndarray], int]:
    """The replicate values of the scores ``names`` of a sharded run's ``metric`` and the empty replicates left out."""
    names = list(names)
    R = replicates.resampling.n_resamples
    if metric.additive:
        assert sums is not None and cols is not None and part is not None
        return additive_scores(metric, sums[0][:, cols], sums[1][:, part], names)
    return gathered_scores(metric, metric.state.intermediates(), names, R, replicates.weight_chunks())


# ---------------------------------------------------------------------------- labels
def codes(labels: Any, n: int, what: str) -> np.ndarray:
    """Integer codes ``0..G-1`` for a sequence of hashable labels, in first-seen order."""
    if len(labels) != n:
        raise InvalidParameterError(f"'{what}' must have one label per instance ({n}); got {len(labels)}.")
    mapping: dict[Any, int] = {}
    values = labels.tolist() if isinstance(labels, np.ndarray) else labels
    return np.array([mapping.setdefault(_hashable(x), len(mapping)) for x in values], dtype=np.intp)


def _hashable(x: Any) -> Any:
    return tuple(x) if isinstance(x, (list, np.ndarray)) else x


# ---------------------------------------------------------------------------- the in-memory engine
class Resampler:
    """The bootstrap of ``n`` in-memory instances: Poisson (default), clusters, strata (see the module doc).

    Parameters
    ----------
    n : int
        Number of instances.
    n_resamples : int
        Number of bootstrap replicates ``R``.
    seed : int
        Seed, an int ``>= 0``.
    groups : sequence, optional
        Cluster label per instance: each cluster gets one weight.
    strata : sequence, optional
        Stratum label per instance: each stratum keeps its size (multinomial within it).
    max_bytes : int
        Memory bound of one chunk of weights.

    Without ``groups`` and ``strata`` the totals and weights are those of a one-shard pool
    (stream 0, positions ``0 .. n - 1``): the sharded evaluators' numbers.
    """

    def __init__(self, n: int, *, n_resamples: int, seed: int, groups: Any = None, strata: Any = None,
                 max_bytes: int = 256 * 2**20, owner: str = "Resampler") -> None:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise InvalidParameterError(f"The 'n' parameter of Resampler must be a non-negative int; got {n!r}.")
        self.n = int(n)
        self.n_resamples = check_cost(check_n_resamples(n_resamples, minimum=1, owner=owner), self.n, owner=owner)
        self.seed: int = check_seed(seed, allow_none=False, owner=owner)
        self.max_bytes = max_bytes
        self.groups = None if groups is None else codes(groups, self.n, "groups")
        st = None if strata is None else codes(strata, self.n, "strata")
        if self.groups is not None:
            self.n_units = int(self.groups.max()) + 1 if self.n else 0
            self._members = np.argsort(self.groups, kind="stable")
            self._offsets = np.concatenate([[0], np.cumsum(np.bincount(self.groups, minlength=self.n_units))])
            if st is not None:
                unit_st = np.full(self.n_units, -1)
                unit_st[self.groups] = st
                if np.any(unit_st[self.groups] != st):
                    raise InvalidParameterError("Every cluster in 'groups' must lie within one stratum of 'strata'.")
                st = unit_st
        else:
            self.n_units = self.n
        self.unit_strata = st
        if st is not None:
            order = np.argsort(st, kind="stable")
            self._strata_units = np.split(order, np.cumsum(np.bincount(st))[:-1])
        self.resampling = Resampling(self.n_resamples, 0.95, self.seed)

    @property
    def scheme(self) -> str:
        """``"poisson"``, ``"cluster"``, ``"stratified"`` or ``"stratified-cluster"``."""
        if self.unit_strata is not None:
            return "stratified-cluster" if self.groups is not None else "stratified"
        return "cluster" if self.groups is not None else "poisson"

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
        if len(units) == 0:
            return np.zeros(0, dtype=np.intp)
        starts, ends = self._offsets[units], self._offsets[units + 1]
        lengths = ends - starts
        pos = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        members: np.ndarray = self._members[np.arange(lengths.sum()) + pos]
        return members

    # ------------------------------------------------------------------ the draw
    def weight_chunks(self) -> Iterator[tuple[int, np.ndarray]]:
        """``(first replicate, unit weights (chunk, n_units))``, chunk after chunk (memory bounded)."""
        if self.unit_strata is None:
            yield from segment_weights(self.seed, self.n_resamples, ((0, 0, self.n_units),) if self.n_units else ())
            return
        rng = np.random.default_rng([self.seed, 2])
        rows = _chunk_rows(self.n_resamples, self.n_units, self.max_bytes)
        for r0 in range(0, self.n_resamples, rows):
            b = min(rows, self.n_resamples - r0)
            w = np.zeros((b, self.n_units), dtype=np.int64)
            for units in self._strata_units:
                m = len(units)
                if m:
                    w[:, units] = rng.multinomial(m, np.full(m, 1.0 / m), size=b)
            yield r0, w

    def totals(self, stats: np.ndarray, parts: Sequence[int] = ()) -> np.ndarray:
        """Replicate totals ``(R, k)`` of additive ``stats`` (``(n, k)``); ``parts`` as in :func:`shard_replicates`."""
        return self.sums(stats, parts)[0]

    def sums(self, stats: np.ndarray, parts: Sequence[int] = ()) -> tuple[np.ndarray, np.ndarray]:
        """``(totals (R, k), sizes (R, len(parts) or 1))``: the replicate totals and each group's weight sum."""
        su = self.unit_stats(np.asarray(stats, dtype=float))
        if self.unit_strata is None:
            return shard_replicates(self.resampling, su, start=0, parts=tuple(parts) or (su.shape[1],)).sums()
        out = np.empty((self.n_resamples, su.shape[1]))
        for r0, w in self.weight_chunks():
            out[r0:r0 + len(w)] = w.astype(float) @ su
        return out, np.full((self.n_resamples, max(1, len(parts))), float(self.n_units))

    def scores(self, metric: Any, inter: Any, names: Sequence[str]) -> tuple[dict[str, np.ndarray], int]:
        """Replicate values of ``names`` for ``metric`` (additive: from :meth:`sums`; else ``reduce`` per
        replicate), without the empty replicates, and how many those were (:func:`drop_empty`)."""
        if metric.additive:
            totals, size = self.sums(np.asarray(inter, dtype=float))
            return additive_scores(metric, totals, size[:, 0], names)
        return gathered_scores(metric, inter, names, self.n_resamples, self.weight_chunks(),
                               self.unit_instances if self.groups is not None else None)

    def run(self, stats: np.ndarray | None = None,
            on_indices: Callable[[int, np.ndarray], None] | None = None) -> np.ndarray | None:
        """Replicate totals of ``stats`` (or None) and/or ``on_indices(b, index)`` per replicate.

        ``index`` holds instance ``i`` ``w_bi`` times (clusters expanded), in position order.
        """
        if on_indices is not None:
            for r0, w in self.weight_chunks():
                index = np.arange(w.shape[1])
                for r in range(len(w)):
                    pick = np.repeat(index, w[r])
                    on_indices(r0 + r, self.unit_instances(pick) if self.groups is not None else pick)
        return None if stats is None else self.totals(stats)

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
