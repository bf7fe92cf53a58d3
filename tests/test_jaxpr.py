"""``typelattice.make_jaxpr``: the record of a traced function, printed as
JAX prints a jaxpr (compared with JAX's own text, recorded by
``golden/make_jaxpr_golden.py``), and the record's parts."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import lax
from typelattice._lax._elementwise import sin_p
from typelattice._tracing.primitive import PRIMITIVES

rec = recorder("make_jaxpr_golden.py")
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "jaxpr.json").read_text())


def _zeros(shape: tuple[int, ...], dtype: Any) -> Any:
    return tnp.zeros(shape, dtype)


def traced(name: str) -> Any:
    case = rec.CASES[name]
    fn = case.build(lax, tl.grad)
    args = [rec.argument(a, _zeros) for a in case.args]
    return tl.make_jaxpr(fn, static_argnums=case.static_argnums)(*args)


def test_every_case_is_recorded() -> None:
    assert set(GOLDEN["cases"]) == set(rec.CASES)


@pytest.mark.parametrize("name", list(rec.CASES))
def test_text_is_jaxs(name: str) -> None:
    """Each case's record reads as JAX's, on one line, once the parameters
    that only JAX's primitives have are left out of JAX's."""
    want = GOLDEN["cases"][name]
    closed = traced(name)
    assert closed.pretty_print(width=1_000_000) == rec.strip_jax_only(want["one_line"])
    if rec.strip_jax_only(want["text"]) == want["text"]:
        # (JAX shows no parameter of its own: the layout is comparable.)
        assert str(closed) == want["text"]


def test_small_functions_print_on_one_line() -> None:
    closed = tl.make_jaxpr(lax.sin)(tnp.zeros(3))
    assert str(closed) == "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"
    assert repr(closed) == str(closed) == str(closed.jaxpr)


def test_longer_records_break_one_equation_a_line() -> None:
    text = str(traced("long"))
    lines = text.splitlines()
    assert lines[0] == "{ lambda ; a:f32[3]. let"
    assert lines[1] == "    b:f32[3] = sin a"
    assert lines[26] == "    ba:f32[3] = sin z"  # (after z: ba, bb, ...)
    assert lines[-1] == "  in (be,) }"


def test_weak_values_show_jaxs_dtype_and_keep_the_flag() -> None:
    """JAX prints no weak flag in a jaxpr; the abstract values keep it."""
    closed = tl.make_jaxpr(lambda x: lax.mul(x, 2))(1.0)
    assert str(closed) == "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }"
    assert closed.in_avals[0].weak_type
    assert closed.out_avals[0].weak_type
    assert repr(closed.in_avals[0]) == "ShapedArray(float32[], weak_type=True)"
    strong = tl.make_jaxpr(lambda x: lax.mul(x, 2))(tnp.float32(1))
    assert not strong.out_avals[0].weak_type


def test_parts_of_the_record() -> None:
    c = np.arange(3, dtype=np.float32)
    closed = tl.make_jaxpr(lambda x: lax.add(lax.sin(x), c))(tnp.zeros(3))
    assert [e.name for e in closed.eqns] == ["sin", "add"]
    assert len(closed.consts) == 1
    np.testing.assert_array_equal(np.asarray(closed.consts[0]), c)
    assert closed.jaxpr.constvars[0].aval == closed.in_avals[0]
    assert str(closed).startswith("{ lambda a:f32[3]; b:f32[3]. let")
    assert [repr(e) for e in closed.eqns] == ["a:f32[3] = sin b", "a:f32[3] = add b c"]


def test_primitives_are_the_equations_primitives() -> None:
    closed = tl.make_jaxpr(lax.sin)(tnp.zeros(3))
    (eqn,) = closed.eqns
    assert eqn.primitive is sin_p
    assert eqn.params == {}
    assert eqn.invars == closed.jaxpr.invars
    assert eqn.outvars == closed.jaxpr.outvars


def test_pytrees_in_and_out() -> None:
    closed, shapes = tl.make_jaxpr(
        lambda d: {"s": lax.add(d["a"], d["b"]), "t": (d["a"],)}, return_shape=True
    )({"a": tnp.zeros(2), "b": tnp.ones(2)})
    assert len(closed.in_avals) == 2 and len(closed.out_avals) == 2
    assert shapes == {
        "s": tl.ShapeDtypeStruct((2,), "float32"),
        "t": (tl.ShapeDtypeStruct((2,), "float32"),),
    }
    assert str(closed).endswith("in (c, a) }")


def test_static_argnums_are_not_traced() -> None:
    f = tl.make_jaxpr(lambda x, n: lax.mul(x, float(n)), static_argnums=1)
    assert "mul a 3.0:f32[]" in str(f(tnp.zeros(2), 3))
    assert "mul a 4.0:f32[]" in str(f(tnp.zeros(2), 4))
    with pytest.raises(tl.ConcretizationTypeError):
        tl.make_jaxpr(lambda x, n: lax.mul(x, float(n)))(tnp.zeros(2), 3)


def test_shape_dtype_structs_are_arguments() -> None:
    closed = tl.make_jaxpr(lax.neg)(tl.ShapeDtypeStruct((2, 5), "int8"))
    assert str(closed) == "{ lambda ; a:i8[2,5]. let b:i8[2,5] = neg a in (b,) }"


def test_unused_results_are_shown_as_underscores() -> None:
    text = str(tl.make_jaxpr(lambda x: (lax.sin(x), lax.cos(x))[1])(tnp.zeros(2)))
    assert (
        text == "{ lambda ; a:f32[2]. let _:f32[2] = sin a; b:f32[2] = cos a in (b,) }"
    )


def test_gradients_record_the_forward_and_backward_passes() -> None:
    text = str(traced("grad"))
    assert "_:f32[] = reduce_sum[axes=(0,)] c" in text
    assert "d:f32[3] = broadcast_in_dim 1.0:f32[]" in text
    assert text.endswith("g:f32[3] = add_any e f\n  in (g,) }")


def test_namespace_functions_not_on_primitives_are_named() -> None:
    """A namespace function still recorded as one call shows its name (so
    the record shows what does not reach primitives yet)."""
    closed = tl.make_jaxpr(lambda x: tnp.reshape(x, (3, 1)) + 1)(tnp.zeros(3))
    names = [e.name for e in closed.eqns]
    assert names
    assert all(n.startswith("typelattice.numpy.") or n in PRIMITIVES for n in names)
    assert closed.out_avals[0].shape == (3, 1)


def test_options_of_the_text() -> None:
    closed = tl.make_jaxpr(lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)))(
        tnp.zeros(3)
    )
    assert "broadcast_in_dim[broadcast_dimensions=(1,)] a" in str(closed)
    everything = closed.pretty_print(custom_pp_eqn_rules=False, width=1000)
    assert "broadcast_in_dim[broadcast_dimensions=(1,) shape=(2, 3)] a" in everything
    bare = closed.pretty_print(print_shapes=False, width=1000)
    assert bare.startswith("{ lambda ; a. let b = broadcast_in_dim")


def test_nothing_is_computed() -> None:
    big = tl.ShapeDtypeStruct((100_000, 100_000), "float32")
    closed = tl.make_jaxpr(lambda x: lax.reduce_sum(lax.sin(x), (0, 1)))(big)
    assert closed.out_avals[0].shape == ()


def test_errors_are_the_tracing_errors() -> None:
    with pytest.raises(TypeError, match="same dtypes"):
        tl.make_jaxpr(lambda x: lax.add(x, tnp.zeros(3, "int8")))(tnp.zeros(3))
