"""The support tables of the backends, summarised per dtype.

Each backend module derives its own table from its registrations
(``support_table()``: primitive name → dtype name → ``'yes...'``,
``'emulated: ...'`` or ``'no: ...'``); this module only counts, so that
``typelattice backends`` and the README show the same thing.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Final

from typelattice._backends._backend import MODULES, named

__all__ = ["KINDS", "render", "summary", "table_of"]

#: What a primitive does for a dtype, by the first word of its entry.
KINDS: Final = ("yes", "emulated", "no")


def table_of(name: str) -> dict[str, dict[str, str]]:
    """The support table of the backend called ``name`` (its module is
    imported: ImportError when its library is not installed)."""
    named(name)  # (imports its module; a clear ImportError naming the extra)
    module = sys.modules[MODULES[name]]
    table: dict[str, dict[str, str]] = module.support_table()
    return table


def summary(table: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """dtype name → one cell: ``'yes'`` or ``'no'`` when every primitive
    is so, else the count of each kind (``'yes 101, emulated 15'``).

    >>> summary({'add': {'int8': 'yes', 'uint32': 'emulated: in int64'},
    ...          'sort': {'int8': 'yes', 'uint32': 'no: none'}})
    {'int8': 'yes', 'uint32': 'emulated 1, no 1'}
    """
    counts: dict[str, dict[str, int]] = {}
    for row in table.values():
        for dtype, how in row.items():
            kind = how.split(":")[0].split()[0]
            per = counts.setdefault(dtype, dict.fromkeys(KINDS, 0))
            per[kind] += 1
    out: dict[str, str] = {}
    for dtype, per in counts.items():
        present = [k for k in KINDS if per[k]]
        if len(present) == 1:
            out[dtype] = present[0]
        else:
            out[dtype] = ", ".join(f"{k} {per[k]}" for k in present)
    return out


def render(names: Sequence[str], tables: Sequence[Mapping[str, str]]) -> str:
    """A Markdown table of several summaries, one column per backend.

    >>> print(render(['a'], [{'int8': 'yes'}]))
    | dtype | a |
    | --- | --- |
    | int8 | yes |
    """
    dtypes = list(dict.fromkeys(d for t in tables for d in t))
    lines = [
        "| dtype | " + " | ".join(names) + " |",
        "| --- |" + " --- |" * len(names),
    ]
    for d in dtypes:
        lines.append(f"| {d} | " + " | ".join(t.get(d, "-") for t in tables) + " |")
    return "\n".join(lines)
