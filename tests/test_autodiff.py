"""The differentiation transformations as a user meets them: grad,
value_and_grad, vjp, jvp and stop_gradient.

Behaviour a user of ``jax.grad`` relies on: which arguments are
differentiated (``argnums``), auxiliary outputs, pytrees in and out,
integer arguments (``allow_int``), complex functions (``holomorphic``), the
errors for outputs that have no gradient, dtypes of gradients under mixed
precision, derivatives of derivatives, composition with jit, tracers that
escape, and Python control flow on traced values. The gradients of each
namespace function against JAX's are in test_grad_golden.py; here the
values are checked against derivatives known in closed form and central
finite differences.
"""

from __future__ import annotations

import collections
import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import typelattice as tl
import typelattice.numpy as tnp
from typelattice._tracing import ad, tree


def arr(values: Any, dtype: str = "float32") -> tnp.Array:
    return tnp.asarray(np.asarray(values, dtype=dtype))


def check(x: Any, dtype: str, weak: bool, values: Any = None, **tol: float) -> None:
    """``x`` is a concrete Array of ``dtype`` and weak flag ``weak``, close
    to ``values`` when given."""
    assert isinstance(x, tnp.Array), repr(x)
    assert not isinstance(x, tl.Tracer), repr(x)
    assert (x.dtype, x.weak_type) == (np.dtype(dtype), weak), repr(x)
    if values is not None:
        np.testing.assert_allclose(
            np.asarray(x).astype(np.complex128),
            np.asarray(values, np.complex128),
            **({"rtol": 1e-6} | tol),
        )


def poly(x: Any) -> Any:
    """``sum(x^3 - 2x)``: gradient ``3x^2 - 2``, second derivative ``6x``."""
    return tnp.sum(x * x * x - 2 * x)


X = [0.5, -1.0, 2.0]


# -- argnums --------------------------------------------------------------------


def test_grad_differentiates_the_first_argument_by_default() -> None:
    f = lambda a, b: tnp.sum(a * b)  # noqa: E731
    a, b = arr([1.0, 2.0]), arr([3.0, -4.0])
    check(tl.grad(f)(a, b), "float32", False, [3.0, -4.0])


def test_argnums_int_and_tuple() -> None:
    f = lambda a, b, c: tnp.sum(a * b + tnp.sin(c))  # noqa: E731
    a, b, c = arr([1.0, 2.0]), arr([3.0, -4.0]), arr([0.0, 1.0])
    check(tl.grad(f, argnums=1)(a, b, c), "float32", False, [1.0, 2.0])
    ga, gc = tl.grad(f, argnums=(0, 2))(a, b, c)
    check(ga, "float32", False, [3.0, -4.0])
    check(gc, "float32", False, np.cos([0.0, 1.0]))
    (only,) = tl.grad(f, argnums=(2,))(a, b, c)  # a tuple of one
    check(only, "float32", False, np.cos([0.0, 1.0]))
    check(tl.grad(f, argnums=-1)(a, b, c), "float32", False, np.cos([0.0, 1.0]))


def test_argnums_naming_no_argument_raises() -> None:
    with pytest.raises(ValueError, match=r"argnums=3 names no positional argument"):
        tl.grad(lambda a, b: tnp.sum(a * b), argnums=3)(arr([1.0]), arr([2.0]))


@pytest.mark.parametrize(
    ("argnums", "position", "fix"),
    [((0, 0), 0, (0,)), ((1, 0, -1), 1, (1, 0)), ([-2, 0], 0, (0,))],
)
def test_argnums_naming_an_argument_twice_raises(
    argnums: Any, position: int, fix: tuple[int, ...]
) -> None:
    # Differentiated twice, one of the two would get a gradient of zero.
    f = lambda a, b: tnp.sum(a * a * b)  # noqa: E731
    a, b = arr([1.0, 2.0]), arr([3.0, -4.0])
    message = (
        f"argnums={re.escape(repr(argnums))} names positional argument {position} "
        f"more than once; .* pass argnums={re.escape(repr(fix))}"
    )
    for transform in (tl.grad, tl.value_and_grad):
        with pytest.raises(ValueError, match=message):
            transform(f, argnums=argnums)(a, b)
    # The fix works.
    fixed = tl.grad(f, argnums=fix)(a, b)
    assert isinstance(fixed, tuple) and len(fixed) == len(fix)


def test_keyword_arguments_are_not_differentiated() -> None:
    f = lambda a, *, scale: tnp.sum(a * scale)  # noqa: E731
    check(tl.grad(f)(arr([1.0, 2.0]), scale=arr([5.0, 6.0])), "float32", False, [5, 6])


def test_value_and_grad() -> None:
    x = arr(X)
    value, g = tl.value_and_grad(poly)(x)
    check(value, "float32", False, float(poly(x)))
    check(g, "float32", False, 3 * np.square(X) - 2)


# -- has_aux --------------------------------------------------------------------


def test_has_aux_returns_the_auxiliary_data_as_values() -> None:
    def f(x: Any) -> Any:
        y = tnp.sin(x)
        return tnp.sum(y), {"y": y, "n": 3}

    x = arr(X)
    g, aux = tl.grad(f, has_aux=True)(x)
    check(g, "float32", False, np.cos(X))
    # As JAX: a leaf of aux that is not traced comes back as it was given.
    assert type(aux["n"]) is int and aux["n"] == 3
    check(aux["y"], "float32", False, np.sin(X))  # a value, not a tracer
    (value, aux2), g2 = tl.value_and_grad(f, has_aux=True)(x)
    check(value, "float32", False, np.sin(X).sum())
    check(aux2["y"], "float32", False, np.sin(X))
    check(g2, "float32", False, np.cos(X))


