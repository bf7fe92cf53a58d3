"""``checkpoint`` (``remat``): the same values and derivatives, with the
residuals of reverse mode computed again in the backward pass instead of
kept; its policies; under jit, the program's second run kept apart."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice._tracing import tree
from typelattice._tracing.trace import _shared

policies = tl.checkpoint_policies


def layer(p: tuple[Any, Any], x: Any) -> Any:
    w, b = p
    return tnp.tanh(x @ w + b)


def make_loss(wrap: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    step = wrap(layer)

    def loss(params: list[tuple[Any, Any]], x: Any) -> Any:
        for p in params:
            x = step(p, x)
        return tnp.mean(x * x)

    return loss


def model(layers: int, width: int, batch: int) -> tuple[list[Any], Any]:
    rng = np.random.default_rng(0)
    scale = np.float32(1 / np.sqrt(width))
    params = [
        (
            tnp.asarray(rng.standard_normal((width, width), np.float32) * scale),
            tnp.asarray(rng.standard_normal(width, np.float32) * 0.1),
        )
        for _ in range(layers)
    ]
    return params, tnp.asarray(rng.standard_normal((batch, width), np.float32))


WRAPS: dict[str, Callable[[Any], Any]] = {
    "checkpoint": tl.checkpoint,
    "remat": tl.remat,
    "no_cse": lambda f: tl.checkpoint(f, prevent_cse=False),
    "dots": lambda f: tl.checkpoint(f, policy=policies.dots_saveable),
    "no_batch_dots": lambda f: tl.checkpoint(
        f, policy=policies.dots_with_no_batch_dims_saveable
    ),
    "everything": lambda f: tl.checkpoint(f, policy=policies.everything_saveable),
    "nothing": lambda f: tl.checkpoint(f, policy=policies.nothing_saveable),
}


def close(got: Any, want: Any) -> None:
    got_leaves = tree.flatten(got)[0]
    want_leaves = tree.flatten(want)[0]
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert (g.dtype, g.weak_type, g.shape) == (w.dtype, w.weak_type, w.shape)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("wrap", list(WRAPS))
def test_values_and_gradients_are_the_functions(wrap: str) -> None:
    params, x = model(4, 8, 5)
    plain, remat = make_loss(lambda f: f), make_loss(WRAPS[wrap])
    close(remat(params, x), plain(params, x))
    close(tl.jit(remat)(params, x), plain(params, x))
    close(tl.grad(remat)(params, x), tl.grad(plain)(params, x))
    close(
        tl.grad(remat, argnums=(0, 1))(params, x),
        tl.grad(plain, argnums=(0, 1))(params, x),
    )
    close(tl.jit(tl.grad(remat))(params, x), tl.grad(plain)(params, x))
    close(tl.grad(tl.jit(remat))(params, x), tl.grad(plain)(params, x))
    t = tree.tree_map(tnp.ones_like, params)
    close(
        tl.jvp(lambda p: remat(p, x), (params,), (t,)),
        tl.jvp(lambda p: plain(p, x), (params,), (t,)),
    )
    _, lin = tl.linearize(lambda p: remat(p, x), params)
    close(lin(t), tl.jvp(lambda p: plain(p, x), (params,), (t,))[1])


def test_second_derivatives() -> None:
    f = tl.checkpoint(lambda x: tnp.sin(tnp.sin(x)))
    g = lambda x: tnp.sin(tnp.sin(x))  # noqa: E731
    for point in (0.3, tnp.float32(1.2)):
        close(tl.grad(tl.grad(f))(point), tl.grad(tl.grad(g))(point))
        close(tl.jit(tl.grad(tl.grad(f)))(point), tl.grad(tl.grad(g))(point))


def test_nested_checkpoints() -> None:
    inner = tl.checkpoint(lambda x: tnp.exp(tnp.sin(x)))
    outer = tl.checkpoint(lambda x: inner(x) * inner(2 * x))
    plain = lambda x: tnp.exp(tnp.sin(x)) * tnp.exp(tnp.sin(2 * x))  # noqa: E731
    x = tnp.asarray([0.1, 0.5, -1.0])
    close(tl.grad(lambda x: outer(x).sum())(x), tl.grad(lambda x: plain(x).sum())(x))
    close(
        tl.jit(tl.grad(lambda x: outer(x).sum()))(x),
        tl.grad(lambda x: plain(x).sum())(x),
    )


def test_pytrees_keywords_static_arguments_and_integer_outputs() -> None:
    def f(d: dict[str, Any], n: int, *, scale: Any) -> Any:
        y = d["a"]
        for _ in range(n):  # (n is a Python int: static)
            y = tnp.sin(y) * d["b"][0]
        return {"y": y * scale, "count": tnp.int32(n)}, [d["b"][1] * 2]

    remat = tl.checkpoint(f, static_argnums=(1,))
    d = {"a": tnp.asarray([0.5, 1.5]), "b": (tnp.float32(2.0), tnp.float32(3.0))}

    def loss(fun: Any, d: Any, scale: Any) -> Any:
        out, (z,) = fun(d, 3, scale=scale)
        assert out["count"].dtype == np.int32
        return out["y"].sum() + z

    close(remat(d, 3, scale=2.0), f(d, 3, scale=2.0))
    close(
        tl.grad(loss, argnums=(1, 2))(remat, d, 2.0),
        tl.grad(loss, argnums=(1, 2))(f, d, 2.0),
    )
    y, f_vjp = tl.vjp(lambda d: remat(d, 2, scale=1.0)[0]["y"], d)
    y0, f0_vjp = tl.vjp(lambda d: f(d, 2, scale=1.0)[0]["y"], d)
    close(y, y0)
    close(f_vjp(tnp.ones(2)), f0_vjp(tnp.ones(2)))


def test_closures() -> None:
    c = tnp.asarray([1.0, 2.0])
    # A closure over a constant array.
    f = tl.checkpoint(lambda x: tnp.sin(x * c))
    close(
        tl.grad(lambda x: f(x).sum())(0.5), tl.grad(lambda x: tnp.sin(x * c).sum())(0.5)
    )

    # A closure over a value being differentiated: its derivative flows too.
    def g(w: Any) -> Any:
        return tl.checkpoint(lambda x: tnp.sin(x * w))(c).sum()

    close(tl.grad(g)(0.7), tl.grad(lambda w: tnp.sin(c * w).sum())(0.7))
    close(tl.jit(tl.grad(g))(0.7), tl.grad(lambda w: tnp.sin(c * w).sum())(0.7))


def held_after_forward(loss: Callable[..., Any], params: Any, x: Any) -> int:
    """The bytes allocated by ``vjp``'s forward pass that its result holds
    (the linear record's residuals, and the output)."""
    gc.collect()
    tracemalloc.start()
    try:
        kept = tl.vjp(loss, params, x)
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del kept
    return held


def test_reverse_mode_keeps_no_residual_of_a_checkpointed_function() -> None:
    # 8 layers of 128 x 64 activations (32 KiB each): without checkpoint
    # the record keeps each layer's input and tanh's derivative (and the
    # products), with it each layer's input only.
    params, x = model(8, 64, 128)
    plain = held_after_forward(make_loss(lambda f: f), params, x)
    remat = held_after_forward(make_loss(tl.checkpoint), params, x)
    dots = held_after_forward(make_loss(WRAPS["dots"]), params, x)
    activation = 128 * 64 * 4
    assert plain > 16 * activation
    assert remat < 0.6 * plain
    assert remat < 10 * activation
    # dots_saveable keeps the products too: one more activation a layer.
    assert remat + 7 * activation < dots < plain


def test_under_jit_the_program_holds_no_residual() -> None:
    params, x = model(8, 16, 64)
    programs = {
        name: tl.jit(tl.grad(make_loss(wrap))).program(params, x)
        for name, wrap in {"plain": lambda f: f, **WRAPS}.items()
    }
    peaks = {name: p.live_peak() for name, p in programs.items()}
    assert peaks["checkpoint"] < 0.7 * peaks["plain"]
    assert peaks["everything"] == peaks["plain"]

    def count(name: str, prim: str) -> int:
        """The equations of ``prim`` the program runs (repeats merged)."""
        p = programs[name]
        return sum(
            e.prim.name == prim for e in _shared(p.eqns, p.outs) if hasattr(e, "prim")
        )

    # The backward pass runs each layer's tanh again, after a barrier.
    assert count("plain", "tanh") == 8
    assert count("checkpoint", "tanh") == 16
    assert count("everything", "tanh") == 8
    # dots_saveable: the products are not computed again.
    assert count("dots", "dot_general") == count("plain", "dot_general")
    assert count("checkpoint", "dot_general") == count("plain", "dot_general") + 8
    jaxpr = str(tl.make_jaxpr(tl.grad(tl.checkpoint(tnp.sin)))(1.0))
    assert "optimization_barrier" in jaxpr
    jaxpr = str(tl.make_jaxpr(tl.grad(tl.checkpoint(tnp.sin, prevent_cse=False)))(1.0))
    assert "optimization_barrier" not in jaxpr


def test_forward_mode_and_eager_calls_run_the_function() -> None:
    calls: list[str] = []

    def f(x: Any) -> Any:
        calls.append(type(x).__name__)
        return tnp.sin(x)

    remat = tl.checkpoint(f)
    remat(tnp.float32(1.0))
    tl.jvp(remat, (tnp.float32(1.0),), (tnp.float32(1.0),))
    assert len(calls) == 2
    calls.clear()
    tl.grad(remat)(tnp.float32(1.0))
    assert len(calls) == 2  # the forward pass, and the backward pass's


def test_policy_signature_and_errors() -> None:
    seen: list[Any] = []

    def policy(prim: Any, *avals: Any, **params: Any) -> bool:
        seen.append((prim.name, [a.shape for a in avals], sorted(params)))
        return False

    w = tnp.ones((3, 2))
    tl.grad(lambda x: tl.checkpoint(lambda x: (x @ w).sum(), policy=policy)(x))(
        tnp.ones((4, 3))
    )
    assert any(
        name == "dot_general"
        and shapes == [(4, 3), (3, 2)]
        and "dimension_numbers" in p
        for name, shapes, p in seen
    )
    with pytest.raises(ValueError, match="static_argnums"):
        tl.grad(tl.checkpoint(lambda x, n: x * n, static_argnums=(2,)))(1.0, 2)


def test_named_values_kept_by_name_policies() -> None:
    from typelattice.ad_checkpoint import checkpoint_name

    def f(x: Any) -> Any:
        h = checkpoint_name(tnp.tanh(x), "h")
        g = checkpoint_name(tnp.exp(h), "g")
        return (g * g).sum()

    def runs(policy: Any) -> tuple[int, int]:
        """How many times the program computes tanh and exp."""
        fun = tl.jit(tl.value_and_grad(tl.checkpoint(f, policy=policy)))
        p = fun.program(tnp.ones(3))
        names = [getattr(e, "prim", None) for e in _shared(p.eqns, p.outs)]
        named = [getattr(prim, "name", None) for prim in names]
        return named.count("tanh"), named.count("exp")

    cp = policies
    x = tnp.asarray([0.1, 0.2, 0.3])
    want = tl.grad(f)(x)
    for policy in (
        cp.save_only_these_names("h"),
        cp.save_any_names_but_these("h"),
        cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("g")),
    ):
        close(tl.grad(tl.checkpoint(f, policy=policy))(x), want)
    # tanh (making h) and exp (making g) run twice unless their output is kept.
    assert runs(None) == (2, 2)
    assert runs(cp.everything_saveable) == (1, 1)
    assert runs(cp.save_only_these_names("h")) == (1, 2)
    assert runs(cp.save_any_names_but_these("h")) == (2, 1)
    assert checkpoint_name(x, "h") is x
