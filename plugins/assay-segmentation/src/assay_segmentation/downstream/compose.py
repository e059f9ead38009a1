"""Composing a config with Hydra's compose API and OmegaConf, bounded and with the origin of every key.

:func:`compose_config` reads a primary config file the way Hydra does (``hydra-core``'s
compose API, OmegaConf for interpolation): ``defaults`` lists with ``_self_`` and
``FILE@package`` entries, ``# @package _global_`` headers, ``${KEY}`` / ``${a.b}`` and
``${oc.env:VAR}`` interpolation, and command-line overrides (``base_path=/data/toy``,
``+new_key=1``, ``~key``).

Before Hydra sees anything, every file the ``defaults`` lists reach is read once with
:func:`assay.configfile.load_yaml` (bounded size, alias expansion and nesting, safe tags,
UTF-8), cycles and missing files are reported with the chain of files, and at most
:data:`MAX_FILES` files are read. The same pass records which file set each key path, in
Hydra's composition order, so that an error names the file to fix (:class:`Origins`).
Before OmegaConf resolves anything, the size of the config once every ``${...}`` is
expanded is bounded by :data:`~assay.configfile.MAX_NODES`.

Hydra's package rule applies: a defaults file in a subfolder (``parts/tasks``) is placed
under the key of its folder (``parts:``) unless it starts with ``# @package _global_`` or
the entry names a package (``parts/tasks@_global_``). A file beside the primary config
(``tasks``) merges at the top level.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.configfile import MAX_NODES, load_yaml
from assay.configfile import key_path as _path_text
from assay.errors import ConfigError

__all__ = ["MAX_FILES", "Origins", "check_group_keys", "compose_config", "referenced_keys", "resolve"]

#: the most files read through nested ``defaults`` for one config
MAX_FILES = 200

#: ``${name`` at the start of an interpolation: its first key (resolvers such as ``oc.env:`` excluded)
_FIRST_KEY = re.compile(r"\$\{\s*([A-Za-z0-9_\-]+)(?=\s*[.\[}])")
_HEADER = re.compile(r"^\s*#\s*@package\s+(\S+)", re.MULTILINE)


class Origins:
    """Which file set each key path (the deepest recorded prefix answers)."""

    def __init__(self) -> None:
        self.map: dict[tuple[Any, ...], str] = {}
        self.reads = 0  # files read through ``defaults``, bounded by MAX_FILES
        #: top-level keys that Hydra's package rule made from a defaults file's folder -> that file
        self.group_keys: dict[str, str] = {}

    def record(self, value: Any, path: tuple[Any, ...], file: str) -> None:
        self.map[path] = file
        if isinstance(value, dict):
            for k, v in value.items():
                self.record(v, path + (k,), file)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.record(v, path + (i,), file)

    def file(self, path: tuple[Any, ...], default: str) -> str:
        for n in range(len(path), -1, -1):
            if path[:n] in self.map:
                return self.map[path[:n]]
        return default


def _header_package(path: Path) -> str | None:
    """The package of a ``# @package X`` header in the file's comment lines before any key, or None."""
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    for line in head.splitlines():
        if not line.strip():
            continue
        if not line.lstrip().startswith("#"):
            return None
        match = _HEADER.match(line)
        if match:
            return match.group(1)
    return None


def _join(parent: str, child: str) -> str:
    return ".".join(p for p in (parent, child) if p)


def _at(package: str) -> tuple[str, ...]:
    return tuple(p for p in package.split(".") if p)


#: said when a defaults entry outside the config folder is missing (ValUES' GTA dataset config)
_OUTSIDE_HINT = (" (ValUES' configs name files outside evaluation/configs, such as uncertainty_modeling/configs/...; "
                 "run from a ValUES checkout or add its config folder with "
                 "hydra.searchpath=[file:///path/to/values/evaluation/configs])")


