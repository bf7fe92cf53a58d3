"""Conversions inside the kernel (``Backend.promoting``) on the backends over
NumPy-compatible libraries (``typelattice._backends._xp``, run here on NumPy
itself and on a namespace that records its calls) and on Dask: the same
bytes as converting each operand with ``convert_element_type`` and then
computing the primitive, over every pair of dtypes with edge values."""

from __future__ import annotations

import functools
import itertools
import pickle
import types
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice._backends import NUMPY, Backend, _xp, use
from typelattice._lax._elementwise import convert_element_type_p
from typelattice._lax._primitive import PRIMITIVES
from typelattice._tracing.primitive import Primitive

DTYPES = [
    np.dtype(d)
    for d in (
        "bool",
        "int8",
        "uint8",
        "int16",
        "int32",
        "uint32",
        "int64",
        "float16",
        ml_dtypes.bfloat16,
        "float32",
        "float64",
        "complex64",
    )
]

#: The primitives of two operands without parameters that the namespace
#: binds after converting its operands (the comparisons included).
BINARY = [
    PRIMITIVES[n]
    for n in """add sub mul div rem max min atan2 nextafter and or xor eq ne lt
    le gt ge shift_left shift_right_logical shift_right_arithmetic pow""".split()
]

#: Where the implementation does more than the bare ufunc (integer division
#: and remainder, shifts past the width, complex atan2, bit stepping, pow):
#: never computed by a ufunc with the conversions inside.
NEVER = {"rem", "atan2", "nextafter", "shift_left", "pow"}
NEVER |= {"shift_right_logical", "shift_right_arithmetic"}