def test_has_aux_needs_a_pair() -> None:
    with pytest.raises(TypeError, match=r"has_aux=True .* must return a pair"):
        tl.grad(lambda x: tnp.sum(x), has_aux=True)(arr(X))


def test_a_pair_without_has_aux_is_not_a_scalar_output() -> None:
    with pytest.raises(TypeError, match=r"pass has_aux=True"):
        tl.grad(lambda x: (tnp.sum(x), x))(arr(X))


def test_vjp_and_jvp_with_aux() -> None:
    x = arr(X)
    out, f_vjp, aux = tl.vjp(lambda x: (tnp.sin(x), tnp.cos(x)), x, has_aux=True)
    check(aux, "float32", False, np.cos(X))
    check(f_vjp(arr([1.0, 1.0, 1.0]))[0], "float32", False, np.cos(X))
    out, t, aux = tl.jvp(
        lambda x: (tnp.sin(x), tnp.cos(x)), (x,), (arr([1.0, 0.0, 2.0]),), has_aux=True
    )
    check(t, "float32", False, np.cos(X) * [1.0, 0.0, 2.0])
    check(aux, "float32", False, np.cos(X))


# -- pytrees --------------------------------------------------------------------

Pair = collections.namedtuple("Pair", ["w", "b"])


def test_gradients_have_the_structure_of_the_arguments() -> None:
    params = {
        "dense": Pair(w=arr([[1.0, 2.0], [3.0, 4.0]]), b=arr([0.5, -0.5])),
        "list": [arr([1.0, -1.0]), (arr(2.0), None)],
        "bf16": arr([1.0, 2.0], "bfloat16"),
    }

    def f(p: Any) -> Any:
        dense = tnp.sum(p["dense"].w * 2.0) + tnp.sum(p["dense"].b * p["list"][0])
        scalar = p["list"][1][0] * 3.0
        return dense + scalar + tnp.sum(p["bf16"].astype("float32") * 0.5)

    g = tl.grad(f)(params)
    assert type(g) is dict and set(g) == {"dense", "list", "bf16"}
    assert type(g["dense"]) is Pair
    check(g["dense"].w, "float32", False, [[2.0, 2.0], [2.0, 2.0]])
    check(g["dense"].b, "float32", False, [1.0, -1.0])
    assert type(g["list"]) is list and type(g["list"][1]) is tuple
    check(g["list"][0], "float32", False, [0.5, -0.5])
    check(g["list"][1][0], "float32", False, 3.0)
    assert g["list"][1][1] is None
    check(g["bf16"], "bfloat16", False, [0.5, 0.5])


def test_vjp_of_pytree_input_and_output() -> None:
    def f(p: Any) -> Any:
        return {"s": tnp.sin(p[0]), "t": [p[0] * p[1]]}

    p = (arr([0.0, 1.0]), arr([2.0, 3.0]))
    out, f_vjp = tl.vjp(f, p)
    assert set(out) == {"s", "t"} and isinstance(out["t"], list)
    (g,) = f_vjp({"s": arr([1.0, 1.0]), "t": [arr([1.0, 2.0])]})
    assert isinstance(g, tuple) and len(g) == 2
    check(g[0], "float32", False, np.cos([0.0, 1.0]) + [2.0, 6.0])
    check(g[1], "float32", False, [0.0, 2.0])
    with pytest.raises(ValueError, match="structure"):
        f_vjp({"s": arr([1.0, 1.0])})


def test_vjp_cotangent_must_match_the_output() -> None:
    _, f_vjp = tl.vjp(tnp.sin, arr(X))
    with pytest.raises(ValueError, match=r"shape \(2,\) and dtype float32"):
        f_vjp(arr([1.0, 1.0]))
    with pytest.raises(ValueError, match="dtype bfloat16"):
        f_vjp(arr([1.0, 1.0, 1.0], "bfloat16"))


def test_vjp_takes_float0_cotangents_for_integer_and_bool_outputs() -> None:
    def f(x: Any) -> Any:
        floor = tnp.floor(x)
        return {
            "y": x * 2.0,
            "n": floor.astype("int32"),
            "pair": [tnp.sum(x * x), x > 0],
            "k": tnp.asarray(3),
        }

    x = arr([1.5, -2.0])
    _, f_vjp = tl.vjp(f, x)
    ct = {
        "y": arr([1.0, 10.0]),
        "n": np.zeros(2, tl.float0),
        "pair": [arr(1.0), np.zeros(2, dtype=tl.float0)],
        "k": np.zeros((), tl.float0),
    }
    (g,) = f_vjp(ct)
    check(g, "float32", False, [2.0 + 3.0, 20.0 - 4.0])
    # An array of the output's own dtype still works (its values are unused).
    (same,) = f_vjp(ct | {"n": arr([7, 7], "int32")})
    np.testing.assert_array_equal(np.asarray(same), np.asarray(g))
    with pytest.raises(ValueError, match=r"shape \(3,\) was given for an output of"):
        f_vjp(ct | {"n": np.zeros(3, tl.float0)})
    with pytest.raises(ValueError, match="bool and integer outputs only"):
        f_vjp(ct | {"y": np.zeros(2, tl.float0)})
    with pytest.raises(ValueError, match=r"or pass np.zeros\(\(2,\), typelattice"):
        f_vjp(ct | {"n": arr([0.0, 0.0])})


