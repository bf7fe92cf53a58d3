"""Promotion tables as data, and their text, Markdown, CSV, HTML and JSON
renderings."""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final

from typelattice import _config, _dtypes, _promotion
from typelattice._lattice import Lattice

__all__ = [
    "DEFAULT_CODES",
    "FORMATS",
    "Table",
    "differing_cells",
    "format_rows",
    "format_table",
    "promotion_table",
]

#: The types tables show by default, in the order of JAX's documented
#: promotion table: the 15 standard types, then the weak ones.
DEFAULT_CODES: Final = (
    "b1", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8",
    "bf", "f2", "f4", "f8", "c8", "c16", "i*", "f*", "c*",
)  # fmt: skip

#: What a cell shows where two types have no join.
NO_JOIN: Final = "-"


@dataclass(frozen=True)
class Table:
    """A square table of codes: ``cells[i][j]`` is the join of ``codes[i]``
    and ``codes[j]``, or ``'-'`` where there is none.

    Made by :func:`promotion_table` and :func:`~typelattice.measure_library`.

    Attributes:
      codes: the types of the rows and columns, in order.
      cells: the rows, each a tuple of codes.
      title: what the table shows (the lattice and mode, or the library).

    >>> t = promotion_table(['i1', 'u1'], 'standard', x64=False)
    >>> t
    Table(codes=('i1', 'u1'), cells=(('i1', 'i2'), ('i2', 'u1')), \
title='typelattice standard lattice, 32-bit mode')
    """

    codes: tuple[str, ...]
    cells: tuple[tuple[str, ...], ...]
    title: str = ""

    def cell(self, a: str, b: str) -> str:
        """The cell for row code ``a`` and column code ``b``.

        Args:
          a: a code of :attr:`codes` (the row).
          b: a code of :attr:`codes` (the column).

        Returns:
          The code of the join, or ``'-'`` where there is none.

        Raises:
          ValueError: a code not in the table.

        >>> promotion_table(['u1', 'i1', 'f*'], 'standard').cell('u1', 'f*')
        'f*'
        """
        return self.cells[self.codes.index(a)][self.codes.index(b)]


def all_codes() -> tuple[str, ...]:
    """The default codes, then the extended types' (small floats, narrow ints)."""
    extended = tuple(_dtypes.dtype_code(d) for d in _dtypes.EXTENDED_DTYPES)
    return DEFAULT_CODES[:15] + extended + DEFAULT_CODES[15:]


def promotion_table(
    codes: Sequence[str] | None = None,
    promotion: str | None = None,
    x64: bool | None = None,
    lattice: Lattice[Any] | None = None,
) -> Table:
    """The join table of a promotion lattice, in short codes.

    Args:
      codes: the types, as codes (by default the 18 of JAX's documented
        table: the standard types and ``i* f* c*``); with
        ``lattice``, its node names (all its nodes by default).
      promotion: ``'standard'``, ``'strict'`` or a registered name (the
        current mode by default).
      x64: 64-bit mode (the current mode by default).
      lattice: a lattice of string nodes to tabulate instead (e.g. from
        :meth:`Lattice.from_file`); the table shows its labels.

    Returns:
      The table, titled with the lattice and mode; a cell is ``'-'`` where
      the pair has no join.

    >>> t = promotion_table(['i1', 'u1', 'f*'], 'standard', x64=True)
    >>> t.cell('i1', 'u1'), t.cell('u1', 'f*')
    ('i2', 'f*')
    >>> t.title
    'typelattice standard lattice, 64-bit mode'
    """
    lat: Lattice[Any]
    label: Callable[[Any], str]
    if lattice is not None:
        lat, label = lattice, lattice.label
        nodes: list[Any] = list(lattice.nodes if codes is None else codes)
        order = tuple(label(n) for n in nodes)
        title = "lattice"
    else:
        order = tuple(DEFAULT_CODES if codes is None else codes)
        state = _config.current()
        promotion = state.dtype_promotion if promotion is None else promotion
        x64 = state.enable_x64 if x64 is None else x64
        lat = _promotion.get_lattice(promotion, x64)
        label = _promotion.node_label
        nodes = [_dtypes.code_to_dtype(c) for c in order]
        title = f"typelattice {promotion} lattice, {'64' if x64 else '32'}-bit mode"
    # Lattice.table, not a join per cell: a large lattice's N² joins would
    # all stay in the cache of join.
    rows = tuple(
        tuple(NO_JOIN if j is None else label(j) for j in row)
        for row in lat.table(nodes)
    )
    return Table(order, rows, title)


