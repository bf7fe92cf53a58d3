from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
from support import STRONG
from typelattice import _dtypes


def test_universe_has_every_installed_ml_dtypes_type() -> None:
    names = {d.name for d in STRONG}
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "int4", "uint4"):
        assert name in names
    for name in ("float8_e3m4", "float6_e2m3fn", "float4_e2m1fn", "int1", "uint2"):
        assert (name in names) == hasattr(ml_dtypes, name)
    assert len(set(STRONG)) == len(STRONG)


@pytest.mark.parametrize("dt", STRONG, ids=str)
def test_codes_round_trip(dt: np.dtype) -> None:
    code = tl.dtype_code(dt)
    assert tl.code_to_dtype(code) == dt
    assert tl.dtype(code, canonicalize=False) == dt


def test_codes_of_seed_and_extended_types() -> None:
    assert [tl.dtype_code(n) for n in ("bool", "uint8", "int64", "complex128")] == [
        "b1", "u1", "i8", "c16"
    ]  # fmt: skip
    assert tl.dtype_code("bfloat16") == "bf"
    assert tl.dtype_code("float8_e4m3fn") == "f8e4m3fn"
    assert tl.dtype_code("int4") == "i4b" and tl.dtype_code("uint2") == "u2b"
    assert tl.dtype_code(int) == "i*" and tl.dtype_code(complex) == "c*"
    assert tl.dtype_code("uint8", weak=True) == "i*"
    assert tl.dtype_code("bfloat16", weak=True) == "f*"
    assert tl.dtype_code("bool", weak=True) == "b1"
    assert tl.code_to_dtype("i*") is int
    with pytest.raises(TypeError, match="unknown dtype code 'x9'.*b1.*c\\*"):
        tl.code_to_dtype("x9")


def test_dtype_accepts_every_dtype_like() -> None:
    assert tl.dtype(np.float32) == "float32"
    assert tl.dtype(np.zeros(2, "uint8")) == "uint8"
    assert tl.dtype(ml_dtypes.bfloat16(1)) == "bfloat16"
    assert tl.dtype(True) == "bool"
    assert tl.dtype(7) == "int32"
    assert tl.dtype(7, canonicalize=False) == "int64"
    assert tl.dtype(np.dtype(">f4")) == "float32"
    with tl.enable_x64():
        assert tl.dtype(float) == "float64"
    with pytest.raises(TypeError, match="None"):
        tl.dtype(None)


def test_canonicalize_dtype() -> None:
    pairs = {
        "int64": "int32",
        "uint64": "uint32",
        "float64": "float32",
        "complex128": "complex64",
        "int8": "int8",
        "bfloat16": "bfloat16",
    }
    for wide, narrow in pairs.items():
        assert tl.canonicalize_dtype(wide) == narrow
        with tl.enable_x64():
            assert tl.canonicalize_dtype(wide) == wide
    assert tl.canonicalize_dtype(int) == "int32"


@pytest.mark.parametrize(
    ("dt", "abstract", "expected"),
    [
        ("bfloat16", np.floating, True),
        ("float8_e4m3fn", np.inexact, True),
        ("float8_e5m2", np.integer, False),
        ("int4", np.signedinteger, True),
        ("int4", np.unsignedinteger, False),
        ("uint4", np.unsignedinteger, True),
        ("bool", np.number, False),
        ("bool", np.generic, True),
        ("complex64", np.complexfloating, True),
        ("int8", np.floating, False),
        ("bfloat16", "bfloat16", True),
        ("float16", "bfloat16", False),
        ("float32", float, False),  # float means float64, as in NumPy
    ],
)
def test_issubdtype_classifies_ml_dtypes_correctly(
    dt: str, abstract: object, expected: bool
) -> None:
    assert tl.issubdtype(dt, abstract) is expected


def test_isdtype_kinds_match_the_category_table() -> None:
    for kind, members in tl.CATEGORIES.items():
        for dt in STRONG:
            assert tl.isdtype(dt, kind) == (dt in members), (dt, kind)
    assert tl.isdtype("int8", ("bool", "signed integer"))
    assert tl.isdtype("int8", np.dtype("int8"))
    assert not tl.isdtype("int8", "float32")
    with pytest.raises(ValueError, match="unknown dtype kind 'real float'"):
        tl.isdtype("int8", "real float")


def test_categories_partition_the_universe() -> None:
    cats = ["bool", "signed integer", "unsigned integer", "real floating",
            "complex floating"]  # fmt: skip
    for dt in STRONG:
        assert sum(dt in tl.CATEGORIES[c] for c in cats) == 1, dt


@pytest.mark.parametrize("dt", STRONG, ids=str)
def test_finfo_and_iinfo_for_every_type(dt: np.dtype) -> None:
    if tl.isdtype(dt, ("real floating", "complex floating")):
        info = tl.finfo(dt)
        assert info.bits in (4, 6, 8, 16, 32, 64)
        assert float(info.eps) > 0
        with pytest.raises(TypeError, match="iinfo needs an integer dtype"):
            tl.iinfo(dt)
    elif tl.isdtype(dt, "integral"):
        info = tl.iinfo(dt)
        assert info.min < info.max
        with pytest.raises(TypeError, match="finfo needs a floating"):
            tl.finfo(dt)
    else:
        with pytest.raises(TypeError):
            tl.finfo(dt)


def test_limits_of_extended_types() -> None:
    assert float(tl.finfo("float8_e4m3fn").max) == 448.0
    assert tl.finfo("bfloat16").bits == 16
    assert (tl.iinfo("int4").min, tl.iinfo("int4").max) == (-8, 7)
    assert tl.iinfo("uint2").max == 3
    assert tl.finfo("complex64").bits == 32  # the real part, as NumPy


def test_kind_of_extended_types() -> None:
    assert _dtypes.kind_of(np.dtype("bfloat16")) == "f"
    assert _dtypes.kind_of(np.dtype(ml_dtypes.int4)) == "i"
    assert _dtypes.kind_of(np.dtype(ml_dtypes.uint4)) == "u"
