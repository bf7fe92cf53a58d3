"""Live measurement of library promotion tables (seed 001's appendix method)."""

from __future__ import annotations

import importlib.util
import json

import pytest

import typelattice as tl
from typelattice import _compare, _tables
from typelattice._cli import main

# Seed 001's NumPy table, in its own codes (u8 is uint8 there, b is bool);
# a backslash continues the longest row.
SEED_NUMPY = """\
b u8 u16 u32 u64 i8 i16 i32 i64 bf16 f16 f32 f64 c64 c128 i* f* c*
b b u8 u16 u32 u64 i8 i16 i32 i64 - f16 f32 f64 c64 c128 i64 f64 c128
u8 u8 u8 u16 u32 u64 i16 i16 i32 i64 - f16 f32 f64 c64 c128 u8 f64 c128
u16 u16 u16 u16 u32 u64 i32 i32 i32 i64 - f32 f32 f64 c64 c128 u16 f64 c128
u32 u32 u32 u32 u32 u64 i64 i64 i64 i64 - f64 f64 f64 c128 c128 u32 f64 c128
u64 u64 u64 u64 u64 u64 f64 f64 f64 f64 - f64 f64 f64 c128 c128 u64 f64 c128
i8 i8 i16 i32 i64 f64 i8 i16 i32 i64 - f16 f32 f64 c64 c128 i8 f64 c128
i16 i16 i16 i32 i64 f64 i16 i16 i32 i64 - f32 f32 f64 c64 c128 i16 f64 c128
i32 i32 i32 i32 i64 f64 i32 i32 i32 i64 - f64 f64 f64 c128 c128 i32 f64 c128
i64 i64 i64 i64 i64 f64 i64 i64 i64 i64 - f64 f64 f64 c128 c128 i64 f64 c128
bf16 - - - - - - - - - - - - - - - - - -
f16 f16 f16 f32 f64 f64 f16 f32 f64 f64 - f16 f32 f64 c64 c128 f16 f16 c64
f32 f32 f32 f32 f64 f64 f32 f32 f64 f64 - f32 f32 f64 c64 c128 f32 f32 c64
f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 - f64 f64 f64 c128 c128 f64 f64 c128
c64 c64 c64 c64 c128 c128 c64 c64 c128 c128 - c64 c64 c128 c64 c128 c64 c64 c64
c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 - c128 c128 c128 c128 c128 c128 c128 \
c128
i* i64 u8 u16 u32 u64 i8 i16 i32 i64 - f16 f32 f64 c64 c128 i64 f64 c128
f* f64 f64 f64 f64 f64 f64 f64 f64 f64 - f16 f32 f64 c64 c128 f64 f64 c128
c* c128 c128 c128 c128 c128 c128 c128 c128 c128 - c64 c64 c128 c64 c128 c128 c128 c128
"""
SEED_TO_CODE = {
    "b": "b1", "u8": "u1", "u16": "u2", "u32": "u4", "u64": "u8",
    "i8": "i1", "i16": "i2", "i32": "i4", "i64": "i8",
    "bf16": "bf", "f16": "f2", "f32": "f4", "f64": "f8",
    "c64": "c8", "c128": "c16", "i*": "i*", "f*": "f*", "c*": "c*", "-": "-",
}  # fmt: skip


def seed_numpy() -> dict[tuple[str, str], str]:
    header, *rows = [line.split() for line in SEED_NUMPY.splitlines()]
    return {
        (SEED_TO_CODE[row[0]], SEED_TO_CODE[col]): SEED_TO_CODE[cell]
        for row in rows
        for col, cell in zip(header, row[1:], strict=True)
    }


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def test_numpy_measured_live_is_seed_001s_table() -> None:
    table = tl.measure_library("numpy")
    assert table.codes == _tables.DEFAULT_CODES
    assert table.title.startswith("numpy ")
    expected = seed_numpy()
    measured = {(a, b): table.cell(a, b) for a in table.codes for b in table.codes}
    assert measured == expected


