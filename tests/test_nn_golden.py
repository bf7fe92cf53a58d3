"""typelattice.nn's layers against Flax linen's: output, parameter and
statistic dtypes, parameter names and shapes, and values on given
parameters.

``golden/nn_layers.json`` was recorded from Flax by
``golden/make_nn_golden.py``, which defines the cases and the encoding.
Each case is built here with ``typelattice.nn`` and must give Flax's answer,
except the deliberate differences (the FLIP's text, and data safety), which
``expected`` applies with its reason.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import nn, random

GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "nn_layers.json").read_text())


def _recorder() -> ModuleType:
    return recorder("make_nn_golden.py")


REC = _recorder()
CODES = {np.dtype(k): v for k, v in REC._CODES.items()}


def describe(tree: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            out.update(describe(v, f"{prefix}{k}/"))
        else:
            out[f"{prefix}{k}"] = f"{CODES[v.dtype]}{list(v.shape)}"
    return out


def run_case(key: str) -> dict[str, Any]:
    """The case built with typelattice.nn, encoded as the recorder does."""
    name, mode, in_dtype, dtype, param_dtype = key.split("|")
    kind, kwargs, shape, call = REC.LAYERS[name]
    kwargs = dict(kwargs)
    if kind != "Dropout":
        kwargs.update(dtype=None if dtype == "None" else dtype, param_dtype=param_dtype)
    layer = getattr(nn, kind)(**kwargs)
    rngs = {"params": random.key(0), "dropout": random.key(1)}
    with tl.enable_x64(mode == "x64"):
        x = tnp.asarray(REC._layer_input(name.split(".")[0], shape, in_dtype))
        try:
            if name == "Embed.attend":
                variables = layer.init(rngs, tnp.zeros(x.shape[:-1], "int32"))
                out, updates = layer.apply(variables, x, method="attend"), None
            else:
                variables = layer.init(rngs, x, **call)
                if "batch_stats" in variables:
                    out, updates = layer.apply(
                        variables, x, rngs=rngs, mutable=["batch_stats"], **call
                    )
                elif "cache" in variables:
                    out, updates = layer.apply(
                        variables, x[:, :1], rngs=rngs, mutable=["cache"], **call
                    )
                else:
                    out, updates = layer.apply(variables, x, rngs=rngs, **call), None
        except Exception as e:
            builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
            return {"out": "!" + builtin.__name__}
    entry: dict[str, Any] = {"out": CODES[out.dtype], "variables": describe(variables)}
    if updates is not None:
        entry["updated"] = describe(updates)
    return entry


def expected(key: str) -> tuple[dict[str, Any], str | None]:
    """Flax's answer with the deliberate differences applied, and the reason
    when there is one."""
    name, mode, in_dtype, dtype, param_dtype = key.split("|")
    kind = REC.LAYERS[name][0]
    flax = GOLDEN["dtypes"][key]
    want = {k: v for k, v in flax.items() if k in ("out", "variables", "updated")}
    if "warned" in flax:
        # Flax warns and drops the imaginary part; no layer may drop a
        # component (docs/semantics.md, "Data safety").
        return {"out": "!TypeError"}, "complex input with a real dtype raises"
    if kind == "MultiHeadDotProductAttention" and in_dtype == "complex64":
        return {"out": "!TypeError"}, "the FLIP: attention raises on complex input"
    if kind == "Dropout" and in_dtype == "int32":
        # Flax's jnp.where refuses the int/float mix; here integer input
        # computes in float32, as every other layer's does.
        return {"out": "f4", "variables": {}}, "integer dropout gives float32"
    if kind == "BatchNorm":
        # The FLIP: running statistics are created in the statistics dtype,
        # promote_types(dtype or input dtype, float32), and keep it (Flax
        # creates float32 ones and changes them at the first update). The
        # variance of complex input is real.
        stats = tl.promote_types(in_dtype if dtype == "None" else dtype, "float32")
        real = tl.finfo(stats).dtype
        variables = dict(want["variables"])
        variables["batch_stats/mean"] = f"{CODES[stats]}[3]"
        variables["batch_stats/var"] = f"{CODES[real]}[3]"
        want["variables"] = variables
        want["updated"] = {
            "batch_stats/mean": f"{CODES[stats]}[3]",
            "batch_stats/var": f"{CODES[real]}[3]",
        }
        if variables != flax["variables"]:
            return want, "statistics created in the statistics dtype"
    return want, None


IMPLEMENTED = set(REC.LAYERS) | {"Conv", "ConvTranspose"}
CASES = sorted(k for k in GOLDEN["dtypes"] if k.split("|")[0] in IMPLEMENTED)


@pytest.mark.parametrize("key", CASES)
def test_layer_dtypes_match_flax(key: str) -> None:
    want, _reason = expected(key)
    assert run_case(key) == want


def test_the_recorded_cases_cover_every_input_and_dtype() -> None:
    for name in REC.LAYERS:
        keys = [k for k in GOLDEN["dtypes"] if k.split("|")[0] == name]
        assert {tuple(k.split("|")[1:3]) for k in keys} == set(REC.INPUTS)


def test_the_deliberate_differences_are_the_ones_listed() -> None:
    reasons = {expected(k)[1] for k in CASES} - {None}
    assert reasons == {
        "complex input with a real dtype raises",
        "statistics created in the statistics dtype",
        "the FLIP: attention raises on complex input",
        "integer dropout gives float32",
    }


VALUE_CASES = sorted(k for k, v in GOLDEN["values"].items() if "variables" in v)


def _tree(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _tree(v) for k, v in value.items()}
    return tnp.asarray(np.asarray(value, dtype=np.float32))


@pytest.mark.parametrize("name", VALUE_CASES)
def test_layer_values_match_flax_on_the_same_parameters(name: str) -> None:
    case = GOLDEN["values"][name]
    layer = getattr(nn, case["kind"])(**case["kwargs"])
    variables = _tree(case["variables"])
    x = tnp.asarray(np.asarray(case["x"], dtype=np.float32))
    call = {k: np.asarray(v) for k, v in case.get("call", {}).items()}
    if case["updated"] is None:
        out = layer.apply(variables, x, **call)
    else:
        out, updates = layer.apply(variables, x, mutable=["batch_stats"], **call)
        for stat in ("mean", "var"):
            np.testing.assert_allclose(
                np.asarray(updates["batch_stats"][stat]),
                np.asarray(case["updated"]["batch_stats"][stat]),
                rtol=1e-5,
                atol=1e-6,
            )
    # Our parameter names and shapes are Flax's.
    ours = layer.init(random.key(0), x, **call)
    assert describe(ours) == describe(variables)
    np.testing.assert_allclose(
        np.asarray(out), np.asarray(case["out"]), rtol=1e-5, atol=1e-5
    )


def test_decoding_attention_matches_flax_position_by_position() -> None:
    """Flax's parameters, an empty cache of our own making, one jitted apply
    per position: each output and the final cache are Flax's."""
    case = GOLDEN["values"]["MultiHeadDotProductAttention.decode"]
    layer = nn.MultiHeadDotProductAttention(**case["kwargs"])
    x = tnp.asarray(np.asarray(case["x"], dtype=np.float32))
    params = _tree(case["params"])
    ours = layer.init(random.key(0), x)
    assert describe({"params": params}) == describe({"params": ours["params"]})
    cache = ours["cache"]
    assert describe(cache) == {
        "cache_index": "i4[]",
        "cached_key": "f4[2, 4, 2, 2]",
        "cached_value": "f4[2, 4, 2, 2]",
    }

    @tl.jit
    def step(cache: Any, token: Any) -> Any:
        return layer.apply({"params": params, "cache": cache}, token, mutable=["cache"])

    outputs = []
    for t in range(x.shape[1]):
        y, updates = step(cache, x[:, t : t + 1])
        cache = updates["cache"]
        outputs.append(np.asarray(y))
    np.testing.assert_allclose(
        np.concatenate(outputs, axis=1), case["out"], rtol=1e-5, atol=1e-6
    )
    assert int(cache["cache_index"]) == case["cache"]["cache_index"] == 4
    for name in ("cached_key", "cached_value"):
        np.testing.assert_allclose(
            np.asarray(cache[name]), case["cache"][name], rtol=1e-5, atol=1e-6
        )


