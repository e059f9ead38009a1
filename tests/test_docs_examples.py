"""Every ```python block in README.md and docs/*.md runs as written.

Each block runs in a fresh namespace; the blocks of one page run in order, in one
temporary working folder (so a block may read a file an earlier block of the page wrote).
A block that cannot run standalone (it needs a Spark cluster, a model, a user's own data)
is preceded by an HTML comment ``<!-- not-run: reason -->``; the reason is required.
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
_NOT_RUN = re.compile(r"<!--\s*not-run:(?P<reason>(?:(?!-->).)*)-->\s*\Z", re.S)


def python_blocks(text: str) -> list[tuple[int, str, str | None]]:
    """``(line, code, not_run_reason)`` for each ```python fence of a Markdown page."""
    blocks = []
    for match in _FENCE.finditer(text):
        if match.group("info").strip().split(" ")[0] not in ("python", "py"):
            continue
        line = text.count("\n", 0, match.start()) + 1
        marker = _NOT_RUN.search(text[: match.start()])
        reason = marker.group("reason").strip() if marker else None
        indent = match.group("indent")
        body = "".join(ln[len(indent):] if ln.startswith(indent) else ln
                       for ln in match.group("body").splitlines(keepends=True))
        blocks.append((line, body, reason))
    return blocks


def test_extraction_finds_fences_and_markers():
    page = (
        "intro\n\n```python\nx = 1\n```\n\n<!-- not-run: needs a cluster -->\n```python\nsc.stop()\n```\n"
        "\n```console\n$ assay\n```\n\n  ```python\n  y = 2\n  ```\n\n```python\nz = 3\n```\n"
    )
    assert python_blocks(page) == [(3, "x = 1\n", None), (8, "sc.stop()\n", "needs a cluster"),
                                   (16, "y = 2\n", None), (20, "z = 3\n", None)]


def test_every_not_run_marker_gives_a_reason():
    for page in PAGES:
        for line, _code, reason in python_blocks(page.read_text(encoding="utf-8")):
            assert reason is None or reason, f"{page.name}:{line}: <!-- not-run: --> needs a reason"


def _runnable(page: Path) -> bool:
    return any(reason is None for _line, _code, reason in python_blocks(page.read_text(encoding="utf-8")))


@pytest.mark.parametrize("page", [p for p in PAGES if _runnable(p)], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for line, code, reason in python_blocks(page.read_text(encoding="utf-8")):
        if reason is not None:
            continue
        script = tmp_path / f"block_line{line}.py"
        script.write_text(code, encoding="utf-8")
        try:
            runpy.run_path(str(script), run_name="__main__")
        except SystemExit as exc:  # a block may end with sys.exit(0)
            assert not exc.code, f"{page.name}:{line}: the example exited with {exc.code!r}"
        except Exception as exc:
            raise AssertionError(f"{page.name}:{line}: the example fails as written: {exc!r}") from exc
