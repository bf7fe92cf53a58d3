"""Record functions with custom derivative rules, in JAX: values, dtypes and
weak flags, and the errors of rules that break the contract.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_custom_golden.py

It writes ``custom.json`` beside this file; ``tests/test_custom_golden.py``
runs the same cases with typelattice and compares.

The cases are the examples of JAX's guide to custom derivative rules
("Custom derivative rules for JAX-transformable Python functions"): a
numerically stable ``log1pexp`` (``defjvp`` and ``defjvps``), a convention
at a point where the formula is undefined (``x / (1 + sqrt(x))`` at 0), a
norm safe at zero, gradient clipping with ``custom_vjp`` (residuals, and
``nondiff_argnums``), ``sin`` with both kinds of rules, functions passed
as non-differentiable arguments, a fixed-point solver differentiated
implicitly (Newton's square root), and rules given symbolic zeros, each
under ``grad``, ``jit``, ``jvp`` and ``vjp`` and their nestings; and the
errors JAX raises (and the rules' results it accepts: a list from
``bwd``, a cotangent of another dtype). A case is a function of ``lib``
(:func:`jax_lib` here, the test's typelattice one) returning named
results; this module needs only NumPy to import.

An encoded result is ``[code, shape, values]`` (``w:`` before the code of
a weak array), a list of them for a tuple, or ``["!", exception class,
message]`` for an error (a case that may raise is a function of no
argument).
"""

from __future__ import annotations

import functools
import json
import math
import platform
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).with_name("custom.json")

CODES = {"float16": "f2", "float32": "f4", "float64": "f8", "int32": "i4", "bool": "b1"}


def _log1pexp_rules(lib: Any, defjvps: bool) -> Any:
    xnp = lib.np

    @lib.custom_jvp
    def log1pexp(x: Any) -> Any:
        return xnp.log(1.0 + xnp.exp(x))

    if defjvps:
        log1pexp.defjvps(lambda t, ans, x: (1 - 1 / (1 + xnp.exp(x))) * t)
    else:

        @log1pexp.defjvp
        def log1pexp_jvp(primals: Any, tangents: Any) -> Any:
            (x,), (x_dot,) = primals, tangents
            ans = log1pexp(x)
            return ans, (1 - 1 / (1 + xnp.exp(x))) * x_dot

    return log1pexp


def case_log1pexp(lib: Any, defjvps: bool) -> dict[str, Any]:
    xnp = lib.np
    f = _log1pexp_rules(lib, defjvps)

    def naive(x: Any) -> Any:
        return xnp.log(1.0 + xnp.exp(x))

    xs = xnp.asarray([0.0, 1.0, 2.0], dtype="float32")
    return {
        "value": f(3.0),
        "grad": lib.grad(f)(3.0),
        "jit_grad": lib.jit(lib.grad(f))(3.0),
        "grad_jit": lib.grad(lib.jit(f))(3.0),
        "grad_100": lib.grad(f)(100.0),
        "naive_grad_100": lib.grad(naive)(100.0),
        "grad_sum": lib.grad(lambda x: f(x).sum())(xs),
        "grad_f16": lib.grad(f)(xnp.float16(2.0)),
        "jvp": lib.jvp(f, (3.0,), (2.0,)),
        "jit_jvp": lib.jit(lambda x, t: lib.jvp(f, (x,), (t,)))(xs, xs),
        "grad_grad": lib.grad(lib.grad(f))(1.0),
        "vjp": lib.vjp(f, xs)[1](xnp.ones(3, "float32")),
    }


def case_sin_mul_jvp(lib: Any, defjvps: bool) -> dict[str, Any]:
    xnp = lib.np

    @lib.custom_jvp
    def f(x: Any, y: Any) -> Any:
        return xnp.sin(x) * y

    if defjvps:
        f.defjvps(
            lambda x_dot, out, x, y: xnp.cos(x) * x_dot * y,
            lambda y_dot, out, x, y: xnp.sin(x) * y_dot,
        )
    else:

        @f.defjvp
        def f_jvp(primals: Any, tangents: Any) -> Any:
            (x, y), (x_dot, y_dot) = primals, tangents
            primal_out = f(x, y)
            tangent_out = xnp.cos(x) * x_dot * y + xnp.sin(x) * y_dot
            return primal_out, tangent_out

    return {
        "value": f(2.0, 3.0),
        "jvp": lib.jvp(f, (2.0, 3.0), (1.0, 0.0)),
        "grad": lib.grad(f)(2.0, 3.0),
        "grad_both": lib.grad(f, argnums=(0, 1))(2.0, 3.0),
        "jit_grad_both": lib.jit(lib.grad(f, argnums=(0, 1)))(
            xnp.float32(2.0), xnp.float32(3.0)
        ),
    }