def _edges(dt: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """Values of ``dt`` where conversions round, overflow or keep signs."""
    if dt.kind == "b":
        return np.array([True, False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        big = [16777217, 2**31 - 1, 2**53 + 1, 2**63 - 1, -(2**31), -16777217]
        values = [0, 1, 7, int(info.max), int(info.min), int(info.max) - 1, -1, -3]
        values += big
        return np.array([v for v in values if info.min <= v <= info.max], dt)
    special = [0.0, -0.0, 1.5, -2.5, np.nan, np.inf, -np.inf, 65504.0, 3e38, 1e-40]
    reals = np.array(special, np.float64)
    with np.errstate(all="ignore"):
        if dt.kind == "c":
            out = np.empty(len(reals), dt)
            out.real, out.imag = reals, np.roll(reals, 3)
            return out
        return reals.astype(dt)


def _commons(a: np.dtype[Any], b: np.dtype[Any]) -> list[np.dtype[Any]]:
    """The lattice's join of ``a`` and ``b``, and its joins with the float
    and complex types (a true division converts integers to floats)."""
    join = np.dtype(tl.promote_types(a, b))
    out = [join]
    for t in ("float16", "float32", "complex64"):
        c = np.dtype(tl.promote_types(join, t))
        if c not in out:
            out.append(c)
    return out


def _converted_then_computed(
    backend: Backend, prim: Primitive, x: Any, y: Any, common: np.dtype[Any]
) -> Any:
    convert = NUMPY.impl(convert_element_type_p)
    xs = convert(x, new_dtype=common) if x.dtype != common else x
    ys = convert(y, new_dtype=common) if y.dtype != common else y
    return backend.impl(prim)(xs, ys)


def _grid(backend: _xp.XpBackend) -> dict[str, int]:
    """Every primitive, pair of dtypes and common dtype: the in-kernel
    function (where there is one) gives convert-then-compute's bytes.
    Returns how many cases each primitive computed in the kernel."""
    fused: dict[str, int] = {p.name: 0 for p in BINARY}
    for a, b in itertools.product(DTYPES, DTYPES):
        # (a column against a row: one rank, broadcast, every pair of values)
        x, y = _edges(a)[:, None], _edges(b)[None, :]
        for common in _commons(a, b):
            dtypes = [None if a == common else a, None if b == common else b]
            for prim in BINARY:
                fn = backend.promoting(prim, dtypes, common)
                if fn is None:
                    continue
                with np.errstate(all="ignore"):
                    got = fn(x, y)
                    want = _converted_then_computed(backend, prim, x, y, common)
                case = f"{prim.name}({a}, {b}) in {common}"
                assert type(got) is np.ndarray, case
                assert (got.dtype, got.shape) == (want.dtype, want.shape), case
                assert got.tobytes() == want.tobytes(), case
                fused[prim.name] += 1
    return fused


def test_numpy_in_kernel_equals_convert_then_compute() -> None:
    backend = _xp.register(_xp.XpBackend("xp-numpy", np), np)
    fused = _grid(backend)
    for name, count in fused.items():
        if name in NEVER:
            assert count == 0, name
        else:
            assert count > 0, name


def test_the_library_path_reads_the_loop_by_dtype_and_skips_the_rest() -> None:
    # A library other than NumPy (CuPy) is told the loop by dtype=, which
    # picks it by its result: no comparisons, and only the dtypes it converts
    # to as NumPy does (no float16).
    calls: list[tuple[str, str]] = []

    def recording(name: str) -> Any:
        def ufunc(x: Any, y: Any, **kw: Any) -> Any:
            calls.append((name, str(kw.get("dtype"))))
            return getattr(np, name)(x, y, **kw)

        ufunc.__name__ = name
        return ufunc

    lib = types.ModuleType("library")
    names = "add subtract multiply divide maximum minimum bitwise_and bitwise_or"
    for name in (*names.split(), "bitwise_xor", "equal", "less"):
        setattr(lib, name, recording(name))
    backend = _xp.register(
        _xp.XpBackend("library", lib, converts_to=_xp.EXACT_IN_KERNEL), lib
    )
    add, eq, div = PRIMITIVES["add"], PRIMITIVES["eq"], PRIMITIVES["div"]
    i32, f16, f32 = np.dtype("int32"), np.dtype("float16"), np.dtype("float32")
    fn = backend.promoting(add, [i32, None], f32)
    assert fn is not None
    x, y = np.int32([16777217, -3, 2**31 - 1]), np.float32([0.0, -0.0, 0.5])
    got = fn(x, y)
    assert calls == [("add", "float32")]
    assert got.tobytes() == (x.astype(f32) + y).tobytes()
    assert backend.promoting(eq, [i32, None], f32) is None
    assert backend.promoting(add, [np.dtype("int8"), None], f16) is None
    # (On the library, div is computed on the host: not in a device kernel.)
    assert backend.promoting(div, [i32, None], f32) is None
    assert _grid(backend)["add"] > 0


def test_no_kernel_where_the_implementation_was_replaced() -> None:
    backend = _xp.register(_xp.XpBackend("xp-numpy", np), np)
    add = PRIMITIVES["add"]
    i32, f32 = np.dtype("int32"), np.dtype("float32")
    fn = backend.promoting(add, [i32, None], f32)
    assert fn is not None
    x, y = np.int32([3, 16777217]), np.float32([0.5, 0.0])
    backend.def_impl(add, lambda x, y: np.subtract(x, y))
    assert backend.promoting(add, [i32, None], f32) is None
    # (a function given before computes with the replacement from then on)
    assert fn(x, y).tobytes() == np.float32([2.5, 16777216.0]).tobytes()


def test_none_for_types_without_loops_or_plain_backends() -> None:
    backend = _xp.register(_xp.XpBackend("xp-numpy", np), np)
    add = PRIMITIVES["add"]
    bf16 = np.dtype(ml_dtypes.bfloat16)
    assert backend.promoting(add, [np.dtype("int8"), None], bf16) is None
    # (a backend made without XpBackend keeps the base class's None)
    plain = _xp.register(Backend("plain"), np)
    assert plain.promoting(add, [np.dtype("int32"), None], np.dtype("float32")) is None


def test_under_use_the_namespace_gives_the_kernels_values() -> None:
    backend = _xp.register(_xp.XpBackend("xp-numpy", np), np)
    xs = np.int32([16777217, -16777219, 3, 0])
    ys = np.float32([0.0, -0.0, np.nan, -np.inf])
    fn = backend.promoting(PRIMITIVES["add"], [np.dtype("int32"), None], ys.dtype)
    assert fn is not None
    with use(backend):
        got = tnp.add(tnp.asarray(xs), tnp.asarray(ys))
    assert got.dtype == np.float32
    assert np.asarray(got).tobytes() == fn(xs, ys).tobytes()


# -- Dask ---------------------------------------------------------------------


def _dask() -> Any:
    return pytest.importorskip("typelattice._backends.dask")


def _layers(x: Any) -> list[str]:
    """The kinds of the layers of native Dask Array ``x``'s graph."""
    return sorted(name.rsplit("-", 1)[0] for name in x._value.__dask_graph__().layers)


def test_dask_int32_plus_float32_is_one_map_blocks_without_a_conversion() -> None:
    da = pytest.importorskip("dask.array")
    xs = np.array([16777217, -16777219, 3, 0, 7, 2**31 - 1], np.int32)
    ys = np.array([0.0, -0.0, np.nan, -np.inf, 0.5, 1.0], np.float32)
    i = tnp.asarray(da.from_array(xs, chunks=4))
    f = tnp.asarray(da.from_array(ys, chunks=3))  # (chunks unified)
    fused = i + f
    separate = i.astype("float32") + f
    assert (fused.dtype, fused.weak_type, fused.backend) == (
        np.dtype("float32"),
        False,
        "dask",
    )
    assert "typelattice_add_in_float32" in _layers(fused)
    assert "typelattice_convert_element_type" not in _layers(fused)
    assert len(_layers(fused)) == len(_layers(separate)) - 1
    want = np.asarray(tnp.asarray(xs) + ys)
    assert np.asarray(fused).tobytes() == want.tobytes()
    assert np.asarray(separate).tobytes() == want.tobytes()


def test_dask_in_kernel_equals_convert_then_compute_over_blocks() -> None:
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    tdask = _dask()
    backend = tdask.BACKEND
    convert = backend.impl(convert_element_type_p)
    # (The values are NumPy's in-kernel function's, compared over every pair
    # above: here the blocks' plumbing, on a few pairs and primitives.)
    names = ("bool", "uint32", "float16", "bfloat16", "float32")
    picked = [np.dtype(ml_dtypes.bfloat16 if n == "bfloat16" else n) for n in names]
    prims = [PRIMITIVES[n] for n in ("add", "div", "max", "lt", "ne", "or")]
    cases: list[str] = []
    graphs: list[Any] = []
    for a, b in itertools.product(picked, picked):
        # (a column of 2 blocks against a row of 3: broadcast, unified)
        x = da.from_array(_edges(a)[:, None], chunks=(4, 1))
        y = da.from_array(_edges(b)[None, :], chunks=(1, 3))
        for common in _commons(a, b):
            dtypes = [None if a == common else a, None if b == common else b]
            xs = x if a == common else convert(x, new_dtype=common)
            ys = y if b == common else convert(y, new_dtype=common)
            for prim in prims:
                fn = backend.promoting(prim, dtypes, common)
                if fn is not None:
                    cases.append(f"{prim.name}({a}, {b}) in {common}")
                    graphs += [fn(x, y), backend.impl(prim)(xs, ys)]
    assert len(cases) > 50
    computed = dask.compute(*graphs, scheduler="synchronous")
    for case, got, want in zip(cases, computed[::2], computed[1::2], strict=True):
        assert (got.dtype, got.shape) == (want.dtype, want.shape), case
        assert got.tobytes() == want.tobytes(), case


def test_dask_in_kernel_tasks_hash_and_pickle_by_name() -> None:
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    tdask = _dask()
    add = PRIMITIVES["add"]
    i32, f32 = np.dtype("int32"), np.dtype("float32")
    fn = tdask.BACKEND.promoting(add, [i32, None], f32)
    assert fn is not None
    x = da.arange(10, dtype=np.int32, chunks=5)
    y = da.ones(10, dtype=np.float32, chunks=5)
    first, second = fn(x, y), fn(x, y)
    assert first.name == second.name  # (the same graph: the same keys)
    assert dask.base.tokenize(first) == dask.base.tokenize(second)
    # (pickled as for workers in other processes: rebuilt by name)
    out = pickle.loads(pickle.dumps(first, protocol=pickle.HIGHEST_PROTOCOL))
    assert out.compute().tobytes() == (np.arange(10) + 1).astype(f32).tobytes()


def test_dask_has_no_kernel_where_an_implementation_was_replaced() -> None:
    da = pytest.importorskip("dask.array")
    tdask = _dask()
    backend = tdask.BACKEND
    add = PRIMITIVES["add"]
    i32, f32 = np.dtype("int32"), np.dtype("float32")
    assert backend.promoting(add, [i32, None], f32) is not None
    assert backend.promoting(PRIMITIVES["rem"], [i32, None], f32) is None
    fn = backend.promoting(add, [i32, None], f32)
    assert fn is not None
    x = da.arange(4, dtype=np.int32, chunks=2)
    y = da.ones(4, dtype=np.float32, chunks=2)
    for prim in (add, convert_element_type_p):
        old = backend.impl(prim)
        backend.def_impl(prim, functools.partial(old))  # (the same, but another)
        try:
            assert backend.promoting(add, [i32, None], f32) is None
            # (a function given before converts separately from then on)
            layers = [k.rsplit("-", 1)[0] for k in fn(x, y).__dask_graph__().layers]
            assert "typelattice_convert_element_type" in layers
        finally:
            backend.def_impl(prim, old)
    assert backend.promoting(add, [i32, None], f32) is not None
    layers = [k.rsplit("-", 1)[0] for k in fn(x, y).__dask_graph__().layers]
    assert "typelattice_add_in_float32" in layers


@pytest.mark.parametrize(
    "x_dt, y_dt",
    [
        ("int32", "float32"),
        ("uint8", "float16"),
        ("bool", "int8"),
        ("float32", "complex64"),
    ],
)
def test_dask_native_arrays_agree_eager_jit_vmap_and_numpy(
    x_dt: str, y_dt: str
) -> None:
    da = pytest.importorskip("dask.array")
    xs = np.resize(_edges(np.dtype(x_dt)), 6)
    ys = np.resize(_edges(np.dtype(y_dt)), 6)
    i = tnp.asarray(da.from_array(xs, chunks=4))
    f = tnp.asarray(da.from_array(ys, chunks=3))
    for fn in (tnp.add, tnp.multiply, tnp.maximum, tnp.not_equal):
        with np.errstate(all="ignore"):
            want = np.asarray(fn(tnp.asarray(xs), tnp.asarray(ys)))
            paths = {
                "eager": fn(i, f),
                "jit": tl.jit(fn)(i, f),
                "vmap": tl.vmap(fn)(i, f),
            }
        for path, got in paths.items():
            case = f"{fn.__name__}({x_dt}, {y_dt}) {path}"
            assert got.backend == "dask", case
            value = np.asarray(got)
            assert value.dtype == want.dtype, case
            assert value.tobytes() == want.tobytes(), case
