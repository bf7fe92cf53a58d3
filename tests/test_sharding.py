"""Shardings on one device: meshes, specs and shardings are built and
checked as JAX's, accepted by jit, with_sharding_constraint and device_put,
and leave every value as it is."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax, nn
from typelattice.experimental import mesh_utils
from typelattice.sharding import (
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
)


def mesh3() -> Mesh:
    return Mesh(mesh_utils.create_device_mesh((1, 1, 1)), ("data", "fsdp", "tensor"))


def test_create_device_mesh_shapes_the_one_device() -> None:
    grid = mesh_utils.create_device_mesh([1, 1])
    assert grid.shape == (1, 1)
    assert grid[0, 0] is tl.devices()[0]
    assert mesh_utils.create_device_mesh((1,), devices=tl.devices()).shape == (1,)


@pytest.mark.parametrize("shape", [(2,), (1, 4), (0,)])
def test_create_device_mesh_rejects_a_shape_of_other_size(shape: Any) -> None:
    with pytest.raises(ValueError, match=r"product is 1"):
        mesh_utils.create_device_mesh(shape)


def test_create_device_mesh_rejects_non_devices() -> None:
    with pytest.raises(TypeError, match="not a device"):
        mesh_utils.create_device_mesh((1,), devices=["cpu"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="integers"):
        mesh_utils.create_device_mesh((1.0,))  # type: ignore[arg-type]


def test_mesh_attributes() -> None:
    mesh = mesh3()
    assert mesh.axis_names == ("data", "fsdp", "tensor")
    assert mesh.shape == {"data": 1, "fsdp": 1, "tensor": 1}
    assert mesh.size == 1 and not mesh.empty
    assert mesh.devices.shape == (1, 1, 1)
    assert mesh.device_ids.tolist() == [[[0]]]
    assert mesh == mesh3() and hash(mesh) == hash(mesh3())
    assert mesh != Mesh(np.array(tl.devices()).reshape(1, 1, 1), ("a", "b", "c"))
    assert repr(mesh) == "Mesh(axis_sizes={'data': 1, 'fsdp': 1, 'tensor': 1})"


def test_mesh_devices_are_not_writable_and_not_the_callers() -> None:
    grid = np.array(tl.devices())
    mesh = Mesh(grid, "x")
    grid[0] = None
    assert mesh.devices[0] is tl.devices()[0]
    with pytest.raises(ValueError, match="read-only"):
        mesh.devices[0] = None


@pytest.mark.parametrize(
    ("devices", "names", "error", "match"),
    [
        (np.array(tl.devices()), ("a", "b"), ValueError, "need 1 axis names"),
        (np.array(tl.devices()), (1,), TypeError, "must be strings"),
        (np.array(["cpu"]), ("a",), TypeError, "not a device"),
        (np.array(tl.devices() * 2), ("a",), ValueError, "appears twice"),
        (np.array(tl.devices()).reshape(1, 1), ("a", "a"), ValueError, "repeat"),
    ],
)
def test_mesh_rejects_bad_input(
    devices: Any, names: Any, error: Any, match: str
) -> None:
    with pytest.raises(error, match=match):
        Mesh(devices, names)


def test_mesh_as_a_context_and_set_mesh() -> None:
    from typelattice import _sharding

    mesh = mesh3()
    assert _sharding.get_mesh() is None
    with mesh as m:
        assert m is mesh and _sharding.get_mesh() is mesh
        with tl.set_mesh(Mesh(np.array(tl.devices()), "x")) as inner:
            assert _sharding.get_mesh() is inner
        assert _sharding.get_mesh() is mesh
    assert _sharding.get_mesh() is None
    with pytest.raises(TypeError, match="expected a Mesh"), tl.set_mesh("x"):  # type: ignore[arg-type]
        pass


def test_partition_spec_is_a_tuple() -> None:
    spec = PartitionSpec("data", None, ("fsdp", "tensor"))
    assert spec == ("data", None, ("fsdp", "tensor"))
    assert isinstance(spec, tuple) and len(spec) == 3
    assert repr(spec) == "PartitionSpec('data', None, ('fsdp', 'tensor'))"
    assert nn.meta.PartitionSpec is PartitionSpec is tl.P
    assert pickle.loads(pickle.dumps(spec)) == spec
    with pytest.raises(TypeError, match="mesh axis name"):
        PartitionSpec(1)


def test_named_sharding() -> None:
    mesh = mesh3()
    s = NamedSharding(mesh, PartitionSpec("data", ("fsdp", "tensor")))
    assert isinstance(s, Sharding)
    assert s.device_set == {tl.devices()[0]} == s.addressable_devices
    assert s.is_fully_replicated and s.is_fully_addressable
    assert s.num_devices == 1 and s.memory_kind is None
    assert s.shard_shape((4, 6)) == (4, 6)
    assert s == NamedSharding(mesh3(), PartitionSpec("data", ("fsdp", "tensor")))
    assert s != NamedSharding(mesh, PartitionSpec("data"))
    with pytest.raises(ValueError, match="'model', which the mesh"):
        NamedSharding(mesh, PartitionSpec("model"))
    with pytest.raises(ValueError, match="more than once"):
        NamedSharding(mesh, PartitionSpec("data", "data"))
    with pytest.raises(TypeError, match="PartitionSpec"):
        NamedSharding(mesh, ("data",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="more than the 1 axes"):
        s.shard_shape((4,))


def test_single_device_sharding() -> None:
    s = SingleDeviceSharding(tl.devices()[0])
    assert s.device_set == {tl.devices()[0]} and s.is_fully_replicated
    assert s == SingleDeviceSharding(tl.devices()[0])
    with pytest.raises(TypeError, match="not a device"):
        SingleDeviceSharding("cpu")  # type: ignore[arg-type]


def test_jit_accepts_shardings_and_computes_the_same() -> None:
    mesh = mesh3()
    data = NamedSharding(mesh, PartitionSpec("data"))
    rep = NamedSharding(mesh, PartitionSpec())

    def step(params: dict[str, Any], batch: Any, scale: float) -> Any:
        return {"w": params["w"] * scale + batch.sum()}, batch.mean()

    f = tl.jit(
        step,
        in_shardings=({"w": rep}, data),
        out_shardings=(rep, None),
        static_argnums=2,
        donate_argnums=0,
    )
    params = {"w": tnp.arange(3.0)}
    batch = tnp.ones((4, 2))
    got = f(params, batch, 2.0)
    want = step(params, batch, 2.0)
    np.testing.assert_array_equal(got[0]["w"], want[0]["w"])
    np.testing.assert_array_equal(got[1], want[1])
    # One sharding for every argument; None for no constraint.
    g = tl.jit(lambda a, b: a + b, in_shardings=rep, out_shardings=None)
    np.testing.assert_array_equal(g(tnp.ones(2), tnp.ones(2)), tnp.full(2, 2.0))


def test_jit_checks_shardings_against_arguments_and_results() -> None:
    mesh = mesh3()
    data = NamedSharding(mesh, PartitionSpec("data"))
    with pytest.raises(ValueError, match="2 entries for 1 positional"):
        tl.jit(lambda x: x, in_shardings=(data, data))(tnp.ones(2))
    with pytest.raises(ValueError, match="pytree prefix"):
        tl.jit(lambda x: x, in_shardings=({"a": data},))({"b": tnp.ones(2)})
    with pytest.raises(ValueError, match=r"out_shardings.*more than the 0 axes"):
        tl.jit(lambda x: x.sum(), out_shardings=data)(tnp.ones(2))
    with pytest.raises(TypeError, match="expected a Sharding"):
        tl.jit(lambda x: x, in_shardings=("data",))(tnp.ones(2))
    with pytest.raises(ValueError, match="needs a mesh"):
        tl.jit(lambda x: x, in_shardings=PartitionSpec("data"))(tnp.ones(2))
    with mesh:  # a bare spec takes the mesh in effect
        out = tl.jit(lambda x: x * 2, in_shardings=PartitionSpec("data"))(tnp.ones(2))
    np.testing.assert_array_equal(out, tnp.full(2, 2.0))


def test_with_sharding_constraint_returns_its_input_on_every_path() -> None:
    mesh = mesh3()
    s = NamedSharding(mesh, PartitionSpec("data", None))

    def f(x: Any) -> Any:
        return lax.with_sharding_constraint(x * 3, s).sum()

    x = tnp.arange(6.0).reshape(2, 3)
    eager = f(x)
    assert float(eager) == 45.0
    assert float(tl.jit(f)(x)) == float(eager)
    np.testing.assert_array_equal(tl.grad(f)(x), tnp.full((2, 3), 3.0))
    np.testing.assert_array_equal(tl.vmap(f)(tnp.stack([x, x])), tnp.stack([eager] * 2))
    y = tnp.ones(3)
    assert lax.with_sharding_constraint(y, s.__class__(mesh, PartitionSpec())) is y
    with pytest.raises(ValueError, match="more than the 1 axes"):
        lax.with_sharding_constraint(y, s)


def test_device_put_with_a_sharding() -> None:
    s = NamedSharding(mesh3(), PartitionSpec("data"))
    source = np.arange(4, dtype=np.int32)
    out = tl.device_put(source, s)
    assert isinstance(out, tl.Array) and out.tolist() == [0, 1, 2, 3]
    source[0] = 9
    assert out.tolist() == [0, 1, 2, 3]  # a copy, not the caller's array
    single = tl.device_put({"a": 1.0}, SingleDeviceSharding(tl.devices()[0]))
    assert single["a"].dtype == np.float32
    with pytest.raises(ValueError, match="more than the 0 axes"):
        tl.device_put(np.float32(1), s)


def test_logical_to_mesh_sharding() -> None:
    mesh = mesh3()
    rules = [("embed", "fsdp"), ("mlp", "tensor"), ("batch", "data")]
    specs = {
        "kernel": PartitionSpec("embed", "mlp"),
        "bias": PartitionSpec("mlp"),
        "step": PartitionSpec(),
    }
    out = nn.logical_to_mesh_sharding(specs, mesh, rules)
    assert out["kernel"] == NamedSharding(mesh, PartitionSpec("fsdp", "tensor"))
    assert out["bias"].spec == ("tensor",)
    assert out["step"].spec == ()
    with nn.logical_axis_rules(rules):  # the rules in effect by default
        assert nn.logical_to_mesh_sharding(specs, mesh) == out
    with pytest.raises(ValueError, match="which the mesh"):
        nn.logical_to_mesh_sharding(specs, mesh, [("embed", "model")])
    with pytest.raises(TypeError, match="expected a Mesh"):
        nn.logical_to_mesh_sharding(specs, "mesh", rules)  # type: ignore[arg-type]


def test_boxed_dense_general_kernel_keeps_its_names() -> None:
    layer = nn.DenseGeneral(
        features=(2, 3),
        kernel_init=nn.with_logical_partitioning(
            nn.initializers.lecun_normal(), ("embed", "kv")
        ),
    )
    variables = layer.init(tl.random.PRNGKey(0), tnp.ones((1, 4)))
    kernel = variables["params"]["kernel"]
    assert isinstance(kernel, nn.LogicallyPartitioned)
    assert kernel.names == ("embed", "kv") and kernel.value.shape == (4, 2, 3)
    plain = nn.DenseGeneral(features=(2, 3)).init(
        tl.random.PRNGKey(0), tnp.ones((1, 4))
    )
    np.testing.assert_array_equal(kernel.value, plain["params"]["kernel"])
    y = layer.apply(variables, tnp.ones((1, 4)))
    assert y.shape == (1, 2, 3)