# -- integer arguments and outputs ----------------------------------------------


def test_integer_argument_needs_allow_int() -> None:
    f = lambda x, n: tnp.sum(x * n)  # noqa: E731
    message = (
        "requires real- or complex-valued inputs (input dtype that is a sub-dtype "
        "of np.inexact), but got int32. If you want to use Boolean- or "
        "integer-valued inputs, use vjp or set allow_int to True."
    )
    with pytest.raises(TypeError, match=re.escape(message)):
        tl.grad(f, argnums=1)(arr(X), arr([1, 2, 3], "int32"))
    with pytest.raises(TypeError, match="but got bool"):
        tl.grad(lambda b: tnp.sum(tnp.where(b, 1.0, 0.0)))(arr([True], "bool"))
    with pytest.raises(TypeError, match="but got int32"):
        tl.grad(lambda n: n * 1.0)(3)  # a Python int: weak int32


def test_allow_int_gives_float0_zeros() -> None:
    f = lambda x, n: tnp.sum(x * n)  # noqa: E731
    gx, gn = tl.grad(f, argnums=(0, 1), allow_int=True)(arr(X), arr([1, 2, 3], "int32"))
    check(gx, "float32", False, [1.0, 2.0, 3.0])
    assert gn.dtype == tl.float0 and gn.shape == (3,)
    assert isinstance(gn, np.ndarray)


def test_vjp_and_jvp_of_integer_values() -> None:
    out, f_vjp = tl.vjp(lambda x, n: x * n, arr(X), arr([1, 2, 3], "int32"))
    gx, gn = f_vjp(arr([1.0, 1.0, 1.0]))
    check(gx, "float32", False, [1.0, 2.0, 3.0])
    assert gn.dtype == tl.float0 and gn.shape == (3,)
    # The tangent of an integer output: float0 zeros.
    _, t = tl.jvp(lambda x: tnp.floor(x).astype("int32"), (arr(X),), (arr(X),))
    assert t.dtype == tl.float0 and t.shape == (3,)
    # An integer argument's tangent must be float0.
    with pytest.raises(TypeError, match="float0"):
        tl.jvp(lambda n: n * 2, (arr([1, 2], "int32"),), (arr([1, 1], "int32"),))
    _, t = tl.jvp(
        lambda x, n: x * n,
        (arr(X), arr([1, 2, 3], "int32")),
        (arr([1.0, 1.0, 1.0]), np.zeros(3, tl.float0)),
    )
    check(t, "float32", False, [1.0, 2.0, 3.0])


# -- outputs that have no gradient ----------------------------------------------


def test_non_scalar_output_raises() -> None:
    with pytest.raises(
        TypeError, match=r"scalar-output functions. Output had shape: \(3,\)"
    ):
        tl.grad(tnp.sin)(arr(X))


def test_complex_output_needs_holomorphic() -> None:
    with pytest.raises(
        TypeError, match="requires real-valued outputs .* got complex64"
    ):
        tl.grad(lambda z: z * z)(1 + 2j)


def test_integer_output_raises() -> None:
    with pytest.raises(TypeError, match="requires real-valued outputs .* got int32"):
        tl.grad(lambda x: tnp.sum(x).astype("int32"))(arr(X))


def test_output_independent_of_the_argument_has_zero_gradient() -> None:
    check(tl.grad(lambda x: arr(2.0))(arr(X)), "float32", False, [0.0, 0.0, 0.0])
    g = tl.grad(lambda x, y: tnp.sum(y), argnums=0)(arr(X, "bfloat16"), arr(X))
    check(g, "bfloat16", False, [0.0, 0.0, 0.0])


# -- complex numbers ------------------------------------------------------------


def test_gradient_of_squared_magnitude_is_twice_the_conjugate() -> None:
    check(tl.grad(lambda z: abs(z) ** 2)(1 + 2j), "complex64", True, 2 - 4j)


def test_gradient_of_a_real_function_of_complex_arrays() -> None:
    z = arr([1 + 2j, -0.5 + 0.25j], "complex64")
    g = tl.grad(lambda z: tnp.sum(tnp.real(z * tnp.conj(z))))(z)
    check(g, "complex64", False, 2 * np.conj([1 + 2j, -0.5 + 0.25j]))


def test_holomorphic() -> None:
    z = arr([1 + 2j, -0.5 + 0.25j], "complex64")
    # d/dz sum(z * sin(z)) = sin(z) + z cos(z)
    g = tl.grad(lambda z: tnp.sum(z * tnp.sin(z)), holomorphic=True)(z)
    expected = np.sin(np.asarray(z)) + np.asarray(z) * np.cos(np.asarray(z))
    check(g, "complex64", False, expected, rtol=1e-5)
    with pytest.raises(
        TypeError, match="holomorphic=True requires inputs with complex"
    ):
        tl.grad(lambda x: tnp.sum(x), holomorphic=True)(arr(X))
    with pytest.raises(
        TypeError, match="holomorphic=True requires outputs with complex"
    ):
        tl.grad(lambda z: tnp.sum(tnp.real(z)), holomorphic=True)(z)


# -- dtypes ---------------------------------------------------------------------


