"""typelattice.tree_util and typelattice.tree: JAX's pytree API.

``golden/tree.json`` was recorded from JAX 0.10 by
``golden/make_tree_golden.py``, which builds the trees (every node kind)
and says what is recorded: structures, leaves, key paths as ``keystr``
prints them, and ``tree_map`` over pairs of trees.
"""

from __future__ import annotations

import collections
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import tree_util as tu

GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "tree.json").read_text())
REC = recorder("make_tree_golden.py")
TREES: dict[str, Any] = REC.trees(tu)


def test_every_recorded_tree_is_built() -> None:
    assert set(TREES) == set(GOLDEN["trees"])


@pytest.mark.parametrize("name", sorted(GOLDEN["trees"]))
def test_structures_leaves_and_paths_as_jax(name: str) -> None:
    want = GOLDEN["trees"][name]
    got = REC.record(tu)["trees"][name]
    assert got == want


@pytest.mark.parametrize("name", sorted(GOLDEN["pairs"]))
def test_tree_map_of_two_trees_as_jax(name: str) -> None:
    assert REC.record(tu)["pairs"][name] == GOLDEN["pairs"][name]


@pytest.mark.parametrize("name", sorted(GOLDEN["trees"]))
def test_unflatten_rebuilds_each_node_kind(name: str) -> None:
    value = TREES[name]
    leaves, treedef = tu.tree_flatten(value)
    for _ in range(20):  # (compiled after a few uses: the same trees)
        rebuilt = tu.tree_unflatten(treedef, leaves)
        assert type(rebuilt) is type(value)
        assert tu.tree_structure(rebuilt) == treedef
        assert tu.tree_leaves(rebuilt) == leaves
    mapped = tu.tree_map(lambda x: x * 10, value)
    assert tu.tree_structure(mapped) == treedef
    assert tu.tree_leaves(mapped) == [x * 10 for x in leaves]


def _trees() -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.integers(), st.text(max_size=2))
    keys = st.text(max_size=2)
    return st.recursive(
        st.one_of(leaves, st.none()),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.lists(inner, max_size=3).map(tuple),
            st.dictionaries(keys, inner, max_size=3),
            st.dictionaries(keys, inner, max_size=3).map(collections.OrderedDict),
            st.dictionaries(keys, inner, max_size=3).map(
                lambda d: collections.defaultdict(int, d)
            ),
            st.builds(REC.Point, inner, inner),
        ),
        max_leaves=10,
    )


@given(_trees())
def test_paths_leaves_and_structures_agree(value: Any) -> None:
    leaves, treedef = tu.tree_flatten(value)
    pairs, with_path_def = tu.tree_flatten_with_path(value)
    assert [x for _, x in pairs] == leaves and with_path_def == treedef
    assert [tu.keystr(p) for p, _ in pairs] == treedef.paths()
    for path, leaf in pairs:  # (each path, written after the tree, reaches it)
        assert eval("value" + tu.keystr(path), {"value": value}) is leaf
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert rebuilt == value and type(rebuilt) is type(value)
    assert treedef.num_nodes == 1 + sum(c.num_nodes for c in treedef.children())
    assert tu.tree_structure(value, is_leaf=lambda x: False) == treedef
    assert tu.tree_map(lambda x, y: y, value, value) == value


def test_ordered_and_default_dicts_keep_their_kind() -> None:
    od = tu.tree_map(lambda x: x * 2, collections.OrderedDict(b=1, a=2))
    assert type(od) is collections.OrderedDict and list(od.items()) == [
        ("b", 2),
        ("a", 4),
    ]
    dd = tu.tree_map(lambda x: x, collections.defaultdict(list, {"b": 1}))
    assert type(dd) is collections.defaultdict and dd.default_factory is list
    # Insertion order is part of an OrderedDict's structure, not of a dict's.
    ab, ba = collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=2, a=1)
    assert tu.tree_structure(ab) != tu.tree_structure(ba)
    assert tu.tree_structure({"a": 1, "b": 2}) == tu.tree_structure({"b": 2, "a": 1})


def test_keys_that_do_not_sort_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\['b', 1\] mix int, str.*OrderedDict"):
        tu.tree_leaves({"b": 1, 1: 2})


