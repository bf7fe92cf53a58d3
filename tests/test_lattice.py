from __future__ import annotations

import itertools
import json
import random
from collections.abc import Hashable
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import chain_edges, with_small_stack
from typelattice import JoinError, Lattice, LatticeError
from typelattice._lattice import ProblemScan

N = TypeVar("N", bound=Hashable)

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


# -- lattices of any size -----------------------------------------------------------
#
# A recursive walk fails on a long chain with RecursionError. These tests run
# with a recursion limit far below the size of the graphs (with_small_stack),
# so that any recursion shows.


def test_the_small_stack_does_catch_recursion() -> None:
    def depth(n: int) -> int:
        return 0 if n == 0 else 1 + depth(n - 1)

    with pytest.raises(RecursionError):
        with_small_stack(lambda: depth(1000))


def test_a_chain_of_a_thousand_nodes() -> None:
    edges = chain_edges(1000)
    lat = with_small_stack(lambda: Lattice(edges, label=str))
    assert lat.join("n3", "n997") == "n997"
    assert lat.join("n500", "n20", "n999") == "n999"
    assert lat.leq("n0", "n999") and not lat.leq("n999", "n0")
    assert len(lat.upper_bounds("n900")) == 100
    assert lat.below("n2") == ("n0", "n1")
    assert with_small_stack(lambda: lat.rank("n999")) == 999
    assert len(with_small_stack(lambda: lat.chain("n0", "n999"))) == 1000
    table = with_small_stack(lat.table)
    assert len(table) == 1000 and table[10][700] == table[700][10] == "n700"
    assert with_small_stack(lambda: Lattice.problems(edges)) == ()


def test_a_deep_random_lattice_joins_like_a_tree() -> None:
    """Each node's only edge goes to one of the few nodes made before it: a
    tree, hundreds of levels deep, whose joins are lowest common ancestors."""
    rng = random.Random(11)
    parent = {i: rng.randrange(max(0, i - 4), i) for i in range(1, 1000)}
    lat = with_small_stack(lambda: Lattice({i: [p] for i, p in parent.items()}))

    def ancestors(i: int) -> list[int]:
        found = [i]
        while found[-1]:
            found.append(parent[found[-1]])
        return found

    depth = max(len(ancestors(i)) - 1 for i in parent)
    assert depth > 200 and lat.rank(0) == depth
    for a, b in [(999, 998), (500, 999), (3, 777), (250, 251)]:
        mine = ancestors(a)
        lowest = next(x for x in ancestors(b) if x in mine)
        assert lat.join(a, b) == lowest
    assert with_small_stack(lambda: Lattice.problems(lat_edges(lat))) == ()


def lat_edges(lat: Lattice[N]) -> dict[N, list[N]]:
    return {n: list(lat.successors(n)) for n in lat.nodes}


def test_a_long_chain_under_a_broken_lattice_adds_no_problem() -> None:
    """Two small counterexamples on top of a chain of a thousand nodes:
    exactly their problems, found without recursion."""
    small = {"A": ["C", "D"], "B": ["C", "D"]}
    edges: dict[str, list[str]] = {**chain_edges(1000), "n999": ["A", "B"], **small}
    found = with_small_stack(lambda: Lattice.problems(edges, label=str))
    assert found == Lattice.problems(small, label=str)
    assert [(p.kind, p.nodes, p.candidates) for p in found] == [
        ("ambiguous join", ("A", "B"), ("C", "D")),
        ("no upper bound", ("C", "D"), ()),
    ]
    with pytest.raises(LatticeError, match="A and B have no least upper bound"):
        with_small_stack(lambda: Lattice(edges, label=str))


def test_a_long_cycle_is_named_whole() -> None:
    edges = {**chain_edges(1000), "n999": ["n0"]}
    with pytest.raises(LatticeError) as info:
        with_small_stack(lambda: Lattice(edges, label=str))
    assert info.value.kind == "cycle"
    assert info.value.nodes == (*(f"n{i}" for i in range(1000)), "n0")
    (cycle,) = with_small_stack(lambda: Lattice.problems(edges, label=str))
    assert cycle.nodes == info.value.nodes


def test_a_random_thousand_node_graph_is_scanned_with_a_small_stack() -> None:
    rng = random.Random(5)
    edges = {
        f"n{i}": [f"n{rng.randrange(i + 1, 1000)}" for _ in range(rng.randrange(3))]
        for i in range(999)
    }
    scan = with_small_stack(lambda: ProblemScan(edges, label=str))
    assert scan.counts["cycle"] == 0
    assert scan.counts["ambiguous join"] > 1000 and scan.counts["no upper bound"] > 1000
    # A pair of sinks has no upper bound; described on demand, in node order.
    sinks = [n for n in scan_nodes(edges) if not edges.get(n)]
    first = next(scan.pairs("no upper bound"))
    assert first.kind == "no upper bound" and first.nodes[0] == "n0"
    assert any(p.nodes == (sinks[0], sinks[1]) for p in scan.pairs("no upper bound"))


