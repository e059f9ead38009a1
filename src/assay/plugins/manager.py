"""Plugin discovery and safe loading.

The :class:`PluginSystem` owns a pluggy ``PluginManager`` and the registries. Nothing
happens on import: the first registry lookup imports the built-in plugins (assay's own
executors and data formats, registered through the same hooks as anyone else's), then
each entry point of the group ``assay``, one at a time. A plugin that fails to import,
whose hook raises, or that registers a name another plugin already has is recorded in
``plugins`` with its error and skipped whole; the others load. Environment variables:

``ASSAY_STRICT_PLUGINS=1``
    Any such failure raises :class:`~assay.errors.PluginLoadError` instead.
``ASSAY_DISABLE_PLUGINS=a,b``
    Do not load these entry points (by entry-point or distribution name).
``ASSAY_LOAD_PLUGINS=a,b``
    Load only these entry points (built-ins always load).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import threading
import traceback
from importlib import metadata as importlib_metadata
from typing import Any, Callable, Iterator

import attrs
import pluggy

from assay.errors import DuplicateRegistrationError, InvalidParameterError, PluginLoadError
from assay.plugins import hookspecs
from assay.plugins.registry import KINDS, Entry, Registry

__all__ = [
    "BUILTIN_PLUGINS",
    "ENTRY_POINT_GROUP",
    "PluginInfo",
    "PluginSystem",
    "get_plugin_system",
    "set_plugin_system",
    "use_plugin_system",
]

ENTRY_POINT_GROUP = "assay"

#: assay's own plugins, imported on first use and registered like any other.
BUILTIN_PLUGINS: tuple[str, ...] = ("assay.executors.builtin", "assay.executors.spark", "assay.core.formats")

_VALID_NAME = re.compile(r"[A-Za-z0-9_.\-]+\Z")


@attrs.frozen
class PluginInfo:
    """What one plugin is, where it came from, what it registered, and how loading went."""

    name: str
    module: str | None = None
    distribution: str | None = None
    version: str | None = None
    builtin: bool = False
    status: str = "loaded"  # "loaded" | "failed" | "disabled"
    registered: dict[str, tuple[str, ...]] = attrs.field(factory=dict)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _env_list(var: str) -> set[str] | None:
    raw = os.environ.get(var)
    if raw is None or not raw.strip():
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _strict() -> bool:
    return os.environ.get("ASSAY_STRICT_PLUGINS", "").strip().lower() in ("1", "true", "yes", "on")


class PluginSystem:
    """Plugins and the registries they fill.

    Parameters
    ----------
    entry_points : bool
        Discover plugins from installed distributions (the ``assay`` entry-point group).
    builtins : sequence of str
        Module paths of plugins that always load first.

    Examples
    --------
    >>> from assay.plugins import PluginSystem
    >>> ps = PluginSystem(entry_points=False)
    >>> "serial" in ps.registry("executor")
    True
    """

    def __init__(self, *, entry_points: bool = True, builtins: tuple[str, ...] = BUILTIN_PLUGINS) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self._entry_points = entry_points
        self._builtins = tuple(builtins)
        self._registries: dict[str, Registry] = {kind: Registry(kind) for kind in KINDS}
        self._plugins: dict[str, PluginInfo] = {}
        self._loaded = False
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ public API
    @property
    def plugins(self) -> list[PluginInfo]:
        """Every plugin seen, in load order, including failed and disabled ones."""
        self._ensure_loaded()
        return list(self._plugins.values())

    @property
    def errors(self) -> list[PluginInfo]:
        """The plugins that failed to load."""
        return [p for p in self.plugins if p.status == "failed"]

    def registry(self, kind: str) -> Registry:
        """The registry of ``kind`` (one of :data:`~assay.plugins.registry.KINDS`)."""
        if kind not in KINDS:
            Registry(kind)  # raises with close matches
        self._ensure_loaded()
        return self._registries[kind]

    def load(self, kind: str, spec: str, /, **overrides: Any) -> Any:
        """Create the object registered as ``spec`` (``"name[key=value]"``) for ``kind``."""
        return self.registry(kind).load(spec, **overrides)

    def register_plugin(
        self,
        plugin: Any,
        name: str | None = None,
        *,
        distribution: str | None = None,
        version: str | None = None,
    ) -> PluginInfo:
        """Register a plugin object now (tests, notebooks); returns its :class:`PluginInfo`.

        Unlike entry-point plugins, a failure here always raises: the caller is present
        to see it.
        """
        self._ensure_loaded()
        name = name or getattr(plugin, "__name__", None) or f"plugin-{id(plugin)}"
        info = self._add(plugin, name, module=getattr(plugin, "__name__", None),
                         distribution=distribution, version=version, builtin=False)
        if info.status == "failed":
            raise PluginLoadError(f"Plugin {name!r} failed to register: {info.error}")
        return info

    # ------------------------------------------------------------------ loading
    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            for module_name in self._builtins:
                module = importlib.import_module(module_name)
                info = self._add(module, module_name, module=module_name, builtin=True)
                if info.status == "failed":  # a bug in assay itself: never hide it
                    raise PluginLoadError(f"Built-in plugin {module_name} failed: {info.error}")
            if self._entry_points:
                self._load_entry_points()

    def _load_entry_points(self) -> None:
        deny = _env_list("ASSAY_DISABLE_PLUGINS") or set()
        allow = _env_list("ASSAY_LOAD_PLUGINS")
        eps = importlib_metadata.entry_points(group=ENTRY_POINT_GROUP)
        seen: set[tuple[str, str]] = set()
        for ep in sorted(eps, key=lambda e: ((e.dist.name if e.dist else "") or "", e.name)):
            dist = ep.dist.name if ep.dist else None
            version = ep.dist.version if ep.dist else None
            key = (dist or "", ep.name)
            if key in seen:  # the same distribution found twice on sys.path
                continue
            seen.add(key)
            names = {ep.name} | ({dist} if dist else set())
            if names & deny or (allow is not None and not names & allow):
                why = "ASSAY_DISABLE_PLUGINS" if names & deny else "ASSAY_LOAD_PLUGINS"
                self._plugins[ep.name] = PluginInfo(
                    ep.name, module=ep.value, distribution=dist, version=version,
                    status="disabled", error=f"not loaded because of {why}",
                )
                continue
            try:
                plugin = ep.load()
            except Exception as exc:  # noqa: BLE001 - any import error is the plugin's
                self._fail(PluginInfo(ep.name, module=ep.value, distribution=dist, version=version,
                                      status="failed", error=_describe(exc, f"importing {ep.value}")), exc)
                continue
            self._add(plugin, ep.name, module=ep.value, distribution=dist, version=version, builtin=False)

    def _add(self, plugin: Any, name: str, **info: Any) -> PluginInfo:
        """Register ``plugin`` with pluggy and collect its registrations, all or nothing."""
        if name in self._plugins and self._plugins[name].status == "loaded":
            # A second plugin with the same entry-point name would shadow the first in pluggy.
            name = f"{name}@{info.get('distribution') or id(plugin)}"
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:  # noqa: BLE001 - e.g. a hookimpl that matches no hookspec
            failed = PluginInfo(name, status="failed", error=_describe(exc, "registering"), **info)
            return self._fail(failed, exc)
        staged: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
        try:
            for kind, hook_name in KINDS.items():
                for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
                    if impl.plugin is plugin:
                        register = self._register_callback(kind, name, staged[kind])
                        impl.function(**{arg: register for arg in impl.argnames})
        except Exception as exc:  # noqa: BLE001
            self.pm.unregister(plugin)
            failed = PluginInfo(name, status="failed", error=_describe(exc, "registering"), **info)
            return self._fail(failed, exc)
        for kind, entries in staged.items():
            for entry in entries.values():
                self._registries[kind]._add(entry)
        registered = {kind: tuple(sorted(entries)) for kind, entries in staged.items() if entries}
        result = PluginInfo(name, registered=registered, **info)
        self._plugins[name] = result
        return result

    def _fail(self, info: PluginInfo, exc: BaseException) -> PluginInfo:
        self._plugins[info.name] = info
        if _strict():
            raise PluginLoadError(f"Plugin {info.name!r} failed ({info.error}); "
                                  "unset ASSAY_STRICT_PLUGINS to skip it instead") from exc
        return info

    def _register_callback(self, kind: str, plugin_name: str, staged: dict[str, Entry]) -> Callable[..., None]:
        registry = self._registries[kind]

        def register(name: str, factory: Callable[..., Any], **metadata: Any) -> None:
            if not isinstance(name, str) or not _VALID_NAME.match(name):
                raise InvalidParameterError(
                    f"Plugin {plugin_name!r} registered an invalid {kind} name {name!r}: "
                    "use letters, digits, '_', '-' and '.'."
                )
            if not callable(factory):
                raise InvalidParameterError(
                    f"Plugin {plugin_name!r} registered {kind} {name!r} with a factory that is not "
                    f"callable ({type(factory).__name__})."
                )
            previous = staged.get(name) or (registry.get(name) if name in registry else None)
            if previous is not None:
                raise DuplicateRegistrationError(
                    f"{kind} {name!r} is registered by both {previous.plugin!r} and {plugin_name!r}; "
                    f"{plugin_name!r} is skipped."
                )
            staged[name] = Entry(kind, name, factory, plugin_name, dict(metadata))

        return register


def _describe(exc: BaseException, doing: str) -> str:
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" at {last[0].filename}:{last[0].lineno}" if last else ""
    return f"{type(exc).__name__} while {doing}: {exc}{where}"


_SYSTEM: PluginSystem | None = None
_SYSTEM_LOCK = threading.Lock()


def get_plugin_system() -> PluginSystem:
    """The process-wide plugin system (created, not loaded, on first call)."""
    global _SYSTEM
    if _SYSTEM is None:
        with _SYSTEM_LOCK:
            if _SYSTEM is None:
                _SYSTEM = PluginSystem()
    return _SYSTEM


def set_plugin_system(system: PluginSystem | None) -> PluginSystem | None:
    """Replace the process-wide plugin system (``None``: rediscover on next use); returns the old one."""
    global _SYSTEM
    with _SYSTEM_LOCK:
        old, _SYSTEM = _SYSTEM, system
    return old


@contextlib.contextmanager
def use_plugin_system(system: PluginSystem) -> Iterator[PluginSystem]:
    """Use ``system`` as the process-wide plugin system inside a ``with`` block."""
    old = set_plugin_system(system)
    try:
        yield system
    finally:
        set_plugin_system(old)
