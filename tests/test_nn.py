"""typelattice.nn's Module system and the layers' dtype rules, beyond the
recorded Flax answers (test_nn_golden.py): naming, parameter reuse,
frozen modules, mutable collections, strict mode, data safety, tracing."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import nn, random
from typelattice._tracing import tree

KEY = random.key(0)


class MLP(nn.Module):
    hidden: int
    out: int = 2

    @nn.compact
    def __call__(self, x: Any) -> Any:
        x = nn.relu(nn.Dense(self.hidden)(x))
        return nn.Dense(self.out, name="head")(x)


class Tied(nn.Module):
    """Calls one submodule twice: its parameters exist once."""

    def setup(self) -> None:
        self.dense = nn.Dense(3)
        self.layers = [nn.Dense(3), nn.LayerNorm()]

    def __call__(self, x: Any) -> Any:
        x = self.dense(self.dense(x))
        for layer in self.layers:
            x = layer(x)
        return x


def shapes(tree: dict[str, Any]) -> dict[str, Any]:
    return {
        k: shapes(v) if isinstance(v, dict) else (v.shape, v.dtype.name)
        for k, v in tree.items()
    }


def test_compact_submodules_are_named_by_class_and_order_or_by_name() -> None:
    variables = MLP(8).init(KEY, tnp.ones((4, 3)))
    assert shapes(variables) == {
        "params": {
            "Dense_0": {"kernel": ((3, 8), "float32"), "bias": ((8,), "float32")},
            "head": {"kernel": ((8, 2), "float32"), "bias": ((2,), "float32")},
        }
    }


def test_setup_submodules_are_named_by_attribute_and_shared_when_reused() -> None:
    variables = Tied().init(KEY, tnp.ones((2, 3)))
    assert sorted(variables["params"]) == ["dense", "layers_0", "layers_1"]
    out = Tied().apply(variables, tnp.ones((2, 3)))
    assert out.shape == (2, 3)


def test_apply_uses_the_given_parameters() -> None:
    layer = nn.Dense(2)
    variables = layer.init(KEY, tnp.ones((1, 3)))
    kernel = tnp.asarray(np.arange(6.0, dtype=np.float32).reshape(3, 2))
    out = layer.apply(
        {"params": {"kernel": kernel, "bias": tnp.ones(2)}}, tnp.ones((1, 3))
    )
    np.testing.assert_array_equal(np.asarray(out), [[7.0, 10.0]])
    # The caller's variables are not modified by apply.
    assert variables["params"]["kernel"].shape == (3, 2)


def test_different_keys_give_different_parameters_and_the_same_key_the_same() -> None:
    x = tnp.ones((1, 3))
    a = MLP(4).init(random.key(0), x)["params"]
    b = MLP(4).init(random.key(0), x)["params"]
    c = MLP(4).init(random.key(1), x)["params"]
    np.testing.assert_array_equal(
        np.asarray(a["head"]["kernel"]), np.asarray(b["head"]["kernel"])
    )
    assert not np.array_equal(
        np.asarray(a["head"]["kernel"]), np.asarray(c["head"]["kernel"])
    )
    # Two sibling layers get different initial kernels.
    k0 = np.asarray(
        MLP(3, out=3).init(KEY, tnp.ones((1, 3)))["params"]["Dense_0"]["kernel"]
    )
    k1 = np.asarray(
        MLP(3, out=3).init(KEY, tnp.ones((1, 3)))["params"]["head"]["kernel"]
    )
    assert not np.array_equal(k0, k1)


def test_modules_are_frozen_dataclasses() -> None:
    layer = nn.Dense(3)
    assert dataclasses.is_dataclass(layer)
    with pytest.raises(dataclasses.FrozenInstanceError, match="dataclasses.replace"):
        layer.features = 4  # type: ignore[misc]
    assert dataclasses.replace(layer, features=4).features == 4
    assert nn.Dense(3) == nn.Dense(3)


def test_missing_parameters_and_immutable_collections_raise_with_the_fix() -> None:
    layer = nn.Dense(2)
    with pytest.raises(ValueError, match="layer.init"):
        layer.apply({"params": {}}, tnp.ones((1, 3)))
    bn = nn.BatchNorm(use_running_average=False)
    variables = bn.init(KEY, tnp.ones((4, 3)))
    with pytest.raises(ValueError, match=r"mutable=\['batch_stats'\]"):
        bn.apply(variables, tnp.ones((4, 3)))
    with pytest.raises(ValueError, match="only be called while"):
        layer.param("w", nn.initializers.zeros, (1,))


def test_dropout_needs_a_key_and_drops_only_in_training() -> None:
    layer = nn.Dropout(0.5)
    x = tnp.ones((100,))
    with pytest.raises(ValueError, match="rngs="):
        layer.apply({}, x, deterministic=False)
    with pytest.raises(ValueError, match="deterministic is needed"):
        layer.apply({}, x)
    y = layer.apply({}, x, deterministic=False, rngs={"dropout": KEY})
    assert set(np.unique(np.asarray(y))) == {0.0, 2.0}
    assert layer.apply({}, x, deterministic=True) is not None


def test_bfloat16_compute_with_float32_parameters() -> None:
    x = tnp.ones((2, 3), dtype="bfloat16")
    layer = nn.Dense(4, dtype="bfloat16")
    variables = layer.init(KEY, x)
    assert variables["params"]["kernel"].dtype == np.dtype("float32")
    assert layer.apply(variables, x).dtype == tl.dtype("bfloat16")
    # dtype=None follows the promotion: bfloat16 input, float32 params.
    assert nn.Dense(4).apply(variables, x).dtype == np.dtype("float32")


def test_layernorm_with_an_explicit_dtype_runs_in_strict_mode() -> None:
    x = tnp.asarray([[1.0, 2.0, 4.0]], dtype="bfloat16")
    layer = nn.LayerNorm(dtype="bfloat16")
    variables = layer.init(KEY, x)
    with tl.dtype_promotion("strict"):
        y = layer.apply(variables, x)
        assert y.dtype == tl.dtype("bfloat16")
        dense = nn.Dense(2, dtype="bfloat16")
        assert dense.apply(dense.init(KEY, x), x).dtype == tl.dtype("bfloat16")
        # dtype=None asks for the implicit promotion strict mode forbids.
        with pytest.raises(tl.TypePromotionError):
            nn.LayerNorm().apply(variables, x)
    np.testing.assert_allclose(
        np.asarray(y, dtype=np.float32), [[-1.069, -0.267, 1.336]], atol=0.01
    )


def test_normalisation_statistics_are_float32_for_half_precision_input() -> None:
    # float16 squares overflow at 256; statistics in float32 do not.
    x = tnp.asarray([[300.0, 500.0, 700.0]], dtype="float16")
    y = nn.LayerNorm(dtype="float16", use_scale=False, use_bias=False).apply({}, x)
    assert y.dtype == np.dtype("float16")
    np.testing.assert_allclose(
        np.asarray(y, dtype=np.float32), [[-1.2247, 0.0, 1.2247]], atol=1e-3
    )


def test_complex_input_with_a_real_dtype_raises_not_drops_the_imaginary_part() -> None:
    x = tnp.asarray([[1 + 1j, 2 - 1j]], dtype="complex64")
    for layer in (nn.Dense(2, dtype="float32"), nn.LayerNorm(dtype="float32")):
        with pytest.raises(TypeError, match="imaginary part"):
            layer.init(KEY, x)
    # Without a dtype, complex input stays complex.
    assert nn.Dense(2).apply(nn.Dense(2).init(KEY, x), x).dtype == np.dtype("complex64")


def test_complex_normalisation_uses_the_modulus() -> None:
    x = tnp.asarray([[1j, -1j, 1j, -1j]], dtype="complex64")
    y = nn.LayerNorm(use_scale=False, use_bias=False).apply({}, x)
    # mean 0, E|x|^2 = 1: unchanged (re^2 would give a variance of -1).
    np.testing.assert_allclose(np.asarray(y), np.asarray(x), atol=1e-5)


def test_attention_raises_on_complex_input() -> None:
    x = tnp.ones((1, 2, 4), dtype="complex64")
    with pytest.raises(TypeError, match="complex"):
        nn.MultiHeadDotProductAttention(num_heads=2).init(KEY, x)


def test_batchnorm_statistics_keep_the_statistics_dtype() -> None:
    layer = nn.BatchNorm(use_running_average=False)
    with tl.enable_x64():
        x = tnp.asarray(np.arange(12.0).reshape(4, 3))
        variables = layer.init(KEY, x)
        assert variables["batch_stats"]["mean"].dtype == np.dtype("float64")
        _, updates = layer.apply(variables, x, mutable=["batch_stats"])
        assert updates["batch_stats"]["var"].dtype == np.dtype("float64")
        np.testing.assert_allclose(
            np.asarray(updates["batch_stats"]["mean"]), [0.045, 0.055, 0.065]
        )
    x16 = tnp.ones((4, 3), dtype="bfloat16")
    assert layer.init(KEY, x16)["batch_stats"]["mean"].dtype == np.dtype("float32")


def test_embed_refuses_float_indices() -> None:
    layer = nn.Embed(5, 2)
    with pytest.raises(ValueError, match="astype"):
        layer.init(KEY, tnp.asarray([1.0]))


def test_eval_shape_of_init_gives_shapes_and_dtypes() -> None:
    layer = nn.Conv(8, (3, 3), param_dtype="bfloat16")
    out = tl.eval_shape(layer.init, KEY, tnp.ones((2, 16, 16, 3)))
    assert out == {
        "params": {
            "kernel": tl.ShapeDtypeStruct((3, 3, 3, 8), tl.dtype("bfloat16")),
            "bias": tl.ShapeDtypeStruct((8,), tl.dtype("bfloat16")),
        }
    }


@pytest.mark.parametrize(
    "layer",
    [
        nn.Dense(3),
        nn.Conv(2, (3, 3)),
        nn.LayerNorm(),
        nn.GroupNorm(num_groups=2),
        nn.MultiHeadDotProductAttention(num_heads=2),
    ],
    ids=lambda layer: type(layer).__name__,
)
def test_jit_of_apply_gives_apply_s_answer(layer: nn.Module) -> None:
    x = tnp.asarray(
        np.sin(np.arange(2 * 4 * 4 * 4.0)).reshape(2, 4, 4, 4).astype(np.float32)
    )
    variables = layer.init(KEY, x)
    np.testing.assert_allclose(
        np.asarray(tl.jit(layer.apply)(variables, x)),
        np.asarray(layer.apply(variables, x)),
        rtol=1e-6,
    )


def test_jit_of_a_training_batchnorm_returns_the_updated_statistics() -> None:
    layer = nn.BatchNorm(use_running_average=False)
    x = tnp.asarray(np.arange(12.0, dtype=np.float32).reshape(4, 3))
    variables = layer.init(KEY, x)

    def step(variables: Any, x: Any) -> Any:
        return layer.apply(variables, x, mutable=["batch_stats"])

    y, updates = tl.jit(step)(variables, x)
    y_ref, updates_ref = step(variables, x)
    np.testing.assert_allclose(np.asarray(y), np.asarray(y_ref), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(updates["batch_stats"]["var"]),
        np.asarray(updates_ref["batch_stats"]["var"]),
    )


def test_conv_matches_a_direct_loop() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 5, 4)).astype(np.float32)
    layer = nn.Conv(6, (3, 2), strides=(2, 1), padding="VALID", feature_group_count=2)
    variables = layer.init(KEY, tnp.asarray(x))
    w = np.asarray(variables["params"]["kernel"])
    out = np.asarray(layer.apply(variables, tnp.asarray(x)))
    ref = np.zeros((2, 2, 4, 6), np.float32)
    for i in range(2):
        for j in range(4):
            window = x[:, 2 * i : 2 * i + 3, j : j + 2, :]
            for g in range(2):
                ref[:, i, j, 3 * g : 3 * g + 3] = np.einsum(
                    "bhwc,hwcd->bd",
                    window[..., 2 * g : 2 * g + 2],
                    w[..., 3 * g : 3 * g + 3],
                )
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("strides, dilation", [((1, 1), (1, 1)), ((2, 1), (1, 2))])
def test_circular_padding_wraps_the_input_around(
    strides: tuple[int, int], dilation: tuple[int, int]
) -> None:
    """As Flax: the input padded periodically by ((k-1)//2, k//2) of each
    dilated window, then a 'VALID' convolution."""
    x = random.normal(random.key(0), (2, 5, 6, 3))
    layer = nn.Conv(
        4, (3, 2), strides=strides, kernel_dilation=dilation, padding="CIRCULAR"
    )
    v = layer.init(random.key(1), x)
    reach = [(k - 1) * d + 1 for k, d in zip((3, 2), dilation, strict=True)]
    pads = [(0, 0)] + [((r - 1) // 2, r // 2) for r in reach] + [(0, 0)]
    wrapped = tnp.asarray(np.pad(np.asarray(x), pads, mode="wrap"))
    valid = nn.Conv(
        4, (3, 2), strides=strides, kernel_dilation=dilation, padding="VALID"
    )
    np.testing.assert_allclose(
        np.asarray(layer.apply(v, x)), np.asarray(valid.apply(v, wrapped)), rtol=1e-6
    )
    grads = tl.grad(lambda p: tnp.sum(layer.apply({"params": p}, x) ** 2))(v["params"])
    assert grads["kernel"].dtype == np.float32
    assert np.isfinite(np.asarray(grads["kernel"])).all()


@pytest.mark.parametrize("strides, dilation", [((1, 1), (1, 1)), ((2, 1), (1, 2))])
def test_circular_conv_local_is_valid_conv_local_of_the_wrapped_input(
    strides: tuple[int, int], dilation: tuple[int, int]
) -> None:
    """ConvLocal with 'CIRCULAR' padding wraps the input around as Conv does:
    its kernel has one position per output of the wrapped input, and its
    output is the 'VALID' ConvLocal of that input with the same parameters."""
    x = random.normal(random.key(0), (2, 5, 6, 3))
    kw: dict[str, Any] = {"strides": strides, "kernel_dilation": dilation}
    layer = nn.ConvLocal(4, (3, 2), padding="CIRCULAR", **kw)
    v = layer.init(random.key(1), x)
    reach = [(k - 1) * d + 1 for k, d in zip((3, 2), dilation, strict=True)]
    pads = [(0, 0)] + [((r - 1) // 2, r // 2) for r in reach] + [(0, 0)]
    wrapped = tnp.asarray(np.pad(np.asarray(x), pads, mode="wrap"))
    valid = nn.ConvLocal(4, (3, 2), padding="VALID", **kw)
    y = layer.apply(v, x)
    assert (
        y.shape
        == nn.Conv(4, (3, 2), padding="CIRCULAR", **kw)
        .init_with_output(random.key(1), x)[0]
        .shape
    )
    np.testing.assert_allclose(
        np.asarray(y), np.asarray(valid.apply(v, wrapped)), rtol=1e-6
    )


@pytest.mark.parametrize("strides", [(1, 1), (2, 1), (2, 2)])
def test_circular_transposed_convolution_is_circular_conv_s_adjoint(
    strides: tuple[int, int],
) -> None:
    """With transpose_kernel and Conv's kernel, 'CIRCULAR' ConvTranspose
    is the transpose of 'CIRCULAR' Conv: <conv(x), y> = <x, conv_t(y)>
    (for odd windows and strides of 1 or 2; otherwise the wrapped output is
    aligned differently, in Flax too)."""
    x = random.normal(random.key(0), (2, 6, 4, 3))
    conv = nn.Conv(5, (3, 5), strides=strides, padding="CIRCULAR", use_bias=False)
    v = conv.init(random.key(1), x)
    cx = conv.apply(v, x)
    y = random.normal(random.key(2), cx.shape)
    conv_t = nn.ConvTranspose(
        3,
        (3, 5),
        strides=strides,
        padding="CIRCULAR",
        use_bias=False,
        transpose_kernel=True,
    )
    ty = conv_t.apply(v, y)
    assert ty.shape == x.shape
    np.testing.assert_allclose(
        float(tnp.sum(cx * y)), float(tnp.sum(x * ty)), rtol=1e-5
    )


def test_dense_general_with_batch_dims_has_a_kernel_per_batch_index() -> None:
    """As Flax: the kernel and bias have the batch axes first; each batch
    index contracts with its own slice."""
    x = random.normal(random.key(0), (3, 4, 5, 6))
    layer = nn.DenseGeneral((2, 7), axis=-1, batch_dims=(0, 1))
    v = layer.init(random.key(1), x)
    kernel, bias = v["params"]["kernel"], v["params"]["bias"]
    assert (kernel.shape, bias.shape) == ((3, 4, 6, 2, 7), (3, 4, 2, 7))
    y = np.asarray(layer.apply(v, x))
    expected = np.einsum("abcd,abdef->abcef", np.asarray(x), np.asarray(kernel))
    expected += np.asarray(bias)[:, :, None]
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)
    grads = tl.grad(lambda p: tnp.sum(layer.apply({"params": p}, x) ** 2))(v["params"])
    assert grads["kernel"].shape == kernel.shape and grads["kernel"].dtype == np.float32
    with pytest.raises(ValueError, match="consecutive leading"):
        nn.DenseGeneral(3, batch_dims=(1,)).init(random.key(0), x)


def test_batch_norm_takes_its_statistics_over_the_masked_elements() -> None:
    rng = np.random.default_rng(0)
    x = tnp.asarray(rng.standard_normal((6, 4)).astype(np.float32))
    mask = rng.random((6, 1)) > 0.4
    layer = nn.BatchNorm(use_running_average=False, momentum=0.0)
    v = layer.init(random.key(0), x, mask=mask)
    y, updates = layer.apply(v, x, mask=mask, mutable=["batch_stats"])
    kept = np.asarray(x)[mask[:, 0]]
    mean, var = kept.mean(axis=0), kept.var(axis=0)
    np.testing.assert_allclose(
        np.asarray(updates["batch_stats"]["mean"]), mean, rtol=1e-5
    )
    np.testing.assert_allclose(
        np.asarray(updates["batch_stats"]["var"]), var, rtol=1e-4
    )
    expected = (np.asarray(x) - mean) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-4, atol=1e-5)


def test_attention_decodes_one_position_at_a_time_as_causal_attention() -> None:
    x = random.normal(random.key(0), (2, 5, 8))
    layer = nn.MultiHeadDotProductAttention(num_heads=2, decode=True)
    v = layer.init(random.key(1), x)
    cache = v["cache"]
    assert {k: (a.shape, str(a.dtype)) for k, a in cache.items()} == {
        "cached_key": ((2, 5, 2, 4), "float32"),
        "cached_value": ((2, 5, 2, 4), "float32"),
        "cache_index": ((), "int32"),
    }
    full = nn.MultiHeadDotProductAttention(num_heads=2)
    reference = full.apply(
        {"params": v["params"]}, x, mask=nn.make_causal_mask(x[..., 0])
    )

    @tl.jit
    def step(cache: Any, token: Any) -> Any:
        return layer.apply(
            {"params": v["params"], "cache": cache}, token, mutable=["cache"]
        )

    outputs = []
    for t in range(5):
        y, updates = step(cache, x[:, t : t + 1])
        cache = updates["cache"]
        outputs.append(y)
    np.testing.assert_allclose(
        np.asarray(tnp.concatenate(outputs, axis=1)), np.asarray(reference), atol=1e-5
    )
    assert int(cache["cache_index"]) == 5
    with pytest.raises(ValueError, match="one position at a time"):
        layer.apply(
            {"params": v["params"], "cache": cache}, x[:, :2], mutable=["cache"]
        )


def test_attention_masks_are_flax_shaped() -> None:
    causal = nn.make_causal_mask(tnp.ones((2, 3)))
    assert (causal.shape, causal.dtype) == ((2, 1, 3, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(causal)[0, 0], np.tril(np.ones((3, 3))))
    padding = nn.make_attention_mask(tnp.asarray([1, 1, 0]), tnp.asarray([1, 0]))
    np.testing.assert_array_equal(np.asarray(padding)[0], [[1, 0], [1, 0], [0, 0]])


def test_decoding_refuses_a_step_of_another_dtype_than_the_cache() -> None:
    layer = nn.MultiHeadDotProductAttention(num_heads=1, decode=True)
    v = layer.init(KEY, tnp.ones((1, 3, 2)))
    with tl.enable_x64(), pytest.raises(TypeError, match="cache holds float32"):
        # float64 keys would be narrowed into the float32 cache.
        layer.apply(v, tnp.ones((1, 1, 2), dtype="float64"), mutable=["cache"])


MASK = np.array([[True], [False], [True], [True], [False], [True]])

# name, layer for a dtype, input shape, call keywords.
FEATURES: list[tuple[str, Any, tuple[int, ...], dict[str, Any]]] = [
    (
        "Conv CIRCULAR",
        lambda dtype: nn.Conv(3, (3, 3), strides=2, padding="CIRCULAR", dtype=dtype),
        (2, 6, 5, 2),
        {},
    ),
    (
        "ConvTranspose CIRCULAR",
        lambda dtype: nn.ConvTranspose(
            3, (3, 3), strides=(2, 2), padding="CIRCULAR", dtype=dtype
        ),
        (2, 3, 4, 2),
        {},
    ),
    (
        "DenseGeneral batch_dims",
        lambda dtype: nn.DenseGeneral((2, 3), batch_dims=(0,), dtype=dtype),
        (2, 5, 4),
        {},
    ),
    (
        "BatchNorm mask",
        lambda dtype: nn.BatchNorm(use_running_average=False, dtype=dtype),
        (6, 3),
        {"mask": MASK},
    ),
    (
        "attention decode",
        lambda dtype: nn.MultiHeadDotProductAttention(
            num_heads=2, decode=True, dtype=dtype
        ),
        (2, 4, 4),
        {},
    ),
]


@pytest.mark.parametrize("dtype", [None, "bfloat16"])
@pytest.mark.parametrize(
    "make, shape, call", [f[1:] for f in FEATURES], ids=[f[0] for f in FEATURES]
)
def test_new_features_follow_the_dtype_rule_and_train(
    make: Any, shape: tuple[int, ...], call: dict[str, Any], dtype: str | None
) -> None:
    """bfloat16 input, float32 parameters: dtype=None computes in float32,
    dtype='bfloat16' in bfloat16; statistics stay float32, the cache has the
    compute dtype; gradients are finite, in float32, the same under jit."""
    layer = make(dtype)
    x = random.normal(random.key(0), shape).astype("bfloat16")
    variables = layer.init(random.key(1), x, **call)
    params = variables["params"]
    state = {k: v for k, v in variables.items() if k != "params"}
    mutable = list(state)
    if "cache" in state:
        x = x[:, :1]  # one decoding step
    compute = np.dtype("float32") if dtype is None else tl.dtype("bfloat16")

    def run(p: Any) -> Any:
        if mutable:
            return layer.apply({"params": p, **state}, x, mutable=mutable, **call)
        return layer.apply({"params": p}, x, **call), {}

    y, updates = run(params)
    assert y.dtype == compute
    for a in tree.leaves(updates.get("batch_stats", {})):
        assert a.dtype == np.dtype("float32")
    for name in ("cached_key", "cached_value"):
        if "cache" in updates:
            assert updates["cache"][name].dtype == compute

    def loss(p: Any) -> Any:
        return tnp.sum(run(p)[0].astype("float32") ** 2)

    eager = tl.grad(loss)(params)
    jitted = tl.jit(tl.grad(loss))(params)
    for p, g, j in zip(
        tree.leaves(params), tree.leaves(eager), tree.leaves(jitted), strict=True
    ):
        assert (g.shape, g.dtype) == (p.shape, np.dtype("float32"))
        assert np.isfinite(np.asarray(g)).all()
        np.testing.assert_allclose(np.asarray(j), np.asarray(g), rtol=1e-3, atol=1e-4)
    assert any(np.abs(np.asarray(g)).max() > 0 for g in tree.leaves(eager))


LAYERS_TO_TRAIN: list[tuple[str, Any, tuple[int, ...]]] = [
    ("Dense", nn.Dense(4), (2, 5)),
    ("DenseGeneral", nn.DenseGeneral((2, 3)), (2, 5)),
    ("Einsum", nn.Einsum((5, 3), "ab,bc->ac"), (2, 5)),
    ("Conv", nn.Conv(4, (3, 3)), (2, 6, 6, 3)),
    ("ConvTranspose", nn.ConvTranspose(4, (3, 3), strides=(2, 2)), (2, 5, 5, 3)),
    ("LayerNorm", nn.LayerNorm(), (2, 6, 3)),
    ("RMSNorm", nn.RMSNorm(), (2, 6, 3)),
    ("GroupNorm", nn.GroupNorm(num_groups=3), (2, 6, 6)),
    ("attention", nn.MultiHeadDotProductAttention(num_heads=2), (2, 5, 4)),
]


@pytest.mark.parametrize(
    "layer, shape",
    [c[1:] for c in LAYERS_TO_TRAIN],
    ids=[c[0] for c in LAYERS_TO_TRAIN],
)
def test_every_layer_trains(layer: Any, shape: tuple[int, ...]) -> None:
    """Gradients of a loss through each layer: finite, in each parameter's
    dtype and shape, the same eagerly and under jit."""
    x = random.normal(random.key(0), shape)
    params = layer.init(random.key(1), x)["params"]

    def loss(p: Any) -> Any:
        return tnp.sum(layer.apply({"params": p}, x) ** 2)

    eager = tl.grad(loss)(params)
    jitted = tl.jit(tl.grad(loss))(params)
    leaves = zip(
        tree.leaves(params), tree.leaves(eager), tree.leaves(jitted), strict=True
    )
    for p, g, j in leaves:
        assert (g.shape, g.dtype) == (p.shape, p.dtype)
        assert np.isfinite(np.asarray(g)).all()
        np.testing.assert_allclose(np.asarray(j), np.asarray(g), rtol=1e-4, atol=1e-5)


def test_embed_and_batch_norm_train() -> None:
    embed = nn.Embed(10, 4)
    tokens = tnp.asarray([[1, 2], [3, 1]])
    p = embed.init(random.key(0), tokens)["params"]
    g = tl.grad(lambda p: tnp.sum(embed.apply({"params": p}, tokens) ** 2))(p)
    rows = np.abs(np.asarray(g["embedding"])).sum(axis=1)
    assert (rows[[1, 2, 3]] > 0).all() and (rows[[0, 4, 5]] == 0).all()
    bn = nn.BatchNorm(use_running_average=False)
    x = random.normal(random.key(0), (8, 3))
    v = bn.init(random.key(1), x)

    def loss(p: Any) -> Any:
        y, _ = bn.apply({**v, "params": p}, x * 2, mutable=["batch_stats"])
        return tnp.sum(y * tnp.arange(3.0))

    grads = tl.grad(loss)(v["params"])
    assert grads["scale"].dtype == np.float32
    np.testing.assert_allclose(np.asarray(grads["bias"]), [0.0, 8.0, 16.0], rtol=1e-6)


def test_an_embedding_model_trains_under_jit() -> None:
    """The tokens are a jit argument (traced): the jitted step's loss and
    gradients are eager value_and_grad's, and the loss falls."""

    class Model(nn.Module):
        @nn.compact
        def __call__(self, tokens: Any) -> Any:
            rows = nn.Embed(12, 4)(tokens)  # (batch, length, 4)
            return nn.Dense(1)(tnp.mean(rows, axis=1))[:, 0]

    model = Model()
    tokens = tnp.asarray([[1, 5, 2], [3, 3, 11], [0, 7, 5], [11, 2, 9]])
    targets = tnp.asarray([1.0, -1.0, 0.5, 2.0])
    params = model.init(random.key(0), tokens)["params"]

    def loss(p: Any, tokens: Any, targets: Any) -> Any:
        return tnp.mean((model.apply({"params": p}, tokens) - targets) ** 2)

    step = tl.jit(tl.value_and_grad(loss))
    value, grads = step(params, tokens, targets)
    eager_value, eager_grads = tl.value_and_grad(loss)(params, tokens, targets)
    np.testing.assert_allclose(np.asarray(value), np.asarray(eager_value), rtol=1e-6)
    for g, e in zip(tree.leaves(grads), tree.leaves(eager_grads), strict=True):
        assert (g.dtype, g.shape) == (e.dtype, e.shape)
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-6, atol=1e-7)
    rows = np.abs(np.asarray(grads["Embed_0"]["embedding"])).sum(axis=1)
    used = sorted({int(t) for t in np.asarray(tokens).ravel()})
    assert (rows[used] > 0).all() and (np.delete(rows, used) == 0).all()
    first = float(value)
    for _ in range(50):
        value, grads = step(params, tokens, targets)
        p_leaves, structure = tree.flatten(params)
        updated = [
            p - 0.2 * g for p, g in zip(p_leaves, tree.leaves(grads), strict=True)
        ]
        params = structure.unflatten(updated)
    assert float(value) < first / 4
    # Other tokens of the same shape reuse the traced step.
    other, _ = step(params, tokens[::-1], targets)
    assert np.isfinite(float(other))


