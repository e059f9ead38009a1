"""Checks of parameters and arrays, in one place, so that every error reads the same.

In the style of scikit-learn's ``validate_params`` / ``check_array``: every plugin calls
these instead of writing its own ``isinstance`` tests. Every failure is an
:class:`~assay.errors.InvalidParameterError` (a ``ValueError`` and a ``TypeError``) whose
message names the owner (the metric or function), the parameter, what was expected, what
was received and, for arrays, the FIRST offending position::

    ece: `probs[3, 1]` is NaN; expected finite probabilities.
    The 'seed' parameter of evaluate must be an integer >= 0. Got 1.9 (float) instead.

Degenerate but valid input (no examples, one class, a zero denominator) is not an error:
:func:`undefined_metric` returns NaN with an :class:`UndefinedMetricWarning`.

The array checks are vectorised and cheap on valid input: finiteness is screened with
one sum (a finite sum proves every value finite, as in scikit-learn's
``_assert_all_finite``), probabilities with one row sum per row; the offending position
is searched only when a screen fails.

>>> check_seed(7)
7
>>> check_seed(1.9)
Traceback (most recent call last):
...
assay.errors.InvalidParameterError: The 'seed' parameter must be an integer >= 0 (or None). Got 1.9 (float) instead.
>>> check_probabilities([[0.5, float("nan")]], name="probs", owner="ece")
Traceback (most recent call last):
...
assay.errors.InvalidParameterError: ece: `probs[0, 1]` is NaN; expected finite probabilities.
"""

from __future__ import annotations

import functools
import math
import numbers
import sys
import warnings
from collections.abc import Collection, Hashable, Iterable, Sequence
from typing import Any, Literal, overload

from assay.deferred import np
from assay.errors import InvalidParameterError, UndefinedMetricWarning

__all__ = [
    "PROB_ATOL",
    "UndefinedMetricWarning",
    "as_array",
    "check_array",
    "check_bool",
    "check_choice",
    "check_finite",
    "check_int",
    "check_labels",
    "check_number",
    "check_probabilities",
    "check_same_length",
    "check_seed",
    "check_str",
    "check_type",
    "first_index",
    "probability_error",
    "undefined_metric",
]

#: tolerance on the sum of a probability row (``|sum - 1| <= PROB_ATOL``)
PROB_ATOL = 1e-4

_KIND_NAMES = {"b": "boolean", "i": "integer", "u": "unsigned integer", "f": "real", "c": "complex",
               "U": "string", "S": "bytes", "O": "object", "M": "datetime", "m": "timedelta", "V": "void"}


# ---------------------------------------------------------------------------- helpers
def _got(value: Any) -> str:
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({type(value).__name__})"


def _param_error(name: str, owner: str | None, expected: str, value: Any) -> InvalidParameterError:
    of = f" of {owner}" if owner else ""
    return InvalidParameterError(f"The {name!r} parameter{of} must be {expected}. Got {_got(value)} instead.")


def _where(owner: str | None) -> str:
    return f"{owner}: " if owner else ""


def _position(name: str, index: Sequence[int] | int) -> str:
    idx = (index,) if isinstance(index, (int, np.integer)) else tuple(index)
    return f"`{name}[{', '.join(str(int(i)) for i in idx)}]`" if idx else f"`{name}`"