def case_defjvps_none(lib: Any) -> dict[str, Any]:
    xnp = lib.np

    @lib.custom_jvp
    def f(x: Any, y: Any) -> Any:
        return xnp.sin(x) * y

    f.defjvps(lambda x_dot, out, x, y: xnp.cos(x) * x_dot * y, None)
    return {
        "grad_both": lib.grad(f, argnums=(0, 1))(2.0, 3.0),
        "jvp": lib.jvp(f, (2.0, 3.0), (1.0, 1.0)),
    }


def case_convention(lib: Any) -> dict[str, Any]:
    xnp = lib.np

    def naive(x: Any) -> Any:
        return x / (1 + xnp.sqrt(x))

    @lib.custom_jvp
    def f(x: Any) -> Any:
        return x / (1 + xnp.sqrt(x))

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (x_dot,) = primals, tangents
        ans = f(x)
        ans_dot = ((xnp.sqrt(x) + 2) / (2 * (xnp.sqrt(x) + 1) ** 2)) * x_dot
        return ans, ans_dot

    return {
        "naive_grad_0": lib.grad(naive)(0.0),
        "grad_0": lib.grad(f)(0.0),
        "grad_4": lib.grad(f)(4.0),
        "jit_grad_0": lib.jit(lib.grad(f))(0.0),
    }


def case_safe_norm(lib: Any) -> dict[str, Any]:
    xnp = lib.np

    @lib.custom_jvp
    def safe_norm(x: Any) -> Any:
        return xnp.sqrt(xnp.sum(x * x))

    @safe_norm.defjvp
    def safe_norm_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        ans = safe_norm(x)
        at_zero = ans == 0
        denominator = xnp.where(at_zero, 1.0, ans)
        return ans, xnp.where(at_zero, 0.0, xnp.sum(x * t) / denominator)

    zero = xnp.zeros(3, "float32")
    v = xnp.asarray([3.0, 4.0, 0.0], dtype="float32")
    return {
        "naive_grad_0": lib.grad(lambda x: xnp.sqrt(xnp.sum(x * x)))(zero),
        "grad_0": lib.grad(safe_norm)(zero),
        "grad_v": lib.grad(safe_norm)(v),
        "jit_grad_0": lib.jit(lib.grad(safe_norm))(zero),
        "value_and_grad_v": lib.value_and_grad(safe_norm)(v),
    }


def case_clip_gradient(lib: Any) -> dict[str, Any]:
    xnp = lib.np

    @lib.custom_vjp
    def clip_gradient(lo: Any, hi: Any, x: Any) -> Any:
        return x  # identity function

    def clip_gradient_fwd(lo: Any, hi: Any, x: Any) -> Any:
        return x, (lo, hi)  # save bounds as residuals

    def clip_gradient_bwd(res: Any, g: Any) -> Any:
        lo, hi = res
        return (None, None, xnp.clip(g, lo, hi))

    clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)

    @functools.partial(lib.custom_vjp, nondiff_argnums=(0, 1))
    def clip_static(lo: float, hi: float, x: Any) -> Any:
        return x

    def clip_static_fwd(lo: float, hi: float, x: Any) -> Any:
        return x, None

    def clip_static_bwd(lo: float, hi: float, _: Any, g: Any) -> Any:
        return (xnp.clip(g, lo, hi),)

    clip_static.defvjp(clip_static_fwd, clip_static_bwd)
    t = xnp.linspace(0, 10, 7, dtype="float32")

    def clipped_sin(clip: Any) -> Callable[[Any], Any]:
        return lambda x: clip(-0.75, 0.75, xnp.sin(x)).sum()

    return {
        "value": clip_gradient(-0.75, 0.75, t),
        "grad": lib.grad(clipped_sin(clip_gradient))(t),
        "jit_grad": lib.jit(lib.grad(clipped_sin(clip_gradient)))(t),
        "grad_scalar": lib.grad(lambda x: 3.0 * clip_gradient(-0.75, 0.75, x))(1.0),
        "static_grad": lib.grad(clipped_sin(clip_static))(t),
        "static_jit_grad": lib.jit(lib.grad(clipped_sin(clip_static)))(t),
    }


