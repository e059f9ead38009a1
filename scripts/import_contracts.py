"""import-linter contract types of our own (``[tool.importlinter] contract_types`` in pyproject.toml).

``public_api``: the importers (the first-party plugins) import only the **public** modules of
the other packages (assay, and each other plugin): no module any part of whose name, below
the package, starts with ``_`` (``assay.metrics._params``, ``assay._x.y``). STYLE.md's rule,
"modules with a leading underscore are private", made checkable. A module's own package is
never restricted (a plugin imports its own private modules freely).

import-linter's built-in ``forbidden`` contract cannot say this: a module expression's
wildcard stands for a whole name (``assay.*``, ``assay.**``), never for part of one
(``assay.**._*``), and listing today's private modules by hand would let a new one through.

``lint-imports`` runs from the repository root, which it puts on ``sys.path``, so this file
is found as ``scripts.import_contracts`` without being installed.
"""

from __future__ import annotations

from typing import Any

import grimp
from importlinter import Contract, ContractCheck, fields, output

__all__ = ["PublicApiContract", "is_private", "private_imports"]


def is_private(module: str) -> bool:
    """Whether ``module`` is private: a part of its name after the top-level package starts with ``_``."""
    return any(part.startswith("_") for part in module.split(".")[1:])


def _package(module: str) -> str:
    return module.split(".", 1)[0]


def private_imports(graph: grimp.ImportGraph, importers: set[str], packages: set[str]) -> list[dict[str, Any]]:
    """The direct imports by a module of ``importers`` (and their descendants) of a private module of another
    package of ``packages``, each ``{"importer", "imported", "line_numbers"}``, sorted."""
    found = []
    for top in sorted(importers):
        for importer in sorted({top} | graph.find_descendants(top)):
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                if _package(imported) in packages and _package(imported) != top and is_private(imported):
                    details = graph.get_import_details(importer=importer, imported=imported)
                    found.append({"importer": importer, "imported": imported,
                                  "line_numbers": sorted(d["line_number"] for d in details)})
    return found


class PublicApiContract(Contract):
    """``importers`` import only the public modules of the other packages of ``packages``."""

    type_name = "public_api"

    importers = fields.SetField(subfield=fields.StringField())
    packages = fields.SetField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        importers: set[str] = self.importers  # type: ignore[assignment]
        packages: set[str] = self.packages  # type: ignore[assignment]
        missing = sorted((importers | packages) - set(graph.modules))
        if missing:
            raise ValueError(f"public_api contract {self.name!r}: no package {', '.join(missing)} in the graph.")
        found = private_imports(graph, importers, packages)
        return ContractCheck(kept=not found, metadata={"private_imports": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for item in check.metadata["private_imports"]:
            lines = ", ".join(f"l.{n}" for n in item["line_numbers"])
            output.print_error(f"{item['importer']} imports the private module {item['imported']} ({lines})")
            output.new_line()
        output.print_error("Import the name from a public module (one with no part starting with '_'), "
                           "exporting it there first if it is meant for plugins.", bold=False)
        output.new_line()
