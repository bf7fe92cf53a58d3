"""Record Flax linen's Sequential, ConvLocal, PReLU, combine_masks and the
factory initialisers: parameter names, shapes and dtypes, and outputs on the
recorded parameters.

Run with a Python that has JAX and Flax installed, from anywhere::

    python tests/golden/make_nn_combinators_golden.py

It writes ``nn_combinators.json`` beside this file; ``tests/test_nn_combinators.py``
builds the same layers with ``typelattice.nn``, checks its parameters'
names, shapes and dtypes, and applies them to Flax's parameter values. The
cases and inputs live here (NumPy only at import).
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

OUT = Path(__file__).with_name("nn_combinators.json")

NP_DTYPES: dict[str, Any] = {
    "b1": np.bool_,
    "i4": np.int32,
    "bf": ml_dtypes.bfloat16,
    "f4": np.float32,
}
CODES = {np.dtype(t): code for code, t in NP_DTYPES.items()}


def layer_input(code: str, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(len(shape) * 10 + len(code))
    if code == "i4":
        return rng.integers(-5, 6, shape).astype(np.int32)
    return rng.standard_normal(shape).astype(NP_DTYPES[code])


def _mlp(nn: Any, param_dtype: str) -> Any:
    return nn.Sequential(
        [
            nn.Dense(4, param_dtype=param_dtype),
            nn.relu,
            nn.Dense(3, param_dtype=param_dtype),
        ]
    )


def _tuples(nn: Any, param_dtype: str) -> Any:
    # A layer returning a tuple: the next one takes it as arguments.
    return nn.Sequential(
        [lambda x: (x, 2 * x), lambda a, b: nn.Dense(2, param_dtype=param_dtype)(a - b)]
    )


def _local(**kw: Any) -> Any:
    return lambda nn, param_dtype: nn.ConvLocal(param_dtype=param_dtype, **kw)


# name -> (factory(nn, param_dtype), input shape)
SEQUENTIAL: dict[str, tuple[Any, tuple[int, ...]]] = {
    "mlp": (_mlp, (2, 5)),
    "tuples": (_tuples, (3, 4)),
}
# ConvLocal, built the same way.
CONV_LOCAL: dict[str, tuple[Any, tuple[int, ...]]] = {
    "1d_valid": (_local(features=3, kernel_size=(3,), padding="VALID"), (2, 7, 2)),
    "2d_same_strided": (
        _local(features=2, kernel_size=(2, 3), strides=2, padding="SAME"),
        (2, 5, 6, 3),
    ),
    "2d_dilated": (
        _local(features=2, kernel_size=(2, 2), kernel_dilation=(2, 1), padding=1),
        (1, 4, 4, 2),
    ),
    "unbatched": (_local(features=2, kernel_size=(3,)), (5, 2)),
}
PRELU_SLOPES = (0.01, 0.25)
PARAM_DTYPES = ("f4", "bf")
INPUT_CODES = ("f4", "bf", "i4")
MASKS: dict[str, list[Any]] = {
    "two": [[[1, 0, 1]], [[True, True, False]]],
    "with_none": [None, [[1.0, 0.0], [1.0, 1.0]], None, [[0.0, 1.0], [1.0, 1.0]]],
    "one": [[[2, 0, 1]]],
}
MASK_DTYPES = ("f4", "bf", "b1")


def encode(x: Any) -> list[Any]:
    values = np.asarray(x)
    weak = bool(getattr(getattr(x, "aval", None), "weak_type", False))
    code = CODES[np.dtype(values.dtype)]
    flat = [float(v) for v in values.astype(np.float64).ravel()]
    return [f"w:{code}" if weak else code, list(values.shape), flat]


def encode_tree(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: encode_tree(v) for k, v in tree.items()}
    return encode(tree)


def main() -> None:
    import flax
    import jax
    import jax.numpy as jnp
    from flax import linen as nn

    cases: dict[str, Any] = {}
    for name, (factory, shape) in {**SEQUENTIAL, **CONV_LOCAL}.items():
        for pd in PARAM_DTYPES:
            for code in ("f4", "bf"):
                model = factory(nn, NP_DTYPES[pd])
                x = jnp.asarray(layer_input(code, shape))
                variables = model.init(jax.random.key(0), x)
                kind = "sequential" if name in SEQUENTIAL else "conv_local"
                cases[f"{kind}|{name}|{pd}|{code}"] = {
                    "params": encode_tree(jax.device_get(variables["params"])),
                    "out": encode(model.apply(variables, x)),
                }
    for slope in PRELU_SLOPES:
        for pd in PARAM_DTYPES:
            for code in INPUT_CODES:
                layer = nn.PReLU(param_dtype=NP_DTYPES[pd], negative_slope_init=slope)
                x = jnp.asarray(layer_input(code, (2, 3)))
                variables = layer.init(jax.random.key(0), x)
                cases[f"prelu|{slope}|{pd}|{code}"] = {
                    "params": encode_tree(variables["params"]),
                    "out": encode(layer.apply(variables, x)),
                }
    for name, masks in MASKS.items():
        for code in MASK_DTYPES:
            arrays = [None if m is None else jnp.asarray(m) for m in masks]
            out = nn.combine_masks(*arrays, dtype=NP_DTYPES[code])
            cases[f"combine_masks|{name}|{code}"] = {"out": encode(out)}
    for init in ("zeros_init", "ones_init"):
        for code in ("f4", "bf", "i4"):
            got = getattr(nn.initializers, init)()(
                jax.random.key(0), (2, 3), NP_DTYPES[code]
            )
            cases[f"init|{init}|{code}"] = {"out": encode(got)}
    data = {
        "versions": {
            "jax": jax.__version__,
            "flax": flax.__version__,
            "python": platform.python_version(),
        },
        "cases": cases,
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{len(cases)} cases written to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
