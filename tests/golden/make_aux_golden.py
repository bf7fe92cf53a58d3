"""Record what JAX returns as the auxiliary data of ``has_aux=True``.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_aux_golden.py

It writes ``aux.json`` beside this file; ``tests/test_jax_level.py`` runs the
same cases with typelattice and compares. A case is a transformation
(``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``jacfwd``, ``jacrev``, each
also under ``jit``) of :func:`fun`, whose aux mixes Python and NumPy scalars,
text, None, arrays made outside and values computed from the argument. The
record per case: each aux leaf's path, its kind (:func:`kind`) and, for
arrays, dtype and weak flag. Importing this module needs only NumPy.
"""

from __future__ import annotations

import json
import pathlib
from types import ModuleType
from typing import Any

import numpy as np

OUT = pathlib.Path(__file__).with_name("aux.json")

TRANSFORMS = ("grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev")


def fun(jnp: ModuleType, text: bool = True) -> Any:
    """The function: a scalar output and an aux with every kind of leaf
    (text only with ``text``: jit returns arrays only)."""
    constant = jnp.ones(2, dtype="int32")

    def f(x: Any) -> Any:
        aux = {
            "float": 1.5,
            "int": 2,
            "bool": True,
            "np_float32": np.float32(3),
            "np_array": np.arange(2),
            "text": "label" if text else None,
            "none": None,
            "outside": constant,
            "traced": (x * 2, jnp.sum(x) > 0),
        }
        return jnp.sum(x * x), aux

    return f


def aux_of(jax: ModuleType, jnp: ModuleType, transform: str, jit: bool) -> Any:
    f = fun(jnp, text=not jit and transform != "jacfwd")
    x = jnp.asarray([1.0, 2.0])
    call = {
        "grad": lambda: jax.grad(f, has_aux=True)(x)[1],
        "value_and_grad": lambda: jax.value_and_grad(f, has_aux=True)(x)[0][1],
        "vjp": lambda: jax.vjp(f, x, has_aux=True)[2],
        "jvp": lambda: jax.jvp(f, (x,), (x,), has_aux=True)[2],
        "jacfwd": lambda: jax.jacfwd(f, has_aux=True)(x)[1],
        "jacrev": lambda: jax.jacrev(f, has_aux=True)(x)[1],
    }[transform]
    if not jit or transform in ("vjp", "jvp"):
        return call()
    wrapped = {
        "grad": lambda: jax.jit(jax.grad(f, has_aux=True))(x)[1],
        "value_and_grad": lambda: jax.jit(jax.value_and_grad(f, has_aux=True))(x)[0][1],
        "jacfwd": lambda: jax.jit(jax.jacfwd(f, has_aux=True))(x)[1],
        "jacrev": lambda: jax.jit(jax.jacrev(f, has_aux=True))(x)[1],
    }[transform]
    return wrapped()


def kind(leaf: Any, array_type: type) -> dict[str, Any]:
    """A leaf's kind: the Python type's name, or the array's dtype and weak
    flag."""
    if isinstance(leaf, array_type):
        return {"kind": "Array", "dtype": str(leaf.dtype), "weak": bool(leaf.weak_type)}
    return {"kind": type(leaf).__name__}


def describe(tree: Any, array_type: type, prefix: str = "") -> dict[str, Any]:
    if isinstance(tree, dict):
        out: dict[str, Any] = {}
        for k in sorted(tree):
            out.update(describe(tree[k], array_type, f"{prefix}/{k}"))
        return out
    if isinstance(tree, tuple):
        out = {}
        for i, v in enumerate(tree):
            out.update(describe(v, array_type, f"{prefix}/{i}"))
        return out
    return {prefix: kind(tree, array_type)}


def cases() -> list[tuple[str, bool]]:
    return [
        (t, j)
        for t in TRANSFORMS
        for j in (False, True)
        if not (j and t in ("vjp", "jvp"))
    ]


def main() -> None:
    import jax
    import jax.numpy as jnp

    record = {
        f"{t}{'+jit' if j else ''}": describe(aux_of(jax, jnp, t, j), jax.Array)
        for t, j in cases()
    }
    OUT.write_text(
        json.dumps({"jax": jax.__version__, "cases": record}, indent=1) + "\n"
    )


if __name__ == "__main__":
    main()
