"""jit on torch-held Arrays: an unchecked conversion read once by a binary
primitive runs inside that primitive's torch kernel (no separate converted
copy), and the answers are the eager call's and the unfused program's bit
for bit, with values that round on the way (16777217 as float32). A value
converted once and read twice, or returned, is converted on its own.
Skipped where torch is not installed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import support  # noqa: E402
import typelattice as tl  # noqa: E402
import typelattice.numpy as tnp  # noqa: E402
from typelattice import _core  # noqa: E402
from typelattice._backends import torch as tb  # noqa: E402
from typelattice._backends.torch import BACKEND  # noqa: E402
from typelattice._lax._elementwise import Check  # noqa: E402
from typelattice._lax._primitive import PRIMITIVES  # noqa: E402
from typelattice._tracing import jit as jit_module  # noqa: E402
from typelattice._tracing import primitive  # noqa: E402

CONVERT = PRIMITIVES["convert_element_type"]

# Values of each source dtype that round, saturate the type's range or
# change sign on the way to float32 (2**24 + 1 is the first int32 that
# float32 cannot hold).
SOURCES: dict[str, list[Any]] = {
    "int8": [-128, -1, 0, 1, 127, 5, -77, 64],
    "uint8": [0, 1, 255, 128, 7, 200, 13, 99],
    "int32": [16777217, -16777219, 2147483647, 0, 3, -7, 33554435, -2147483648],
    "int64": [2**53 + 1, 2**62 + 3, -(2**40) - 1, 0, 7, 16777217, -5, 2**31],
    "bool": [True, False, True, True, False, False, True, False],
    "float16": [65504.0, 0.1, -2.5, 1e-7, 0.0, -0.0, 3.140625, 2049.0],
    "bfloat16": [3.3895e38, 0.1, -2.5, 1e-30, 0.0, 1.0078125, -7.0, 257.0],
}
TARGETS: dict[str, list[float]] = {
    "float32": [0.5, -1.0, 3.25, 1e30, 16777216.0, float("nan"), -0.0, 2.0],
    "float64": [0.5, -1.0, 3.25, 1e300, 2.0**53, float("nan"), -0.0, 1e-310],
}
OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": tnp.add,
    "sub": tnp.subtract,
    "mul": tnp.multiply,
    "div": tnp.divide,
    "max": tnp.maximum,
    "min": tnp.minimum,
    "eq": tnp.equal,
    "ne": tnp.not_equal,
    "lt": tnp.less,
    "le": tnp.less_equal,
    "gt": tnp.greater,
    "ge": tnp.greater_equal,
}


@pytest.fixture(autouse=True)
def _checked() -> Iterator[None]:
    """Every eager native result checked against its abstract evaluation;
    64-bit types (int64 and float64 operands) in force."""
    primitive.CHECK_NATIVE.append(True)
    with tl.enable_x64():
        yield
    primitive.CHECK_NATIVE.remove(True)


def native(values: Any, dtype: str) -> Any:
    """An Array holding a torch tensor of ``values`` in ``dtype``."""
    dt = np.dtype(getattr(ml_dtypes, dtype, None) or dtype)
    return tnp.asarray(BACKEND.from_numpy(np.array(values).astype(dt)))


def counting_conversions() -> contextlib.AbstractContextManager[list[int]]:
    """The number of calls of the torch backend's conversion, counted while
    the scope is open (programs generated inside it call the counter)."""
    return support.counting_conversions(tb)


@contextlib.contextmanager
def unfused() -> Iterator[None]:
    """Programs generated inside the scope convert on their own."""
    jit_module.FUSE_CONVERSIONS[:] = [False]
    try:
        yield
    finally:
        jit_module.FUSE_CONVERSIONS[:] = [True]


def bits(result: Any) -> tuple[str, tuple[int, ...], bytes]:
    """A result's dtype, shape and bytes: equal only when bit-identical."""
    assert result.backend == "torch"
    array = np.asarray(result)
    return array.dtype.name, array.shape, array.tobytes()


def three_ways(f: Callable[..., Any], *args: Any) -> tuple[Any, Any, Any, int, int]:
    """``f`` eagerly, jitted and jitted unfused, and the conversions the two
    programs call (each a fresh jit, traced inside the counting scope)."""
    eager = f(*args)
    with counting_conversions() as fused_calls:
        jitted = tl.jit(f)(*args)
    with unfused(), counting_conversions() as plain_calls:
        plain = tl.jit(f)(*args)
    return eager, jitted, plain, fused_calls[0], plain_calls[0]


