"""Shard-invariant Poisson bootstrap: replicate tallies that add across shards.

The intervals of ``EvaluatorBase.sequentialEvaluate`` / ``parallelEvaluate`` with
``metrics=[...]`` come from a **Poisson bootstrap** (Hanley & MacGibbon 2006; Chamandy,
Muralidharan, Najmi & Naik 2012, "Estimating uncertainty for massive data streams"):
replicate ``b`` gives item ``i`` the weight ``w_bi ~ Poisson(1)``, independently, instead
of the multinomial counts of drawing ``n`` items with replacement (which
:func:`assay.evaluate` uses). The replicate's size ``sum_i w_bi`` therefore varies around
``n``; the two bootstraps have the same asymptotics, their finite-sample intervals differ
slightly, and both are percentile intervals (``[q(alpha/2), q(1 - alpha/2)]`` of the
replicate scores).

What makes it shard-invariant: ``w_bi`` depends only on ``(seed, position of i)``. Positions
fall in fixed blocks of :data:`BLOCK` items; the weights of block ``j`` of stream ``s`` are
drawn by a counter-based generator (numpy's ``Philox``) keyed by ``(seed, s, j)`` (uniforms
turned into Poisson(1) draws by inverting the CDF), always for
the whole block, so a shard generates exactly the weights of its own positions wherever the
shard boundaries fall. The stream is 0 for an in-memory pool; for a path pool it is the
file's index in the pool and positions count within the file (files never straddle shards).

Additive metrics: each shard tallies its part of every replicate, ``sum_i w_bi s_i`` over its
items' statistics rows ``s_i`` -- an ``(R, k)`` array. To make the totals identical to the
last bit for any shard count, sums are built on a fixed tree: a block's sum accumulates its
items in position order; blocks (or files) combine in an aligned binary tree whose nodes a
shard computes when they lie wholly inside it; items of a block cut by a shard boundary
travel as rows and the parent sums that block. Gathered metrics: the parent holds the rows in
pool order and weights them with the same generator (row ``i`` repeated ``w_bi`` times).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from assay.core.tally import Tally, gathered, kept, merged_by, values_equal
from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.metrics._params import check_confidence_level, check_n_resamples, check_seed
from assay.metrics.base import take
from assay.metrics.intervals import percentile_interval

__all__ = ["BLOCK", "DROPPED", "UNPOSITIONED", "PoissonReplicates", "Resampling", "block_weights", "poisson_weights", "shard_replicates"]

#: positions per block of weights (a constant: changing it changes every interval)
BLOCK = 256

Node = tuple[int, int]  # (level, index): units [index * 2**level, (index + 1) * 2**level)


@attrs.frozen
class Resampling:
    """The options of a Poisson bootstrap: ``n_resamples`` (0: no intervals), ``confidence_level``, ``seed``."""

    n_resamples: int = 1000
    confidence_level: float = 0.95
    seed: int = 0

    @classmethod
    def checked(cls, n_resamples: Any, confidence_level: Any, seed: Any, *, owner: str) -> Resampling:
        """Validated options (through :mod:`assay.validation`); errors name ``owner`` and the parameter."""
        n = check_n_resamples(n_resamples, owner=owner)
        level = check_confidence_level(confidence_level, owner=owner)
        s = check_seed(seed, allow_none=False, owner=owner)
        return cls(int(n), float(level), int(s))  # type: ignore[arg-type]


def _poisson_one_cdf() -> np.ndarray:
    """``P(W <= k)`` for ``W ~ Poisson(1)``, ``k = 0, 1, ...`` until it reaches 1 in float64."""
    terms = [math.exp(-1.0)]
    while sum(terms) < 1.0 and len(terms) < 40:
        terms.append(terms[-1] / len(terms))
    return np.cumsum(terms)


_CDF = _poisson_one_cdf()


def block_weights(seed: int, n_resamples: int, stream: int, block: int) -> np.ndarray:
    """The Poisson(1) weights of block ``block`` of ``stream``: int64, shape ``(n_resamples, BLOCK)``.

    Uniforms from ``Generator(Philox(SeedSequence([seed, stream, block])))``, always for the
    full block, turned into Poisson(1) draws by inverting the CDF (``W = #{k : u >= P(W <= k)}``),
    so any caller gets the same numbers for the same positions.
    """
    rng = np.random.Generator(np.random.Philox(np.random.SeedSequence([seed, stream, block])))
    return np.searchsorted(_CDF, rng.random((n_resamples, BLOCK)), side="right").astype(np.int64)


def poisson_weights(seed: int, n_resamples: int, stream: int, start: int, stop: int) -> np.ndarray:
    """Weights of positions ``start .. stop - 1`` of ``stream``: shape ``(n_resamples, stop - start)``."""
    if stop <= start:
        return np.zeros((n_resamples, 0), dtype=np.int64)
    parts = []
    for block in range(start // BLOCK, (stop - 1) // BLOCK + 1):
        lo, hi = max(start, block * BLOCK), min(stop, (block + 1) * BLOCK)
        parts.append(block_weights(seed, n_resamples, stream, block)[:, lo - block * BLOCK:hi - block * BLOCK])
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)


def _block_sum(weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``sum_i weights[:, i] * rows[i]``: ``(R, k)``, accumulated over ``i`` in position order.

    The products form a ``(b, k, R)`` array reduced along its first axis, which numpy does
    elementwise, item after item; the caller always passes a whole block (or the whole tail
    block), so a shard and the parent compute the same sums bit for bit.
    """
    if rows.shape[0] == 0:
        return np.zeros((weights.shape[0], rows.shape[1]))
    products = rows[:, :, None] * np.ascontiguousarray(weights.T, dtype=float)[:, None, :]
    return np.ascontiguousarray(products.sum(axis=0).T)


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
        raise InvalidParameterError(f"Cannot merge replicate tallies that cover the same positions (nodes {sorted(overlap)[:3]}).")
    return {**a, **b}


def _nodes_equal(a: Mapping[Node, np.ndarray], b: Mapping[Node, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)


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
    """

    resampling: Resampling
    unit: str = "block"
    nodes: dict[Node, np.ndarray] = merged_by(_merge_nodes, default=attrs.Factory(dict),
                                               eq=attrs.cmp_using(eq=_nodes_equal))
    pieces: tuple[Any, ...] = gathered(())
    segments: tuple[tuple[int, int, int], ...] = gathered(())
    width: int = kept(0, fn=max)

    # ------------------------------------------------------------ the parent's side
    @property
    def n(self) -> int:
        """Items tallied."""
        return sum(c for _, _, c in self.segments)

    def weights(self) -> np.ndarray:
        """Weights of every item tallied, in pool order: uint8, shape ``(R, n)`` (``R x n`` bytes)."""
        rs = self.resampling
        parts = [poisson_weights(rs.seed, rs.n_resamples, s, a, a + c).astype(np.uint8)  # Poisson(1) < 256
                 for s, a, c in self.segments]
        if not parts:
            return np.zeros((rs.n_resamples, 0), dtype=np.uint8)
        return np.concatenate(parts, axis=1)

    def totals(self) -> np.ndarray:
        """The replicate totals of the additive statistics: ``(R, width)``, identical for any sharding."""
        rs = self.resampling
        if self.unit == "file":
            units = 1 + max((s for s, _, _ in self.segments), default=-1)
            nodes = dict(self.nodes)
        else:
            units = -(-self.n // BLOCK)
            nodes = dict(self.nodes)
            by_block: dict[int, list[tuple[int, np.ndarray]]] = {}
            for block, offset, rows in self.pieces:
                by_block.setdefault(block, []).append((offset, rows))
            for block, parts in by_block.items():
                parts.sort(key=lambda p: p[0])
                rows = np.concatenate([r for _, r in parts], axis=0)
                w = block_weights(rs.seed, rs.n_resamples, 0, block)[:, :len(rows)]
                nodes[(0, block)] = _block_sum(w, rows)
        total = _tree(nodes, units, _top(units), 0) if units else None
        return np.zeros((rs.n_resamples, self.width)) if total is None else total


def shard_replicates(resampling: Resampling, rows: np.ndarray, *, start: int | None,
                     file_counts: Sequence[tuple[int, int]] = ()) -> PoissonReplicates:
    """A shard's :class:`PoissonReplicates` from its additive statistics ``rows`` (``(n, k)``, pool order).

    ``start`` is the pool position of an in-memory shard's first item; for a path shard
    pass ``start=None`` and ``file_counts``: ``(file index in the pool, items)`` per file.
    """
    rs = resampling
    R, k = rs.n_resamples, rows.shape[1]
    if start is not None:
        n = len(rows)
        stop = start + n
        first_full, end_full = -(-start // BLOCK), stop // BLOCK
        leaves: dict[int, np.ndarray] = {}
        pieces: list[tuple[int, int, np.ndarray]] = []
        if k and n:
            if first_full >= end_full:  # no whole block inside: the shard is pieces only
                edges = [(start, stop)]
            else:
                edges = [(start, first_full * BLOCK), (end_full * BLOCK, stop)]
                for block in range(first_full, end_full):
                    lo = block * BLOCK - start
                    leaves[block] = _block_sum(block_weights(rs.seed, R, 0, block), rows[lo:lo + BLOCK])
            for a, b in edges:
                while a < b:  # a range may cross one block boundary when the shard is inside two blocks
                    block = a // BLOCK
                    c = min(b, (block + 1) * BLOCK)
                    pieces.append((block, a - block * BLOCK, rows[a - start:c - start]))
                    a = c
        nodes = _dyadic(leaves, first_full, end_full) if leaves else {}
        return PoissonReplicates(rs, "block", nodes, tuple(pieces), ((0, start, n),) if n else (), k)
    leaves = {}
    at = 0
    for f, count in file_counts:
        part = rows[at:at + count]
        at += count
        blocks = {b: _block_sum(block_weights(rs.seed, R, f, b)[:, :len(part[b * BLOCK:(b + 1) * BLOCK])],
                                part[b * BLOCK:(b + 1) * BLOCK]) for b in range(-(-count // BLOCK))} if k else {}
        units = len(blocks)
        value = _tree({(0, b): v for b, v in blocks.items()}, units, _top(units), 0) if units else None
        leaves[f] = np.zeros((R, k)) if value is None else value
    files = [f for f, _ in file_counts]
    nodes = _dyadic(leaves, files[0], files[-1] + 1) if files and k else {}
    return PoissonReplicates(rs, "file", nodes, (), tuple((f, 0, c) for f, c in file_counts), k)


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
            or (first is not None and first < last):
        warnings.warn("The results tally overlapping pool positions or different resampling options; their sum "
                      "carries no confidence intervals.", UndefinedMetricWarning, stacklevel=3)
        return DROPPED
    return a + b


def replicate_scores(metric: Any, replicates: PoissonReplicates, cols: slice | None, totals: np.ndarray | None,
                     names: Iterable[str], weights: np.ndarray | None) -> dict[str, np.ndarray]:
    """The replicate values of the scores ``names`` of ``metric`` (arrays of shape ``(R,)``)."""
    names = list(names)
    R = replicates.resampling.n_resamples
    out = {n: np.full(R, np.nan) for n in names}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if metric.additive:
            assert totals is not None and cols is not None
            many = metric.reduce_totals_many(totals[:, cols])
            return {n: np.asarray(many[n], dtype=float) for n in names}
        assert weights is not None
        inter = metric.state.intermediates()
        index = np.arange(weights.shape[1])
        for b in range(R):
            sc = metric.reduce(take(inter, np.repeat(index, weights[b])))
            for n in names:
                out[n][b] = float(sc[n])
    return out


def percentile(values: np.ndarray, confidence_level: float) -> tuple[float, float, str | None]:
    """The percentile interval of replicate values (as :func:`assay.evaluate` computes it)."""
    return percentile_interval(values, confidence_level)
