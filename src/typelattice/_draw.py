"""Draw a promotion lattice as a layered Hasse diagram: SVG, DOT or PNG.

Types flow left to right, as in the lattice figure of JAX's documentation: a
node's column is the length of the longest chain of edges below it, so every
arrow points right. Rows group the types by kind (floating, complex, weak,
8/6/4-bit floats, signed, unsigned, narrow integers, bool), each on its own
tinted band; weak types have a dashed outline. SVG and DOT are written
directly (no graphviz needed); PNG is drawn with matplotlib when installed.
"""

from __future__ import annotations

import html
import importlib
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from typelattice import _config, _dtypes, _promotion, _tables
from typelattice._lattice import Lattice, set_bits

__all__ = ["Layout", "lattice_dot", "lattice_layout", "lattice_png", "lattice_svg"]

# Bands, top to bottom: (key, title, node fill). The order keeps most arrows
# short and clear of other nodes: bool and the ints rise to the weak row,
# which feeds the floats above it; the small floats, in a column right of
# every integer, go last because they make a tall band.
_GROUPS: Final = (
    ("floating", "floating", "#cfe2ff"),
    ("complex", "complex", "#e2d9f3"),
    ("weak", "weak (Python scalars)", "#fff3cd"),
    ("bool", "bool", "#dee2e6"),
    ("signed", "signed integers", "#d1e7dd"),
    ("unsigned", "unsigned integers", "#f7d6e6"),
    ("narrow", "narrow integers", "#e9ecef"),
    ("small float", "8/6/4-bit floats", "#d2f4ea"),
    ("node", "", "#e9ecef"),  # a user lattice's nodes that are not types
)
_FILL: Final = {key: fill for key, _, fill in _GROUPS}
_TITLE: Final = {key: title for key, title, _ in _GROUPS}
_ORDER: Final = {key: i for i, (key, _, _) in enumerate(_GROUPS)}

_CHAR_W: Final = 7.8  # width of a character of the 13px monospace font
_NODE_H: Final = 24.0
_ROW_H: Final = 34.0
_GAP: Final = 46.0  # between columns
_MARGIN: Final = 16.0
_BAND_LABEL_W: Final = 190.0
_TITLE_H: Final = 34.0


@dataclass(frozen=True)
class Node:
    """A node as drawn: centre, size, label, tooltip and band."""

    label: str
    tooltip: str
    x: float
    y: float
    width: float
    group: str
    weak: bool


@dataclass(frozen=True)
class Band:
    """A row of the drawing holding one kind of type."""

    key: str
    title: str
    y: float
    height: float


@dataclass(frozen=True)
class Layout:
    """Where everything goes; :func:`lattice_svg` and friends render it.

    Attributes:
      title: the caption.
      width, height: the canvas size, in pixels.
      nodes: every node drawn.
      edges: ``(lower, upper)`` indexes into ``nodes``: the covering pairs
        (a redundant edge, implied by others, is not drawn).
      bands: the rows.
    """

    title: str
    width: float
    height: float
    nodes: tuple[Node, ...]
    edges: tuple[tuple[int, int], ...]
    bands: tuple[Band, ...]


def _group(node: object) -> str:
    if isinstance(node, type):
        return "weak"
    if node in set(_dtypes.SMALL_FLOATS.values()):
        return "small float"
    if node in set(_dtypes.NARROW_INTS.values()):
        return "narrow"
    kind = _dtypes.kind_of(node)  # type: ignore[arg-type]
    return {"b": "bool", "u": "unsigned", "i": "signed", "f": "floating"}.get(
        kind, "complex"
    )


def _tooltip(node: object) -> str:
    if isinstance(node, type):
        return f"Python {node.__name__} (weak)"
    return str(node)


