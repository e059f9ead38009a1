"""The one table renderer (assay.render): every format, escaping, marks, colours, bad grids."""

from __future__ import annotations

import pytest

from assay.errors import InvalidParameterError
from assay.render import Cell, Grid, render_grid, tex_escape


def _grid(**kw):
    return Grid(header=("estimator", "prr", "aurc"),
                rows=((Cell("msp"), Cell("0.41", bold=True, colour="a1d99b"), Cell("0.12")),
                      ("a|b_c", "0.30", Cell("0.09", bold=True))), **kw)


def test_text_aligns_columns_by_width():
    out = render_grid(_grid(), "text").splitlines()
    assert out[0] == "estimator   prr  aurc"
    assert out[1] == "---------  ----  ----"
    assert out[2] == "msp        0.41  0.12"
    assert out[3] == "a|b_c      0.30  0.09"


def test_markdown_escapes_pipes_and_bolds_marks():
    out = render_grid(_grid(notes=("x100",), signature="sig"), "markdown").splitlines()
    assert out[:2] == ["| estimator | prr | aurc |", "|---|---:|---:|"]
    assert out[2] == "| msp | **0.41** | 0.12 |"
    assert out[3] == "| a\\|b_c | 0.30 | **0.09** |"
    assert out[-2:] == ["x100", "Signature: `sig`"]


def test_latex_escapes_and_colours():
    out = render_grid(_grid(groups=(("", 1), ("sequence", 2))), "latex")
    assert r"\multicolumn{2}{c}{sequence}" in out
    assert r"a|b\_c & 0.30 & \textbf{0.09} \\" in out
    assert r"\cellcolor[HTML]{a1d99b}\textbf{0.41}" in out
    assert out.startswith(r"\begin{tabular}{lrr}")


def test_html_escapes_text():
    out = render_grid(Grid(header=("<a>",), rows=(("x&y",),)), "html")
    assert "<th>&lt;a&gt;</th>" in out and "x&amp;y" in out


def test_groups_prefix_flat_headers():
    assert render_grid(_grid(groups=(("", 1), ("seq", 2))), "text").splitlines()[0].split() == \
        ["estimator", "seq:", "prr", "seq:", "aurc"]


def test_tex_escape_all_specials():
    assert tex_escape("&%$#_{}~^\\") == r"\&\%\$\#\_\{\}\textasciitilde{}\textasciicircum{}\textbackslash{}"


@pytest.mark.parametrize("kw, match", [
    (dict(header=("a", "b"), rows=(("1",),)), "row 0 has 1 cells"),
    (dict(header=("a", "b"), rows=(), align="lx"), "align"),
    (dict(header=("a", "b"), rows=(), groups=(("g", 3),)), "groups"),
])
def test_bad_grids_are_errors(kw, match):
    with pytest.raises(InvalidParameterError, match=match):
        Grid(**kw)


def test_unknown_format_is_an_error():
    with pytest.raises(InvalidParameterError, match="'format'.*'rtf'"):
        render_grid(_grid(), "rtf")
