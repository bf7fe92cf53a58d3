"""Live measurement of library promotion tables (seed 001's appendix method)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from typing import Any

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


# -- typelattice on each backend, and the backends' libraries' own rules ------------


def test_typelattice_decides_every_dtype_on_every_backend(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("dask")
    names = ["typelattice", "typelattice:torch", "typelattice:dask"]
    assert main(["compare", *names]) == 0
    out = capsys.readouterr().out
    assert "cells that differ: 0 of 324" in out
    assert "typelattice:torch 0.1.0 on torch 2." in out
    assert "typelattice:dask 0.1.0 on dask " in out
    assert "came back elsewhere" not in out
    c = tl.compare_libraries(names)
    lattice = tl.promotion_table(None, "standard", True)
    for table in c.tables:
        assert table.cells == lattice.cells, table.title
        assert _compare.misplaced_cells(table) == ()


def test_with_every_type_a_backend_differs_only_where_its_library_lacks_one() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("dask")
    import typelattice.numpy as tnp

    codes = _tables.all_codes()
    names = ["typelattice", "typelattice:torch", "typelattice:dask"]
    c = tl.compare_libraries(names, codes)
    lacking = set()
    for code in codes:
        if code in ("i*", "f*", "c*"):
            continue
        try:
            with tl.enable_x64():
                tnp.zeros((), _dtypes_of(code), backend="torch")
        except TypeError:  # int4, float8_e3m4...: not in torch
            lacking.add(code)
        except OverflowError:  # float8_e8m0fnu has no zero, on any backend
            pass
    assert {"i4b", "f8e3m4", "f4e2m1fn"} <= lacking
    assert not lacking & set(_tables.DEFAULT_CODES)
    assert c.differences
    for a, b, (numpy, on_torch, on_dask) in c.differences:
        assert on_dask == numpy, (a, b)  # Dask holds every type NumPy does
        assert on_torch == "-" and {a, b} & lacking, (a, b)
    assert all(_compare.misplaced_cells(t) == () for t in c.tables)


def test_typelattice_on_backends_in_32_bit_mode(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 32-bit mode is the lattice's 32-bit table on every backend: a 64-bit
    # zero is made 32-bit, as on NumPy, and no backend's value is wider.
    pytest.importorskip("torch")
    pytest.importorskip("dask")
    names = ["typelattice", "typelattice:torch", "typelattice:dask"]
    c = tl.compare_libraries(names, x64=False)
    assert c.differences == ()
    assert all(t.title.endswith("(32-bit)") for t in c.tables)
    torch_table = c.tables[1]
    assert torch_table.cell("u4", "i4") == "i4" and torch_table.cell("i8", "f8") == "f4"
    assert _compare.misplaced_cells(torch_table) == ()
    assert main(["compare", *names, "--x32", "--types", "i8,u4,f*"]) == 0
    assert "cells that differ: 0 of 9" in capsys.readouterr().out


def test_table_diff_on_a_backend_marks_no_cell(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("torch")
    assert main(["table", "--x64", "--diff", "typelattice:torch"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + 19 + 1
    assert not any("[" in line for line in lines[:-1])  # no [x]-marked cell
    assert lines[-1] == "[x]: the 0 cells where typelattice:torch differs"


def test_table_diff_in_32_bit_mode_marks_only_the_narrowed_64_bit_types(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 32-bit mode has no 64-bit arrays: a zero of int64 is made int32 on
    # every backend, as on NumPy, so the measured rows and columns of the
    # 64-bit types are the 32-bit ones. The backend changes nothing.
    pytest.importorskip("torch")
    lattice = tl.promotion_table(None, "standard", False)
    marked = {}
    for lib in ("typelattice", "typelattice:torch"):
        measured = tl.measure_library(lib, x64=False)
        marked[lib] = _tables.differing_cells(lattice, measured)
        assert main(["table", "--x32", "--diff", lib]) == 0
        *table, count, note = capsys.readouterr().out.splitlines()
        assert count == f"[x]: the 104 cells where {lib} differs"
        assert note.startswith(
            "note: in 32-bit mode an array of u8, i8, f8 or c16 is made 32-bit"
        )
    assert marked["typelattice"] == marked["typelattice:torch"]
    wide = {"u8", "i8", "f8", "c16"}
    assert all(set(cell) & wide for cell in marked["typelattice"])
    assert ("b1", "u8") in marked["typelattice"]


def test_torch_own_rules_differ_from_typelattice_on_torch() -> None:
    pytest.importorskip("torch")
    c = tl.compare_libraries(["torch", "typelattice:torch"])
    found = {(a, b): v for a, b, v in c.differences}
    assert len(found) == 112
    # torch has no kernel adding uint32 to int32; typelattice's torch
    # backend computes the lattice's int64 (emulating the unsigned type).
    assert found[("u4", "i4")] == ("-", "i8")
    assert found[("u8", "i1")] == ("-", "f*")
    # A Python float is torch's default float32; the lattice keeps it weak.
    assert found[("i1", "f*")] == ("f4", "f*")
    assert found[("f2", "c*")] == ("complex32", "c8")
    # Where both rules agree there is no difference: int8 + uint8 is int16.
    assert ("i1", "u1") not in found
    assert c.tables[0].cell("i1", "u1") == c.tables[1].cell("i1", "u1") == "i2"


def test_dask_follows_numpys_rules_without_computing() -> None:
    da = pytest.importorskip("dask.array")
    c = tl.compare_libraries(["numpy", "dask"])
    # Dask infers each result's dtype by applying NumPy to small arrays:
    # every cell of the 18 types is NumPy's, Python scalars included
    # (i* + i* is int64 in both: the ufunc of two Python ints).
    assert c.differences == ()
    assert c.tables[1].title.startswith("dask ")
    assert c.tables[1].cell("i4", "f4") == "f8"
    # The dtype read from the graph is the dtype computed.
    for a, b in [("i1", "u1"), ("u1", "i*"), ("i4", "f4")]:
        x = da.zeros((), dtype=_dtypes_of(a)) if a != "i*" else 0
        y = da.zeros((), dtype=_dtypes_of(b)) if b != "i*" else 0
        total = da.add(x, y)
        assert total.compute().dtype == total.dtype
        assert _compare._dtype_result(total) == c.tables[1].cell(a, b)


def _dtypes_of(code: str) -> object:
    from typelattice import _dtypes

    return _dtypes.code_to_dtype(code)


def test_typelattice_on_dask_computes_in_the_announced_dtype() -> None:
    da = pytest.importorskip("dask.array")
    import numpy as np

    import typelattice.numpy as tnp

    x = tnp.asarray(da.zeros((), dtype=np.int32))
    total = tnp.add(x, tnp.asarray(da.zeros((), dtype=np.float32)))
    assert (total.backend, total.dtype) == ("dask", np.dtype("float32"))
    assert np.asarray(total).dtype == np.float32  # computed: Dask's own is f8
    table = tl.measure_library("typelattice:dask", ["i4", "f4"])
    assert table.cell("i4", "f4") == "f4"


def test_a_result_on_another_backend_is_marked_not_passed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    import numpy as np

    import typelattice.numpy as tnp

    add = tnp.add

    def moved(a: Any, b: Any) -> tl.Array:
        out = add(a, b)  # int16 results moved to NumPy: a fault to report
        return tnp.asarray(np.asarray(out)) if out.dtype == np.int16 else out

    monkeypatch.setattr(tnp, "add", moved)
    table = tl.measure_library("typelattice:torch", ["i1", "u1", "f4"])
    assert table.cell("i1", "u1") == "i2@numpy"
    assert table.cell("i1", "f4") == "f4"
    assert _compare.misplaced_cells(table) == (
        ("i1", "u1", "i2@numpy"),
        ("u1", "i1", "i2@numpy"),
    )
    assert (
        main(["compare", "typelattice", "typelattice:torch", "--types", "i1,u1"]) == 0
    )
    out = capsys.readouterr().out
    assert "cells that differ: 2 of 4" in out
    assert "2 results came back elsewhere than their operands' backend" in out
    assert "  i1 + u1 = i2@numpy" in out
    assert main(["table", "--diff", "typelattice:torch", "--types", "i1,u1"]) == 0
    out = capsys.readouterr().out
    assert "[x]: the 2 cells where typelattice:torch differs" in out
    assert "  u1 + i1 = i2@numpy" in out


def test_a_value_of_another_dtype_than_announced_is_marked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    torch = pytest.importorskip("torch")
    import numpy as np

    import typelattice.numpy as tnp
    from typelattice import _array
    from typelattice._backends import named

    add = tnp.add

    def widened(a: Any, b: Any) -> tl.Array:
        # An Array announcing int16 whose tensor is int32: the backend
        # would have computed in another dtype than the lattice's.
        out = add(a, b)
        if out.dtype != np.int16:
            return out
        value = torch.from_dlpack(out).to(torch.int32)
        key = out._promotion_key  # type: ignore[attr-defined]
        return _array.native_result(value, key, (), named("torch"), "cpu")

    monkeypatch.setattr(tnp, "add", widened)
    table = tl.measure_library("typelattice:torch", ["i1", "u1"])
    assert table.cell("i1", "u1") == "i2!i4"
    assert table.cell("i1", "i1") == "i1"


def test_scalar_sums_are_numpy_held_zero_d_arrays_on_every_backend() -> None:
    # Two Python scalars involve no backend: their sum is a 0-d NumPy-held
    # Array, which joins any backend as a scalar does; it is not marked.
    pytest.importorskip("dask")
    table = tl.measure_library("typelattice:dask", ["i*", "f*", "c*"])
    assert table.cells == (("i*", "f*", "c*"), ("f*", "f*", "c*"), ("c*", "c*", "c*"))


@pytest.mark.parametrize(
    ("library", "message"),
    [
        ("torch", "torch is not installed; install it with: "
                  "pip install 'typelattice[torch]'"),
        ("dask", "dask is not installed; install it with: "
                 "pip install 'typelattice[dask]'"),
        ("cupy", "cupy is not installed; install it with: "
                 "pip install 'typelattice[cupy]'"),
        ("typelattice:torch", "typelattice:torch needs torch, which is not "
                              "installed; install it with: "
                              "pip install 'typelattice[torch]'"),
        ("typelattice:dask", "typelattice:dask needs dask, which is not "
                             "installed; install it with: "
                             "pip install 'typelattice[dask]'"),
        ("typelattice:cupy", "typelattice:cupy needs cupy, which is not "
                             "installed; install it with: "
                             "pip install 'typelattice[cupy]'"),
    ],
)  # fmt: skip
def test_a_missing_backend_library_names_its_extra(
    library: str,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("torch", "dask", "cupy") else real(name, *a),
    )
    with pytest.raises(tl.LibraryNotInstalled) as info:
        tl.measure_library(library)
    assert str(info.value) == message
    assert main(["compare", "numpy", library]) == 2
    assert capsys.readouterr().err == f"typelattice: error: {message}\n"
    assert main(["table", "--diff", library]) == 2
    assert capsys.readouterr().err == f"typelattice: error: {message}\n"


def test_the_help_names_the_backends_and_their_extras(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv in (["compare", "--help"], ["table", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        out = " ".join(capsys.readouterr().out.split())
        assert "typelattice:torch, typelattice:dask, typelattice:cupy" in out
        assert "pip install 'typelattice[torch]', 'typelattice[dask]'," in out


def test_help_imports_neither_the_comparison_nor_a_backend_library() -> None:
    code = (
        "import sys\n"
        "from typelattice._cli import main\n"
        "try:\n"
        "    main(['compare', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('typelattice._compare', 'torch', 'dask', 'cupy')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.splitlines()[-1] == "[]"


@pytest.mark.gpu
def test_cupy_own_rules_and_typelattice_on_cupy() -> None:
    pytest.importorskip("cupy")
    c = tl.compare_libraries(["numpy", "cupy", "typelattice", "typelattice:cupy"])
    numpy, cupy, lattice, on_cupy = c.tables
    # CuPy follows NumPy's rules for the types it has (int32 + float32 is
    # float64); typelattice on CuPy is the lattice wherever CuPy has the
    # types, and '-' where it lacks them (bfloat16).
    assert cupy.cell("i4", "f4") == numpy.cell("i4", "f4") == "f8"
    assert on_cupy.cell("i4", "f4") == "f4"
    assert _compare.misplaced_cells(on_cupy) == ()
    for a in lattice.codes:
        for b in lattice.codes:
            if on_cupy.cell(a, b) != "-":
                assert on_cupy.cell(a, b) == lattice.cell(a, b), (a, b)


def test_cupy_without_a_device_is_one_error_not_a_table_of_dashes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A stand-in for CuPy installed on a machine without a CUDA device: its
    # first array fails with the library's own error.
    import types

    def zeros(*args: object, **kwargs: object) -> None:
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

    fake = types.ModuleType("cupy")
    fake.zeros = zeros  # type: ignore[attr-defined]
    fake.add = None  # type: ignore[attr-defined]
    fake.__version__ = "14.0.0"  # type: ignore[attr-defined]
    real = importlib.util.find_spec
    numpy_spec = real("numpy")
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: numpy_spec if name == "cupy" else real(name, *a),
    )
    monkeypatch.setitem(sys.modules, "cupy", fake)
    with pytest.raises(tl.LibraryNotInstalled) as info:
        tl.measure_library("cupy")
    assert str(info.value) == (
        "cupy is installed but cannot make arrays here, so cupy cannot be "
        "measured: RuntimeError: cudaErrorNoDevice: no CUDA-capable device "
        "is detected"
    )
    assert main(["compare", "numpy", "cupy"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("typelattice: error: cupy is installed but cannot make")