# -- parameters given to apply are checked against what init makes ------------------


def _grad_apply(layer: nn.Module) -> Any:
    def loss(variables: Any, x: Any) -> Any:
        return layer.apply(variables, x).sum()

    return tl.grad(loss)


APPLIES = {
    "eager": lambda layer: layer.apply,
    "jit": lambda layer: tl.jit(layer.apply),
    "grad": _grad_apply,
}


def _with(variables: Any, path: tuple[str, ...], value: Any) -> Any:
    """``variables`` with the leaf at ``path`` replaced (copied dicts)."""
    out = {k: v for k, v in variables.items()}
    if len(path) == 1:
        out[path[0]] = value
    else:
        out[path[0]] = _with(variables[path[0]], path[1:], value)
    return out


# (layer, input shape, the parameter changed, its wrong shape, its right shape)
WRONG_SHAPES = [
    (nn.Conv(8, (3, 3)), (1, 6, 6, 1), ("kernel",), (5, 5, 1, 8), (3, 3, 1, 8)),
    (nn.Dense(5), (2, 4), ("bias",), (4, 5), (5,)),
    (nn.DenseGeneral((2, 3)), (2, 4), ("kernel",), (4, 3, 2), (4, 2, 3)),
    (nn.Embed(10, 3), (4,), ("embedding",), (3, 10), (10, 3)),
    (nn.LayerNorm(), (2, 4), ("scale",), (5,), (4,)),
    (MLP(4), (2, 3), ("head", "kernel"), (3, 2), (4, 2)),
]


