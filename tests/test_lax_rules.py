"""The differentiation rules of typelattice.lax's primitives.

The rules are exercised eagerly, without the transformations: a small
evaluator here records the primitives a function binds (a tape), then calls
each one's JVP rule in order (forward mode), or records the linear part of
those JVPs and calls the transpose rules backwards (reverse mode). Checked:

1. the registry: every primitive has a JVP rule, the linear ones a
   transpose rule, and every rule is registered on a defined primitive;
2. each case of ``golden/make_lax_rules_golden.py`` in float32, bfloat16,
   complex64, float64 (64-bit mode), weak float32 and mixed weak/strong:
   the tangent equals a central finite difference computed in float64, and
   has exactly the primal's dtype and weak flag;
3. transposes: ``<ct, L(t)> == <T(ct), t>`` for every linear primitive, and
   for the linear part of every case's JVP (reverse mode against forward);
   cotangents have exactly their primal's dtype and weak flag;
4. the JVPs against those JAX computed (``golden/lax_rules.json``): values,
   dtypes and weak flags of primal and tangent outputs;
5. second derivatives: the JVP of each JVP against finite differences of
   the JVP, which holds only if the rules are written with primitives.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import lax
from typelattice._array import from_numpy
from typelattice._lax import (
    _control,
    _dot,
    _elementwise,
    _fold,
    _indexing,
    _linalg,
    _parallel,
    _reductions,
    _structural,
    _windowed,
)
from typelattice._lax._primitive import (
    PRIMITIVES,
    Primitive,
    ShapedArray,
    UndefinedPrimal,
    Zero,
    add_any_p,
    add_tangents,
    aval_of,
    defjvp,
    float0,
    instantiate,
    tangent_aval,
    zeros,
)

MAX_REPORTED = 10


def _recorder() -> ModuleType:
    return recorder("make_lax_rules_golden.py")


rec = _recorder()
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "lax_rules.json").read_text())

# The primitives linear in some operands (JAX's list, for ours).
LINEAR = {
    "add",
    "add_any",
    "broadcast_in_dim",
    "complex",
    "concatenate",
    "conj",
    "convert_element_type",
    "cumsum",
    "div",
    "dot_general",
    "dynamic_slice",
    "dynamic_update_slice",
    "gather",
    "imag",
    "mul",
    "neg",
    "pad",
    "psum",
    "real",
    "reduce_sum",
    "reduce_window_sum",
    "reshape",
    "rev",
    "scatter",
    "scatter-add",
    "scatter-mul",
    "select_and_gather_add",
    "select_and_scatter_add",
    "select_n",
    "slice",
    "squeeze",
    "sub",
    "transpose",
    "triangular_solve",
}


# -- an eager evaluator of the rules ------------------------------------------

Binding = tuple[Primitive, tuple[Any, ...], dict[str, Any], Any]


@contextlib.contextmanager
def recording() -> Iterator[list[Binding]]:
    """Record every binding made inside (nested recordings see them too)."""
    tape: list[Binding] = []
    inner = Primitive.bind

    def bind(self: Primitive, *args: Any, **params: Any) -> Any:
        out = inner(self, *args, **params)
        tape.append((self, args, params, out))
        return out

    Primitive.bind = bind  # type: ignore[method-assign]
    try:
        yield tape
    finally:
        Primitive.bind = inner  # type: ignore[method-assign]


def _outputs(prim: Primitive, out: Any) -> tuple[Any, ...]:
    return tuple(out) if prim.multiple_results else (out,)


def jvp(fn: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """``(fn(*primals), tangents of the outputs)``, by the JVP rules of the
    primitives ``fn`` binds (a tuple of tangents for a tuple of outputs)."""
    with recording() as tape:
        out = fn(*primals)
    known: dict[int, Any] = {id(p): t for p, t in zip(primals, tangents, strict=True)}
    for prim, args, params, res in tape:
        ts = [known[id(a)] if id(a) in known else Zero.of(a) for a in args]
        assert prim.jvp is not None, prim
        p_out, t_out = prim.jvp(args, ts, **params)
        for r, p, t in zip(
            _outputs(prim, res),
            _outputs(prim, p_out),
            _outputs(prim, t_out),
            strict=True,
        ):
            assert aval_of(p) == aval_of(r), (prim, p, r)
            np.testing.assert_array_equal(np.asarray(p), np.asarray(r))
            known[id(r)] = t
    if isinstance(out, tuple):
        return out, tuple(known.get(id(o), Zero.of(o)) for o in out)
    return out, known.get(id(out), Zero.of(out))


def vjp(fn: Callable[..., Any], primals: Sequence[Any], ct: Any) -> list[Any]:
    """The cotangents of the floating ``primals`` for the output cotangent
    ``ct`` (one output): the JVP's tangent computations that depend on the
    input tangents are a linear program; it is run backwards with the
    transpose rules."""
    inputs = [
        zeros(aval_of(p)) if tangent_aval(aval_of(p)).dtype != float0 else None
        for p in primals
    ]
    tangents = [
        Zero.of(p) if t is None else t for p, t in zip(primals, inputs, strict=True)
    ]
    with recording() as tape:
        _, t_out = jvp(fn, primals, tangents)
    linear = {id(t) for t in inputs if t is not None}
    program: list[Binding] = []
    for binding in tape:
        prim, args, _, res = binding
        if any(id(a) in linear for a in args):
            assert not prim.multiple_results, prim
            linear.add(id(res))
            program.append(binding)
    cts: dict[int, Any] = {id(t_out): ct}
    for prim, args, params, res in reversed(program):
        if id(res) not in cts:
            continue
        operands = [UndefinedPrimal(aval_of(a)) if id(a) in linear else a for a in args]
        assert prim.transpose is not None, f"{prim.name} has no transpose"
        results = prim.transpose(cts.pop(id(res)), *operands, **params)
        assert len(results) == len(args), prim
        for a, operand, c in zip(args, operands, results, strict=True):
            if not isinstance(operand, UndefinedPrimal):
                assert c is None, (prim, c)
                continue
            if c is None:
                continue
            assert aval_of(c) == (
                tangent_aval(operand.aval) if isinstance(c, Zero) else operand.aval
            ), (prim.name, aval_of(c), operand.aval)
            cts[id(a)] = add_tangents(cts[id(a)], c) if id(a) in cts else c
    return [None if t is None else cts.get(id(t), Zero.of(t)) for t in inputs]


# -- operands of the cases ----------------------------------------------------


def call(case: Any) -> Callable[..., Any]:
    """The case's function of its operands, with typelattice.lax."""
    return lambda *ops: case.fn(lax, *ops)


