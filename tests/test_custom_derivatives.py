"""``custom_jvp`` and ``custom_vjp``: functions whose derivatives are rules
of their own, as in JAX (the examples of JAX's documentation), on every
path: eagerly, under jit, eval_shape, jvp, vjp, grad and their nestings."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax, nn
from typelattice._tracing import ad, tree


@tl.custom_jvp
def log1pexp(x: Any) -> Any:
    return tnp.log(1.0 + tnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (x_dot,) = primals, tangents
    return log1pexp(x), (1 - 1 / (1 + tnp.exp(x))) * x_dot


def naive_log1pexp(x: Any) -> Any:
    return tnp.log(1.0 + tnp.exp(x))


def stable_derivative(x: float) -> Any:
    """The rule's value, computed eagerly as it is written."""
    e = tnp.exp(tnp.float32(x))
    return 1 - 1 / (1 + e)


def test_called_normally_it_runs_the_function() -> None:
    x = tnp.float32(3.0)
    assert log1pexp(x).item() == naive_log1pexp(x).item()
    assert tl.jit(log1pexp)(x).item() == naive_log1pexp(x).item()
    assert tl.eval_shape(log1pexp, 3.0) == tl.eval_shape(naive_log1pexp, 3.0)


def test_jit_records_the_functions_primitives() -> None:
    f = tl.custom_jvp(lambda x: lax.sin(x))
    f.defjvp(lambda p, t: (f(*p), t[0]))
    assert str(tl.make_jaxpr(f)(tnp.zeros(2))) == str(
        tl.make_jaxpr(lax.sin)(tnp.zeros(2))
    )


def test_the_rule_gives_the_derivative() -> None:
    # The function's own derivative is nan at 100 (inf / inf); the rule's 1.
    assert np.isnan(tl.grad(naive_log1pexp)(tnp.float32(100.0)).item())
    g = tl.grad(log1pexp)(tnp.float32(100.0))
    assert (g.dtype, g.item()) == (np.dtype("float32"), 1.0)
    for x in (-3.0, 0.0, 0.5, 10.0):
        want = stable_derivative(x).item()
        assert tl.grad(log1pexp)(tnp.float32(x)).item() == want
        assert tl.jit(tl.grad(log1pexp))(tnp.float32(x)).item() == want
        assert tl.grad(tl.jit(log1pexp))(tnp.float32(x)).item() == want
        _, t = tl.jvp(log1pexp, (tnp.float32(x),), (tnp.float32(1.0),))
        assert t.item() == want
        _, pullback = tl.vjp(log1pexp, tnp.float32(x))
        assert pullback(tnp.float32(1.0))[0].item() == want


def test_second_derivatives_differentiate_the_rule() -> None:
    x = tnp.float32(0.5)
    s = 1 / (1 + tnp.exp(-x))
    got = tl.grad(tl.grad(log1pexp))(x)
    np.testing.assert_allclose(got.item(), (s * (1 - s)).item(), rtol=1e-6)
    assert tl.jit(tl.grad(tl.grad(log1pexp)))(x).item() == got.item()


def test_arrays_and_weak_arguments() -> None:
    x = tnp.asarray([-1.0, 0.0, 100.0])
    g = tl.grad(lambda x: log1pexp(x).sum())(x)
    assert g.dtype == np.dtype("float32")
    np.testing.assert_array_equal(np.asarray(g), np.asarray(stable_derivative(x)))
    weak = tl.grad(log1pexp)(100.0)  # a Python float: weak
    assert (weak.item(), weak.weak_type) == (1.0, True)


