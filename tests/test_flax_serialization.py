"""typelattice.flax.serialization: Flax's bytes read here and ours equal
Flax's (the records of tests/golden/make_flax_serialization_golden.py), and
restoring checks structure, shapes and dtypes."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import optim
from typelattice._basearray import Array
from typelattice.flax import _serialization, serialization
from typelattice.flax.core import FrozenDict, freeze
from typelattice.flax.training.train_state import TrainState

pytest.importorskip("msgpack")

GOLDEN = Path(__file__).parent / "golden"
RECORD = json.loads((GOLDEN / "flax_serialization.json").read_text())
CASES = RECORD["cases"]


def _bytes(name: str) -> bytes:
    return (GOLDEN / "flax_bytes" / f"{name}.msgpack").read_bytes()


_NAMEDTUPLES: dict[tuple[str, tuple[str, ...]], type] = {}


def _namedtuple(name: str, fields: tuple[str, ...]) -> type:
    key = (name, fields)
    if key not in _NAMEDTUPLES:
        _NAMEDTUPLES[key] = collections.namedtuple(name, fields)  # type: ignore[misc]
    return _NAMEDTUPLES[key]


def build(node: Any, zeros: bool = False) -> Any:
    """The recorded tree with typelattice Arrays (zeros of each array's
    shape and dtype with ``zeros``: a restore target)."""
    if not isinstance(node, list):
        return node
    kind = node[0]
    if kind == "array":
        _, name, shape, data = node
        dtype = tl.dtype(name, canonicalize=False)
        a = np.frombuffer(bytes.fromhex(data), dtype=dtype).reshape(shape)
        if tl.canonicalize_dtype(dtype) != dtype:
            # A 64-bit array in 32-bit mode: a NumPy leaf, as Flax takes too.
            return np.zeros(shape, dtype) if zeros else a.copy()
        return tnp.zeros(shape, dtype) if zeros else tnp.asarray(a.copy())
    if kind == "npscalar":
        _, name, data = node
        return np.frombuffer(bytes.fromhex(data), dtype=tl.dtype(name))[0]
    if kind == "complex":
        return complex(node[1], node[2])
    if kind == "dict":
        return {k: build(v, zeros) for k, v in node[1]}
    if kind == "list":
        return [build(v, zeros) for v in node[1]]
    if kind == "tuple":
        return tuple(build(v, zeros) for v in node[1])
    if kind == "namedtuple":
        cls = _namedtuple(node[1], tuple(f for f, _ in node[2]))
        return cls(**{f: build(v, zeros) for f, v in node[2]})
    assert kind == "struct" and node[1] == "TrainState"
    fields = {f: build(v, zeros) for f, v in node[2]}
    return TrainState(apply_fn=print, tx=optim.sgd(0.1), **fields)


def assert_same(restored: Any, expected: Any, path: str = "") -> None:
    """Same structure, values, dtypes; arrays restored as typelattice
    Arrays."""
    if isinstance(expected, np.ndarray):
        # (a 64-bit NumPy leaf in 32-bit mode: restored exactly, 32-bit)
        assert isinstance(restored, Array), path
        assert restored.dtype == tl.canonicalize_dtype(expected.dtype), path
        np.testing.assert_array_equal(np.asarray(restored), expected)
    elif isinstance(expected, Array):
        assert isinstance(restored, Array), path
        assert restored.dtype == expected.dtype, path
        assert restored.shape == expected.shape, path
        np.testing.assert_array_equal(
            np.asarray(restored).reshape(-1).view(np.uint8),
            np.asarray(expected).reshape(-1).view(np.uint8),
        )
    elif isinstance(expected, dict):
        assert isinstance(restored, dict) and list(restored) == list(expected), path
        for k in expected:
            assert_same(restored[k], expected[k], f"{path}/{k}")
    elif isinstance(expected, tuple | list):
        assert type(restored) is type(expected), path
        assert len(restored) == len(expected), path
        for i, (r, e) in enumerate(zip(restored, expected, strict=True)):
            assert_same(r, e, f"{path}/{i}")
    elif isinstance(expected, TrainState):
        assert isinstance(restored, TrainState)
        for f in ("step", "params", "opt_state"):
            assert_same(getattr(restored, f), getattr(expected, f), f"{path}/{f}")
    elif isinstance(expected, np.generic):
        assert isinstance(restored, Array) and restored.dtype == expected.dtype, path
        assert np.asarray(restored) == expected, path
    else:
        assert type(restored) is type(expected) and restored == expected, path


@pytest.fixture
def chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_serialization, "MAX_CHUNK_SIZE", RECORD["chunk_size"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_our_bytes_are_flax_bytes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if name == "chunked":
        monkeypatch.setattr(_serialization, "MAX_CHUNK_SIZE", RECORD["chunk_size"])
    case = CASES[name]
    tree = build(case["tree"])
    if case["written_by"] == "to_bytes":
        data = serialization.to_bytes(tree)
    else:
        data = serialization.msgpack_serialize(tree)
    assert data == _bytes(name)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"sorted"}))
def test_flax_bytes_restore_into_a_target(name: str) -> None:
    tree = CASES[name]["tree"]
    restored = serialization.from_bytes(build(tree, zeros=True), _bytes(name))
    assert_same(restored, build(tree))


def test_flax_bytes_read_without_a_target_keep_the_saved_dtypes() -> None:
    state = serialization.msgpack_restore(_bytes("params"))
    assert state["embedding"].dtype == tl.dtype("bfloat16")
    assert state["half"].dtype == np.float16
    assert state["count"].dtype == np.int32 and state["count"].shape == ()
    assert state["nested"]["deep"]["flag"].dtype == np.bool_
    assert all(isinstance(x, Array) for x in tl.tree_util.tree_leaves(state))
    adam = serialization.msgpack_restore(_bytes("train_state"))["opt_state"]
    assert sorted(adam) == ["0", "1"] and sorted(adam["0"]) == ["count", "mu", "nu"]
    assert adam["1"] == {}
    mixed = serialization.msgpack_restore(_bytes("mixed"))
    assert mixed["tuple"] == {"0": 1, "1": 2.5}
    assert mixed["complex"] == 1.5 - 2j
    assert mixed["f8e4m3"].dtype == tl.dtype("float8_e4m3fn")


def test_64_bit_arrays_read_in_32_bit_mode_only_when_exact() -> None:
    data = serialization.to_bytes({"w": np.float64([0.5, 0.1])})
    with pytest.raises(
        ValueError, match=r"\./w: the saved float64 values are not exact"
    ):
        serialization.msgpack_restore(data)
    with pytest.raises(ValueError, match=r"enable_x64"):
        serialization.from_bytes({"w": np.zeros(2)}, data)
    with tl.enable_x64(True):
        restored = serialization.msgpack_restore(data)["w"]
        assert restored.dtype == np.float64
        assert np.asarray(restored).tolist() == [0.5, 0.1]
    exact = serialization.msgpack_restore(serialization.to_bytes(np.int64([3])))
    assert exact.dtype == np.int32 and exact.tolist() == [3]


def test_chunked_arrays_read_back(chunk_size: None) -> None:
    restored = serialization.msgpack_restore(_bytes("chunked"))
    assert_same(restored, build(CASES["chunked"]["tree"]))


def test_msgpack_serialize_orders_keys_unless_in_place() -> None:
    tree = {"b": 1, "a": {"d": 2, "c": 3}}
    assert (
        list(serialization.msgpack_restore(serialization.msgpack_serialize(tree)))[0]
        == "a"
    )
    kept = serialization.msgpack_restore(
        serialization.msgpack_serialize(tree, in_place=True)
    )
    assert list(kept) == ["b", "a"] and list(kept["a"]) == ["d", "c"]
    assert tree == {"b": 1, "a": {"d": 2, "c": 3}}  # unchanged either way


def test_serializing_leaves_the_tree_unchanged(chunk_size: None) -> None:
    big = tnp.arange(12.0)
    tree = {"w": big, "inner": {"v": big}}
    serialization.to_bytes(tree)
    assert tree["w"] is big and tree["inner"]["v"] is big


def test_frozen_dict_and_struct_round_trip() -> None:
    variables = freeze({"params": {"w": tnp.ones(2, "bfloat16")}})
    restored = serialization.from_bytes(variables, serialization.to_bytes(variables))
    assert isinstance(restored, FrozenDict)
    assert restored["params"]["w"].dtype == tl.dtype("bfloat16")
    state = TrainState.create(
        apply_fn=print, params={"w": tnp.arange(3.0)}, tx=optim.adam(0.1)
    )
    back = serialization.from_bytes(state, serialization.to_bytes(state))
    assert back.apply_fn is print and back.tx is state.tx
    assert_same(back.params, state.params)
    assert type(back.opt_state) is type(state.opt_state)


# -- data safety ---------------------------------------------------------------


def test_a_different_shape_names_the_path_and_both_shapes() -> None:
    data = serialization.to_bytes({"layer": {"kernel": tnp.zeros((3, 4))}})
    with pytest.raises(ValueError, match=r"layer/kernel.*\(3, 5\).*\(3, 4\)"):
        serialization.from_bytes({"layer": {"kernel": tnp.zeros((3, 5))}}, data)


@pytest.mark.parametrize(
    ("saved", "target"),
    [
        (np.float32([1.5, 2.0]), "int8"),  # a fraction
        (np.float32([300.0]), "int8"),  # out of range
        (np.float32([1.0, np.nan]), "int32"),  # NaN
        (np.float32([np.inf]), "int32"),  # infinity
        (np.float64([1.1]), "float32"),  # not representable
        (np.int64([16777217]), "float32"),  # rounds
        (np.complex64([1 + 1j]), "float32"),  # an imaginary part
        (np.float32([-0.0]), "int32"),  # the sign of zero
        (np.int32([2]), "bool"),
        (np.int32([-1]), "uint32"),
    ],
    ids=lambda v: str(v.dtype) if hasattr(v, "dtype") else str(v),
)
def test_a_conversion_that_changes_values_is_refused(
    saved: np.ndarray[Any, Any], target: str
) -> None:
    data = serialization.to_bytes({"w": saved})
    with pytest.raises(ValueError, match=rf"\./w: the saved array is .* {target}"):
        serialization.from_bytes({"w": tnp.zeros(saved.shape, target)}, data)


def test_an_exact_conversion_is_made() -> None:
    data = serialization.to_bytes({"w": tnp.asarray([1.0, -2.0, 0.5])})
    restored = serialization.from_bytes({"w": tnp.zeros(3, "bfloat16")}, data)
    assert restored["w"].dtype == tl.dtype("bfloat16")
    assert np.asarray(restored["w"], np.float32).tolist() == [1.0, -2.0, 0.5]
    ints = serialization.to_bytes({"n": tnp.asarray([3.0, -4.0])})
    assert serialization.from_bytes({"n": tnp.zeros(2, "int8")}, ints)[
        "n"
    ].tolist() == [3, -4]


def test_structure_mismatches_name_the_keys() -> None:
    data = serialization.to_bytes({"a": tnp.zeros(2), "b": tnp.zeros(2)})
    with pytest.raises(ValueError, match=r"\['c'\] are not in the saved.*\['b'\]"):
        serialization.from_bytes({"a": tnp.zeros(2), "c": tnp.zeros(2)}, data)
    with pytest.raises(ValueError, match=r"saved keys \['b'\] are not in the target"):
        serialization.from_bytes({"a": tnp.zeros(2)}, data)
    with pytest.raises(ValueError, match=r"\./a: the target holds an array"):
        serialization.from_bytes(
            {"a": tnp.zeros(2), "b": tnp.zeros(2)},
            serialization.msgpack_serialize({"a": {}, "b": tnp.zeros(2)}),
        )
    with pytest.raises(ValueError, match=r"list has 3 items, the saved state 2"):
        serialization.from_bytes([0, 0, 0], serialization.to_bytes([1, 2]))


def test_state_dicts_follow_flax() -> None:
    Pair = collections.namedtuple("Pair", "x y")
    tree = {"t": (1, [2.0]), "p": Pair(3, None), 5: "five"}
    assert serialization.to_state_dict(tree) == {
        "t": {"0": 1, "1": {"0": 2.0}},
        "p": {"x": 3, "y": None},
        "5": "five",
    }
    restored = serialization.from_state_dict(
        tree, {"t": {"0": 4, "1": {"0": 5.0}}, "p": {"x": 6, "y": None}, "5": "v"}
    )
    assert restored == {"t": (4, [5.0]), "p": Pair(6, None), 5: "v"}
    with pytest.raises(ValueError, match="same string form"):
        serialization.to_state_dict({1: 0, "1": 0})


def test_register_serialization_state_refuses_a_second_handler() -> None:
    with pytest.raises(ValueError, match="override=True"):
        serialization.register_serialization_state(dict, dict, dict)


def test_an_unserializable_leaf_is_named() -> None:
    with pytest.raises(TypeError, match="cannot serialize a object"):
        serialization.to_bytes({"x": object()})


def test_without_msgpack_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "msgpack", None)
    with pytest.raises(ImportError, match=r"typelattice\[flax\]"):
        serialization.to_bytes({"w": 1})


def test_importing_typelattice_loads_neither_flax_nor_msgpack() -> None:
    code = (
        "import sys, typelattice, typelattice.numpy, typelattice.nn\n"
        "print('typelattice.flax' in sys.modules)\n"
        "import typelattice.flax.linen, typelattice.flax.training\n"
        "print('msgpack' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]