def _walk(path: Path, root: Path, package: str, origins: Origins, chain: tuple[Path, ...]) -> None:
    """Read ``path`` (safely) and the files its ``defaults`` reach, recording key origins in Hydra's order."""
    if path in chain:
        raise ConfigError(f"{path}: defaults: expected no cycle, got {' -> '.join(str(p) for p in chain + (path,))}")
    origins.reads += 1
    if origins.reads > MAX_FILES:
        raise ConfigError(f"{chain[0] if chain else path}: defaults: expected at most {MAX_FILES} config files "
                          f"read in all, got more (files listed many times in nested defaults?)")
    if not path.exists():
        where = f" (listed in the defaults of {chain[-1]})" if chain else ""
        raise ConfigError(f"{path}: expected an existing config file{where}, got no such file"
                          f"{_OUTSIDE_HINT if not path.is_relative_to(root) else ''}")
    data = load_yaml(path)
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: (top level): expected a mapping of keys, got {type(data).__name__}")
    defaults = data.pop("defaults", [])
    if not isinstance(defaults, list):
        raise ConfigError(f"{path}: defaults: expected a list of file names, got {defaults!r}")
    if "_self_" not in defaults:
        defaults = defaults + ["_self_"]
    group_dir = path.parent
    for i, entry in enumerate(defaults):
        if entry == "_self_":
            origins.record(data, _at(package), str(path))
            continue
        if isinstance(entry, dict) and len(entry) == 1:  # "group: option" (Hydra's group form)
            (group, option), = entry.items()
            group = str(group).removeprefix("override ").removeprefix("optional ").strip()
            if option is None:
                continue
            name, pkg = f"{group}/{option}", None
            if "@" in group:
                group, pkg = group.split("@", 1)
                name = f"{group}/{option}"
        elif isinstance(entry, str) and entry.strip():
            name, _, pkg_text = entry.strip().partition("@")
            pkg = pkg_text or None
        else:
            raise ConfigError(f"{path}: defaults[{i}]: expected a file name such as 'tasks/base' or "
                              f"'file@package', got {entry!r}")
        name = name.strip()
        sub = root / name.lstrip("/") if name.startswith("/") else group_dir / name
        if sub.suffix not in (".yaml", ".yml"):
            sub = sub.with_name(sub.name + ".yaml")
        sub = Path(os.path.normpath(sub))
        group_rel = os.path.relpath(sub.parent, root).replace(os.sep, "/")
        group_pkg = "" if group_rel in (".", "") else group_rel.replace("/", ".")
        header = _header_package(sub) if sub.exists() else None
        if pkg is not None:
            child = "" if pkg == "_global_" else _join(package, pkg)
        elif header is not None:
            child = "" if header == "_global_" else header.replace("_group_", group_pkg)
        else:
            child = _join(package, group_pkg) if not name.startswith("/") else group_pkg
            if child and not package:
                origins.group_keys.setdefault(child.split(".")[0], str(sub))
        _walk(sub, root, child, origins, chain + (path,))


def _expanded_size(config: dict, file: str, origins: Origins) -> None:
    """Refuse a config whose interpolations would expand to more than MAX_NODES values."""
    memo: dict[str, int] = {}

    def lookup(dotted: str) -> Any:
        node: Any = config
        for part in dotted.split("."):
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node

    def size(value: Any, depth: int) -> int:
        if depth > 30:
            return 1  # a cycle: OmegaConf reports it
        if isinstance(value, dict):
            return 1 + sum(size(v, depth) for v in value.values())
        if isinstance(value, list):
            return 1 + sum(size(v, depth) for v in value)
        if isinstance(value, str) and "${" in value:
            total = 1
            for ref in re.findall(r"\$\{\s*([A-Za-z0-9_.\-]+)\s*\}", value):
                if ref not in memo:
                    memo[ref] = 1
                    memo[ref] = size(lookup(ref), depth + 1)
                total += memo[ref]
                if total > MAX_NODES:
                    break
            return total
        return 1

    if size(config, 0) > MAX_NODES:
        raise ConfigError(f"{file}: expected at most {MAX_NODES:,} values once interpolations are expanded, got "
                          "more (interpolations that repeat large parts of the config?)")


def referenced_keys(value: Any, found: set[str] | None = None) -> set[str]:
    """The first keys of every ``${a.b}`` in ``value`` (the top-level keys used as definitions)."""
    found = set() if found is None else found
    if isinstance(value, dict):
        for v in value.values():
            referenced_keys(v, found)
    elif isinstance(value, list):
        for v in value:
            referenced_keys(v, found)
    elif isinstance(value, str) and "${" in value:
        found.update(_FIRST_KEY.findall(value))
    return found


