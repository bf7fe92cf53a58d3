"""vmap of the control flow primitives (``scan``, ``while``, ``cond``) and
of the functions built on them: each batched result is the per-example
results stacked, in values, dtype and weak flag, eagerly and under ``jit``;
and the batching rules compose with differentiation, ``jit`` and ``vmap``.

``golden/vmap_control.json`` was recorded from JAX 0.10 by
``golden/make_vmap_control_golden.py`` (carries and branch results of mixed
dtypes and weak flags); each case is replayed here eagerly and under ``jit``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, compare_recorded, recorder
from typelattice import lax

rec = recorder("make_vmap_control_golden.py")
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "vmap_control.json").read_text())
CASES = rec.cases()


def _leaves(x: Any) -> list[Any]:
    return tl.tree_util.tree_leaves(x)


def per_example(
    fun: Callable[..., Any], args: tuple[Any, ...], in_axes: tuple[Any, ...]
) -> list[Any]:
    """The results of ``fun`` on each example, leaf by leaf, stacked."""
    size = next(a.shape[0] for a, ax in zip(args, in_axes, strict=True) if ax == 0)
    outs = []
    for i in range(size):
        example = [a[i] if ax == 0 else a for a, ax in zip(args, in_axes, strict=True)]
        outs.append(_leaves(fun(*example)))
    return [(tnp.stack([o[k] for o in outs]), outs[0][k]) for k in range(len(outs[0]))]


def check(
    fun: Callable[..., Any], *args: Any, in_axes: tuple[Any, ...] | None = None
) -> None:
    """vmap(fun) and jit(vmap(fun)) give the per-example results."""
    axes = in_axes if in_axes is not None else (0,) * len(args)
    want = per_example(fun, args, axes)
    for batched in (tl.vmap(fun, in_axes=axes), tl.jit(tl.vmap(fun, in_axes=axes))):
        got = _leaves(batched(*args))
        assert len(got) == len(want)
        for g, (w, one) in zip(got, want, strict=True):
            assert g.dtype == one.dtype
            assert g.weak_type == one.weak_type
            assert g.shape == w.shape
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


XS = tnp.arange(24.0).reshape(3, 4, 2) / 10


def _scan_f(c: Any, xs: Any) -> Any:
    def body(carry: Any, x: Any) -> Any:
        return carry * 0.5 + x.sum(), (carry, x * carry)

    return lax.scan(body, c, xs)


def test_scan_batched_xs_and_init() -> None:
    check(_scan_f, tnp.asarray([1.0, 2.0, 3.0]), XS)


def test_scan_batched_xs_only_makes_the_carry_batched() -> None:
    check(_scan_f, 1.0, XS, in_axes=(None, 0))


def test_scan_batched_init_only_keeps_xs_unbatched() -> None:
    check(_scan_f, tnp.asarray([1.0, 2.0, 3.0]), XS[0], in_axes=(0, None))


def test_scan_batched_closure_constant_and_reverse() -> None:
    def f(w: Any) -> Any:
        def body(c: Any, x: Any) -> Any:
            return c + w * x, c * w

        return lax.scan(body, 0.0, tnp.arange(5.0), reverse=True)

    check(f, tnp.asarray([0.5, 1.0, -2.0]))


def test_scan_carry_of_a_pytree_with_a_batch_axis_not_first() -> None:
    def f(x: Any) -> Any:
        return lax.scan(lambda c, y: ((c[0] + y, c[1]), c[0]), (x, 2), tnp.ones(3))

    got = tl.vmap(f, in_axes=1)(tnp.arange(6.0).reshape(1, 6)[:, :6].reshape(2, 3))
    want = [f(x) for x in np.arange(6.0).reshape(2, 3).T]
    np.testing.assert_allclose(np.asarray(got[0][0]), [w[0][0] for w in want])
    assert got[0][1].weak_type and got[0][1].dtype == np.int32


def test_fori_loop() -> None:
    check(lambda x: lax.fori_loop(0, 4, lambda i, c: c * x + i, 1.0), tnp.arange(3.0))


def test_fori_loop_with_batched_bounds_is_a_while_loop() -> None:
    check(
        lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0),
        tnp.asarray([0, 3, 5]),
    )


def test_while_loop_batched_predicate_different_trip_counts() -> None:
    def f(n: Any, x: Any) -> Any:
        return lax.while_loop(
            lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 2.0 + x), (0, x)
        )

    check(f, tnp.asarray([0, 2, 5]), tnp.asarray([1.0, 2.0, 3.0]))


def test_while_loop_unbatched_predicate() -> None:
    def f(x: Any) -> Any:
        return lax.while_loop(
            lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * x), (0, 1)
        )

    check(f, tnp.asarray([1.5, 2.0, -1.0]))


def test_while_loop_predicate_on_a_carry_the_body_batches() -> None:
    def f(x: Any) -> Any:
        return lax.while_loop(lambda c: c < 10.0, lambda c: c + x, 0.0)

    check(f, tnp.asarray([1.0, 3.0, 20.0]))


def test_cond_batched_and_unbatched_predicate() -> None:
    def f(p: Any, x: Any) -> Any:
        return lax.cond(p, lambda x: (x * 2, 1), lambda x: (-x, 2), x)

    ps, xs = tnp.asarray([True, False, True]), tnp.asarray([1, 2, 3], dtype="int8")
    check(f, ps, xs)
    check(f, True, xs, in_axes=(None, 0))
    check(f, ps, tnp.int8(4), in_axes=(0, None))


def test_cond_keeps_weak_types() -> None:
    def f(p: Any, x: Any) -> Any:
        return lax.cond(p, lambda x: (x + 1, 1.5), lambda x: (x * 2, 2.5), x)

    weak = tnp.broadcast_to(tnp.asarray(0.5), (2,))
    check(f, tnp.asarray([True, False]), weak)
    check(f, tnp.asarray([True, False]), tnp.asarray([1, 2], dtype="int8"))
    out = tl.vmap(f)(tnp.asarray([True, False]), weak)
    assert out[0].weak_type and out[1].weak_type


def test_switch_batched_index_is_clamped() -> None:
    branches = [lambda x: x, lambda x: x + 10, lambda x: x * 100]

    def f(i: Any, x: Any) -> Any:
        return lax.switch(i, branches, x)

    check(f, tnp.asarray([0, 1, 2, 9, -3]), tnp.arange(5))
    check(f, 1, tnp.arange(5), in_axes=(None, 0))


def test_map_and_associative_scan() -> None:
    check(lambda x: lax.map(lambda y: y * x.sum(), x), tnp.arange(12.0).reshape(3, 4))
    check(lambda x: lax.associative_scan(lax.add, x), tnp.arange(12.0).reshape(3, 4))
    check(
        lambda x: lax.associative_scan(lax.max, x, reverse=True),
        tnp.asarray([[1, 5, 2], [7, 0, 3]]),
    )


def test_vmap_of_grad_of_scan() -> None:
    def loss(w: Any) -> Any:
        return _scan_f(w, XS[0])[0]

    got = tl.vmap(tl.grad(loss))(tnp.asarray([1.0, 2.0]))
    want = [tl.grad(loss)(w) for w in (1.0, 2.0)]
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_grad_of_vmap_of_scan() -> None:
    def loss(w: Any) -> Any:
        return tl.vmap(_scan_f)(w, XS)[0].sum()

    w = tnp.asarray([1.0, 2.0, 3.0])
    got = tl.grad(loss)(w)
    want = [tl.grad(lambda v, i=i: _scan_f(v, XS[i])[0])(w[i]) for i in range(3)]
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_jit_of_vmap_of_cond_and_vmap_of_vmap_of_scan() -> None:
    def f(p: Any, x: Any) -> Any:
        return lax.cond(p, lambda x: x * 2, lambda x: -x, x)

    got = tl.jit(tl.vmap(f))(tnp.asarray([True, False]), tnp.asarray([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(got), [2.0, -2.0])
    init = tnp.arange(6.0).reshape(2, 3)
    xs = tnp.arange(48.0).reshape(2, 3, 4, 2) / 10
    got2 = tl.vmap(tl.vmap(_scan_f))(init, xs)
    for i in range(2):
        for j in range(3):
            one = _scan_f(init[i, j], xs[i, j])
            for g, w in zip(_leaves(got2), _leaves(one), strict=True):
                np.testing.assert_allclose(
                    np.asarray(g[i, j]), np.asarray(w), rtol=1e-6
                )


def test_the_recorded_cases_are_the_recorders() -> None:
    assert sorted(GOLDEN["cases"]) == sorted(CASES)


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_of_control_flow_matches_jax(name: str, jitted: bool) -> None:
    want = GOLDEN["cases"][name]
    call = CASES[name]

    def run() -> Any:
        return call(tl.vmap, lax, tnp)

    if isinstance(want, dict):
        with pytest.raises(Exception) as info:
            tl.jit(run)() if jitted else run()
        assert rec.encode_error(info.value) == want
        return
    got = tl.jit(run)() if jitted else run()
    compare_recorded(got, want, name)


def test_collectives_inside_control_flow_reduce_over_the_named_axis() -> None:
    def f(x: Any) -> Any:
        def body(c: Any, y: Any) -> Any:
            return c + lax.psum(y, "i"), lax.axis_index("i") * y

        return lax.scan(body, 0.0, x)

    xs = tnp.arange(12.0, dtype="float32").reshape(3, 4)  # 3 examples, 4 steps
    for g in (tl.vmap(f, axis_name="i"), tl.jit(tl.vmap(f, axis_name="i"))):
        c, ys = g(xs)
        assert c.tolist() == [66.0, 66.0, 66.0]
        assert ys.tolist() == (tnp.arange(3.0)[:, None] * xs).tolist()

    def h(x: Any) -> Any:
        return lax.cond(x > 1, lambda v: lax.pmean(v, "i"), lambda v: v, x)

    assert tl.vmap(h, axis_name="i")(tnp.arange(4.0)).tolist() == [0, 1, 1.5, 1.5]


def test_a_collective_in_an_unnamed_vmap_inside_a_body_reduces_the_named_axis() -> None:
    def body(c: Any, _: Any) -> Any:
        def inner(y: Any) -> Any:
            return lax.scan(lambda d, _: (d, lax.psum(y, "i")), 0.0, None, length=1)

        return c, tl.vmap(inner)(c)[1][:, 0]

    def f(row: Any) -> Any:
        return lax.scan(body, row, None, length=1)[1][0]

    x = tnp.arange(6.0, dtype="float32").reshape(2, 3)
    assert tl.vmap(f, axis_name="i")(x).tolist() == [[3.0, 5.0, 7.0]] * 2