def lattice_layout(
    promotion: str | None = None,
    x64: bool | None = None,
    *,
    lattice: Lattice[Any] | None = None,
    types: Sequence[str] | None = None,
    title: str = "",
) -> Layout:
    """Lay out a lattice as a layered Hasse diagram.

    Args:
      promotion: ``'standard'``, ``'strict'`` or a registered name (the
        current mode by default).
      x64: 64-bit mode (the current mode by default).
      lattice: draw this lattice instead (e.g. from
        :meth:`Lattice.from_file`); a node whose name is a type code is drawn
        in that type's band.
      types: the codes to draw (the standard types and ``i* f* c*`` by default;
        :func:`~typelattice._tables.all_codes` for every type), or with
        ``lattice`` its node names (all by default). An arrow joins each to
        the next higher ones among them.
      title: the caption (the lattice and mode by default).

    Returns:
      The :class:`Layout`.

    >>> lay = lattice_layout('standard', x64=True, types=['i1', 'u1', 'i2'])
    >>> [(n.label, n.group) for n in lay.nodes]
    [('i1', 'signed'), ('u1', 'unsigned'), ('i2', 'signed')]
    >>> [(lay.nodes[a].label, lay.nodes[b].label) for a, b in lay.edges]
    [('i1', 'i2'), ('u1', 'i2')]
    """
    lat: Lattice[Any]
    if lattice is None:
        lat = _promotion.get_lattice(promotion, x64)
        if not title:
            state = _config.current()
            mode = state.dtype_promotion if promotion is None else promotion
            bits = state.enable_x64 if x64 is None else x64
            title = (
                f"typelattice: the {mode} lattice, {'64' if bits else '32'}-bit mode"
            )
        codes = _tables.DEFAULT_CODES if types is None else types
        chosen: list[Any] = [_dtypes.code_to_dtype(c) for c in codes]
        groups: list[str] = [_group(n) for n in chosen]
        tips: list[str] = [_tooltip(n) for n in chosen]
    else:
        lat = lattice
        chosen = list(lat.nodes if types is None else types)
        groups, tips = [], []
        for n in chosen:
            try:
                typed = _dtypes.code_to_dtype(n)
            except TypeError:
                groups.append("node")
                tips.append(str(n))
            else:
                groups.append(_group(typed))
                tips.append(f"{n}: {_tooltip(typed)}")
        title = title or "lattice"
    known = set(lat.nodes)
    for n in chosen:
        if n not in known:
            raise ValueError(f"{lat.label(n)} is not a node of the lattice")
    labels = [lat.label(n) for n in chosen]
    edges = _covering(lat, chosen)
    ranks = _ranks(lat, chosen, edges)
    return _place(title, chosen, labels, tips, groups, ranks, edges)


def _covering(lat: Lattice[Any], chosen: Sequence[Any]) -> list[tuple[int, int]]:
    """Index pairs (a, b) with a < b and nothing chosen strictly between."""
    index = {n: i for i, n in enumerate(chosen)}
    # Each chosen node's chosen strict upper bounds, as a bitset of indexes.
    above: list[int] = []
    for i, n in enumerate(chosen):
        bits = 0
        for u in lat.upper_bounds(n):
            j = index.get(u, i)
            if j != i:
                bits |= 1 << j
        above.append(bits)
    edges: list[tuple[int, int]] = []
    for i, ups in enumerate(above):
        # Above something above i: not covering i.
        implied = 0
        for k in set_bits(ups):
            implied |= above[k]
        edges += [(i, j) for j in set_bits(ups & ~implied)]
    return edges


def _ranks(
    lat: Lattice[Any], chosen: Sequence[Any], edges: Sequence[tuple[int, int]]
) -> list[int]:
    ranks = [0] * len(chosen)
    ups: list[list[int]] = [[] for _ in chosen]
    for a, b in edges:
        ups[a].append(b)
    # The lattice's own ranks order the nodes bottom-up.
    for i in sorted(range(len(chosen)), key=lambda i: lat.rank(chosen[i])):
        for b in ups[i]:
            ranks[b] = max(ranks[b], ranks[i] + 1)
    return ranks


def _place(
    title: str,
    chosen: Sequence[Any],
    labels: Sequence[str],
    tips: Sequence[str],
    groups: Sequence[str],
    ranks: Sequence[int],
    edges: Sequence[tuple[int, int]],
) -> Layout:
    count = len(chosen)
    widths = [12.0 + _CHAR_W * len(label) for label in labels]
    n_cols = max(ranks, default=0) + 1
    col_w = [0.0] * n_cols
    for i in range(count):
        col_w[ranks[i]] = max(col_w[ranks[i]], widths[i])
    col_x: list[float] = []
    x = _MARGIN + _BAND_LABEL_W
    for w in col_w:
        col_x.append(x + w / 2)
        x += w + _GAP
    width = x - _GAP + _MARGIN

    # Bands: as many rows as the fullest column needs.
    cells: dict[tuple[str, int], list[int]] = {}
    for i in range(count):
        cells.setdefault((groups[i], ranks[i]), []).append(i)
    used = sorted({g for g in groups}, key=_ORDER.__getitem__)
    bands: list[Band] = []
    top = _TITLE_H
    band_top: dict[str, float] = {}
    for key in used:
        rows = max(len(v) for (g, _), v in cells.items() if g == key)
        height = rows * _ROW_H + 10
        bands.append(Band(key, _TITLE[key], top, height))
        band_top[key] = top
        top += height
    height = top + _MARGIN

    # Stack each cell's nodes, ordered by where their lower neighbours sit
    # (fewer crossings), going up the columns.
    ys: dict[int, float] = {}
    below: dict[int, list[int]] = {i: [] for i in range(count)}
    for a, b in edges:
        below[b].append(a)
    for rank in range(n_cols):
        for key in used:
            members = cells.get((key, rank), [])

            def centre(i: int) -> float:
                lows = [ys[a] for a in below[i] if a in ys]
                return sum(lows) / len(lows) if lows else float("inf")

            members = sorted(members, key=lambda i: (centre(i), i))
            for slot, i in enumerate(members):
                ys[i] = band_top[key] + 5 + _ROW_H * (slot + 0.5)
    nodes = tuple(
        Node(
            labels[i],
            tips[i],
            col_x[ranks[i]],
            ys[i],
            widths[i],
            groups[i],
            isinstance(chosen[i], type) or labels[i] in ("i*", "f*", "c*"),
        )
        for i in range(count)
    )
    return Layout(title, width, height, nodes, tuple(edges), tuple(bands))