def case_sin_vjp(lib: Any) -> dict[str, Any]:
    xnp = lib.np

    @lib.custom_vjp
    def f(x: Any) -> Any:
        return xnp.sin(x)

    def f_fwd(x: Any) -> Any:
        return f(x), xnp.cos(x)

    def f_bwd(cos_x: Any, y_bar: Any) -> Any:
        return (cos_x * y_bar,)

    f.defvjp(f_fwd, f_bwd)

    @lib.custom_vjp
    def g(x: Any, y: Any) -> Any:
        return xnp.sin(x) * y

    def g_fwd(x: Any, y: Any) -> Any:
        return g(x, y), (xnp.cos(x), xnp.sin(x), y)

    def g_bwd(res: Any, out_bar: Any) -> Any:
        cos_x, sin_x, y = res
        return (cos_x * out_bar * y, sin_x * out_bar)

    g.defvjp(g_fwd, g_bwd)
    xs = xnp.asarray([0.5, 1.0], dtype="float32")
    return {
        "value": f(3.0),
        "grad": lib.grad(f)(3.0),
        "jit_grad": lib.jit(lib.grad(f))(3.0),
        "grad_jit": lib.grad(lib.jit(f))(3.0),
        "jit_value": lib.jit(f)(xs),
        "vjp": lib.vjp(f, xs)[1](xnp.asarray([1.0, 2.0], dtype="float32")),
        "g_grad_both": lib.grad(g, argnums=(0, 1))(2.0, 3.0),
        "g_jit_grad": lib.jit(lib.grad(g))(xnp.float32(2.0), xnp.float32(3.0)),
    }


def case_nondiff_functions(lib: Any) -> dict[str, Any]:
    @functools.partial(lib.custom_jvp, nondiff_argnums=(0,))
    def app(f: Callable[[Any], Any], x: Any) -> Any:
        return f(x)

    @app.defjvp
    def app_jvp(f: Callable[[Any], Any], primals: Any, tangents: Any) -> Any:
        (x,), (x_dot,) = primals, tangents
        return f(x), 2.0 * x_dot

    @functools.partial(lib.custom_jvp, nondiff_argnums=(0, 2))
    def app2(f: Callable[[Any], Any], x: Any, g: Callable[[Any], Any]) -> Any:
        return f(g(x))

    @app2.defjvp
    def app2_jvp(f: Any, g: Any, primals: Any, tangents: Any) -> Any:
        (x,), (x_dot,) = primals, tangents
        return f(g(x)), 3.0 * x_dot

    @functools.partial(lib.custom_vjp, nondiff_argnums=(0,))
    def app_vjp(f: Callable[[Any], Any], x: Any) -> Any:
        return f(x)

    def app_fwd(f: Any, x: Any) -> Any:
        return f(x), x

    def app_bwd(f: Any, x: Any, g: Any) -> Any:
        return (5 * g,)

    app_vjp.defvjp(app_fwd, app_bwd)
    cube = lambda x: x**3  # noqa: E731
    return {
        "app": app(cube, 3.0),
        "app_grad": lib.grad(app, 1)(cube, 3.0),
        "app_jvp": lib.jvp(lambda x: app(cube, x), (3.0,), (1.0,)),
        "app_jit_grad": lib.jit(lib.grad(lambda x: app(cube, x)))(3.0),
        "app2": app2(cube, 3.0, lambda y: 5 * y),
        "app2_grad": lib.grad(app2, 1)(cube, 3.0, lambda y: 5 * y),
        "app_vjp": app_vjp(lambda x: x**2, 4.0),
        "app_vjp_grad": lib.grad(app_vjp, 1)(lambda x: x**2, 4.0),
        "app_vjp_jit_grad": lib.jit(lib.grad(lambda x: app_vjp(cube, x)))(4.0),
    }


