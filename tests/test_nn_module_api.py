"""The Module API of Flax linen beyond init/apply: the forms of ``method``,
``parent=None``, ``bind``/``unbind``, ``init_with_output``,
``capture_intermediates``, the variable accessors, ``nowrap``, the
functional ``nn.apply``/``nn.init``, and partition boxes through init,
apply, jit and grad."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import nn, optim, random
from typelattice.numpy import Array


class AutoEncoder(nn.Module):
    latent: int = 2

    def setup(self) -> None:
        self.encoder = nn.Dense(self.latent)
        self.decoder = nn.Dense(3)

    def __call__(self, x: Array) -> Array:
        return self.decode(self.encode(x))

    def encode(self, x: Array) -> Array:
        return self.encoder(x)

    def decode(self, z: Array) -> Array:
        return self.decoder(z)


X = random.normal(random.key(1), (4, 3))


@pytest.fixture(scope="module")
def variables() -> dict[str, Any]:
    return AutoEncoder().init(random.key(0), X)


def test_every_form_of_method_runs_the_same_method(variables: Any) -> None:
    model = AutoEncoder()
    by_class = model.apply(variables, X, method=AutoEncoder.encode)
    assert by_class.shape == (4, 2)
    for method in ("encode", model.encode, lambda m, x: m.encode(x)):
        np.testing.assert_array_equal(
            model.apply(variables, X, method=method), by_class
        )
    # A bound method of another instance of the class: its function runs.
    other = AutoEncoder()
    np.testing.assert_array_equal(
        model.apply(variables, X, method=other.encode), by_class
    )


def test_init_with_a_method_makes_only_its_parameters() -> None:
    model = AutoEncoder()
    for method in (AutoEncoder.encode, "encode", model.encode):
        v = model.init(random.key(0), X, method=method)
        assert sorted(v["params"]) == ["encoder"]


def test_an_unknown_method_name_is_named() -> None:
    with pytest.raises(AttributeError, match="'encodee'"):
        AutoEncoder().apply({}, X, method="encodee")


def test_init_with_output_gives_the_output_apply_gives(variables: Any) -> None:
    y, v = AutoEncoder().init_with_output(random.key(0), X)
    np.testing.assert_array_equal(y, AutoEncoder().apply(variables, X))
    np.testing.assert_array_equal(
        v["params"]["encoder"]["kernel"], variables["params"]["encoder"]["kernel"]
    )


def test_bind_runs_methods_interactively_and_unbind_gives_them_back(
    variables: Any,
) -> None:
    model = AutoEncoder()
    bound = model.bind(variables)
    np.testing.assert_array_equal(
        bound.encode(X), model.apply(variables, X, method="encode")
    )
    np.testing.assert_array_equal(bound(X), model.apply(variables, X))
    assert model.is_initializing() is False
    module, got = bound.unbind()
    assert module == model
    with pytest.raises(ValueError, match="init or apply"):
        module.variables  # noqa: B018  (unbound again)
    np.testing.assert_array_equal(
        got["params"]["decoder"]["bias"], variables["params"]["decoder"]["bias"]
    )
    # A submodule of a bound module reads its own variables.
    assert sorted(bound.encoder.variables["params"]) == ["bias", "kernel"]


def test_bind_with_mutable_keeps_the_updates() -> None:
    layer = nn.BatchNorm(use_running_average=False)
    x = random.normal(random.key(2), (8, 3))
    v = layer.init(random.key(0), x)
    bound = layer.bind(v, mutable=["batch_stats"])
    bound(x)
    _, expected = layer.apply(v, x, mutable=["batch_stats"])
    np.testing.assert_allclose(
        bound.variables["batch_stats"]["mean"], expected["batch_stats"]["mean"]
    )


class Outer(nn.Module):
    @nn.compact
    def __call__(self, x: Array) -> tuple[Array, nn.Module]:
        free = nn.Dense(5, parent=None)
        return nn.Dense(2)(x), free


def test_parent_none_makes_a_module_no_parent_adopts() -> None:
    variables = Outer().init(random.key(0), X)
    assert sorted(variables["params"]) == ["Dense_0"]  # (free is not a child)
    _, free = Outer().apply(variables, X)
    assert free.is_initializing() is False
    with pytest.raises(ValueError, match="init or apply"):
        free.variables  # noqa: B018
    # The free module is a top-level module of its own.
    v = free.init(random.key(0), X)
    assert v["params"]["kernel"].shape == (3, 5)


def test_a_parent_other_than_a_bound_module_is_refused() -> None:
    with pytest.raises(TypeError, match="parent="):
        nn.Dense(2, parent=3)


def test_capture_intermediates_keeps_each_call_output() -> None:
    class Mlp(nn.Module):
        @nn.compact
        def __call__(self, x: Array) -> Array:
            h = nn.Dense(3)(x)
            return nn.Dense(2)(nn.relu(h))

    model = Mlp()
    v = model.init(random.key(0), X)
    y, state = model.apply(v, X, capture_intermediates=True)
    inter = state["intermediates"]
    assert set(inter) == {"Dense_0", "Dense_1", "__call__"}
    np.testing.assert_array_equal(inter["__call__"][0], y)
    assert inter["Dense_0"]["__call__"][0].shape == (4, 3)
    assert inter["Dense_1"]["__call__"][0].shape == (4, 2)
    # The same numbers as running the first layer alone.
    first = nn.Dense(3).apply({"params": v["params"]["Dense_0"]}, X)
    np.testing.assert_array_equal(inter["Dense_0"]["__call__"][0], first)
    # A filter picks the modules; init keeps them too when asked.
    _, none = model.apply(v, X, capture_intermediates=lambda m, name: False)
    assert none == {}
    _, top_only = model.apply(
        v, X, capture_intermediates=lambda m, name: type(m) is Mlp
    )
    assert set(top_only["intermediates"]) == {"__call__"}
    init_v = model.init(random.key(0), X, capture_intermediates=True)
    assert set(init_v) == {"params", "intermediates"}


def test_variable_accessors() -> None:
    class Stateful(nn.Module):
        @nn.compact
        def __call__(self, x: Array) -> dict[str, Any]:
            seen = self.get_variable("state", "count", 0)
            if self.is_mutable_collection("state"):
                self.put_variable("state", "count", seen + 1)
            return {
                "seen": seen,
                "has_dropout": self.has_rng("dropout"),
                "has": self.has_variable("state", "count"),
            }

    model = Stateful()
    out, state = model.apply({}, X, mutable=["state"])
    assert out == {"seen": 0, "has_dropout": False, "has": True}
    out2 = model.apply(state, X, rngs={"dropout": random.key(0)})
    assert out2 == {"seen": 1, "has_dropout": True, "has": True}

    class Writer(nn.Module):
        @nn.compact
        def __call__(self) -> None:
            self.put_variable("state", "x", 1)

    with pytest.raises(ValueError, match=r"state/x.*mutable=\['state'\]"):
        Writer().apply({})


def test_nowrap_helpers_make_children_of_the_compact_caller() -> None:
    class Model(nn.Module):
        @nn.nowrap
        def layer(self, n: int) -> nn.Dense:
            return nn.Dense(n)

        @nn.compact
        def __call__(self, x: Array) -> Array:
            return self.layer(2)(self.layer(3)(x))

    v = Model().init(random.key(0), X)
    assert {k: p["kernel"].shape for k, p in v["params"].items()} == {
        "Dense_0": (3, 2),
        "Dense_1": (3, 3),
    }


def test_functional_apply_and_init(variables: Any) -> None:
    model = AutoEncoder()

    def encode_twice(m: AutoEncoder, x: Array) -> Array:
        return m.encode(x) * 2

    y = nn.apply(encode_twice, model)(variables, X)
    np.testing.assert_array_equal(y, model.apply(variables, X, method="encode") * 2)
    v = nn.init(encode_twice, model)(random.key(0), X)
    assert sorted(v["params"]) == ["encoder"]
    out, v2 = nn.init_with_output(encode_twice, model)(random.key(0), X)
    np.testing.assert_array_equal(out, nn.apply(encode_twice, model)(v2, X))
    _, state = nn.apply(lambda m, x: m(x), model, mutable=True)(variables, X)
    assert "params" in state


def test_deny_list_leaves_out_its_collections() -> None:
    class Probe(nn.Module):
        @nn.compact
        def __call__(self, x: Array) -> Array:
            self.sow("intermediates", "x", x)
            self.sow("other", "x", x)
            return x

    _, state = Probe().apply({}, X, mutable=nn.DenyList(("other",)))
    assert set(state) == {"intermediates"}
    assert Probe().init(random.key(0), X, mutable=nn.DenyList("other")) == {
        "intermediates": {"x": (X,)}
    }


def test_merge_param_takes_exactly_one() -> None:
    assert nn.merge_param("deterministic", None, True) is True
    assert nn.merge_param("deterministic", False, None) is False
    with pytest.raises(ValueError, match="both"):
        nn.merge_param("deterministic", True, False)
    with pytest.raises(ValueError, match="is needed"):
        nn.merge_param("deterministic", None, None)


def test_transforms_module_is_the_lifted_transforms() -> None:
    from typelattice.nn import transforms

    assert transforms.scan is nn.scan and nn.transforms.vmap is nn.vmap


# -- partition boxes -----------------------------------------------------------------


class Mlp(nn.Module):
    @nn.compact
    def __call__(self, x: Array) -> Array:
        h = nn.Dense(
            4,
            kernel_init=nn.with_partitioning(
                nn.initializers.lecun_normal(), (None, "model")
            ),
            bias_init=nn.with_logical_partitioning(nn.initializers.zeros, ("mlp",)),
        )(x)
        return nn.Dense(1)(nn.relu(h)).sum()


def test_boxed_parameters_are_boxed_in_variables_and_raw_in_the_module() -> None:
    seen: list[Any] = []

    class Peek(nn.Module):
        @nn.compact
        def __call__(self, x: Array) -> Array:
            k = self.param(
                "k", nn.with_partitioning(nn.initializers.ones, ("a", None)), (2, 3)
            )
            boxed = self.param(
                "k",
                nn.with_partitioning(nn.initializers.ones, ("a", None)),
                (2, 3),
                unbox=False,
            )
            seen.append((k, boxed))
            return x @ k

    v = Peek().init(random.key(0), tnp.ones((1, 2)))
    box = v["params"]["k"]
    assert isinstance(box, nn.Partitioned) and box.names == ("a", None)
    k, boxed = seen[-1]
    assert type(k) is not nn.Partitioned and k.shape == (2, 3)
    assert isinstance(boxed, nn.Partitioned)
    Peek().apply(v, tnp.ones((1, 2)))
    k, boxed = seen[-1]
    assert not isinstance(k, nn.meta.AxisMetadata)
    assert isinstance(boxed, nn.Partitioned) and boxed.names == ("a", None)


def test_boxed_and_unboxed_variables_give_one_answer_on_every_path() -> None:
    model = Mlp()
    v = model.init(random.key(0), X)
    kernel = v["params"]["Dense_0"]["kernel"]
    bias = v["params"]["Dense_0"]["bias"]
    assert isinstance(kernel, nn.Partitioned) and kernel.names == (None, "model")
    assert isinstance(bias, nn.LogicallyPartitioned) and bias.names == ("mlp",)
    specs = nn.get_partition_spec(v)["params"]
    assert specs["Dense_0"]["kernel"] == (None, "model")
    assert specs["Dense_1"]["kernel"] == ()
    plain = nn.unbox(v)
    assert not isinstance(plain["params"]["Dense_0"]["kernel"], nn.Partitioned)
    want = model.apply(plain, X)
    np.testing.assert_array_equal(model.apply(v, X), want)
    np.testing.assert_array_equal(tl.jit(model.apply)(v, X), want)

    grads = tl.grad(lambda p: model.apply(p, X))(v)
    g_kernel = grads["params"]["Dense_0"]["kernel"]
    assert isinstance(g_kernel, nn.Partitioned) and g_kernel.names == (None, "model")
    plain_grads = tl.grad(lambda p: model.apply(p, X))(plain)
    np.testing.assert_allclose(
        g_kernel.value, plain_grads["params"]["Dense_0"]["kernel"], rtol=1e-6
    )
    jitted = tl.jit(tl.grad(lambda p: model.apply(p, X)))(v)
    assert isinstance(jitted["params"]["Dense_0"]["bias"], nn.LogicallyPartitioned)
    np.testing.assert_allclose(
        jitted["params"]["Dense_0"]["bias"].value,
        plain_grads["params"]["Dense_0"]["bias"],
        rtol=1e-6,
    )


def test_an_optimiser_step_on_unboxed_parameters_rebuilds_the_boxes() -> None:
    model = Mlp()
    v = model.init(random.key(0), X)
    params = nn.unbox(v["params"])
    opt = optim.sgd(0.1)
    state = opt.init(params)
    grads = tl.grad(lambda p: model.apply({"params": p}, X))(params)
    updates, _ = opt.update(grads, state, params)
    new = optim.apply_updates(params, updates)
    boxed = nn.meta.replace_boxed(v["params"], new)
    assert boxed["Dense_0"]["kernel"].names == (None, "model")
    np.testing.assert_array_equal(
        boxed["Dense_0"]["kernel"].value, new["Dense_0"]["kernel"]
    )
    np.testing.assert_array_equal(
        model.apply({"params": boxed}, X), model.apply({"params": new}, X)
    )


def test_a_boxed_parameter_of_another_shape_is_refused() -> None:
    model = Mlp()
    v = model.init(random.key(0), X)
    wrong = nn.meta.replace_boxed(v, tl.tree_util.tree_map(lambda a: a, nn.unbox(v)))
    wrong["params"]["Dense_0"]["kernel"] = nn.Partitioned(
        tnp.ones((5, 4)), (None, "model")
    )
    with pytest.raises(nn.ScopeParamShapeError, match=r"\(5, 4\)"):
        model.apply(wrong, X)


def test_logical_axis_rules() -> None:
    rules = [("batch", "X"), ("features", "X"), ("heads", "Y"), ("batch", "Z")]
    spec = nn.logical_to_mesh_axes(("batch", "length", "heads", "features"), rules)
    assert spec == ("X", None, "Y", None)
    # An axis a rule maps to None stays unsharded; a taken mesh axis is skipped.
    assert nn.logical_to_mesh_axes(("a", "b", None), [("a", None), ("b", "x")]) == (
        None,
        "x",
        None,
    )
    with nn.logical_axis_rules([("mlp", "model")]):
        assert nn.logical_to_mesh_axes(("embed", "mlp")) == (None, "model")
    assert nn.get_logical_axis_rules() == ()
    with pytest.raises(ValueError, match="more than once"):
        nn.logical_to_mesh_axes(("a", "a"), [])


def test_box_axes_follow_lifted_metadata() -> None:
    box = nn.Partitioned(tnp.zeros((2, 3)), ("embed", "mlp"))
    stacked = box.add_axis(0, {nn.PARTITION_NAME: "layers"})
    assert stacked.names == ("layers", "embed", "mlp")
    assert stacked.remove_axis(0, {nn.PARTITION_NAME: "layers"}).names == box.names
    with pytest.raises(ValueError, match="metadata_params"):
        box.add_axis(0, {})


def test_boxes_go_through_vmap_and_come_back_boxed() -> None:
    stacked = {"w": nn.Partitioned(tnp.arange(6.0).reshape(3, 2), ("layers", "mlp"))}
    out = tl.vmap(lambda t: tl.tree_util.tree_map(lambda a: a * 2, t))(stacked)
    assert isinstance(out["w"], nn.Partitioned) and out["w"].names == ("layers", "mlp")
    np.testing.assert_array_equal(out["w"].value, np.arange(6.0).reshape(3, 2) * 2)


# -- attention options -----------------------------------------------------------------


def test_an_attention_fn_of_ones_own_gets_the_keywords_it_names() -> None:
    seen: dict[str, Any] = {}

    def plain(query: Array, key: Array, value: Array, mask: Any = None) -> Array:
        seen["mask"] = mask
        return nn.dot_product_attention(query, key, value, mask=mask)

    x = random.normal(random.key(3), (2, 5, 4))
    layer = nn.MultiHeadDotProductAttention(num_heads=2, attention_fn=plain)
    v = layer.init(random.key(0), x)
    default = nn.MultiHeadDotProductAttention(num_heads=2)
    np.testing.assert_allclose(layer.apply(v, x), default.apply(v, x), rtol=1e-6)
    assert "mask" in seen


def test_attention_einsum_factories_are_used() -> None:
    calls: list[str] = []

    def counting() -> Any:
        def einsum(spec: str, *operands: Array) -> Array:
            calls.append(spec)
            return tnp.einsum(spec, *operands)

        return einsum

    x = random.normal(random.key(3), (2, 5, 4))
    layer = nn.MultiHeadDotProductAttention(
        num_heads=2,
        qk_attn_weights_einsum_cls=counting,
        attn_weights_value_einsum_cls=counting,
    )
    v = layer.init(random.key(0), x)
    calls.clear()
    y = layer.apply(v, x)
    assert calls == ["...qhd,...khd->...hqk", "...hqk,...khd->...qhd"]
    default = nn.MultiHeadDotProductAttention(num_heads=2)
    np.testing.assert_allclose(y, default.apply(v, x), rtol=1e-6)
    q = tnp.ones((1, 3, 2, 4))
    with pytest.raises(ValueError, match="together"):
        nn.dot_product_attention(q, q, q, qk_attn_weights_einsum=tnp.einsum)
    with pytest.raises(NotImplementedError, match="dot_general"):
        nn.dot_product_attention(q, q, q, einsum_dot_general=lambda *a: a)
    with pytest.raises(NotImplementedError, match="dot_general"):
        nn.MultiHeadDotProductAttention(num_heads=2, qkv_dot_general=lambda *a: a).init(
            random.key(0), x
        )


def test_self_attention_warns_and_attends_to_its_input() -> None:
    x = random.normal(random.key(3), (2, 5, 4))
    layer = nn.SelfAttention(num_heads=2)
    with pytest.warns(DeprecationWarning, match="MultiHeadDotProductAttention"):
        v = layer.init(random.key(0), x)
    with pytest.warns(DeprecationWarning):
        y = layer.apply(v, x)
    np.testing.assert_allclose(
        y, nn.MultiHeadDotProductAttention(num_heads=2).apply(v, x), rtol=1e-6
    )

    class Two(nn.Module):
        @nn.compact
        def __call__(self, x: Array) -> Array:
            return nn.MultiHeadAttention(num_heads=1)(x)

    assert list(Two().init(random.key(0), x)["params"]) == ["MultiHeadAttention_0"]


def test_clone_gives_a_changed_copy_that_belongs_to_no_run() -> None:
    kept: list[nn.Module] = []

    class Outer(nn.Module):
        @nn.compact
        def __call__(self, x: Array) -> Array:
            dense = nn.Dense(2)
            y = dense(x)
            kept.append(dense.clone(features=5))
            kept.append(dense.clone(parent=self, features=4))
            return y + kept[-1](x).sum()

    v = Outer().init(random.key(0), X)
    assert sorted(v["params"]) == ["Dense_0", "Dense_1"]
    assert v["params"]["Dense_1"]["kernel"].shape == (3, 4)
    free = kept[0]
    assert free.features == 5 and free.is_initializing() is False
    with pytest.raises(ValueError, match="init or apply"):
        free.path  # noqa: B018
    assert kept[1].path == ("Dense_1",)


# -- the weight normalisations on every path -------------------------------------------


@pytest.mark.parametrize(
    "layer",
    [
        nn.SpectralNorm(nn.Dense(3), n_steps=2),
        nn.WeightNorm(nn.Dense(3)),
        nn.InstanceNorm(),
    ],
    ids=["SpectralNorm", "WeightNorm", "InstanceNorm"],
)
def test_normalisations_agree_eager_jit_grad_and_vmap(layer: nn.Module) -> None:
    x = random.normal(random.key(4), (2, 5, 4))
    kwargs = {"update_stats": False} if isinstance(layer, nn.SpectralNorm) else {}
    v = layer.init(random.key(0), x, **kwargs)

    def loss(params: Any, x: Array) -> Array:
        y = layer.apply({**v, "params": params}, x, **kwargs)
        return (y * y).sum()

    eager = tl.grad(loss)(v["params"], x)
    jitted = tl.jit(tl.grad(loss))(v["params"], x)
    pairs = zip(
        tl.tree_util.tree_leaves(eager), tl.tree_util.tree_leaves(jitted), strict=True
    )
    for a, b in pairs:
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # Each example alone gives the same output as the batch (vmap).
    whole = layer.apply(v, x, **kwargs)
    mapped = tl.vmap(lambda xi: layer.apply(v, xi[None], **kwargs)[0])(x)
    np.testing.assert_allclose(mapped, whole, rtol=1e-5, atol=1e-6)