# normalize: Flax's deprecated alias of standardize, not provided.
ACTIVATION_CASES = sorted(
    k
    for k in GOLDEN["functions"]
    if not k.startswith(("dot_product_attention", "normalize|"))
)


@pytest.mark.parametrize("key", ACTIVATION_CASES)
def test_activation_dtypes_match_flax(key: str) -> None:
    name, mode, in_dtype = key.split("|")
    with tl.enable_x64(mode == "x64"):
        x = tnp.asarray(REC._layer_input("", [2, 4], in_dtype))
        try:
            got = CODES[getattr(nn, name)(x).dtype]
        except Exception as e:
            got = "!" + type(e).__name__
    want = GOLDEN["functions"][key]
    if want == "!TypeError" and in_dtype == "int32":
        # JAX's sigmoid, silu and glu refuse integers (lax.logistic); here
        # every activation computes integers in the default float.
        want = "f4"
    if name == "hard_tanh" and in_dtype == "complex64":
        # JAX clips complex numbers by an order they do not have; we raise.
        want = "!ValueError"
    assert got == want


@pytest.mark.parametrize("name", [n for n in REC.ACTIVATIONS if n != "normalize"])
def test_activation_values_match_flax(name: str) -> None:
    case = GOLDEN["values"]["activations"]
    x = tnp.asarray(np.asarray(case["x"], dtype=np.float32))
    np.testing.assert_allclose(
        np.asarray(getattr(nn, name)(x)), np.asarray(case[name]), rtol=2e-6, atol=1e-6
    )


ATTENTION_CASES = sorted(
    k for k in GOLDEN["functions"] if k.startswith("dot_product_attention")
)


@pytest.mark.parametrize("key", ATTENTION_CASES)
def test_attention_function_dtypes_match_flax(key: str) -> None:
    name, mode, in_dtype, dtype = key.split("|")
    want = GOLDEN["functions"][key]
    if in_dtype == "complex64":
        # The FLIP: attention raises on complex input (Flax computes).
        want = "!TypeError"
    with tl.enable_x64(mode == "x64"):
        q = tnp.asarray(REC._layer_input("", [2, 3, 2, 4], in_dtype))
        args = (q, q, q) if name == "dot_product_attention" else (q, q)
        try:
            got = CODES[
                getattr(nn, name)(*args, dtype=None if dtype == "None" else dtype).dtype
            ]
        except Exception as e:
            got = "!" + type(e).__name__
    assert got == want


def test_dot_product_attention_values_match_flax() -> None:
    case = GOLDEN["values"]["dot_product_attention"]
    q, k, v = (tnp.asarray(np.asarray(case[n], dtype=np.float32)) for n in "qkv")
    np.testing.assert_allclose(
        np.asarray(nn.dot_product_attention(q, k, v)),
        np.asarray(case["out"]),
        rtol=1e-5,
        atol=1e-6,
    )