def case_fixed_point(lib: Any) -> dict[str, Any]:
    xnp = lib.np

    @functools.partial(lib.custom_vjp, nondiff_argnums=(0,))
    def fixed_point(f: Any, a: Any, x_guess: Any) -> Any:
        # (A Python loop on values: the rules run on concrete values here.)
        x_prev, x = x_guess, f(a, x_guess)
        while bool(xnp.abs(x_prev - x) > 1e-6):
            x_prev, x = x, f(a, x)
        return x

    def fixed_point_fwd(f: Any, a: Any, x_init: Any) -> Any:
        x_star = fixed_point(f, a, x_init)
        return x_star, (a, x_star)

    def fixed_point_rev(f: Any, res: Any, x_star_bar: Any) -> Any:
        a, x_star = res
        _, vjp_a = lib.vjp(lambda a: f(a, x_star), a)
        (a_bar,) = vjp_a(
            fixed_point(
                functools.partial(rev_iter, f), (a, x_star, x_star_bar), x_star_bar
            )
        )
        return a_bar, xnp.zeros_like(x_star)

    def rev_iter(f: Any, packed: Any, u: Any) -> Any:
        a, x_star, x_star_bar = packed
        _, vjp_x = lib.vjp(lambda x: f(a, x), x_star)
        return x_star_bar + vjp_x(u)[0]

    fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)

    def newton_sqrt(a: Any) -> Any:
        update = lambda a, x: 0.5 * (x + a / x)  # noqa: E731
        return fixed_point(update, a, a)

    return {
        "value": newton_sqrt(2.0),
        "grad": lib.grad(newton_sqrt)(2.0),
        "grad_grad": lib.grad(lib.grad(newton_sqrt))(2.0),
        "grad_f32": lib.grad(newton_sqrt)(np.float32(9.0)),
    }


def case_errors(lib: Any) -> dict[str, Any]:
    xnp = lib.np

    @lib.custom_vjp
    def f(x: Any) -> Any:
        return xnp.sin(x)

    f.defvjp(lambda x: (xnp.sin(x), xnp.cos(x)), lambda c, g: (c * g,))

    def with_bwd(bwd: Callable[..., Any]) -> Any:
        @lib.custom_vjp
        def h(x: Any, y: Any) -> Any:
            return x * y

        h.defvjp(lambda x, y: (x * y, (x, y)), bwd)
        return lambda: lib.grad(h, argnums=(0, 1))(xnp.float32(2.0), xnp.float32(3.0))

    def with_jvp(rule: Callable[..., Any]) -> Any:
        @lib.custom_jvp
        def k(x: Any) -> Any:
            return xnp.sin(x)

        k.defjvp(rule)
        return lambda: lib.jvp(k, (xnp.float32(1.0),), (xnp.float32(1.0),))

    return {
        "jvp_of_custom_vjp": lambda: lib.jvp(f, (3.0,), (1.0,)),
        "bwd_wrong_length": with_bwd(lambda res, g: (g,)),
        "bwd_not_a_tuple": with_bwd(lambda res, g: [g, g]),
        "bwd_wrong_shape": with_bwd(lambda res, g: (g, xnp.ones(2, "float32"))),
        "bwd_wrong_dtype": with_bwd(lambda res, g: (g, xnp.ones((), "float16"))),
        "jvp_not_a_pair": with_jvp(lambda p, t: xnp.sin(p[0])),
        "jvp_wrong_dtype": with_jvp(
            lambda p, t: (xnp.sin(p[0]), xnp.ones((), "float16"))
        ),
        "jvp_wrong_shape": with_jvp(
            lambda p, t: (xnp.sin(p[0]), xnp.ones(2, "float32"))
        ),
    }


