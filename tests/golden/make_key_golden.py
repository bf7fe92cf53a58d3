"""Record what JAX's typed and raw random keys look like through the
transformations.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_key_golden.py

It writes ``keys.json`` beside this file; ``tests/test_random_keys.py``
evaluates the same expressions (:data:`CASES`) with typelattice and
compares. Each is recorded as its structure (:func:`encode`): for arrays
the dtype name and shape, for tuples and lists their items, for other
values the type's name; an exception as ``!`` and its built-in class.
Importing this module needs only the standard library.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

OUT = pathlib.Path(__file__).with_name("keys.json")

#: Expressions over ``random``, ``jnp``, ``jax`` (the library), ``k`` (a
#: typed key), ``r`` (a raw key), ``ks`` (three typed keys).
CASES = [
    "k",
    "r",
    "ks",
    "random.split(k)",
    "random.split(k, (2, 3))",
    "random.split(r)",
    "random.split(r, (2, 3))",
    "random.fold_in(k, 3)",
    "random.fold_in(r, 3)",
    "random.key_data(k)",
    "random.key_data(ks)",
    "random.key_data(r)",
    "random.wrap_key_data(random.key_data(ks))",
    "random.key_impl(k)",
    "ks[0]",
    "ks[1:]",
    "list(ks)",
    "tuple(random.split(k))",
    "len(ks)",
    "ks.ndim",
    "k.ndim",
    "jax.jit(lambda k: random.split(k))(k)",
    "jax.jit(lambda k: random.normal(k, (2,)))(k)",
    "jax.jit(lambda k: k)(k)",
    "jax.vmap(lambda k: random.normal(k, (2,)))(ks)",
    "jax.vmap(lambda k: random.split(k))(ks)",
    "jax.vmap(lambda k: random.fold_in(k, 1))(ks)",
    "jax.grad(lambda x, k: (x * random.normal(k, (2,))).sum())(jnp.ones(2), k)",
    "jax.value_and_grad(lambda x, k: x * random.uniform(k))(1.0, k)",
    "jax.eval_shape(lambda k: random.split(k, 4), k)",
    "random.normal(k, (3,))",
    "random.normal(r, (3,))",
    "random.split(ks)",
    "random.normal(ks)",
    "k + 1",
    "random.wrap_key_data(jnp.zeros(3, 'uint32'))",
]


def encode(x: Any) -> Any:
    """A value's structure (see the module's docstring)."""
    if isinstance(x, BaseException):
        for cls in type(x).__mro__:
            if cls.__module__ == "builtins":
                return f"!{cls.__name__}"
    if isinstance(x, tuple | list):
        return [type(x).__name__, [encode(v) for v in x]]
    if isinstance(x, str | int | float | bool):
        return [type(x).__name__, x]
    if hasattr(x, "dtype") and hasattr(x, "shape"):
        return f"{x.dtype}{list(x.shape)}"
    return type(x).__name__


def evaluate(expr: str, names: dict[str, Any]) -> Any:
    try:
        return eval(expr, dict(names))
    except Exception as exc:
        return exc


def names(jax: Any, jnp: Any, random: Any) -> dict[str, Any]:
    k = random.key(0)
    return {
        "jax": jax,
        "jnp": jnp,
        "random": random,
        "k": k,
        "r": random.PRNGKey(0),
        "ks": random.split(random.key(1), 3),
    }


def main() -> None:
    import jax
    import jax.numpy as jnp

    env = names(jax, jnp, jax.random)
    record = {expr: encode(evaluate(expr, env)) for expr in CASES}
    OUT.write_text(
        json.dumps({"jax": jax.__version__, "cases": record}, indent=1) + "\n"
    )


if __name__ == "__main__":
    main()
