"""The one table renderer: a grid of cells to Markdown, fixed-width text, LaTeX or HTML.

Every table assay prints (``assay table``, the UE tables of ``assay ue`` and
:meth:`~assay.uncertainty.UEManager.table`, ``assay parse-eval``, the metric result tables)
is first built as a :class:`Grid` (a header, rows of :class:`Cell`, notes) by the code that
knows what the numbers mean, and then drawn by :func:`render_grid`. The drawing rules live
here once: escaping, alignment, bold marks, background colours, the signature line.

>>> g = Grid(header=("metric", "value"), rows=((Cell("UAS"), Cell("0.8123", bold=True)),),
...          align="lr", notes=("higher is better",))
>>> print(render_grid(g, "text"))
metric   value
------  ------
UAS     0.8123
<BLANKLINE>
higher is better
>>> print(render_grid(g, "markdown"))
| metric | value |
|---|---:|
| UAS | **0.8123** |
<BLANKLINE>
higher is better
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

import attrs

from assay.errors import InvalidParameterError

__all__ = ["FORMATS", "Cell", "Grid", "render_grid", "tex_escape"]

#: the formats :func:`render_grid` draws
FORMATS = ("markdown", "text", "latex", "html")


@attrs.frozen
class Cell:
    """One table cell: its text, bold (the best of its column, say), an optional background colour.

    ``colour`` (background) and ``text_colour`` are hex RGB strings without ``#``
    (``"a1d99b"``), drawn by LaTeX and HTML only.
    """

    text: str
    bold: bool = False
    colour: str | None = None
    text_colour: str | None = None


def _as_cell(value: Cell | str) -> Cell:
    return value if isinstance(value, Cell) else Cell(str(value))


# typed converters (``converter=tuple`` would make mypy read every field as ``Iterable[_T_co]``)
def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _cells(rows: Iterable[Iterable[Cell | str]]) -> tuple[tuple[Cell, ...], ...]:
    return tuple(tuple(_as_cell(c) for c in row) for row in rows)


def _spans(groups: Iterable[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    return tuple((name, span) for name, span in groups)


def _ints(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(values)


@attrs.frozen
class Grid:
    """What a table shows, before it is drawn.

    Attributes
    ----------
    header : tuple of str
        The column titles.
    rows : tuple of tuple of Cell (or str)
        The body; every row has ``len(header)`` cells.
    align : str
        One letter per column, ``l`` or ``r`` (default: the first column left, the others right).
    groups : tuple of (str, int)
        Optional spanning titles over consecutive columns (``("", 2), ("task", 3)``): drawn as a
        first header line in LaTeX (a centred ``\\multicolumn`` with a ``\\cmidrule`` under it) and
        HTML (where the titles under an unnamed group span both header rows), prefixed as
        ``task: `` to the titles otherwise.
    notes : tuple of str
        Lines printed under the table (the caption in LaTeX).
    signature : str
        The provenance signature, printed last (a comment in LaTeX).
    rules_before : tuple of int
        Body rows before which LaTeX draws a ``\\midrule`` (blocks of rows).
    """

    header: tuple[str, ...] = attrs.field(converter=_strings)
    rows: tuple[tuple[Cell, ...], ...] = attrs.field(converter=_cells)
    align: str = ""
    groups: tuple[tuple[str, int], ...] = attrs.field(default=(), converter=_spans)
    notes: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    signature: str = ""
    rules_before: tuple[int, ...] = attrs.field(default=(), converter=_ints)

    def __attrs_post_init__(self) -> None:
        n = len(self.header)
        for i, row in enumerate(self.rows):
            if len(row) != n:
                raise InvalidParameterError(f"Grid row {i} has {len(row)} cells; the header has {n} columns.")
        if self.align and (len(self.align) != n or set(self.align) - {"l", "r"}):
            raise InvalidParameterError(f"Grid 'align' must be {n} letters 'l' or 'r'. Got {self.align!r} instead.")
        if self.groups and sum(span for _, span in self.groups) != n:
            raise InvalidParameterError(f"Grid 'groups' must span the {n} columns. Got {list(self.groups)!r}.")

    @property
    def alignment(self) -> str:
        return self.align or ("l" + "r" * (len(self.header) - 1))[: len(self.header)]

    def flat_header(self) -> list[str]:
        """The titles with their group's name in front (for formats without spanning titles)."""
        if not self.groups:
            return list(self.header)
        out: list[str] = []
        i = 0
        for name, span in self.groups:
            out += [f"{name}: {h}" if name else h for h in self.header[i:i + span]]
            i += span
        return out


def _text(grid: Grid) -> str:
    header = grid.flat_header()
    body = [[c.text for c in row] for row in grid.rows]
    widths = [max([len(h)] + [len(r[j]) for r in body]) for j, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if a == "l" else c.rjust(w)
                         for c, w, a in zip(cells, widths, grid.alignment)).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in body]
    return _with_notes(out, grid)