def case_symbolic_zeros(lib: Any) -> dict[str, Any]:
    xnp = lib.np
    seen: dict[str, Any] = {}

    @lib.custom_jvp
    def f(x: Any, y: Any) -> Any:
        return xnp.sin(x) * y

    @functools.partial(f.defjvp, symbolic_zeros=True)
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x, y), (tx, ty) = primals, tangents
        zero_x = isinstance(tx, lib.SymbolicZero)
        zero_y = isinstance(ty, lib.SymbolicZero)
        seen["jvp_zeros"] = xnp.asarray([zero_x, zero_y])
        out = f(x, y)
        if zero_x and zero_y:
            return out, lib.SymbolicZero(tx.aval)
        t = xnp.zeros_like(out)
        if not zero_x:
            t = t + xnp.cos(x) * tx * y
        if not zero_y:
            t = t + xnp.sin(x) * ty
        return out, t

    @lib.custom_vjp
    def g(x: Any, y: Any) -> Any:
        return x * y, x + y

    def g_fwd(x: Any, y: Any) -> Any:
        seen["perturbed"] = xnp.asarray([x.perturbed, y.perturbed])
        return g(x.value, y.value), (x.value, y.value)

    def g_bwd(res: Any, cts: Any) -> Any:
        x, y = res
        c_prod, c_sum = cts
        seen["bwd_zeros"] = xnp.asarray(
            [isinstance(c_prod, lib.SymbolicZero), isinstance(c_sum, lib.SymbolicZero)]
        )
        dx = c_sum if not isinstance(c_sum, lib.SymbolicZero) else xnp.zeros_like(x)
        dy = dx
        if not isinstance(c_prod, lib.SymbolicZero):
            dx, dy = dx + c_prod * y, dy + c_prod * x
        return dx, dy

    g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)
    two, three = xnp.float32(2.0), xnp.float32(3.0)
    out: dict[str, Any] = {}
    out["grad_x"] = lib.grad(f)(two, three)
    out["grad_x_zeros"] = seen["jvp_zeros"]
    out["jvp_y"] = lib.jvp(lambda y: f(two, y), (three,), (two,))
    out["jvp_y_zeros"] = seen["jvp_zeros"]
    out["grad_both"] = lib.grad(f, argnums=(0, 1))(two, three)
    out["grad_both_zeros"] = seen["jvp_zeros"]
    out["vjp_grad_x"] = lib.grad(lambda x: g(x, three)[0])(two)
    out["vjp_perturbed"] = seen["perturbed"]
    out["vjp_bwd_zeros"] = seen["bwd_zeros"]
    out["vjp_grad_sum"] = lib.grad(lambda y: g(two, y)[1], argnums=0)(three)
    out["vjp_perturbed_2"] = seen["perturbed"]
    out["vjp_bwd_zeros_2"] = seen["bwd_zeros"]
    return out


CASES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "log1pexp_defjvp": functools.partial(case_log1pexp, defjvps=False),
    "log1pexp_defjvps": functools.partial(case_log1pexp, defjvps=True),
    "sin_mul_defjvp": functools.partial(case_sin_mul_jvp, defjvps=False),
    "sin_mul_defjvps": functools.partial(case_sin_mul_jvp, defjvps=True),
    "defjvps_none": case_defjvps_none,
    "convention": case_convention,
    "safe_norm": case_safe_norm,
    "clip_gradient": case_clip_gradient,
    "sin_vjp": case_sin_vjp,
    "nondiff_functions": case_nondiff_functions,
    "fixed_point": case_fixed_point,
    "symbolic_zeros": case_symbolic_zeros,
    "errors": case_errors,
}


def encode(result: Any) -> Any:
    """An encoded result (see the module's docstring)."""
    if isinstance(result, tuple | list):
        return [encode(r) for r in result]
    if isinstance(result, float):
        return {"py": result}
    values = np.asarray(result)
    code = CODES[values.dtype.name]
    weak = bool(getattr(result, "weak_type", False))
    flat = [None if math.isnan(v) else v for v in values.astype(float).ravel().tolist()]
    return [f"w:{code}" if weak else code, list(values.shape), flat]


def run_case(lib: Any, name: str) -> dict[str, Any]:
    """A case's results, each encoded (errors by their class and message)."""
    out: dict[str, Any] = {}
    for key, result in CASES[name](lib).items():
        if callable(result):  # (a call that may raise)
            try:
                result = result()
            except Exception as err:  # noqa: BLE001 (the error is the result)
                out[key] = ["!", type(err).__name__, str(err)]
                continue
        out[key] = encode(result)
    return out


def jax_lib() -> Any:
    """JAX's functions, by the names the cases use."""
    import jax  # noqa: PLC0415 (only the recording needs JAX)
    import jax.numpy as jnp  # noqa: PLC0415

    return types.SimpleNamespace(
        np=jnp,
        custom_jvp=jax.custom_jvp,
        custom_vjp=jax.custom_vjp,
        grad=jax.grad,
        jit=jax.jit,
        jvp=jax.jvp,
        vjp=jax.vjp,
        value_and_grad=jax.value_and_grad,
        SymbolicZero=jax.custom_derivatives.SymbolicZero,
    )


def main() -> None:
    import jax  # noqa: PLC0415

    lib = jax_lib()
    cases = {name: run_case(lib, name) for name in CASES}
    meta = {
        "about": "Functions with custom derivative rules, recorded from JAX",
        "jax": jax.__version__,
        "python": platform.python_version(),
    }
    OUT.write_text(json.dumps({"meta": meta, "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