def operands(case: Any, variant: str) -> list[Any]:
    return [from_numpy(v, weak) for v, weak in rec.operand_values(case, variant)]


def tangents(case: Any, variant: str, primals: Sequence[Any]) -> list[Any]:
    return [
        Zero.of(p) if t is None else from_numpy(t, p.weak_type)
        for p, t in zip(primals, rec.tangent_values(case, variant), strict=True)
    ]


@contextlib.contextmanager
def mode(variant: str) -> Iterator[None]:
    with tl.enable_x64(variant in rec.X64_VARIANTS), warnings.catch_warnings():
        # convert_element_type of complex to real warns (as JAX).
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        yield


def _wide(value: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return value.astype(np.complex128 if value.dtype.kind == "c" else np.float64)


def as_numpy(t: Any) -> np.ndarray[Any, Any]:
    """A tangent's values in float64 (complex128); zeros for a Zero."""
    if isinstance(t, Zero):
        dt = np.float64 if t.aval.dtype.kind != "c" else np.complex128
        return np.zeros(t.aval.shape, dt)
    return _wide(np.asarray(t))


def _is_float_result(aval: ShapedArray) -> bool:
    return tangent_aval(aval).dtype != float0


def _pairs(out: Any, t_out: Any) -> list[tuple[Any, Any]]:
    if isinstance(out, tuple):
        return list(zip(out, t_out, strict=True))
    return [(out, t_out)]


# Tolerances (relative, absolute) of a tangent computed in a dtype against
# the float64 reference: a few units in the last place, times the steps of
# the rule.
TOLERANCE: dict[str, tuple[float, float]] = {
    "f4": (2e-5, 2e-5),
    "w": (2e-5, 2e-5),
    "wm": (2e-5, 2e-5),
    "c8": (2e-5, 2e-5),
    "bf": (3e-2, 3e-2),
    "f8": (1e-7, 1e-8),
}
FD_STEP = 1e-6


def _close(got: Any, want: Any, variant: str, scale: float = 1.0) -> bool:
    rtol, atol = TOLERANCE[variant]
    return bool(np.allclose(got, want, rtol=rtol, atol=atol * scale, equal_nan=True))


def finite_difference(case: Any, variant: str) -> list[np.ndarray[Any, Any]]:
    """The central difference of the case's function along its tangents,
    evaluated in float64 (complex128) at the operands' values."""
    values = rec.operand_values(case, variant)
    directions = rec.tangent_values(case, variant)

    def at(h: float) -> list[np.ndarray[Any, Any]]:
        ops = [
            from_numpy(v if t is None else _wide(v) + h * _wide(t), False)
            for (v, _), t in zip(values, directions, strict=True)
        ]
        out = case.fn(lax, *ops)
        return [
            _wide(np.asarray(o)) for o in (out if isinstance(out, tuple) else (out,))
        ]

    with tl.enable_x64(True), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        plus, minus = at(FD_STEP), at(-FD_STEP)
    return [(p - m) / (2 * FD_STEP) for p, m in zip(plus, minus, strict=True)]


def _params(*select: Callable[[Any], bool]) -> list[Any]:
    return [
        pytest.param(name, variant, id=f"{name}-{variant}")
        for name, case in rec.CASES.items()
        for variant in case.variants
        if all(s(case) for s in select)
    ]


# -- 1. the registry ----------------------------------------------------------


def _module_primitives() -> dict[str, Primitive]:
    found: dict[str, Primitive] = {}
    modules = (
        _elementwise,
        _structural,
        _reductions,
        _dot,
        _indexing,
        _linalg,
        _fold,
        _parallel,
        _control,
        _windowed,
    )
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, Primitive):
                found[value.name] = value
    found[add_any_p.name] = add_any_p
    return found