def test_nondiff_argnums_are_passed_first() -> None:
    @functools.partial(tl.custom_jvp, nondiff_argnums=(0,))
    def app(f: Any, x: Any) -> Any:
        return f(x)

    @app.defjvp
    def app_jvp(f: Any, primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return f(x), 3.0 * t  # (a made-up derivative, to see it used)

    assert tl.grad(app, argnums=1)(tnp.sin, tnp.float32(0.0)).item() == 3.0
    assert app(tnp.sin, tnp.float32(0.0)).item() == 0.0


def test_keyword_arguments_are_resolved() -> None:
    @tl.custom_jvp
    def scale(x: Any, factor: Any) -> Any:
        return x * factor

    scale.defjvp(lambda p, t: (scale(*p), t[0] * p[1] + t[1] * p[0]))
    got = tl.grad(lambda x: scale(x, factor=tnp.float32(4.0)))(tnp.float32(2.0))
    assert got.item() == 4.0


def test_defjvps_sums_one_rule_per_argument() -> None:
    f = tl.custom_jvp(lambda x, y: x * y)
    f.defjvps(lambda t, out, x, y: 2.0 * t * y, lambda t, out, x, y: 5.0 * t)
    gx, gy = tl.grad(f, argnums=(0, 1))(tnp.float32(2.0), tnp.float32(3.0))
    assert (gx.item(), gy.item()) == (6.0, 5.0)


def test_integer_arguments_get_float0_tangents() -> None:
    seen: list[Any] = []

    @tl.custom_jvp
    def shift(x: Any, n: Any) -> Any:
        return x + n

    @shift.defjvp
    def shift_jvp(primals: Any, tangents: Any) -> Any:
        seen.append(tangents[1].dtype)
        return shift(*primals), tangents[0]

    assert tl.grad(shift)(tnp.float32(1.0), tnp.int32(2)).item() == 1.0
    assert seen == [tl.float0]


# -- errors of custom_jvp --------------------------------------------------------


def test_a_tangent_of_the_wrong_dtype_is_refused() -> None:
    f = tl.custom_jvp(lambda x: x)
    f.defjvp(lambda p, t: (p[0], t[0].astype("float16")))
    with pytest.raises(TypeError, match=r"Expected float32\[\] \(tangent type of "):
        tl.grad(f)(tnp.float32(1.0))


def test_a_tangent_of_the_wrong_shape_is_refused() -> None:
    f = tl.custom_jvp(lambda x: x)
    f.defjvp(lambda p, t: (p[0], tnp.zeros(3)))
    with pytest.raises(TypeError, match=r"got float32\[3\]"):
        tl.jvp(f, (tnp.float32(1.0),), (tnp.float32(1.0),))


def test_a_rule_must_return_a_pair_of_one_structure() -> None:
    f = tl.custom_jvp(lambda x: x)
    f.defjvp(lambda p, t: p[0])
    with pytest.raises(TypeError, match="must produce a pair"):
        tl.grad(f)(tnp.float32(1.0))
    f.defjvp(lambda p, t: ((p[0], p[0]), t[0]))
    with pytest.raises(TypeError, match="equal container"):
        tl.grad(lambda x: f(x)[0])(tnp.float32(1.0))


def test_no_rule_defined() -> None:
    f = tl.custom_jvp(lambda x: x)
    assert f(tnp.float32(1.0)).item() == 1.0
    with pytest.raises(AttributeError, match="No JVP defined for custom_jvp"):
        tl.grad(f)(tnp.float32(1.0))


# -- custom_vjp --------------------------------------------------------------------


@tl.custom_vjp
def clip_gradient(lo: Any, hi: Any, x: Any) -> Any:
    return x  # identity function


def clip_gradient_fwd(lo: Any, hi: Any, x: Any) -> Any:
    return x, (lo, hi)  # save bounds as residuals


def clip_gradient_bwd(res: Any, g: Any) -> Any:
    lo, hi = res
    return (None, None, tnp.clip(g, lo, hi))  # None: a zero cotangent


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def test_custom_vjp_runs_the_function_when_called() -> None:
    x = tnp.asarray([0.0, 2.0])
    assert tl.jit(lambda x: clip_gradient(-0.75, 0.75, x))(x).tolist() == [0.0, 2.0]
    assert clip_gradient(-0.75, 0.75, x).tolist() == [0.0, 2.0]


def test_custom_vjp_gives_the_backward_rules_cotangent() -> None:
    def f(x: Any) -> Any:
        return 3.0 * clip_gradient(-0.75, 0.75, x)

    for x in (0.1, 1.0, -2.0):
        xs = tnp.float32(x)
        for g in (tl.grad(f), tl.jit(tl.grad(f)), tl.grad(tl.jit(f))):
            got = g(xs)
            assert (got.dtype, got.item()) == (np.dtype("float32"), 0.75)
    # JAX's example: the gradient of sin through the clip.
    got = tl.grad(lambda x: tnp.sin(clip_gradient(-0.75, 0.75, x)))(tnp.float32(2.0))
    assert got.item() == tnp.clip(tnp.cos(tnp.float32(2.0)), -0.75, 0.75).item()
    vals, pullback = tl.vjp(lambda x: clip_gradient(-1.0, 1.0, x), tnp.ones(3))
    assert pullback(tnp.asarray([0.5, 2.0, -3.0]))[0].tolist() == [0.5, 1.0, -1.0]


def test_custom_vjp_residuals_and_pytrees() -> None:
    @tl.custom_vjp
    def f(xs: Any) -> Any:
        return {"p": xs[0] * xs[1]}

    def fwd(xs: Any) -> Any:
        return f(xs), xs

    def bwd(res: Any, ct: Any) -> Any:
        a, b = res
        return ((ct["p"] * b * 10.0, ct["p"] * a * 10.0),)

    f.defvjp(fwd, bwd)
    ga, gb = tl.grad(lambda a, b: f((a, b))["p"], argnums=(0, 1))(
        tnp.float32(2.0), tnp.float32(3.0)
    )
    assert (ga.item(), gb.item()) == (30.0, 20.0)


def test_custom_vjp_refuses_forward_mode() -> None:
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        tl.jvp(
            lambda x: clip_gradient(-1.0, 1.0, x),
            (tnp.float32(0.0),),
            (tnp.float32(1.0),),
        )


def test_custom_vjp_backward_rule_errors() -> None:
    f = tl.custom_vjp(lambda x: x)
    f.defvjp(lambda x: (x, None), lambda res, g: g)  # not a tuple
    with pytest.raises(TypeError, match="Custom VJP bwd rule must produce"):
        tl.grad(f)(tnp.float32(1.0))
    f.defvjp(lambda x: (x, None), lambda res, g: (tnp.zeros(3),))
    with pytest.raises(
        ValueError, match=r"type float32\[3\] corresponding to an input"
    ):
        tl.grad(f)(tnp.float32(1.0))
    g = tl.custom_vjp(lambda x: x)
    with pytest.raises(AttributeError, match="No VJP defined for custom_vjp"):
        tl.grad(g)(tnp.float32(1.0))


def test_custom_vjp_nondiff_argnums() -> None:
    @functools.partial(tl.custom_vjp, nondiff_argnums=(0,))
    def scaled(k: float, x: Any) -> Any:
        return x

    scaled.defvjp(lambda k, x: (x, None), lambda k, res, g: (k * g,))
    assert tl.grad(lambda x: scaled(4.0, x))(tnp.float32(1.0)).item() == 4.0


def _direct_and_remembered(g: Any, *args: Any) -> tuple[list[Any], list[Any]]:
    """``g(*args)`` computed directly, then from what reverse mode
    remembers (after calls on other values of the same shapes)."""
    saved = ad.REMEMBER_AFTER
    try:
        ad.REMEMBER_AFTER = None
        direct = tree.leaves(g(*args))
    finally:
        ad.REMEMBER_AFTER = saved
    ad._REMEMBERED.clear()
    ad._BACKWARDS.clear()
    others = [a * 0.5 - 0.25 if isinstance(a, tl.Array) else a for a in args]
    for _ in range(3):  # (seen, remembered, the backward pass remembered)
        g(*others)
    return direct, tree.leaves(g(*args))


def _assert_same_bits(want: list[Any], got: list[Any]) -> None:
    for w, r in zip(want, got, strict=True):
        assert (r.dtype, r.weak_type, r.shape) == (w.dtype, w.weak_type, w.shape)
        assert np.asarray(r).tobytes() == np.asarray(w).tobytes()


def test_reverse_mode_remembers_a_defjvps_call() -> None:
    """A function with a rule of ``defjvps`` called again at the same
    shapes runs from its remembered linearization: its gradients are those
    computed directly, bit for bit (ReLU's zero derivative at 0 included)."""
    x = tnp.asarray(np.array([-1.5, -0.0, 0.0, 0.5, 2.0], np.float32))
    w = tnp.asarray(np.array([0.25, -1.0, 3.0, -2.0, 1.0], np.float32))

    def loss(x: Any, w: Any) -> Any:
        return tnp.sum(nn.relu(x * w) * w + nn.relu(x - 0.5))

    g = tl.value_and_grad(loss, argnums=(0, 1))
    direct, remembered = _direct_and_remembered(g, x, w)
    _assert_same_bits(direct, remembered)
    kinds = [
        type(v) for k, v in ad._REMEMBERED.items() if isinstance(k[0], tl.custom_jvp)
    ]
    assert ad._Linearized in kinds


def test_remembered_defjvps_rules_of_several_arguments() -> None:
    """Each argument's rule, a Python scalar argument and an argument
    without a rule, remembered as computed directly."""
    f = tl.custom_jvp(lambda x, y, s: x * y + s)
    f.defjvps(lambda t, out, x, y, s: t * y, lambda t, out, x, y, s: t * x, None)
    x = tnp.asarray(np.linspace(-1, 1, 6, dtype=np.float32))
    y = tnp.asarray(np.linspace(2, -3, 6, dtype=np.float32))
    g = tl.grad(lambda x, y: tnp.sum(f(x, y, 1.5) * f(y, x, -0.0)), argnums=(0, 1))
    direct, remembered = _direct_and_remembered(g, x, y)
    _assert_same_bits(direct, remembered)


def test_a_defjvps_rule_reading_values_runs_directly() -> None:
    """A rule that reads its primal values in Python (which a remembered
    linearization cannot) is still called on every gradient."""

    @tl.custom_jvp
    def clipped(x: Any) -> Any:
        return tnp.clip(x, -1.0, 1.0)

    def rule(t: Any, out: Any, x: Any) -> Any:
        return t * (1.0 if float(tnp.max(tnp.abs(x))) < 1.0 else 0.5)

    clipped.defjvps(rule)
    g = tl.grad(lambda x: tnp.sum(clipped(x)))
    small = tnp.asarray(np.array([0.5, -0.25], np.float32))
    large = tnp.asarray(np.array([3.0, -0.25], np.float32))
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(g(small)), [1.0, 1.0])
        np.testing.assert_array_equal(np.asarray(g(large)), [0.5, 0.5])