def test_numpy_table_is_not_associative_as_seed_001_shows() -> None:
    laws = tl.check_laws(tl.measure_library("numpy"))
    assert laws.non_commutative == ()
    found = {(t.a, t.b, t.c): (t.left, t.right) for t in laws.non_associative}
    # np.int8 + np.uint8 + np.float16: float32 one way, float16 the other.
    assert found[("i1", "u1", "f2")] == ("f4", "f2")
    assert str(laws.sets()[0]) == "(u1 + i1) + f2 = f4, but u1 + (i1 + f2) = f2"
    assert laws.triples == 17**3  # bf16 is missing from NumPy
    assert laws.pairs == 18 * 17 // 2


def test_typelattice_measured_through_its_namespace_is_a_lattice() -> None:
    table = tl.measure_library("typelattice", x64=True)
    assert table.title.endswith("(64-bit)")
    assert table.cells == tl.promotion_table(None, "standard", True).cells
    laws = tl.check_laws(table)
    assert laws.non_associative == () and laws.non_commutative == ()
    assert laws.triples == 18**3 and laws.one_sided == 0


def test_typelattice_measured_in_32_bit_mode_narrows_64_bit_arrays() -> None:
    table = tl.measure_library("typelattice", x64=False)
    assert table.cell("u4", "i4") == "i4"  # the 32-bit lattice
    assert table.cell("i8", "i1") == "i4"  # an int64 array stands for int32
    narrow = [c for c in table.codes if c not in ("u8", "i8", "f8", "c16")]
    assert [[table.cell(a, b) for b in narrow] for a in narrow] == [
        list(row) for row in tl.promotion_table(narrow, "standard", False).cells
    ]


def test_a_table_with_one_sided_triples_is_counted_apart() -> None:
    table = tl.Table(("a", "b"), (("a", "-"), ("-", "b")))
    laws = tl.check_laws(table)
    assert laws.triples == 2 and laws.one_sided == 0  # (a, a, a) and (b, b, b)
    partial = tl.Table(
        ("a", "b", "c"), (("a", "c", "-"), ("c", "b", "c"), ("-", "c", "c"))
    )
    laws = tl.check_laws(partial)
    # (a + b) + c = c + c = c, but a + (b + c) = a + c is refused.
    assert laws.one_sided > 0 and laws.non_associative == ()


def test_non_commutative_cells_are_reported() -> None:
    table = tl.Table(("a", "b"), (("a", "a"), ("b", "b")))
    assert tl.check_laws(table).non_commutative == (("a", "b"),)


def test_comparison_lists_the_cells_that_differ() -> None:
    c = tl.compare_libraries(["numpy", "typelattice"], ["i4", "f4", "f*"])
    assert c.libraries == ("numpy", "typelattice")
    assert dict(((a, b), v) for a, b, v in c.differences) == {
        ("i4", "f4"): ("f8", "f4"),
        ("f4", "i4"): ("f8", "f4"),
        ("i4", "f*"): ("f8", "f*"),
        ("f*", "i4"): ("f8", "f*"),
        ("f*", "f*"): ("f8", "f*"),
    }


def test_unknown_library_and_unknown_code() -> None:
    with pytest.raises(ValueError, match="unknown library 'mxnet'"):
        tl.measure_library("mxnet")
    with pytest.raises(TypeError, match="unknown dtype code 'i3'"):
        tl.measure_library("numpy", ["i3"])