def differing_cells(table: Table, other: Table) -> tuple[tuple[str, str], ...]:
    """The cells ``(row, column)`` of ``table`` whose value ``other`` does not share.

    Args:
      table: the table whose cells are returned.
      other: the table to compare with; only the codes the two have in
        common are compared.

    Returns:
      The cells, row by row.

    >>> a = promotion_table(['i1', 'u1'], 'standard', x64=True)
    >>> b = promotion_table(['i1', 'u1'], 'strict', x64=True)
    >>> differing_cells(a, b)
    (('i1', 'u1'), ('u1', 'i1'))
    """
    shared = [c for c in table.codes if c in other.codes]
    return tuple(
        (a, b) for a in shared for b in shared if table.cell(a, b) != other.cell(a, b)
    )


FORMATS: Final = ("text", "markdown", "csv", "html", "json")

# ANSI styles for a terminal: the green cells of JAX's documented table (where
# NumPy differs), bold headers, dim gaps.
_GREEN, _BOLD, _DIM, _RESET = "\x1b[30;42m", "\x1b[1m", "\x1b[2m", "\x1b[0m"


def format_table(
    table: Table,
    fmt: str = "text",
    *,
    marked: Collection[tuple[str, str]] = (),
    color: bool = False,
) -> str:
    """Render a table as ``text`` (aligned), ``markdown``, ``csv``, ``html``
    or ``json``.

    The CSV layout is that of the promotion table in JAX's documentation: a
    first row ``,b1,u1,...``, then one row per type, CRLF line ends.

    Args:
      table: the table.
      fmt: one of :data:`FORMATS`.
      marked: cells ``(row, column)`` to highlight, e.g. where another
        library differs: ``[x]`` in text and CSV, ``**x**`` in Markdown, a
        ``differs`` class in HTML, a ``marked`` list in JSON.
      color: in text, highlight with terminal colours instead of brackets.

    Returns:
      The rendering (no trailing newline except CSV's last line end).

    >>> t = promotion_table(['i1', 'u1'], 'standard', x64=True)
    >>> print(format_table(t, 'markdown'))
    |  | i1 | u1 |
    | --- | --- | --- |
    | i1 | i1 | i2 |
    | u1 | i2 | u1 |
    >>> print(format_table(t, marked=[('i1', 'u1')]))
        i1   u1
    i1  i1  [i2]
    u1  i2   u1
    """
    marks = set(marked)
    header = ["", *table.codes]
    body = [[code, *row] for code, row in zip(table.codes, table.cells, strict=True)]
    if fmt == "json":
        data: dict[str, Any] = {
            "title": table.title,
            "codes": list(table.codes),
            "cells": [list(row) for row in table.cells],
        }
        if marked:
            data["marked"] = [list(m) for m in sorted(marks, key=_order(table))]
        return json.dumps(data, indent=1, ensure_ascii=False)
    if fmt == "html":
        return _html(table, marks)

    def shown(left: str, right: str) -> list[list[str]]:
        return [header] + [
            [row[0]]
            + [
                left + v + right if (row[0], c) in marks else v
                for c, v in zip(table.codes, row[1:], strict=True)
            ]
            for row in body
        ]

    if fmt == "csv":
        out = io.StringIO()
        csv.writer(out).writerows(shown("[", "]"))
        return out.getvalue()
    if fmt == "markdown":
        rows = shown("**", "**")
        lines = ["| " + " | ".join(rows[0]) + " |"]
        lines.append("| " + " | ".join(["---"] * len(header)) + " |")
        lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
        return "\n".join(lines)
    if fmt == "text":
        return _text(table, header, body, marks, color)
    raise ValueError(f"unknown table format {fmt!r}: expected {', '.join(FORMATS)}")


