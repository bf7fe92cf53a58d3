"""The one pytree definition: what is a node, what is a leaf, and the
structures that jit keys its cache on."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

import typelattice as tl
import typelattice.numpy as tnp
from typelattice._tracing import tree


class Point(NamedTuple):
    x: Any
    y: Any


def _trees() -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.integers(), st.text(max_size=3), st.floats(allow_nan=False))
    return st.recursive(
        st.one_of(leaves, st.none()),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.lists(inner, max_size=3).map(tuple),
            st.dictionaries(st.text(max_size=2), inner, max_size=3),
            st.builds(Point, inner, inner),
        ),
        max_leaves=12,
    )


@given(_trees())
def test_unflatten_rebuilds_what_flatten_took_apart(value: Any) -> None:
    leaves, treedef = tree.flatten(value)
    rebuilt = tree.unflatten(treedef, leaves)
    assert rebuilt == value
    assert type(rebuilt) is type(value)
    # Used again and again, a structure is compiled: the same trees.
    for _ in range(20):
        again = tree.unflatten(treedef, leaves)
        assert again == value and type(again) is type(value)
        assert tree.leaves(again) == leaves
    assert treedef.num_leaves == len(leaves)
    assert tree.leaves(value) == leaves
    assert tree.flatten(rebuilt)[1] == treedef
    assert hash(tree.flatten(rebuilt)[1]) == hash(treedef)


@given(_trees())
def test_tree_map_visits_the_leaves_in_flatten_order(value: Any) -> None:
    seen: list[Any] = []
    mapped = tree.tree_map(lambda x: seen.append(x) or f"<{x!r}>", value)
    assert seen == tree.leaves(value)
    assert tree.leaves(mapped) == [f"<{x!r}>" for x in seen]
    assert tree.flatten(mapped)[1] == tree.flatten(value)[1]


@given(_trees())
def test_paths_reach_the_leaves(value: Any) -> None:
    """Each path, written after the tree, is the expression of its leaf."""
    leaves, treedef = tree.flatten(value)
    paths = treedef.paths()
    assert len(paths) == len(leaves)
    for path, leaf in zip(paths, leaves, strict=True):
        assert eval("value" + path, {"value": value}) is leaf


def test_paths_name_keys_indices_and_fields() -> None:
    _, treedef = tree.flatten({"b": [1, Point(2, None)], "a": (3,), "c": None})
    assert treedef.paths() == ["['a'][0]", "['b'][0]", "['b'][1].x"]
    assert tree.flatten(5)[1].paths() == [""]
    assert tree.flatten([None, ()])[1].paths() == []


def test_nodes_and_leaves() -> None:
    assert tree.leaves(None) == []
    assert tree.leaves([None, (None,)]) == []
    assert tree.leaves(Point(1, [2, 3])) == [1, 2, 3]
    assert tree.leaves({"b": 1, "a": 2}) == [2, 1]  # sorted keys, as JAX
    # An OrderedDict is a node (as in JAX), its values in insertion order.
    assert tree.leaves(OrderedDict(b=1, a=2)) == [1, 2]
    # Other containers are leaves: a set, a string.
    for leaf in ({1, 2}, "ab", tnp.zeros(2)):
        assert tree.leaves([leaf]) == [leaf]


def test_structures_compare_by_shape_not_by_leaves() -> None:
    _, a = tree.flatten({"a": [1, 2], "b": None})
    _, b = tree.flatten({"b": None, "a": ["x", "y"]})
    _, c = tree.flatten({"a": (1, 2), "b": None})
    _, d = tree.flatten(Point(1, 2))
    _, e = tree.flatten((1, 2))
    assert a == b and hash(a) == hash(b)
    assert a != c  # a tuple is not a list
    assert d != e  # a namedtuple is not a tuple
    assert not tree.flatten(1)[1] != tree.flatten("z")[1]
    assert tree.flatten(1)[1].is_leaf and not tree.flatten(None)[1].is_leaf


def test_keys_that_do_not_sort_are_refused_as_jax_refuses_them() -> None:
    value = {"b": 1, 2: "two", None: 3}
    with pytest.raises(ValueError, match="must sort together.*OrderedDict"):
        tree.flatten(value)
    # An OrderedDict keeps any keys, in their order.
    leaves, treedef = tree.flatten(OrderedDict(value))
    assert leaves == [1, "two", 3]
    assert tree.unflatten(treedef, leaves) == OrderedDict(value)


def test_deep_structures_are_rebuilt_too() -> None:
    value: Any = "leaf"
    for depth in range(300):
        value = [value, {"k": depth}] if depth % 2 else (value,)
    leaves, treedef = tree.flatten(value)
    for _ in range(20):  # (too deep to compile: built recursively each time)
        assert tree.unflatten(treedef, leaves) == value


def test_wrong_numbers_of_leaves_are_refused() -> None:
    _, treedef = tree.flatten([1, (2, 3)])
    for _ in range(20):  # (compiled after a few uses)
        assert tree.unflatten(treedef, "abc") == ["a", ("b", "c")]
    with pytest.raises(ValueError, match="3 leaves; fewer"):
        tree.unflatten(treedef, [1, 2])
    with pytest.raises(ValueError, match="3 leaves; more"):
        tree.unflatten(treedef, [1, 2, 3, 4])


def test_registered_nodes() -> None:
    class Box:
        def __init__(self, items: list[Any], label: str) -> None:
            self.items, self.label = items, label

    tree.register_node(
        Box,
        lambda b: (b.items, b.label),
        lambda label, items: Box(items, label),
    )
    try:
        leaves, treedef = tree.flatten([Box([1, {"k": 2}], "first")])
        assert leaves == [1, 2]
        rebuilt = tree.unflatten(treedef, ["p", "q"])[0]
        assert (rebuilt.items, rebuilt.label) == (["p", {"k": "q"}], "first")
        _, other = tree.flatten([Box([1, {"k": 2}], "second")])
        assert other != treedef  # the label is part of the structure
        with pytest.raises(ValueError, match="already"):
            tree.register_node(Box, lambda b: ((), None), lambda _, c: Box([], ""))
    finally:
        tree.unregister_node(Box)
    with pytest.raises(ValueError, match="already"):
        tree.register_node(dict, lambda d: ((), None), lambda _, c: {})


# -- what users see ------------------------------------------------------------------


def test_jit_takes_and_gives_namedtuples() -> None:
    @tl.jit
    def f(p: Point) -> Any:
        return Point(p.x * 2, {"s": p.y.sum(), "n": None})

    out = f(Point(tnp.asarray([1, 2], "int8"), tnp.ones(3)))
    assert type(out) is Point
    assert out.x.tolist() == [2, 4] and out.x.dtype == "int8"
    assert float(out.y["s"]) == 3.0 and out.y["n"] is None
    assert f.cache_info().misses == 1
    f(Point(tnp.asarray([5, 6], "int8"), tnp.ones(3)))
    assert f.cache_info().hits == 1  # the same structure and shapes


def test_namespace_functions_find_tracers_in_namedtuples() -> None:
    shaped = tl.eval_shape(
        lambda p: tnp.concatenate(p),
        Point(tnp.zeros(2), tl.ShapeDtypeStruct((3,), "float32")),
    )
    assert shaped == tl.ShapeDtypeStruct((5,), "float32")


def test_eval_shape_results_keep_their_structure() -> None:
    s = tl.ShapeDtypeStruct((2, 3), "bfloat16")
    out = tl.eval_shape(lambda x: {"b": [x.T, None], "a": Point(x, x[0])}, s)
    assert list(out) == ["a", "b"]  # sorted keys, as JAX
    assert out["a"] == Point(s, tl.ShapeDtypeStruct((3,), "bfloat16"))
    assert out["b"] == [tl.ShapeDtypeStruct((3, 2), "bfloat16"), None]
