"""The tally: assay's one state type, whose fields declare how they merge.

Every evaluation in assay is an additive tally: shards add, a bootstrap replicate is a
weighted sum, streaming is a running sum. :class:`Tally` makes that a type (modelled on
torchmetrics' ``add_state(name, default, dist_reduce_fx)``): an ``attrs`` class whose
fields are declared with

- :func:`additive` -- summed with ``+`` (ints, floats, numpy arrays; ``None`` is the zero);
- :func:`gathered` -- concatenated in order (tuples, lists, numpy arrays along axis 0);
- :func:`merged_by` -- combined by a function of the two values (nested states);
- :func:`kept` -- the left operand's value (a position, an option), or a function of both.

``a + b`` and ``a.merge(b, c, ...)`` return a new state of the same class; ``sum(states)``
works (``0 + state`` is the state). **Merge order** is the order of the operands: merging
the states of shards 0, 1, ..., k-1 in shard order gives the pool-order concatenation of
every gathered field, and the sums of the additive fields added left to right. Integer
sums are exact in any order; float sums are reproducible because assay always merges in
shard order.

States pickle (``attrs`` classes) and compare equal field by field (numpy arrays by value).

>>> import attrs, numpy as np
>>> @attrs.frozen
... class Counts(Tally):
...     right: int = additive(0)
...     total: int = additive(0)
...     ids: tuple = gathered(())
>>> a, b = Counts(1, 2, ("x",)), Counts(3, 4, ("y", "z"))
>>> a + b
Counts(right=4, total=6, ids=('x', 'y', 'z'))
>>> sum([a, b, a]) == a.merge(b, a)
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typing.Self is Python 3.11+; assay supports 3.10 (annotations are not evaluated)
    from typing_extensions import Self

import sys

import attrs

from assay.errors import InvalidParameterError

__all__ = ["ADDITIVE", "GATHERED", "KEPT", "MERGED", "Tally", "additive", "gathered", "kept", "merged_by",
           "values_equal"]

ADDITIVE = "additive"
GATHERED = "gathered"
MERGED = "merged"
KEPT = "kept"

_KIND = "assay_tally"
_FN = "assay_tally_fn"


class _NoArray:
    """Stands for ``numpy.ndarray`` while numpy is not imported: then no value is an array (nothing is its instance)."""


def _ndarray() -> Any:
    """``numpy.ndarray`` once numpy is imported, else a class no value belongs to: a tally of plain ints
    (the parsing scores, say) never imports numpy."""
    return getattr(sys.modules.get("numpy"), "ndarray", _NoArray)



def values_equal(a: Any, b: Any) -> bool:
    """Equality that compares numpy arrays (also inside lists and tuples) by shape and value."""
    if a is b:
        return True
    ndarray = _ndarray()
    if isinstance(a, ndarray) or isinstance(b, ndarray):
        import numpy as np  # deferred: numpy, only once a value is an array (a tally of ints never imports it)

        return isinstance(a, ndarray) and isinstance(b, ndarray) and a.shape == b.shape \
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc"))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # incomparable values count as different
        return False


_EQ = attrs.cmp_using(eq=values_equal)


def additive(default: Any = 0, **kwargs: Any) -> Any:
    """A field summed with ``+`` when states merge (``None`` counts as zero)."""
    kwargs.setdefault("eq", _EQ)
    return attrs.field(default=default, metadata={_KIND: ADDITIVE}, **kwargs)


def gathered(default: Any = (), **kwargs: Any) -> Any:
    """A field concatenated in merge order (tuples, lists, or numpy arrays along axis 0)."""
    kwargs.setdefault("eq", _EQ)
    if isinstance(default, (list, _ndarray())):  # a mutable default: one fresh copy per instance
        kwargs["factory"] = (lambda d=default: d.copy())
    else:
        kwargs["default"] = default
    return attrs.field(metadata={_KIND: GATHERED}, **kwargs)


def merged_by(fn: Callable[[Any, Any], Any], default: Any = None, **kwargs: Any) -> Any:
    """A field combined by ``fn(left, right)`` when states merge (for nested states)."""
    kwargs.setdefault("eq", _EQ)
    return attrs.field(default=default, metadata={_KIND: MERGED, _FN: fn}, **kwargs)


def kept(default: Any = None, fn: Callable[[Any, Any], Any] | None = None, **kwargs: Any) -> Any:
    """A field that does not add: the merged state keeps the left operand's value (or ``fn(left, right)``)."""
    kwargs.setdefault("eq", _EQ)
    return attrs.field(default=default, metadata={_KIND: KEPT, _FN: fn}, **kwargs)