def expected_fused(name: str, src: str, target: str) -> bool:
    """Whether the backend offers a promoting function for the operands."""
    dt = np.dtype(getattr(ml_dtypes, src, None) or src)
    return BACKEND.promoting(PRIMITIVES[name], [dt, None], np.dtype(target)) is not None


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("src", list(SOURCES))
def test_fused_equals_eager_and_unfused(name: str, src: str, target: str) -> None:
    x = native(SOURCES[src], src)
    y = native(TARGETS[target], target)
    op = OPS[name]
    for args in ((x, y), (y, x)):
        eager, jitted, plain, fused_calls, plain_calls = three_ways(op, *args)
        assert bits(jitted) == bits(eager) == bits(plain)
        # The unfused program converts; the fused one exactly where torch's
        # promotion computes the lattice's dtype.
        assert plain_calls == 1
        assert fused_calls == (0 if expected_fused(name, src, target) else 1)


def test_int32_to_float32_rounds_inside_the_kernel() -> None:
    x = native([16777217, 16777219, -16777217], "int32")
    y = native([0.0, 0.0, 0.0], "float32")
    eager, jitted, plain, fused_calls, plain_calls = three_ways(tnp.add, x, y)
    assert np.asarray(jitted).tolist() == [16777216.0, 16777220.0, -16777216.0]
    assert bits(jitted) == bits(eager) == bits(plain)
    assert (fused_calls, plain_calls) == (0, 1)
    # Compared in float32, as the lattice says: 16777217 == 16777216.0.
    same = native([16777216.0, 16777216.0, 0.0], "float32")
    eager, jitted, plain, fused_calls, _ = three_ways(tnp.equal, x, same)
    assert np.asarray(jitted).tolist() == [True, False, False]
    assert bits(jitted) == bits(eager) == bits(plain)
    assert fused_calls == 0


def test_a_converted_value_read_twice_is_converted_once() -> None:
    x = native(SOURCES["int32"], "int32")
    y = native(TARGETS["float32"], "float32")

    def f(a: Any, b: Any) -> Any:
        return (a + b) * (a - b)  # (one conversion of a, shared)

    eager, jitted, plain, fused_calls, plain_calls = three_ways(f, x, y)
    assert bits(jitted) == bits(eager) == bits(plain)
    assert fused_calls == plain_calls == 1

    def g(a: Any, b: Any) -> Any:
        c = a.astype("float32")
        return c * b + c

    eager, jitted, plain, fused_calls, plain_calls = three_ways(g, x, y)
    assert bits(jitted) == bits(eager) == bits(plain)
    assert fused_calls == plain_calls == 1


def test_a_converted_value_returned_is_converted_on_its_own() -> None:
    x = native(SOURCES["int32"], "int32")
    y = native(TARGETS["float32"], "float32")

    def f(a: Any, b: Any) -> Any:
        c = a.astype("float32")
        return c, c + b

    eager, jitted, plain, fused_calls, plain_calls = three_ways(f, x, y)
    for e, j, p in zip(eager, jitted, plain, strict=True):
        assert bits(j) == bits(e) == bits(p)
    assert fused_calls == plain_calls == 1


def test_operands_of_two_ranks_are_not_fused() -> None:
    # torch computes a float16 array with a 0-d float32 tensor in float16;
    # the lattice says float32: the conversion stays separate.
    x = native([65504.0, 0.1, -2.5], "float16")
    s = native(70000.0, "float32")
    eager, jitted, plain, fused_calls, plain_calls = three_ways(tnp.add, x, s)
    assert jitted.dtype == np.dtype("float32")
    assert bits(jitted) == bits(eager) == bits(plain)
    assert np.asarray(jitted)[0] == np.float32(65504.0) + np.float32(70000.0)
    assert fused_calls == plain_calls == 1


def test_zero_dimensional_operands_of_one_rank_are_fused() -> None:
    x = native(16777217, "int32")
    s = native(1.0, "float32")
    eager, jitted, plain, fused_calls, plain_calls = three_ways(tnp.add, x, s)
    assert bits(jitted) == bits(eager) == bits(plain)
    # (16777217 rounds to 16777216, and 16777216 + 1 back to it: float32)
    assert np.asarray(jitted).item() == np.float32(16777216.0) + np.float32(1.0)
    assert (fused_calls, plain_calls) == (0, 1)


def test_fused_inside_a_longer_program_and_under_grad() -> None:
    x = native([[1, -2, 3], [16777217, 5, -6]], "int32")
    w = native([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], "float32")

    k = native([[7, 0, -1], [2, 16777219, 4]], "int32")

    def loss(w: Any, x: Any, k: Any) -> Any:
        # (x's conversion is read twice, by the product and its derivative;
        # k's once, by the sum)
        return tnp.sum(tnp.tanh(w * x + k) ** 2)

    f = tl.value_and_grad(loss)
    eager = f(w, x, k)
    with counting_conversions() as fused_calls:
        jitted = tl.jit(f)(w, x, k)
    with unfused(), counting_conversions() as plain_calls:
        plain = tl.jit(f)(w, x, k)
    for e, j, p in zip(eager, jitted, plain, strict=True):
        assert bits(j) == bits(e) == bits(p)
    assert fused_calls[0] < plain_calls[0]