def _value_text(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        return repr(float(v)) if math.isfinite(v) else ("NaN" if math.isnan(v) else str(float(v)))
    return repr(v.item() if isinstance(v, np.generic) else v)


def undefined_metric(message: str, *, stacklevel: int = 3) -> float:
    """Warn (:class:`UndefinedMetricWarning`) and return NaN: the value of a metric undefined on its input.

    Use it for degenerate but valid input (no examples, one class only, a constant
    input), never for invalid input (NaN, inf, wrong shape: those raise).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     undefined_metric("prr: empty input; NaN.")
    nan
    """
    warnings.warn(message, UndefinedMetricWarning, stacklevel=stacklevel)
    return math.nan


# ---------------------------------------------------------------------------- parameters
def check_type(value: Any, name: str, types: type | tuple[type, ...], *, owner: str | None = None,
               expected: str | None = None) -> Any:
    """Return ``value`` if it is an instance of ``types`` (a ``bool`` never passes as a number)."""
    types_t = types if isinstance(types, tuple) else (types,)
    numeric = any(issubclass(t, numbers.Number) for t in types_t) and bool not in types_t
    if not isinstance(value, types_t) or (numeric and isinstance(value, (bool, np.bool_))):
        what = expected or "of type " + " or ".join(t.__name__ for t in types_t)
        raise _param_error(name, owner, what, value)
    return value


def check_str(value: Any, name: str, *, owner: str | None = None, allow_empty: bool = True, hint: str = "") -> str:
    """Return ``value`` if it is a ``str`` (non-empty unless ``allow_empty``); ``hint`` is appended to the error."""
    if not isinstance(value, str) or (not allow_empty and not value):
        error = _param_error(name, owner, "a str" if allow_empty else "a non-empty str", value)
        raise InvalidParameterError(f"{error}{hint}")
    return value


def check_bool(value: Any, name: str, *, owner: str | None = None) -> bool:
    """Return ``value`` as a ``bool``; only ``True`` / ``False`` (and numpy booleans) pass."""
    if not isinstance(value, (bool, np.bool_)):
        raise _param_error(name, owner, "true or false", value)
    return bool(value)


def check_choice(value: Any, name: str, choices: Collection[Any], *, owner: str | None = None) -> Any:
    """Return ``value`` if it is one of ``choices`` (scikit-learn's ``StrOptions``)."""
    try:
        ok = value in choices
    except TypeError:  # an unhashable value against a set
        ok = False
    if not ok:
        listed = ", ".join(repr(c) for c in choices)
        raise _param_error(name, owner, f"one of {{{listed}}}", value)
    return value


def _bounds_text(low: float | None, high: float | None, closed: str) -> str:
    lo = None if low is None else f"{low:g}"
    hi = None if high is None else f"{high:g}"
    lo_op = ">=" if closed in ("both", "left") else ">"
    hi_op = "<=" if closed in ("both", "right") else "<"
    if lo is not None and hi is not None:
        lb = "[" if lo_op == ">=" else "("
        rb = "]" if hi_op == "<=" else ")"
        return f" in {lb}{lo}, {hi}{rb}"
    if lo is not None:
        return f" {lo_op} {lo}"
    if hi is not None:
        return f" {hi_op} {hi}"
    return ""


def _in_bounds(v: float, low: float | None, high: float | None, closed: str) -> bool:
    if low is not None and not (v >= low if closed in ("both", "left") else v > low):
        return False
    return high is None or (v <= high if closed in ("both", "right") else v < high)


@overload
def check_int(value: Any, name: str, *, low: int | None = ..., high: int | None = ..., closed: str = ...,
              owner: str | None = ..., allow_none: Literal[False] = ...) -> int: ...
@overload
def check_int(value: Any, name: str, *, low: int | None = ..., high: int | None = ..., closed: str = ...,
              owner: str | None = ..., allow_none: bool) -> int | None: ...
def check_int(value: Any, name: str, *, low: int | None = None, high: int | None = None, closed: str = "both",
              owner: str | None = None, allow_none: bool = False) -> int | None:
    """Return ``value`` as an ``int``: an integer (numpy's too), never a ``bool`` nor a float such as 2.0.

    ``low`` / ``high`` bound it; ``closed`` is ``"both"``, ``"left"``, ``"right"`` or
    ``"neither"`` (which bounds are inclusive).
    """
    if value is None and allow_none:
        return None
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not ok or not _in_bounds(value, low, high, closed):
        expected = "an integer" + _bounds_text(low, high, closed) + (" (or None)" if allow_none else "")
        raise _param_error(name, owner, expected, value)
    return int(value)


@overload
def check_number(value: Any, name: str, *, low: float | None = ..., high: float | None = ...,
                 closed: str = ..., owner: str | None = ..., allow_none: Literal[False] = ...,
                 finite: bool = ...) -> float: ...
@overload
def check_number(value: Any, name: str, *, low: float | None = ..., high: float | None = ...,
                 closed: str = ..., owner: str | None = ..., allow_none: bool,
                 finite: bool = ...) -> float | None: ...
def check_number(value: Any, name: str, *, low: float | None = None, high: float | None = None,
                 closed: str = "both", owner: str | None = None, allow_none: bool = False,
                 finite: bool = True) -> float | None:
    """Return ``value`` as a ``float``: a real number (not a ``bool``, not NaN), finite unless ``finite=False``."""
    if value is None and allow_none:
        return None
    ok = isinstance(value, (numbers.Real, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if ok:
        v = float(value)
        ok = not math.isnan(v) and (math.isfinite(v) or not finite) and _in_bounds(v, low, high, closed)
    if not ok:
        expected = ("a finite number" if finite else "a number") + _bounds_text(low, high, closed)
        raise _param_error(name, owner, expected + (" (or None)" if allow_none else ""), value)
    return float(value)


def check_seed(seed: Any, name: str = "seed", *, owner: str | None = None, allow_none: bool = True) -> int | None:
    """Return a random seed: an integer >= 0 (``None`` too when ``allow_none``); 1.9, -1 and True are errors."""
    if seed is None and allow_none:
        return None
    ok = isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)) and seed >= 0
    if not ok:
        raise _param_error(name, owner, "an integer >= 0" + (" (or None)" if allow_none else ""), seed)
    return int(seed)


# ---------------------------------------------------------------------------- arrays
# The numpy types below are looked up on first use, not at import: numpy is imported on first use
# (assay.deferred), and the first name lookup (load_metric) validates no array.
@functools.cache
def _ragged_warning() -> type[Warning]:
    """The warning numpy < 1.25 gives (instead of raising) on a ragged nested sequence."""
    return getattr(np, "exceptions", np).VisibleDeprecationWarning


@functools.cache
def _plain_types() -> tuple[type, ...]:
    """Values that are never a foreign array (checked by type before any attribute lookup)."""
    return (np.ndarray, list, tuple, str, bytes, dict, numbers.Number, np.generic, type(None))


def _torch_tensor_type() -> Any:
    """``torch.Tensor`` when torch is already imported, else None (never imports torch)."""
    return getattr(sys.modules.get("torch"), "Tensor", None)


def _is_foreign(x: Any) -> bool:
    if isinstance(x, _plain_types()):
        return False
    tensor = _torch_tensor_type()
    return (tensor is not None and isinstance(x, tensor)) or hasattr(x, "__array__") or hasattr(x, "__dlpack__")


def _torch_to_numpy(t: Any) -> np.ndarray:
    """A host array of a torch tensor: detached, dense, moved to the CPU, with a numpy dtype."""
    torch = sys.modules["torch"]
    t = t.detach()
    if t.layout != torch.strided:  # sparse
        t = t.to_dense()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16
        t = t.float()
    return t.numpy(force=True)  # a CUDA tensor is copied to the host; conjugate / negative bits resolved


def _from_dlpack(x: Any) -> np.ndarray:
    try:
        return np.from_dlpack(x, device="cpu")  # asks the producer for a host copy if it lives on a device
    except TypeError:  # a producer of the older protocol (no dl_device / copy keywords)
        return np.from_dlpack(x)


def _scalar_or_array(v: Any) -> Any:
    return v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v


def as_array(x: Any, name: str = "x", *, owner: str | None = None) -> Any:
    """Return a foreign array as a numpy array; anything else unchanged.

    Foreign arrays are torch tensors (detached, moved to the host when on a GPU,
    ``bfloat16`` widened to ``float32``), objects with ``__array__`` (pandas, xarray,
    JAX on the CPU ...) and objects with only ``__dlpack__`` (asked for a host copy).
    A list or tuple whose first element is a foreign array has every element converted
    (0-d elements to Python scalars, so a list of scalar tensors reads as a list of numbers).
    numpy arrays, lists of numbers or strings, and scalars are returned as they are.
    torch is never imported: a tensor exists only when its caller imported torch, so the
    test is ``isinstance(x, sys.modules["torch"].Tensor)`` when torch is in
    ``sys.modules``. Every array check of this module and every metric's ``update`` (and
    :func:`assay.evaluate`) go through here.

    >>> as_array([1, 2]) == [1, 2]
    True
    >>> class Wrapped:
    ...     def __array__(self, dtype=None, copy=None):
    ...         return np.arange(3)
    >>> as_array(Wrapped())
    array([0, 1, 2])
    """
    if type(x) in (list, tuple):
        if x and _is_foreign(x[0]):
            return type(x)(_scalar_or_array(as_array(v, f"{name}[{i}]", owner=owner)) for i, v in enumerate(x))
        return x
    if not _is_foreign(x):
        return x
    tensor = _torch_tensor_type()
    try:
        if tensor is not None and isinstance(x, tensor):
            return _torch_to_numpy(x)
        if hasattr(x, "__array__"):
            try:
                return np.asarray(x)
            except (TypeError, RuntimeError, ValueError):
                if not hasattr(x, "__dlpack__"):  # a device array that refuses implicit conversion
                    raise
        return _from_dlpack(x)
    except (TypeError, RuntimeError, ValueError, BufferError) as exc:
        raise InvalidParameterError(
            f"{_where(owner)}cannot read `{name}` ({type(x).__module__}.{type(x).__name__}) as a host array: "
            f"{type(exc).__name__}: {exc}. Pass a numpy array, a list, a torch tensor, or an object with "
            "__array__ or __dlpack__."
        ) from exc


def _as_array(x: Any, name: str, owner: str | None) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    x = as_array(x, name, owner=owner)
    if isinstance(x, np.ndarray):
        return x
    if x is None:
        raise InvalidParameterError(f"{_where(owner)}`{name}` is required; got None.")
    if isinstance(x, (str, bytes, dict)) or np.isscalar(x) and not isinstance(x, (numbers.Number, np.generic)):
        raise InvalidParameterError(f"{_where(owner)}expected an array for `{name}`; got {_got(x)}.")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", _ragged_warning())
            return np.asarray(x)
    except (ValueError, TypeError, _ragged_warning()):
        raise InvalidParameterError(
            f"{_where(owner)}expected a rectangular array for `{name}`; got a ragged or mixed sequence "
            f"{_got(x)}."
        ) from None


def _all_finite(a: np.ndarray) -> bool:
    """True when every value of the real array ``a`` is finite (one sum; exact check only if it overflows)."""
    if a.dtype.kind not in "fc" or a.size == 0:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(a)  # a NaN or inf anywhere makes the sum NaN or inf
    if np.isfinite(total):
        return True
    return bool(np.isfinite(a).all())  # an overflow of finite values, or a real non-finite value


def first_index(mask: np.ndarray) -> tuple[int, ...]:
    """The position (a tuple, C order) of the first ``True`` in ``mask``."""
    flat = int(np.flatnonzero(mask.reshape(-1))[0])
    return tuple(int(i) for i in np.unravel_index(flat, mask.shape))


def check_finite(a: np.ndarray, name: str, *, owner: str | None = None, what: str = "values") -> np.ndarray:
    """Raise naming the first NaN or infinite value of ``a`` (``expected finite <what>``)."""
    if not _all_finite(a):
        pos = first_index(~np.isfinite(a))
        raise InvalidParameterError(
            f"{_where(owner)}{_position(name, pos)} is {_value_text(a[pos])}; expected finite {what}."
        )
    return a


def check_array(x: Any, name: str, *, owner: str | None = None, ndim: int | Sequence[int] | None = None,
                shape: str | None = None, kinds: str = "biuf", dtype: Any = "float64", finite: bool = True,
                low: float | None = None, high: float | None = None, allow_empty: bool = True,
                what: str = "values") -> np.ndarray:
    """Return ``x`` as a checked array (scikit-learn's ``check_array``).

    Parameters
    ----------
    x : array_like
    name : str
        The parameter, as the message names it (``probs``; positions read ``probs[3, 1]``).
    owner : str, optional
        The metric or function, at the front of the message.
    ndim : int or sequence of int, optional
        The accepted numbers of dimensions.
    shape : str, optional
        The expected shape as text for the message (``"(N, C)"``).
    kinds : str
        Accepted numpy dtype kinds (``"biuf"``: booleans, integers, reals; strings,
        objects and complex numbers are rejected).
    dtype : dtype or None
        Convert to this dtype after the checks (``None``: keep).
    finite : bool
        Reject NaN and infinite values, naming the first.
    low, high : float, optional
        Inclusive bounds of every value, naming the first value outside.
    allow_empty : bool
        ``False``: an array with no values is an error.
    what : str
        What the values are, for the message ("probabilities", "scores" ...).
    """
    a = _as_array(x, name, owner)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if a.ndim not in allowed:
            want = shape or " or ".join(f"{d}-D" for d in allowed)
            raise InvalidParameterError(f"{_where(owner)}expected `{name}` of shape {want}; got shape {a.shape}.")
    if a.dtype.kind not in kinds:
        want = " or ".join(_KIND_NAMES.get(k, k) for k in kinds)
        raise InvalidParameterError(
            f"{_where(owner)}expected {want} {what} in `{name}`; "
            f"got dtype {a.dtype} ({_KIND_NAMES.get(a.dtype.kind, '?')})."
        )
    if not allow_empty and a.size == 0:
        raise InvalidParameterError(f"{_where(owner)}`{name}` is empty (shape {a.shape}); expected at least one value.")
    if dtype is not None and a.dtype != dtype:
        a = a.astype(dtype)
    if finite:
        check_finite(a, name, owner=owner, what=what)
    if (low is not None or high is not None) and a.size:
        lo, hi = a.min(), a.max()
        if not ((low is None or lo >= low) and (high is None or hi <= high)):
            bad = np.zeros(a.shape, dtype=bool)
            if low is not None:
                bad |= ~(a >= low)
            if high is not None:
                bad |= ~(a <= high)
            pos = first_index(bad)
            raise InvalidParameterError(
                f"{_where(owner)}{_position(name, pos)} is {_value_text(a[pos])}; expected {what}"
                f"{_bounds_text(low, high, 'both')}."
            )
    return a


def probability_error(p: np.ndarray, name: str, *, owner: str | None = None, offset: int = 0,
                      rows_sum_to_one: bool = True, atol: float = PROB_ATOL,
                      axes: Sequence[str] | None = None) -> InvalidParameterError | None:
    """The error for the first value or row of ``p`` that is not a probability distribution, or None.

    Checks, in order of position: finite, in [0, 1], and (``rows_sum_to_one``, ``p`` at
    least 2-D) each row of the last axis summing to 1 within ``atol``. ``offset`` is
    added to the first index (when ``p`` is a chunk of rows of a larger array); ``axes``
    names the axes in the message (``("example", "member", "class")``).
    """
    if p.size == 0:
        return None

    def at(pos: tuple[int, ...]) -> str:
        pos = (pos[0] + offset, *pos[1:]) if pos else pos
        named = f" ({', '.join(f'{a} {i}' for a, i in zip(axes, pos))})" if axes else ""
        return _position(name, pos) + named

    finite = np.isfinite(p)
    if not finite.all():
        pos = first_index(~finite)
        return InvalidParameterError(
            f"{_where(owner)}{at(pos)} is {_value_text(p[pos])}; expected finite probabilities.")
    outside = (p < 0) | (p > 1)
    if outside.any():
        pos = first_index(outside)
        return InvalidParameterError(
            f"{_where(owner)}{at(pos)} is {_value_text(p[pos])}; expected probabilities in [0, 1]."
        )
    if rows_sum_to_one and p.ndim >= 2:
        sums = p.sum(axis=-1)
        off = np.abs(sums - 1.0) > atol
        if off.any():
            pos = first_index(off)
            row = at(pos).replace("]`", ", :]`", 1)
            return InvalidParameterError(
                f"{_where(owner)}{row} sums to {float(sums[pos])!r}; expected each row of probabilities "
                f"to sum to 1 (within {atol:g})."
            )
    return None


def check_probabilities(p: Any, name: str = "probs", *, owner: str | None = None,
                        ndim: int | Sequence[int] | None = None, shape: str | None = None,
                        rows_sum_to_one: bool = True, atol: float = PROB_ATOL, offset: int = 0) -> np.ndarray:
    """Return ``p`` as a float array of probabilities: finite, in [0, 1], rows (last axis) summing to 1.

    ``rows_sum_to_one=False`` checks the values only (binary probabilities ``(N,)``).
    The screen on valid input costs one row sum per row and a minimum (``min`` and
    ``max`` without the row sums); positions are searched only on failure.
    """
    a = check_array(p, name, owner=owner, ndim=ndim, shape=shape, dtype=None, finite=False, what="probabilities")
    if a.dtype.kind != "f":
        a = a.astype(np.float64)
    if a.size == 0:
        return a
    if rows_sum_to_one and a.ndim >= 2:
        sums = a.sum(axis=-1)
        ok = bool((np.abs(sums - 1.0) <= atol).all() and a.min() >= 0)  # NaN fails both comparisons
    else:
        ok = bool(a.min() >= 0 and a.max() <= 1)  # NaN fails
    if not ok:
        err = probability_error(a, name, owner=owner, offset=offset, rows_sum_to_one=rows_sum_to_one, atol=atol)
        if err is not None:
            raise err
    return a


def check_same_length(owner: str | None = None, /, **arrays: Any) -> int:
    """Return the common length (first axis) of the named arrays, else raise naming them all.

    >>> check_same_length("ece", probs=[[1, 0], [0, 1]], labels=[0, 1])
    2
    """
    arrays = {k: as_array(v, k, owner=owner) for k, v in arrays.items()}
    lengths = {k: (len(v) if not isinstance(v, np.ndarray) else (v.shape[0] if v.ndim else 1))
               for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"`{k}` has {n}" for k, n in lengths.items())
        raise InvalidParameterError(f"{_where(owner)}expected the same length (one entry per example); {listed}.")
    return next(iter(lengths.values()), 0)


@functools.cache
def _label_types() -> tuple[frozenset[type], frozenset[type]]:
    """The label types that are never a missing value (checked by type alone, without a per-value test), and
    the float types (one vectorised finiteness test)."""
    safe = frozenset({int, str, bool, bytes, np.int64, np.int32, np.int16, np.int8, np.uint8, np.str_, np.bool_})
    return safe, frozenset({float, np.float64, np.float32, np.float16})


def _bad_label(v: Any) -> bool:
    if v is None or not isinstance(v, Hashable):
        return True
    if isinstance(v, (float, np.floating, complex, np.complexfloating)):
        return not np.isfinite(v)
    return False


def check_labels(labels: Any, name: str = "labels", *, owner: str | None = None, integer: bool = False,
                 n_classes: int | None = None, offset: int = 0) -> Any:
    """Check class labels: hashable, no NaN, no infinity, no ``None`` (and, with ``integer``, whole numbers).

    Labels may be any hashable values (numbers, strings ...); NaN and ``None`` are missing
    values, not labels (NaN is not even equal to itself). With ``integer=True`` returns an
    ``int64`` array; ``n_classes`` then bounds them to ``[0, n_classes - 1]``. Otherwise
    returns ``labels`` unchanged. ``offset`` is added to the reported position.
    """
    labels = as_array(labels, name, owner=owner)
    if isinstance(labels, np.ndarray) and labels.dtype.kind in "biuUS":
        bad_pos = None
    elif isinstance(labels, np.ndarray) and labels.dtype.kind in "fc":
        finite = np.isfinite(labels) if not _all_finite(labels) else None
        bad_pos = None if finite is None else first_index(~finite)
    else:
        seq = labels.ravel() if isinstance(labels, np.ndarray) else labels
        if labels is None or isinstance(labels, (str, bytes)) or not isinstance(seq, Iterable):
            raise InvalidParameterError(
                f"{_where(owner)}expected a sequence of labels for `{name}`; got {_got(labels)}.")
        # fast path: a sequence of ints / strings / bools holds no missing value (one C-speed pass)
        types = set(map(type, seq))
        safe_types, float_types = _label_types()
        safe = types <= safe_types
        if not safe and types <= safe_types | float_types:  # numbers: one vectorised finiteness test
            floats = np.fromiter((v for v in seq if type(v) in float_types), dtype=np.float64)
            safe = bool(np.isfinite(floats).all())
        bad_pos = None if safe else next(((i,) for i, v in enumerate(seq) if _bad_label(v)), None)
        if bad_pos is not None and isinstance(labels, np.ndarray):
            bad_pos = tuple(int(i) for i in np.unravel_index(bad_pos[0], labels.shape))
    if bad_pos is not None:
        v = labels[bad_pos] if isinstance(labels, np.ndarray) else list(labels)[bad_pos[0]]
        shifted = (bad_pos[0] + offset, *bad_pos[1:])
        raise InvalidParameterError(
            f"{_where(owner)}{_position(name, shifted)} is {_value_text(v)}; expected a label, a hashable "
            "value (NaN, infinity and None are missing values; drop or impute them first)."
        )
    if not integer:
        return labels
    y = check_array(labels, name, owner=owner, kinds="biuf", dtype=None, finite=True, what="class labels")
    if y.dtype.kind == "f":
        frac = y != np.round(y)
        if frac.any():
            pos = first_index(frac)
            raise InvalidParameterError(
                f"{_where(owner)}{_position(name, pos)} is {_value_text(y[pos])}; expected integer class labels."
            )
    y = y.astype(np.int64, copy=False)
    if n_classes is not None and y.size and (y.min() < 0 or y.max() >= n_classes):  # screen, then locate
        outside = (y < 0) | (y >= n_classes)
        if outside.any():
            pos = first_index(outside)
            raise InvalidParameterError(
                f"{_where(owner)}{_position(name, pos)} is {int(y[pos])}; expected a class index in "
                f"[0, {n_classes - 1}]."
            )
    return y