def test_every_primitive_has_a_jvp_rule() -> None:
    missing = [name for name, p in PRIMITIVES.items() if not callable(p.jvp)]
    assert missing == []


def test_the_linear_primitives_have_a_transpose_rule() -> None:
    with_transpose = {name for name, p in PRIMITIVES.items() if p.transpose}
    assert with_transpose == LINEAR


def test_every_rule_is_on_a_defined_primitive() -> None:
    """The primitives the modules define are the registry's, one per name,
    and the helpers refuse anything else."""
    found = _module_primitives()
    assert set(found) == set(PRIMITIVES)
    assert all(PRIMITIVES[name] is p for name, p in found.items())
    assert set(LINEAR) <= set(PRIMITIVES)
    imposter = object.__new__(Primitive)
    imposter.name = "sin"
    with pytest.raises(TypeError, match="registered on a defined Primitive"):
        defjvp(imposter, lambda g, x: g)  # type: ignore[arg-type]


def test_every_primitive_is_reached_by_the_cases() -> None:
    """The cases below bind every primitive, so every rule runs."""
    reached: set[str] = set()
    for case in rec.CASES.values():
        variant = case.variants[0]
        with mode(variant), recording() as tape:
            primals = operands(case, variant)
            try:
                jvp(call(case), primals, tangents(case, variant, primals))
            except NotImplementedError:
                pass
        reached |= {prim.name for prim, *_ in tape}
    # check_index, typelattice.numpy's index check, and the primitives whose
    # parameter is a computation (typelattice.numpy's ufunc methods) have no
    # jax.lax counterpart to record cases from: tests/test_shape_on_lax.py
    # and tests/test_ufunc_methods_on_lax.py run their rules. The
    # collectives need a vmap of their axis name: tests/test_vmap.py runs
    # theirs.
    # The control flow primitives take functions: tests/test_control_flow.py
    # runs theirs.
    assert sorted(set(PRIMITIVES) - reached) == [
        "axis_index",
        "check_index",
        "cond",
        "cumulative_reduce",
        "pmax",
        "pmin",
        "psum",
        "reduce",
        "reduce_segments",
        "scan",
        "scatter_apply",
        "scatter_combine",
        "while",
    ]


