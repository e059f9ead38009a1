"""The class-attribute rule of :class:`~assay.metrics.Metric` subclasses (private).

A metric class may only declare what assay honours; anything else would be silently
ignored and the metric would compute something other than what its author wrote (a
unitxt ``reduction_map = {"max": ...}`` without the plugin that honours it, a misspelt
``main_scroe``). At class creation (``Metric.__init_subclass__``) every attribute the class
body defines is checked:

1. An attribute a plugin gives meaning to is passed to that plugin's **class-attribute
   handler** (below): the attributes of :data:`PLUGIN_ATTRIBUTES` (unitxt's ``reduction_map``,
   ``subgroup_column``, ``process_single_instances``, ``_requirements_list`` and a
   ``compute`` that takes arguments, all honoured by assay-unitxt) always; any other
   attribute when no other rule accepts it (a handler may then accept it, or reject it with
   a better message). A plugin attribute with no handler installed is a
   :class:`~assay.errors.MissingDependencyError` naming the ``pip install``.
2. A name a base class defines (``main_score``, ``prediction_type`` ...) is an override;
   its value is type-checked (:data:`OPTION_CHECKS`).
3. Methods, properties, nested classes, private names (``_x``), dunders and constants
   (``ALL_CAPS``) are the class's own business.
4. Any other public attribute is the class's own option when a method of the class (or
   of a base) reads it, or when it is annotated in the class body
   (``relative_tolerance: float = 0``, a dataclass-like field) -- unless the name
   is a close match of a known attribute and nothing reads it (a typo). Otherwise it
   is an error naming the class, the attribute and the close matches.

Class-attribute handlers
------------------------
A plugin declares a handler per attribute name in the entry-point group
:data:`ATTRIBUTE_GROUP` (``reduction_map = "assay_unitxt.attributes:reduction_map"``), so the
core finds it without importing the plugin; the plugin is imported when a class body first
declares the attribute. ``handler(cls, attr, value)`` runs after the class is created and before
the rest of the rule: it checks ``value`` (raising :class:`~assay.errors.InvalidParameterError`
that names the class) and may adapt the class (set class attributes, methods, or
:attr:`~assay.metrics.InstanceMetric.instance_reduction`). :func:`register_attribute_handler`
registers one in the running process (tests, scripts).
"""

from __future__ import annotations

import difflib
import inspect
import numbers
import types
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError, MissingDependencyError
from assay.plugins._entry_points import read_entry_points

__all__ = ["ATTRIBUTE_GROUP", "OPTION_CHECKS", "PLUGIN_ATTRIBUTES", "attribute_handler", "check_class_attributes",
           "register_attribute_handler"]

#: the entry-point group of class-attribute handlers (entry point name = attribute name)
ATTRIBUTE_GROUP = "assay.metric_attributes"

#: A class-attribute handler: ``handler(cls, attr, value)`` checks the value and may adapt the class.
AttributeHandler = Callable[[type, str, Any], None]


def _takes_arguments(fn: Any) -> bool:
    """A ``compute`` with parameters besides ``self``: unitxt's per-instance / per-collection method."""
    fn = getattr(fn, "__func__", fn)
    if not callable(fn):
        return False
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    return len(params) > 1


def _always(value: Any) -> bool:
    return True


#: attributes a first-party plugin gives meaning to -> (its distribution, when a body value needs it): a class
#: body that declares one needs the plugin's handler (the distribution is the install hint when it is missing)
PLUGIN_ATTRIBUTES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "reduction_map": ("assay-unitxt", _always),
    "subgroup_column": ("assay-unitxt", _always),
    "process_single_instances": ("assay-unitxt", _always),
    "_requirements_list": ("assay-unitxt", _always),
    # assay's compute() is the streaming one; compute(self, references, prediction, task_data) is unitxt's
    "compute": ("assay-unitxt", _takes_arguments),
}

_handlers: dict[str, AttributeHandler] = {}
_declared: dict[str, Any] | None = None  # entry points of ATTRIBUTE_GROUP by name, read on first need


def register_attribute_handler(name: str, handler: AttributeHandler) -> None:
    """Give the class attribute ``name`` a handler in this process (plugins declare theirs as entry points)."""
    if not isinstance(name, str) or not name.isidentifier() or not callable(handler):
        raise InvalidParameterError(
            f"register_attribute_handler needs an attribute name and a callable handler(cls, attr, value); got "
            f"{name!r}, "
            f"{handler!r:.60}.")
    _handlers[name] = handler


