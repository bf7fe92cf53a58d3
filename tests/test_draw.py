"""Drawings of the lattices: SVG parsed as XML, DOT, PNG."""

from __future__ import annotations

import importlib
import importlib.util
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import typelattice as tl
from support import chain_edges, with_small_stack
from typelattice import _tables
from typelattice._cli import main

SVG = "{http://www.w3.org/2000/svg}"
LATTICES = Path(__file__).resolve().parents[1] / "examples" / "lattices"


def parse(svg: str) -> tuple[list[str], list[tuple[str, str]], ET.Element]:
    root = ET.fromstring(svg)
    labels = [
        t.text or "" for t in root.iter(f"{SVG}text") if t.get("class") == "node-label"
    ]
    edges = [
        (p.get("data-from", ""), p.get("data-to", ""))
        for p in root.iter(f"{SVG}path")
        if p.get("class") == "edge"
    ]
    return labels, edges, root


def code_edges(lattice: tl.Lattice[Any]) -> set[tuple[str, str]]:
    return {(lattice.label(a), lattice.label(b)) for a, b in lattice.edges}


@pytest.mark.parametrize("promotion", ["standard", "strict"])
def test_svg_of_every_type_has_a_label_per_type_and_an_arrow_per_edge(
    promotion: str,
) -> None:
    svg = tl.lattice_svg(promotion, x64=True, types=_tables.all_codes())
    labels, edges, root = parse(svg)
    assert root.tag == f"{SVG}svg"
    assert sorted(labels) == sorted(_tables.all_codes())
    assert len(edges) == len(set(edges))
    assert set(edges) == code_edges(tl.get_lattice(promotion, True))


def test_the_default_drawing_is_seed_001s_figure() -> None:
    labels, edges, _ = parse(tl.lattice_svg("standard", x64=True))
    assert sorted(labels) == sorted(_tables.DEFAULT_CODES)
    assert len(edges) == 24
    assert ("u4", "i8") in edges and ("i8", "f*") in edges and ("f*", "bf") in edges


def test_in_32_bit_mode_the_drawing_leaves_out_the_implied_edge() -> None:
    """uint16 -> int32 is an edge of the 32-bit lattice, but uint16 < uint32
    < int32 implies it: a Hasse diagram draws only the covering pairs."""
    _, edges, _ = parse(
        tl.lattice_svg("standard", x64=False, types=_tables.all_codes())
    )
    lattice_edges = code_edges(tl.get_lattice("standard", False))
    assert set(edges) == lattice_edges - {("u2", "i4")}
    assert ("u4", "i4") in edges


def test_bands_group_the_kinds_and_weak_types_are_dashed() -> None:
    layout = tl.lattice_layout("standard", x64=True, types=_tables.all_codes())
    group = {n.label: n.group for n in layout.nodes}
    assert {c for c, g in group.items() if g == "weak"} == {"i*", "f*", "c*"}
    assert group["f8e4m3fn"] == "small float" and group["i4b"] == "narrow"
    assert group["bf"] == "floating" and group["u1"] == "unsigned"
    assert [b.key for b in layout.bands] == [
        "floating", "complex", "weak", "bool", "signed", "unsigned", "narrow",
        "small float",
    ]  # fmt: skip
    _, _, root = parse(tl.lattice_svg("standard", x64=True))
    dashed = {
        g.get("data-node")
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "node"
        and g.find(f"{SVG}rect") is not None
        and g.find(f"{SVG}rect").get("stroke-dasharray")  # type: ignore[union-attr]
    }
    assert dashed == {"i*", "f*", "c*"}


def test_every_arrow_points_right_and_nodes_stay_in_their_band() -> None:
    layout = tl.lattice_layout("standard", x64=True, types=_tables.all_codes())
    for a, b in layout.edges:
        assert layout.nodes[a].x < layout.nodes[b].x
    bands = {b.key: b for b in layout.bands}
    for node in layout.nodes:
        band = bands[node.group]
        assert band.y < node.y < band.y + band.height
        assert 0 < node.x < layout.width


def test_a_lattice_file_is_drawn_with_its_labels() -> None:
    lattice = tl.Lattice.from_file(LATTICES / "python_scalars.json")
    labels, edges, _ = parse(tl.lattice_svg(lattice=lattice))
    assert labels == ["Python int", "Python float", "Python complex"]
    assert edges == [("Python int", "Python float"), ("Python float", "Python complex")]
    typed = tl.Lattice.from_file(LATTICES / "jax_standard.toml")
    layout = tl.lattice_layout(lattice=typed)
    assert {n.label: n.group for n in layout.nodes}["c*"] == "weak"


def test_dot_names_every_node_and_edge() -> None:
    dot = tl.lattice_dot("standard", x64=True)
    assert dot.startswith("digraph typelattice {") and dot.endswith("}\n")
    lattice = tl.get_lattice("standard", True)
    for a, b in lattice.edges:
        if {lattice.label(a), lattice.label(b)} <= set(_tables.DEFAULT_CODES):
            assert f'"{lattice.label(a)}" -> "{lattice.label(b)}";' in dot
    assert dot.count(" -> ") == 24
    assert 'subgraph "cluster_weak"' in dot


@pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="matplotlib is missing"
)
def test_png(tmp_path: Path) -> None:
    data = tl.lattice_png("standard", x64=True)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    out = tmp_path / "l.png"
    assert main(["draw", "-o", str(out)]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")


def test_png_without_matplotlib_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    real = importlib.import_module

    def no_matplotlib(name: str, package: str | None = None) -> Any:
        if name.startswith("matplotlib"):
            raise ImportError(f"No module named {name!r}")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", no_matplotlib)
    out = tmp_path / "l.png"
    assert main(["draw", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (
        "typelattice: error: drawing PNG needs matplotlib; install it with: "
        "pip install 'typelattice[draw]' (or write .svg or .dot)\n"
    )
    assert not out.exists()


def test_the_readme_pictures_are_what_the_tool_draws() -> None:
    docs = LATTICES.parents[1] / "docs"
    assert (docs / "lattice.svg").read_text() == tl.lattice_svg("standard", x64=True)
    assert (docs / "lattice_all_types.svg").read_text() == tl.lattice_svg(
        "standard", x64=True, types=_tables.all_codes()
    )


def test_a_chain_of_a_thousand_nodes_is_drawn_in_a_thousand_columns() -> None:
    lat = tl.Lattice(chain_edges(1000), label=str)
    lay = with_small_stack(lambda: tl.lattice_layout(lattice=lat))
    assert len(lay.nodes) == 1000
    assert lay.edges == tuple((i, i + 1) for i in range(999))
    assert len({n.x for n in lay.nodes}) == 1000
    # Only the covering pairs are arrows, however many pairs are ordered.
    shortcut = tl.Lattice({**chain_edges(1000), "n0": ["n1", "n999"]}, label=str)
    layout = with_small_stack(lambda: tl.lattice_layout(lattice=shortcut))
    assert layout.edges == lay.edges
