"""Plugin discovery and safe loading.

The :class:`PluginSystem` owns a pluggy ``PluginManager`` and the registries. Nothing
happens on import. Plugins load on demand: the first lookup of a name imports the built-in
plugins (assay's own executors and data formats, registered through the same hooks as
anyone else's) and every plugin that declares no names, then the plugins that declare that
name (:mod:`assay.plugins.declarations`: one entry point per name, in the group of its kind),
and nothing else; a name no plugin declares, a listing of a registry (``names()``,
iteration), :attr:`PluginSystem.plugins` (``assay plugins``) and ``ASSAY_STRICT_PLUGINS``
load every entry point of the group ``assay``, one at a time, in order of distribution.

What can go wrong with a third-party plugin, and what assay does:

- it fails to import, or a hook raises (anything, ``SystemExit`` and ``KeyboardInterrupt``
  included, but not the user's own Ctrl-C), registers a bad name or a non-callable
  factory, registers one name twice, or returns a value instead of calling ``register``;
  or it defines a hook assay does not know (``assay_register_metricz``), a
  ``hookwrapper`` / ``wrapper`` hook, or a hook without the ``register`` argument: the
  plugin is recorded as ``failed`` with the reason and none of its names are registered;
  the others load;
- it registers a name another plugin registered too: both stay loaded, the name is
  ambiguous (looking it up plainly is an :class:`~assay.errors.AmbiguousNameError`;
  ``"distribution:name"`` chooses), and both plugins' ``clashes`` say so;
- it replaces public functions or attributes of assay: recorded in its ``replaced``, and a
  :class:`~assay.errors.PluginWarning` naming the plugin and the names is issued when it
  loads (the ``assay`` command prints its one summary line instead).

:func:`problems_summary` gives the one warning line the ``assay`` command prints for these.
Anything a plugin prints while it loads goes to stderr. Environment variables:

``ASSAY_STRICT_PLUGINS=1``
    Any such problem (failure, clash, replaced assay name) raises
    :class:`~assay.errors.PluginLoadError` instead.
``ASSAY_DISABLE_PLUGINS=a,b``
    Do not load these entry points (by entry-point or distribution name).
``ASSAY_LOAD_PLUGINS=a,b``
    Load only these entry points (built-ins always load).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import importlib
import os
import re
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pluggy

from assay.errors import DuplicateRegistrationError, InvalidParameterError, PluginLoadError, PluginWarning
from assay.plugins import hookspecs, patches
from assay.plugins.declarations import DECLARATION_GROUPS, ENTRY_POINT_GROUP, GROUPS, Source, read_sources
from assay.plugins.guard import is_real_interrupt, stdout_to_stderr, watch_interrupts
from assay.plugins.names import split_qualifier
from assay.plugins.registry import KINDS, NAMESPACE_HOOKS, Entry, Registry

__all__ = [
    "BUILTIN_DECLARATIONS",
    "BUILTIN_PLUGINS",
    "COMMAND_GROUP",
    "ENTRY_POINT_GROUP",
    "PluginInfo",
    "PluginSystem",
    "get_plugin_system",
    "problems_summary",
    "set_plugin_system",
    "use_plugin_system",
    "warns_about_plugin_problems",
]

#: Entry-point group where a distribution declares the ``assay`` commands its plugin registers: the entry
#: point's name is the command, its value the module of the distribution's ``assay`` entry point that
#: registers it (``parse-eval = "assay_parsing.plugin"``). ``assay NAME`` then loads that plugin alone
#: (:meth:`PluginSystem.load_command`). The other kinds have groups of their own
#: (:data:`assay.plugins.declarations.DECLARATION_GROUPS`).
COMMAND_GROUP = DECLARATION_GROUPS["command"]

#: assay's own plugins, imported on first use and registered like any other.
BUILTIN_PLUGINS: tuple[str, ...] = ("assay.executors.builtin", "assay.executors.spark", "assay.core.formats",
                                    "assay.core.array_formats", "assay.demo.builtin")

#: the names each built-in plugin registers, declared as the installed plugins declare theirs (a test checks them
#: against what the modules register): a lookup imports only the built-ins that declare the name, so
#: ``load_metric("accuracy")`` imports no executor. A built-in module missing here loads on the first lookup.
BUILTIN_DECLARATIONS: dict[str, dict[str, frozenset[str]]] = {
    "assay.executors.builtin": {"executor": frozenset({"dask", "processes", "serial", "threads"})},
    "assay.executors.spark": {"executor": frozenset({"spark"})},
    "assay.core.formats": {"data_format": frozenset({"jsonl"})},
    "assay.core.array_formats": {"data_format": frozenset({"nifti", "npy"})},
    "assay.demo.builtin": {"demo_section": frozenset({"metrics"})},
}

_VALID_NAME = re.compile(r"[A-Za-z0-9_.\-]+\Z")
_HOOK_NAMES = tuple(KINDS.values()) + tuple(NAMESPACE_HOOKS.values())


@attrs.frozen
class PluginInfo:
    """What one plugin is, where it came from, what it registered, and how loading went.

    ``clashes`` maps kind -> name -> the other plugins that registered that name too;
    ``replaced`` lists the public assay names the plugin replaced while loading.
    """

    name: str
    module: str | None = None
    distribution: str | None = None
    version: str | None = None
    builtin: bool = False
    status: str = "loaded"  # "loaded" | "failed" | "disabled"
    registered: dict[str, tuple[str, ...]] = attrs.field(factory=dict)
    error: str | None = None
    clashes: dict[str, dict[str, tuple[str, ...]]] = attrs.field(factory=dict)
    replaced: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _env_list(var: str) -> set[str] | None:
    raw = os.environ.get(var)
    if raw is None or not raw.strip():
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _strict() -> bool:
    return os.environ.get("ASSAY_STRICT_PLUGINS", "").strip().lower() in ("1", "true", "yes", "on")


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _listing(items: list[str], most: int = 3) -> str:
    """``a, b, c and 2 more``: the first ``most`` items of a warning line."""
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def _who(info: PluginInfo) -> str:
    """A plugin as a warning line names it: its entry-point name, and its distribution when that differs."""
    if info.distribution and info.distribution != info.name:
        return f"{info.name} from {info.distribution}"
    return info.name


def _hook_problems(pm: pluggy.PluginManager, plugin: Any) -> list[str]:
    """What assay cannot call among ``plugin``'s hooks (pluggy has registered it already)."""
    problems: list[str] = []
    for caller in pm.get_hookcallers(plugin) or []:
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin:
                continue
            if not caller.has_spec():
                if impl.optionalhook:  # pluggy's "may be absent from this host": allowed
                    continue
                close = difflib.get_close_matches(caller.name, _HOOK_NAMES, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]}?)" if close else f" (assay's hooks: {', '.join(_HOOK_NAMES)})"
                problems.append(f"unknown hook {caller.name}{hint}")
            elif impl.hookwrapper or impl.wrapper:
                kind = "hookwrapper" if impl.hookwrapper else "wrapper"
                problems.append(f"hook {caller.name} is a {kind}: assay calls each plugin's registration "
                                "hooks on their own, so wrappers are not supported; drop "
                                f"{kind}=True and call register(name, factory) directly")
            elif "register" not in impl.argnames:
                problems.append(f"hook {caller.name} takes no 'register' argument, so it cannot register anything")
    if not problems:
        try:
            pm.check_pending()  # pluggy's own check; earlier failed plugins were unregistered
        except pluggy.PluginValidationError as exc:
            problems.append(str(exc))
    return problems


def _unmarked_hooks(plugin: Any) -> list[str]:
    """Functions named like an assay hook that lack ``@hookimpl`` (pluggy ignores them silently)."""
    problems = []
    for attr in sorted(getattr(plugin, "__dict__", {})):
        value = getattr(plugin, attr, None)
        if attr.startswith("assay_register") and callable(value) and not hasattr(value, f"{hookspecs.PROJECT}_impl"):
            problems.append(f"function {attr} is not marked @hookimpl, so assay never calls it")
    return problems


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
    >>> ps.problems_summary() is None
    True
    """

    def __init__(self, *, entry_points: bool = True, builtins: tuple[str, ...] = BUILTIN_PLUGINS) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self._entry_points = entry_points
        self._builtins = tuple(builtins)
        self._registries: dict[str, Registry] = {kind: Registry(kind, resolve=self._resolve) for kind in KINDS}
        self._plugins: dict[str, PluginInfo] = {}
        #: every plugin is loaded (or being loaded): lookups load nothing more
        self._loaded = False
        #: the built-in modules loaded so far
        self._loaded_builtins: set[str] = set()
        #: (distribution, entry-point name) of the entry points loaded (or tried, or disabled) so far
        self._loaded_entry_points: set[tuple[str, str]] = set()
        #: the installed entry points with their declarations (read on first need), and the declarations whose
        #: module is no ``assay`` entry point of their distribution
        self._source_list: list[Source] | None = None
        self._stale_declarations: list[Any] = []
        #: (kind, name) lookups whose plugins are loaded
        self._resolved: set[tuple[str, str | None]] = set()
        self._lock = threading.RLock()
        self._interrupted: Callable[[], bool] = lambda: False

    # ------------------------------------------------------------------ public API
    @property
    def loaded(self) -> bool:
        """Whether every plugin has been loaded (``assay plugins``, a listing, a name no plugin declares);
        reading this loads nothing. A lookup of a declared name loads only the plugins that declare it."""
        return self._loaded

    def loaded_plugins(self) -> list[PluginInfo]:
        """The plugins loaded (or tried, or disabled) so far, in load order; loads nothing."""
        return list(self._plugins.values())

    def sources(self) -> list[Source]:
        """Every installed ``assay`` entry point with the names it declares (:mod:`assay.plugins.declarations`);
        reads the installed metadata, imports no plugin."""
        with self._lock:
            return list(self._sources()) if self._entry_points else []

    def stale_declarations(self) -> list[Any]:
        """Declarations whose value is no ``assay`` entry point of their distribution (each with ``group``,
        ``name``, ``value``, ``dist_name``); reads the installed metadata, imports no plugin."""
        self.sources()
        return list(self._stale_declarations)

    @property
    def plugins(self) -> list[PluginInfo]:
        """Every plugin seen, in load order, including failed and disabled ones."""
        self._ensure_loaded()
        return list(self._plugins.values())

    @property
    def errors(self) -> list[PluginInfo]:
        """The plugins that failed to load."""
        return [p for p in self.plugins if p.status == "failed"]

    def clashes(self) -> dict[str, dict[str, tuple[Entry, ...]]]:
        """kind -> ambiguous name -> the entries of the plugins that registered it."""
        self._ensure_loaded()
        return self._clashes()

    def _clashes(self) -> dict[str, dict[str, tuple[Entry, ...]]]:
        return {kind: amb for kind, reg in self._registries.items() if (amb := reg._ambiguous())}

    def problems_summary(self) -> str | None:
        """One line on what went wrong while loading plugins, naming the plugins, or None when nothing did
        (or nothing loaded).

        It covers the plugins loaded so far (after a lookup that loaded only the plugins declaring a name,
        or :meth:`load_command`, those) and loads no other.
        """
        if not self._plugins:
            return None
        infos = list(self._plugins.values())
        failed = [p for p in infos if p.status == "failed"]
        clashes = [(kind, name, found) for kind, names in self._clashes().items() for name, found in names.items()]
        replaced = [p for p in infos if p.replaced]
        parts = []
        if failed:
            parts.append(f"{_plural(len(failed), 'plugin')} failed to load ({_listing([_who(p) for p in failed])})")
        if clashes:
            parts.append(f"{_plural(len(clashes), 'name clash', 'name clashes')} ("
                         + _listing([f"{kind} {name!r}: {' and '.join(e.plugin for e in found)}"
                                     for kind, name, found in clashes]) + ")")
        if replaced:
            parts.append(f"{_plural(len(replaced), 'plugin')} replaced assay functions "
                         f"({_listing([_who(p) for p in replaced])})")
        if not parts:
            return None
        return f"assay: warning: {', '.join(parts)} (run 'assay plugins' for details)"

    def registry(self, kind: str) -> Registry:
        """The registry of ``kind`` (one of :data:`~assay.plugins.registry.KINDS`).

        Its lookups load plugins on demand: ``name in registry``, ``get``, ``load`` and ``candidates``
        load the plugins that declare the name (:meth:`_resolve`); listing it (``names()``, iterating,
        ``ambiguous()``, ``namespaces()``) loads every plugin.
        """
        if kind not in KINDS:
            Registry(kind)  # raises with close matches
        return self._registries[kind]

    def load(self, kind: str, spec: str, /, **overrides: Any) -> Any:
        """Create the object registered as ``spec`` (``"name[key=value]"`` or ``"plugin:name"``) for ``kind``."""
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
        to see it. A name another plugin registered too is not a failure: both stay and
        the returned info lists the clash (see :meth:`Registry.get`).
        """
        self._ensure_loaded()
        name = name or getattr(plugin, "__name__", None) or f"plugin-{id(plugin)}"
        module = getattr(plugin, "__name__", None)
        before = patches.take()
        with self._lock, watch_interrupts() as interrupted:
            self._interrupted = interrupted
            try:
                info, exc = self._add(plugin, name, module=module, distribution=distribution, version=version)
            finally:
                self._interrupted = lambda: False
        if info.status == "failed":
            self._plugins[info.name] = info
            raise PluginLoadError(f"Plugin {name!r} failed to register: {info.error}") from exc
        package = module.split(".")[0] if isinstance(module, str) else None
        return self._finish(info, before, package)

    def load_command(self, command: str) -> Entry | None:
        """The ``command`` entry, loading only the plugin that declares it; or None.

        A distribution may declare the commands its plugin registers in the entry-point group
        :data:`COMMAND_GROUP`. When exactly one installed ``assay`` entry point is declared for
        ``command`` and may load (``ASSAY_DISABLE_PLUGINS`` / ``ASSAY_LOAD_PLUGINS``), only it
        is loaded, and the entry it registered is returned; the other plugins, and the built-in
        ones (which register no command), load when a lookup needs them. None, with nothing more loaded,
        when the plugins are loaded already, when this system does not discover entry points,
        with ``ASSAY_STRICT_PLUGINS`` (every plugin is checked then), when no plugin or several
        declare ``command``, or when the declared plugin failed or did not register it (its
        failure is recorded): the caller then loads every plugin, as ``assay NAME`` did before.
        """
        if self._loaded or not self._entry_points or _strict():
            return None
        with self._lock:
            if self._loaded:
                return None
            declaring = [source for source in self._sources() if source.declares("command", command)]
            if len(declaring) != 1:
                return None
            source = declaring[0]
            ep = source.entry_point
            if source.key in self._loaded_entry_points or self._excluded(
                    {ep.name} | ({source.distribution} if source.distribution else set())):
                return None
            # the built-ins register no command: they load when a lookup needs them
            with watch_interrupts() as interrupted:
                self._interrupted = interrupted
                try:
                    self._load_source(source)
                finally:
                    self._interrupted = lambda: False
        found = self._registries["command"]._entries.get(command, ())
        info = self._plugins.get(source.name)
        if len(found) == 1 and found[0].plugin == source.name and info is not None and info.status == "loaded":
            return found[0]
        return None

    # ------------------------------------------------------------------ loading
    def _sources(self) -> list[Source]:
        """The installed ``assay`` entry points with their declarations, read once (nothing imported)."""
        if self._source_list is None:
            found = _entry_points(GROUPS)
            self._source_list, self._stale_declarations = read_sources(found)
        return self._source_list

    def _resolve(self, kind: str, name: str | None) -> None:
        """Load what may register ``name`` of ``kind`` (None: everything): the plugins that declare it.

        First the built-ins that declare the name (:data:`BUILTIN_DECLARATIONS`) and every plugin that
        declares nothing (it may register anything); then the plugins that declare the plain name, or
        the namespace of a qualified one. When the name is
        still not registered (a name nobody declares, a stale declaration, a qualifier naming a
        plugin that did not register it), every plugin loads, so the answer -- and the error's close
        matches -- are what they were when every lookup loaded every plugin. ``ASSAY_STRICT_PLUGINS``
        loads every plugin on the first lookup.
        """
        if self._loaded or (kind, name) in self._resolved:
            return
        if name is None or not self._entry_points or _strict():
            self._ensure_loaded()
            return
        with self._lock:
            if self._loaded:
                return
            with watch_interrupts() as interrupted:
                self._interrupted = interrupted
                try:
                    qualifier, base = split_qualifier(name)
                    namespace = f"{kind}_namespace"
                    for module_name in self._builtins:
                        declared = BUILTIN_DECLARATIONS.get(module_name)
                        if declared is None or base in declared.get(kind, ()) or (
                                qualifier is not None and qualifier in declared.get(namespace, ())):
                            self._load_builtin(module_name)
                    sources = self._sources()
                    for source in sources:
                        if source.declared is None:
                            self._load_source(source)
                    for source in sources:
                        if source.declares(kind, base) or (qualifier is not None
                                                           and source.declares(namespace, qualifier)):
                            self._load_source(source)
                finally:
                    self._interrupted = lambda: False
            registry = self._registries[kind]
            if not (qualifier is not None and qualifier in registry._namespaces):
                found = registry._entries.get(base, ())
                if not found or (qualifier is not None and not any(e.matches(qualifier) for e in found)):
                    self._ensure_loaded()
                    return
            self._resolved.add((kind, name))

    def _load_source(self, source: Source) -> None:
        """Load one ``assay`` entry point unless it is loaded already or excluded (recorded as disabled)."""
        if source.key in self._loaded_entry_points:
            return
        self._loaded_entry_points.add(source.key)
        ep = source.entry_point
        dist, version = source.distribution, ep.dist_version
        why = self._excluded({ep.name} | ({dist} if dist else set()))
        if why:
            self._plugins[source.name] = PluginInfo(
                source.name, module=ep.value, distribution=dist, version=version,
                status="disabled", error=f"not loaded because of {why}",
            )
            return
        self._load_entry_point(ep, source.name, dist, version)

    def _ensure_loaded(self) -> None:
        """Load every plugin not loaded yet: the built-ins, then each entry point in order."""
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            for module_name in self._builtins:
                self._load_builtin(module_name)
            if self._entry_points:
                with watch_interrupts() as interrupted:
                    self._interrupted = interrupted
                    try:
                        for source in self._sources():
                            self._load_source(source)
                    finally:
                        self._interrupted = lambda: False

    def _load_builtin(self, module_name: str) -> None:
        if module_name in self._loaded_builtins:
            return
        self._loaded_builtins.add(module_name)
        module = importlib.import_module(module_name)
        info, _ = self._add(module, module_name, module=module_name, builtin=True)
        if info.status == "failed":  # a bug in assay itself: never hide it
            raise PluginLoadError(f"Built-in plugin {module_name} failed: {info.error}")
        self._plugins[info.name] = info

    @staticmethod
    def _excluded(names: set[str]) -> str | None:
        """The variable that keeps a plugin (its entry-point and distribution names) from loading, or None."""
        deny = _env_list("ASSAY_DISABLE_PLUGINS") or set()
        allow = _env_list("ASSAY_LOAD_PLUGINS")
        if names & deny:
            return "ASSAY_DISABLE_PLUGINS"
        if allow is not None and not names & allow:
            return "ASSAY_LOAD_PLUGINS"
        return None

    def _load_entry_point(self, ep: Any, name: str, dist: str | None, version: str | None) -> None:
        before = patches.take()
        error: BaseException | None
        try:
            with stdout_to_stderr():
                plugin = ep.load()
        except BaseException as exc:
            if is_real_interrupt(exc, self._interrupted):
                raise
            info, error = PluginInfo(name, module=ep.value, distribution=dist, version=version,
                                     status="failed", error=_describe(exc, f"importing {ep.value}")), exc
        else:
            info, error = self._add(plugin, name, module=ep.value, distribution=dist, version=version)
        if info.status == "failed":
            self._plugins[info.name] = info
            if _strict():
                raise PluginLoadError(f"Plugin {info.name!r} failed ({info.error}); "
                                      "unset ASSAY_STRICT_PLUGINS to skip it instead") from error
        self._finish(info, before, ep.value.split(":")[0].split(".")[0])

    def _finish(self, info: PluginInfo, before: patches.Snapshot, package: str | None) -> PluginInfo:
        """Record what the plugin replaced in assay; in strict mode, raise on a clash or a replacement."""
        replaced = patches.changes(before, patches.take(), plugin_package=package)
        if replaced:
            info = attrs.evolve(info, replaced=tuple(replaced))
        self._plugins[info.name] = info
        if _strict() and info.status == "loaded":
            if info.clashes:
                kind, names = next(iter(info.clashes.items()))
                name, others = next(iter(names.items()))
                raise DuplicateRegistrationError(
                    f"{kind} {name!r} is registered by both {others[0]!r} and {info.name!r}; "
                    "unset ASSAY_STRICT_PLUGINS to load both and choose with a qualified name "
                    f"('{info.distribution or info.name}:{name}')"
                )
            if info.replaced:
                raise PluginLoadError(f"Plugin {info.name!r} replaced assay's {', '.join(info.replaced)}; "
                                      "unset ASSAY_STRICT_PLUGINS to allow it")
        if info.replaced:  # the Python API says so as the command does (issue 27, item 9)
            warnings.warn(f"Plugin {info.name!r} replaced assay's {', '.join(info.replaced)}: results computed "
                          "through them are the plugin's, not assay's (ASSAY_STRICT_PLUGINS=1 refuses such a "
                          "plugin; 'assay plugins' lists what each plugin replaced)", PluginWarning, stacklevel=2)
        return info

    def _add(self, plugin: Any, name: str, **info: Any) -> tuple[PluginInfo, BaseException | None]:
        """Register ``plugin`` with pluggy and collect its registrations, all or nothing.

        Returns the plugin's info and, when it failed, the exception behind the failure.
        """
        if name in self._plugins and self._plugins[name].status == "loaded":
            # A second plugin with the same entry-point name would shadow the first in pluggy.
            name = f"{name}@{info.get('distribution') or id(plugin)}"
        try:
            with stdout_to_stderr():
                self.pm.register(plugin, name=name)
        except BaseException as exc:
            if is_real_interrupt(exc, self._interrupted):
                raise
            return PluginInfo(name, status="failed", error=_describe(exc, "registering"), **info), exc
        problems = _hook_problems(self.pm, plugin) + _unmarked_hooks(plugin)
        if problems:
            self.pm.unregister(plugin)
            return PluginInfo(name, status="failed", error="; ".join(problems), **info), None
        staged: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
        spaces: dict[str, dict[str, Entry]] = {kind: {} for kind in NAMESPACE_HOOKS}
        origin = {"distribution": "assay" if info.get("builtin") else info.get("distribution"),
                  "builtin": bool(info.get("builtin"))}
        try:
            with stdout_to_stderr():
                self._call_hooks(plugin, name, staged, origin, spaces)
            self._check_namespaces(name, spaces)
        except BaseException as exc:
            if is_real_interrupt(exc, self._interrupted):
                raise
            self.pm.unregister(plugin)
            return PluginInfo(name, status="failed", error=_describe(exc, "registering"), **info), exc
        for kind, entries in spaces.items():
            for entry in entries.values():
                self._registries[kind]._add_namespace(entry)
        clashes: dict[str, dict[str, tuple[str, ...]]] = {}
        for kind, entries in staged.items():
            for entry in entries.values():
                previous = self._registries[kind]._add(entry)
                if previous:
                    clashes.setdefault(kind, {})[entry.name] = tuple(e.plugin for e in previous)
                    for other in previous:
                        self._note_clash(other.plugin, kind, entry.name, name)
        registered = {kind: tuple(sorted(entries)) for kind, entries in staged.items() if entries}
        registered.update({f"{kind}_namespace": tuple(sorted(entries)) for kind, entries in spaces.items() if entries})
        return PluginInfo(name, registered=registered, clashes=clashes, **info), None

    def _call_hooks(self, plugin: Any, name: str, staged: dict[str, dict[str, Entry]], origin: dict[str, Any],
                    spaces: dict[str, dict[str, Entry]]) -> None:
        """Call ``plugin``'s registration hooks through pluggy, one kind at a time (namespaces last)."""
        others = [p for p in self.pm.get_plugins() if p is not plugin]
        hooks = [(kind, hook_name, staged[kind], kind) for kind, hook_name in KINDS.items()]
        hooks += [(kind, hook_name, spaces[kind], f"{kind} namespace") for kind, hook_name in NAMESPACE_HOOKS.items()]
        for kind, hook_name, target, what in hooks:
            if not any(impl.plugin is plugin for impl in getattr(self.pm.hook, hook_name).get_hookimpls()):
                continue
            register = self._register_callback(kind, name, target, origin, what=what)
            results = self.pm.subset_hook_caller(hook_name, others)(register=register)
            returned = [r for r in results if r is not None]
            if returned:
                raise InvalidParameterError(
                    f"Hook {hook_name} of plugin {name!r} returned a {type(returned[0]).__name__}, which assay "
                    "ignores: call register(name, factory) for each entry instead."
                )

    def _note_clash(self, plugin_name: str, kind: str, name: str, other: str) -> None:
        info = self._plugins.get(plugin_name)
        if info is None:
            return
        clashes = {k: dict(v) for k, v in info.clashes.items()}
        clashes.setdefault(kind, {})[name] = (*clashes.get(kind, {}).get(name, ()), other)
        self._plugins[plugin_name] = attrs.evolve(info, clashes=clashes)

    def _check_namespaces(self, plugin_name: str, spaces: dict[str, dict[str, Entry]]) -> None:
        """A namespace belongs to one plugin: another plugin registering it again fails to load."""
        for kind, entries in spaces.items():
            taken = self._registries[kind]._namespaces
            for ns in entries:
                if ns in taken:
                    raise DuplicateRegistrationError(
                        f"Plugin {plugin_name!r} registered the {kind} namespace {ns!r}, which plugin "
                        f"{taken[ns].plugin!r} registered already; a namespace belongs to one plugin "
                        f"(stop loading one with ASSAY_DISABLE_PLUGINS)."
                    )

    def _register_callback(self, kind: str, plugin_name: str, staged: dict[str, Entry],
                           origin: dict[str, Any], *, what: str | None = None) -> Callable[..., None]:
        what = what or kind

        def register(name: str, factory: Callable[..., Any], **metadata: Any) -> None:
            if not isinstance(name, str) or not _VALID_NAME.match(name):
                raise InvalidParameterError(
                    f"Plugin {plugin_name!r} registered an invalid {what} name {name!r}: "
                    "use letters, digits, '_', '-' and '.'."
                )
            if not callable(factory):
                raise InvalidParameterError(
                    f"Plugin {plugin_name!r} registered {what} {name!r} with a factory that is not "
                    f"callable ({type(factory).__name__})."
                )
            meant = metadata.get("aliases")
            if isinstance(meant, (tuple, list)) and all(isinstance(a, str) for a in meant):
                raise InvalidParameterError(
                    f"Plugin {plugin_name!r} registered {what} {name!r} with aliases={meant!r}: more names for one "
                    "factory are given as other_names=(...) (aliases= is the {dotted.path: factory} map of tasks)."
                )
            aliases = _aliases(metadata.pop("other_names", ()), plugin_name, what, name)
            for each in (name, *aliases):
                if each in staged:
                    raise DuplicateRegistrationError(
                        f"Plugin {plugin_name!r} registered {what} {each!r} twice; a plugin registers each name once "
                        "(an alias counts as a name)."
                    )
            staged[name] = Entry(kind, name, factory, plugin_name, {**metadata, "other_names": aliases} if aliases
                                 else dict(metadata), **origin)
            for alias in aliases:
                staged[alias] = Entry(kind, alias, factory, plugin_name, {**metadata, "alias_of": name}, **origin)

        return register


def _aliases(given: Any, plugin_name: str, what: str, name: str) -> tuple[str, ...]:
    """``register(name, factory, other_names=(...))``: more names that load the same factory (for example a
    peer project's class name, ``"MaximumSequenceProbability"`` for ``"msp"``), checked like names. (Not
    ``aliases=``: task plugins already use that metadata key for their Hydra ``_target_`` paths.)"""
    if isinstance(given, str) or not isinstance(given, (tuple, list)):
        raise InvalidParameterError(
            f"Plugin {plugin_name!r} registered {what} {name!r} with other_names={given!r}: give a tuple of names."
        )
    for alias in given:
        if not isinstance(alias, str) or not _VALID_NAME.match(alias) or alias == name:
            raise InvalidParameterError(
                f"Plugin {plugin_name!r} registered {what} {name!r} with an invalid alias {alias!r}: use letters, "
                "digits, '_', '-' and '.', and a name other than the entry's own."
            )
    if len(set(given)) != len(given):
        raise DuplicateRegistrationError(
            f"Plugin {plugin_name!r} registered {what} {name!r} with other_names={tuple(given)!r}, which repeat a "
            "name; a plugin registers each name once."
        )
    return tuple(given)


def _entry_points(groups: tuple[str, ...]) -> list[Any]:
    """The installed entry points of ``groups`` (objects with ``group``, ``name``, ``value``, ``dist_name``,
    ``dist_version`` and ``load()``): read by :mod:`assay.plugins._entry_points` without importing
    :mod:`importlib.metadata` (25 ms), or by it where that reader cannot tell."""
    from assay.plugins._entry_points import LeanEntryPoint, read_entry_points

    found = read_entry_points(groups)
    if found is not None:
        return found
    from importlib import metadata as importlib_metadata

    eps = importlib_metadata.entry_points()
    return [LeanEntryPoint(ep.name, ep.value, group, ep.dist.name if ep.dist else None,
                           ep.dist.version if ep.dist else None)
            for group in groups for ep in eps.select(group=group)]


_OWN_CODE = (os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.abspath(pluggy.__file__)))


