"""Record jax.jacfwd, jax.jacrev and jax.hessian on a few functions into
jacobians.json (run with JAX installed: python make_jacobian_golden.py).

Each case is a function written once, over a namespace ``xp`` (jax.numpy
here, typelattice.numpy in tests/test_jacobians.py), its arguments, and the
transformation's options; the record is every leaf of the result: its path,
shape, dtype, weak flag and values.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np

#: name -> (transformation, function source, argument sources, options)
CASES: dict[str, tuple[str, str, list[str], dict[str, Any]]] = {
    "elementwise": (
        "jacfwd",
        "lambda x: xp.sin(x) * x[::-1]",
        ["xp.arange(1.0, 4.0)"],
        {},
    ),
    "elementwise_rev": (
        "jacrev",
        "lambda x: xp.sin(x) * x[::-1]",
        ["xp.arange(1.0, 4.0)"],
        {},
    ),
    "matrix_in": (
        "jacfwd",
        "lambda w: xp.tanh(w @ xp.arange(3.0))",
        ["xp.ones((2, 3)) * 0.1"],
        {},
    ),
    "matrix_in_rev": (
        "jacrev",
        "lambda w: xp.tanh(w @ xp.arange(3.0))",
        ["xp.ones((2, 3)) * 0.1"],
        {},
    ),
    "dict_tree": (
        "jacfwd",
        "lambda d: {'a': d['w'] @ d['x'], 'b': d['w'].sum()}",
        ["{'w': xp.ones((2, 3)), 'x': xp.arange(3.0)}"],
        {},
    ),
    "dict_tree_rev": (
        "jacrev",
        "lambda d: {'a': d['w'] @ d['x'], 'b': d['w'].sum()}",
        ["{'w': xp.ones((2, 3)), 'x': xp.arange(3.0)}"],
        {},
    ),
    "two_args": (
        "jacrev",
        "lambda x, y: x * y",
        ["xp.ones(2)", "3.0"],
        {"argnums": (0, 1)},
    ),
    "two_args_fwd": (
        "jacfwd",
        "lambda x, y: x * y",
        ["xp.ones(2)", "3.0"],
        {"argnums": (0, 1)},
    ),
    "weak_scalar": ("jacfwd", "lambda x: x * 2", ["3.0"], {}),
    "weak_scalar_rev": ("jacrev", "lambda x: x * 2", ["3.0"], {}),
    "bfloat16": (
        "jacfwd",
        "lambda x: x * x",
        ["xp.arange(3.0).astype(xp.bfloat16)"],
        {},
    ),
    "bfloat16_rev": (
        "jacrev",
        "lambda x: x * x",
        ["xp.arange(3.0).astype(xp.bfloat16)"],
        {},
    ),
    "second_arg": (
        "jacrev",
        "lambda x, y: xp.sum(x) * y",
        ["xp.ones(3)", "xp.arange(2.0)"],
        {"argnums": 1},
    ),
    "aux": (
        "jacfwd",
        "lambda x: (x ** 2, x.sum())",
        ["xp.arange(3.0)"],
        {"has_aux": True},
    ),
    "hessian_cubic": (
        "hessian",
        "lambda x: xp.sum(x ** 3)",
        ["xp.array([1.0, 2.0])"],
        {},
    ),
    "hessian_matrix": (
        "hessian",
        "lambda w: xp.sum(xp.tanh(w @ xp.ones(2)))",
        ["xp.ones((2, 2)) * 0.3"],
        {},
    ),
    "hessian_two": (
        "hessian",
        "lambda x, y: xp.sum(x * x * y)",
        ["xp.ones(2)", "xp.array([2.0, 3.0])"],
        {"argnums": (0, 1)},
    ),
}


def leaves_of(tree_util: Any, value: Any) -> list[dict[str, Any]]:
    out = []
    for path, leaf in tree_util.tree_flatten_with_path(value)[0]:
        arr = np.asarray(leaf, dtype=np.float64)
        out.append(
            {
                "path": tree_util.keystr(path),
                "shape": list(np.shape(leaf)),
                "dtype": str(leaf.dtype),
                "weak": bool(getattr(leaf, "weak_type", False)),
                "values": arr.ravel().tolist(),
            }
        )
    return out


def record() -> dict[str, Any]:
    import jax
    import jax.numpy as jnp

    results = {}
    for name, (how, fun, args, options) in CASES.items():
        xp = jnp
        f = eval(fun, {"xp": xp})
        values = [eval(a, {"xp": xp}) for a in args]
        got = getattr(jax, how)(f, **options)(*values)
        results[name] = leaves_of(jax.tree_util, got)
    return {"jax": jax.__version__, "results": results}


if __name__ == "__main__":
    path = pathlib.Path(__file__).with_name("jacobians.json")
    path.write_text(json.dumps(record(), indent=1) + "\n")