# -- the conventions ----------------------------------------------------------


def test_integer_values_have_float0_zero_tangents() -> None:
    i = ShapedArray((2,), np.dtype(np.int32), weak_type=True)
    assert tangent_aval(i) == ShapedArray((2,), float0, True)
    f = ShapedArray((2,), np.dtype(ml_dtypes.bfloat16), True)
    assert tangent_aval(f) == f
    with pytest.raises(TypeError, match="symbolic"):
        zeros(tangent_aval(i))
    out, t = jvp(
        lambda a: lax.argmax(a, 0, "int32"),
        [tnp.float32([1.0, 3.0])],
        [tnp.float32([1.0, 1.0])],
    )
    assert isinstance(t, Zero) and t.aval == ShapedArray((), float0)


def test_zero_instantiates_to_zeros_of_its_aval() -> None:
    z = Zero(ShapedArray((2,), np.dtype(np.float32), True))
    got = instantiate(z)
    assert (got.dtype, got.weak_type, got.shape) == (np.dtype(np.float32), True, (2,))
    assert not np.asarray(got).any()


def test_add_any_adds_tangents_of_one_value_only() -> None:
    a = from_numpy(np.float32([1.0, 2.0]), True)
    assert add_tangents(a, Zero.of(a)) is a
    np.testing.assert_array_equal(np.asarray(add_any_p.bind(a, a)), [2.0, 4.0])
    with pytest.raises(TypeError, match="tangents of one abstract value"):
        add_any_p.bind(a, from_numpy(np.float32([1.0, 2.0]), False))


def test_nextafter_has_no_derivative_as_in_jax() -> None:
    x = tnp.float32([1.0])
    with pytest.raises(NotImplementedError, match="'nextafter' not implemented"):
        jvp(lax.nextafter, [x, x], [x, x])
    out, t = jvp(lax.nextafter, [x, x], [Zero.of(x), Zero.of(x)])
    assert isinstance(t, Zero)


def test_grad_of_abs_squared_follows_jax_complex_convention() -> None:
    """grad(lambda z: abs(z)**2)(1+2j) == 2-4j: the transpose of the JVP at
    the cotangent 1, without conjugation."""
    z = tnp.complex64(1 + 2j)
    (g,) = vjp(lambda v: lax.integer_pow(lax.abs(v), 2), [z], tnp.float32(1.0))
    assert (g.dtype, g.weak_type) == (np.dtype(np.complex64), False)
    assert complex(g) == 2 - 4j


def test_mixed_precision_gradient_is_float32() -> None:
    """float32 parameters computed with in bfloat16 get float32 gradients."""
    w = tnp.float32([0.5, -1.5, 2.0])
    x = tnp.asarray(np.array([1.0, 2.0, 3.0], ml_dtypes.bfloat16))

    def loss(v: Any) -> Any:
        return lax.reduce_sum(lax.mul(lax.convert_element_type(v, "bfloat16"), x), (0,))

    (g,) = vjp(loss, [w], tnp.asarray(np.array(1.0, ml_dtypes.bfloat16)))
    assert (g.dtype, g.weak_type) == (np.dtype(np.float32), False)
    np.testing.assert_array_equal(np.asarray(g), [1.0, 2.0, 3.0])


def test_weak_parameters_get_weak_gradients() -> None:
    w = from_numpy(np.float32([0.5, 2.0]), True)
    one = from_numpy(np.float32(1.0), True)  # the output is weak: so is its cotangent
    (g,) = vjp(lambda v: lax.reduce_sum(lax.sin(v), (0,)), [w], one)
    assert (g.dtype, g.weak_type) == (np.dtype(np.float32), True)
    np.testing.assert_allclose(np.asarray(g), np.cos([0.5, 2.0]), rtol=1e-6)


def test_cummax_ties_share_the_tangent_as_reduce_max() -> None:
    """At each position, the running maximum's tangent is the mean of the
    tangents of the elements equal to it so far (JAX's depends on its
    scan's tree)."""
    x = tnp.float32([1.0, 3.0, 3.0, 2.0, 3.0, 5.0, 5.0])
    t = tnp.float32([1.0, 10.0, 100.0, 1000.0, 10000.0, 1e5, 1e6])
    _, got = jvp(lambda v: lax.cummax(v, 0), [x], [t])
    want = [1.0, 10.0, 55.0, 55.0, 3370.0, 1e5, 550000.0]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    for i in range(7):  # each prefix agrees with reduce_max's rule
        _, prefix = jvp(lambda v: lax.reduce_max(v, (0,)), [x[: i + 1]], [t[: i + 1]])
        assert float(prefix) == pytest.approx(want[i])


