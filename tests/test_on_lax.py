"""The reductions, products and creation functions are written on ``lax``:
argument checks, the dtype plan, then primitives. Under ``jit`` their
programs hold primitive equations only (no recorded namespace call), and
eagerly they compute by binding primitives, so every path runs the same
code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import program_equations
from typelattice._tracing.primitive import Primitive
from typelattice.numpy import _creation

F = Callable[..., Any]


def _f32(*shape: int) -> Any:
    values = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32)
    return tnp.asarray(values.reshape(shape) / 4)


def _i8(*shape: int) -> Any:
    values = np.arange(int(np.prod(shape)), dtype=np.int8) % 5
    return tnp.asarray(values.reshape(shape))


M = _f32(3, 4)
V = _f32(4)
B = _i8(3, 4)
S = tnp.asarray(np.float32(2.5))

# name -> (function of arrays, its arguments)
ON_LAX: dict[str, tuple[F, tuple[Any, ...]]] = {
    "sum": (lambda x: tnp.sum(x, axis=0), (B,)),
    "sum-where": (lambda x, w: tnp.sum(x, where=w, initial=2.0), (M, B)),
    "prod": (lambda x: tnp.prod(x, axis=1, keepdims=True), (M,)),
    "max": (lambda x: tnp.max(x, axis=1), (M,)),
    "min": (lambda x: tnp.min(x, initial=0.5), (M,)),
    "amax": (lambda x: tnp.amax(x), (B,)),
    "amin": (lambda x: tnp.amin(x, axis=0), (B,)),
    "mean": (lambda x: tnp.mean(x, axis=0), (M,)),
    "mean-int": (lambda x: tnp.mean(x, dtype="int32"), (B,)),
    "var": (lambda x: tnp.var(x, axis=1, ddof=1), (M,)),
    "var-int": (lambda x: tnp.var(x, dtype="int16"), (B,)),
    "std": (lambda x, w: tnp.std(x, where=w), (M, B)),
    "argmax": (lambda x: tnp.argmax(x, axis=1), (M,)),
    "argmin": (lambda x: tnp.argmin(x, keepdims=True), (B,)),
    "cumsum": (lambda x: tnp.cumsum(x), (B,)),
    "cumprod": (lambda x: tnp.cumprod(x, axis=1), (M,)),
    "any": (lambda x: tnp.any(x, axis=0), (B,)),
    "all": (lambda x: tnp.all(x), (M,)),
    "ptp": (lambda x: tnp.ptp(x, axis=1), (B,)),
    "matmul": (lambda x, y: tnp.matmul(x, y), (M, V)),
    "matmul-promoted": (lambda x, y: tnp.matmul(x, y), (B, V)),
    "dot": (lambda x, y: tnp.dot(x, y), (M, M.T)),
    "inner": (lambda x, y: tnp.inner(x, y), (M, V)),
    "vdot": (lambda x, y: tnp.vdot(x, y), (M, M)),
    "outer": (lambda x, y: tnp.outer(x, y), (V, V)),
    "tensordot": (lambda x, y: tnp.tensordot(x, y, axes=([1], [0])), (M, V)),
    "einsum": (lambda x, y: tnp.einsum("ij,j->i", x, y), (M, V)),
    "einsum-diagonal": (lambda x: tnp.einsum("ii->i", x), (_f32(3, 3),)),
    "asarray": (lambda x: tnp.asarray(x, dtype="float32"), (B,)),
    "array": (lambda x: tnp.array([x, x], dtype="float32"), (V,)),
    "astype": (lambda x: x.astype("int8"), (M,)),
    "convert_to": (lambda x: _creation.convert_to(x, "int16", "f"), (B,)),
    "zeros": (lambda x: tnp.zeros(x.shape, "int8"), (M,)),
    "ones": (lambda x: tnp.ones(x.shape), (M,)),
    "empty": (lambda x: tnp.empty(x.shape), (M,)),
    "full": (lambda x: tnp.full(x.shape, 2), (M,)),
    "full-array": (lambda x: tnp.full((3, 4), x), (V,)),
    "zeros_like": (lambda x: tnp.zeros_like(x), (M,)),
    "ones_like": (lambda x: tnp.ones_like(x, dtype="int8"), (M,)),
    "empty_like": (lambda x: tnp.empty_like(x), (B,)),
    "full_like": (lambda x, s: tnp.full_like(x, s), (M, S)),
    "eye": (lambda x: tnp.eye(3, 4, k=1), (M,)),
    "identity": (lambda x: tnp.identity(3, "int8"), (M,)),
    "arange": (lambda x: tnp.arange(0.1, 2.3, 0.3) + x, (S,)),
    "arange-int": (lambda x: tnp.arange(10, 0, -3, "int8"), (M,)),
    "linspace": (lambda x, y: tnp.linspace(x, y, 7, axis=1), (S, V)),
    "linspace-retstep": (lambda x: tnp.linspace(x, 10, 4, False, True)[1], (S,)),
    "searchsorted": (lambda x, y: tnp.searchsorted(x, y, side="right"), (V, M)),
}


#: The functions the cases above run, which need no shape rule (their
#: primitives have abstract evaluation): test_tracing_rules exempts them.
WRITTEN_ON_LAX: frozenset[Any] = frozenset(
    [
        tnp.sum,
        tnp.prod,
        tnp.max,
        tnp.min,
        tnp.mean,
        tnp.var,
        tnp.std,
        tnp.argmax,
        tnp.argmin,
        tnp.cumsum,
        tnp.cumprod,
        tnp.any,
        tnp.all,
        tnp.ptp,
        tnp.trace,
        tnp.matmul,
        tnp.dot,
        tnp.inner,
        tnp.vdot,
        tnp.outer,
        tnp.tensordot,
        tnp.einsum,
        tnp.asarray,
        tnp.array,
        tnp.astype,
        _creation.convert_to,
        tnp.zeros,
        tnp.ones,
        tnp.empty,
        tnp.full,
        tnp.zeros_like,
        tnp.ones_like,
        tnp.empty_like,
        tnp.full_like,
        tnp.eye,
        tnp.identity,
        tnp.arange,
        tnp.linspace,
        tnp.searchsorted,
    ]
)


def test_every_function_written_on_lax_is_run_here() -> None:
    assert {name.split("-")[0] for name in ON_LAX} - {"amax", "amin"} | {"trace"} == {
        f.__name__ for f in WRITTEN_ON_LAX
    }


@pytest.mark.parametrize("name", sorted(ON_LAX))
def test_programs_hold_primitive_equations_only(name: str) -> None:
    fn, args = ON_LAX[name]
    equations = program_equations(tl.jit(fn).program(*args))
    assert equations, name
    for line in equations:
        assert " = lax." in line, f"{name}: {line}"
    # ... and the program computes what the eager call does.
    want, got = fn(*args), tl.jit(fn)(*args)
    assert (got.dtype, got.weak_type, got.shape) == (
        want.dtype,
        want.weak_type,
        want.shape,
    )
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("name", sorted(ON_LAX))
def test_eager_calls_bind_primitives(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fn, args = ON_LAX[name]
    bound: list[str] = []
    original = Primitive.bind

    def counting(self: Primitive, *operands: Any, **params: Any) -> Any:
        bound.append(self.name)
        return original(self, *operands, **params)

    monkeypatch.setattr(Primitive, "bind", counting)
    fn(*args)
    assert bound, name


def test_creation_records_no_constant_of_the_result_size() -> None:
    """A filled array inside jit is made by the program from a scalar: the
    program holds no constant of its size."""
    program = str(tl.jit(lambda x: tnp.zeros((1000, 1000)) + 0).program(1.0))
    assert "broadcast_in_dim" in program
    assert "1000000" not in program and "..." not in program.split("return")[0]


def test_reductions_of_narrow_floats_accumulate_in_float32() -> None:
    """float16 sums are accumulated in float32 and rounded once: 4096 ones
    and a half stay exact, where float16 accumulation would stop at 2048."""
    x = tnp.ones(4096, "float16")
    for f in (tnp.sum, tl.jit(tnp.sum)):
        out = f(x)
        assert out.dtype == np.float16
        assert float(out) == 4096.0
    assert float(tnp.mean(x)) == 1.0
    assert float(tnp.cumsum(x)[-1]) == 4096.0


def test_complex_max_and_min_propagate_nan_as_numpy() -> None:
    values = np.array([[1 + 0j, complex(0, np.nan)], [complex(np.nan, 1), 2j]])
    x = tnp.asarray(values.astype(np.complex64))
    for name in ("max", "min"):
        for axis in (None, 0, 1):
            want = getattr(np, name)(values.astype(np.complex64), axis=axis)
            for f in (getattr(tnp, name), tl.jit(getattr(tnp, name), static_argnums=1)):
                got = np.asarray(f(x, axis))
                np.testing.assert_array_equal(got.real, want.real)
                np.testing.assert_array_equal(got.imag, want.imag)
