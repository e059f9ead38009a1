"""``assay plugins [--json]`` and ``assay list KIND``: what is installed and registered.

Both show what went wrong: plugins that failed to load (and why), names two plugins
registered (ambiguous: load them as ``distribution:name``), and public assay names a
plugin replaced.
"""

from __future__ import annotations

import argparse
from typing import Any

from assay.cli._args import add_json
from assay.cli._output import print_json
from assay.plugins import KINDS, get_plugin_system


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "plugins", help="list installed plugins, what each registered, and load errors",
        description="List the plugins assay found (built-in and installed through the 'assay' "
        "entry-point group), their distributions and versions, the names each registered, "
        "and any load errors. Broken plugins are reported here and skipped elsewhere; a name "
        "two plugins registered is ambiguous (load it as DISTRIBUTION:NAME); public assay "
        "functions a plugin replaced are listed under it.",
    )
    add_json(p, "the plugins, what each registered, and load errors")
    p.set_defaults(func=run_plugins)

    kinds = sorted(KINDS)
    p = subparsers.add_parser(
        "list", help="list the registered names of one kind, or document one name",
        description="List the registered names of one kind, with the plugin that registered "
        "each and a one-line description. Load them by name, with overrides: "
        "name[key=value, ...]. With NAME ('assay list metric f1'), show that name's documentation: "
        "its description and formula, its options with their defaults, its convention where it has one, "
        "and what its scores mean.",
    )
    p.add_argument("kind", choices=kinds + [k + "s" for k in kinds], metavar="KIND",
                   help="one of: " + ", ".join(kinds))
    p.add_argument("name", nargs="?", default=None, metavar="NAME",
                   help="document this name (or DISTRIBUTION:NAME) instead of listing them all")
    add_json(p, "the names (or, with NAME, its documentation)")
    p.set_defaults(func=run_list)


def run_plugins(args: argparse.Namespace) -> int:
    system = get_plugin_system()
    infos = system.plugins
    if args.json:
        print_json([info.to_dict() for info in infos])
        return 0
    for info in infos:
        origin = "built-in" if info.builtin else f"{info.distribution or '?'} {info.version or ''}".strip()
        print(f"{info.name}  [{origin}]  {info.status}")
        for kind, names in info.registered.items():
            print(f"    {kind}: {', '.join(names)}")
        if info.status == "loaded" and not info.registered:
            print("    registered nothing")
        for kind, clashing in info.clashes.items():
            registry = system.registry(kind)
            for name, others in clashing.items():
                spellings = ", ".join(registry.qualified_name(e) for e in registry.candidates(name))
                print(f"    clash: {kind} {name!r} is also registered by {', '.join(others)}; "
                      f"load one as {spellings}")
        if info.replaced:
            print(f"    replaced: {', '.join(info.replaced)}")
        if info.error:
            print(f"    {'error' if info.status == 'failed' else 'note'}: {info.error}")
    failed = sum(info.status == "failed" for info in infos)
    footer = f"{len(infos)} plugins, {failed} failed to load"
    clashes = sum(len(names) for names in system.clashes().values())
    replaced = sum(bool(info.replaced) for info in infos)
    if clashes:
        footer += f", {clashes} ambiguous {'name' if clashes == 1 else 'names'}"
    if replaced:
        footer += f", {replaced} replaced assay functions"
    print(f"\n{footer}")
    _print_catalog(None)
    return 0


def _print_catalog(kind: str | None) -> None:
    """The local catalog's entries (of ``kind``, or all), with unreadable and shadowed files said as such."""
    from assay.plugins._catalog_files import catalog_entries, catalog_paths

    rows = [r for r in catalog_entries() if kind is None or r["kind"] in (kind, "")]
    if not rows:
        return
    folders = ", ".join(str(p) for p in catalog_paths())
    print(f"\nCatalog entries (load them by name; folders searched in order: {folders}):")
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        if r["error"]:
            print(f"  {r['name']:<{width}}  unreadable: {r['error']}")
            continue
        what = r["class"] if kind is not None else f"{r['kind']}: {r['class']}"
        shadow = "  (shadowed by an earlier folder: never loaded)" if r["shadowed"] else ""
        print(f"  {r['name']:<{width}}  {what}  [{r['path']}]{shadow}")


def run_list(args: argparse.Namespace) -> int:
    kind = args.kind if args.kind in KINDS else args.kind[:-1]
    registry = get_plugin_system().registry(kind)
    if args.name is not None:
        return _show_one(registry, args.name, as_json=args.json)
    ambiguous = registry.ambiguous()
    rows = []  # (shown name, entry, ambiguous?)
    for name in registry.names():
        candidates = registry.candidates(name)
        if len(candidates) == 1:
            rows.append((name, candidates[0], False))
        else:
            rows.extend((registry.qualified_name(e), e, True) for e in candidates)
    if args.json:
        from assay.plugins._catalog_files import catalog_entries

        catalog = [{"name": r["name"], "plugin": "catalog", "description": f"catalog entry: {r['class']}",
                    "options": [], "ambiguous": False, "qualified": r["name"], "path": r["path"],
                    "shadowed": r["shadowed"]} for r in catalog_entries() if r["kind"] == kind and not r["error"]]
        print_json([{"name": e.name, "plugin": e.plugin, "description": e.description,
                     "options": e.accepted_keys(), "ambiguous": amb,
                     "qualified": registry.qualified_name(e)} for _, e, amb in rows] + catalog)
        return 0
    if not rows:
        print(f"No {kind} is registered. Is the plugin that provides it installed? (assay plugins)")
        _print_catalog(kind)
        return 0
    width = max(len(shown) for shown, _, _ in rows)
    for shown, e, amb in rows:
        print(f"{shown:<{width}}  {e.description}  [{e.plugin}]" + ("  (ambiguous)" if amb else ""))
    for name, candidates in ambiguous.items():
        print(f"\n{kind} {name!r} is registered by {len(candidates)} plugins: load it as "
              f"{' or '.join(registry.qualified_name(e) for e in candidates)}, or set ASSAY_DISABLE_PLUGINS "
              "(see 'assay plugins').")
    _print_catalog(kind)
    return 0


def _show_one(registry: Any, name: str, *, as_json: bool) -> int:
    """``assay list KIND NAME``: the documentation of one registered name (an unknown name is an error)."""
    from assay.cli._describe import entry_details, format_details
    from assay.errors import InvalidParameterError, UnknownNameError

    try:
        entry = registry.get(name)
    except UnknownNameError as exc:
        raise InvalidParameterError(f"NAME {name!r}: {exc}") from None
    details = entry_details(entry, shown_name=name)
    if as_json:
        print_json(details)
    else:
        print(format_details(details))
    return 0