def test_mixed_precision_parameter_gets_a_float32_gradient() -> None:
    w = arr([0.5, -1.5, 2.0])  # float32 parameters
    x = arr([1.0, 2.0, 3.0], "bfloat16")  # bfloat16 data

    def f(w: Any) -> Any:
        y = w.astype("bfloat16") * x  # computed in bfloat16
        assert y.dtype == np.dtype(tnp.bfloat16)
        return tnp.sum(y.astype("float32"))

    check(tl.grad(f)(w), "float32", False, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "complex64"])
def test_gradient_dtype_is_the_argument_dtype(dtype: str) -> None:
    x = arr([0.5, 1.0], dtype)
    g = tl.grad(lambda x: tnp.sum(tnp.real(x * 3.0)))(x)
    check(g, dtype, False, [3.0, 3.0])


def test_python_scalars_get_weak_gradients() -> None:
    check(tl.grad(tnp.sin)(0.0), "float32", True, 1.0)
    with tl.enable_x64():
        check(tl.grad(tnp.sin)(0.0), "float64", True, 1.0)
        check(tl.grad(tnp.sin)(arr(0.0, "float32")), "float32", False, 1.0)


# -- higher derivatives ----------------------------------------------------------


def test_second_and_third_derivatives_of_sin() -> None:
    x = [0.3, -1.2, 2.0]
    d1 = tl.grad(lambda x: tnp.sum(tnp.sin(x)))
    d2 = tl.grad(lambda x: tnp.sum(d1(x)))
    d3 = tl.grad(lambda x: tnp.sum(d2(x)))
    check(d2(arr(x)), "float32", False, -np.sin(x))
    check(d3(arr(x)), "float32", False, -np.cos(x))
    check(tl.grad(tl.grad(tnp.sin))(0.5), "float32", True, -math.sin(0.5))


def test_second_derivatives_of_compositions() -> None:
    with tl.enable_x64():
        x = arr(X, "float64")
        second = tl.grad(lambda x: tnp.sum(tl.grad(poly)(x)))(x)
        check(second, "float64", False, 6 * np.asarray(X), rtol=1e-12)
        # d2/dx2 exp(tanh(x)) = exp(t) * ((1 - t^2)^2 - 2 t (1 - t^2))
        f = lambda x: tnp.sum(tnp.exp(tnp.tanh(x)))  # noqa: E731
        t = np.tanh(X)
        want = np.exp(t) * ((1 - t * t) ** 2 - 2 * t * (1 - t * t))
        check(tl.grad(lambda x: tnp.sum(tl.grad(f)(x)))(x), "float64", False, want)


def test_hessian_vector_product_forward_over_reverse() -> None:
    with tl.enable_x64():
        x, v = arr(X, "float64"), arr([1.0, -2.0, 0.5], "float64")
        _, hv = tl.jvp(tl.grad(poly), (x,), (v,))
        check(hv, "float64", False, 6 * np.asarray(X) * [1.0, -2.0, 0.5], rtol=1e-12)


# -- jvp against finite differences -----------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, y: tnp.sin(x) * tnp.exp(y),
        lambda x, y: tnp.logaddexp(x, y) / (1.0 + y * y),
        lambda x, y: tnp.arctan2(x, y + 3.0) + tnp.tanh(x * y),
        lambda x, y: tnp.cumsum(x * y, axis=0) - tnp.mean(x),
        lambda x, y: tnp.hypot(x, y) * tnp.sqrt(tnp.square(y) + 1.0),
    ],
    ids=["sin_exp", "logaddexp", "arctan2_tanh", "cumsum_mean", "hypot_sqrt"],
)
def test_jvp_against_finite_differences(fn: Any) -> None:
    rng = np.random.default_rng(0)
    with tl.enable_x64():
        x, y = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3))
        u, v = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3))
        out, t = tl.jvp(
            fn,
            (arr(x, "float64"), arr(y, "float64")),
            (arr(u, "float64"), arr(v, "float64")),
        )
        check(
            out, "float64", False, np.asarray(fn(arr(x, "float64"), arr(y, "float64")))
        )
        h = 1e-6
        plus = np.asarray(fn(arr(x + h * u, "float64"), arr(y + h * v, "float64")))
        minus = np.asarray(fn(arr(x - h * u, "float64"), arr(y - h * v, "float64")))
        check(t, "float64", False, (plus - minus) / (2 * h), rtol=1e-7, atol=1e-8)


def test_jvp_checks_its_tangents() -> None:
    with pytest.raises(TypeError, match="tuples or lists"):
        tl.jvp(tnp.sin, arr(X), arr(X))
    with pytest.raises(ValueError, match="same tree structure"):
        tl.jvp(lambda a, b: a * b, (arr(X), arr(X)), (arr(X),))
    with pytest.raises(ValueError, match="primal's shape and dtype"):
        tl.jvp(tnp.sin, (arr(X),), (arr(X, "bfloat16"),))


# -- stop_gradient ----------------------------------------------------------------


def test_stop_gradient() -> None:
    check(tl.grad(lambda x: x * tl.stop_gradient(x))(arr(3.0)), "float32", False, 3.0)
    # Outside any transformation: the value itself, pytrees leaf by leaf.
    tree = {"a": arr(X), "b": [arr(1.0, "bfloat16")]}
    stopped = tl.stop_gradient(tree)
    check(stopped["a"], "float32", False, X)
    check(stopped["b"][0], "bfloat16", False, 1.0)
    # Through a second derivative: the inner constant stays constant.
    g2 = tl.grad(tl.grad(lambda x: tl.stop_gradient(x * x) * x))(arr(2.0))
    check(g2, "float32", False, 0.0)
    _, t = tl.jvp(lambda x: tl.stop_gradient(tnp.sin(x)) + x, (arr(X),), (arr(X),))
    check(t, "float32", False, X)


