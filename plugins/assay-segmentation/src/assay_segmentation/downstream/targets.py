"""``_target_`` in configs: registered names and ValUES' dotted paths, never an import by default.

A config names a task, a step or an aggregation by ``_target_`` (Hydra's key)::

    function:
      _target_: evaluation.metrics.auroc.ood_detection   # ValUES' dotted path
      base_splits_path: /data/splits                     # the target's own parameters

:func:`instantiate` looks the target up, in this order:

1. a registered name of the given kinds (``_target_: ood_detection``), called with the
   other keys as its options;
2. an *alias*: a plugin registers a name with ``aliases={"dotted.path": factory}``
   (``register("ood_detection", OodDetection, aliases={...})``); the factory takes the
   target's own parameters (ValUES' names) and returns the object;
3. only with ``allow_import=True`` (``assay run --allow-import``; a config file cannot opt in,
   see :data:`assay_segmentation.downstream.config.CODE_KEYS`), the dotted path is imported
   (``hydra.utils.get_object``) and called with the parameters, as Hydra's ``instantiate`` does.

Anything else is a :class:`~assay.errors.ConfigError` naming the key path, listing every
known target and saying how to opt in to imports. Parameters a factory does not take are
errors naming the key path and the closest parameter. Nested ``_target_`` mappings in the
parameters are instantiated first (aggregations, then tasks), so a typo deep inside is
reported at its own key path. Hydra's ``_recursive_`` / ``_convert_`` / ``_partial_`` keys
are accepted and ignored (assay always instantiates nested targets itself).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from assay.configfile import close_match
from assay.configfile import key_path as _path_text
from assay.errors import ConfigError

__all__ = ["HYDRA_KEYS", "aliases", "instantiate", "known_targets"]

#: Hydra's instantiate keys that carry no parameter
HYDRA_KEYS = ("_target_", "_recursive_", "_convert_", "_partial_", "_args_")


def aliases(kind: str) -> dict[str, tuple[str, Callable[..., Any]]]:
    """Every alias of a registered name of ``kind``: dotted path -> (registered name, factory)."""
    from assay.plugins import get_registry

    out: dict[str, tuple[str, Callable[..., Any]]] = {}
    for entry in get_registry(kind):
        for dotted, factory in dict(entry.metadata.get("aliases") or {}).items():
            out[str(dotted)] = (entry.name, factory)
    return out


def known_targets(kinds: Sequence[str]) -> list[str]:
    """The registered names and aliases ``_target_`` may name for ``kinds``."""
    from assay.plugins import get_registry

    names: set[str] = set()
    for kind in kinds:
        names.update(get_registry(kind).names())
        names.update(aliases(kind))
    return sorted(names)


def _accepted(factory: Callable[..., Any]) -> list[str] | None:
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    keys = []
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return None
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            keys.append(p.name)
    return keys


def _call(factory: Callable[..., Any], params: dict[str, Any], *, what: str, file: str,
          at: tuple[Any, ...]) -> Any:
    accepted = _accepted(factory)
    if accepted is not None:
        for key in params:
            if key not in accepted:
                raise ConfigError(f"{file}: {_path_text(at + (key,))}: unknown parameter {key!r} of {what}."
                                  f"{close_match(key, accepted)} Parameters: {', '.join(accepted) or 'none'}.")
    try:
        return factory(**params)
    except ConfigError:
        raise
    except (ValueError, TypeError, LookupError, OSError) as exc:
        raise ConfigError(f"{file}: {_path_text(at)}: {what}: {exc}") from None


def instantiate(spec: Any, *, kinds: Sequence[str], file: str, at: tuple[Any, ...] = (),
                allow_import: bool = False, nested_kinds: Sequence[str] = ("aggregation", "task")) -> Any:
    """The object a ``_target_`` mapping names (see the module docstring).

    Parameters
    ----------
    spec : mapping
        ``{"_target_": TARGET, **parameters}``.
    kinds : sequence of str
        The registry kinds the target may be (``("task",)``, ``("aggregation",)``).
    file, at
        The config file and the key path of ``spec``, for messages.
    allow_import : bool
        Import a dotted path that is neither registered nor aliased (the user opted in).
    """
    from assay.plugins import get_registry

    where = at + ("_target_",)
    if not isinstance(spec, dict) or not isinstance(spec.get("_target_"), str) or not spec["_target_"].strip():
        raise ConfigError(f"{file}: {_path_text(where)}: expected a target name such as "
                          f"'evaluation.metrics.auroc.ood_detection', got {spec!r:.80}")
    target = spec["_target_"].strip()
    params: dict[str, Any] = {}
    for key, value in spec.items():
        if key in HYDRA_KEYS:
            continue
        if isinstance(value, dict) and "_target_" in value:
            value = instantiate(value, kinds=nested_kinds, file=file, at=at + (key,), allow_import=allow_import)
        elif isinstance(value, dict) and value and all(isinstance(v, dict) and "_target_" in v
                                                       for v in value.values()):
            value = {k: instantiate(v, kinds=nested_kinds, file=file, at=at + (key, k), allow_import=allow_import)
                     for k, v in value.items()}
        params[str(key)] = value
    for kind in kinds:
        registry = get_registry(kind)
        if target in registry:
            return _call(registry.get(target).factory, params, what=f"{kind} {target!r}", file=file, at=at)
    for kind in kinds:
        found = aliases(kind).get(target)
        if found is not None:
            name, factory = found
            return _call(factory, params, what=f"{target!r} (assay {kind} {name!r})", file=file, at=at)
    if allow_import:
        try:
            from hydra.utils import get_object

            obj = get_object(target)
        except Exception as exc:  # noqa: BLE001 - hydra raises ImportError, ValueError, AttributeError, its own
            raise ConfigError(f"{file}: {_path_text(where)}: could not import {target!r}: "
                              f"{type(exc).__name__}: {exc}") from None
        if not callable(obj):
            raise ConfigError(f"{file}: {_path_text(where)}: expected a callable at {target!r}, got "
                              f"{type(obj).__name__}")
        return _call(obj, params, what=f"imported {target!r}", file=file, at=at)
    known = known_targets(kinds)
    raise ConfigError(f"{file}: {_path_text(where)}: unknown target {target!r}.{close_match(target, known)} Known "
                      f"targets ({'/'.join(kinds)}): {', '.join(known) or 'none (is assay-segmentation installed?)'}. "
                      "To import your own dotted path, opt in with 'assay run --allow-import' (in Python: "
                      "allow_import=True); it runs that module's code.")
