"""Record JAX's ``make_jaxpr`` text for functions written with ``lax``.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_jaxpr_golden.py

It writes ``jaxpr.json`` beside this file: per case, the text JAX prints
(``str``, at its default width of 80 columns) and the same on one line
(``pretty_print(width=1_000_000)``). ``tests/test_jaxpr.py`` traces every
case with ``typelattice.make_jaxpr`` and compares.

The cases are written once, here, for both libraries: ``build(lax, grad)``
returns the function, given the library's ``lax`` module and ``grad``;
the arguments are built by ``arguments`` from the labels below. Importing
this module needs only NumPy (JAX is imported by ``main``).

JAX's equations carry parameters that typelattice's primitives do not have
(shardings, an accuracy, QR's pivoting and MAGMA switches); their default
values are listed in ``JAX_ONLY`` and left out of JAX's one-line text
before comparing (the line breaks of the 80-column text depend on them,
so that text is compared only where JAX shows none).
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

HERE = Path(__file__).parent

#: Parameters of JAX's primitives that typelattice's do not have, at the
#: values JAX records by default: left out of JAX's text before comparing.
JAX_ONLY = (
    " out_sharding=None",
    "out_sharding=None ",
    " sharding=None",
    "sharding=None ",
    " accuracy=None",
    " pivoting=False",
    " use_magma=None",
)


class Case(NamedTuple):
    """A function (``build(lax, grad)``), its arguments (labels: ``f32[2,3]``
    zeros of that type, ``py:1.0`` a Python float, ``{...}`` a dict of
    labels) and its static argument positions."""

    build: Callable[[Any, Any], Callable[..., Any]]
    args: tuple[Any, ...]
    static_argnums: tuple[int, ...] = ()


def _chain(lax: Any, n: int) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        for _ in range(n):
            x = lax.sin(x)
        return x

    return f


CASES: dict[str, Case] = {
    "sin": Case(lambda lax, grad: lax.sin, ("f32[3]",)),
    "add_python_scalar": Case(lambda lax, grad: lambda x: lax.add(x, 1.0), ("f32[3]",)),
    "weak_input": Case(lambda lax, grad: lambda x: lax.mul(x, 2.0), ("py:1.0",)),
    "convert_element_type": Case(
        lambda lax, grad: lambda x: lax.convert_element_type(x, np.int32),
        ("f32[3]",),
    ),
    "reduce_sum": Case(
        lambda lax, grad: lambda x: lax.reduce_sum(x, (0,)), ("f32[2,3]",)
    ),
    "dot_general": Case(
        lambda lax, grad: lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
        ("f32[2,3]", "f32[3,4]"),
    ),
    "dot_general_batched": Case(
        lambda lax, grad: (
            lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
        ),
        ("f32[5,2,3]", "f32[5,3,4]"),
    ),
    "broadcast_in_dim": Case(
        lambda lax, grad: lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)),
        ("f32[3]",),
    ),
    "transpose": Case(
        lambda lax, grad: lambda x: lax.transpose(x, (1, 0)), ("f32[2,3]",)
    ),
    "two_outputs": Case(
        lambda lax, grad: lambda x: (lax.sin(x), lax.cos(x)), ("f32[3]",)
    ),
    "pytrees": Case(
        lambda lax, grad: (
            lambda d: {
                "s": lax.add(d["a"], d["b"]),
                "t": (d["a"], lax.mul(d["b"], 2.0)),
            }
        ),
        ({"a": "f32[3]", "b": "f32[3]"},),
    ),
    "static_argnums": Case(
        lambda lax, grad: lambda x, n: lax.mul(x, float(n)),
        ("f32[3]", "static:3"),
        static_argnums=(1,),
    ),
    "constant": Case(
        lambda lax, grad: lambda x: lax.add(x, np.arange(3, dtype=np.float32)),
        ("f32[3]",),
    ),
    "long": Case(lambda lax, grad: _chain(lax, 30), ("f32[3]",)),
    "grad": Case(
        lambda lax, grad: grad(
            lambda x: lax.reduce_sum(lax.add(lax.mul(x, x), 2.0), (0,))
        ),
        ("f32[3]",),
    ),
    "grad_sin": Case(lambda lax, grad: grad(lax.sin), ("f32[]",)),
    "qr": Case(lambda lax, grad: lax.linalg.qr, ("f32[4,3]",)),
    "qr_reduced": Case(
        lambda lax, grad: lambda x: lax.linalg.qr(x, full_matrices=False),
        ("f32[4,3]",),
    ),
    "qr_wide_batched": Case(lambda lax, grad: lax.linalg.qr, ("f32[2,2,3]",)),
    "qr_complex": Case(
        lambda lax, grad: lambda x: lax.linalg.qr(x, full_matrices=False),
        ("c64[3,2]",),
    ),
}

_DTYPES = {"f32": np.float32, "c64": np.complex64, "i32": np.int32}


def argument(label: Any, zeros: Callable[[Any, Any], Any]) -> Any:
    """The argument a label stands for; ``zeros(shape, dtype)`` makes an
    array of the library's."""
    if isinstance(label, dict):
        return {k: argument(v, zeros) for k, v in label.items()}
    if label.startswith("py:"):
        return float(label[3:])
    if label.startswith("static:"):
        return int(label[7:])
    code, dims = label[:-1].split("[")
    shape = tuple(int(d) for d in dims.split(",") if d)
    return zeros(shape, _DTYPES[code])


def strip_jax_only(text: str) -> str:
    for extra in JAX_ONLY:
        text = text.replace(extra, "")
    return text


def main() -> None:
    import jax
    import jax.numpy as jnp
    from jax import lax

    cases: dict[str, Any] = {}
    for name, case in CASES.items():
        fn = case.build(lax, jax.grad)
        args = [argument(a, jnp.zeros) for a in case.args]
        closed = jax.make_jaxpr(fn, static_argnums=case.static_argnums)(*args)
        cases[name] = {
            "text": str(closed),
            "one_line": closed.pretty_print(width=1_000_000),
        }
    out = {
        "jax": jax.__version__,
        "python": platform.python_version(),
        "cases": cases,
    }
    (HERE / "jaxpr.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