# -- jit ------------------------------------------------------------------------


def test_jit_of_grad_and_grad_of_jit_equal_grad() -> None:
    def f(x: Any, y: Any) -> Any:
        return tnp.sum(tnp.tanh(x * y) + tnp.exp(x) / (1.0 + y * y))

    x, y = arr([0.5, -1.0, 0.25]), arr([2.0, 0.5, -1.5])
    want = tl.grad(f, argnums=(0, 1))(x, y)
    for got in (
        tl.jit(tl.grad(f, argnums=(0, 1)))(x, y),
        tl.grad(tl.jit(f), argnums=(0, 1))(x, y),
    ):
        for g, w in zip(got, want, strict=True):
            check(g, "float32", False, np.asarray(w), rtol=1e-6)


def test_jit_of_grad_traces_once_and_replays() -> None:
    calls = []

    def f(x: Any) -> Any:
        calls.append(1)
        return tnp.sum(tnp.sin(x) * x)

    df = tl.jit(tl.grad(f))
    for values in ([0.5, 1.0], [2.0, -1.0], [0.0, 3.0]):
        x = np.asarray(values, np.float32)
        check(df(arr(values)), "float32", False, np.sin(x) + x * np.cos(x))
    assert len(calls) == 1
    df(arr([1.0, 2.0, 3.0]))  # a new shape: traced again
    assert len(calls) == 2
    check(df(arr([1.0, 2.0], "bfloat16")), "bfloat16", False)  # a new dtype
    assert len(calls) == 3


def test_value_and_grad_under_jit_keeps_dtypes() -> None:
    f = tl.jit(tl.value_and_grad(lambda w, x: tnp.sum(w.astype("bfloat16") * x)))
    value, g = f(arr([1.0, 2.0]), arr([3.0, 4.0], "bfloat16"))
    check(value, "bfloat16", False, 11.0)
    check(g, "float32", False, [3.0, 4.0])


# -- tracers and values -----------------------------------------------------------


def _mlp_loss(w: Any, b: Any, x: Any) -> Any:
    # Namespace calls only: indexing and shape functions bind primitives,
    # which have no linearization of their own to remember.
    h = tnp.maximum(x @ w + b, 0.0)
    logits = h * 1.5
    shifted = logits - tnp.max(logits, axis=1, keepdims=True)
    logp = shifted - tnp.log(tnp.sum(tnp.exp(shifted), axis=1, keepdims=True))
    return -tnp.mean(logp * _FIRST) + 1e-3 * tnp.sum(w**2)


_FIRST = tnp.asarray([1.0, 0.0, 0.0, 0.0, 0.0])


