"""``assay list KIND NAME``: one registered name's documentation, options with defaults, and convention.

Everything comes from what the plugin registered: the factory's docstring (numpydoc: the
summary and extended description, the ``Parameters`` entries, the ``References``), its
signature (the options and their defaults), and class attributes a metric declares
(``main_score``, ``higher_is_better``, ``needs_references``). A ``convention`` option is
shown with its default and the values the docstring names (``convention="..."``).
"""

from __future__ import annotations

import inspect
import re
from typing import Any

__all__ = ["entry_details", "format_details"]

#: numpydoc section headers (a title line underlined with dashes)
_SECTION = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+)\n-{3,}\s*$", re.M)
_CHOICE = re.compile(r"""convention\s*=\s*["']([\w.\-]+)["']""")


def _sections(doc: str) -> tuple[str, dict[str, str]]:
    """The text before the first numpydoc section, and each section's body by title."""
    marks = list(_SECTION.finditer(doc))
    head = doc[:marks[0].start()] if marks else doc
    bodies = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(doc)
        bodies[mark.group("title").strip()] = doc[mark.end():end].strip("\n")
    return head.strip(), bodies


def _parameter_docs(body: str) -> dict[str, str]:
    """``name : type`` entries of a numpydoc ``Parameters`` section -> their description, on one line."""
    out: dict[str, str] = {}
    name = None
    for line in body.splitlines():
        if line and not line[0].isspace():
            name = line.split(":", 1)[0].strip()
            for part in name.split(","):
                out.setdefault(part.strip(), "")
            name = name.split(",")[0].strip()
        elif name is not None and line.strip():
            out[name] = (out[name] + " " + line.strip()).strip()
    return out


def _options(factory: Any, documented: dict[str, str]) -> list[dict[str, Any]] | None:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    options = []
    for p in signature.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            options.append({"name": "**" + p.name, "default": None, "required": False,
                            "description": "any other option is passed on"})
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            required = p.default is p.empty
            options.append({"name": p.name, "default": None if required else p.default, "required": required,
                            "description": documented.get(p.name, "")})
    return options


def _convention_choices(factory: Any) -> list[str]:
    """The values ``convention=`` accepts, as the factory's own check lists them (``must be one of {...}``)."""
    from assay.errors import InvalidParameterError

    try:
        factory(convention="\0")
    except InvalidParameterError as exc:
        listed = re.search(r"'convention' parameter.*?one of \{([^}]*)\}", str(exc))
        if listed:
            return re.findall(r"'([^']*)'", listed.group(1))
    except Exception:  # noqa: BLE001 - a factory that fails otherwise lists nothing
        pass
    return []


def _without_examples(text: str) -> str:
    """The text up to its first doctest line (``>>>``)."""
    kept = []
    for line in text.splitlines():
        if line.lstrip().startswith(">>>"):
            break
        kept.append(line)
    return "\n".join(kept).strip()


#: kinds that are run from the command line, not loaded by name: how to run one
RUN_WITH: dict[str, str] = {"command": "assay {name} --help", "demo_section": "assay demo --section {name}"}


def entry_details(entry: Any, shown_name: str | None = None) -> dict[str, Any]:
    """What ``assay list KIND NAME`` shows, as plain data (``--json`` prints it)."""
    factory = entry.factory
    doc = inspect.getdoc(factory) or ""
    head, sections = _sections(doc)
    if entry.kind in RUN_WITH:  # a command or a demo section: its run function takes no options
        return {"kind": entry.kind, "name": shown_name or entry.name, "plugin": entry.plugin,
                "distribution": entry.distribution, "description": entry.description, "doc": "",
                "options": [], "references": None, "run": RUN_WITH[entry.kind].format(name=entry.name)}
    options = _options(factory, _parameter_docs(sections.get("Parameters", "")))
    details: dict[str, Any] = {
        "kind": entry.kind, "name": shown_name or entry.name, "plugin": entry.plugin,
        "distribution": entry.distribution, "description": entry.description, "doc": _without_examples(head),
        "options": options, "references": sections.get("References", "").strip() or None,
    }
    convention = next((o for o in options or () if o["name"] == "convention"), None)
    if convention is not None:
        choices = _convention_choices(factory) or list(dict.fromkeys(_CHOICE.findall(doc)))
        if convention["default"] is not None and convention["default"] not in choices:
            choices.insert(0, convention["default"])
        details["convention"] = {"default": convention["default"], "choices": choices}
    for attribute in ("main_score", "higher_is_better", "needs_references"):
        value = getattr(factory, attribute, None) if inspect.isclass(factory) else None
        if isinstance(value, (str, bool)):
            details[attribute] = value
    return details


def _value(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def format_details(details: dict[str, Any]) -> str:
    """``details`` as the text ``assay list KIND NAME`` prints."""
    source = details["plugin"] + (f", distribution {details['distribution']}" if details["distribution"] else "")
    lines = [f"{details['kind']} {details['name']}  [{source}]", ""]
    body = details["doc"] or details["description"]
    if details["description"] and not body.startswith(details["description"]):
        lines += [details["description"], ""]
    if body:
        lines += [body, ""]
    options = details["options"]
    if "run" in details:
        lines.append(f"Run: {details['run']}")
    elif options is None:
        lines.append("Options: not known (the factory's signature cannot be read).")
    elif not options:
        lines.append("Options: none.")
    else:
        lines.append(f"Options (load as {details['name']}[key=value, ...]):")
        width = max(len(o["name"]) for o in options)
        for o in options:
            default = "(required)" if o["required"] else ("" if o["name"].startswith("**") else
                                                          f"= {_value(o['default'])}")
            text = f"  {o['name']:<{width}}  {default}"
            if o["description"]:
                text += f"  -- {o['description']}"
            lines.append(text.rstrip())
    if "convention" in details:
        conv = details["convention"]
        others = [c for c in conv["choices"] if c != conv["default"]]
        lines += ["", f"Convention: {conv['default']} (default)"
                  + (f"; also: {', '.join(others)}" if others else "")
                  + f" (choose one with {details['name']}[convention=...])"]
    facts = []
    if "main_score" in details:
        facts.append(f"main score {details['main_score']!r}")
    if "higher_is_better" in details:
        facts.append("higher is better" if details["higher_is_better"] else "lower is better")
    if "needs_references" in details:
        facts.append("needs references" if details["needs_references"] else "reference-free")
    if facts:
        lines += ["", "Scores: " + "; ".join(facts) + "."]
    if details.get("references"):
        lines += ["", "References:", *("  " + line for line in details["references"].splitlines())]
    return "\n".join(lines).rstrip()
