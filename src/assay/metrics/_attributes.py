"""The class-attribute rule of :class:`~assay.metrics.Metric` subclasses (private).

A metric class may only declare what assay honours; anything else would be silently
ignored and the metric would compute something other than what its author wrote (a
unitxt ``reduction_map = {"max": ...}``, a misspelt ``main_scroe``). At class creation
(``Metric.__init_subclass__``) every attribute the class body defines is checked:

1. unitxt options assay honours (:data:`UNITXT_OPTIONS`: ``single_reference_per_prediction``,
   ``_requirements_list``, ``process_single_instances``, ``n_resamples``) are type-checked.
   A name assay knows to be unsupported (:data:`UNSUPPORTED`: unitxt options assay does
   not implement) is an error that says what to do instead.
2. ``reduction_map`` is honoured only with the reductions the class lists in
   ``_supported_reductions`` (``InstanceMetric`` / ``BulkInstanceMetric``: ``"mean"``,
   ``"max"``, ``"median"``, ``"weighted_win_rate"``: a list of score names; ``"group_mean"``:
   unitxt's ``{"agg_func": [...], "score_fields": [...]}``); anything else is an error naming
   the supported ones.
3. A name a base class defines (``main_score``, ``prediction_type`` ...) is an override;
   its value is type-checked (:data:`OPTION_CHECKS`).
4. Methods, properties, nested classes, private names (``_x``), dunders and constants
   (``ALL_CAPS``) are the class's own business.
5. Any other public attribute is the class's own option when a method of the class (or
   of a base) reads it, or when it is annotated in the class body
   (``relative_tolerance: float = 0``, unitxt's dataclass-like field) -- unless the name
   is a close match of a known attribute and nothing reads it (a typo). Otherwise it
   is an error naming the class, the attribute and the close matches.
"""

from __future__ import annotations

import difflib
import inspect
import numbers
import types
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics._unitxt import check_group_mean

__all__ = ["OPTION_CHECKS", "UNITXT_OPTIONS", "UNSUPPORTED", "check_class_attributes"]

#: unitxt (and other) metric attributes assay does not implement -> what to do instead
UNSUPPORTED: dict[str, str] = {
    "requirements_list": "declare _requirements_list = ['pip-requirement'] (unitxt's spelling) or requirements = "
                         "{'module': 'pip-distribution'} (checked with an install hint)",
    "implemented_reductions": "assay's InstanceMetric and BulkInstanceMetric honour the reductions "
                              "'mean', 'max', 'median', 'weighted_win_rate' and 'group_mean' in reduction_map",
    "confidence_level": "pass confidence_level= to assay.evaluate()",
    "reference_field": "map the field in a MetricPipeline preprocess step",
    "prediction_field": "map the field in a MetricPipeline preprocess step",
    "task_data_field": "map the field in a MetricPipeline preprocess step",
    "aggregator": "write the global score in reduce() (or use InstanceMetric's mean)",
    "aggregating_function_name": "write the global score in reduce() (or use InstanceMetric's mean)",
    "score_prefix": "score_prefix is set per instance: pass score_prefix= to the constructor or the catalog "
                    "name (name[score_prefix=m_])",
}


# the names prediction_type accepts as strings (None: any type)
_STR_TYPES: dict[str, Any] = {"int": int, "float": float, "str": str, "bool": bool, "list": list,
                               "dict": dict, "tuple": tuple, "any": None, "array": np.ndarray}


def _resolve_type(tp: Any) -> Any:
    if isinstance(tp, str):
        if tp.lower() not in _STR_TYPES:
            raise InvalidParameterError(
                f"prediction_type {tp!r} is not understood; use a type such as int, float, str, "
                f"list[str], np.ndarray, or one of {sorted(_STR_TYPES)}."
            )
        return _STR_TYPES[tp.lower()]
    return tp


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_str_seq(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)


def _check_prediction_type(v: Any) -> bool:
    try:
        _resolve_type(v)
    except InvalidParameterError:
        return False
    return True