def _declared_handlers() -> dict[str, Any]:
    global _declared
    if _declared is None:
        points: Any = read_entry_points([ATTRIBUTE_GROUP])
        if points is None:  # a layout the lean reader does not read: importlib.metadata's answer
            import importlib.metadata  # deferred: importlib.metadata, 25 ms to import, only on this rare path

            points = importlib.metadata.entry_points(group=ATTRIBUTE_GROUP)
        _declared = {}
        for point in points:
            _declared.setdefault(point.name, point)
    return _declared


def attribute_handler(name: str) -> AttributeHandler | None:
    """The handler of class attribute ``name``: registered in this process, else declared by an installed plugin."""
    handler = _handlers.get(name)
    if handler is not None:
        return handler
    point = _declared_handlers().get(name)
    if point is None:
        return None
    try:
        loaded: AttributeHandler = point.load()
    except Exception as exc:  # a broken plugin is named, with its own error
        raise InvalidParameterError(
            f"The handler of the metric class attribute {name!r} ({point.value}, entry point group "
            f"{ATTRIBUTE_GROUP!r}) failed to load: {type(exc).__name__}: {exc}") from exc
    _handlers[name] = loaded
    return loaded

# the names prediction_type accepts as strings (None: any type; "array": np.ndarray, looked up when named, as
# numpy is imported on first use)
_STR_TYPES: dict[str, Any] = {"int": int, "float": float, "str": str, "bool": bool, "list": list,
                               "dict": dict, "tuple": tuple, "any": None, "array": "array"}


def _resolve_type(tp: Any) -> Any:
    if isinstance(tp, str):
        if tp.lower() not in _STR_TYPES:
            raise InvalidParameterError(
                f"prediction_type {tp!r} is not understood; use a type such as int, float, str, "
                f"list[str], np.ndarray, or one of {sorted(_STR_TYPES)}."
            )
        found = _STR_TYPES[tp.lower()]
        return np.ndarray if found == "array" else found
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
    "single_reference_per_prediction": (_is_bool, "a bool"),
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


def _plugin_attribute(cls: type, attr: str, value: Any) -> None:
    """Run the handler of a :data:`PLUGIN_ATTRIBUTES` attribute, or name the plugin to install."""
    handler = attribute_handler(attr)
    if handler is None:
        dist = PLUGIN_ATTRIBUTES[attr][0]
        err = MissingDependencyError(dist, purpose=f"the attribute {attr!r} of metric class {cls.__qualname__} "
                                                   f"(module {cls.__module__})")
        raise err
    handler(cls, attr, value)


def check_class_attributes(cls: type, root: type) -> None:
    """Raise :class:`InvalidParameterError` if the body of ``cls`` declares an attribute assay would ignore.

    Runs the class-attribute handlers of plugins first (see the module's docstring).
    """
    own = cls.__module__.startswith("assay.")  # assay's own bases declare nothing a plugin handles
    body = dict(vars(cls))
    annotations = body.get("__annotations__", {}) or {}
    if not own:
        for attr in list(body):
            plugin = PLUGIN_ATTRIBUTES.get(attr)
            if plugin is not None and plugin[1](body[attr]):
                _plugin_attribute(cls, attr, body[attr])
        body = dict(vars(cls))  # a handler may have adapted the class (unitxt's compute -> compute_instance)
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
        if attr in PLUGIN_ATTRIBUTES and not own:
            continue  # handled above (or, compute(self), the streaming method)
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
        if attr in annotations and not difflib.get_close_matches(attr, known_public, n=1, cutoff=0.8):
            continue  # a declared option of the class's own (dataclass-like field)
        handler = None if own else attribute_handler(attr)
        if handler is not None:  # a plugin knows this name (and accepts it, or says what to do instead)
            handler(cls, attr, value)
            continue
        close = difflib.get_close_matches(attr, known_public, n=3, cutoff=0.8)
        if close:
            raise _fail(cls, attr, f"this is not an attribute assay's {root.__name__} knows and nothing reads it; "
                                   f"did you mean {', '.join(repr(c) for c in close)}?")
        hint = difflib.get_close_matches(attr, known_public, n=3, cutoff=0.6)
        raise _fail(cls, attr, "this attribute is not supported by assay: no base class knows it and no method of "
                               "the class reads it, so it would be silently ignored. If it is an option of your "
                               f"own, read it in your methods or annotate it ({attr}: type = value); private "
                               f"helpers start with '_'." + (f" Close matches: {', '.join(hint)}." if hint else ""))
