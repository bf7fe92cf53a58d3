"""typelattice.vmap: axes, errors, weak types, collectives, and how it
composes with the other transformations (JAX's answers, checked against
``jax.vmap`` by hand where noted)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import program_equations
from typelattice import lax
from typelattice._lax._elementwise import convert_element_type_p
from typelattice._tracing.primitive import PRIMITIVES


def weak(values: Any, dtype: str = "float32") -> Any:
    """A weak array (as a Python scalar or an operation on one makes)."""
    x = tnp.asarray(np.asarray(values, dtype))
    return convert_element_type_p.bind(x, new_dtype=x.dtype, weak_type=True)


def same(got: Any, want: Any, dtype: str, is_weak: bool = False) -> None:
    assert isinstance(got, tl.Array) and not isinstance(got, tl.Tracer), repr(got)
    assert (got.dtype, got.weak_type) == (np.dtype(dtype), is_weak), repr(got)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


# -- the registry ----------------------------------------------------------------


def test_every_primitive_has_a_batching_rule() -> None:
    missing = [name for name, p in PRIMITIVES.items() if not callable(p.batch)]
    assert missing == []


def test_a_primitive_without_a_rule_says_so() -> None:
    prim = PRIMITIVES["neg"]
    rule = prim.batch
    prim.batch = None
    try:
        with pytest.raises(NotImplementedError, match="Batching rule for 'neg'"):
            tl.vmap(lax.neg)(tnp.ones(2))
    finally:
        prim.batch = rule


# -- axes ------------------------------------------------------------------------


def test_in_axes_and_out_axes() -> None:
    x = tnp.arange(6.0).reshape(2, 3)
    same(tl.vmap(tnp.sum)(x), [3, 12], "float32")
    same(tl.vmap(tnp.sum, in_axes=1)(x), [3, 5, 7], "float32")
    same(tl.vmap(tnp.sum, in_axes=-1)(x), [3, 5, 7], "float32")
    same(tl.vmap(lambda a: a * 2, out_axes=1)(x), (x * 2).T, "float32")
    same(tl.vmap(lambda a: a * 2, in_axes=1, out_axes=-1)(x), x * 2, "float32")
    y = tnp.ones(3)
    same(tl.vmap(lambda a, b: a + b, in_axes=(0, None))(x, y), x + 1, "float32")
    same(tl.vmap(lambda a, b: a + b, [1, 0])(x.T, tnp.zeros(2)), x.T.T, "float32")


def test_pytree_prefixes_and_keywords() -> None:
    x = tnp.arange(6.0).reshape(2, 3)
    f = tl.vmap(lambda d: d["a"] + d["b"], in_axes=({"a": 0, "b": None},))
    same(f({"a": x, "b": tnp.ones(3)}), x + 1, "float32")
    g = tl.vmap(lambda p: p[0] * p[1], in_axes=((1, 0),))
    same(g((x.T, tnp.ones(2))), x, "float32")
    # Keyword arguments are mapped along axis 0.
    h = tl.vmap(lambda a, b: a - b, in_axes=(None,))
    same(h(tnp.ones(3), b=x), 1 - x, "float32")
    out = tl.vmap(
        lambda a: {"s": a.sum(), "t": (a, 2.0)}, out_axes={"s": 0, "t": (1, None)}
    )(x)
    same(out["s"], [3, 12], "float32")
    same(out["t"][0], x.T, "float32")
    assert out["t"][1] == 2.0


def test_unmapped_results_are_broadcast_and_axis_size() -> None:
    out = tl.vmap(lambda a: 1.0, in_axes=None, axis_size=3)(tnp.ones(2))
    same(out, [1, 1, 1], "float32", is_weak=True)
    out = tl.vmap(lambda a, b: b, in_axes=(0, None))(tnp.ones(2), tnp.int8([4, 5]))
    same(out, [[4, 5], [4, 5]], "int8")


def test_nested_vmap() -> None:
    x = tnp.arange(24.0).reshape(2, 3, 4)
    out = tl.vmap(tl.vmap(lambda a: a.sum(), in_axes=1), in_axes=0)(x)
    same(out, np.asarray(x).sum(axis=1), "float32")
    outer = tl.vmap(tl.vmap(lambda a, b: a * b, in_axes=(None, 0)), in_axes=(0, None))
    same(
        outer(tnp.arange(3.0), tnp.arange(4.0)), np.outer(range(3), range(4)), "float32"
    )


# -- errors ------------------------------------------------------------------------


def test_inconsistent_sizes_name_the_arguments() -> None:
    with pytest.raises(ValueError) as info:
        tl.vmap(lambda x, y: x + y)(tnp.ones(3), tnp.ones(4))
    assert str(info.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 3: axis 0 of argument x of type float32[3];\n"
        "  * one axis had size 4: axis 0 of argument y of type float32[4]"
    )
    with pytest.raises(ValueError, match=r"most axes \(2 of them\) had size 3"):
        tl.vmap(lambda x, y, z: x)(tnp.ones(3), tnp.ones(3), tnp.ones(5))


def test_axis_errors() -> None:
    with pytest.raises(ValueError, match=r"rank should be at least 1, but is only 0"):
        tl.vmap(lambda x: x)(1.0)
    with pytest.raises(
        ValueError, match=r"at least 3, but is only 1 \(its shape is \(2,\)\)"
    ):
        tl.vmap(lambda x: x, in_axes=2)(tnp.ones(2))
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        tl.vmap(lambda x: x, in_axes=None)(tnp.ones(2))
    with pytest.raises(ValueError, match="len\\(in_axes\\)=1, len\\(args\\)=2"):
        tl.vmap(lambda x, y: x, in_axes=(0,))(tnp.ones(2), tnp.ones(2))
    with pytest.raises(TypeError, match="in_axes must be an int, None, or a tuple"):
        tl.vmap(lambda x: x, in_axes="a")
    with pytest.raises(TypeError, match="container with those types as leaves"):
        tl.vmap(lambda x: x, in_axes=(0.5,))
    with pytest.raises(ValueError, match="must be a tree prefix"):
        tl.vmap(lambda d: d, in_axes=({"a": 0},))({"b": tnp.ones(2)})
    with pytest.raises(ValueError, match="got empty \\*args=\\(\\)"):
        tl.vmap(lambda: 1.0)()
    with pytest.raises(ValueError, match="got axis spec None but output was batched"):
        tl.vmap(lambda x: x, out_axes=None)(tnp.ones(2))
    with pytest.raises(ValueError, match="out of bounds"):
        tl.vmap(lambda x: x, out_axes=2)(tnp.ones(2))


def test_values_are_not_concrete() -> None:
    with pytest.raises(tl.ConcretizationTypeError, match="bool\\(\\)"):
        tl.vmap(lambda x: x if x > 0 else -x)(tnp.ones(2))
    kept: list[Any] = []
    tl.vmap(lambda x: kept.append(x) or x)(tnp.ones(2))
    with pytest.raises(tl.UnexpectedTracerError):
        kept[0] + 1


# -- dtypes and weak types -----------------------------------------------------------


def test_weak_types_survive_batching() -> None:
    same(tl.vmap(lambda x: x + 1)(tnp.ones((2, 3), "int8")), np.full((2, 3), 2), "int8")
    same(tl.vmap(lambda s: s * 2)(weak([1.0, 2.0])), [2, 4], "float32", is_weak=True)
    same(tl.vmap(lambda s: s)(weak([1.0, 2.0])), [1, 2], "float32", is_weak=True)
    same(tl.vmap(lambda s: 1)(weak([1.0, 2.0])), [1, 1], "int32", is_weak=True)
    same(
        tl.vmap(lambda x, s: x * s, in_axes=(0, None))(tnp.ones(2, "float16"), 2.0),
        [2, 2],
        "float16",
    )
    # A weak batch meets a strong one: the strong dtype wins, as for one example.
    same(
        tl.vmap(lambda s, x: s + x)(weak([1, 2], "int32"), tnp.int8([1, 1])),
        [2, 3],
        "int8",
    )


# -- collectives ---------------------------------------------------------------------


def test_collectives() -> None:
    x = tnp.arange(4.0)
    same(tl.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(x), [6] * 4, "float32")
    same(tl.vmap(lambda v: lax.pmean(v, "i"), axis_name="i")(x), [1.5] * 4, "float32")
    same(tl.vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(x), [3] * 4, "float32")
    same(tl.vmap(lambda v: lax.pmin(v, "i"), axis_name="i")(x), [0] * 4, "float32")
    same(tl.vmap(lambda v: lax.axis_index("i"), axis_name="i")(x), range(4), "int32")
    # An operand the same for every example counts once per example.
    same(tl.vmap(lambda v: lax.psum(1.0, "i") + v, axis_name="i")(x), x + 4, "float32")
    same(
        tl.vmap(lambda v: lax.pmean(v, "i"), axis_name="i")(tnp.arange(3)),
        [1] * 3,
        "float32",
    )
    m = tnp.arange(6.0).reshape(2, 3)
    inner = tl.vmap(lambda v: lax.psum(v, "i"), axis_name="j")
    same(tl.vmap(inner, axis_name="i")(m), [[3, 5, 7]] * 2, "float32")
    both = tl.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j")
    same(tl.vmap(both, axis_name="i")(m), np.full((2, 3), 15), "float32")
    tree_out = tl.vmap(lambda v: lax.psum({"a": v, "b": (v * 2,)}, "i"), axis_name="i")(
        x
    )
    same(tree_out["b"][0], [12] * 4, "float32")


def test_collectives_outside_their_vmap_raise_name_error() -> None:
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(tnp.ones(2), "i")
    with pytest.raises(NameError, match="unbound axis name: j"):
        tl.vmap(lambda v: lax.axis_index("j"), axis_name="i")(tnp.ones(2))
    with pytest.raises(NameError, match="unbound axis name: i"):
        tl.vmap(lambda v: lax.pmax(v, "i"))(tnp.ones(2))


def test_collectives_differentiate() -> None:
    # jax.vmap(jax.grad(lambda v: lax.psum(v * v, 'i')), axis_name='i') gives
    # [0, 6, 12]: psum's transpose is psum.
    x = tnp.arange(3.0)
    per_example = tl.vmap(tl.grad(lambda v: lax.psum(v * v, "i")), axis_name="i")
    same(per_example(x), [0, 6, 12], "float32")
    whole = tl.grad(
        lambda a: tl.vmap(lambda v: v * lax.psum(v, "i"), axis_name="i")(a).sum()
    )
    same(whole(x), [6, 6, 6], "float32")


# -- composition ---------------------------------------------------------------------


def _loss(w: Any, x: Any) -> Any:
    return tnp.tanh(x @ w).sum() ** 2


W = tnp.asarray(np.linspace(-1, 1, 12, dtype="float32").reshape(4, 3))
X = tnp.asarray(np.linspace(-2, 2, 20, dtype="float32").reshape(5, 4))


def _per_example_grads() -> np.ndarray[Any, Any]:
    return np.stack([np.asarray(tl.grad(_loss)(W, X[i])) for i in range(5)])


def test_vmap_of_grad_and_grad_of_vmap() -> None:
    want = _per_example_grads()
    got = tl.vmap(tl.grad(_loss), in_axes=(None, 0))(W, X)
    same(got, want, "float32")
    total = tl.grad(lambda w: tl.vmap(_loss, in_axes=(None, 0))(w, X).sum())(W)
    same(total, want.sum(axis=0), "float32")


def test_jit_and_vmap_compose() -> None:
    want = _per_example_grads()
    f = tl.vmap(tl.grad(_loss), in_axes=(None, 0))
    same(tl.jit(f)(W, X), want, "float32")
    same(tl.vmap(tl.jit(tl.grad(_loss)), in_axes=(None, 0))(W, X), want, "float32")
    s = tl.eval_shape(f, W, X)
    assert (s.shape, s.dtype) == ((5, 4, 3), np.dtype("float32"))


def test_jvp_and_vjp_of_vmap() -> None:
    f = tl.vmap(lambda v: tnp.sin(v) * v)
    x = tnp.linspace(0.0, 1.0, 4)
    out, tangent = tl.jvp(f, (x,), (tnp.ones(4),))
    same(
        tangent,
        np.cos(np.asarray(x)) * np.asarray(x) + np.sin(np.asarray(x)),
        "float32",
    )
    out2, pullback = tl.vjp(f, x)
    same(pullback(tnp.ones(4))[0], np.asarray(tangent), "float32")
    same(out2, np.asarray(out), "float32")


def test_make_jaxpr_shows_batched_primitives() -> None:
    jaxpr = tl.make_jaxpr(tl.vmap(lambda a, b: a @ b, in_axes=(0, None)))(
        tnp.ones((5, 3)), tnp.ones((3, 2))
    )
    text = str(jaxpr)
    assert "dot_general" in text and "f32[5,2]" in text


def test_custom_jvp_under_vmap() -> None:
    @tl.custom_jvp
    def f(x: Any) -> Any:
        return tnp.sin(x)

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return f(x), 10.0 * t

    x = tnp.arange(3.0)
    same(tl.vmap(f)(x), np.sin(np.arange(3.0)), "float32")
    same(tl.vmap(tl.grad(f))(x), [10, 10, 10], "float32")
    same(tl.grad(lambda a: tl.vmap(f)(a).sum())(x), [10, 10, 10], "float32")


def test_custom_vjp_under_vmap() -> None:
    @tl.custom_vjp
    def f(x: Any) -> Any:
        return x * 2.0

    def fwd(x: Any) -> Any:
        return f(x), None

    def bwd(res: Any, g: Any) -> Any:
        return (g * 7.0,)

    f.defvjp(fwd, bwd)
    x = tnp.arange(3.0)
    same(tl.vmap(f)(x), [0, 2, 4], "float32")
    same(tl.vmap(tl.grad(f))(x), [7, 7, 7], "float32")
    same(tl.grad(lambda a: tl.vmap(f)(a).sum())(x), [7, 7, 7], "float32")


def test_batched_indexing_and_products() -> None:
    x = tnp.arange(24.0).reshape(2, 3, 4)
    i = tnp.array([2, 0])
    same(tl.vmap(lambda a, j: a[j])(x, i), np.asarray(x)[[0, 1], [2, 0]], "float32")
    same(tl.vmap(lambda a: a[1, ::2])(x), np.asarray(x)[:, 1, ::2], "float32")
    got = tl.vmap(lambda a, j: a.at[j].add(1.0))(x, i)
    want = np.asarray(x).copy()
    want[0, 2] += 1
    want[1, 0] += 1
    same(got, want, "float32")
    m = tnp.arange(12.0).reshape(3, 4)
    same(
        tl.vmap(lambda a, b: a @ b, in_axes=(0, None))(x, m.T),
        np.asarray(x) @ np.asarray(m).T,
        "float32",
    )
    same(
        tl.vmap(lambda a, b: b @ a, in_axes=(None, 1))(m.T, x),
        np.moveaxis(np.asarray(x), 1, 0) @ np.asarray(m).T,
        "float32",
    )
    same(
        tl.vmap(lambda a: tnp.sort(a, axis=0), in_axes=2)(-x),
        np.moveaxis(np.sort(-np.asarray(x), axis=0), 2, 0),
        "float32",
    )
    equations = program_equations(tl.jit(tl.vmap(lambda a: a.sum(0))).program(x))
    assert any("reduce_sum" in e and "axes=(1,)" in e for e in equations), equations