#: known option -> (check, what it must be)
OPTION_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "name": (lambda v: v is None or isinstance(v, str), "a str or None"),
    "main_score": (lambda v: isinstance(v, str) and bool(v), "a non-empty str"),
    "higher_is_better": (_is_bool, "a bool"),
    "prediction_type": (_check_prediction_type, "a type, a typing generic (list[str]), None, or one of the type "
                                                "names int, float, str, bool, list, dict, tuple, array, any"),
    "ci_scores": (lambda v: v is None or _is_str_seq(v), "None or a list of score names"),
    "score_names": (lambda v: v is None or _is_str_seq(v), "None or a list of score names"),
    "requirements": (lambda v: isinstance(v, Mapping) and all(isinstance(k, str) and (d is None or isinstance(d, str))
                                                             for k, d in v.items()),
                     "a mapping of module name to pip distribution name"),
    "additive": (_is_bool, "a bool"),
    "vectorized": (_is_bool, "a bool"),
    "per_instance": (_is_bool, "a bool"),
    "needs_references": (_is_bool, "a bool"),
    "n_stats": (lambda v: v is None or (isinstance(v, numbers.Integral) and not isinstance(v, bool) and int(v) >= 1),
                "None or a positive int"),
    "examples": (lambda v: v is None or (isinstance(v, list) and all(isinstance(x, Mapping) for x in v)),
                 "None or a list of dicts"),
}


def _is_requirements_list(v: Any) -> bool:
    if isinstance(v, Mapping):
        return all(isinstance(k, str) and isinstance(d, str) for k, d in v.items())
    return isinstance(v, (list, tuple)) and all(isinstance(x, str) and x.strip() for x in v)


#: unitxt options assay honours on every metric class (see docs/unitxt.md)
UNITXT_OPTIONS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "single_reference_per_prediction": (_is_bool, "a bool"),
    "process_single_instances": (_is_bool, "a bool"),
    "_requirements_list": (_is_requirements_list, "a list of pip requirements (['nltk>=3.6.6']) or a dict of "
                                                  "module name to install instructions"),
    "n_resamples": (lambda v: v is None or (isinstance(v, numbers.Integral) and not isinstance(v, bool)
                                            and int(v) >= 0), "None or an int >= 0"),
}


def _is_behaviour(value: Any, cls: type) -> bool:
    """Methods, properties, descriptors and classes nested in the body: not options.

    A type assigned from elsewhere (``prediciton_type = int``) is a value, not behaviour.
    """
    if isinstance(value, type):
        return value.__qualname__.startswith(cls.__qualname__ + ".")
    return (callable(value) or isinstance(value, (property, classmethod, staticmethod, types.MemberDescriptorType))
            or hasattr(value, "__get__") and not isinstance(value, (str, bytes, numbers.Number, Mapping,
                                                                    list, tuple, set, frozenset)))


def _codes(value: Any) -> Iterator[types.CodeType]:
    funcs = []
    if isinstance(value, (classmethod, staticmethod)):
        funcs.append(value.__func__)
    elif isinstance(value, property):
        funcs.extend(f for f in (value.fget, value.fset, value.fdel) if f is not None)
    elif inspect.isfunction(value):
        funcs.append(value)
    for f in funcs:
        code = getattr(f, "__code__", None)
        stack = [code] if code is not None else []
        while stack:
            c = stack.pop()
            yield c
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


def _names_read(cls: type) -> set[str]:
    """Attribute names (and string constants) used by the methods of ``cls`` and its non-assay bases."""
    out: set[str] = set()
    for klass in cls.__mro__:
        if klass is object or klass.__module__.startswith("assay.metrics."):
            continue  # assay's own bases: what they read, they define (and it is in ``known``)
        for value in vars(klass).values():
            for code in _codes(value):
                out.update(code.co_names)
                out.update(k for k in code.co_consts if isinstance(k, str) and k.isidentifier())
    return out


def _fail(cls: type, attr: str, why: str) -> InvalidParameterError:
    return InvalidParameterError(f"Metric class {cls.__qualname__} (module {cls.__module__}) declares {attr!r}: {why}")


