"""``assay plugins [--json]`` and ``assay list KIND``: what is installed and registered."""

from __future__ import annotations

import argparse
import json

from assay.plugins import KINDS, get_plugin_system


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "plugins", help="list installed plugins, what each registered, and load errors",
        description="List the plugins assay found (built-in and installed through the 'assay' "
        "entry-point group), their distributions and versions, the names each registered, "
        "and any load errors. Broken plugins are reported here and skipped elsewhere.",
    )
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(func=run_plugins)

    kinds = sorted(KINDS)
    p = subparsers.add_parser(
        "list", help="list the registered names of one kind",
        description="List the registered names of one kind, with the plugin that registered "
        "each and a one-line description. Load them by name, with overrides: "
        "name[key=value, ...].",
    )
    p.add_argument("kind", choices=kinds + [k + "s" for k in kinds], metavar="KIND",
                   help="one of: " + ", ".join(kinds))
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(func=run_list)


def run_plugins(args: argparse.Namespace) -> int:
    infos = get_plugin_system().plugins
    if args.json:
        print(json.dumps([info.to_dict() for info in infos], indent=2))
        return 0
    for info in infos:
        origin = "built-in" if info.builtin else f"{info.distribution or '?'} {info.version or ''}".strip()
        print(f"{info.name}  [{origin}]  {info.status}")
        for kind, names in info.registered.items():
            print(f"    {kind}: {', '.join(names)}")
        if info.error:
            print(f"    {'error' if info.status == 'failed' else 'note'}: {info.error}")
    failed = sum(info.status == "failed" for info in infos)
    print(f"\n{len(infos)} plugins, {failed} failed to load")
    return 0


def run_list(args: argparse.Namespace) -> int:
    kind = args.kind if args.kind in KINDS else args.kind[:-1]
    entries = list(get_plugin_system().registry(kind))
    if args.json:
        print(json.dumps([{"name": e.name, "plugin": e.plugin, "description": e.description,
                           "options": e.accepted_keys()} for e in entries], indent=2))
        return 0
    if not entries:
        print(f"No {kind} is registered. Is the plugin that provides it installed? (assay plugins)")
        return 0
    width = max(len(e.name) for e in entries)
    for e in entries:
        print(f"{e.name:<{width}}  {e.description}  [{e.plugin}]")
    return 0