def test_library_not_installed_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tensorflow" else real(name, *a),
    )
    with pytest.raises(tl.LibraryNotInstalled, match="pip install tensorflow"):
        tl.compare_libraries(["numpy", "tensorflow"])
    assert main(["compare", "numpy", "tensorflow"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        "typelattice: error: tensorflow is not installed; "
        "install it with: pip install tensorflow\n"
    )


def test_progress_is_reported_for_every_pair() -> None:
    calls: list[tuple[str, int, int]] = []
    tl.measure_library("numpy", ["i1", "u1"], progress=lambda *a: calls.append(a))
    assert calls[0] == ("numpy", 0, 4) and calls[-1] == ("numpy", 4, 4)
    assert len(calls) == 5


def test_comparison_json_holds_tables_differences_and_laws() -> None:
    c = tl.compare_libraries(["numpy", "typelattice"], ["i1", "u1", "i2", "f2", "f4"])
    laws = [tl.check_laws(t) for t in c.tables]
    data = json.loads(_compare.comparison_json(c, laws))
    assert [t["library"] for t in data["tables"]] == ["numpy", "typelattice"]
    assert data["tables"][0]["cells"][0] == ["i1", "i2", "i2", "f2", "f4"]
    assert data["differences"] == [
        {"row": "i2", "col": "f2", "values": {"numpy": "f4", "typelattice": "f2"}},
        {"row": "f2", "col": "i2", "values": {"numpy": "f4", "typelattice": "f2"}},
    ]
    assert data["laws"][1]["non_associative"] == []
    assert data["laws"][0]["non_associative"][0] == {
        "a": "i1", "b": "u1", "c": "f2", "left": "f4", "right": "f2"
    }  # fmt: skip


# -- other libraries, when installed ------------------------------------------------


@pytest.mark.jax
@pytest.mark.skipif(not installed("jax"), reason="JAX is not installed")
def test_jax_measured_live_matches_typelattice() -> None:
    jax_table = tl.measure_library("jax", x64=True)
    assert jax_table.cells == tl.promotion_table(None, "standard", True).cells
    both = tl.compare_libraries(["jax", "typelattice"], x64=False)
    assert both.tables[0].cell("u4", "i4") == "i4"
    assert both.differences == ()


@pytest.mark.jax
@pytest.mark.skipif(not installed("jax"), reason="JAX is not installed")
def test_jax_lax_promotes_nothing_but_weak_scalars() -> None:
    table = tl.measure_library("jax.lax", x64=True)
    # Seed 001: lax.add only adds equal types; a Python scalar joins a
    # strong type only where it is that type already.
    assert table.cell("i1", "i2") == "-"
    assert table.cell("i8", "i*") == "i8" and table.cell("f8", "f*") == "f8"
    assert table.cell("i*", "i*") == "i*" and table.cell("i4", "i*") == "-"
    assert table.cell("b1", "b1") == "-"  # lax.add refuses bool
    assert all(table.cell(c, c) == c for c in table.codes if c != "b1")


@pytest.mark.skipif(not installed("torch"), reason="PyTorch is not installed")
def test_torch_cells_of_seed_001() -> None:
    table = tl.measure_library("torch")
    assert table.cell("u1", "i1") == "i2"
    assert table.cell("bf", "f2") == "f4"
    assert table.cell("i4", "f2") == "f2"
    assert table.cell("f2", "f*") == "f2"
    assert table.cell("i8", "bf") == "bf"


@pytest.mark.skipif(not installed("tensorflow"), reason="TensorFlow is not installed")
def test_tensorflow_cells_of_seed_001() -> None:
    table = tl.measure_library("tensorflow")
    assert table.cell("i1", "i1") == "i1"
    assert table.cell("i1", "i2") == "-"
    assert table.cell("f4", "f*") == "f4"


@pytest.mark.skipif(
    not installed("array_api_strict"), reason="array-api-strict is not installed"
)
def test_array_api_strict_has_no_mixed_kind_promotion() -> None:
    table = tl.measure_library("array_api_strict")
    assert table.cell("i1", "u1") == "i2"
    assert table.cell("i4", "f4") == "-"
    assert table.cell("f4", "f*") == "f4"
    assert table.cell("f2", "f2") == "-"  # no float16 in the standard
