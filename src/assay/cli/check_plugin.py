"""``assay check-plugin DIST [--json] [--kind KIND ...] [-k NAME]``: the conformance suite of an installed plugin.

Runs, on every name the distribution registered, the checks of its kind (see
:mod:`assay.testing.conformance`), and checks that each plugin's declared names are the names it
registers (:mod:`assay.testing.declaration_checks`), and prints one line per check, ``name  kind  check
PASS | FAIL(reason) | SKIP(reason)``, then a summary line. Exit status: 0 when no check
failed (skips allowed), 1 when one failed, 2 for a usage error (an unknown
distribution, a filter that selects nothing). For plugin authors' CI.
"""

from __future__ import annotations

import argparse
import fnmatch

from assay.cli._args import flag
from assay.cli._output import print_json
from assay.errors import InvalidParameterError
from assay.plugins import KINDS
from assay.testing.isolation import CHECK_TIMEOUT

EXIT_FAILED = 1


def register(subparsers: argparse._SubParsersAction) -> None:
    kinds = sorted(KINDS)
    p = subparsers.add_parser(
        "check-plugin", help="run the conformance suite on an installed plugin's registrations",
        description="Run assay's conformance and invariance checks on every name an installed plugin "
        "distribution registered (metrics: order, chunking, shard-then-merge, one at a time, pickling, "
        "evaluate versus update/compute, bad inputs; other kinds: the checks of their protocol) and print "
        "one line per check: PASS, FAIL(reason) or SKIP(reason); the declaration check compares the names each "
        "plugin declares in its entry points with the names it registers. Exit status 0 when no check failed, 1 "
        "when one did, 2 for a usage error. Plugins declare sample inputs with examples=[...] (docs/plugins.md).",
    )
    p.add_argument("dist", metavar="DIST", help="the distribution (pip name, e.g. assay-classic) or its entry-point "
                                                "name; 'assay' checks the built-ins")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.add_argument("--kind", action="extend", nargs="+", choices=kinds + [k + "s" for k in kinds], metavar="KIND",
                   help="check only names of these kinds (one of: " + ", ".join(kinds) + ")")
    p.add_argument("-k", "--name", action="append", metavar="NAME", dest="name",
                   help="check only these names (repeatable; a glob such as 'f1*' or a substring)")
    p.add_argument("--check-timeout", type=_seconds, default=CHECK_TIMEOUT, metavar="SECONDS",
                   help=f"the most seconds one check may run (default {CHECK_TIMEOUT:g}; 0: no bound); each name's "
                        "checks run in a child process, so a check that hangs, or a plugin that ends the process "
                        "(os._exit), is a FAIL of that check")
    p.set_defaults(func=run_check_plugin)


def _seconds(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0 (0: no bound); got {text!r}")
    return value or None


def _matches(name: str, pattern: str) -> bool:
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return pattern in name


def run_check_plugin(args: argparse.Namespace) -> int:
    from assay.plugins import get_plugin_system
    from assay.testing.conformance import PluginReport, check_entries, find_plugin, load_results
    from assay.testing.declaration_checks import declaration_hint, declaration_results

    plugin = find_plugin(args.dist)
    entries = list(plugin.entries)
    if args.kind:
        kinds = {k if k in KINDS else k[:-1] for k in args.kind}
        entries = [e for e in entries if e.kind in kinds]
        if not entries:
            have = sorted({e.kind for e in plugin.entries})
            raise InvalidParameterError(f"{flag(args, 'kind')} {' '.join(args.kind)}: {plugin.distribution} registers "
                                        f"no name of that kind; it registers {', '.join(have) or 'nothing'}.")
    if args.name:
        selected = [e for e in entries if any(_matches(e.name, pattern) for pattern in args.name)]
        if not selected:
            import difflib

            known = sorted({e.name for e in entries})
            close = sorted({c for pattern in args.name for c in difflib.get_close_matches(pattern, known, n=3)})
            hint = f" Did you mean: {', '.join(close)}?" if close else f" Registered: {', '.join(known)}."
            raise InvalidParameterError(f"{flag(args, 'name')} {' '.join(args.name)}: matches none of the names "
                                        f"{plugin.distribution} registered.{hint}")
        entries = selected
    # an alias loads the factory of the name it stands for: checking it again would only repeat those checks
    entries = [e for e in entries if "alias_of" not in e.metadata]
    declared = declaration_results(plugin.infos, get_plugin_system())
    report = PluginReport(plugin.distribution, plugin.version,
                          tuple(load_results(plugin) + declared + check_entries(entries, timeout=args.check_timeout)))
    if args.json:
        print_json(report.to_dict())
    else:
        print(report.table())
        declare = declaration_hint(plugin.infos, declared)
        if declare:
            print()
            print(declare)
        print()
        print(report.summary())
    return 0 if report.ok else EXIT_FAILED