def _order(table: Table) -> Callable[[tuple[str, str]], tuple[int, int]]:
    index = {c: i for i, c in enumerate(table.codes)}
    return lambda m: (index.get(m[0], -1), index.get(m[1], -1))


def _text(
    table: Table,
    header: list[str],
    body: list[list[str]],
    marks: set[tuple[str, str]],
    color: bool,
) -> str:
    # Brackets take room even when colour replaces them, so that a table
    # reads the same either way; without marks nothing is added.
    pad = 1 if marks and not color else 0
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines: list[str] = []
    for n, row in enumerate([header, *body]):
        cells: list[str] = []
        for i, (value, width) in enumerate(zip(row, widths, strict=True)):
            is_head = n == 0 or i == 0
            mark = not is_head and (row[0], table.codes[i - 1]) in marks
            if pad and i > 0:
                text = (f"[{value}]" if mark else f"{value} ").rjust(width + 2)
            else:
                text = value.rjust(width)
            if color and text.strip():
                style = _BOLD if is_head else _GREEN if mark else ""
                style = _DIM if not style and value == NO_JOIN else style
                if style:
                    lead = len(text) - len(text.lstrip())
                    text = " " * lead + style + text.lstrip() + _RESET
            cells.append(text)
        lines.append(" ".join(cells).rstrip())
    return "\n".join(lines)


def _html(table: Table, marks: set[tuple[str, str]]) -> str:
    esc = html.escape
    lines = ['<table class="typelattice-table">']
    if table.title:
        lines.append(f"<caption>{esc(table.title)}</caption>")
    lines.append(
        "<thead><tr><th></th>"
        + "".join(f"<th>{esc(c)}</th>" for c in table.codes)
        + "</tr></thead>"
    )
    lines.append("<tbody>")
    for code, row in zip(table.codes, table.cells, strict=True):
        cells: list[str] = []
        for col, value in zip(table.codes, row, strict=True):
            if (code, col) in marks:
                cells.append(
                    f'<td class="differs" style="background:#b7e4b0">{esc(value)}</td>'
                )
            else:
                cells.append(f"<td>{esc(value)}</td>")
        lines.append(f"<tr><th>{esc(code)}</th>{''.join(cells)}</tr>")
    lines.append("</tbody>")
    lines.append("</table>")
    return "\n".join(lines)


def format_rows(header: Sequence[str], rows: Sequence[Sequence[str]], fmt: str) -> str:
    """Render a plain list of rows under a header.

    Args:
      header: the column names.
      rows: the rows, as many cells each as ``header`` has names.
      fmt: ``text`` (right-aligned columns), ``markdown``, ``csv`` or ``html``.

    Returns:
      The rendering.

    >>> print(format_rows(['row', 'col', 'numpy'], [['i1', 'u8', 'f8']], 'text'))
    row col numpy
     i1  u8    f8
    """
    table = [list(header), *(list(r) for r in rows)]
    if fmt == "csv":
        out = io.StringIO()
        csv.writer(out).writerows(table)
        return out.getvalue()
    if fmt == "markdown":
        lines = ["| " + " | ".join(header) + " |"]
        lines.append("| " + " | ".join(["---"] * len(header)) + " |")
        lines += ["| " + " | ".join(r) + " |" for r in table[1:]]
        return "\n".join(lines)
    if fmt == "html":
        esc = html.escape
        lines = ['<table class="typelattice-rows">']
        lines.append(
            "<thead><tr>"
            + "".join(f"<th>{esc(h)}</th>" for h in header)
            + "</tr></thead>"
        )
        lines.append("<tbody>")
        lines += [
            "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>"
            for r in table[1:]
        ]
        lines.append("</tbody>")
        lines.append("</table>")
        return "\n".join(lines)
    if fmt == "text":
        widths = [max(len(r[i]) for r in table) for i in range(len(header))]
        return "\n".join(
            " ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in table
        )
    raise ValueError(f"unknown format {fmt!r}: expected text, markdown, csv or html")
