"""Control flow (lax.cond, switch, while_loop, fori_loop, scan, map,
associative_scan): eager, jit, eval_shape, grad and jvp agree; the errors;
pytrees; nesting."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax
from typelattice._tracing import tree
from typelattice._tracing.closed import eval_closed, trace_closed
from typelattice._tracing.primitive import ShapedArray


def close(a: Any, b: Any, tol: float = 1e-5) -> None:
    """Same dtype, shape and weak flag; values within ``tol``."""
    a_leaves, b_leaves = tree.flatten(a)[0], tree.flatten(b)[0]
    assert len(a_leaves) == len(b_leaves)
    for x, y in zip(a_leaves, b_leaves, strict=True):
        assert x.dtype == y.dtype
        assert x.shape == y.shape
        assert x.weak_type == y.weak_type
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


RNG = np.random.RandomState(0)
W = tnp.asarray((RNG.randn(4, 4) * 0.4).astype("float32"))
U = tnp.asarray((RNG.randn(4, 3) * 0.4).astype("float32"))
XS = tnp.asarray(RNG.randn(6, 3).astype("float32"))
H0 = tnp.asarray(RNG.randn(4).astype("float32"))


def rnn(w: Any, h0: Any, xs: Any) -> Any:
    def step(h: Any, x: Any) -> Any:
        h = tnp.tanh(w @ h + U @ x)
        return h, h.sum()

    h, ys = lax.scan(step, h0, xs)
    return (h * h).sum() + (ys * ys).sum()


def rnn_unrolled(w: Any, h0: Any, xs: Any) -> Any:
    h, total = h0, 0.0
    for i in range(xs.shape[0]):
        h = tnp.tanh(w @ h + U @ xs[i])
        total = total + h.sum() ** 2
    return (h * h).sum() + total


# -- scan ---------------------------------------------------------------------


def test_scan_eager_jit_eval_shape_agree() -> None:
    eager = rnn(W, H0, XS)
    close(eager, rnn_unrolled(W, H0, XS))
    close(tl.jit(rnn)(W, H0, XS), eager)
    shape = tl.eval_shape(rnn, W, H0, XS)
    assert (shape.shape, shape.dtype) == ((), np.dtype("float32"))


def test_scan_carry_and_stacked_outputs() -> None:
    carry, ys = lax.scan(lambda c, x: (c + x, c * x), 0.0, tnp.arange(1.0, 4.0))
    close(carry, tnp.float32(6))
    close(ys, tnp.asarray([0.0, 2.0, 9.0], "float32"))


def test_scan_reverse_keeps_the_order_of_xs() -> None:
    xs = tnp.arange(1, 5)
    carry, ys = lax.scan(lambda c, x: (c * 10 + x, c), 0, xs, reverse=True)
    assert int(carry) == 4321
    assert ys.tolist() == [432, 43, 4, 0]
    jc, jy = tl.jit(
        lambda xs: lax.scan(lambda c, x: (c * 10 + x, c), 0, xs, reverse=True)
    )(xs)
    assert int(jc) == 4321 and jy.tolist() == [432, 43, 4, 0]


def test_scan_length_without_xs() -> None:
    carry, ys = lax.scan(lambda c, _: (c * 2, c), tnp.int8(1), None, length=5)
    assert carry.dtype == np.dtype("int8") and int(carry) == 32
    assert ys.tolist() == [1, 2, 4, 8, 16] and ys.dtype == np.dtype("int8")


@pytest.mark.parametrize("unroll", [1, 2, 3, True, False])
def test_scan_unroll_gives_identical_values(unroll: Any) -> None:
    def f(xs: Any) -> Any:
        return lax.scan(lambda c, x: (c * 0.5 + x, c), 0.0, xs, unroll=unroll)

    ref = f(XS[:, 0])
    for got in (f(XS[:, 0]), tl.jit(f)(XS[:, 0])):
        close(got, ref, tol=0)


def test_scan_pytrees_of_carry_and_xs() -> None:
    init = {"n": 0, "acc": (tnp.zeros(2, "float32"), tnp.int8(0))}
    xs = {"a": tnp.ones((3, 2), "float32"), "b": [tnp.arange(3, dtype="int8")]}

    def step(c: Any, x: Any) -> Any:
        acc, count = c["acc"]
        new = {"n": c["n"] + 1, "acc": (acc + x["a"], count + x["b"][0])}
        return new, {"twice": x["b"][0] * 2}

    carry, ys = lax.scan(step, init, xs)
    assert int(carry["n"]) == 3
    assert carry["acc"][0].tolist() == [3.0, 3.0]
    assert carry["acc"][1].dtype == np.dtype("int8") and int(carry["acc"][1]) == 3
    assert ys["twice"].tolist() == [0, 2, 4]
    jcarry, jys = tl.jit(lambda i, x: lax.scan(step, i, x))(init, xs)
    close((jcarry, jys), (carry, ys))


def test_scan_zero_length() -> None:
    init = tnp.ones(2, "float32")
    carry, ys = lax.scan(lambda c, x: (c + x, x * 2), init, tnp.zeros((0, 2)))
    assert carry.tolist() == [1.0, 1.0]
    assert ys.shape == (0, 2) and ys.dtype == np.dtype("float32")


def test_scan_body_runs_once_per_trace() -> None:
    calls: list[int] = []

    def step(c: Any, x: Any) -> Any:
        calls.append(1)
        return c + x, None

    # As in JAX: traced once per abstract signature, eagerly or under jit.
    lax.scan(step, 0.0, tnp.arange(100.0))
    assert len(calls) == 1
    lax.scan(step, 0.0, tnp.arange(100.0))
    tl.jit(lambda xs: lax.scan(step, 0.0, xs))(tnp.arange(10.0))
    assert len(calls) == 1
    lax.scan(step, tnp.float32(0), tnp.arange(100.0))  # (not weak)
    assert len(calls) == 2

    def body(i: Any, c: Any) -> Any:
        calls.append(1)
        return c + i

    for _ in range(3):
        lax.fori_loop(0, 4, body, 0)
        lax.map(lambda x: x, tnp.arange(3))
    assert len(calls) == 3
    tl.jit(lambda s, xs: lax.scan(lambda c, x: (c + s * x, None), 0.0, xs))(
        tnp.float32(2), tnp.arange(3.0)
    )


def test_scan_closes_over_jit_and_differentiated_values() -> None:
    def f(scale: Any, xs: Any) -> Any:
        return lax.scan(lambda c, x: (c + scale * x, None), 0.0, xs)[0]

    xs = tnp.arange(4.0)
    close(tl.jit(f)(tnp.float32(2), xs), tnp.float32(12))
    close(tl.grad(f)(tnp.float32(2), xs), tnp.float32(6))
    close(tl.jit(tl.grad(f))(tnp.float32(2), xs), tnp.float32(6))


# -- differentiation of scan -------------------------------------------------------


def test_grad_of_scan_matches_the_unrolled_loop() -> None:
    for argnums in (0, 1, 2):
        got = tl.grad(rnn, argnums=argnums)(W, H0, XS)
        want = tl.grad(rnn_unrolled, argnums=argnums)(W, H0, XS)
        close(got, want, tol=1e-4)


def test_grad_of_jit_of_scan_and_jit_of_grad() -> None:
    want = tl.grad(rnn_unrolled)(W, H0, XS)
    close(tl.grad(tl.jit(rnn))(W, H0, XS), want, tol=1e-4)
    close(tl.jit(tl.grad(rnn))(W, H0, XS), want, tol=1e-4)


def test_jvp_of_scan_eager_and_jit() -> None:
    t = tnp.ones_like(W)
    want = tl.jvp(lambda w: rnn_unrolled(w, H0, XS), (W,), (t,))
    close(tl.jvp(lambda w: rnn(w, H0, XS), (W,), (t,)), want, tol=1e-4)
    jitted = tl.jit(lambda w, t: tl.jvp(lambda w: rnn(w, H0, XS), (w,), (t,)))
    close(jitted(W, t), want, tol=1e-4)


def test_jvp_of_scan_carry_tangent_from_the_body_only() -> None:
    # The carry starts constant; its tangent appears through the closure.
    def f(a: Any) -> Any:
        return lax.scan(lambda c, x: (c * a + x, c), tnp.float32(1), tnp.arange(3.0))

    (c, ys), (dc, dys) = tl.jvp(f, (tnp.float32(2),), (tnp.float32(1),))
    # c1 = a c0 + 0, c2 = a c1 + 1, c3 = a c2 + 2 with c0 = 1, a = 2
    assert float(c) == 12.0 and ys.tolist() == [1.0, 2.0, 5.0]
    assert float(dc) == 13.0 and dys.tolist() == [0.0, 1.0, 4.0]


def test_grad_of_reverse_scan_and_of_ys() -> None:
    def f(xs: Any) -> Any:
        c, ys = lax.scan(lambda c, x: (c * x, c + x), 1.0, xs, reverse=True)
        return c + (ys * ys).sum()

    def unrolled(xs: Any) -> Any:
        c, total = 1.0, 0.0
        for i in reversed(range(3)):
            total = total + (c + xs[i]) ** 2
            c = c * xs[i]
        return c + total

    xs = tnp.asarray([0.5, -1.5, 2.0], "float32")
    close(tl.grad(f)(xs), tl.grad(unrolled)(xs), tol=1e-5)


def test_second_derivative_of_scan() -> None:
    def f(a: Any) -> Any:
        return lax.scan(lambda c, _: (c * a, None), tnp.float32(1), None, length=3)[0]

    assert float(tl.grad(tl.grad(f))(tnp.float32(2))) == pytest.approx(12.0)


# -- fori_loop and map ---------------------------------------------------------------


def test_fori_loop_static_bounds_is_a_scan_and_differentiates() -> None:
    def f(x: Any) -> Any:
        return lax.fori_loop(0, 3, lambda i, c: c * x + i, x)

    jaxpr = str(tl.make_jaxpr(f)(tnp.float32(2)))
    assert "scan[" in jaxpr and "while[" not in jaxpr
    # c0 = x, c1 = x^2, c2 = x^3 + 1, c3 = x^4 + x + 2
    assert float(f(tnp.float32(2))) == 20.0
    assert float(tl.grad(f)(tnp.float32(2))) == pytest.approx(33.0)


def test_fori_loop_traced_bounds_is_a_while_loop() -> None:
    def f(n: Any, x: Any) -> Any:
        return lax.fori_loop(0, n, lambda i, c: c + i, x)

    jaxpr = str(tl.make_jaxpr(f)(5, 0))
    assert "while[" in jaxpr
    assert int(tl.jit(f)(5, 0)) == 10
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        tl.jit(tl.grad(f, argnums=1))(5, 1.0)


def test_fori_loop_result_types_follow_jax() -> None:
    out = lax.fori_loop(0, 3, lambda i, c: c + i, 0.0)
    assert (out.dtype, out.weak_type, float(out)) == (np.dtype("float32"), True, 3.0)
    out = lax.fori_loop(tnp.int8(0), 3, lambda i, c: c + i, 0)
    assert (out.dtype, out.weak_type) == (np.dtype("int32"), True)
    with pytest.raises(TypeError, match="must have equal types, got int32 and float32"):
        lax.fori_loop(0, 3.0, lambda i, c: c, 0)
    with pytest.raises(ValueError, match="Can only use `unroll`"):
        tl.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c, 0, unroll=2))(3)


def test_map_and_batch_size() -> None:
    xs = tnp.arange(5)
    assert lax.map(lambda x: x * 2, xs).tolist() == [0, 2, 4, 6, 8]
    assert lax.map(lambda x: x * 2, xs, batch_size=2).tolist() == [0, 2, 4, 6, 8]
    out = lax.map(lambda p: (p[0] + p[1], p[0]), (xs, xs))
    assert out[0].tolist() == [0, 2, 4, 6, 8]


# -- cond and switch ---------------------------------------------------------------


def test_cond_eager_jit_and_result_types() -> None:
    def f(p: Any, x: Any) -> Any:
        return lax.cond(p, lambda x: x * 2, lambda x: x - 1, x)

    for p in (True, False):
        eager = f(p, tnp.int8(5))
        assert eager.dtype == np.dtype("int8")
        assert int(eager) == (10 if p else 4)
        close(tl.jit(f)(p, tnp.int8(5)), eager)
    # the weak flag of false_fun's result, as in JAX
    out = lax.cond(True, lambda: 1.0, lambda: tnp.float32(1))
    assert out.dtype == np.dtype("float32") and not out.weak_type
    out = lax.cond(False, lambda: tnp.float32(1), lambda: 1.0)
    assert out.dtype == np.dtype("float32") and out.weak_type
    out = lax.cond(1, lambda: 1.0, lambda: 2.0)
    assert out.weak_type and float(out) == 1.0
    assert float(lax.cond(0.0, lambda: 1.0, lambda: 2.0)) == 2.0


def test_cond_operand_keyword() -> None:
    assert int(lax.cond(True, lambda x: x + 1, lambda x: x, operand=1)) == 2
    with pytest.raises(TypeError, match="if 'operand' keyword is passed"):
        lax.cond(True, lambda x: x, lambda x: x, 1, operand=2)


def test_grad_and_jvp_of_cond() -> None:
    def f(x: Any) -> Any:
        return lax.cond(x > 0, lambda x: x * x * x, lambda x: -x, x)

    assert float(tl.grad(f)(tnp.float32(2))) == 12.0
    assert float(tl.grad(f)(tnp.float32(-2))) == -1.0
    assert float(tl.jit(tl.grad(f))(tnp.float32(2))) == 12.0
    assert float(tl.jit(tl.grad(f))(tnp.float32(-2))) == -1.0
    out, t = tl.jvp(f, (tnp.float32(2),), (tnp.float32(1),))
    assert (float(out), float(t)) == (8.0, 12.0)
    out, t = tl.jit(lambda x: tl.jvp(f, (x,), (tnp.float32(1),)))(tnp.float32(-3))
    assert (float(out), float(t)) == (3.0, -1.0)


def test_switch_clamps_its_index() -> None:
    branches = [lambda x: x - 1, lambda x: x * 10, lambda x: x + 100]
    assert [int(lax.switch(i, branches, 4)) for i in (-5, 0, 1, 2, 9)] == [
        3,
        3,
        40,
        104,
        104,
    ]
    f = tl.jit(lambda i: lax.switch(i, branches, 4))
    assert [int(f(i)) for i in (-5, 1, 9)] == [3, 40, 104]
    assert float(lax.switch(0, [lambda: 7.0])) == 7.0


def test_switch_and_cond_errors() -> None:
    with pytest.raises(TypeError, match=r"Index type must be an integer, got 1.5"):
        lax.switch(1.5, [lambda: 1.0, lambda: 2.0])
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(1, [])
    with pytest.raises(TypeError, match=r"Branch index must be scalar, got \[1\]"):
        lax.switch(tnp.asarray([1]), [lambda: 1.0, lambda: 2.0])
    with pytest.raises(TypeError, match=r"Pred must be a scalar, got \[ True\]"):
        lax.cond(tnp.asarray([True]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError) as info:
        lax.cond(True, lambda: (1.0, tnp.float32(1)), lambda: (2.0, tnp.float16(1)))
    message = str(info.value)
    assert message.startswith("cond branches must have equal output types")
    assert (
        "The output of true_fun at path [1] has type float32[] but the "
        "corresponding output of false_fun has type float16[], so the dtypes do "
        "not match." in message
    )
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.cond(True, lambda: 1.0, lambda: (1.0,))


def test_cond_closes_over_values_of_each_branch() -> None:
    def f(a: Any, b: Any, p: Any) -> Any:
        return lax.cond(p, lambda: a * 2, lambda: b + 1)

    for p in (True, False):
        want = 6.0 if p else 5.0
        assert float(f(tnp.float32(3), tnp.float32(4), p)) == want
        assert float(tl.jit(f)(tnp.float32(3), tnp.float32(4), p)) == want
    g = tl.grad(f, argnums=(0, 1))(tnp.float32(3), tnp.float32(4), True)
    assert (float(g[0]), float(g[1])) == (2.0, 0.0)


# -- while_loop --------------------------------------------------------------------


def test_while_loop_eager_jit_eval_shape() -> None:
    def f(x: Any) -> Any:
        return lax.while_loop(
            lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * x), (0, x)
        )

    i, v = f(tnp.float32(1.5))
    assert int(i) == 10 and v.dtype == np.dtype("float32")
    close(tl.jit(f)(tnp.float32(1.5)), (i, v))
    shapes = tl.eval_shape(f, tnp.float32(1.5))
    assert shapes[0].dtype == np.dtype("int32") and shapes[1].shape == ()


def test_while_loop_forward_mode_and_reverse_mode_error() -> None:
    def f(x: Any) -> Any:
        return lax.while_loop(lambda c: c < 10, lambda c: c * 2, x)

    out, t = tl.jvp(f, (tnp.float32(1),), (tnp.float32(1),))
    assert (float(out), float(t)) == (16.0, 16.0)
    out, t = tl.jit(lambda x: tl.jvp(f, (x,), (tnp.float32(1),)))(tnp.float32(3))
    assert (float(out), float(t)) == (12.0, 4.0)
    with pytest.raises(ValueError) as info:
        tl.grad(f)(tnp.float32(1))
    assert str(info.value) == (
        "Reverse-mode differentiation does not work for lax.while_loop or "
        "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
        "using fori_loop with static start/stop."
    )


def test_while_loop_weak_carry_takes_the_body_type() -> None:
    out = lax.while_loop(lambda c: c < 10, lambda c: c + 1.0, 0)
    assert (out.dtype, out.weak_type, float(out)) == (np.dtype("float32"), False, 10.0)
    out = lax.while_loop(lambda c: c < 10, lambda c: c + 1, 0)
    assert (out.dtype, out.weak_type) == (np.dtype("int32"), True)


def test_while_loop_errors() -> None:
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, but"):
        lax.while_loop(lambda c: c, lambda c: c + 1, 0)
    with pytest.raises(TypeError) as info:
        lax.while_loop(lambda c: c < 10, lambda c: c.astype("int8"), tnp.int32(0))
    assert str(info.value) == (
        "while_loop body function carry input and carry output must have equal "
        "types, but they differ:\n\nThe input carry c has type int32[] but the "
        "corresponding output carry component has type int8[], so the dtypes do "
        "not match.\n\nRevise the function so that all output types match the "
        "corresponding input types."
    )


# -- carry checks --------------------------------------------------------------------


def test_scan_carry_type_errors_name_the_component() -> None:
    with pytest.raises(TypeError) as info:
        lax.scan(
            lambda c, x: ((c[0].astype("int8"), c[1]), x),
            (tnp.float32(0), 1),
            tnp.arange(3),
        )
    assert "The input carry component c[0] has type float32[] but the " in str(
        info.value
    )
    with pytest.raises(TypeError, match="must have the same pytree structure"):
        lax.scan(lambda c, x: ([c[0]], x), (1.0,), tnp.arange(3))
    with pytest.raises(TypeError, match="scan body output must be a pair"):
        lax.scan(lambda c, x: c, 1.0, tnp.zeros(3))


def test_scan_weak_init_is_promoted_as_jax_does() -> None:
    carry, _ = lax.scan(lambda c, x: (c + tnp.float32(1), x), 0.0, tnp.arange(3))
    assert (carry.dtype, carry.weak_type, float(carry)) == (
        np.dtype("float32"),
        False,
        3.0,
    )
    carry, _ = lax.scan(lambda c, x: (c + tnp.int8(1), x), 0, tnp.arange(3))
    assert (carry.dtype, carry.weak_type) == (np.dtype("int8"), False)
    with pytest.raises(TypeError, match="has type int8.. but the corresponding"):
        lax.scan(lambda c, x: (c + 1.0, x), tnp.int8(0), tnp.arange(3))


def test_scan_length_errors() -> None:
    with pytest.raises(ValueError, match="no values to scan over and `length`"):
        lax.scan(lambda c, x: (c, x), 1.0, None)
    with pytest.raises(ValueError, match="different leading axis sizes: 3, 4"):
        lax.scan(lambda c, x: (c, x), 1.0, [tnp.zeros(3), tnp.zeros(4)])
    with pytest.raises(ValueError, match="`length` argument of 4 which disagrees"):
        lax.scan(lambda c, x: (c, x), 1.0, tnp.zeros(3), length=4)
    with pytest.raises(ValueError, match="`unroll` must be a `bool`"):
        lax.scan(lambda c, x: (c, x), 1.0, tnp.zeros(3), unroll=-1)


# -- nesting and records -------------------------------------------------------------


def test_scan_inside_cond_inside_jit() -> None:
    def f(p: Any, xs: Any) -> Any:
        def summed(xs: Any) -> Any:
            return lax.scan(lambda c, x: (c + x, None), 0.0, xs)[0]

        return lax.cond(p, summed, lambda xs: xs[0], xs)

    xs = tnp.arange(1.0, 5.0)
    assert float(tl.jit(f)(True, xs)) == 10.0
    assert float(tl.jit(f)(False, xs)) == 1.0
    assert tl.grad(f, argnums=1)(True, xs).tolist() == [1.0, 1.0, 1.0, 1.0]


def test_nested_scans_and_their_gradient() -> None:
    def f(m: Any) -> Any:
        def row(c: Any, r: Any) -> Any:
            inner = lax.scan(lambda a, v: (a * v, None), tnp.float32(1), r)[0]
            return c + inner, inner

        return lax.scan(row, tnp.float32(0), m)

    m = tnp.asarray([[1.0, 2.0], [3.0, 4.0]], "float32")
    total, prods = f(m)
    assert float(total) == 14.0 and prods.tolist() == [2.0, 12.0]
    close(tl.jit(f)(m), (total, prods))
    g = tl.grad(lambda m: f(m)[0])(m)
    assert g.tolist() == [[2.0, 1.0], [4.0, 3.0]]


def test_make_jaxpr_shows_the_sub_records() -> None:
    text = str(
        tl.make_jaxpr(lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs))(
            tnp.zeros(3)
        )
    )
    assert "scan[" in text and "jaxpr={ lambda ; " in text
    assert "num_carry=1" in text and "length=3" in text
    text = str(tl.make_jaxpr(lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0))(True))
    assert "cond[" in text and "branches=(" in text


# -- associative_scan -----------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_associative_scan_is_a_cumulative_combination(n: int) -> None:
    x = tnp.arange(1, n + 1)
    assert (
        lax.associative_scan(lax.add, x).tolist()
        == np.cumsum(np.arange(1, n + 1)).tolist()
    )
    assert lax.associative_scan(lax.add, x, reverse=True).tolist() == (
        np.cumsum(np.arange(1, n + 1)[::-1])[::-1].tolist()
    )


def test_associative_scan_pytree_and_axis() -> None:
    a = tnp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))

    def combine(x: Any, y: Any) -> Any:
        return (x[0] + y[0], lax.max(x[1], y[1]))

    s, m = lax.associative_scan(combine, (a, -a), axis=1)
    np.testing.assert_allclose(
        np.asarray(s), np.cumsum(np.arange(12.0).reshape(3, 4), 1)
    )
    np.testing.assert_allclose(
        np.asarray(m), -np.arange(12.0).reshape(3, 4)[:, :1] + 0 * np.asarray(m)
    )
    with pytest.raises(ValueError, match="must have the same first dimension"):
        lax.associative_scan(lax.add, (tnp.zeros(3), tnp.zeros(4)))
    g = tl.grad(lambda a: lax.associative_scan(lax.mul, a).sum())(
        tnp.asarray([1.0, 2.0, 3.0])
    )
    assert g.tolist() == [9.0, 4.0, 2.0]


def test_grad_inside_a_scan_body() -> None:
    def newton(x0: Any) -> Any:
        def f(x: Any) -> Any:
            return x * x - 2.0

        def step(x: Any, _: Any) -> Any:
            return x - f(x) / tl.grad(f)(x), None

        return lax.scan(step, x0, None, length=5)[0]

    for fn in (newton, tl.jit(newton)):
        assert float(fn(tnp.float32(1.0))) == pytest.approx(2**0.5, rel=1e-6)


def test_a_body_may_return_a_value_it_closes_over() -> None:
    def g(w: Any) -> Any:
        return lax.scan(lambda c, x: (w * 1.0, x), w, tnp.arange(2.0))[0]

    assert float(tl.grad(g)(tnp.float32(3.0))) == 1.0
    assert float(tl.jit(g)(tnp.float32(3.0))) == 3.0
    carry, ys = lax.scan(
        lambda c, x: (c, tnp.asarray([1, 2], "int8")), 0, None, length=2
    )
    assert ys.tolist() == [[1, 2], [1, 2]] and ys.dtype == np.dtype("int8")


def test_a_closed_program_runs_again_under_another_trace() -> None:
    f32 = ShapedArray((3,), np.dtype("float32"))
    closed, outer, _ = trace_closed(
        lambda x: lax.scan(lambda c, y: (c + y, c), 0.0, x), [f32], "f"
    )
    assert outer == []
    xs = tnp.arange(3.0)
    want = closed.run(np.asarray(xs))
    got = tl.jit(lambda x: eval_closed(closed, x))(xs)
    assert [np.asarray(g).tolist() for g in got] == [w.tolist() for w in want]
    assert "scan[" in str(tl.make_jaxpr(lambda x: eval_closed(closed, x))(xs))


def test_grad_of_scan_whose_body_enlarges_a_closed_over_value() -> None:
    # The body joins two closed-over parameters (a result larger than each):
    # under grad that join is the gradient's computation, not the body's.
    xs = tnp.ones((4, 2), "float32")

    def loss(w: Any) -> Any:
        def body(h: Any, x: Any) -> Any:
            joined = tnp.concatenate([w, 2 * w])
            h = tnp.tanh(h * joined[:2] + x)
            return h, h

        return lax.scan(body, tnp.zeros(2, "float32"), xs)[1].sum()

    def by_hand(w: Any) -> Any:
        h, total = tnp.zeros(2, "float32"), 0.0
        for t in range(4):
            h = tnp.tanh(h * w + xs[t])
            total = total + h.sum()
        return total

    w = tnp.asarray([0.5, -0.25], "float32")
    want = tl.grad(by_hand)(w)
    for got in (tl.grad(loss)(w), tl.jit(tl.grad(loss))(w)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)