@pytest.mark.parametrize("run", list(APPLIES))
@pytest.mark.parametrize(
    ("layer", "shape", "path", "wrong", "right"),
    WRONG_SHAPES,
    ids=[type(case[0]).__name__ for case in WRONG_SHAPES],
)
def test_a_parameter_of_another_shape_raises_naming_it_and_both_shapes(
    layer: nn.Module,
    shape: tuple[int, ...],
    path: tuple[str, ...],
    wrong: tuple[int, ...],
    right: tuple[int, ...],
    run: str,
) -> None:
    """As Flax's ScopeParamShapeError: where the shapes would broadcast (a
    5x5 kernel in a 3x3 convolution) the layer would otherwise compute
    something else without a word."""
    x = tnp.zeros(shape, "int32") if isinstance(layer, nn.Embed) else tnp.ones(shape)
    variables = layer.init(KEY, x)
    APPLIES[run](layer)(variables, x)  # the variables init made are taken
    bad = _with(variables, ("params", *path), tnp.ones(wrong))
    shown = "/".join(path)
    with pytest.raises(nn.ScopeParamShapeError) as err:
        APPLIES[run](layer)(bad, x)
    assert str(err.value).startswith(
        f"the parameter '{shown}' has shape {wrong}, but {type(layer).__name__}"
        if len(path) == 1
        else f"the parameter '{shown}' has shape {wrong}, but Dense"
    )
    assert f"makes it {right} here" in str(err.value)
    assert "model.init(key, x)" in str(err.value)
    assert isinstance(err.value, ValueError)