def test_reverse_mode_remembers_calls_it_has_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Namespace calls seen before run from their remembered linearization,
    and a backward pass seen before from its remembered program: at other
    values, the gradients are those computed directly, bit for bit, dtypes
    and weak flags included."""
    rng = np.random.default_rng(7)

    def operands() -> list[Any]:
        return [
            tnp.asarray(rng.standard_normal(s).astype(np.float32))
            for s in ((4, 5), (5,), (6, 4))
        ]

    first, second = operands(), operands()
    g = tl.value_and_grad(_mlp_loss, argnums=(0, 1, 2))
    monkeypatch.setattr(ad, "REMEMBER_AFTER", None)
    want = g(*second)
    monkeypatch.setattr(ad, "REMEMBER_AFTER", 1)
    ad._REMEMBERED.clear()
    ad._BACKWARDS.clear()
    for _ in range(3):  # (calls remembered, then the backward pass)
        g(*first)
    assert any(type(v) is ad._Linearized for v in ad._REMEMBERED.values())
    assert any(type(v) is ad._Transposed for v in ad._BACKWARDS.values())
    got = g(*second)
    for w, r in zip(tree.leaves(want), tree.leaves(got), strict=True):
        assert (r.dtype, r.weak_type) == (w.dtype, w.weak_type)
        np.testing.assert_array_equal(np.asarray(r), np.asarray(w))


def test_remembered_calls_keep_checking_values() -> None:
    """A remembered signature still refuses a value its dtype cannot hold."""
    h = tnp.ones(3, "float16")

    def f(x: Any, h: Any) -> Any:
        return tnp.sum(x * h)

    for v in (1.0, 2.0, 3.0):
        assert float(tl.grad(f)(v, h)) == 3.0
    with pytest.raises(OverflowError, match=r"1000000\.0, which does not fit"):
        tl.grad(f)(1e6, h)


def test_leaked_tracer_raises_unexpected_tracer_error() -> None:
    leaked: list[Any] = []

    def f(x: Any) -> Any:
        leaked.append(x)
        return tnp.sum(x * x)

    tl.grad(f)(arr(X))
    with pytest.raises(tl.UnexpectedTracerError, match="used after it returned"):
        tnp.sin(leaked[0])
    with pytest.raises(tl.UnexpectedTracerError):
        leaked[0] * 2.0


def test_numpy_conversion_inside_grad_raises_a_clear_error() -> None:
    def f(x: Any) -> Any:
        return tnp.sum(tnp.asarray(np.asarray(x) * 2.0))

    with pytest.raises(
        TypeError, match=r"converted to a NumPy array, which would drop its derivative"
    ):
        tl.grad(f)(arr(X))


def test_python_control_flow_on_values_under_grad() -> None:
    def f(x: Any) -> Any:
        if x > 0:
            return x * x
        return -3.0 * x

    check(tl.grad(f)(arr(2.0)), "float32", False, 4.0)
    check(tl.grad(f)(arr(-1.0)), "float32", False, -3.0)

    def halve_until_small(x: Any) -> Any:
        steps = 0
        while tnp.abs(x) > 1.0:
            x = x / 2.0
            steps += 1
        return x * float(steps + 1)

    check(tl.grad(halve_until_small)(arr(5.0)), "float32", False, 4.0 / 8.0)
    g = tl.grad(lambda x: x[0] * 3.0 if float(x[1]) > 0 else x[0])(arr([1.0, 2.0]))
    check(g, "float32", False, [3.0, 0.0])


def test_tracers_inside_grad_are_arrays() -> None:
    seen: list[Any] = []

    def f(x: Any) -> Any:
        seen.append((isinstance(x, tl.Array), x.shape, x.dtype, x.weak_type))
        return tnp.sum(x)

    tl.grad(f)(arr([[1.0, 2.0]], "float16"))
    assert seen == [(True, (1, 2), np.dtype("float16"), False)]


# -- vjp and jvp agree (property) ------------------------------------------------

UNARY = {
    "sin": tnp.sin,
    "tanh": tnp.tanh,
    "arctan": tnp.arctan,
    "exp_sin": lambda a: tnp.exp(tnp.sin(a)),
    "log1p_sq": lambda a: tnp.log1p(a * a),
    "sqrt_1p_sq": lambda a: tnp.sqrt(1.0 + tnp.square(a)),
    "neg": tnp.negative,
    # Functions along an axis, of arrays that have one.
    "sum_last": lambda a: tnp.sum(a, axis=-1, keepdims=True) if a.ndim else a,
    "mean_first": lambda a: tnp.mean(a, axis=0, keepdims=True) if a.ndim else a,
    "cumsum": lambda a: tnp.cumsum(a, axis=-1) if a.ndim else a,
    "flip": lambda a: tnp.flip(a, axis=-1) if a.ndim else a,
}
BINARY = {
    "add": tnp.add,
    "subtract": tnp.subtract,
    "multiply": tnp.multiply,
    "maximum": tnp.maximum,
    "minimum": tnp.minimum,
    "logaddexp": tnp.logaddexp,
    "arctan2": lambda a, b: tnp.arctan2(a, 2.0 + tnp.cos(b)),
    "divide": lambda a, b: a / (2.0 + tnp.sin(b)),
    "hypot": lambda a, b: tnp.hypot(a, 1.0 + b * b),
}


@st.composite
def programs(draw: st.DrawFn) -> tuple[list[Any], list[tuple[str, str, int, int]]]:
    """Inputs of mutually broadcastable shapes and a chain of steps, each
    applying a unary function to one earlier value or a binary function to
    two."""
    n = draw(st.integers(1, 3))
    shapes = draw(
        hnp.mutually_broadcastable_shapes(
            num_shapes=n, min_dims=0, max_dims=3, max_side=3
        )
    )
    inputs = [
        draw(hnp.arrays(np.float64, s, elements=st.floats(-2, 2, width=64)))
        for s in shapes.input_shapes
    ]
    steps = []
    for k in range(draw(st.integers(1, 6))):
        available = n + k
        if draw(st.booleans()):
            name = draw(st.sampled_from(sorted(UNARY)))
            steps.append(("u", name, draw(st.integers(0, available - 1)), 0))
        else:
            name = draw(st.sampled_from(sorted(BINARY)))
            i = draw(st.integers(0, available - 1))
            j = draw(st.integers(0, available - 1))
            steps.append(("b", name, i, j))
    return inputs, steps


def _run(steps: list[tuple[str, str, int, int]]) -> Any:
    def f(*xs: Any) -> Any:
        values = list(xs)
        for kind, name, i, j in steps:
            if kind == "u":
                values.append(UNARY[name](values[i]))
            else:
                values.append(BINARY[name](values[i], values[j]))
        return values[-1] + 0.0 * values[0]  # the output sees every input

    return f


@settings(max_examples=150, deadline=None)
@given(programs(), st.integers(0, 2**32 - 1))
def test_vjp_and_jvp_agree(program: Any, seed: int) -> None:
    """``<v, J u>`` computed forwards (jvp) equals ``<J^T v, u>`` computed
    backwards (vjp), on random compositions of differentiable functions."""
    inputs, steps = program
    f = _run(steps)
    rng = np.random.default_rng(seed)
    with tl.enable_x64():
        primals = [arr(x, "float64") for x in inputs]
        tangents = [arr(rng.uniform(-1, 1, x.shape), "float64") for x in inputs]
        out, t = tl.jvp(f, primals, tangents)
        v = arr(rng.uniform(-1, 1, out.shape), "float64")
        out2, f_vjp = tl.vjp(f, *primals)
        cts = f_vjp(v)
        assert out.shape == out2.shape and t.shape == out.shape
        forward = float(np.sum(np.asarray(v) * np.asarray(t)))
        backward = sum(
            float(np.sum(np.asarray(c) * np.asarray(u)))
            for c, u in zip(cts, tangents, strict=True)
        )
        for c, x in zip(cts, primals, strict=True):
            assert (c.shape, c.dtype) == (x.shape, x.dtype)
        assert math.isclose(forward, backward, rel_tol=1e-9, abs_tol=1e-9), (
            forward,
            backward,
        )


def _no_backward_program(*args: Any) -> None:
    return None  # (every remembered block transposed by its own program)


@settings(max_examples=100, deadline=None)
@given(programs(), st.integers(0, 2**32 - 1), st.sampled_from(["float32", "float64"]))
def test_remembered_vjp_equals_the_direct_one(
    program: Any, seed: int, dtype: str
) -> None:
    """On random compositions, ``vjp`` and ``linearize`` run from
    linearizations remembered on other values give what they give
    directly, bit for bit (primal output, cotangents, tangent): with each
    remembered call transposed by its own program, and with the whole
    backward pass remembered. Values used several times gather cotangents
    from several calls, in an order that float addition does not forgive."""
    inputs, steps = program
    f = _run(steps)
    rng = np.random.default_rng(seed)
    saved = ad.REMEMBER_AFTER, ad._remembered_backward
    try:
        with tl.enable_x64():
            primals = [arr(x, dtype) for x in inputs]
            others = [arr(rng.uniform(-2, 2, x.shape), dtype) for x in inputs]
            tangents = [arr(rng.uniform(-1, 1, x.shape), dtype) for x in inputs]

            def both() -> list[Any]:
                out, f_vjp = tl.vjp(f, *primals)
                return [out, *f_vjp(v), tl.linearize(f, *primals)[1](*tangents)]

            ad.REMEMBER_AFTER = None
            v = arr(rng.uniform(-1, 1, tl.eval_shape(f, *primals).shape), dtype)
            want = both()
            ad.REMEMBER_AFTER = 0
            ad._remembered_backward = _no_backward_program  # type: ignore[assignment]
            _, other_vjp = tl.vjp(f, *others)
            other_vjp(v)
            by_blocks = both()
            ad._remembered_backward = saved[1]
            for _ in range(2):  # (calls, then the backward pass, remembered)
                _, other_vjp = tl.vjp(f, *others)
                other_vjp(v)
            whole = both()
    finally:
        ad.REMEMBER_AFTER, ad._remembered_backward = saved
    for got in (by_blocks, whole):
        for w, g in zip(want, got, strict=True):
            assert (g.dtype, g.weak_type, g.shape) == (w.dtype, w.weak_type, w.shape)
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_a_remembered_gradient_has_the_bits_of_the_first() -> None:
    """A value used by several remembered calls gathers their cotangents in
    the order of a direct backward pass, whichever way each call is
    transposed (``tanh(w)`` twice: the second call is remembered within
    the first gradient already)."""
    w = arr(np.linspace(-1, 1, 7))
    g = tl.grad(lambda w: tnp.sum(tnp.tanh(w) + tnp.tanh(w) * w))
    saved = ad.REMEMBER_AFTER
    try:
        ad.REMEMBER_AFTER = None
        direct = np.asarray(g(w))
    finally:
        ad.REMEMBER_AFTER = saved
    ad._REMEMBERED.clear()
    ad._BACKWARDS.clear()
    for _ in range(4):  # (direct, by blocks, recorded, remembered whole)
        np.testing.assert_array_equal(np.asarray(g(w)), direct)
    # The same in any order of the arguments' uses, and with one passed twice.
    h = tl.grad(lambda w: tnp.sum(tnp.tanh(w) * w + w * tnp.tanh(w) + w * w))
    ad.REMEMBER_AFTER = None
    try:
        direct = np.asarray(h(w))
    finally:
        ad.REMEMBER_AFTER = saved
    for _ in range(4):
        np.testing.assert_array_equal(np.asarray(h(w)), direct)


def test_linearize_gives_jvp_with_the_primal_computed_once() -> None:
    def f(x: Any, n: Any) -> Any:
        return {"a": tnp.sin(x) * n, "b": tnp.sum(x**2)}

    x = tnp.asarray([0.5, 1.0, -2.0], dtype="float32")
    n = tnp.asarray(3, dtype="int32")
    value, f_jvp = tl.linearize(f, x, n)
    t = tnp.asarray([1.0, -0.5, 0.25], dtype="float32")
    zero = np.zeros((), tl.float0)
    expected_value, expected_tangent = tl.jvp(f, (x, n), (t, zero))
    got = f_jvp(t, zero)
    for k in ("a", "b"):
        np.testing.assert_array_equal(
            np.asarray(value[k]), np.asarray(expected_value[k])
        )
        np.testing.assert_allclose(
            np.asarray(got[k]), np.asarray(expected_tangent[k]), rtol=1e-6
        )
        assert got[k].dtype == expected_tangent[k].dtype
    # Linear in the tangents, and traceable.
    doubled = tl.jit(lambda t: f_jvp(t, zero))(t * 2)
    np.testing.assert_allclose(
        np.asarray(doubled["a"]), 2 * np.asarray(got["a"]), rtol=1e-6
    )
    with pytest.raises(ValueError, match="structure"):
        f_jvp(t)


def test_remembering_holds_no_large_arrays() -> None:
    """What reverse mode remembers keeps no array that running directly
    would free (here, zeros the size of the operand)."""
    import gc
    import tracemalloc

    x = tnp.ones(1_000_000, "float32")  # 4 MB
    keep = x > 0.5

    def f(x: Any) -> Any:
        return tnp.sum(tnp.where(keep, x, 0.0))

    g = tl.grad(f)
    tracemalloc.start()
    try:
        for _ in range(4):
            np.testing.assert_array_equal(np.asarray(g(x)), 1.0)
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 1_000_000


def test_what_is_remembered_holds_bounded_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Beyond its limit of bytes (constants and programs), what reverse mode
    remembers is forgotten, then remembered anew: it never holds more."""
    bound = 64_000  # (a few remembered calls)
    monkeypatch.setattr(ad, "_HELD_MAX", bound)
    monkeypatch.setattr(ad, "_held", 0)
    monkeypatch.setattr(ad, "_REMEMBERED", {})
    monkeypatch.setattr(ad, "_BACKWARDS", {})

    def f(x: Any) -> Any:
        return tnp.sum(tnp.sin(x * 1.5) * 2.5)

    remembered = 0
    before, forgotten = 0, False
    for n in range(1, 40):
        x = tnp.ones(n, "float32")
        for _ in range(3):
            np.testing.assert_allclose(
                np.asarray(tl.grad(f)(x)), 3.75 * np.cos(1.5), rtol=1e-6
            )
            kept = [v for v in ad._REMEMBERED.values() if type(v) is ad._Linearized]
            remembered += len(kept)
            held = sum(v.held for v in kept)
            for key, v in ad._BACKWARDS.items():
                if type(v) is ad._Transposed:
                    lins = {id(k): k for k in key if type(k) is ad._Linearized}
                    held += v.held + sum(k.held for k in lins.values())
            assert held <= bound
            forgotten = forgotten or held < before
            before = held
    assert remembered  # (remembered, forgotten, remembered anew)
    assert forgotten