def test_scatter_with_repeated_indices_differentiates_the_last_write() -> None:
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    x = tnp.float32([0.0, 0.0, 0.0])
    u = tnp.float32([1.0, 2.0])
    at = tnp.int32([[1], [1]])
    fn = lambda v, w: lax.scatter(v, at, w, dn)  # noqa: E731
    _, t = jvp(fn, [x, u], [tnp.float32([1.0, 1.0, 1.0]), tnp.float32([5.0, 7.0])])
    np.testing.assert_array_equal(np.asarray(t), [1.0, 7.0, 1.0])
    gx, gu = vjp(fn, [x, u], tnp.float32([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(gx), [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(np.asarray(gu), [0.0, 2.0])


def test_scatter_mul_has_no_derivative_in_its_updates() -> None:
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    x, u = tnp.float32([1.0, 2.0]), tnp.float32([3.0])
    at = tnp.int32([[0]])
    with pytest.raises(NotImplementedError, match="lax.mul\\(operand, lax.scatter"):
        jvp(lambda v, w: lax.scatter_mul(v, at, w, dn), [x, u], [x, u])


# -- 2. tangents against finite differences -----------------------------------


@pytest.mark.parametrize(("name", "variant"), _params(lambda c: c.fd))
def test_tangent_matches_finite_difference(name: str, variant: str) -> None:
    case = rec.CASES[name]
    with mode(variant):
        primals = operands(case, variant)
        out, t_out = jvp(call(case), primals, tangents(case, variant, primals))
    reference = finite_difference(case, variant)
    for (o, t), want in zip(_pairs(out, t_out), reference, strict=True):
        aval = aval_of(o)
        if isinstance(t, Zero):
            assert t.aval == tangent_aval(aval), (t, aval)
        else:
            assert aval_of(t) == aval, f"tangent {aval_of(t)} of {aval}"
        if not _is_float_result(aval):
            continue
        scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
        got = as_numpy(t)
        assert _close(got, want, variant, scale), (
            f"{case.expr} [{variant}]: tangent {got.ravel()[:8]}, finite "
            f"difference {want.ravel()[:8]}"
        )


# -- 3. transposes ------------------------------------------------------------


def _pairing(a: Any, b: Any) -> tuple[float, float]:
    """``Re sum(a * b)`` (the real-bilinear pairing under which JAX's
    transposes are transposes) and a scale for the tolerance."""
    a, b = as_numpy(a), as_numpy(b)
    return float(np.real(np.sum(a * b))), float(np.sum(np.abs(a) * np.abs(b)))


def _rtol(*values: Any) -> float:
    """The relative tolerance of a pairing of values of these dtypes: the
    least precise decides (bfloat16 rounds at the third digit)."""
    narrow = any(aval_of(v).dtype == np.dtype(ml_dtypes.bfloat16) for v in values)
    return 3e-2 if narrow else 1e-5


def _random_like(aval: ShapedArray, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, aval.shape)
    if aval.dtype.kind == "c":
        values = values + 1j * rng.uniform(-1, 1, aval.shape)
    return from_numpy(np.asarray(values).astype(aval.dtype), aval.weak_type)


@pytest.mark.parametrize(("name", "variant"), _params(lambda c: bool(c.linear)))
def test_transpose_of_linear_primitive(name: str, variant: str) -> None:
    """<ct, L(t)> == <T(ct), t> for the case's primitive, linear in the
    operands of each group; cotangents have their operands' avals."""
    case = rec.CASES[name]
    with mode(variant):
        primals = operands(case, variant)
        with recording() as tape:
            case.fn(*([lax] + primals))
        prim, args, params, out = tape[-1]
        for k, group in enumerate(case.linear):
            chosen = {id(primals[i]) for i in group}
            assert chosen <= {id(a) for a in args}, (name, group)
            ts = [
                _random_like(aval_of(a), 10 * k + j) if id(a) in chosen else Zero.of(a)
                for j, a in enumerate(args)
            ]
            _, t_out = prim.jvp(args, ts, **params)
            ct = _random_like(aval_of(out), 99 + k)
            undefined = [
                UndefinedPrimal(aval_of(a)) if id(a) in chosen else a for a in args
            ]
            cts = prim.transpose(ct, *undefined, **params)
            left, scale = _pairing(ct, t_out)
            right = 0.0
            for a, t, c in zip(undefined, ts, cts, strict=True):
                if not isinstance(a, UndefinedPrimal):
                    assert c is None
                    continue
                assert aval_of(c) == a.aval, f"cotangent {aval_of(c)} for {a.aval}"
                right += _pairing(c, t)[0]
            rtol = _rtol(out, *(a for a in args if not isinstance(a, Zero)))
            assert left == pytest.approx(right, rel=rtol, abs=rtol * scale), (
                f"{prim.name} in {group}: <ct, L t> = {left}, <T ct, t> = {right}"
            )


@pytest.mark.parametrize(
    ("name", "variant"),
    [p for p in _params() if p.values[1] in ("f4", "c8", "w", "wm")],
)
def test_reverse_mode_agrees_with_forward_mode(name: str, variant: str) -> None:
    """<ct, jvp(t)> == <vjp(ct), t>: the linear part of every case's JVP
    transposes (the rules' own computations included)."""
    case = rec.CASES[name]
    with mode(variant):
        primals = operands(case, variant)
        ts = tangents(case, variant, primals)
        try:
            out, t_out = jvp(call(case), primals, ts)
        except NotImplementedError:
            pytest.skip("no derivative, as in JAX")
        if isinstance(out, tuple) or not _is_float_result(aval_of(out)):
            outs = out if isinstance(out, tuple) else (out,)
            index = next(
                (i for i, o in enumerate(outs) if _is_float_result(aval_of(o))), None
            )
            if index is None:
                return
            fn = lambda *a: case.fn(lax, *a)[index]  # noqa: E731
            t_out = t_out[index]
            out = outs[index]
        else:
            fn = lambda *a: case.fn(lax, *a)  # noqa: E731
        ct = _random_like(aval_of(out), 7)
        cts = vjp(fn, primals, ct)
    left, scale = _pairing(ct, t_out)
    right = sum(
        _pairing(c, t)[0]
        for c, t in zip(cts, ts, strict=True)
        if c is not None and not isinstance(t, Zero)
    )
    for p, c in zip(primals, cts, strict=True):
        if c is not None and not isinstance(c, Zero):
            assert aval_of(c) == aval_of(p), f"cotangent {aval_of(c)} of {aval_of(p)}"
    rtol = 10 * _rtol(out, *primals)
    assert left == pytest.approx(right, rel=rtol, abs=rtol * max(scale, 1.0))


# -- 4. against JAX -----------------------------------------------------------


def _encode_tangent(t: Any) -> Any:
    if isinstance(t, tuple):
        return [_encode_tangent(v) for v in t]
    if isinstance(t, Zero):
        if t.aval.dtype == float0:
            return ["float0", list(t.aval.shape)]
        return rec.encode(instantiate(t))
    return rec.encode(t)


def _mismatch(want: Any, got: Any, variant: str) -> str | None:
    if isinstance(want[0], list):
        for w, g in zip(want, got, strict=True):
            why = _mismatch(w, g, variant)
            if why:
                return why
        return None
    if want[0] == "float0" or got[0] == "float0":
        return None if want == got else f"JAX {want}, got {got}"
    if (want[0], want[1]) != (got[0], got[1]):
        return f"JAX {want[0]}{want[1]}, got {got[0]}{got[1]}"
    complex_ = want[0].removeprefix("w:").startswith("c")
    a = np.array([complex(*v) if complex_ else float(v) for v in want[2]])
    b = np.array([complex(*v) if complex_ else float(v) for v in got[2]])
    scale = max(1.0, float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0)))
    if not _close(b, a, variant if variant in TOLERANCE else "f4", scale):
        return f"JAX {a[:6]}, got {b[:6]}"
    return None


def _weak_as(encoded: Any, like: Any) -> Any:
    """``encoded`` with the weak flag of ``like`` (both encoded results)."""
    if isinstance(encoded[0], list):
        return [_weak_as(e, w) for e, w in zip(encoded, like, strict=True)]
    if encoded[0] == "float0":
        return encoded
    weak = like[0].startswith("w:")
    return [("w:" if weak else "") + encoded[0].removeprefix("w:"), *encoded[1:]]


@pytest.mark.parametrize(("name", "variant"), _params(lambda c: not c.jax))
def test_jvp_matches_jax(name: str, variant: str) -> None:
    """Values, dtypes and weak flags of primal and tangent outputs as
    jax.jvp's, except one thing: jax.jvp gives strong primal and tangent
    outputs for weak arrays where its rules build strong constants (tan,
    sqrt, pow, reduce_max, cumprod... on weak float32 arrays), which
    differs from its eager result and from its rule that a tangent has its
    primal's weak flag; there the weak flag expected is the eager result's."""
    case = rec.CASES[name]
    want = GOLDEN["cases"][name]["variants"][variant]
    with mode(variant):
        primals = operands(case, variant)
        try:
            out, t_out = jvp(call(case), primals, tangents(case, variant, primals))
        except Exception as exc:
            assert want.get("error") == rec.encode(exc), f"raised {exc!r}"
            return
    assert "error" not in want, f"JAX raised {want['error']}"
    for what, w, g in (
        ("primal", _weak_as(want["primal"], want["eager"]), rec.encode(out)),
        ("tangent", _weak_as(want["tangent"], want["eager"]), _encode_tangent(t_out)),
    ):
        why = _mismatch(w, g, variant)
        assert why is None, f"{case.expr} [{variant}] {what}: {why}"


def test_golden_file_matches_the_cases() -> None:
    recorded = GOLDEN["cases"]
    assert set(recorded) == {n for n, c in rec.CASES.items() if not c.jax}
    for name, body in recorded.items():
        assert body["expr"] == rec.CASES[name].expr
        assert list(body["variants"]) == list(rec.CASES[name].variants)


# -- 5. second derivatives ----------------------------------------------------


def _second_params() -> list[Any]:
    return [
        pytest.param(name, id=name)
        for name, case in rec.CASES.items()
        if case.fd and "f8" in case.variants
    ]


@pytest.mark.parametrize("name", _second_params())
def test_second_derivative_matches_finite_difference(name: str) -> None:
    """d/ds jvp(f)(x + s u; t): the JVP rules of the primitives the JVP rules
    bind. A rule computing with NumPy on values would give 0 here."""
    case = rec.CASES[name]
    variant = "f8"
    with mode(variant):
        primals = operands(case, variant)
        ts = tangents(case, variant, primals)
        rng = np.random.default_rng(5)
        us = [
            t
            if isinstance(t, Zero)
            else from_numpy(rng.uniform(-1, 1, t.shape).astype(t.dtype), t.weak_type)
            for t in ts
        ]

        def first(*ops: Any) -> Any:
            # The tangents of the floating outputs (the others are Zero).
            _, t_out = jvp(call(case), ops, ts)
            outs = t_out if isinstance(t_out, tuple) else (t_out,)
            return tuple(t for t in outs if not isinstance(t, Zero))

        if not first(*primals):
            return  # piecewise constant: no second derivative to take
        _, second = jvp(lambda *ops: first(*ops), primals, us)

        def shifted(h: float) -> list[np.ndarray[Any, Any]]:
            ops = [
                p
                if isinstance(u, Zero)
                else from_numpy(np.asarray(p) + h * np.asarray(u), p.weak_type)
                for p, u in zip(primals, us, strict=True)
            ]
            return [as_numpy(t) for t in first(*ops)]

        plus, minus = shifted(FD_STEP), shifted(-FD_STEP)
    for got, p, m in zip(second, plus, minus, strict=True):
        want = (p - m) / (2 * FD_STEP)
        scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
        assert np.allclose(as_numpy(got), want, rtol=1e-6, atol=1e-7 * scale), (
            f"{case.expr}: second derivative {as_numpy(got).ravel()[:6]}, finite "
            f"difference {want.ravel()[:6]}"
        )
