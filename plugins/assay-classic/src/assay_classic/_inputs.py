"""Reading references in unitxt's layout: each instance has a list of references.

``references[i]`` may be the reference itself (``5``) or a list of references (``[5]``);
metrics that compare with one reference take the only element of a one-element list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError

__all__ = ["is_collection", "one_reference", "one_reference_each", "reference_list"]


def is_collection(value: Any) -> bool:
    """A list, tuple, set or array (not a string)."""
    return isinstance(value, (list, tuple, set, frozenset, np.ndarray))


def one_reference(value: Any, *, metric: str, index: int) -> Any:
    """The single reference of an instance: ``value`` itself, or the element of a one-element list."""
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != 1:
            raise InvalidParameterError(
                f"{metric} compares with one reference per instance; instance {index} has {len(value)} "
                f"references: {list(value)!r:.80}."
            )
        return value[0]
    return value


def one_reference_each(references: Sequence[Any] | None, *, metric: str, offset: int = 0) -> list[Any]:
    """:func:`one_reference` of every instance."""
    if references is None:
        raise InvalidParameterError(f"{metric} needs references; got None.")
    return [one_reference(r, metric=metric, index=offset + i) for i, r in enumerate(references)]


def reference_list(value: Any) -> list[Any]:
    """The references of an instance as a list (a bare reference becomes a one-element list)."""
    if isinstance(value, str) or not isinstance(value, (list, tuple, np.ndarray)):
        return [value]
    return list(value)
