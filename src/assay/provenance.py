"""Provenance: the signature stored in every result file and printed under every table.

In the spirit of sacreBLEU's signature (``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|
version:2.0.0``), a :class:`Signature` records what decides the numbers of a result, as
one line of ``key:value`` fields separated by ``|``::

    metrics:f1[average=macro],aurc[convention=fd-shifts]|resample:bootstrap|ci:percentile|n:1000|level:0.95|seed:0|assay:0.1.0|plugins:assay-classic=0.1.0,assay-uncertainty=0.1.0

Fields, in this order (a field without a value is left out):

``metrics`` (``estimators``, ``gen_metrics``, ``ue_metrics``, ``tasks``, ``aggregations``, ``evaluators``, ...)
    The components used, each as its resolved name (:func:`spec_of`): the registered name
    with every option that differs from its default, keys sorted, plus ``convention``
    always (``aurc`` reads ``aurc[convention=fd-shifts]``); ``score_prefix`` is left out
    (it renames scores, it does not change them).
``resample``
    ``none`` (no resampling), ``bootstrap``, ``cluster-bootstrap``,
    ``stratified-bootstrap`` or ``stratified-cluster-bootstrap``.
``ci``, ``n``, ``level``, ``seed``
    Interval method, number of resamples, confidence level and seed of the resampling.
``assay``, ``plugins``, ``libs``
    The versions of assay, of the plugin distributions whose code was used, and of the
    libraries those components declare in ``requirements`` (``sacrebleu=2.4.3``).

:meth:`Signature.differences` lists what differs between two signatures and says which
differences change the numbers (a component's options or convention, the resampling
method, interval method, number of resamples, confidence level, seed) and which do not
(versions of assay, plugins and libraries, and a component that only one side used).
``assay compare`` refuses results whose signatures differ in a way that changes the
numbers (``allow_signature_mismatch=True`` / ``--allow-different-signatures`` overrides)
and only reports version differences: a new release is expected to give the same numbers,
and refusing would make every upgrade break comparisons with older results.

>>> s = Signature(components=(("metrics", ("f1[average=macro]",)),), resampling="bootstrap", ci_method="percentile",
...               n_resamples=1000, confidence_level=0.95, seed=0, assay="0.1.0",
...               plugins=(("assay-classic", "0.1.0"),))
>>> s.to_string()
'metrics:f1[average=macro]|resample:bootstrap|ci:percentile|n:1000|level:0.95|seed:0|assay:0.1.0|plugins:assay-classic=0.1.0'
>>> Signature.from_string(s.to_string()) == s
True
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from assay.errors import InvalidParameterError, SignatureMismatchError
from assay.plugins.names import format_name, parse_name, split_qualifier, split_top_level

__all__ = ["KEY", "Difference", "Signature", "check_signatures", "evaluation_signature", "read_signature",
           "resampling_method", "signature_of", "spec_of", "versions_of"]

#: the key under which result files store the signature string
KEY = "signature"
_RESAMPLING_KEYS = ("resample", "ci", "n", "level", "seed")
_VERSION_KEYS = ("assay", "plugins", "libs")
_SCALARS = (type(None), bool, int, float, str)
#: options shown even at their default (they choose between published definitions)
_ALWAYS = ("convention", "conventions")
#: modules of the abstract base classes, whose constructor arguments are not user options
_BASE_MODULES = frozenset({"assay.metrics.base", "assay.uncertainty.base"})


def _assay_version() -> str:
    from assay import __version__

    return __version__


# --------------------------------------------------------------------------- the signature
@attrs.frozen
class Difference:
    """One field in which two signatures differ (``this`` and ``other`` are the two values, ``"-"`` for none)."""

    field: str
    this: str
    other: str
    changes_numbers: bool

    def describe(self, this: str = "this", other: str = "other") -> str:
        """``metrics f1: f1[average=macro] (a) vs f1 (b)``, naming the two sides as given."""
        return f"{self.field}: {self.this} ({this}) vs {self.other} ({other})"

    def __str__(self) -> str:
        return self.describe()


@attrs.frozen
class Signature:
    """What decides the numbers of a result (see the module docstring for the fields).

    ``components`` is a tuple of ``(kind, specs)`` pairs in order (``("metrics",
    ("f1[average=macro]",))``); ``plugins`` and ``libs`` are ``(distribution, version)``
    pairs, sorted. ``str(signature)`` is :meth:`to_string`.
    """

    components: tuple[tuple[str, tuple[str, ...]], ...] = ()
    resampling: str | None = None
    ci_method: str | None = None
    n_resamples: int | None = None
    confidence_level: float | None = None
    seed: int | None = None
    assay: str = attrs.field(factory=_assay_version)
    plugins: tuple[tuple[str, str], ...] = ()
    libs: tuple[tuple[str, str], ...] = ()

    def component(self, kind: str) -> tuple[str, ...]:
        """The specs of one kind (``"metrics"``), empty when absent."""
        return dict(self.components).get(kind, ())

    # ------------------------------------------------------------- text
    def to_string(self) -> str:
        """The one-line form: ``key:value`` fields joined by ``|`` (lists joined by ``,``)."""
        fields = [(kind, ",".join(specs)) for kind, specs in self.components if specs]
        scalars = (("resample", self.resampling), ("ci", self.ci_method), ("n", self.n_resamples),
                   ("level", self.confidence_level), ("seed", self.seed))
        fields += [(k, repr(v) if isinstance(v, float) else str(v)) for k, v in scalars if v is not None]
        fields.append(("assay", self.assay))
        for key, pairs in (("plugins", self.plugins), ("libs", self.libs)):
            if pairs:
                fields.append((key, ",".join(f"{d}={v}" for d, v in pairs)))
        return "|".join(f"{k}:{v}" for k, v in fields)

    def __str__(self) -> str:
        return self.to_string()

    @classmethod
    def from_string(cls, text: str) -> Signature:
        """Parse :meth:`to_string`'s output; a malformed field is an error naming it.

        Unknown keys are read as components (lists of specs), so a newer assay's fields survive.
        """
        if not isinstance(text, str) or not text.strip():
            raise InvalidParameterError(f"A signature must be a non-empty string; got {text!r:.80}.")
        components: list[tuple[str, tuple[str, ...]]] = []
        values: dict[str, str] = {}
        for part in _split(text.strip(), "|", text):
            key, sep, value = part.partition(":")
            key = key.strip()
            if not sep or not key:
                raise InvalidParameterError(f"Signature field {part!r} in {text!r:.200} is not of the form key:value.")
            if key in values or key in dict(components):
                raise InvalidParameterError(f"Signature field {key!r} is given twice in {text!r:.200}.")
            if key in _RESAMPLING_KEYS or key in _VERSION_KEYS:
                values[key] = value.strip()
            else:
                components.append((key, tuple(s.strip() for s in _split(value, ",", text) if s.strip())))

        def number(key: str, kind: type) -> Any:
            if key not in values:
                return None
            try:
                return kind(values[key])
            except ValueError:
                what = "an integer" if kind is int else "a number"
                raise InvalidParameterError(f"Signature field {key!r} must be {what}; got {values[key]!r} in "
                                            f"{text!r:.200}.") from None

        return cls(components=tuple(components), resampling=values.get("resample"), ci_method=values.get("ci"),
                   n_resamples=number("n", int), confidence_level=number("level", float), seed=number("seed", int),
                   assay=values.get("assay", "unknown"), plugins=_pairs(values.get("plugins", ""), text),
                   libs=_pairs(values.get("libs", ""), text))

    # ------------------------------------------------------------- dict
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``string`` (the one-line form) and every field."""
        return {"string": self.to_string(), "components": {k: list(v) for k, v in self.components},
                "resampling": self.resampling, "ci_method": self.ci_method, "n_resamples": self.n_resamples,
                "confidence_level": self.confidence_level, "seed": self.seed, "assay": self.assay,
                "plugins": dict(self.plugins), "libs": dict(self.libs)}

    # ------------------------------------------------------------- comparison
    def differences(self, other: Signature) -> list[Difference]:
        """Every field in which ``self`` and ``other`` differ, each saying whether it changes the numbers.

        Components are matched by registered name (without a plugin qualifier): the same
        name with other options or convention changes the numbers; a name only one side
        used does not (its scores are simply not in the other result). Resampling fields
        change the numbers (the intervals); versions do not (see the module docstring).
        """
        out: list[Difference] = []
        kinds = list(dict.fromkeys([k for k, _ in self.components] + [k for k, _ in other.components]))
        for kind in kinds:
            mine, theirs = _by_name(self.component(kind)), _by_name(other.component(kind))
            for name in dict.fromkeys([*mine, *theirs]):
                a, b = mine.get(name), theirs.get(name)
                if a is None or b is None:
                    out.append(Difference(f"{kind} {name}", _show(a), _show(b), False))
                elif {k for k, _ in a} != {k for k, _ in b}:
                    # one side's configurations all in the other's: the shared ones give the same numbers
                    shared = {k for k, _ in a} <= {k for k, _ in b} or {k for k, _ in b} <= {k for k, _ in a}
                    out.append(Difference(f"{kind} {name}", _show(a), _show(b), not shared))
        for field, label in (("resampling", "resample"), ("ci_method", "ci"), ("n_resamples", "n"),
                             ("confidence_level", "level"), ("seed", "seed")):
            a, b = getattr(self, field), getattr(other, field)
            if a != b:
                out.append(Difference(label, "-" if a is None else str(a), "-" if b is None else str(b), True))
        if self.assay != other.assay:
            out.append(Difference("assay", self.assay, other.assay, False))
        for field in ("plugins", "libs"):
            mine_v, theirs_v = dict(getattr(self, field)), dict(getattr(other, field))
            for dist in dict.fromkeys([*mine_v, *theirs_v]):
                if mine_v.get(dist) != theirs_v.get(dist):
                    out.append(Difference(f"{field} {dist}", mine_v.get(dist, "-"), theirs_v.get(dist, "-"), False))
        return out

    def with_versions(self, other: Signature) -> Signature:
        """This signature with ``other``'s plugin and library versions added where this one has none."""
        plugins = dict(other.plugins) | dict(self.plugins)
        libs = dict(other.libs) | dict(self.libs)
        return attrs.evolve(self, plugins=tuple(sorted(plugins.items())), libs=tuple(sorted(libs.items())))