def _long_loss(n: int) -> Any:
    """A loss of ``n`` namespace calls (elementwise, on a small array)."""

    def loss(x: Any) -> Any:
        for _ in range(n):
            x = tnp.sin(x)
        return tnp.sum(x)

    return loss


def test_remembered_programs_count_toward_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long loss differentiated at many new shapes leaves compiled programs
    (code, globals, per-equation structures) behind each time: they count
    toward the bound, so the memory held by what is remembered stays under
    it (as tracemalloc measures it)."""
    import gc
    import tracemalloc

    bound = 1 << 19
    monkeypatch.setattr(ad, "_HELD_MAX", bound)
    monkeypatch.setattr(ad, "_held", 0)
    monkeypatch.setattr(ad, "_REMEMBERED", {})
    monkeypatch.setattr(ad, "_BACKWARDS", {})
    g = tl.grad(_long_loss(300))
    g(tnp.ones(1, "float32"))  # (first-use caches)
    gc.collect()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        most = 0
        for n in range(2, 14):
            x = tnp.ones(n, "float32")
            for _ in range(3):  # (calls, then the backward pass, remembered)
                g(x)
            gc.collect()
            most = max(most, tracemalloc.get_traced_memory()[0] - start)
    finally:
        tracemalloc.stop()
    # Unbounded, the programs of 12 shapes held about 2 MB.
    assert most < bound + (1 << 18)


def test_a_long_backward_pass_is_not_compiled_whole() -> None:
    """Remembering the backward pass of a loss of thousands of operations
    costs no spike: its third gradient (when a backward pass is
    remembered) needs about the memory of its first."""
    import tracemalloc

    g = tl.grad(_long_loss(5000))
    x = tnp.ones(8, "float32")
    peaks: list[int] = []
    tracemalloc.start()
    try:
        for _ in range(3):
            tracemalloc.reset_peak()
            start, _ = tracemalloc.get_traced_memory()
            got = g(x)
            peaks.append(tracemalloc.get_traced_memory()[1] - start)
    finally:
        tracemalloc.stop()
    # Compiled whole, the third took 40 MB at once.
    assert peaks[2] < 2 * peaks[0] + (1 << 20), peaks
    want = tl.grad(_long_loss(5000))(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_jit_of_grad_holds_no_constant_of_the_arguments_size() -> None:
    """The seed of ``grad`` and what the transpose rules make of it
    (ones broadcast to the argument's shape) are computed by the program:
    the jitted gradient holds nothing of the argument's size."""
    import gc
    import tracemalloc

    x = tnp.ones((1000, 1000), "float32")  # 4 MB
    keep = x > 0.5
    g = tl.jit(tl.grad(lambda x: tnp.sum(tnp.where(keep, tnp.sin(x) * 2, 0.0))))
    tracemalloc.start()
    try:
        got = g(x)
        del got
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 1_000_000
    assert "const:float32[1000,1000]" not in repr(g.program(x))
    np.testing.assert_array_equal(np.asarray(g(x)), 2 * np.cos(np.float32(1)))


@pytest.mark.parametrize(
    "f",
    [
        lambda x: tnp.sum(tnp.sin(x) * 2),
        lambda x: tnp.mean(x**2),
        lambda x: tnp.sum(tnp.tanh(x @ tnp.ones((50_000, 2), "float32"))),
        lambda x: tnp.sum(tnp.where(x > 0, x, 0.0)),
        lambda x: tnp.sum(x[1:, ::2] * 3.0) + tnp.max(x[7]),
    ],
    ids=["sum", "mean", "matmul", "where", "indexing"],
)
def test_eval_shape_of_grad_allocates_nothing(f: Any) -> None:
    """The gradient of a function of 10 GB of float32, evaluated for its
    shape only: nothing of that size is made."""
    import tracemalloc

    x = tl.ShapeDtypeStruct((50_000, 50_000), "float32")
    tracemalloc.start()
    try:
        got = tl.eval_shape(tl.grad(f), x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got == x
    assert peak < 4_000_000