def _check_reduction_map(cls: type, value: Any) -> None:
    supported = tuple(getattr(cls, "_supported_reductions", ()))
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise _fail(cls, "reduction_map", f"it must be a dict such as {{'mean': ['accuracy']}}; got "
                                          f"{type(value).__name__} {value!r:.80}.")
    bad = [k for k in value if k not in supported]
    if bad:
        honoured = (f"assay honours {', '.join(repr(r) for r in supported)}" if supported
                    else f"{cls.__qualname__} is not an InstanceMetric or BulkInstanceMetric, so no reduction_map "
                         "is honoured (write the global score in reduce())")
        raise _fail(cls, "reduction_map", f"the reduction(s) {', '.join(repr(k) for k in bad)} are not supported by "
                                          f"assay; {honoured}.")
    seen: dict[str, str] = {}
    for k, names in value.items():
        if k == "group_mean":
            check_group_mean(names, lambda why: _fail(cls, "reduction_map", why))
            if len(value) > 1:
                raise _fail(cls, "reduction_map", "'group_mean' cannot be combined with other reductions in one "
                                                  "class (its global scores are group aggregates); declare a second "
                                                  "metric class for the other reduction.")
            main = vars(cls).get("main_score", getattr(cls, "main_score", None))
            names = list(names.get("score_fields") or [main])
        if not _is_str_seq(names) or not names:
            raise _fail(cls, "reduction_map", f"reduction {k!r} must list score names (e.g. ['accuracy']); got "
                                              f"{names!r:.80}.")
        for name in names:
            if name in seen and seen[name] != k:
                raise _fail(cls, "reduction_map", f"score {name!r} is listed under both {seen[name]!r} and {k!r}; "
                                                  "one global score cannot have two reductions.")
            seen[name] = k
    main = vars(cls).get("main_score", getattr(cls, "main_score", None))
    if isinstance(main, str) and main not in seen:
        raise _fail(cls, "reduction_map", f"main_score {main!r} is not among the reduced scores {list(seen)}.")


def check_class_attributes(cls: type, root: type) -> None:
    """Raise :class:`InvalidParameterError` if the body of ``cls`` declares an attribute assay would ignore."""
    body = vars(cls)
    annotations = body.get("__annotations__", {}) or {}
    known: set[str] = set()
    for base in cls.__mro__[1:]:
        known.update(vars(base))
        known.update(getattr(base, "__annotations__", {}) if "__annotations__" in vars(base) else {})
    known_public = sorted(k for k in known if not k.startswith("_"))
    read: set[str] | None = None
    for attr in list(body) + [a for a in annotations if a not in body]:
        if attr.startswith("__") and attr.endswith("__"):
            continue
        value = body.get(attr)
        if attr in UNITXT_OPTIONS:
            option = UNITXT_OPTIONS[attr]
            if attr == "process_single_instances" and attr not in known and not cls.__module__.startswith("assay."):
                raise _fail(cls, attr, "only a GlobalMetric honours it (an InstanceMetric or BulkInstanceMetric "
                                       "always has instance scores); set per_instance = False to skip instance "
                                       "scores of a Metric.")
            if attr in body and not option[0](value):
                raise _fail(cls, attr, f"it must be {option[1]}; got {type(value).__name__} {value!r:.80}.")
            continue
        if attr in UNSUPPORTED:
            raise _fail(cls, attr, f"this attribute is not supported by assay (it would be ignored); "
                                   f"{UNSUPPORTED[attr]}.")
        if attr == "reduction_map":
            _check_reduction_map(cls, value)
            continue
        if attr in known:
            check = OPTION_CHECKS.get(attr)
            if check is not None and attr in body and not _is_behaviour(value, cls) and not check[0](value):
                raise _fail(cls, attr, f"it must be {check[1]}; got {type(value).__name__} {value!r:.80}.")
            continue
        if attr.startswith("_") or attr.isupper() or (attr in body and _is_behaviour(value, cls)):
            continue
        if read is None:
            read = _names_read(cls)
        if attr in read:
            continue  # an option of the class's own, read by its methods
        close = difflib.get_close_matches(attr, known_public, n=3, cutoff=0.8)
        if close:
            raise _fail(cls, attr, f"this is not an attribute assay's {root.__name__} knows and nothing reads it; "
                                   f"did you mean {', '.join(repr(c) for c in close)}?")
        if attr in annotations:
            continue  # a declared option of the class's own (dataclass-like field)
        hint = difflib.get_close_matches(attr, known_public, n=3, cutoff=0.6)
        raise _fail(cls, attr, "this attribute is not supported by assay: no base class knows it and no method of "
                               "the class reads it, so it would be silently ignored. If it is an option of your "
                               f"own, read it in your methods or annotate it ({attr}: type = value); private "
                               f"helpers start with '_'." + (f" Close matches: {', '.join(hint)}." if hint else ""))
