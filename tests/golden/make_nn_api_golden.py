"""Record Flax linen's answers for the Module API, the summary table, the
partition metadata and the InstanceNorm / SpectralNorm / WeightNorm /
SelfAttention layers.

Run with a Python that has JAX and Flax installed, from anywhere::

    python tests/golden/make_nn_api_golden.py

It writes ``nn_api.json`` beside this file; ``tests/test_nn_api_golden.py``
builds the same models with ``typelattice.nn`` (the model builders below
take the ``nn`` and ``numpy`` modules, so both sides run the same code) and
compares.

Sections:

- ``tabulate``: the text of ``Module.tabulate`` per model (no colours, wide
  console): the table's lines, trailing spaces removed.
- ``layers``: per case, the input, the variables from Flax's ``init``, the
  call keywords, the output and (for SpectralNorm) the updated statistics;
  the typelattice side applies the same variables to the same input.
- ``dtypes``: per layer and dtype setting, the output's dtype (of an
  ``apply`` with every collection mutable) and every variable's dtype after
  ``init`` (or the exception's class name).
- ``intermediates``: the shapes ``capture_intermediates=True`` keeps.
- ``partitioning``: ``get_partition_spec`` of boxed variables and
  ``logical_to_mesh_axes`` answers.
- ``share_scope``: where ``nn.share_scope`` puts the variables.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).with_name("nn_api.json")


# -- models, written once for both libraries ------------------------------------------


def tabulate_models(nn: Any) -> dict[str, tuple[Any, list[Any], dict[str, Any]]]:
    """name -> (model, input shapes and dtypes, tabulate keywords)."""

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x: Any, train: bool = False) -> Any:
            x = nn.Dense(4)(x)
            x = nn.BatchNorm(use_running_average=not train)(x)
            x = nn.relu(x)
            return nn.Dense(2)(x)

    class Enc(nn.Module):
        def setup(self) -> None:
            self.d = nn.Dense(2)

        def __call__(self, x: Any, flag: bool = True) -> Any:
            return self.d(x), {"a": x}

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            return nn.LayerNorm()(nn.Dense(3)(x))

    class Deep(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            return Block()(Block()(x))

        def encode(self, x: Any) -> Any:
            return x * 2

    class Twice(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            dense = nn.Dense(3)
            return dense(dense(x))

    class Sharded(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            return nn.Dense(
                3,
                kernel_init=nn.with_partitioning(
                    nn.initializers.lecun_normal(), (None, "model")
                ),
            )(x)

    return {
        "cnn": (CNN(), [((16, 3), "float32")], {}),
        "cnn_train": (CNN(), [((16, 3), "float32")], {"train": True}),
        "cnn_depth0": (CNN(), [((16, 3), "float32")], {"depth": 0}),
        "enc_bf16": (Enc(), [((1, 3), "bfloat16")], {"flag": False}),
        "deep": (Deep(), [((2, 3), "float32")], {}),
        "deep_depth1": (Deep(), [((2, 3), "float32")], {"depth": 1}),
        "twice": (Twice(), [((2, 3), "float32")], {}),
        "twice_repeated": (Twice(), [((2, 3), "float32")], {"show_repeated": True}),
        "sharded": (Sharded(), [((2, 3), "float32")], {}),
        "big": (nn.Dense(1000), [((4, 1200), "float32")], {}),
    }


def layer_cases(nn: Any) -> dict[str, tuple[Any, list[Any], dict[str, Any]]]:
    """name -> (layer, input shapes and dtypes, call keywords)."""
    normal = nn.initializers.normal(1.0)
    return {
        "InstanceNorm": (
            nn.InstanceNorm(scale_init=normal, bias_init=normal),
            [((2, 5, 3), "float32")],
            {},
        ),
        "InstanceNorm_features_1": (
            nn.InstanceNorm(feature_axes=(1,), scale_init=normal, bias_init=normal),
            [((2, 4, 3, 2), "float32")],
            {},
        ),
        "InstanceNorm_bf16": (
            nn.InstanceNorm(scale_init=normal, bias_init=normal),
            [((2, 5, 3), "bfloat16")],
            {},
        ),
        "SpectralNorm_Dense": (
            nn.SpectralNorm(nn.Dense(3)),
            [((2, 4), "float32")],
            {"update_stats": True},
        ),
        "SpectralNorm_Conv_3steps": (
            nn.SpectralNorm(nn.Conv(4, (3, 3)), n_steps=3),
            [((1, 5, 5, 2), "float32")],
            {"update_stats": True},
        ),
        "WeightNorm_Dense": (
            nn.WeightNorm(nn.Dense(3, bias_init=normal), scale_init=normal),
            [((2, 4), "float32")],
            {},
        ),
        "WeightNorm_all_axes": (
            nn.WeightNorm(
                nn.Dense(3, bias_init=normal),
                feature_axes=None,
                variable_filter={"kernel", "bias"},
            ),
            [((2, 4), "float32")],
            {},
        ),
        "SelfAttention": (
            nn.SelfAttention(num_heads=2, qkv_features=4),
            [((2, 3, 4), "float32")],
            {},
        ),
        "MultiHeadAttention": (
            nn.MultiHeadAttention(num_heads=2, qkv_features=4, out_features=5),
            [((2, 3, 4), "float32"), ((2, 6, 4), "float32")],
            {},
        ),
    }


def dtype_layers(nn: Any) -> dict[str, tuple[Any, tuple[int, ...], dict[str, Any]]]:
    """name -> (layer class builder, input shape, call keywords)."""
    return {
        "InstanceNorm": (lambda **kw: nn.InstanceNorm(**kw), (2, 3, 4), {}),
        "SpectralNorm": (
            lambda **kw: nn.SpectralNorm(
                nn.Dense(3, param_dtype=kw.get("param_dtype", "float32")), **kw
            ),
            (2, 4),
            {"update_stats": True},
        ),
        "WeightNorm": (
            lambda **kw: nn.WeightNorm(
                nn.Dense(3, param_dtype=kw.get("param_dtype", "float32")), **kw
            ),
            (2, 4),
            {},
        ),
    }


DTYPE_INPUTS = ["float32", "bfloat16", "float16"]
DTYPES = [None, "bfloat16", "float32"]
PARAM_DTYPES = ["float32", "bfloat16"]


def intermediates_model(nn: Any) -> Any:
    class Mlp(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            h = nn.Dense(3)(x)
            return nn.Dense(2)(nn.relu(h))

    return Mlp()


def share_scope_models(nn: Any) -> dict[str, Any]:
    """Models whose submodule shares its parent's variables (nn.share_scope),
    applied to ones((1, 3))."""

    class DenseLoRA(nn.Module):
        base: Any
        rank: int = 1

        def setup(self) -> None:
            nn.share_scope(self, self.base)

        @nn.compact
        def __call__(self, x: Any) -> Any:
            a = self.param("A", nn.initializers.ones, (x.shape[-1], self.rank))
            b = self.param("B", nn.initializers.ones, (self.rank, self.base.features))
            return self.base(x) + x @ a @ b

    class Outside(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            return DenseLoRA(nn.Dense(2))(x)

    class Inside(nn.Module):
        def setup(self) -> None:
            self.lora = DenseLoRA(nn.Dense(2, kernel_init=nn.initializers.ones))

        def __call__(self, x: Any) -> Any:
            return self.lora(x)

    return {"outside": Outside(), "inside": Inside()}


LOGICAL = [
    (
        ["batch", "length", "heads", "features"],
        [["batch", "X"], ["features", "X"], ["heads", "Y"], ["batch", "Z"]],
    ),
    (["a", "b", None], [["a", None], ["b", "x"]]),
    (["embed", "mlp"], [["mlp", ["x", "y"]], ["embed", "x"]]),
    (["embed", "mlp"], []),
]


# -- recording ------------------------------------------------------------------------


def _array(x: Any) -> dict[str, Any]:
    a = np.asarray(x)
    return {
        "dtype": str(a.dtype),
        "shape": list(a.shape),
        "values": a.astype(np.float64).tolist(),
    }


def _tree(t: Any) -> Any:
    if isinstance(t, dict) or hasattr(t, "items"):
        return {str(k): _tree(v) for k, v in t.items()}
    if isinstance(t, tuple | list):
        return [_tree(v) for v in t]
    return _array(t)


def _inputs(jnp: Any, jax: Any, specs: list[Any], seed: int) -> list[Any]:
    keys = jax.random.split(jax.random.key(seed), len(specs))
    return [
        jax.random.normal(k, shape).astype(dtype)
        for k, (shape, dtype) in zip(keys, specs, strict=True)
    ]


def main() -> None:
    import flax
    import jax
    import jax.numpy as jnp
    from flax import linen as nn

    warnings.simplefilter("ignore", DeprecationWarning)
    out: dict[str, Any] = {"flax": flax.__version__, "jax": jax.__version__}

    console = {"width": 400, "force_terminal": False, "no_color": True}
    tables: dict[str, list[str]] = {}
    for name, (model, specs, kw) in tabulate_models(nn).items():
        xs = [jnp.ones(shape, dtype) for shape, dtype in specs]
        text = model.tabulate(jax.random.key(0), *xs, console_kwargs=console, **kw)
        tables[name] = [line.rstrip() for line in text.split("\n")]
    out["tabulate"] = tables

    layers: dict[str, Any] = {}
    for i, (name, (layer, specs, kw)) in enumerate(layer_cases(nn).items()):
        xs = _inputs(jnp, jax, specs, i)
        variables = layer.init(jax.random.key(100 + i), *xs, **kw)
        case: dict[str, Any] = {
            "inputs": [_array(x) for x in xs],
            "variables": _tree(variables),
            "kwargs": kw,
        }
        if "update_stats" in kw:
            y, state = layer.apply(variables, *xs, mutable=["batch_stats"], **kw)
            case["updated"] = _tree(state)
        else:
            y = layer.apply(variables, *xs, **kw)
        case["output"] = _array(y)
        layers[name] = case
    out["layers"] = layers

    dtypes: dict[str, Any] = {}
    for name, (build, shape, kw) in dtype_layers(nn).items():
        for x_dtype in DTYPE_INPUTS:
            for dtype in DTYPES:
                for param_dtype in PARAM_DTYPES:
                    key = f"{name}|{x_dtype}|{dtype}|{param_dtype}"
                    layer = build(dtype=dtype, param_dtype=param_dtype)
                    x = jnp.ones(shape, x_dtype)
                    try:
                        v = layer.init(jax.random.key(0), x, **kw)
                        y, _ = layer.apply(v, x, mutable=True, **kw)
                    except Exception as e:  # noqa: BLE001  (recorded)
                        dtypes[key] = "!" + type(e).__name__
                        continue
                    flat = jax.tree_util.tree_flatten_with_path(v)[0]
                    dtypes[key] = {
                        "out": str(y.dtype),
                        "variables": {
                            jax.tree_util.keystr(p, simple=True, separator="/"): str(
                                a.dtype
                            )
                            for p, a in flat
                        },
                    }
    out["dtypes"] = dtypes

    model = intermediates_model(nn)
    x = jnp.ones((4, 2))
    v = model.init(jax.random.key(0), x)
    _, state = model.apply(v, x, capture_intermediates=True)
    out["intermediates"] = jax.tree_util.tree_map(
        lambda a: list(a.shape), state, is_leaf=lambda a: hasattr(a, "shape")
    )

    shared: dict[str, Any] = {}
    for name, model in share_scope_models(nn).items():
        x = jnp.ones((1, 3))
        v = model.init(jax.random.key(0), x)
        shared[name] = {
            "shapes": jax.tree_util.tree_map(lambda a: list(a.shape), v),
            "output_shape": list(model.apply(v, x).shape),
        }
    out["share_scope"] = shared

    sharded = tabulate_models(nn)["sharded"][0]
    v = sharded.init(jax.random.key(0), jnp.ones((2, 3)))
    specs = nn.get_partition_spec(v)
    out["partitioning"] = {
        "spec": jax.tree_util.tree_map(
            lambda s: list(s),
            specs,
            is_leaf=lambda s: isinstance(s, jax.sharding.PartitionSpec),
        ),
        "logical": [
            [list(names), rules, list(nn.logical_to_mesh_axes(names, rules))]
            for names, rules in [
                (n, [(a, tuple(b) if isinstance(b, list) else b) for a, b in r])
                for n, r in LOGICAL
            ]
        ],
    }
    OUT.write_text(json.dumps(out, indent=1, default=list) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