def _override_key(override: str) -> str:
    key = override.split("=", 1)[0].strip()
    return key.lstrip("+~").split("@", 1)[0]


def compose_config(path: str | Path, overrides: Sequence[str] = ()) -> tuple[Any, Origins]:
    """The composed, unresolved config (an OmegaConf ``DictConfig``) and the origin of every key.

    Raises
    ------
    ConfigError
        For a file that cannot be read safely, a missing or cyclic default, more than
        :data:`MAX_FILES` files, an override Hydra refuses (``base_pth=...``: no such key;
        the message says ``+key=...`` adds one), or a config too large once expanded.
    """
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    path = Path(path).resolve()
    origins = Origins()
    if path.is_dir():
        raise ConfigError(f"{path}: expected a config file, got a directory")
    if path.suffix != ".yaml":
        load_yaml(path)  # the reasons a file cannot be read come first
        raise ConfigError(f"{path}: expected a config file named *.yaml (Hydra reads only that suffix), "
                          f"got {path.name!r}")
    _walk(path, path.parent, "", origins, chain=())
    for override in overrides:
        key = _override_key(override)
        origins.record(None, tuple(p for p in key.split(".") if p), "the command line")
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(path.parent), version_base=None, job_name="assay"), \
                warnings.catch_warnings():
            # "Defaults list is missing _self_": assay documents the rule (this file's keys come last)
            warnings.filterwarnings("ignore", message=".*Defaults list is missing `_self_`", category=UserWarning)
            cfg = compose(config_name=path.stem, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException, ValueError) as exc:
        text = " ".join(str(exc).split())
        hint, where = "", str(path)
        if "Could not load '../" in text:  # a defaults entry that leaves the config folder
            hint = _OUTSIDE_HINT
        elif overrides and ("override" in text.lower() or "Could not" in text):
            where = "the command line"
        raise ConfigError(f"{where}: {text}{hint}") from None
    finally:
        GlobalHydra.instance().clear()
    raw = OmegaConf.to_container(cfg, resolve=False)
    if not isinstance(raw, dict):  # pragma: no cover - compose always returns a mapping
        raise ConfigError(f"{path}: (top level): expected a mapping of keys")
    _expanded_size(raw, str(path), origins)
    return cfg, origins


def resolve(cfg: Any, key: Any, *, file: str, origins: Origins, at: tuple[Any, ...] = ()) -> Any:
    """``cfg[key]`` as plain data with every interpolation resolved; errors name the file and key path."""
    from omegaconf import DictConfig, ListConfig, OmegaConf
    from omegaconf.errors import InterpolationKeyError, OmegaConfBaseException

    try:
        node = cfg[key] if key is not None else cfg
        if isinstance(node, (DictConfig, ListConfig)):
            return OmegaConf.to_container(node, resolve=True)
        return node
    except OmegaConfBaseException as exc:
        full = getattr(exc, "full_key", None) or ".".join(map(str, at + ((key,) if key is not None else ())))
        parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"\.|\[|\]", str(full)) if p)
        message = " ".join(str(exc).splitlines()[0].split())
        expected = "an interpolation of an existing key" if isinstance(exc, InterpolationKeyError) else \
            "an interpolation that resolves"
        raise ConfigError(f"{origins.file(parts, file)}: {_path_text(parts)}: expected {expected}, got an error: "
                          f"{message}") from None


def check_group_keys(config: dict, allowed: Sequence[str], origins: Origins) -> None:
    """An unknown top-level key that a defaults file's folder made (Hydra's package rule): say how to fix it."""
    for key in config:
        if key not in allowed and key in origins.group_keys:
            file = origins.group_keys[key]
            raise ConfigError(f"{file}: {key}: unknown key {key!r}: Hydra places a defaults file from the folder "
                              f"{key!r} under the key {key!r}; start the file with '# @package _global_' (or list it "
                              f"as '{key}/...@_global_') to merge its keys at the top level.")
