from __future__ import annotations

import enum
import re

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
from support import WeakCarrier
from typelattice._dtypes import X64DtypeWarning


def rt(*args: object) -> tuple[np.dtype, bool]:
    return tl.result_type(*args, return_weak_type_flag=True)


# -- input forms ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        (1, ("int32", True)),
        (1.0, ("float32", True)),
        (1j, ("complex64", True)),
        (int, ("int32", True)),
        (float, ("float32", True)),
        (complex, ("complex64", True)),
        (True, ("bool", False)),
        (bool, ("bool", False)),
        (None, ("float32", False)),
        (np.int8(1), ("int8", False)),
        (np.float64(1), ("float32", False)),
        (np.zeros(2, "uint16"), ("uint16", False)),
        (np.zeros(2, "int64"), ("int32", False)),
        ("int8", ("int8", False)),
        ("bf", ("bfloat16", False)),
        (np.int16, ("int16", False)),
        (ml_dtypes.bfloat16, ("bfloat16", False)),
        (ml_dtypes.int4(1), ("int4", False)),
        (np.dtype(">i2"), ("int16", False)),
        (np.dtypes.Int8DType, ("int8", False)),
        (WeakCarrier("int16"), ("int32", True)),
        (WeakCarrier("int16", weak_type=False), ("int16", False)),
        (WeakCarrier("bool"), ("bool", False)),
    ],
    ids=repr,
)
def test_single_argument_forms_in_32_bit_mode(
    arg: object, expected: tuple[str, bool]
) -> None:
    dt, weak = rt(arg)
    assert (dt.name, weak) == expected


def test_python_scalars_and_their_types_are_64_bit_weak_in_x64() -> None:
    with tl.enable_x64():
        assert rt(1) == (np.dtype("int64"), True)
        assert rt(float) == (np.dtype("float64"), True)
        assert rt(1j) == (np.dtype("complex128"), True)
        assert rt(np.zeros(2, "int64")) == (np.dtype("int64"), False)


def test_weak_scalars_defer_to_the_array_width() -> None:
    x = np.zeros(3, "int8")
    assert tl.result_type(x, 2) == "int8"
    assert tl.result_type(2, x) == "int8"
    assert tl.result_type("bfloat16", 1.0) == "bfloat16"
    assert tl.result_type("float16", 1j) == "complex64"
    assert tl.result_type("uint8", 1.0) == "float32"  # weak float: default
    assert rt("int32", "float32") == (np.dtype("float32"), False)


def test_bool_is_strong_and_a_bool_result_is_never_weak() -> None:
    assert rt(True, 1) == (np.dtype("int32"), True)
    assert rt(True, "int8") == (np.dtype("int8"), False)
    assert rt(WeakCarrier("bool"), WeakCarrier("bool")) == (np.dtype("bool"), False)


def test_all_weak_inputs_join_their_strong_types() -> None:
    w16, wu8 = WeakCarrier("int16"), WeakCarrier("uint8")
    # The operation dtype keeps the narrow width ...
    assert tl.lattice_result_type(w16, w16) == (np.dtype("int16"), True)
    assert tl.lattice_result_type(WeakCarrier("int8"), wu8) == (np.dtype("int16"), True)
    assert tl.lattice_result_type(w16, 1) == (np.dtype("int32"), True)
    # ... and result_type reports the default dtype of the kind.
    assert rt(w16, w16) == (np.dtype("int32"), True)
    with tl.dtype_promotion("strict"):
        assert tl.lattice_result_type(w16, w16) == (np.dtype("int32"), True)


def test_weak_array_with_strong_input_acts_as_python_scalar() -> None:
    assert rt(WeakCarrier("float16"), "int8") == (np.dtype("float32"), True)
    assert rt(WeakCarrier("int16"), "uint8") == (np.dtype("uint8"), False)