def test_is_leaf_stops_the_walk() -> None:
    tree = [(1, 2), {"a": (3,)}, None]
    is_tuple: Callable[[Any], bool] = lambda x: isinstance(x, tuple)  # noqa: E731
    assert tu.tree_leaves(tree, is_leaf=is_tuple) == [(1, 2), (3,)]
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    leaves, treedef = tu.tree_flatten(tree, is_leaf=is_tuple)
    assert repr(treedef) == "PyTreeDef([*, {'a': *}, None])"
    assert tu.tree_map(len, tree, is_leaf=is_tuple) == [2, {"a": 1}, None]
    pairs = tu.tree_leaves_with_path(tree, is_leaf=is_tuple)
    assert [(tu.keystr(p), x) for p, x in pairs] == [
        ("[0]", (1, 2)),
        ("[1]['a']", (3,)),
    ]
    assert tl.tree.all([1, (0,)], is_leaf=is_tuple)  # (0,) is a true leaf


def test_tree_map_takes_trees_with_the_first_as_a_prefix() -> None:
    out = tu.tree_map(lambda x, y: (x, y), {"a": 1, "b": 2}, {"a": [3, 4], "b": None})
    assert out == {"a": (1, [3, 4]), "b": (2, None)}
    with_path = tu.tree_map_with_path(
        lambda p, x, y: tu.keystr(p) + str(x + y), (1,), (2,)
    )
    assert with_path == ("[0]3",)


def test_tree_map_names_both_structures_when_they_differ() -> None:
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda x, y: x, {"a": (1, 2)}, {"a": (1, 2, 3)})
    message = str(info.value)
    assert "PyTreeDef({'a': (*, *)})" in message
    assert "PyTreeDef({'a': (*, *, *)})" in message
    assert "at ['a'], expected a tuple of length 2, got a tuple of length 3" in message
    with pytest.raises(ValueError, match=r"tree 3 is PyTreeDef\(\[\*\]\)"):
        tu.tree_map(lambda *x: x, (1,), (2,), [3])


def test_treedef_methods() -> None:
    treedef = tu.tree_structure({"a": (1, 2), "b": None})
    assert treedef.children() == [tu.tree_structure((0, 0)), tu.tree_structure(None)]
    assert treedef.unflatten("xy") == {"a": ("x", "y"), "b": None}
    assert treedef.flatten_up_to({"a": ([1], 2), "b": None}) == [[1], 2]
    with pytest.raises(ValueError, match=r"at \['b'\], expected None"):
        treedef.flatten_up_to({"a": (1, 2), "b": 3})
    assert treedef.node_data() == (dict, ("a", "b"))
    assert {treedef: 1}[tu.tree_structure({"b": None, "a": ("p", "q")})] == 1
    with pytest.raises(ValueError, match="2 leaves; fewer"):
        treedef.unflatten([1])


def test_reduce_all_transpose() -> None:
    assert tu.tree_reduce(lambda a, b: a + b, {"x": 1, "y": [2, 3]}) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 10) == 10
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, [])
    assert tu.tree_all([1, True, None]) and tu.tree_all([])
    assert not tl.tree.all({"a": 0})
    # Recorded from JAX: ([1, 3], [2, 4]).
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0))
    assert tu.tree_transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert tl.tree.transpose(outer, None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])


def test_the_short_names_are_the_same_functions() -> None:
    assert tl.tree.map is tu.tree_map and tl.tree.leaves is tu.tree_leaves
    assert tl.tree.flatten_with_path is tu.tree_flatten_with_path
    assert tl.tree.structure([1]) == tu.tree_structure(["x"])
    assert tl.tree.reduce(max, [3, (7,), 5]) == 7


def test_registration_forms() -> None:
    @tu.register_pytree_node_class
    class Scaled:
        def __init__(self, x: Any, scale: float) -> None:
            self.x, self.scale = x, scale

        def tree_flatten(self) -> tuple[tuple[Any], float]:
            return (self.x,), self.scale

        @classmethod
        def tree_unflatten(cls, scale: float, children: Any) -> Scaled:
            return cls(*children, scale)

    out = tu.tree_map(lambda v: v + 1, Scaled(1, 0.5))
    assert (type(out), out.x, out.scale) == (Scaled, 2, 0.5)
    assert (
        repr(tu.tree_structure(Scaled(1, 2))) == "PyTreeDef(CustomNode(Scaled[2], [*]))"
    )
    with pytest.raises(ValueError, match="pytree node already"):
        tu.register_pytree_node(Scaled, lambda s: ((), None), lambda _, c: None)
    with pytest.raises(ValueError, match="pytree node already"):
        tu.register_pytree_node(dict, lambda s: ((), None), lambda _, c: None)


