"""``add_to_catalog``: store an object as a declarative catalog entry that ``load_metric`` finds.

unitxt's ``add_to_catalog(metric, "metrics.sum_accuracy", overwrite=True)`` runs as written.
The entry is data, never code: the class (its registered name, qualified by the plugin's
distribution, or the dotted path of a class defined in the loading process) and the
constructor's arguments, as JSON (see :mod:`assay.plugins._catalog_files` for the format and
the folders searched). Written atomically through :mod:`assay.jsonio`.

>>> import assay, tempfile
>>> folder = tempfile.mkdtemp()
>>> _ = assay.add_to_catalog(assay.load_metric("exact_match[ignore_case=true]"), "metrics.em_nocase",
...                          catalog_path=folder)
>>> assay.load_metric("metrics.em_nocase").ignore_case
True
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

from assay.errors import InvalidParameterError
from assay.jsonio import write_json_atomic
from assay.plugins._catalog_files import (
    CATALOG_ENV,
    ENTRY_VERSION,
    build_object,
    builtin_type_name,
    catalog_paths,
    check_entry_name,
    default_catalog_path,
    entry_file,
    register_local_catalog,
)
from assay.plugins.manager import get_plugin_system

__all__ = [
    "CATALOG_ENV",
    "add_to_catalog",
    "catalog_entry",
    "catalog_paths",
    "default_catalog_path",
    "register_local_catalog",
]


def _class_name(obj: Any, registry: Any) -> str:
    """The registered (qualified) name of ``type(obj)``, else its dotted class path."""
    cls = type(obj)
    if registry is not None:
        found = [e for e in registry if e.factory is cls]
        if len(found) == 1:
            return str(registry.qualified_name(found[0]))
    qual = cls.__qualname__
    if "<locals>" in qual:
        raise InvalidParameterError(
            f"Cannot store a {cls.__name__} in the catalog: the class is defined inside a function, so no "
            f"entry can name it; define it at module level or register it from a plugin."
        )
    return f"{cls.__module__}.{qual}"


def _constructor_args(obj: Any, where: str) -> dict[str, Any]:
    """The keyword arguments that rebuild ``obj``: ``obj.catalog_args()``, else the constructor's parameters."""
    own = getattr(obj, "catalog_args", None)
    if callable(own):
        return dict(own())
    try:
        params = list(inspect.signature(type(obj)).parameters.values())
    except (TypeError, ValueError):
        params = []
    args: dict[str, Any] = {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in vars(obj):
            value = vars(obj)[p.name]
        elif hasattr(type(obj), p.name) and not callable(getattr(type(obj), p.name)):
            value = getattr(obj, p.name)
        else:
            raise InvalidParameterError(
                f"Cannot store {where} ({type(obj).__name__}) in the catalog: its constructor parameter "
                f"{p.name!r} is not kept as an attribute of the same name; give the class a catalog_args() "
                "method returning its constructor arguments."
            )
        if p.default is not p.empty and _same(value, p.default):
            continue
        args[p.name] = value
    if any(p.kind is p.VAR_KEYWORD for p in params):  # dataclass-like options declared by annotation
        for klass in type(obj).__mro__:
            for key in getattr(klass, "__annotations__", {}):
                if key in vars(obj) and not key.startswith("_") and key not in args:
                    args[key] = vars(obj)[key]
    return args


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(type(a) is type(b) and a == b)
    except (TypeError, ValueError):  # an ambiguous comparison (arrays): store the value
        return False


def _encode(value: Any, registry: Any, where: str) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    type_name = builtin_type_name(value)
    if type_name is not None:
        return {"__type__": type_name}
    if isinstance(value, (list, tuple)):
        return [_encode(v, registry, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        for k in value:
            if not isinstance(k, str) or k in ("__class__", "__type__"):
                raise InvalidParameterError(f"Cannot store {where} in the catalog: key {k!r} is not allowed.")
        return {k: _encode(v, registry, f"{where}.{k}") for k, v in value.items()}
    if callable(value) and not hasattr(type(value), "catalog_args") and (
            inspect.isfunction(value) or inspect.ismethod(value) or inspect.isbuiltin(value)):
        raise InvalidParameterError(
            f"Cannot store {where} in the catalog: it is a function ({getattr(value, '__name__', value)!r}); "
            "catalog entries hold data, never code. Use a registered metric or an operator object instead."
        )
    return catalog_entry(value, registry=registry, where=where, top=False)


def catalog_entry(obj: Any, *, registry: Any = None, where: str = "the object", top: bool = True) -> dict[str, Any]:
    """The declarative entry (a JSON-able dict) that rebuilds ``obj``."""
    if registry is None:
        registry = get_plugin_system().registry("metric")
    if isinstance(obj, type) or inspect.isroutine(obj):
        raise InvalidParameterError(f"Cannot store {where} in the catalog: pass an instance, not {obj!r}.")
    args = _constructor_args(obj, where)
    spec: dict[str, Any] = {"__class__": _class_name(obj, registry),
                            "args": {k: _encode(v, registry, f"{where}.{k}") for k, v in args.items()}}
    if top:
        spec = {"assay_catalog_entry": ENTRY_VERSION, "kind": "metric", **spec}
    return spec


def add_to_catalog(artifact: Any, name: str, overwrite: bool = False,
                   catalog_path: str | os.PathLike[str] | None = None, verbose: bool = False) -> Path:
    """Store ``artifact`` (a metric) as the catalog entry ``name``, for ``load_metric(name)``.

    Parameters
    ----------
    artifact : Metric
        The metric to store. Its class must be registered by a plugin, or be a module-level
        class: a class from a plugin is stored by its registered name, any other by its
        dotted path (then the loading process must define or import it first, as in unitxt).
        Constructor arguments are read back from the attributes of the same name (or from
        ``artifact.catalog_args()``); functions are refused (entries hold data, never code).
    name : str
        Dot-separated catalog name, ``"metrics.sum_accuracy"`` (the file
        ``<catalog>/metrics/sum_accuracy.json``). A name a plugin registers is refused: the
        registered metric would always win.
    overwrite : bool
        Replace an existing entry; without it an existing entry is an error.
    catalog_path : path, optional
        The catalog folder (default: the first folder of ``ASSAY_CATALOG_PATH``, else
        :func:`default_catalog_path`). A folder given here is also searched by
        ``load_metric`` for the rest of the process.
    verbose : bool
        Print where the entry was written.

    Returns
    -------
    Path
        The entry file.

    Raises
    ------
    InvalidParameterError
        A bad name, an existing entry without ``overwrite``, a registered name, or an
        artifact that cannot be stored declaratively (the message names the argument).
    """
    check_entry_name(name)
    if not isinstance(overwrite, bool):
        raise InvalidParameterError(f"The 'overwrite' parameter of add_to_catalog must be a bool; got {overwrite!r}.")
    registry = get_plugin_system().registry("metric")
    if name in registry.names():
        raise InvalidParameterError(
            f"Cannot add {name!r} to the catalog: a plugin registers a metric of that name "
            f"({', '.join(e.source for e in registry.candidates(name))}), which load_metric would always choose; "
            "choose another name (unitxt-style names such as 'metrics.my_metric' never clash)."
        )
    if catalog_path is None:
        env = [p for p in os.environ.get(CATALOG_ENV, "").split(os.pathsep) if p.strip()]
        root = Path(env[0]).expanduser() if env else default_catalog_path()
    else:
        root = register_local_catalog(catalog_path)
    target = entry_file(root, name)
    if target.exists() and not overwrite:
        raise InvalidParameterError(
            f"Catalog entry {name!r} already exists ({target}); pass overwrite=True to replace it."
        )
    spec = catalog_entry(artifact, registry=registry, where=f"the artifact {name!r}")
    # the entry must rebuild the artifact it was made from: checked before anything is written
    rebuilt = build_object(spec, target, registry, "entry")
    if catalog_entry(rebuilt, registry=registry, where=f"the artifact {name!r}") != spec:
        raise InvalidParameterError(
            f"Cannot store {name!r}: the entry does not rebuild the same {type(artifact).__name__} (an option was "
            "changed after construction, or the constructor keeps it under another name); give the class a "
            "catalog_args() method."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(target, spec)
    if verbose:
        print(f"Added {name!r} to the catalog: {target}")
    return target