def test_uint64_with_signed_int_is_weak_float() -> None:
    with tl.enable_x64():
        assert rt("uint64", "int8") == (np.dtype("float64"), True)


def test_n_ary_and_order_independence() -> None:
    args = [np.int8(1), "uint8", "float16"]
    assert tl.result_type(*args) == "float16"
    assert tl.result_type(*reversed(args)) == "float16"
    assert rt(int, float, complex) == (np.dtype("complex64"), True)
    assert tl.result_type("uint8", "int8", int) == "int16"


def test_python_scalar_subclass_is_strong() -> None:
    class Color(enum.IntEnum):
        RED = 1

    with tl.enable_x64():
        assert rt(Color.RED) == (np.dtype("int64"), False)
    assert rt(Color.RED, "int8") == (np.dtype("int32"), False)


# -- 32-bit mode and explicit 64-bit dtypes ----------------------------------------


def test_explicit_64_bit_dtype_warns_by_default_naming_the_fix() -> None:
    with pytest.warns(X64DtypeWarning, match="truncated to int32.*enable_x64"):
        assert tl.result_type("int64") == "int32"
    with pytest.warns(X64DtypeWarning):  # every call, not only the first
        assert tl.result_type("int64") == "int32"
    with pytest.warns(X64DtypeWarning, match="float64"):
        assert tl.result_type(np.float64, "float16") == "float32"


def test_explicit_64_bit_policy_error_and_allow() -> None:
    with (
        tl.explicit_x64_dtypes("error"),
        pytest.raises(ValueError, match="int64.*explicit_x64_dtypes='error'"),
    ):
        tl.result_type("int8", "int64")
    with tl.explicit_x64_dtypes("allow"):
        assert tl.result_type("int8", "int64") == "int64"
        assert tl.dtype("float64") == "float64"
    assert tl.dtype(np.zeros(1, "float64")) == "float32"  # values: no warning


def test_values_of_64_bit_type_are_narrowed_silently() -> None:
    assert tl.result_type(np.zeros(2, "uint64"), np.zeros(2, "int64")) == "int32"
    assert tl.result_type(np.float64(1), np.int32(1)) == "float32"


def test_library_arrays_keep_their_64_bit_type() -> None:
    x = WeakCarrier("int64", weak_type=False)
    assert tl.lattice_result_type(x, 1) == (np.dtype("int64"), False)


def test_weak_64_bit_arrays_are_narrowed_in_32_bit_mode() -> None:
    w = WeakCarrier("complex128")
    assert tl.lattice_result_type(w, w) == (np.dtype("complex64"), True)
    assert tl.lattice_result_type(True, w) == (np.dtype("complex64"), True)


def test_strict_mode_narrows_before_joining() -> None:
    with tl.dtype_promotion("strict"):
        i32, i64 = np.zeros(1, "int32"), np.zeros(1, "int64")
        assert tl.result_type(i32, i64) == "int32"
        with tl.enable_x64(), pytest.raises(tl.TypePromotionError):
            tl.result_type(i32, i64)


# -- promote_types and safe_to_cast ----------------------------------------------


def test_promote_types_does_not_canonicalize() -> None:
    assert tl.promote_types("int8", "uint8") == "int16"
    assert tl.promote_types(int, float) == "float64"
    assert tl.promote_types(bool, int) == "int64"
    assert tl.promote_types("uint32", "int32") == "int32"  # the 32-bit lattice
    assert tl.promote_types("uint32", "int64") == "int64"
    assert tl.promote_types(None, "int8") == "float64"
    with tl.enable_x64():
        assert tl.promote_types("uint32", "int32") == "int64"
        assert tl.promote_types("uint64", "int64") == "float64"


def test_promote_types_rejects_values() -> None:
    for value in (1, 1.0, np.zeros(2), [1]):
        with pytest.raises(TypeError, match="promote_types takes dtypes"):
            tl.promote_types(value, "int8")


