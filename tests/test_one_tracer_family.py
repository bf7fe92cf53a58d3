"""Every transformation's tracers derive from one base class, their traces
from one base trace, and they nest: a user sees one kind of traced array.

The nested derivatives are compared with closed forms of the derivatives
of f(x) = x**2 * sin(x), not with outputs of the code itself."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice._tracing.tracer import Trace

X = 0.7


def f(x: Any) -> Any:
    return x * x * tnp.sin(x)


def df(x: float) -> float:
    return 2 * x * math.sin(x) + x * x * math.cos(x)


def d2f(x: float) -> float:
    return 2 * math.sin(x) + 4 * x * math.cos(x) - x * x * math.sin(x)


def _seen_by(run: Callable[[Callable[[Any], Any]], Any]) -> list[Any]:
    """The arguments a function sees when ``run`` transforms and calls it."""
    seen: list[Any] = []

    def g(x: Any) -> Any:
        seen.append(x)
        return f(x)

    run(g)
    return seen


def _one() -> Any:
    return tnp.ones((), "float32")


def _x() -> Any:
    return tnp.asarray(np.float32(X))


TRANSFORMATIONS: dict[str, Callable[[Callable[[Any], Any]], Any]] = {
    "jit": lambda g: tl.jit(g)(_x()),
    "eval_shape": lambda g: tl.eval_shape(g, _x()),
    "grad": lambda g: tl.grad(g)(_x()),
    "value_and_grad": lambda g: tl.value_and_grad(g)(_x()),
    "jvp": lambda g: tl.jvp(g, (_x(),), (_one(),)),
    "vjp": lambda g: tl.vjp(g, _x())[1](_one()),
    "linearize": lambda g: tl.linearize(g, _x())[1](_one()),
    "jit(grad)": lambda g: tl.jit(tl.grad(g))(_x()),
    "grad(jit)": lambda g: tl.grad(tl.jit(g))(_x()),
}


def _custom_jvp_tangents() -> list[Any]:
    """What the rule of a custom_jvp function sees as tangents under grad."""
    seen: list[Any] = []

    @tl.custom_jvp
    def h(x: Any) -> Any:
        return tnp.sin(x)

    @h.defjvp
    def _h_jvp(primals: Any, tangents: Any) -> Any:
        seen.append(tangents[0])
        return h(primals[0]), tnp.cos(primals[0]) * tangents[0]

    assert float(tl.grad(h)(_x())) == pytest.approx(math.cos(X), rel=1e-6)
    return seen


@pytest.mark.parametrize("name", sorted(TRANSFORMATIONS))
def test_every_tracer_derives_from_the_one_base(name: str) -> None:
    seen = _seen_by(TRANSFORMATIONS[name])
    assert seen
    for t in seen:
        assert isinstance(t, tl.Tracer), (name, type(t))
        assert isinstance(t, tl.Array), (name, type(t))
        assert t.shape == () and t.dtype == np.float32


def test_the_tangents_a_custom_rule_sees_derive_from_the_one_base() -> None:
    tangents = _custom_jvp_tangents()
    assert tangents
    assert all(isinstance(t, tl.Tracer) for t in tangents)
    assert all(isinstance(t, tl.Array) for t in tangents)


@pytest.mark.parametrize("name", sorted(TRANSFORMATIONS))
def test_every_trace_derives_from_the_one_base(name: str) -> None:
    for t in _seen_by(TRANSFORMATIONS[name]):
        trace = t._trace  # pyright: ignore[reportPrivateUsage]
        assert isinstance(trace, Trace)
        assert isinstance(trace.level, int) and isinstance(trace.name, str)
        assert trace.alive is False  # (it has ended)
        assert callable(trace.process_primitive)


def test_concrete_results_are_not_tracers() -> None:
    for name, run in TRANSFORMATIONS.items():
        if name != "eval_shape":
            out = run(f)
            for leaf in out if isinstance(out, tuple) else (out,):
                assert not isinstance(leaf, tl.Tracer), name


NESTED: dict[str, tuple[Callable[[Any], Any], Callable[[float], float]]] = {
    "jit(grad)": (lambda x: tl.jit(tl.grad(f))(x), df),
    "grad(jit)": (lambda x: tl.grad(tl.jit(f))(x), df),
    "grad(grad)": (lambda x: tl.grad(tl.grad(f))(x), d2f),
    "jit(grad(grad))": (lambda x: tl.jit(tl.grad(tl.grad(f)))(x), d2f),
    "grad(jit(grad))": (lambda x: tl.grad(tl.jit(tl.grad(f)))(x), d2f),
    "jvp(grad)": (lambda x: tl.jvp(tl.grad(f), (x,), (tnp.ones_like(x),))[1], d2f),
    "grad(jvp)": (
        lambda x: tl.grad(lambda y: tl.jvp(f, (y,), (tnp.ones_like(y),))[1])(x),
        d2f,
    ),
    "vjp(grad)": (lambda x: tl.vjp(tl.grad(f), x)[1](tnp.ones_like(x))[0], d2f),
}


@pytest.mark.parametrize("name", sorted(NESTED))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nested_transformations_give_the_closed_form(name: str, dtype: str) -> None:
    run, exact = NESTED[name]
    xs = np.array([-1.3, 0.0, X, 2.5], dtype)
    with tl.enable_x64(dtype == "float64"):
        got = [run(tnp.asarray(v)) for v in xs]
    assert all(g.dtype == np.dtype(dtype) for g in got)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(
        [float(g) for g in got], [exact(float(v)) for v in xs], rtol=rtol, atol=rtol
    )


def test_nested_jit_records_primitives_of_both_passes() -> None:
    jaxpr = tl.make_jaxpr(tl.grad(f))(_x())
    names = {eqn.primitive.name for eqn in jaxpr.eqns}
    assert {"sin", "cos", "mul"} <= names


LEAKS: dict[str, Callable[[Callable[[Any], Any]], Any]] = {
    "jit": TRANSFORMATIONS["jit"],
    "eval_shape": TRANSFORMATIONS["eval_shape"],
    "grad": TRANSFORMATIONS["grad"],
    "jvp": TRANSFORMATIONS["jvp"],
    "vjp": TRANSFORMATIONS["vjp"],
    "linearize": TRANSFORMATIONS["linearize"],
    "jit(grad)": TRANSFORMATIONS["jit(grad)"],
}


@pytest.mark.parametrize("name", sorted(LEAKS))
def test_a_leaked_tracer_of_each_kind_raises(name: str) -> None:
    (leaked, *_) = _seen_by(LEAKS[name])
    with pytest.raises(tl.UnexpectedTracerError):
        leaked + 1
    with pytest.raises(tl.UnexpectedTracerError):
        tnp.sin(leaked)


def test_a_leaked_tangent_of_a_custom_rule_raises() -> None:
    (leaked, *_) = _custom_jvp_tangents()
    with pytest.raises(tl.UnexpectedTracerError):
        leaked * 2.0
