"""Joins explained step by step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import typelattice as tl
from support import chain_edges, with_small_stack

LATTICES = Path(__file__).resolve().parents[1] / "examples" / "lattices"


def test_a_join_step_by_step() -> None:
    e = tl.explain("int8", "uint16", x64=True)
    assert e.lattice == "standard lattice, 64-bit mode"
    assert e.nodes == ("i1", "u2")
    assert e.upper_bounds[0][:4] == ("i1", "i2", "i4", "i8")
    assert e.upper_bounds[1][:4] == ("u2", "u4", "i4", "u8")
    assert e.common[:3] == ("i4", "i8", "f*")
    assert e.minimal == ("i4",) and e.join == "i4"
    assert e.chains == (("i1", "i2", "i4"), ("u2", "i4"))
    assert e.result == "int32" and e.error == "" and e.cast == ""


@pytest.mark.parametrize(
    ("inputs", "x64", "join"),
    [
        (("int8", "uint8", "float16"), True, "f2"),
        (("u4", "i4"), True, "i8"),
        (("u4", "i4"), False, "i4"),
        (("bfloat16", "float16"), False, "f4"),
        (("int", "float"), False, "f*"),
        (("i*", "int8"), False, "i1"),
    ],
)
def test_the_join_is_what_promote_types_gives(
    inputs: tuple[str, ...], x64: bool, join: str
) -> None:
    e = tl.explain(*inputs, x64=x64)
    assert e.join == join
    if len(inputs) == 2 and "int" not in inputs:
        with tl.enable_x64(x64):
            expected = tl.promote_types(*(tl.code_to_dtype(c) for c in e.nodes))
        assert tl.dtype_code(expected, weak="*" in join) == join
    for chain, node in zip(e.chains, e.nodes, strict=True):
        assert chain[0] == node and chain[-1] == join


def test_each_chain_follows_edges_of_the_lattice() -> None:
    lattice = tl.get_lattice("standard", True)
    edges = {(lattice.label(a), lattice.label(b)) for a, b in lattice.edges}
    e = tl.explain("bool", "uint32", "complex64", x64=True)
    assert e.join == "c8"
    for chain in e.chains:
        assert all(step in edges for step in zip(chain, chain[1:], strict=False))


def test_a_weak_result_is_described() -> None:
    e = tl.explain(int, 2.0, x64=False)
    assert e.nodes == ("i*", "f*") and e.join == "f*"
    assert e.result.startswith("weak float (f*): float32")
    assert any("int is the weak node i*" in n for n in e.notes)


def test_no_join_in_strict_mode_gives_the_error_and_the_cast() -> None:
    e = tl.explain("float32", "int32", promotion="strict")
    assert e.join is None and e.common == () and e.chains == ()
    with tl.dtype_promotion("strict"), pytest.raises(tl.TypePromotionError) as info:
        tl.result_type("float32", "int32")
    assert e.error == str(info.value)
    assert e.cast == "x.astype('float32') on the int32 input (the join is then float32)"


def test_no_join_for_small_floats_suggests_the_errors_cast() -> None:
    e = tl.explain("float8_e4m3fn", "float8_e5m2")
    with pytest.raises(tl.TypePromotionError) as info:
        tl.result_type("float8_e4m3fn", "float8_e5m2")
    assert e.error == str(info.value)
    assert "x.astype('float32')" in e.error
    assert e.cast == (
        "x.astype('float32') on the float8_e4m3fn input, "
        "x.astype('float32') on the float8_e5m2 input (the join is then float32)"
    )
    e = tl.explain("int4", "bfloat16")
    assert e.cast == "x.astype('int32') on the int4 input (the join is then bfloat16)"


def test_32_bit_mode_notes_the_narrowing_of_64_bit_inputs() -> None:
    e = tl.explain("int64", np.dtype("uint8"), x64=False)
    assert e.join == "i8"
    assert any("narrows int64 to 32 bits" in n for n in e.notes)
    assert not tl.explain("int64", "uint8", x64=True).notes


def test_explain_on_a_lattice_file() -> None:
    lattice = tl.Lattice.from_file(LATTICES / "python_scalars.json")
    e = tl.explain("int", "complex", lattice=lattice, lattice_name="scalars")
    assert e.lattice == "lattice scalars"
    assert e.nodes == ("Python int", "Python complex")
    assert e.join == "Python complex"
    assert e.chains[0] == ("Python int", "Python float", "Python complex")
    typed = tl.Lattice.from_file(LATTICES / "no_mixed_int_float.toml")
    e = tl.explain("int32", "float32", lattice=typed)  # dtype names find codes
    assert e.nodes == ("i4", "f4") and e.join is None
    assert e.cast == "convert the inputs explicitly to one common type"


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="at least two"):
        tl.explain("int8")
    with pytest.raises(TypeError, match="unknown dtype 'int7'"):
        tl.explain("int8", "int7")
    lattice = tl.Lattice.from_file(LATTICES / "python_scalars.json")
    with pytest.raises(ValueError, match="'bool' is not a node of the lattice"):
        tl.explain("int", "bool", lattice=lattice)


def test_a_registered_lattice_missing_a_type() -> None:
    tiny = tl.Lattice({"i*": ["i1", "f*"], "i1": ["f4"], "f*": ["f4"]})
    tl.register_lattice("tiny_explained", tiny)
    with pytest.raises(ValueError, match="int16 is not a type of the 'tiny_explained'"):
        tl.explain("int16", "int8", promotion="tiny_explained")
    assert tl.explain("int8", "float", promotion="tiny_explained").join == "f4"


def test_a_join_on_a_chain_of_a_thousand_nodes() -> None:
    lat = tl.Lattice({**chain_edges(1000), "x": ["n500"]}, label=str)
    e = with_small_stack(lambda: tl.explain("x", "n3", lattice=lat))
    assert e.join == "n500" and e.minimal == ("n500",)
    assert e.chains[0] == ("x", "n500")
    assert e.chains[1] == tuple(f"n{i}" for i in range(3, 501))
    assert len(e.common) == 500