def test_parameters_of_another_dtype_are_taken() -> None:
    """Only shapes are compared (as Flax): parameters cast for mixed
    precision are given on purpose."""
    layer = nn.Dense(3)
    x = tnp.ones((2, 4))
    variables = layer.init(KEY, x)
    half = tree.tree_map(lambda p: p.astype("bfloat16"), variables)
    assert layer.apply(half, x.astype("bfloat16")).dtype == tl.dtype("bfloat16")


def test_a_user_initialiser_is_checked_too() -> None:
    class Scaled(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            def init(key: Any, n: int) -> Any:
                return random.normal(key, (n, 2))

            return x @ self.param("w", init, x.shape[-1])

    x = tnp.ones((1, 3))
    variables = Scaled().init(KEY, x)
    assert Scaled().apply(variables, x).shape == (1, 2)
    with pytest.raises(
        nn.ScopeParamShapeError,
        match=r"'w' has shape \(2, 2\), but Scaled makes it \(3, 2\)",
    ):
        Scaled().apply({"params": {"w": tnp.ones((2, 2))}}, x)


def test_an_initialiser_that_reads_the_key_is_taken_as_given() -> None:
    """Its shape cannot be found without running it: the given parameter
    is used as it is (what apply did before it checked)."""

    class FromSeed(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            def init(key: Any) -> Any:
                seed = int(np.asarray(random.key_data(key)).sum())
                return tnp.asarray(np.random.default_rng(seed).normal(size=3))

            return x * self.param("w", init)

    x = tnp.ones(3)
    variables = FromSeed().init(KEY, x)
    out = FromSeed().apply(variables, x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(variables["params"]["w"]))


def test_float64_parameters_beyond_float32_raise_in_32_bit_mode() -> None:
    """NumPy float64 parameters (a checkpoint) become float32 as asarray
    makes them: rounded, but a value float32 cannot hold raises instead of
    becoming inf."""
    layer = nn.Dense(2)
    x = tnp.ones((1, 3))
    variables = layer.init(KEY, x)
    kernel = np.asarray(variables["params"]["kernel"], np.float64)
    ok = _with(variables, ("params", "kernel"), kernel)
    np.testing.assert_array_equal(
        np.asarray(layer.apply(ok, x)), np.asarray(layer.apply(variables, x))
    )
    kernel[0, 1] = 1e39
    bad = _with(variables, ("params", "kernel"), kernel)
    with pytest.raises(
        OverflowError,
        match=r"the parameter 'kernel' \(float64 becomes float32 with "
        r"enable_x64=False\): value 1e\+39 does not fit in float32.*enable_x64",
    ):
        layer.apply(bad, x)


def test_nested_lists_are_taken_as_arrays_of_the_parameter_s_dtype() -> None:
    """A checkpoint read from JSON: lists become arrays of the dtype init
    would give, values checked."""
    layer = nn.Dense(2, param_dtype="float16")
    x = tnp.ones((1, 3), "float16")
    variables = layer.init(KEY, x)
    as_json = tree.tree_map(lambda p: np.asarray(p, np.float32).tolist(), variables)
    assert isinstance(as_json["params"]["kernel"], list)
    out = layer.apply(as_json, x)
    assert out.dtype == tl.dtype("float16")
    np.testing.assert_array_equal(
        np.asarray(out), np.asarray(layer.apply(variables, x))
    )
    too_big = _with(as_json, ("params", "bias"), [1.0, 1e6])
    with pytest.raises(
        OverflowError,
        match=r"the parameter 'bias': value 1000000.0 does not fit in float16.*"
        r"param_dtype='float32'",
    ):
        layer.apply(too_big, x)
    wrong = _with(as_json, ("params", "bias"), [1.0, 2.0, 3.0])
    with pytest.raises(nn.ScopeParamShapeError, match=r"'bias' has shape \(3,\)"):
        layer.apply(wrong, x)
    ragged = _with(as_json, ("params", "bias"), [[1.0], [1.0, 2.0]])
    with pytest.raises(ValueError, match="the parameter 'bias'"):
        layer.apply(ragged, x)
    with pytest.raises(
        TypeError,
        match=r"the parameter 'kernel' is a list of traced numbers.*before jit",
    ):
        tl.jit(layer.apply)(as_json, x)


def test_batchnorm_axis_name_averages_the_statistics_over_the_named_axis() -> None:
    # Two shards of a batch under a named vmap normalise with the statistics
    # of the whole batch: as one BatchNorm over the concatenated batch.
    x = tnp.asarray(np.arange(24, dtype=np.float32).reshape(2, 4, 3) ** 1.5)
    layer = nn.BatchNorm(use_running_average=False, axis_name="batch")
    whole = nn.BatchNorm(use_running_average=False)
    v = whole.init(random.key(0), x.reshape(8, 3))
    # (initialised outside any named axis: the statistics are not averaged)
    assert layer.init(random.key(0), x[0]).keys() == v.keys()
    expected, upd = whole.apply(v, x.reshape(8, 3), mutable=["batch_stats"])
    sharded = tl.vmap(
        lambda xs: layer.apply(v, xs, mutable=["batch_stats"]), axis_name="batch"
    )
    y, upd2 = sharded(x)
    np.testing.assert_allclose(
        np.asarray(y).reshape(8, 3), np.asarray(expected), rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(
        np.asarray(upd2["batch_stats"]["mean"][0]),
        np.asarray(upd["batch_stats"]["mean"]),
        rtol=1e-6,
    )
