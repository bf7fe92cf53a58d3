"""Record what jax.tree_util says of a set of pytrees: structures, paths, keys.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_tree_golden.py

It writes ``tree.json`` beside this file. ``tests/test_tree_util.py`` builds
the same trees with ``typelattice.tree_util`` and compares.

The trees are built by :func:`trees`, given the ``tree_util`` module to
register their classes with (JAX's when recording, typelattice's when
replaying), so that both sides see the same values. Importing this module
needs only the standard library (JAX is imported by ``main``).

Per tree the record holds: the structure's ``repr``, ``num_leaves``,
``num_nodes``, the ``repr`` of its children, the leaves' ``repr``, and per
leaf the ``keystr`` of its path, the ``simple`` form with ``/`` separators
and the ``repr`` of the path's keys. The ``pairs`` record ``tree_map`` of two
trees: the result's ``repr``, or ``"!"`` and the exception's class.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import pathlib
import sys
from types import ModuleType
from typing import Any, NamedTuple

OUT = pathlib.Path(__file__).with_name("tree.json")


class Point(NamedTuple):
    x: Any
    y: Any


def trees(tu: ModuleType) -> dict[str, Any]:
    """The recorded trees by name, their classes registered with ``tu``."""

    @tu.register_dataclass
    @dataclasses.dataclass
    class State:
        step: Any
        params: Any
        tag: str = dataclasses.field(default="t", metadata=dict(static=True))

    class Pair:
        def __init__(self, a: Any, b: Any) -> None:
            self.a, self.b = a, b

    tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), "aux"), lambda _, c: Pair(*c))

    class Keyed:
        def __init__(self, w: Any, v: Any) -> None:
            self.w, self.v = w, v

    tu.register_pytree_with_keys(
        Keyed,
        lambda k: (((tu.GetAttrKey("w"), k.w), (tu.DictKey("v"), k.v)), None),
        lambda _, c: Keyed(*c),
    )
    return {
        "leaf": 1,
        "none": None,
        "empty tuple": (),
        "empty dict": {},
        "empty list": [],
        "tuple of one": (1,),
        "tuple": (1, 2),
        "list with None": [1, None],
        "dict": {"b": 1, "a": (2,)},
        "int keys": {3: "x", 1: "y", 2: "z"},
        "tuple keys": {(1, "b"): 1, (1, "a"): 2},
        "nested": {"c": [1, {"d": (2, None)}], "a": Point(3, [4])},
        "namedtuple": Point(1, 2),
        "ordered dict": collections.OrderedDict([("b", 1), ("a", 2)]),
        "defaultdict": collections.defaultdict(list, {"b": 1, "a": 2}),
        "dataclass": State(1, {"w": 2, "b": 3}),
        "registered": Pair(1, [2, 3]),
        "registered with keys": Keyed(1, (2,)),
        "partial": tu.Partial(max, 1, key=3),
        "flax params": {
            "params": {
                "Dense_0": {"kernel": 1, "bias": 2},
                "Dense_1": {"kernel": 3, "bias": 4},
            }
        },
    }


PAIRS: list[tuple[str, Any, Any]] = [
    ("same", (1, [2]), (10, [20])),
    ("prefix", (1, 2), (10, [20, 30])),
    ("longer", (1, 2), (1, 2, 3)),
    ("other keys", {"a": 1}, {"b": 1}),
    ("list and tuple", [1], (1,)),
    ("leaf for node", (1, [2, 3]), (1, 2)),
    ("None and leaf", [None], [1]),
    ("namedtuple and tuple", Point(1, 2), (1, 2)),
]


def record(tu: ModuleType) -> dict[str, Any]:
    """The record of every tree and pair, computed with ``tu``."""
    out: dict[str, Any] = {}
    for name, value in trees(tu).items():
        pairs, treedef = tu.tree_flatten_with_path(value)
        out[name] = {
            "structure": repr(treedef),
            "num_leaves": treedef.num_leaves,
            "num_nodes": treedef.num_nodes,
            "children": [repr(c) for c in treedef.children()],
            "leaves": [repr(x) for x in tu.tree_leaves(value)],
            "paths": [tu.keystr(p) for p, _ in pairs],
            "simple": [tu.keystr(p, simple=True, separator="/") for p, _ in pairs],
            "keys": [repr(p) for p, _ in pairs],
        }
    mapped: dict[str, Any] = {}
    for name, a, b in PAIRS:
        try:
            mapped[name] = repr(tu.tree_map(lambda x, y: (x, y), a, b))
        except Exception as e:  # noqa: BLE001 (the class is recorded)
            mapped[name] = "!" + type(e).__name__
    return {"trees": out, "pairs": mapped}


def main() -> None:
    import jax
    from jax import tree_util

    data = {"jax": jax.__version__, **record(tree_util)}
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