def _add(name: str, owner: str, a: Any, b: Any) -> Any:
    ndarray = _ndarray()
    if a is None:
        return b.copy() if isinstance(b, ndarray) else b
    if b is None:
        return a
    if isinstance(a, ndarray) and isinstance(b, ndarray) and a.shape != b.shape:
        raise InvalidParameterError(
            f"Cannot merge {owner} states: the additive field {name!r} has shapes {a.shape} and {b.shape}."
        )
    return a + b


def _concat(name: str, owner: str, a: Any, b: Any) -> Any:
    ndarray = _ndarray()
    if isinstance(a, ndarray) and isinstance(b, ndarray):
        import numpy as np  # deferred: numpy, only once a value is an array (a tally of ints never imports it)

        return np.concatenate([a, b], axis=0)
    if isinstance(a, tuple) and isinstance(b, (tuple, list)):
        return a + tuple(b)
    if isinstance(a, list) and isinstance(b, (tuple, list)):
        return a + list(b)
    raise InvalidParameterError(
        f"Cannot merge {owner} states: the gathered field {name!r} holds {type(a).__name__} and "
        f"{type(b).__name__}; expected tuples, lists or numpy arrays."
    )


class Tally:
    """Base of assay's states: an ``attrs`` class whose fields declare how they merge.

    Subclass it with ``@attrs.frozen`` (results) or ``@attrs.define`` (streaming states)
    and declare every field with :func:`additive`, :func:`gathered`, :func:`merged_by` or
    :func:`kept`. An undeclared field must be equal in both operands.

    Methods
    -------
    merge(*others)
        A new state: ``self`` merged with ``others``, left to right (shard order).
    a + b, sum(states)
        ``a.merge(b)``; ``0 + a`` is ``a`` so that ``sum`` starts.
    """

    __slots__ = ()

    @classmethod
    def tally_fields(cls) -> dict[str, str]:
        """``{field name: kind}`` for every attrs field (kind ``None`` when undeclared)."""
        return {f.name: f.metadata.get(_KIND) for f in attrs.fields(cls)}  # type: ignore[arg-type]

    def merge_values(self, other: Tally) -> dict[str, Any]:
        """The merged field values of ``self`` and ``other`` (keyword arguments of the class)."""
        owner = type(self).__name__
        if not isinstance(other, type(self)) and not isinstance(self, type(other)):
            raise InvalidParameterError(f"Cannot merge a {type(other).__name__} into a {owner}.")
        out: dict[str, Any] = {}
        for f in attrs.fields(type(self)):  # type: ignore[arg-type]
            a, b = getattr(self, f.name), getattr(other, f.name)
            kind = f.metadata.get(_KIND)
            if kind == ADDITIVE:
                value = _add(f.name, owner, a, b)
            elif kind == GATHERED:
                value = _concat(f.name, owner, a, b)
            elif kind == MERGED:
                value = f.metadata[_FN](a, b)
            elif kind == KEPT:
                fn = f.metadata.get(_FN)
                value = fn(a, b) if fn is not None else a
            else:
                if not values_equal(a, b):
                    raise InvalidParameterError(
                        f"Cannot merge {owner} states whose field {f.name!r} differs ({a!r:.60} and {b!r:.60})."
                    )
                value = a
            out[f.name if f.init else "_skip_" + f.name] = value
        return {k: v for k, v in out.items() if not k.startswith("_skip_")}

    def merge(self, *others: Self) -> Self:
        """``self`` merged with ``others`` in the order given (shard order); a new state."""
        state = self
        for other in others:
            state = state._merged_with(other)
        return state

    def _merged_with(self, other: Self) -> Self:
        values = self.merge_values(other)
        return type(self)(**{_init_name(type(self), k): v for k, v in values.items()})

    def __add__(self, other: object) -> Self:
        if not isinstance(other, Tally):
            return NotImplemented
        return self._merged_with(other)  # type: ignore[arg-type]

    def __radd__(self, other: object) -> Self:
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:  # sum() starts at 0
            return self
        return NotImplemented

    @classmethod
    def total(cls, states: Iterable[Self]) -> Self:
        """The merge of ``states`` in the order given (at least one state)."""
        items = list(states)
        if not items:
            raise InvalidParameterError(f"{cls.__name__}.total needs at least one state; got none.")
        return items[0].merge(*items[1:])


def _init_name(cls: type, name: str) -> str:
    """The ``__init__`` keyword of attribute ``name`` (attrs strips a leading underscore)."""
    for f in attrs.fields(cls):
        if f.name == name:
            return f.alias if getattr(f, "alias", None) else name.lstrip("_")
    return name