def _with_notes(lines: list[str], grid: Grid, signature: str | None = None) -> str:
    tail = list(grid.notes)
    if grid.signature:
        tail.append(signature if signature is not None else f"Signature: {grid.signature}")
    return "\n".join(lines + ([""] + tail if tail else []))


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _markdown(grid: Grid) -> str:
    rule = "|" + "|".join("---" if a == "l" else "---:" for a in grid.alignment) + "|"
    out = ["| " + " | ".join(_md_escape(h) for h in grid.flat_header()) + " |", rule]
    for row in grid.rows:
        out.append("| " + " | ".join(f"**{_md_escape(c.text)}**" if c.bold and c.text else _md_escape(c.text)
                                     for c in row) + " |")
    return _with_notes(out, grid, f"Signature: `{grid.signature}`")


def tex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped, and the few symbols tables use as math.

    ``±``, ``×``, ``↑``, ``↓`` become ``$\\pm$``, ``$\\times$``, ``$\\uparrow$``, ``$\\downarrow$``
    and ``–`` (an en dash) ``--``, so the output compiles with plain pdflatex.
    """
    table = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
             "±": r"$\pm$", "×": r"$\times$", "↑": r"$\uparrow$", "↓": r"$\downarrow$", "–": "--"}
    return "".join(table.get(ch, ch) for ch in str(text))


def _latex(grid: Grid) -> str:
    esc = tex_escape
    lines = [r"\begin{tabular}{" + grid.alignment + "}", r"\toprule"]
    if grid.groups:
        lines.append(" & ".join(rf"\multicolumn{{{n}}}{{c}}{{{tex_escape(name)}}}" if n > 1 or name else ""
                                for name, n in grid.groups) + r" \\")
        rules, start = [], 1
        for name, n in grid.groups:
            if name:
                rules.append(rf"\cmidrule(lr){{{start}-{start + n - 1}}}")
            start += n
        if rules:
            lines.append(" ".join(rules))
    lines += [" & ".join(tex_escape(h) for h in grid.header) + r" \\", r"\midrule"]
    for i, row in enumerate(grid.rows):
        if i in grid.rules_before and i:
            lines.append(r"\midrule")
        cells = []
        for c in row:
            text = rf"\textbf{{{esc(c.text)}}}" if c.bold and c.text else esc(c.text)
            cells.append((rf"\cellcolor[HTML]{{{c.colour}}}" if c.colour else "")
                         + (rf"\color[HTML]{{{c.text_colour}}}" if c.text_colour and c.text else "") + text)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if grid.signature:
        lines.append("% assay signature: " + " ".join(grid.signature.splitlines()))
    return "\n".join(lines)


def _html(grid: Grid) -> str:
    esc = html.escape
    out = ['<table class="assay-table" style="border-collapse:collapse;font-family:sans-serif;font-size:12px">',
           "<thead>"]
    spanned = [False] * len(grid.header)  # titles drawn in the first row, two rows high (under an unnamed group)
    if grid.groups:
        first, i = [], 0
        for name, n in grid.groups:
            if name:
                first.append(f'<th colspan="{n}">{esc(name)}</th>')
            else:
                first += [f'<th rowspan="2">{esc(h)}</th>' for h in grid.header[i:i + n]]
                spanned[i:i + n] = [True] * n
            i += n
        out.append("<tr>" + "".join(first) + "</tr>")
    out.append("<tr>" + "".join(f"<th>{esc(h)}</th>" for h, s in zip(grid.header, spanned) if not s)
               + "</tr></thead><tbody>")
    for row in grid.rows:
        tds = []
        for c, a in zip(row, grid.alignment):
            style = f"padding:2px 6px;text-align:{'left' if a == 'l' else 'right'}"
            if c.colour:
                style += f";background:#{c.colour}"
            if c.text_colour:
                style += f";color:#{c.text_colour}"
            text = f"<b>{esc(c.text)}</b>" if c.bold and c.text else esc(c.text)
            tds.append(f'<td style="{style}">{text}</td>')
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    out += [f"<p>{esc(n)}</p>" for n in grid.notes]
    if grid.signature:
        out.append(f'<p class="assay-signature"><small>Signature: <code>{esc(grid.signature)}</code></small></p>')
    return "\n".join(out)


def render_grid(grid: Grid, fmt: str = "markdown") -> str:
    """Draw ``grid`` in ``fmt``: ``markdown``, ``text`` (fixed width), ``latex`` (a booktabs
    ``tabular``; colours need ``\\usepackage[table]{xcolor}``) or ``html`` (a ``<table>`` with inline styles)."""
    renderers = {"markdown": _markdown, "text": _text, "latex": _latex, "html": _html}
    if fmt not in renderers:
        raise InvalidParameterError(f"The 'format' parameter must be one of {', '.join(FORMATS)}. Got {fmt!r} instead.")
    return renderers[fmt](grid)