def test_promote_types_cache_separates_python_types_from_dtypes() -> None:
    # np.dtype('float64') == float, but float is the weak node f*.
    assert tl.promote_types(np.dtype("float64"), "float16") == "float64"
    assert tl.promote_types(float, "float16") == "float16"
    assert tl.promote_types(np.dtype("float64"), "float16") == "float64"


def test_safe_to_cast() -> None:
    assert tl.safe_to_cast("int8", "int32")
    assert tl.safe_to_cast("float32", "float32")
    assert not tl.safe_to_cast("float32", "int32")
    assert not tl.safe_to_cast("int32", "uint32")
    assert tl.safe_to_cast(1, "uint8")
    assert tl.safe_to_cast(1.0, "bfloat16")
    assert not tl.safe_to_cast(1.0, "int8")
    with pytest.raises(tl.TypePromotionError):
        tl.safe_to_cast("float8_e4m3fn", "float32")


def test_is_weakly_typed() -> None:
    assert tl.is_weakly_typed(1) and tl.is_weakly_typed(2.5) and tl.is_weakly_typed(1j)
    assert not tl.is_weakly_typed(True)
    assert not tl.is_weakly_typed(np.float64(1))  # a float subclass, strong
    assert not tl.is_weakly_typed(np.zeros(2))
    assert tl.is_weakly_typed(WeakCarrier("int8"))
    assert not tl.is_weakly_typed(WeakCarrier("int8", weak_type=False))


# -- errors ------------------------------------------------------------------------


def test_no_argument() -> None:
    with pytest.raises(ValueError, match="at least one"):
        tl.result_type()


def test_strict_mode_message_names_inputs_and_both_fixes() -> None:
    with tl.dtype_promotion("strict"):
        with pytest.raises(tl.TypePromotionError) as info:
            tl.result_type("float32", "int32")
        assert tl.result_type("float32", 1) == "float32"  # weak scalars still work
    msg = str(info.value)
    assert "'float32', 'int32'" in msg
    assert "dtype_promotion=strict" in msg
    assert "explicitly casting" in msg and "dtype_promotion=standard" in msg


def test_strict_mode_bool_never_promotes() -> None:
    with tl.dtype_promotion("strict"), pytest.raises(tl.TypePromotionError) as info:
        tl.result_type(True, 1)
    assert "'bool', 'int (weak)'" in str(info.value)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("float8_e4m3fn", "float8_e5m2"), "8-bit floats"),
        (("float8_e4m3fn", "float32"), "8-bit floats"),
        (("float4_e2m1fn", "bfloat16"), "4-bit floats"),
        (("float6_e2m3fn", "float8_e5m2"), "8-bit and 6-bit floats"),
    ],
)
def test_small_float_message_suggests_astype_float32(
    args: tuple[str, str], words: str
) -> None:
    with pytest.raises(tl.TypePromotionError, match=re.escape(words)) as info:
        tl.result_type(*args)
    assert "x.astype('float32')" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_narrow_int_message_suggests_astype_int32() -> None:
    with pytest.raises(tl.TypePromotionError, match="4-bit integers") as info:
        tl.result_type("int4", "int8")
    assert "x.astype('int32')" in str(info.value)
    assert "'int4', 'int8'" in str(info.value)


def test_small_types_promote_with_weak_scalars_and_bool() -> None:
    assert tl.result_type("int4", 1) == "int4"
    assert tl.result_type("float8_e4m3fn", 1.0) == "float8_e4m3fn"
    assert tl.result_type("float8_e4m3fn", True) == "float8_e4m3fn"
    assert tl.result_type("float8_e4m3fn", "uint32") == "float8_e4m3fn"
    with pytest.raises(tl.TypePromotionError):
        tl.result_type("int4", 1.0)