def test_register_dataclass_fields() -> None:
    @dataclasses.dataclass
    class Explicit:
        a: Any
        b: Any
        c: Any

    tu.register_dataclass(Explicit, data_fields=["b", "a"], meta_fields=["c"])
    assert tu.tree_leaves(Explicit(1, 2, 3)) == [2, 1]
    assert tu.tree_structure(Explicit(1, 2, 3)) != tu.tree_structure(Explicit(1, 2, 4))
    rebuilt = tu.tree_unflatten(tu.tree_structure(Explicit(0, 0, "m")), [5, 6])
    assert rebuilt == Explicit(6, 5, "m")
    with pytest.raises(TypeError, match="both data_fields and meta_fields"):
        tu.register_dataclass(Explicit, data_fields=["a"])
    with pytest.raises(TypeError, match="not a dataclass"):
        tu.register_dataclass(int)

    @dataclasses.dataclass
    class Missing:
        a: Any
        b: Any

    with pytest.raises(ValueError, match=r"\['b'\].*add each"):
        tu.register_dataclass(Missing, data_fields=["a"], meta_fields=[])


def test_partial_is_a_pytree_and_a_function() -> None:
    p = tu.Partial(divmod, 7)
    assert p(2) == (3, 1) and tu.tree_leaves(p) == [7]
    q = tu.tree_map(lambda x: x * 2, p)
    assert type(q) is tu.Partial and q(5) == (2, 4)


# -- through the transformations -------------------------------------------------


@tu.register_dataclass
@dataclasses.dataclass
class TrainState:
    """A Flax-TrainState-like state: a step, parameters, a static function."""

    step: Any
    params: dict[str, Any]
    apply_fn: Callable[..., Any] = dataclasses.field(metadata=dict(static=True))


def _apply(params: dict[str, Any], x: Any) -> Any:
    return (params["w"] * x).sum() + params["b"]


def test_a_registered_dataclass_passes_through_jit_and_grad() -> None:
    state = TrainState(0, {"w": tnp.ones(3), "b": tnp.float32(1.0)}, _apply)

    @tl.jit
    def train_step(s: TrainState, x: Any) -> TrainState:
        grads = tl.grad(lambda p: s.apply_fn(p, x))(s.params)
        assert isinstance(grads, dict) and set(grads) == {"b", "w"}
        new = tl.tree.map(lambda p, g: p - 0.5 * g, s.params, grads)
        return dataclasses.replace(s, step=s.step + 1, params=new)

    x = tnp.asarray([0.0, 1.0, 2.0])
    out = train_step(state, x)
    assert type(out) is TrainState and out.apply_fn is _apply
    assert int(out.step) == 1
    np.testing.assert_allclose(np.asarray(out.params["w"]), [1.0, 0.5, 0.0])
    np.testing.assert_allclose(float(out.params["b"]), 0.5)
    out = train_step(out, x)
    assert int(out.step) == 2
    assert train_step.cache_info().misses == 1  # (one structure, one trace)

    # grad of a function of the whole state: the gradient is a TrainState.
    def loss(s: TrainState) -> Any:
        return s.apply_fn(s.params, 2.0) * s.step

    g = tl.grad(loss)(TrainState(tnp.float32(3.0), state.params, _apply))
    assert type(g) is TrainState and g.apply_fn is _apply
    np.testing.assert_allclose(np.asarray(g.params["w"]), [6.0, 6.0, 6.0])
    np.testing.assert_allclose(float(g.step), 7.0)


def test_a_partial_passes_through_jit() -> None:
    f = tl.jit(lambda p, x: p(x))
    out = f(tu.Partial(tnp.multiply, tnp.asarray([1.0, 2.0])), 3.0)
    np.testing.assert_allclose(np.asarray(out), [3.0, 6.0])
    same = tl.jit(lambda p: p)(tu.Partial(max, tnp.ones(1)))
    assert type(same) is tu.Partial and same.func is max


def test_register_dataclass_leaves_out_fields_init_does_not_take() -> None:
    @tu.register_dataclass
    @dataclasses.dataclass
    class Derived:
        a: Any
        cache: Any = dataclasses.field(default=0)
        total: Any = dataclasses.field(init=False, default=None)

        def __post_init__(self) -> None:
            self.total = "computed"

    assert tu.tree_leaves(Derived(1, 2)) == [1, 2]
    assert tu.tree_map(lambda x: x * 3, Derived(1, 2)).total == "computed"

    @dataclasses.dataclass
    class Dropped:
        a: Any
        cache: Any = None

    tu.register_dataclass(Dropped, ["a"], [], drop_fields=["cache"])
    assert tu.tree_leaves(Dropped(1, "cached")) == [1]
    assert tu.tree_map(lambda x: x + 1, Dropped(1, "cached")) == Dropped(2, None)
