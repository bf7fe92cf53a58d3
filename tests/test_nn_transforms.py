"""The lifted transforms nn.jit and nn.map_variables: names, variables in
and out, random streams, static arguments, gradients, and one trace per
signature."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import nn, random

KEY = random.key(0)
X = tnp.asarray(np.sin(np.arange(12.0)).reshape(4, 3).astype("float32"))


def _close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)


class Model(nn.Module):
    @nn.compact
    def __call__(self, x: Any) -> Any:
        return nn.jit(nn.Dense)(2)(x)


def test_a_jitted_layer_is_named_and_computes_as_flax_names_it() -> None:
    variables = Model().init(KEY, X)
    params = variables["params"]["JitDense_0"]
    assert {k: v.shape for k, v in params.items()} == {"kernel": (3, 2), "bias": (2,)}
    _close(Model().apply(variables, X), nn.Dense(2).apply({"params": params}, X))


def test_a_jitted_method_traces_once_per_signature() -> None:
    traces = []

    class Counted(nn.Module):
        @nn.jit
        @nn.compact
        def __call__(self, x: Any) -> Any:
            traces.append(1)
            return nn.Dense(2)(x)

    variables = Counted().init(KEY, X)
    traces.clear()
    for _ in range(3):
        Counted().apply(variables, X)
    assert len(traces) == 1
    assert sorted(variables["params"]) == ["Dense_0"]


def test_mutable_collections_and_random_streams_pass_through_jit() -> None:
    class Block(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            x = nn.BatchNorm(use_running_average=False)(x)
            return nn.Dropout(0.5, deterministic=False)(x)

    JitBlock = nn.jit(Block)
    variables = JitBlock().init({"params": KEY, "dropout": KEY}, X)
    y, updates = JitBlock().apply(
        variables, X, rngs={"dropout": random.key(1)}, mutable=["batch_stats"]
    )
    mean = updates["batch_stats"]["BatchNorm_0"]["mean"]
    _close(mean, 0.01 * tnp.mean(X, axis=0))  # momentum 0.99 from zeros
    zeros = int((np.asarray(y) == 0).sum())
    assert 0 < zeros < y.size


def test_static_arguments_count_the_module_as_zero() -> None:
    class Scaled(nn.Module):
        @nn.compact
        def __call__(self, x: Any, times: int, *, shift: int = 0) -> Any:
            assert isinstance(times, int) and isinstance(shift, int)
            return nn.Dense(2)(x) * times + shift

    Jitted = nn.jit(Scaled, static_argnums=2, static_argnames="shift")
    variables = Jitted().init(KEY, X, 2)
    y = Jitted().apply(variables, X, 3, shift=1)
    _close(y, Scaled().apply(variables, X, 3, shift=1))


def test_gradients_flow_through_a_jitted_layer() -> None:
    variables = Model().init(KEY, X)
    params = variables["params"]["JitDense_0"]

    def jitted(p: Any) -> Any:
        return (Model().apply({"params": {"JitDense_0": p}}, X) ** 2).sum()

    def plain(p: Any) -> Any:
        return (nn.Dense(2).apply({"params": p}, X) ** 2).sum()

    for name in ("kernel", "bias"):
        _close(tl.grad(jitted)(params)[name], tl.grad(plain)(params)[name])


def test_map_variables_shows_the_module_its_mapped_variables() -> None:
    upper = tnp.arange(3)[:, None] <= tnp.arange(3)

    def causal(v: Any) -> Any:
        return {c: {**p, "kernel": p["kernel"] * upper} for c, p in v.items()}

    class Causal(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            Dense = nn.map_variables(
                nn.Dense, "params", causal, init=self.is_initializing()
            )
            return Dense(3, use_bias=False)(x)

    variables = Causal().init(KEY, X)
    kernel = variables["params"]["Map_variablesDense_0"]["kernel"]
    assert float(kernel[2, 0]) == 0.0  # init stores what the module saw
    full = {"params": {"Map_variablesDense_0": {"kernel": tnp.ones((3, 3))}}}
    _close(Causal().apply(full, tnp.ones((1, 3))), [[1.0, 2.0, 3.0]])


def test_map_variables_without_mutable_keeps_the_mapped_collection() -> None:
    class Stats(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            BN = nn.map_variables(nn.BatchNorm, "batch_stats")
            return BN(use_running_average=False)(x)

    variables = nn.BatchNorm(use_running_average=False).init(KEY, X)
    given = {
        "params": {"Map_variablesBatchNorm_0": variables["params"]},
        "batch_stats": {"Map_variablesBatchNorm_0": variables["batch_stats"]},
    }
    with pytest.raises(ValueError, match="cannot be updated"):
        Stats().apply(given, X, mutable=["batch_stats"])


def test_a_transformed_method_needs_init_or_apply() -> None:
    with pytest.raises(ValueError, match="runs only while its module runs"):
        nn.jit(nn.Dense)(2)(X)