@pytest.mark.parametrize(
    "bad",
    ["object", "str", "U5", np.dtype("O"), np.dtype([("a", "i4")]), "float128",
     "datetime64[s]", np.zeros(2, object), object(), [1, 2], (1.0,), "notatype",
     np.floating, ml_dtypes.complex32 if hasattr(ml_dtypes, "complex32") else "V8"],
    ids=repr,
)  # fmt: skip
def test_unsupported_inputs_raise_type_error_naming_the_value(bad: object) -> None:
    with pytest.raises(TypeError) as info:
        tl.result_type(bad, "int8")
    msg = str(info.value)
    assert (repr(bad) in msg) or (str(bad) in msg)
    assert not isinstance(info.value, KeyError)


def test_unknown_string_lists_what_is_accepted() -> None:
    with pytest.raises(TypeError, match="unknown dtype 'int9'.*'bfloat16'.*u1"):
        tl.result_type("int9")


def test_cache_does_not_confuse_classes_and_instances() -> None:
    """A class and its instances share a cache key only when they promote
    alike; the rest must still fail the same way on every call."""
    for _ in range(2):
        assert rt(np.int8, 1) == rt(np.int8(3), 1)
        assert rt(int, "int8") == rt(5, "int8")
        with pytest.raises(TypeError):
            tl.result_type(type(None))
        with pytest.raises(TypeError):
            tl.result_type(np.ndarray, 1)
        assert rt(None, "int8") == (np.dtype("float32"), False)


@pytest.mark.parametrize("policy", ["allow", "error", "warn"])
def test_64_bit_arrays_and_dtypes_do_not_share_answers_in_32_bit_mode(
    policy: str,
) -> None:
    """An array of a 64-bit type is narrowed; the dtype itself follows
    explicit_x64_dtypes, whatever was asked before (they share a cache key)."""
    explicit = {"allow": np.dtype("float64"), "warn": np.dtype("float32")}
    with tl.explicit_x64_dtypes(policy):
        for _ in range(2):
            assert tl.result_type(np.zeros(2)) == np.float32
            assert tl.result_type(np.float64(2)) == np.float32
            for form in (np.dtype("float64"), np.float64):
                if policy == "error":
                    with pytest.raises(ValueError, match="float64"):
                        tl.result_type(form)
                elif policy == "warn":
                    with pytest.warns(tl.X64DtypeWarning):
                        assert tl.result_type(form) == explicit[policy]
                else:
                    assert tl.result_type(form) == explicit[policy]


# -- registered lattices -----------------------------------------------------------

TINY_EDGES = {"i*": ["i1", "f*"], "i1": ["f4"], "f*": ["f4"]}


def promotes_on_tiny(name: str) -> bool:
    """Whether dtype_promotion(name) promotes as the lattice TINY_EDGES."""
    with tl.dtype_promotion(name):
        if tl.result_type("int8", 1.0) != np.dtype("float32"):
            return False
        with pytest.raises(tl.TypePromotionError):
            tl.result_type("int8", "int16")  # int16 is no node of it
    return True


@pytest.mark.parametrize(
    ("name", "error", "match", "fix"),
    [
        (5, TypeError, r"the name must be a str, got 5 \(int\)", "mine"),
        (None, TypeError, "the name must be a str, got None", "mine"),
        ("", ValueError, r"register_lattice\(''\): the name must be non-empty", "mine"),
        (" tiny ", ValueError, "without spaces around it", "tiny"),
        ("standard", ValueError, "'standard' is a built-in mode", "standard_custom"),
        ("strict", ValueError, "'strict' is a built-in mode", "strict_custom"),
    ],
)
def test_register_lattice_refuses_unusable_names_and_the_fix_works(
    name: object, error: type[Exception], match: str, fix: str
) -> None:
    lattice = tl.Lattice(TINY_EDGES)
    with pytest.raises(error, match=match) as info:
        tl.register_lattice(name, lattice)  # type: ignore[arg-type]
    assert f"register_lattice({fix!r}, lattice)" in str(info.value)
    tl.register_lattice(fix, lattice)
    assert promotes_on_tiny(fix)
    assert tl.result_type("int8", "uint8") == np.dtype("int16")  # built-ins stay