def test_second_derivatives_through_a_remembered_defjvps_call() -> None:
    """A gradient of a gradient differentiates the rule, whether the inner
    call is remembered or not."""
    f = tl.custom_jvp(tnp.sin)
    f.defjvps(lambda t, out, x: t * tnp.cos(x))
    x = tnp.asarray(np.linspace(-1, 1, 5, dtype=np.float32))
    gg = tl.grad(lambda x: tnp.sum(tl.grad(lambda y: tnp.sum(f(y) * y))(x)))
    direct, remembered = _direct_and_remembered(gg, x)
    _assert_same_bits(direct, remembered)


def test_remembered_defjvps_calls_hold_bounded_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Remembered ``defjvps`` calls count toward the bytes and the number
    of signatures reverse mode remembers: at ever new shapes it forgets and
    remembers anew, never holding more, and the gradients stay right."""
    bound = 48_000
    monkeypatch.setattr(ad, "_HELD_MAX", bound)
    monkeypatch.setattr(ad, "_held", 0)
    monkeypatch.setattr(ad, "_REMEMBERED", {})
    monkeypatch.setattr(ad, "_BACKWARDS", {})
    g = tl.grad(lambda x: tnp.sum(nn.relu(x) * 2.5))
    remembered, forgotten, before = 0, False, 0
    for n in range(1, 30):
        x = tnp.asarray(np.linspace(-1, 1, n, dtype=np.float32))
        for _ in range(3):
            np.testing.assert_array_equal(
                np.asarray(g(x)), np.where(np.asarray(x) > 0, 2.5, 0.0)
            )
            kept = [v for v in ad._REMEMBERED.values() if type(v) is ad._Linearized]
            remembered += sum(
                1
                for k, v in ad._REMEMBERED.items()
                if isinstance(k[0], tl.custom_jvp) and type(v) is ad._Linearized
            )
            assert len(ad._REMEMBERED) <= ad._REMEMBERED_MAX
            held = sum(v.held for v in kept)
            for key, v in ad._BACKWARDS.items():
                if type(v) is ad._Transposed:
                    lins = {id(k): k for k in key if type(k) is ad._Linearized}
                    held += v.held + sum(k.held for k in lins.values())
            assert held <= bound
            forgotten = forgotten or held < before
            before = held
    assert remembered
    assert forgotten