def _split(text: str, sep: str, whole: str) -> list[str]:
    """Split on ``sep`` outside brackets and quotes (option values may hold ``,`` and ``|``)."""
    return split_top_level(text, f"the signature {whole[:200]}", sep)


def _pairs(text: str, whole: str) -> tuple[tuple[str, str], ...]:
    out = []
    for item in _split(text, ",", whole):
        if not item.strip():
            continue
        dist, sep, version = item.partition("=")
        if not sep or not dist.strip():
            raise InvalidParameterError(f"Signature version entry {item!r} in {whole!r:.200} is not of the form "
                                        "distribution=version.")
        out.append((dist.strip(), version.strip()))
    return tuple(out)


def _canonical(value: Any) -> Any:
    """Options compared by value: ``2 == 2.0``, lists and tuples alike."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return "nan" if isinstance(value, float) and math.isnan(value) else float(value)
    if isinstance(value, (list, tuple)):
        return tuple(_canonical(v) for v in value)
    return repr(value)


def _by_name(specs: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """Registered name (no qualifier) -> [(canonical options, spec)] for each spec of that name."""
    out: dict[str, list[tuple[str, str]]] = {}
    for spec in specs:
        try:
            name, options = parse_name(spec)
            key = repr(sorted((k, _canonical(v)) for k, v in options.items() if k != "score_prefix"))
        except InvalidParameterError:
            name, key = spec, ""
        out.setdefault(split_qualifier(name)[1], []).append((key, spec))
    return out


def _show(entries: list[tuple[str, str]] | None) -> str:
    return "-" if entries is None else ", ".join(spec for _, spec in entries)


# --------------------------------------------------------------------------- building one
def _is_simple(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_is_simple(v) for v in value)
    return isinstance(value, _SCALARS)


def _same(a: Any, b: Any) -> bool:
    try:
        return _canonical(a) == _canonical(b)
    except Exception:  # noqa: BLE001 - an exotic value is simply "different"
        return False


def _init_defaults(obj: Any) -> dict[str, Any]:
    """Keyword options (with defaults) of the ``__init__`` that built ``obj``; none for the abstract bases'
    (``UEMetric(higher_is_better=None)``, ``Estimator(level, dependencies)`` are not options)."""
    if obj is None or inspect.isclass(obj) or inspect.isroutine(obj):
        return {}
    owner: type = next((c for c in type(obj).__mro__ if "__init__" in c.__dict__), object)
    if owner is object or owner.__module__ in _BASE_MODULES:
        return {}
    try:
        params = inspect.signature(owner.__dict__["__init__"]).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in params
            if p.default is not p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def spec_of(obj: Any = None, label: str | None = None) -> str:
    """The resolved name of a component: its registered name with its options and convention.

    ``label`` is the name it was loaded by (``"f1[average=macro, score_prefix=m_]"``;
    default: ``obj.name`` or the class name). Options come from the label, and, for an
    object, from its attributes named like its constructor's keyword options: an option
    equal to its default is left out, ``convention`` (``conventions``) is always shown, ``score_prefix``
    never; keys are sorted. So ``"f1"`` and ``"f1[average=binary]"`` (the default) give
    the same spec, and ``load_ue_metric("aurc")`` gives ``"aurc[convention=fd-shifts]"``.
    A component with a ``provenance_options(options)`` method gets the last word: it receives
    those options and returns the ones to record (a model-judged metric names its judge by a
    hash of the model's files instead of a folder path, and leaves out its cache folder).
    A label that is not a ``name[key=value]`` spelling is returned as it is.
    """
    raw = label if label is not None else (getattr(obj, "name", None) or type(obj).__name__)
    try:
        base, given = parse_name(str(raw))
    except InvalidParameterError:
        return str(raw)
    given.pop("score_prefix", None)
    defaults = _init_defaults(obj)
    options: dict[str, Any] = {}
    for key, value in given.items():
        if key in _ALWAYS or key not in defaults or not _same(value, defaults[key]):
            options[key] = value
    for key, default in defaults.items():
        if key in given or key == "score_prefix" or not hasattr(obj, key):
            continue
        value = getattr(obj, key)
        if _is_simple(value) and (key in _ALWAYS or not _same(value, default)):
            options[key] = value
    refine = getattr(obj, "provenance_options", None)
    if callable(refine) and not inspect.isclass(obj):
        options = dict(refine(dict(sorted(options.items()))))
    return format_name(base, dict(sorted(options.items())))


@functools.lru_cache(maxsize=1)
def _module_distributions() -> Mapping[str, list[str]]:
    import importlib.metadata as metadata  # imported when needed: 25 ms

    try:
        return metadata.packages_distributions()
    except Exception:  # noqa: BLE001 - broken metadata of some distribution: no versions, never a failed evaluation
        return {}


@functools.cache
def _version(distribution: str) -> str | None:
    recorded = _loaded_plugin_version(distribution)
    if recorded is not None:
        return recorded
    import importlib.metadata as metadata

    try:
        return metadata.version(distribution)
    except Exception:  # noqa: BLE001 - not installed (PackageNotFoundError) or broken metadata
        return None


def _recorded_plugins() -> list[Any]:
    """The plugin system's records of its plugins, when a plugin system exists (nothing is created or loaded)."""
    manager = sys.modules.get("assay.plugins.manager")
    system = getattr(manager, "_SYSTEM", None)
    plugins = getattr(system, "_plugins", None)
    return list(plugins.values()) if isinstance(plugins, Mapping) else []


def _loaded_plugin_distribution(top: str) -> str | None:
    """The distribution of an already loaded plugin whose module lives in the package ``top``.

    The plugin system knows each entry point's distribution; asking it first spares the scan of
    every installed distribution (``packages_distributions``: about half a second with a few
    hundred installed). Nothing is imported or loaded here.
    """
    for info in _recorded_plugins():
        module, dist = getattr(info, "module", None), getattr(info, "distribution", None)
        if dist and module and module.split(".")[0] == top:
            return str(dist)
    return None


def _loaded_plugin_version(distribution: str) -> str | None:
    """The version the plugin system recorded for a loaded plugin's distribution (read from the same metadata
    as :func:`importlib.metadata.version`, when the plugin was loaded), or None."""
    for info in _recorded_plugins():
        version = getattr(info, "version", None)
        if getattr(info, "distribution", None) == distribution and getattr(info, "status", None) == "loaded" \
                and isinstance(version, str):
            return version
    return None


def _distribution_of(obj: Any) -> str | None:
    module = obj.__module__ if (inspect.isclass(obj) or inspect.isroutine(obj)) else type(obj).__module__
    top = (module or "").split(".")[0]
    if not top or top in ("assay", "__main__", "builtins"):
        return None
    dist = _loaded_plugin_distribution(top)
    if dist is not None:
        return dist
    found = _module_distributions().get(top)
    return found[0] if found else None


def versions_of(objects: Iterable[Any]) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """``(plugins, libs)``: ``(distribution, version)`` pairs, sorted.

    ``plugins``: the installed distributions that define the objects' classes (assay itself
    and code outside any distribution are left out); ``libs``: the installed
    distributions the objects declare in ``requirements`` (``{module: distribution}``).
    """
    plugins: dict[str, str] = {}
    libs: dict[str, str] = {}
    for obj in objects:
        dist = _distribution_of(obj)
        if dist and (v := _version(dist)):
            plugins[dist] = v
        requirements = getattr(obj, "requirements", None)
        if isinstance(requirements, Mapping):
            for lib in requirements.values():
                if isinstance(lib, str) and (v := _version(lib)):
                    libs[lib] = v
    return tuple(sorted(plugins.items())), tuple(sorted(libs.items()))


def signature_of(components: Mapping[str, Sequence[Any]], *, resampling: str | None = None,
                 ci_method: str | None = None, n_resamples: int | None = None,
                 confidence_level: float | None = None, seed: int | None = None) -> Signature:
    """Build a signature from the components used, with versions looked up.

    ``components`` maps a kind (``"metrics"``, ``"ue_metrics"`` ...) to its entries, each
    an object, a ``(label, object)`` pair or a name string (see :func:`spec_of`).
    """
    parts: list[tuple[str, tuple[str, ...]]] = []
    objects: list[Any] = []
    for kind, entries in components.items():
        specs = []
        for entry in entries:
            label, obj = (entry if isinstance(entry, tuple) else
                          (entry, None) if isinstance(entry, str) else (None, entry))
            specs.append(spec_of(obj, label))
            if obj is not None:
                objects.append(obj)
        parts.append((kind, tuple(specs)))
    plugins, libs = versions_of(objects)
    return Signature(components=tuple(parts), resampling=resampling, ci_method=ci_method, n_resamples=n_resamples,
                     confidence_level=confidence_level, seed=seed, plugins=plugins, libs=libs)


def resampling_method(n_resamples: int, *, groups: Any = None, strata: Any = None) -> str:
    """``none``, ``bootstrap``, ``cluster-bootstrap``, ``stratified-bootstrap`` or ``stratified-cluster-bootstrap``."""
    if not n_resamples:
        return "none"
    return ("stratified-" if strata is not None else "") + ("cluster-" if groups is not None else "") + "bootstrap"


def evaluation_signature(metrics: Sequence[Any], *, n_resamples: int, confidence_level: float, ci_method: str,
                         seed: int, groups: Any = None, strata: Any = None) -> Signature:
    """The signature of :func:`assay.evaluate` with these resolved metrics and resampling settings."""
    on = bool(n_resamples)
    return signature_of({"metrics": list(metrics)}, resampling=resampling_method(n_resamples, groups=groups,
                                                                                   strata=strata),
                        ci_method=ci_method if on else None, n_resamples=n_resamples if on else None,
                        confidence_level=confidence_level if on else None, seed=seed if on else None)


def read_signature(value: Any) -> Signature | None:
    """A stored signature (its string, a :meth:`Signature.to_dict` dict, or a Signature); None when absent."""
    if value is None or isinstance(value, Signature):
        return value
    if isinstance(value, Mapping):
        value = value.get("string")
    return Signature.from_string(value)


def check_signatures(a: Any, b: Any, *, allow: bool = False, names: tuple[str, str] = ("a", "b"),
                     override: str = "allow_signature_mismatch=True") -> list[str]:
    """Refuse two results whose signatures differ in a way that changes the numbers.

    Returns notes for what is only reported (version differences, a side without a
    signature, and with ``allow=True`` the differences that were allowed). Raises
    :class:`~assay.errors.SignatureMismatchError` listing the differences otherwise;
    ``override`` names the way out in the message.
    """
    sa, sb = read_signature(a), read_signature(b)
    missing = [n for n, s in zip(names, (sa, sb)) if s is None]
    if missing:
        return [f"results {' and '.join(missing)} carry no signature (written before assay recorded one); "
                "not checked"]
    assert sa is not None and sb is not None
    diffs = sa.differences(sb)
    numbers = [d for d in diffs if d.changes_numbers]
    if numbers and not allow:
        listing = "; ".join(d.describe(*names) for d in numbers)
        raise SignatureMismatchError(
            f"Results {names[0]} and {names[1]} were computed differently, so their numbers are not comparable: "
            f"{listing}. Evaluate both the same way, or pass {override} to compare them anyway.",
            differences=numbers)
    notes = [f"signatures differ (allowed): {d.describe(*names)}" for d in numbers]
    notes += [f"signatures differ in {d.describe(*names)} (does not change the numbers)"
              for d in diffs if not d.changes_numbers]
    return notes