@pytest.mark.parametrize(
    "not_a_lattice",
    [TINY_EDGES, None, [("i1", "f4")], "standard"],
    ids=["dict", "None", "list", "str"],
)
def test_register_lattice_needs_a_lattice(not_a_lattice: object) -> None:
    with pytest.raises(TypeError) as info:
        tl.register_lattice("reg_not_a_lattice", not_a_lattice)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith("register_lattice('reg_not_a_lattice'): the lattice ")
    assert repr(not_a_lattice)[:40] in message
    assert "typelattice.Lattice(edges)" in message
    assert "Lattice.from_file(path)" in message
    with pytest.raises(ValueError, match="reg_not_a_lattice"):
        tl.dtype_promotion("reg_not_a_lattice")  # nothing was registered


def test_register_lattice_a_dict_of_edges_works_once_wrapped() -> None:
    tl.register_lattice("reg_wrapped", tl.Lattice(TINY_EDGES))
    assert promotes_on_tiny("reg_wrapped")


@pytest.mark.parametrize(
    ("edges", "match"),
    [
        ({"zz": ["f4"]}, r"node 'zz' is not a type code; the codes are b1, u1,.* c\*"),
        ({1: [2]}, r"node 1 \(int\) is not a type; .*type codes"),
        ({np.str_: ["f4"]}, "node <class 'numpy.str_'>: .*only bool and numeric"),
    ],
    ids=["unknown code", "values", "unsupported type"],
)
def test_register_lattice_refuses_nodes_that_are_not_types(
    edges: dict[object, list[object]], match: str
) -> None:
    with pytest.raises(TypeError, match=match):
        tl.register_lattice("reg_bad_node", tl.Lattice(edges))
    with pytest.raises(ValueError, match="reg_bad_node"):
        tl.dtype_promotion("reg_bad_node")


def test_register_lattice_a_dtype_name_as_node_gets_its_code() -> None:
    edges = {"i*": ["int8", "f*"], "int8": ["f4"], "f*": ["f4"]}
    with pytest.raises(TypeError, match="node 'int8' is not a type code; write 'i1'"):
        tl.register_lattice("reg_names", tl.Lattice(edges))
    tl.register_lattice("reg_names", tl.Lattice(TINY_EDGES))  # the fix
    assert promotes_on_tiny("reg_names")


def test_register_lattice_refuses_two_nodes_for_one_type() -> None:
    edges = {"i1": ["f4"], np.dtype("int8"): ["f2"]}
    with pytest.raises(
        ValueError,
        match=r"the nodes 'i1' and dtype\('int8'\) both stand for int8 \(code 'i1'\)",
    ):
        tl.register_lattice("reg_twice_int8", tl.Lattice(edges))


def test_a_name_is_registered_once() -> None:
    tl.register_lattice("reg_once", tl.Lattice(TINY_EDGES))
    # The same lattice again, even spelled with dtypes, changes nothing.
    same = {int: [np.int8, float], np.int8: [np.float32], float: [np.float32]}
    tl.register_lattice("reg_once", tl.Lattice(same))
    assert promotes_on_tiny("reg_once")

    other = tl.Lattice({"i*": ["i1", "f*"], "i1": ["f8"], "f*": ["f8"]})
    with pytest.raises(ValueError) as info:
        tl.register_lattice("reg_once", other)
    assert "'reg_once' is registered already, with another lattice" in str(info.value)
    assert promotes_on_tiny("reg_once")  # the first lattice is still in force
    assert "register_lattice('reg_once_2', lattice)" in str(info.value)
    tl.register_lattice("reg_once_2", other)
    with tl.dtype_promotion("reg_once_2"):
        assert tl.result_type("int8", 1.0) == np.dtype("float64")
