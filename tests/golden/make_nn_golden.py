"""Record the dtypes, parameter names and shapes, and some values, of Flax
linen's layers.

Run with a Python that has JAX and Flax installed, from anywhere::

    python tests/golden/make_nn_golden.py

It writes ``nn_layers.json`` beside this file; ``tests/nn/test_nn_golden.py``
builds the same layers with ``typelattice.nn`` and compares.

Three sections:

- ``dtypes``: for every layer of ``LAYERS`` and every input dtype
  (``INPUTS``: the first five in 32-bit mode, float64 in 64-bit mode),
  ``dtype`` in (None, bfloat16, float32) and ``param_dtype`` in (float32,
  bfloat16): the output's dtype code (``f4``, ``bf``...), every variable as
  ``collection/path/leaf -> code[shape]`` after ``init``, and, for
  BatchNorm, the statistics after one training step (for decoding
  attention, the cache after one step); or ``!<Class>`` when
  Flax raises, and ``warned`` when it warns.
- ``functions``: the activations and ``dot_product_attention`` per input
  dtype.
- ``values``: float32 layers whose parameters (from Flax's init), input,
  call keywords and output are stored, so the same parameters can be
  applied elsewhere; and a decoding attention layer's outputs, position by
  position, with its last cache.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

OUT = Path(__file__).with_name("nn_layers.json")

_CODES: dict[Any, str] = {
    np.dtype(t): code
    for code, t in {
        "b1": np.bool_,
        "i4": np.int32,
        "i8": np.int64,
        "u4": np.uint32,
        "bf": ml_dtypes.bfloat16,
        "f2": np.float16,
        "f4": np.float32,
        "f8": np.float64,
        "c8": np.complex64,
        "c16": np.complex128,
    }.items()
}

# (mode, input dtype): float64 only exists in 64-bit mode.
INPUTS = [
    ("x32", "int32"),
    ("x32", "bfloat16"),
    ("x32", "float16"),
    ("x32", "float32"),
    ("x32", "complex64"),
    ("x64", "float64"),
]
DTYPES = [None, "bfloat16", "float32"]
PARAM_DTYPES = ["float32", "bfloat16"]

# name -> (class name, constructor arguments, input shape, call keywords).
# Embed's input is indices (its dtype is the input dtype); "Embed.attend"
# calls attend(query) on a float query.
LAYERS: dict[str, tuple[str, dict[str, Any], list[int], dict[str, Any]]] = {
    "Dense": ("Dense", {"features": 3}, [2, 4], {}),
    "DenseGeneral": ("DenseGeneral", {"features": [2, 3]}, [2, 4], {}),
    "Einsum": ("Einsum", {"shape": [4, 3], "einsum_str": "bi,ij->bj"}, [2, 4], {}),
    "Conv": ("Conv", {"features": 3, "kernel_size": [3, 3]}, [1, 5, 5, 2], {}),
    "ConvTranspose": (
        "ConvTranspose",
        {"features": 3, "kernel_size": [3, 3]},
        [1, 5, 5, 2],
        {},
    ),
    "Embed": ("Embed", {"num_embeddings": 10, "features": 3}, [2, 3], {}),
    "Embed.attend": ("Embed", {"num_embeddings": 10, "features": 3}, [2, 3], {}),
    "LayerNorm": ("LayerNorm", {}, [2, 4], {}),
    "RMSNorm": ("RMSNorm", {}, [2, 4], {}),
    "GroupNorm": ("GroupNorm", {"num_groups": 2}, [2, 3, 4], {}),
    "BatchNorm": ("BatchNorm", {"use_running_average": False}, [4, 3], {}),
    "MultiHeadDotProductAttention": (
        "MultiHeadDotProductAttention",
        {"num_heads": 2, "qkv_features": 4},
        [2, 3, 4],
        {},
    ),
    "Dropout": ("Dropout", {"rate": 0.5}, [2, 4], {"deterministic": False}),
    "Conv.circular": (
        "Conv",
        {"features": 3, "kernel_size": [3, 3], "padding": "CIRCULAR"},
        [1, 5, 5, 2],
        {},
    ),
    "ConvTranspose.circular": (
        "ConvTranspose",
        {"features": 3, "kernel_size": [3, 3], "padding": "CIRCULAR"},
        [1, 5, 5, 2],
        {},
    ),
    "DenseGeneral.batch_dims": (
        "DenseGeneral",
        {"features": [2, 3], "batch_dims": [0]},
        [2, 3, 4],
        {},
    ),
    "BatchNorm.mask": (
        "BatchNorm",
        {"use_running_average": False},
        [4, 3],
        {"mask": np.array([[True], [False], [True], [True]])},
    ),
    # Initialised on the whole sequence, then applied to its first position
    # with the 'cache' collection mutable.
    "MultiHeadDotProductAttention.decode": (
        "MultiHeadDotProductAttention",
        {"num_heads": 2, "qkv_features": 4, "decode": True},
        [2, 3, 4],
        {},
    ),
}

ACTIVATIONS = [
    "relu",
    "gelu",
    "silu",
    "swish",
    "sigmoid",
    "tanh",
    "elu",
    "leaky_relu",
    "softplus",
    "softmax",
    "log_softmax",
    "relu6",
    "hard_tanh",
    "log_sigmoid",
    "celu",
    "selu",
    "glu",
    "logsumexp",
    "normalize",
    "standardize",
]

# name -> (class name, constructor arguments, input shape, call keywords),
# recorded with values in float32.
VALUES: dict[str, tuple[str, dict[str, Any], list[int], dict[str, Any]]] = {
    "Dense": ("Dense", {"features": 3}, [2, 4], {}),
    "DenseGeneral": (
        "DenseGeneral",
        {"features": [2, 3], "axis": [-2, -1]},
        [2, 3, 4],
        {},
    ),
    "Einsum": (
        "Einsum",
        {"shape": [4, 2, 3], "einsum_str": "bti,ihd->bthd"},
        [2, 3, 4],
        {},
    ),
    "Conv": ("Conv", {"features": 3, "kernel_size": [3, 3]}, [2, 5, 6, 2], {}),
    "Conv.strided_valid": (
        "Conv",
        {"features": 3, "kernel_size": [3, 2], "strides": 2, "padding": "VALID"},
        [1, 7, 6, 2],
        {},
    ),
    "Conv.explicit_padding": (
        "Conv",
        {"features": 2, "kernel_size": [3, 3], "padding": [[1, 0], [2, 1]]},
        [1, 5, 4, 2],
        {},
    ),
    "Conv.int_padding": (
        "Conv",
        {"features": 2, "kernel_size": [2], "padding": 1},
        [2, 6, 3],
        {},
    ),
    "Conv.dilations": (
        "Conv",
        {
            "features": 2,
            "kernel_size": [3, 3],
            "input_dilation": 2,
            "kernel_dilation": [1, 2],
            "padding": [[1, 1], [2, 2]],
        },
        [1, 4, 5, 2],
        {},
    ),
    "Conv.groups": (
        "Conv",
        {"features": 4, "kernel_size": [3], "feature_group_count": 2},
        [2, 6, 4],
        {},
    ),
    "Conv.3d": ("Conv", {"features": 2, "kernel_size": [2, 2, 2]}, [1, 3, 4, 3, 2], {}),
    "Conv.unbatched": ("Conv", {"features": 2, "kernel_size": [3]}, [5, 2], {}),
    "ConvTranspose": (
        "ConvTranspose",
        {"features": 3, "kernel_size": [3, 3]},
        [1, 4, 5, 2],
        {},
    ),
    "ConvTranspose.strided": (
        "ConvTranspose",
        {"features": 2, "kernel_size": [3, 2], "strides": [2, 2]},
        [1, 3, 4, 2],
        {},
    ),
    "ConvTranspose.valid": (
        "ConvTranspose",
        {"features": 2, "kernel_size": [3], "strides": [2], "padding": "VALID"},
        [2, 4, 3],
        {},
    ),
    "ConvTranspose.dilated": (
        "ConvTranspose",
        {"features": 2, "kernel_size": [3], "kernel_dilation": [2]},
        [1, 5, 2],
        {},
    ),
    "LayerNorm": ("LayerNorm", {}, [2, 3, 4], {}),
    "LayerNorm.axes": (
        "LayerNorm",
        {"reduction_axes": [-2, -1], "feature_axes": -1},
        [2, 3, 4],
        {},
    ),
    "RMSNorm": ("RMSNorm", {}, [2, 3, 4], {}),
    "GroupNorm": ("GroupNorm", {"num_groups": 2}, [2, 3, 4], {}),
    "GroupNorm.group_size": (
        "GroupNorm",
        {"num_groups": None, "group_size": 3},
        [2, 5, 6],
        {},
    ),
    "BatchNorm": ("BatchNorm", {"use_running_average": False}, [4, 3], {}),
    "BatchNorm.axis": (
        "BatchNorm",
        {"use_running_average": False, "axis": 1, "momentum": 0.9},
        [4, 3, 2],
        {},
    ),
    "MultiHeadDotProductAttention": (
        "MultiHeadDotProductAttention",
        {"num_heads": 2, "qkv_features": 4, "out_features": 3},
        [2, 3, 4],
        {},
    ),
    "Conv.circular": (
        "Conv",
        {
            "features": 2,
            "kernel_size": [3, 2],
            "strides": [2, 1],
            "kernel_dilation": [1, 2],
            "padding": "CIRCULAR",
        },
        [2, 5, 6, 3],
        {},
    ),
    "ConvTranspose.circular": (
        "ConvTranspose",
        {
            "features": 2,
            "kernel_size": [3, 2],
            "strides": [2, 1],
            "padding": "CIRCULAR",
        },
        [1, 4, 5, 2],
        {},
    ),
    "ConvTranspose.circular_transposed": (
        "ConvTranspose",
        {
            "features": 2,
            "kernel_size": [4, 3],
            "strides": [1, 2],
            "kernel_dilation": [1, 2],
            "padding": "CIRCULAR",
            "transpose_kernel": True,
        },
        [1, 3, 4, 2],
        {},
    ),
    "DenseGeneral.batch_dims": (
        "DenseGeneral",
        {"features": [2, 3], "axis": -1, "batch_dims": [0, 1]},
        [3, 2, 2, 4],
        {},
    ),
    "BatchNorm.mask": (
        "BatchNorm",
        {"use_running_average": False, "momentum": 0.8},
        [6, 3],
        {"mask": np.array([[True], [False], [True], [True], [False], [True]])},
    ),
}


def code(dtype: Any) -> str:
    return _CODES[np.dtype(dtype)]


def _layer_input(name: str, shape: list[int], dtype: str) -> np.ndarray[Any, Any]:
    """A deterministic input: indices for Embed, else a smooth ramp."""
    n = int(np.prod(shape))
    if name == "Embed":
        return (np.arange(n) % 10).reshape(shape).astype(dtype)
    ramp = np.sin(np.arange(n, dtype=np.float64) * 0.7 + 0.3).reshape(shape) * 2
    if dtype == "int32":
        return np.round(ramp * 3).astype(np.int32)
    if dtype == "complex64":
        return (ramp + 1j * np.cos(np.arange(n) * 0.4).reshape(shape)).astype(dtype)
    return ramp.astype(dtype)


def main() -> None:
    import jax
    import jax.numpy as jnp
    from flax import linen as nn

    key = jax.random.PRNGKey(0)

    def describe(tree: Any) -> dict[str, str]:
        flat = jax.tree_util.tree_flatten_with_path(tree)[0]
        return {
            "/".join(str(k.key) for k in path): f"{code(leaf.dtype)}{list(leaf.shape)}"
            for path, leaf in flat
        }

    def run_layer(name: str, kind: str, kwargs: dict[str, Any], x: Any, call: Any):
        layer = getattr(nn, kind)(**kwargs)
        rngs = {"params": key, "dropout": key}
        method = layer.attend if name == "Embed.attend" else None
        if method is not None:
            # attend needs the table: init through __call__ on indices.
            variables = layer.init(rngs, jnp.zeros(x.shape[:-1], "int32"))
            out = layer.apply(variables, x, method="attend")
            return variables, out, None
        variables = layer.init(rngs, x, **call)
        if "batch_stats" in variables:
            out, updates = layer.apply(
                variables, x, mutable=["batch_stats"], rngs=rngs, **call
            )
            return variables, out, updates
        if "cache" in variables:
            # Decoding: one position at a time.
            out, updates = layer.apply(
                variables, x[:, :1], mutable=["cache"], rngs=rngs, **call
            )
            return variables, out, updates
        return variables, layer.apply(variables, x, rngs=rngs, **call), None

    dtypes: dict[str, Any] = {}
    for name, (kind, kwargs, shape, call) in LAYERS.items():
        for mode, in_dtype in INPUTS:
            jax.config.update("jax_enable_x64", mode == "x64")
            for dtype in DTYPES if kind != "Dropout" else [None]:
                for param_dtype in PARAM_DTYPES if kind != "Dropout" else ["float32"]:
                    full = dict(kwargs)
                    if kind != "Dropout":
                        full.update(dtype=dtype, param_dtype=param_dtype)
                    x = jnp.asarray(_layer_input(name.split(".")[0], shape, in_dtype))
                    entry: dict[str, Any] = {}
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        try:
                            variables, out, updates = run_layer(
                                name, kind, full, x, call
                            )
                        except Exception as e:
                            entry["out"] = "!" + next(
                                c.__name__
                                for c in type(e).__mro__
                                if c.__module__ == "builtins"
                            )
                            entry["message"] = str(e)[:200]
                        else:
                            entry["out"] = code(out.dtype)
                            entry["variables"] = describe(variables)
                            if updates is not None:
                                entry["updated"] = describe(updates)
                    if caught:
                        entry["warned"] = str(caught[0].message)[:200]
                    key_ = f"{name}|{mode}|{in_dtype}|{dtype}|{param_dtype}"
                    dtypes[key_] = entry
    jax.config.update("jax_enable_x64", False)

    functions: dict[str, str] = {}
    for mode, in_dtype in INPUTS:
        jax.config.update("jax_enable_x64", mode == "x64")
        x = jnp.asarray(_layer_input("", [2, 4], in_dtype))
        for fname in ACTIVATIONS:
            try:
                functions[f"{fname}|{mode}|{in_dtype}"] = code(
                    getattr(nn, fname)(x).dtype
                )
            except Exception as e:
                functions[f"{fname}|{mode}|{in_dtype}"] = "!" + type(e).__name__
        q = jnp.asarray(_layer_input("", [2, 3, 2, 4], in_dtype))
        for dtype in DTYPES:
            for fname in ("dot_product_attention", "dot_product_attention_weights"):
                args = (q, q, q) if fname == "dot_product_attention" else (q, q)
                try:
                    functions[f"{fname}|{mode}|{in_dtype}|{dtype}"] = code(
                        getattr(nn, fname)(*args, dtype=dtype).dtype
                    )
                except Exception as e:
                    functions[f"{fname}|{mode}|{in_dtype}|{dtype}"] = (
                        "!" + type(e).__name__
                    )
    jax.config.update("jax_enable_x64", False)

    values: dict[str, Any] = {}
    for name, (kind, kwargs, shape, call) in VALUES.items():
        layer = getattr(nn, kind)(**kwargs)
        x = _layer_input(kind, shape, "float32")
        variables = layer.init(key, x, **call)
        if "batch_stats" in variables:
            out, updates = layer.apply(variables, x, mutable=["batch_stats"], **call)
        else:
            out, updates = layer.apply(variables, x, **call), None
        values[name] = {
            "kind": kind,
            "kwargs": kwargs,
            "call": {k: np.asarray(v).tolist() for k, v in call.items()},
            "x": x.tolist(),
            "variables": jax.tree_util.tree_map(
                lambda a: np.asarray(a).tolist(), variables
            ),
            "out": np.asarray(out).tolist(),
            "updated": None
            if updates is None
            else jax.tree_util.tree_map(lambda a: np.asarray(a).tolist(), updates),
        }
    # Decoding: the cache made by init on the whole sequence, then one
    # apply per position; every step's output and the last cache.
    decoder = nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=4, decode=True)
    x = _layer_input("", [2, 4, 6], "float32")
    variables = decoder.init(key, x)
    params, cache = variables["params"], variables["cache"]
    steps = []
    for t in range(x.shape[1]):
        out, updates = decoder.apply(
            {"params": params, "cache": cache}, x[:, t : t + 1], mutable=["cache"]
        )
        cache = updates["cache"]
        steps.append(np.asarray(out))
    values["MultiHeadDotProductAttention.decode"] = {
        "kwargs": {"num_heads": 2, "qkv_features": 4, "decode": True},
        "x": x.tolist(),
        "params": jax.tree_util.tree_map(lambda a: np.asarray(a).tolist(), params),
        "out": np.concatenate(steps, axis=1).tolist(),
        "cache": jax.tree_util.tree_map(lambda a: np.asarray(a).tolist(), cache),
    }
    # Attention functions on given inputs.
    q = _layer_input("", [2, 3, 2, 4], "float32")
    k = _layer_input("", [2, 5, 2, 4], "float32")[:, ::-1]
    v = _layer_input("", [2, 5, 2, 4], "float32") * 0.5
    values["dot_product_attention"] = {
        "q": q.tolist(),
        "k": k.tolist(),
        "v": v.tolist(),
        "out": np.asarray(nn.dot_product_attention(q, k, v)).tolist(),
    }
    x = _layer_input("", [2, 6], "float32")
    values["activations"] = {
        "x": x.tolist(),
        **{f: np.asarray(getattr(nn, f)(x)).tolist() for f in ACTIVATIONS},
    }

    record = {
        "jax": jax.__version__,
        "flax": __import__("flax").__version__,
        "dtypes": dtypes,
        "functions": functions,
        "values": values,
    }
    OUT.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(dtypes)} layer cases)")


if __name__ == "__main__":
    main()