def scan_nodes(edges: dict[str, list[str]]) -> list[str]:
    return list(dict.fromkeys([*edges, *(b for ups in edges.values() for b in ups)]))


# -- the bitset algorithm against a plain reference ---------------------------------


def reference_problems(
    edges: dict[str, list[str]],
) -> tuple[list[set[str]], list[tuple[str, tuple[str, ...], tuple[str, ...]]]]:
    """Each cyclic component as a set, and each pair's problem, the slow way:
    every node's upper bounds by a walk, every pair's common ones by sets."""
    nodes = scan_nodes(edges)
    up: dict[str, set[str]] = {}
    for n in nodes:
        seen, todo = {n}, [n]
        while todo:
            for m in edges.get(todo.pop(), []):
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        up[n] = seen

    def same(a: str, b: str) -> bool:
        return b in up[a] and a in up[b]

    cyclic: list[set[str]] = []  # in the order of their first node
    for n in nodes:
        comp = {m for m in nodes if same(n, m)}
        if (len(comp) > 1 or n in edges.get(n, [])) and comp not in cyclic:
            cyclic.append(comp)
    pairs: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []
    for i, a in enumerate(nodes):
        for b in nodes[i + 1 :]:
            common = up[a] & up[b]
            if not common:
                pairs.append(("no upper bound", (a, b), ()))
                continue
            minimal = [
                c
                for c in nodes
                if c in common
                and not any(c in up[d] and not same(c, d) for d in common)
            ]
            if not all(same(minimal[0], c) for c in minimal):
                pairs.append(("ambiguous join", (a, b), tuple(minimal)))
    return cyclic, pairs


@st.composite
def graphs(draw: st.DrawFn, cycles: bool = True) -> dict[str, list[str]]:
    """Small graphs on the names n0..n9, edges in any order; without
    ``cycles``, an edge only goes from a name to a later one."""
    size = draw(st.integers(1, 10))
    names = [f"n{i}" for i in range(size)]
    order = draw(st.permutations(names))
    edges: dict[str, list[str]] = {}
    for n in order:
        targets = names if cycles else names[names.index(n) + 1 :]
        if targets and draw(st.booleans()):
            edges[n] = draw(st.lists(st.sampled_from(targets), max_size=3))
    if not edges:
        edges[order[0]] = []
    return edges


def check_against_reference(edges: dict[str, list[str]]) -> None:
    cyclic, pairs = reference_problems(edges)
    found = Lattice.problems(edges, label=str)
    cycles = [p for p in found if p.kind == "cycle"]
    # One cycle per cyclic component, from its first node, in node order.
    nodes = scan_nodes(edges)
    assert len(cycles) == len(cyclic)
    for p, comp in zip(cycles, cyclic, strict=True):
        assert set(p.nodes) <= comp
        assert p.nodes[0] == p.nodes[-1] == min(comp, key=nodes.index)
        for a, b in itertools.pairwise(p.nodes):
            assert b in edges.get(a, [])
    assert [(p.kind, p.nodes, p.candidates) for p in found[len(cycles) :]] == pairs
    scan = ProblemScan(edges, label=str)
    assert scan.counts == {
        "cycle": len(cyclic),
        "ambiguous join": sum(k == "ambiguous join" for k, _, _ in pairs),
        "no upper bound": sum(k == "no upper bound" for k, _, _ in pairs),
    }
    assert len(scan) == len(found)


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_problems_are_those_of_the_reference(edges: dict[str, list[str]]) -> None:
    check_against_reference(edges)


@settings(max_examples=300, deadline=None)
@given(graphs(cycles=False))
def test_a_lattice_joins_as_the_reference_says(edges: dict[str, list[str]]) -> None:
    """The constructor accepts exactly the graphs with no ambiguous join, and
    then each join is the least common upper bound."""
    _, pairs = reference_problems(edges)
    ambiguous = [nodes for kind, nodes, _ in pairs if kind == "ambiguous join"]
    if ambiguous:
        with pytest.raises(LatticeError) as info:
            Lattice(edges, label=str)
        assert info.value.kind == "ambiguous join"
        assert info.value.nodes == ambiguous[0]
        return
    lat = Lattice(edges, label=str)
    nodes = lat.nodes
    table = lat.table()
    for i, a in enumerate(nodes):
        for j, b in enumerate(nodes):
            common = lat.upper_bounds(a) & lat.upper_bounds(b)
            least = [c for c in common if common <= lat.upper_bounds(c)]
            assert table[i][j] == (least[0] if least else None)
            if least:
                assert lat.join(a, b) == least[0]


def test_problems_of_a_medium_graph_are_those_of_the_reference() -> None:
    """Bitsets of several machine words, with cycles among them."""
    rng = random.Random(2)
    edges = {
        f"n{i}": [f"n{rng.randrange(150)}" for _ in range(rng.choice([0, 1, 1, 2]))]
        for i in range(150)
    }
    check_against_reference(edges)
