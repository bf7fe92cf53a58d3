"""Checking user lattices: every counterexample, files, registration."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import typelattice as tl
from support import chain_edges, with_small_stack
from typelattice import _promotion

LATTICES = Path(__file__).resolve().parents[1] / "examples" / "lattices"


def kinds(problems: tuple[tl.LatticeProblem, ...]) -> list[tuple[str, tuple[str, ...]]]:
    return [(p.kind, p.nodes) for p in problems]


def test_a_lattice_has_no_problems() -> None:
    assert tl.Lattice.problems({"a": ["b", "c"], "b": ["d"], "c": ["d"]}) == ()
    for x64 in (True, False):
        seed = {
            a: [b for b in ups if b in _SEED]
            for a, ups in _promotion.edges_literal(
                tl.get_lattice("standard", x64)
            ).items()
            if a in _SEED
        }
        assert tl.Lattice.problems(seed) == ()


_SEED = set(tl.promotion_table().codes)


def test_seed_001s_two_counterexamples() -> None:
    left = tl.Lattice.problems({"A": ["B", "C"]}, label=str)
    assert kinds(left) == [("no upper bound", ("B", "C"))]
    right = tl.Lattice.problems({"A": ["C", "D"], "B": ["C", "D"]}, label=str)
    assert kinds(right) == [
        ("ambiguous join", ("A", "B")),
        ("no upper bound", ("C", "D")),
    ]
    assert right[0].candidates == ("C", "D")


def test_every_cycle_is_reported_once_and_named_in_order() -> None:
    problems = tl.Lattice.problems(
        {"a": ["b"], "b": ["c"], "c": ["a", "top"], "x": ["x", "top"]}, label=str
    )
    cycles = [p for p in problems if p.kind == "cycle"]
    assert [p.nodes for p in cycles] == [("a", "b", "c", "a"), ("x", "x")]
    assert str(cycles[0]) == "cycle: a -> b -> c -> a"
    # Nodes on a cycle count as one when looking for joins: no other problem.
    assert len(problems) == 2


def test_the_constructor_still_stops_at_the_first_problem() -> None:
    with pytest.raises(tl.LatticeError) as info:
        tl.Lattice({"A": ["C", "D"], "B": ["C", "D"]}, label=str)
    assert info.value.kind == "ambiguous join"
    tl.Lattice({"A": ["B", "C"]})  # pairs without upper bound are allowed


def test_promotion_lattices_are_partial_lattices() -> None:
    """JAX's own lattices leave some pairs without upper bound (small floats
    in standard mode, nearly everything in strict mode): no other problem."""
    for edges in (_promotion.standard_edges(True), _promotion.strict_edges()):
        problems = tl.Lattice.problems(edges, label=_promotion.node_label)
        assert problems and {p.kind for p in problems} == {"no upper bound"}
    standard = tl.Lattice.problems(_promotion.standard_edges(False))
    pairs = {frozenset(p.nodes) for p in standard}
    assert frozenset({np.dtype("float16"), tl.dtype("float8_e4m3fn")}) in pairs
    assert frozenset({np.dtype("int8"), np.dtype("float16")}) not in pairs


def test_python_int_and_int64_are_different_nodes() -> None:
    """NumPy says dtype('int64') == int; the checks must not confuse them."""
    problems = tl.Lattice.problems({int: [np.dtype("int64")], np.dtype("int64"): []})
    assert problems == ()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("jax_standard.toml", set()),
        ("python_scalars.json", set()),
        ("no_upper_bound.toml", {"no upper bound"}),
        ("no_mixed_int_float.toml", {"no upper bound"}),
        ("two_minimal_bounds.json", {"ambiguous join", "no upper bound"}),
        ("numpy_int_float.toml", {"ambiguous join", "no upper bound"}),
        ("cycle.toml", {"cycle"}),
    ],
)
def test_example_lattices(name: str, expected: set[str]) -> None:
    edges, _ = tl.Lattice.read_file(LATTICES / name)
    assert {p.kind for p in tl.Lattice.problems(edges)} == expected


def test_numpy_graph_shows_why_int8_uint8_float16_is_not_associative() -> None:
    edges, _ = tl.Lattice.read_file(LATTICES / "numpy_int_float.toml")
    ambiguous = [p for p in tl.Lattice.problems(edges) if p.kind == "ambiguous join"]
    assert ambiguous[0].nodes == ("u1", "i1")
    assert set(ambiguous[0].candidates) == {"i2", "f2"}


def test_the_jax_file_is_the_standard_lattice(tmp_path: Path) -> None:
    lattice = tl.Lattice.from_file(LATTICES / "jax_standard.toml")
    table = tl.promotion_table(lattice=lattice)
    assert table.codes == tuple(lattice.nodes)
    computed = tl.promotion_table(table.codes, "standard", x64=True)
    assert table.cells == computed.cells


def test_labels_are_read_and_checked(tmp_path: Path) -> None:
    lattice = tl.Lattice.from_file(LATTICES / "python_scalars.json")
    assert lattice.label("int") == "Python int"
    assert lattice.join("int", "complex") == "complex"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"edges": {"a": ["b"]}, "labels": {"c": "C"}}))
    with pytest.raises(ValueError, match="labels name nodes that no edge mentions: c"):
        tl.Lattice.from_file(bad)
    bad.write_text(json.dumps({"edges": {"a": ["b"]}, "labels": ["a"]}))
    with pytest.raises(ValueError, match="expected 'labels' to map node names"):
        tl.Lattice.read_file(bad)


def test_a_file_lattice_drives_result_type_once_registered() -> None:
    tl.register_lattice(
        "file_standard", tl.Lattice.from_file(LATTICES / "jax_standard.toml")
    )
    with tl.dtype_promotion("file_standard"), tl.enable_x64():
        assert tl.result_type("int8", "uint8") == np.dtype("int16")
        assert tl.result_type("uint32", "int32") == np.dtype("int64")
        assert tl.result_type("bfloat16", 1.0) == tl.dtype("bfloat16")


def test_a_partial_file_lattice_refuses_with_the_usual_message() -> None:
    lattice = tl.Lattice.from_file(LATTICES / "no_mixed_int_float.toml")
    tl.register_lattice("no_mixed", lattice)
    with tl.dtype_promotion("no_mixed"):
        assert tl.result_type("int8", 1) == np.dtype("int8")
        assert tl.result_type("float16", 1) == np.dtype("float16")
        with pytest.raises(tl.TypePromotionError) as info:
            tl.result_type("int32", "float32")
        # A type the file leaves out promotes with nothing, the same way.
        with pytest.raises(tl.TypePromotionError) as missing:
            tl.result_type("int4", "int8")
    assert str(info.value) == (
        "Input dtypes ('int32', 'float32') have no available implicit dtype "
        "promotion path when dtype_promotion=no_mixed. Try explicitly casting "
        "inputs to the desired output type, or set dtype_promotion=standard."
    )
    assert str(missing.value).startswith("Input dtypes ('int4', 'int8') have no")


def test_a_file_lattice_that_is_not_a_lattice_cannot_be_loaded() -> None:
    with pytest.raises(tl.LatticeError, match="no least upper bound") as info:
        tl.Lattice.from_file(LATTICES / "numpy_int_float.toml")
    assert info.value.kind == "ambiguous join"


def test_the_table_of_a_thousand_node_lattice() -> None:
    lattice = tl.Lattice(chain_edges(1000), label=str.upper)
    table = with_small_stack(lambda: tl.promotion_table(lattice=lattice))
    assert len(table.cells) == 1000 and table.codes[:2] == ("N0", "N1")
    assert table.cell("N7", "N300") == table.cell("N300", "N7") == "N300"