def _describe(exc: BaseException, doing: str) -> str:
    """One line: the exception, what assay was doing, and the plugin's line that raised it."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    theirs = [f for f in frames if not os.path.abspath(f.filename).startswith(_OWN_CODE)]
    last = (theirs or frames)[-1:]
    where = f" at {last[0].filename}:{last[0].lineno}" if last else ""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__} while {doing}: {message}{where}"


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


def problems_summary() -> str | None:
    """The one-line warning about plugin problems, or None when none, or when no command loaded plugins.

    Reads the process-wide plugin system without loading it.
    """
    system = _SYSTEM
    return system.problems_summary() if system is not None else None


def warns_about_plugin_problems(command: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a command's entry point: after it ends, print :func:`problems_summary` to stderr.

    The line appears only when the command loaded plugins and one failed, clashed or
    replaced an assay name; printing it never raises. The :class:`~assay.errors.PluginWarning`
    of a plugin that replaced assay names is not shown inside the command: the line says it.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PluginWarning)  # the summary line below says it, once
                return command(*args, **kwargs)
        finally:
            try:
                line = problems_summary()
                if line:
                    print(line, file=sys.stderr)
            except Exception:  # noqa: BLE001 - a warning must never hide the command's outcome
                pass

    return wrapper


@contextlib.contextmanager
def use_plugin_system(system: PluginSystem) -> Iterator[PluginSystem]:
    """Use ``system`` as the process-wide plugin system inside a ``with`` block."""
    old = set_plugin_system(system)
    try:
        yield system
    finally:
        set_plugin_system(old)