def _curve(lay: Layout, a: int, b: int) -> tuple[float, ...]:
    """Start, two control points and end of the cubic curve for an edge."""
    lo, hi = lay.nodes[a], lay.nodes[b]
    x0, y0 = lo.x + lo.width / 2, lo.y
    x1, y1 = hi.x - hi.width / 2 - 2, hi.y
    bend = max((x1 - x0) / 2, 12.0)
    return x0, y0, x0 + bend, y0, x1 - bend, y1, x1, y1


def lattice_svg(
    promotion: str | None = None,
    x64: bool | None = None,
    *,
    lattice: Lattice[Any] | None = None,
    types: Sequence[str] | None = None,
    title: str = "",
) -> str:
    """The lattice as a standalone SVG document.

    Args:
      promotion, x64, lattice, types, title: as for :func:`lattice_layout`.

    Returns:
      The SVG text; it needs no fonts or files beyond itself.

    Each node is a ``<g class="node" data-node="...">`` holding its label as
    ``<text class="node-label">``; each arrow a ``<path class="edge">`` with
    ``data-from`` and ``data-to``.

    >>> svg = lattice_svg('standard', x64=True)
    >>> svg.startswith('<svg'), svg.count('class="edge"')
    (True, 24)
    """
    lay = lattice_layout(promotion, x64, lattice=lattice, types=types, title=title)
    esc = html.escape
    w, h = round(lay.width), round(lay.height)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="DejaVu Sans Mono, Menlo, monospace" '
        'font-size="13">',
        f"<title>{esc(lay.title)}</title>",
        "<defs>",
        '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#495057"/></marker>',
        "</defs>",
        f'<rect width="{w}" height="{h}" fill="#ffffff"/>',
        f'<text class="title" x="{_MARGIN}" y="{_TITLE_H - 12}" font-size="15" '
        f'font-weight="bold">{esc(lay.title)}</text>',
        '<g class="bands">',
    ]
    for n, band in enumerate(lay.bands):
        tint = "#f8f9fa" if n % 2 == 0 else "#f1f3f5"
        out.append(
            f'<g class="band" data-band="{esc(band.key)}">'
            f'<rect x="0" y="{band.y:.1f}" width="{w}" height="{band.height:.1f}" '
            f'fill="{tint}"/>'
            f'<text class="band-label" x="{_MARGIN}" '
            f'y="{band.y + band.height / 2 + 4:.1f}" fill="#6c757d">'
            f"{esc(band.title)}</text></g>"
        )
    out.append("</g>")
    out.append('<g class="edges" fill="none" stroke="#495057" stroke-width="1.3">')
    for a, b in lay.edges:
        x0, y0, c1, d1, c2, d2, x1, y1 = _curve(lay, a, b)
        out.append(
            f'<path class="edge" data-from="{esc(lay.nodes[a].label)}" '
            f'data-to="{esc(lay.nodes[b].label)}" '
            f'd="M{x0:.1f},{y0:.1f} C{c1:.1f},{d1:.1f} {c2:.1f},{d2:.1f} '
            f'{x1:.1f},{y1:.1f}" marker-end="url(#arrow)"/>'
        )
    out.append("</g>")
    out.append('<g class="nodes">')
    for node in lay.nodes:
        dash = ' stroke-dasharray="4 3"' if node.weak else ""
        out.append(
            f'<g class="node" data-node="{esc(node.label)}">'
            f"<title>{esc(node.tooltip)}</title>"
            f'<rect x="{node.x - node.width / 2:.1f}" y="{node.y - _NODE_H / 2:.1f}" '
            f'width="{node.width:.1f}" height="{_NODE_H}" rx="6" '
            f'fill="{_FILL[node.group]}" stroke="#343a40"{dash}/>'
            f'<text class="node-label" x="{node.x:.1f}" y="{node.y + 4.5:.1f}" '
            f'text-anchor="middle">{esc(node.label)}</text></g>'
        )
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _dot_id(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def lattice_dot(
    promotion: str | None = None,
    x64: bool | None = None,
    *,
    lattice: Lattice[Any] | None = None,
    types: Sequence[str] | None = None,
    title: str = "",
) -> str:
    """The lattice in Graphviz's DOT language, one cluster per band.

    Args:
      promotion, x64, lattice, types, title: as for :func:`lattice_layout`.

    Returns:
      The DOT text, for ``dot -Tsvg`` and friends.

    >>> print(lattice_dot('strict', types=['i*', 'f*']), end='')  # doctest: +ELLIPSIS
    digraph typelattice {
    ...
      "i*" -> "f*";
    }
    """
    lay = lattice_layout(promotion, x64, lattice=lattice, types=types, title=title)
    out = [
        "digraph typelattice {",
        f"  label={_dot_id(lay.title)}; labelloc=t; rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="monospace"];',
    ]
    for band in lay.bands:
        out.append(f"  subgraph {_dot_id('cluster_' + band.key)} {{")
        out.append(f'    label={_dot_id(band.title)}; style=filled; color="#f1f3f5";')
        for node in lay.nodes:
            if node.group == band.key:
                style = "rounded,filled,dashed" if node.weak else "rounded,filled"
                fill = _dot_id(_FILL[node.group])
                out.append(
                    f"    {_dot_id(node.label)} [fillcolor={fill}, "
                    f"style={_dot_id(style)}, tooltip={_dot_id(node.tooltip)}];"
                )
        out.append("  }")
    for a, b in lay.edges:
        out.append(f"  {_dot_id(lay.nodes[a].label)} -> {_dot_id(lay.nodes[b].label)};")
    out.append("}")
    return "\n".join(out) + "\n"


def lattice_png(
    promotion: str | None = None,
    x64: bool | None = None,
    *,
    lattice: Lattice[Any] | None = None,
    types: Sequence[str] | None = None,
    title: str = "",
    dpi: int = 100,
) -> bytes:
    """The lattice as a PNG image, drawn with matplotlib.

    Args:
      promotion, x64, lattice, types, title: as for :func:`lattice_layout`.
      dpi: resolution (100: one pixel of the layout per pixel).

    Returns:
      The PNG file's bytes.

    Raises:
      ImportError: matplotlib is not installed (the message says how to
        install it).

    >>> try:
    ...     png = lattice_png('strict', x64=True)
    ... except ImportError as err:  # without matplotlib
    ...     png = str(err).encode()
    >>> png[1:4] == b'PNG' or png.startswith(b'drawing PNG needs matplotlib')
    True
    """
    try:
        figure = importlib.import_module("matplotlib.figure")
        patches = importlib.import_module("matplotlib.patches")
        mpath = importlib.import_module("matplotlib.path")
    except ImportError:
        raise ImportError(
            "drawing PNG needs matplotlib; install it with: "
            "pip install 'typelattice[draw]' (or write .svg or .dot)"
        ) from None
    lay = lattice_layout(promotion, x64, lattice=lattice, types=types, title=title)
    fig = figure.Figure(figsize=(lay.width / 100, lay.height / 100), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, lay.width)
    ax.set_ylim(lay.height, 0)
    ax.axis("off")
    pt = 100 / 72  # pixels of the layout per point of the figure
    ax.text(_MARGIN, _TITLE_H - 12, lay.title, fontsize=15 / pt, weight="bold")
    for n, band in enumerate(lay.bands):
        tint = "#f8f9fa" if n % 2 == 0 else "#f1f3f5"
        ax.add_patch(patches.Rectangle((0, band.y), lay.width, band.height, color=tint))
        ax.text(
            _MARGIN,
            band.y + band.height / 2,
            band.title,
            va="center",
            color="#6c757d",
            family="monospace",
            fontsize=13 / pt,
        )
    for a, b in lay.edges:
        x0, y0, c1, d1, c2, d2, x1, y1 = _curve(lay, a, b)
        path = mpath.Path(
            [(x0, y0), (c1, d1), (c2, d2), (x1, y1)],
            [
                mpath.Path.MOVETO,
                mpath.Path.CURVE4,
                mpath.Path.CURVE4,
                mpath.Path.CURVE4,
            ],
        )
        ax.add_patch(
            patches.FancyArrowPatch(
                path=path, arrowstyle="-|>", mutation_scale=9, color="#495057", lw=1
            )
        )
    for node in lay.nodes:
        ax.add_patch(
            patches.FancyBboxPatch(
                (node.x - node.width / 2, node.y - _NODE_H / 2),
                node.width,
                _NODE_H,
                boxstyle="round,pad=0,rounding_size=6",
                facecolor=_FILL[node.group],
                edgecolor="#343a40",
                linestyle="--" if node.weak else "-",
            )
        )
        ax.text(
            node.x,
            node.y,
            node.label,
            ha="center",
            va="center",
            family="monospace",
            fontsize=13 / pt,
        )
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
