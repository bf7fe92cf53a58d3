"""Promotion tables as data, and their text, CSV and Markdown renderings."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from typelattice import _dtypes, _promotion
from typelattice._lattice import JoinError, Lattice

__all__ = ["SEED_CODES", "Table", "format_table", "promotion_table"]

#: Seed 000's table order: the 15 standard types, then the weak ones.
SEED_CODES: Final = (
    "b1", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8",
    "bf", "f2", "f4", "f8", "c8", "c16", "i*", "f*", "c*",
)  # fmt: skip

#: What a cell shows where two types have no join.
NO_JOIN: Final = "-"


@dataclass(frozen=True)
class Table:
    """A square table of codes: ``cells[i][j]`` is the join of ``codes[i]``
    and ``codes[j]``, or ``'-'`` where there is none."""

    codes: tuple[str, ...]
    cells: tuple[tuple[str, ...], ...]
    title: str = ""

    def cell(self, a: str, b: str) -> str:
        """The cell for row code ``a`` and column code ``b``."""
        return self.cells[self.codes.index(a)][self.codes.index(b)]


def all_codes() -> tuple[str, ...]:
    """Seed 000's codes, then the extended types' codes (small floats, narrow ints)."""
    extended = tuple(_dtypes.dtype_code(d) for d in _dtypes.EXTENDED_DTYPES)
    return SEED_CODES[:15] + extended + SEED_CODES[15:]


def promotion_table(
    codes: Sequence[str] | None = None,
    promotion: str | None = None,
    x64: bool | None = None,
    lattice: Lattice[Any] | None = None,
) -> Table:
    """The join table of a promotion lattice, in short codes.

    Args:
      codes: the types, as codes (seed 000's 18 by default).
      promotion: ``'standard'``, ``'strict'`` or a registered name (the
        current mode by default).
      x64: 64-bit mode (the current mode by default).
      lattice: a lattice of code strings to tabulate instead.

    >>> t = promotion_table(['i1', 'u1', 'f*'], 'standard', x64=True)
    >>> t.cell('i1', 'u1'), t.cell('u1', 'f*')
    ('i2', 'f*')
    """
    order = tuple(SEED_CODES if codes is None else codes)
    lat: Lattice[Any]
    label: Callable[[Any], str]
    if lattice is not None:
        lat, label = lattice, str
        nodes: list[Any] = list(order)
    else:
        lat = _promotion.get_lattice(promotion, x64)
        label = _promotion.node_label
        nodes = [_dtypes.code_to_dtype(c) for c in order]
    rows = []
    for a in nodes:
        row = []
        for b in nodes:
            try:
                row.append(label(lat.join(a, b)))
            except JoinError:
                row.append(NO_JOIN)
        rows.append(tuple(row))
    return Table(order, tuple(rows))


def format_table(table: Table, fmt: str = "text") -> str:
    """Render a table as ``text`` (aligned), ``csv`` or ``markdown``.

    The CSV layout is that of the spec's ``promotion_table_x64.csv``: a
    first row ``,b1,u1,...``, then one row per type, CRLF line ends.

    >>> t = promotion_table(['i1', 'u1'], 'standard', x64=True)
    >>> print(format_table(t, 'markdown'))
    |  | i1 | u1 |
    | --- | --- | --- |
    | i1 | i1 | i2 |
    | u1 | i2 | u1 |
    """
    header = ["", *table.codes]
    body = [[code, *row] for code, row in zip(table.codes, table.cells, strict=True)]
    if fmt == "csv":
        out = io.StringIO()
        csv.writer(out).writerows([header, *body])
        return out.getvalue()
    if fmt == "markdown":
        lines = ["| " + " | ".join(header) + " |"]
        lines.append("| " + " | ".join(["---"] * len(header)) + " |")
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines)
    if fmt == "text":
        widths = [
            max(len(row[i]) for row in [header, *body]) for i in range(len(header))
        ]
        return "\n".join(
            " ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in [header, *body]
        )
    raise ValueError(f"unknown table format {fmt!r}: expected text, csv or markdown")
