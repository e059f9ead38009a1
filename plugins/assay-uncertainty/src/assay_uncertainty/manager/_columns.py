"""Nested per-example values (statistics) as flat number or string arrays, and back, without pickle.

A column holds one value per example; each value may be nested lists (or arrays) of
numbers, booleans or strings, all of one kind. It is stored as its leaves (one 1-D array)
and one lengths array per nesting level, outermost first:

>>> leaf, lengths = encode_column([[1.0, 2.0], [3.0]])
>>> leaf.tolist(), [x.tolist() for x in lengths]
([1.0, 2.0, 3.0], [[2, 1]])
>>> [v.tolist() for v in decode_column(leaf, lengths)]
[[1.0, 2.0], [3.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["LEAF_KINDS", "decode_column", "encode_column"]

#: dtype kinds an array of a save may have (never ``O``: that would need pickle)
LEAF_KINDS = "biufU"


def _is_seq(v: Any) -> bool:
    return isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.ndim >= 1)


def _is_scalar(v: Any) -> bool:
    return isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating))


def encode_column(values: Any) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """A column (one value per example, nested lists allowed) as leaves plus one lengths array per level.

    None when the values cannot be stored without pickle (dicts, None, mixed types).
    """
    level: list[Any] = list(values)
    lengths: list[np.ndarray] = []
    while True:
        if not level:
            return np.zeros(0), lengths
        if all(isinstance(v, str) for v in level):
            if any(v.endswith("\x00") for v in level):
                return None  # numpy strips trailing NULs
            return np.array(level, dtype=str), lengths
        if all(_is_scalar(v) for v in level):
            leaf = np.asarray(level)
            return (leaf, lengths) if leaf.dtype.kind in LEAF_KINDS and leaf.ndim == 1 else None
        if not all(_is_seq(v) for v in level):
            return None
        lengths.append(np.array([len(v) for v in level], dtype=np.int64))
        if all(isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "biuf" for v in level):
            return np.concatenate(level), lengths
        level = [x for v in level for x in v]


def decode_column(leaf: np.ndarray, lengths: list[np.ndarray]) -> list[Any]:
    """The inverse of :func:`encode_column`; the innermost numeric lists come back as arrays."""
    if not lengths:
        return leaf.tolist()
    items: Any = leaf.tolist() if leaf.dtype.kind == "U" else leaf
    for depth, lens in enumerate(reversed(lengths)):
        if len(lens) == 0:
            items = []
        elif depth == 0 and isinstance(items, np.ndarray):
            items = np.split(items, np.cumsum(lens)[:-1])
        else:
            starts = np.concatenate([[0], np.cumsum(lens)])
            items = [list(items[starts[i]:starts[i + 1]]) for i in range(len(lens))]
    return list(items)
