from __future__ import annotations

import json
from pathlib import Path

import pytest

from typelattice import JoinError, Lattice, LatticeError

DIAMOND = {"bottom": ["a", "b"], "a": ["top"], "b": ["top"]}


def test_join_leq_and_upper_bounds_of_a_diamond() -> None:
    lat = Lattice(DIAMOND)
    assert lat.join("a", "b") == "top"
    assert lat.join("bottom", "a") == "a"
    assert lat.join("a", "a") == "a"
    assert lat.join("bottom", "a", "b") == "top"
    assert lat.leq("bottom", "top") and not lat.leq("a", "b")
    assert lat.upper_bounds("a") == {"a", "top"}
    assert set(lat.nodes) == {"bottom", "a", "b", "top"}
    assert set(lat.edges) == {
        ("bottom", "a"),
        ("bottom", "b"),
        ("a", "top"),
        ("b", "top"),
    }


def test_nodes_only_named_as_targets_are_part_of_the_lattice() -> None:
    lat = Lattice({"x": ["y"]})
    assert lat.nodes == ("x", "y")
    assert lat.successors("y") == ()


def test_join_is_cached_and_gives_the_same_object() -> None:
    lat = Lattice(DIAMOND)
    assert lat.join("a", "b") is lat.join("a", "b")


def test_table_marks_missing_joins_with_none() -> None:
    lat = Lattice({"x": [], "y": []})
    assert lat.table() == [["x", None], [None, "y"]]
    assert lat.table(["y"]) == [["y"]]


def test_missing_join_raises_join_error_naming_the_inputs() -> None:
    lat = Lattice({"x": [], "y": []})
    with pytest.raises(JoinError, match="'x', 'y' have no common upper bound") as info:
        lat.join("x", "y")
    assert info.value.nodes == ("x", "y")


def test_cycle_is_rejected_with_the_cycle_named() -> None:
    with pytest.raises(LatticeError, match="cycle a -> b -> c -> a") as info:
        Lattice({"a": ["b"], "b": ["c"], "c": ["a"]}, label=str)
    assert info.value.kind == "cycle"
    assert info.value.nodes == ("a", "b", "c", "a")


def test_self_loop_is_a_cycle() -> None:
    with pytest.raises(LatticeError) as info:
        Lattice({"a": ["a"]})
    assert info.value.kind == "cycle"


def test_pair_with_two_minimal_upper_bounds_is_rejected_with_candidates() -> None:
    # a and b are both below c and d, and c, d are incomparable: no least one.
    edges = {"a": ["c", "d"], "b": ["c", "d"], "c": ["top"], "d": ["top"]}
    with pytest.raises(LatticeError, match="no least upper bound") as info:
        Lattice(edges, label=str)
    assert info.value.kind == "ambiguous join"
    assert set(info.value.nodes) == {"a", "b"}
    assert info.value.candidates == ("c", "d")


def test_lattice_error_is_distinct_from_join_error() -> None:
    assert not issubclass(LatticeError, JoinError)
    assert not issubclass(JoinError, LatticeError)


def test_unknown_node_names_the_node_and_the_known_ones() -> None:
    lat = Lattice(DIAMOND, label=str)
    with pytest.raises(LatticeError, match="'zz' is not a node.*bottom, a, b, top"):
        lat.join("a", "zz")
    with pytest.raises(LatticeError, match="not a node"):
        lat.upper_bounds([1])  # type: ignore[arg-type]


def test_join_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Lattice(DIAMOND).join()


def test_any_hashable_nodes() -> None:
    lat = Lattice({1: [3], 2: [3], (4, 5): [1]})
    assert lat.join(2, (4, 5)) == 3


def test_from_file_toml_and_json(tmp_path: Path) -> None:
    toml = tmp_path / "d.toml"
    toml.write_text('[edges]\nbottom = ["a", "b"]\na = ["top"]\nb = ["top"]\n')
    js = tmp_path / "d.json"
    js.write_text(json.dumps({"edges": DIAMOND}))
    for path in (toml, js):
        assert Lattice.from_file(path).join("a", "b") == "top"


def test_from_file_rejects_bad_shapes_and_non_lattices(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('edges = ["a"]\n')
    with pytest.raises(ValueError, match="expected a table 'edges'"):
        Lattice.from_file(bad)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="cannot parse"):
        Lattice.from_file(broken)
    cyclic = tmp_path / "cyclic.toml"
    cyclic.write_text('[edges]\na = ["b"]\nb = ["a"]\n')
    with pytest.raises(LatticeError, match="cycle"):
        Lattice.from_file(cyclic)