def test_checked_conversions_are_not_fused() -> None:
    # A conversion that checks its values must run where it is (it raises
    # on values the new dtype cannot hold): the same program, the check
    # set, keeps it; without the check, it is fused.
    i32, f32 = np.dtype("int32"), np.dtype("float32")
    avals = [
        (_core.aval(i32, False), (3,)),
        (_core.aval(f32, False), (3,)),
        (_core.aval(f32, False), (3,)),
        (_core.aval(f32, False), (3,)),
    ]
    x, y = (
        primitive.ShapedArray((3,), i32, False),
        primitive.ShapedArray((3,), f32, False),
    )
    add = PRIMITIVES["add"]

    def program(check: Check | None) -> list[Any]:
        params = {"new_dtype": f32, "weak_type": False, "check": check}
        return [
            primitive.PrimitiveEquation(CONVERT, params, [(0, x)], [2]),
            primitive.PrimitiveEquation(add, {}, [(2, y), (1, y)], [3]),
        ]

    checked = program(Check("operand", "add", 0))
    assert jit_module.fuse_conversions(BACKEND, checked, [3], avals) == checked
    fused = jit_module.fuse_conversions(BACKEND, program(None), [3], avals)
    assert len(fused) == 1 and list(fused[0].inputs()) == [0, 1]
    # Returned, or read twice: kept.
    kept = program(None)
    assert jit_module.fuse_conversions(BACKEND, kept, [2, 3], avals) == kept
    twice = [kept[0], primitive.PrimitiveEquation(add, {}, [(2, y), (2, y)], [3])]
    assert jit_module.fuse_conversions(BACKEND, twice, [3], avals) == twice


def test_numpy_programs_are_not_rewritten(monkeypatch: pytest.MonkeyPatch) -> None:
    rewritten: list[object] = []
    original = jit_module.fuse_conversions

    def spy(backend: Any, *rest: Any) -> Any:
        rewritten.append(backend)
        return original(backend, *rest)

    monkeypatch.setattr(jit_module, "fuse_conversions", spy)
    f = lambda a, b: a + b  # noqa: E731
    numpy_args = (
        tnp.asarray(np.array([16777217, 3], np.int32)),
        tnp.asarray(np.array([0.0, 1.5], np.float32)),
    )
    out = tl.jit(f)(*numpy_args)
    assert rewritten == []
    assert np.asarray(out).tolist() == [16777216.0, 4.5]
    torch_args = (native([16777217, 3], "int32"), native([0.0, 1.5], "float32"))
    assert np.asarray(tl.jit(f)(*torch_args)).tolist() == [16777216.0, 4.5]
    assert rewritten == [BACKEND]


def test_repeated_calls_on_native_arrays_find_their_program() -> None:
    f = tl.jit(lambda a, b: a * b + a)
    x = native([1.5, -2.0, 16777217.0], "float32")
    y = native([2.0, 0.5, 1.0], "float32")
    first, second = f(x, y), f(x, y)
    assert bits(first) == bits(second) == bits(x * y + x)
    assert (second.shape, second.device) == ((3,), "cpu")
    assert f.cache_info()[:2] == (1, 1)
    # Another dtype or shape traces again, with its own dtypes.
    k = native([1, 2, 3], "int32")
    assert f(k, y).dtype == np.dtype("float32")
    assert f(k, k).dtype == np.dtype("int32")
    assert f(x[:2], y[:2]).shape == (2,)
    assert f.cache_info()[:2] == (1, 4)
    g = tl.jit(lambda a, b: {"sum": a + b, "a": a})
    out = g(x, y)
    again = g(x, y)
    assert bits(again["sum"]) == bits(out["sum"]) == bits(x + y)
    assert bits(again["a"]) == bits(x)


def test_a_program_found_again_still_refuses_two_devices() -> None:
    import boxed_backend  # (tests/: a backend with two devices)

    boxed_backend.register()

    def boxed(device: str) -> Any:
        data = np.array([1.0, 2.0], np.float32)
        return tnp.asarray(data, backend="boxed", device=device)

    f = tl.jit(lambda a, b: a + b)
    a0, b0, b1 = boxed("box:0"), boxed("box:0"), boxed("box:1")
    assert f(a0, b0).tolist() == f(a0, b0).tolist() == [2.0, 4.0]
    assert f(b1, b1).device == "box:1"
    with pytest.raises(TypeError, match="two backends or devices"):
        f(a0, b1)


def test_fused_under_vmap() -> None:
    x = native([[1, 16777217, -3], [4, 5, 33554435]], "int32")
    y = native([[0.5, 0.0, 2.0], [-1.0, 1e30, 0.25]], "float32")

    k = native([[7, -8, 9], [16777219, 0, -1]], "int32")

    def f(a: Any, b: Any, c: Any) -> Any:
        return (a + b) * tnp.maximum(c, b)

    v = tl.vmap(f)
    eager, jitted, plain, fused_calls, plain_calls = three_ways(v, x, y, k)
    assert bits(jitted) == bits(eager) == bits(plain) == bits(f(x, y, k))
    assert (fused_calls, plain_calls) == (0, 2)
