"""Backends implement primitives: the NumPy backend implements every one, and
a second backend (tests/counting_backend.py) computes whatever binds a
primitive, eagerly, in jit programs and under differentiation, in the scope
and thread where it is in force and nowhere else."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from counting_backend import CountingBackend
from typelattice import lax
from typelattice._backends import IN_USE, NUMPY, Backend, current, use
from typelattice._lax._elementwise import add_p, exp_p
from typelattice._lax._primitive import PRIMITIVES, Primitive, ShapedArray


@pytest.mark.parametrize("name", list(PRIMITIVES))
def test_the_numpy_backend_implements_every_primitive(name: str) -> None:
    prim = PRIMITIVES[name]
    assert NUMPY.implements(prim) and callable(NUMPY.impl(prim))
    assert callable(prim.abstract_eval)
    assert prim.impl is NUMPY.impl(prim)


def test_the_counting_backend_implements_every_primitive() -> None:
    counting = CountingBackend()
    assert all(counting.implements(p) for p in PRIMITIVES.values())
    assert not counting.fast  # (its results come from the implementations)


def test_def_impl_registers_into_the_numpy_backend() -> None:
    prim = Primitive("test_triple")
    try:
        prim.def_abstract_eval(lambda x: x)
        impl = prim.def_impl(lambda x: 3 * x)
        assert NUMPY.impl(prim) is impl
        out = prim.bind(tnp.asarray(np.int8([1, 2])))
        assert (out.dtype, out.tolist()) == (np.dtype("int8"), [3, 6])
        # A new implementation drops the plans made with the old one.
        prim.def_impl(lambda x: 4 * x)
        assert prim.bind(tnp.asarray(np.int8([1, 2]))).tolist() == [4, 8]
    finally:
        del PRIMITIVES["test_triple"]
        del NUMPY.impls[prim]


def test_the_backend_is_scoped() -> None:
    counting = CountingBackend()
    assert current() is NUMPY
    with use(counting) as b:
        assert b is counting and current() is counting and IN_USE == [counting]
        with use(NUMPY):
            assert current() is NUMPY
        assert current() is counting
    assert current() is NUMPY and not IN_USE
    with pytest.raises(RuntimeError), use(counting):
        raise RuntimeError
    assert current() is NUMPY and not IN_USE


def test_use_refuses_what_is_not_a_backend() -> None:
    with pytest.raises(TypeError, match="takes a Backend, got 'numpy'"):
        with use("numpy"):  # type: ignore[arg-type]
            pass


def test_eager_bindings_are_computed_by_the_backend_in_force() -> None:
    x = tnp.asarray(np.float32([1.0, 2.0]))
    before = lax.exp(lax.add(x, x))  # (the NumPy backend's plans exist)
    counting = CountingBackend()
    with use(counting):
        got = lax.exp(lax.add(x, x))
        lax.add(x, 1.0)  # (an array and a Python scalar)
        add_p.bind(x, x)
    assert counting.calls == {"add": 3, "exp": 1}
    assert (got.dtype, got.weak_type) == (before.dtype, before.weak_type)
    assert got.tolist() == before.tolist()
    # Outside the scope, nothing is counted.
    lax.add(x, x)
    assert counting.total() == 4


def test_results_keep_dtype_weak_flag_and_shape() -> None:
    counting = CountingBackend()
    x = tnp.asarray(np.int8([[1, 2, 3]]))
    w = tnp.asarray(2)  # weak
    with use(counting):
        got = [lax.add(w, w), lax.transpose(x, (1, 0)), lax.sort(x, dimension=1)]
        div, rem = lax.div(x, x), lax.rem(x, x)
    want = [lax.add(w, w), lax.transpose(x, (1, 0)), lax.sort(x, dimension=1)]
    for a, b in zip(got, want, strict=True):
        assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type)
        assert a.tolist() == b.tolist()
    assert (div.tolist(), rem.tolist()) == ([[1, 1, 1]], [[0, 0, 0]])


def test_errors_are_the_primitives_whatever_computes() -> None:
    x = tnp.asarray(np.float32([1.0]))
    y = tnp.asarray(np.int8([1]))
    with pytest.raises(TypeError) as want:
        lax.add(x, y)
    counting = CountingBackend()
    with use(counting), pytest.raises(TypeError) as got:
        lax.add(x, y)
    assert str(got.value) == str(want.value)
    assert counting.total() == 0  # (the abstract evaluation refused it)
    with use(counting), pytest.raises(OverflowError, match="300"):
        lax.add(y, 300)


def test_a_backend_without_an_implementation_says_so() -> None:
    x = tnp.asarray(np.float32([1.0]))
    partial = Backend("partial")
    partial.def_impl(add_p, NUMPY.impl(add_p))
    with use(partial):
        assert lax.add(x, x).tolist() == [2.0]
        with pytest.raises(NotImplementedError, match="partial backend .* exp"):
            lax.exp(x)
        with pytest.raises(NotImplementedError, match="partial backend .* exp"):
            tl.jit(lax.exp)(x)


def test_jit_programs_call_the_backend_in_force() -> None:
    counting = CountingBackend()
    x = tnp.asarray(np.float32([1.0, 2.0]))
    want = lax.mul(lax.exp(x), x)
    with use(counting):
        f = tl.jit(lambda x: lax.mul(lax.exp(x), x))
        got = [f(x), f(x)]
    assert counting.calls == {"exp": 2, "mul": 2}  # (each run, none tracing)
    for a in got:
        assert (a.dtype, a.weak_type, a.tolist()) == (
            want.dtype,
            want.weak_type,
            want.tolist(),
        )


def test_a_jitted_function_runs_the_backend_in_force_at_each_call() -> None:
    x = tnp.asarray(np.float32([1.0, 2.0]))
    f = tl.jit(lambda x, s: lax.mul(lax.exp(x), s))
    want = [f(x, 2.0).tolist(), f(x, x).tolist()]  # traced under NumPy's
    first, second = CountingBackend(), CountingBackend()
    with use(first):
        got = [f(x, 2.0).tolist(), f(x, x).tolist()]
    assert first.calls == {"exp": 2, "mul": 2}
    assert got == want
    with use(second):
        got = [f(x, 2.0).tolist(), f(x, x).tolist()]
    assert second.calls == {"exp": 2, "mul": 2}
    assert first.calls == {"exp": 2, "mul": 2}
    assert f(x, 2.0).tolist() == want[0]  # NumPy's again: counts nothing
    assert (first.calls, second.calls) == ({"exp": 2, "mul": 2},) * 2


def test_eval_shape_computes_nothing() -> None:
    counting = CountingBackend()
    with use(counting):
        out = tl.eval_shape(
            lambda x: lax.exp(lax.broadcast_in_dim(x, (1000, 3), (1,))),
            tl.ShapeDtypeStruct((3,), "float32"),
        )
    assert out == tl.ShapeDtypeStruct((1000, 3), "float32")
    assert counting.total() == 0


def test_differentiation_computes_with_the_backend_in_force() -> None:
    def f(x: Any) -> Any:
        return lax.reduce_sum(lax.mul(lax.sin(x), x), axes=(0,))

    x = tnp.asarray(np.float32([0.5, 1.0]))
    want = tl.grad(f)(x)
    counting = CountingBackend()
    with use(counting):
        got = tl.grad(f)(x)
    assert counting.calls["sin"] >= 1 and counting.calls["cos"] >= 1
    assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
    assert got.tolist() == want.tolist()


def test_the_backend_is_private_to_its_thread() -> None:
    """A thread computing with another backend leaves the others with
    NumPy's (and the C accelerator's eager plans stay NumPy's)."""
    counting = CountingBackend()
    x = tnp.asarray(np.float32([1.0, 2.0]))
    inside, done = threading.Event(), threading.Event()
    seen: list[Backend] = []

    def worker() -> None:
        with use(counting):
            lax.neg(x)
            inside.set()
            done.wait(10)
            seen.append(current())

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert inside.wait(10)
        assert current() is NUMPY
        out = lax.neg(lax.neg(x))
    finally:
        done.set()
        thread.join()
    assert out.tolist() == [1.0, 2.0]
    assert seen == [counting] and counting.calls == {"neg": 1}
    assert not IN_USE


def test_a_converting_backend_sees_only_its_own_arrays() -> None:
    """Operands reach the implementations converted, results come back
    converted: the counting backend boxes its arrays and refuses others."""
    counting = CountingBackend()
    x = tnp.asarray(np.float32([4.0]))
    with use(counting):
        out = exp_p.bind(x)
        (values, indices) = lax.sort((x, lax.iota("int32", 1)), num_keys=1)
    assert type(np.asarray(out)) is np.ndarray
    assert out.tolist() == lax.exp(x).tolist()
    assert (values.tolist(), indices.tolist()) == ([4.0], [0])


def test_abstract_values_are_the_primitives() -> None:
    counting = CountingBackend()
    with use(counting):
        out = add_p.abstract_eval(  # type: ignore[misc]
            ShapedArray((2,), np.dtype("int8")), ShapedArray((2,), np.dtype("int8"))
        )
    assert out == ShapedArray((2,), np.dtype("int8"))
