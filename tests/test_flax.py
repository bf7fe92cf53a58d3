"""typelattice.flax: struct dataclasses, FrozenDict, TrainState, checkpoints,
common_utils and the linen alias, on every path (eager, jit, grad, vmap)."""

from __future__ import annotations

import dataclasses
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import nn, optim, random
from typelattice.flax import core, struct
from typelattice.flax.training import checkpoints, common_utils, train_state


@struct.dataclass
class Model:
    w: Any
    b: Any
    scale: float = struct.field(pytree_node=False, default=2.0)

    def __call__(self, x: Any) -> Any:
        return (x * self.w + self.b) * self.scale


class Node(struct.PyTreeNode):
    value: Any
    label: str = struct.field(pytree_node=False, default="n")


def test_struct_fields_are_children_except_the_static_ones() -> None:
    m = Model(tnp.asarray([1.0, 2.0]), tnp.asarray(0.5), scale=3.0)
    leaves, treedef = tl.tree_util.tree_flatten(m)
    assert [leaf.tolist() for leaf in leaves] == [[1.0, 2.0], 0.5]
    assert tl.tree_util.tree_unflatten(treedef, leaves) == m
    other = tl.tree_util.tree_structure(Model(1.0, 2.0, scale=4.0))
    assert other != treedef  # the static field is part of the structure


def test_struct_is_frozen_and_replace_copies() -> None:
    m = Model(1.0, 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.w = 5.0  # type: ignore[misc]
    assert m.replace(w=5.0) == Model(5.0, 2.0) and m.w == 1.0
    node = Node(3)
    assert node.replace(label="x") == Node(3, "x")
    assert struct.dataclass(Model) is Model  # decorating again: unchanged


def test_struct_kw_only_as_in_dataclasses() -> None:
    @struct.dataclass(kw_only=True)
    class Opts:
        a: Any
        b: Any = 1

    assert Opts(a=2).b == 1
    with pytest.raises(TypeError):
        Opts(2)  # type: ignore[misc]

    class Later(struct.PyTreeNode, kw_only=True):
        x: Any

    assert tl.tree_util.tree_leaves(Later(x=4)) == [4]


def test_struct_through_jit_grad_and_vmap_agrees_with_eager() -> None:
    m = Model(tnp.asarray([1.0, -2.0]), tnp.asarray(0.5))
    x = tnp.asarray([3.0, 4.0])

    def loss(m: Model, x: Any) -> Any:
        return (m(x) ** 2).sum()

    eager = loss(m, x)
    assert tl.jit(loss)(m, x).tolist() == eager.tolist()
    g = tl.grad(loss)(m, x)
    gj = tl.jit(tl.grad(loss))(m, x)
    assert isinstance(g, Model) and g.scale == 2.0
    # d/dw sum((x w + b) s)^2 = 2 s^2 x (x w + b)
    expected_w = 2 * 4 * np.array([3.0, 4.0]) * (np.array([3.0, -8.0]) + 0.5)
    np.testing.assert_allclose(np.asarray(g.w), expected_w)
    np.testing.assert_array_equal(np.asarray(gj.w), np.asarray(g.w))
    np.testing.assert_array_equal(np.asarray(gj.b), np.asarray(g.b))

    # As a vmapped argument and result: a batch of models.
    batch = Model(tnp.asarray([[1.0, 2.0], [3.0, 4.0]]), tnp.asarray([0.0, 1.0]))
    out = tl.vmap(lambda m: m.replace(w=m(x)))(batch)
    assert isinstance(out, Model) and out.scale == 2.0
    for i in range(2):
        one = Model(batch.w[i], batch.b[i])
        np.testing.assert_array_equal(np.asarray(out.w[i]), np.asarray(one(x)))
    jitted = tl.jit(lambda m: m.replace(b=m.b + 1))(m)
    assert isinstance(jitted, Model) and jitted.b.tolist() == 1.5


# -- FrozenDict ----------------------------------------------------------------


def test_frozen_dict_is_immutable_and_deep() -> None:
    inner = {"w": 1}
    d = core.freeze({"params": inner, "a": 2})
    inner["w"] = 99  # the FrozenDict made its own copy
    assert d["params"]["w"] == 1 and isinstance(d["params"], core.FrozenDict)
    with pytest.raises(TypeError, match="immutable"):
        d["a"] = 3  # type: ignore[index]
    assert core.unfreeze(d) == {"params": {"w": 1}, "a": 2}
    assert hash(d) == hash(core.freeze({"a": 2, "params": {"w": 1}}))
    assert pickle.loads(pickle.dumps(d)) == d


def test_frozen_dict_copy_pop_and_their_functions() -> None:
    d = core.freeze({"a": 1, "b": {"c": 2}})
    assert dict(d.copy({"z": 0})) == {"a": 1, "b": d["b"], "z": 0}
    rest, b = d.pop("b")
    assert dict(rest) == {"a": 1} and b == core.freeze({"c": 2})
    assert len(d) == 2  # unchanged
    plain = {"a": {"x": 1}}
    new = core.copy(plain, {"b": 2})
    assert new == {"a": {"x": 1}, "b": 2} and plain == {"a": {"x": 1}}
    new["a"]["x"] = 5
    assert plain["a"]["x"] == 1  # a deep copy
    popped, value = core.pop(plain, "a")
    assert popped == {} and value == {"x": 1} and "a" in plain
    assert core.pretty_repr({"a": {"b": 1}}) == "{\n    a: {\n        b: 1,\n    },\n}"
    assert repr(core.freeze({})) == "FrozenDict({})"
    with pytest.raises(TypeError, match="FrozenDict or a dict"):
        core.copy([1], {})  # type: ignore[arg-type]


def test_frozen_dict_flattens_in_sorted_key_order_through_jit() -> None:
    d = core.FrozenDict({"b": tnp.asarray(2.0), "a": tnp.asarray(1.0)})
    assert [x.tolist() for x in tl.tree_util.tree_leaves(d)] == [1.0, 2.0]
    paths = [
        tl.tree_util.keystr(p) for p, _ in tl.tree_util.tree_flatten_with_path(d)[0]
    ]
    assert paths == ["['a']", "['b']"]
    out = tl.jit(lambda d: d.copy({"c": d["a"] + d["b"]}))(d)
    assert isinstance(out, core.FrozenDict) and out["c"].tolist() == 3.0
    g = tl.grad(lambda d: d["a"] * d["b"])(d)
    assert isinstance(g, core.FrozenDict) and (g["a"].tolist(), g["b"].tolist()) == (
        2.0,
        1.0,
    )


# -- TrainState ----------------------------------------------------------------


def _setup() -> tuple[train_state.TrainState, Any, Any]:
    model = nn.Dense(3)
    x = tnp.asarray(np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2))
    y = tnp.asarray(np.linspace(0, 1, 12, dtype=np.float32).reshape(4, 3))
    params = model.init(random.key(0), x)["params"]
    state = train_state.TrainState.create(
        apply_fn=model.apply, params=params, tx=optim.adam(0.05)
    )
    return state, x, y


def _step(state: train_state.TrainState, x: Any, y: Any) -> train_state.TrainState:
    def loss(params: Any) -> Any:
        return ((state.apply_fn({"params": params}, x) - y) ** 2).mean()

    return state.apply_gradients(grads=tl.grad(loss)(state.params))


def test_train_state_steps_eager_and_jit_agree() -> None:
    state, x, y = _setup()
    assert state.step == 0 and isinstance(state.opt_state, optim.AdamState)
    eager = _step(_step(state, x, y), x, y)
    jitted_step = tl.jit(_step)
    jitted = jitted_step(jitted_step(state, x, y), x, y)
    assert int(eager.step) == int(jitted.step) == 2
    for a, b in zip(
        tl.tree_util.tree_leaves(eager), tl.tree_util.tree_leaves(jitted), strict=True
    ):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)
    # The optimiser moved the parameters as adam does by hand, one step.
    one = _step(state, x, y)
    grads = tl.grad(lambda p: ((state.apply_fn({"params": p}, x) - y) ** 2).mean())(
        state.params
    )
    tx = optim.adam(0.05)
    updates, _ = tx.update(grads, tx.init(state.params), state.params)
    expected = optim.apply_updates(state.params, updates)
    np.testing.assert_array_equal(
        np.asarray(one.params["kernel"]), np.asarray(expected["kernel"])
    )


def test_train_state_subclass_carries_more_fields() -> None:
    class WithStats(train_state.TrainState):
        batch_stats: Any = None

    state, x, y = _setup()
    s = WithStats.create(
        apply_fn=state.apply_fn,
        params=state.params,
        tx=optim.sgd(0.1),
        batch_stats={"mean": tnp.zeros(3)},
    )
    new = s.apply_gradients(
        grads=tl.tree_util.tree_map(tnp.ones_like, s.params),
        batch_stats={"mean": tnp.ones(3)},
    )
    assert isinstance(new, WithStats) and new.batch_stats["mean"].tolist() == [1.0] * 3
    np.testing.assert_allclose(
        np.asarray(new.params["bias"]), np.asarray(s.params["bias"]) - 0.1
    )


# -- checkpoints -----------------------------------------------------------------


def test_checkpoints_save_restore_keep_and_overwrite(tmp_path: Path) -> None:
    pytest.importorskip("msgpack")
    state, x, y = _setup()
    assert checkpoints.restore_checkpoint(tmp_path / "none", state) is state
    for step in (1, 2, 10):
        path = checkpoints.save_checkpoint(tmp_path, state, step=step, keep=2)
        state = _step(state, x, y)
    assert path == os.path.join(tmp_path, "checkpoint_10")
    assert sorted(os.listdir(tmp_path)) == ["checkpoint_10", "checkpoint_2"]
    assert checkpoints.latest_checkpoint(tmp_path) == path
    assert checkpoints.available_steps(tmp_path) == [2, 10]
    target, _, _ = _setup()
    restored = checkpoints.restore_checkpoint(tmp_path, target)
    assert isinstance(restored, train_state.TrainState)
    assert restored.apply_fn is target.apply_fn
    assert int(restored.step) == 2  # saved after two steps (the third save)
    by_step = checkpoints.restore_checkpoint(tmp_path, target, step=2)
    assert int(by_step.step) == 1
    raw = checkpoints.restore_checkpoint(path, None)
    assert sorted(raw) == ["opt_state", "params", "step"]

    with pytest.raises(checkpoints.InvalidCheckpointError, match="overwrite=True"):
        checkpoints.save_checkpoint(tmp_path, state, step=3)
    checkpoints.save_checkpoint(tmp_path, state, step=3, overwrite=True, keep=5)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint_2", "checkpoint_3"]
    with pytest.raises(ValueError, match=r"no checkpoint of step 7.*\[2.0, 3.0\]"):
        checkpoints.restore_checkpoint(tmp_path, target, step=7)


def test_checkpoint_of_another_shape_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("msgpack")
    checkpoints.save_checkpoint(tmp_path, {"kernel": tnp.zeros((2, 3))}, step=0)
    with pytest.raises(ValueError, match=r"kernel: the target has shape \(2, 4\)"):
        checkpoints.restore_checkpoint(tmp_path, {"kernel": tnp.zeros((2, 4))})


def test_a_failed_save_leaves_no_file(tmp_path: Path) -> None:
    pytest.importorskip("msgpack")
    checkpoints.save_checkpoint(tmp_path, {"w": 1}, step=0)
    with pytest.raises(TypeError, match="cannot serialize"):
        checkpoints.save_checkpoint(tmp_path, {"w": object()}, step=1)
    assert os.listdir(tmp_path) == ["checkpoint_0"]


def test_checkpoints_keep_every_n_steps_and_restore_a_file(tmp_path: Path) -> None:
    pytest.importorskip("msgpack")
    for step in range(0, 60, 10):
        checkpoints.save_checkpoint(
            tmp_path, {"step": step}, step=step, keep=2, keep_every_n_steps=25
        )
    # The newest two, and the oldest of each 25 steps before them.
    assert checkpoints.available_steps(tmp_path) == [0, 30, 40, 50]
    path = tmp_path / "checkpoint_30"
    assert checkpoints.restore_checkpoint(path, {"step": 0}) == {"step": 30}
    assert checkpoints.restore_checkpoint(tmp_path, None, prefix="other_") is None


def test_natural_sort() -> None:
    names = ["c_10", "c_-1.5", "c_2", "c_1e3", "c_0.5"]
    assert checkpoints.natural_sort(names) == [
        "c_-1.5",
        "c_0.5",
        "c_2",
        "c_10",
        "c_1e3",
    ]


# -- common_utils ----------------------------------------------------------------


def test_onehot_is_float32_with_the_given_values() -> None:
    labels = tnp.asarray([[0, 2], [1, 5]])
    out = common_utils.onehot(labels, 3, on_value=2.5, off_value=-1.0)
    assert out.dtype == np.float32 and out.shape == (2, 2, 3)
    expected = np.where(
        np.asarray(labels)[..., None] == np.arange(3), 2.5, -1.0
    ).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(out), expected)
    jitted = tl.jit(lambda x: common_utils.onehot(x, 3))(labels)
    np.testing.assert_array_equal(
        np.asarray(jitted), np.asarray(common_utils.onehot(labels, 3))
    )


def test_shard_and_get_metrics_on_one_device() -> None:
    assert tl.local_device_count() == 1
    sharded = common_utils.shard({"x": tnp.arange(6.0).reshape(3, 2)})
    assert sharded["x"].shape == (1, 3, 2)
    metrics = common_utils.get_metrics(
        [{"loss": tnp.asarray([0.5])}, {"loss": tnp.asarray([0.25])}]
    )
    assert metrics["loss"].tolist() == [0.5, 0.25]
    with pytest.raises(ValueError, match=r"leading axis of one entry per device"):
        common_utils.get_metrics([{"loss": tnp.asarray([0.5, 1.0])}])
    assert common_utils.shard_prng_key(random.key(1)).shape[0] == 1


# -- the linen alias -------------------------------------------------------------


def test_linen_is_typelattice_nn_under_flax_names() -> None:
    import typelattice.flax.linen as linen
    from typelattice.flax.linen import initializers, recurrent

    assert set(linen.__all__) == set(nn.__all__)
    assert all(getattr(linen, n) is getattr(nn, n) for n in nn.__all__)
    assert initializers.lecun_normal is nn.initializers.lecun_normal
    assert recurrent.LSTMCell is nn.recurrent.LSTMCell
    assert linen.initializers is initializers


def test_dynamic_scale_backs_off_on_overflow_and_grows_after_finite_steps() -> None:
    from typelattice.flax.training.dynamic_scale import DynamicScale

    def loss(p: Any) -> Any:
        return (tnp.asarray(p, tnp.float16) ** 2).astype(tnp.float32)

    step = tl.jit(lambda ds, p: ds.value_and_grad(loss)(p))
    ds = DynamicScale(growth_interval=2)
    # 65536 * 300**2 overflows float16's gradient: the step is not finite.
    ds, finite, value, grad = step(ds, tnp.float32(300.0))
    assert not bool(finite) and float(ds.scale) == 32768.0
    assert int(ds.fin_steps) == 0 and grad.dtype == tnp.float32
    scales = []
    for _ in range(3):
        ds, finite, value, grad = step(ds, tnp.float32(0.5))
        assert bool(finite) and float(grad) == 1.0 and float(value) == 0.25
        scales.append(float(ds.scale))
    assert scales == [32768.0, 32768.0, 65536.0]  # grown at fin_steps == 2
    eager = DynamicScale(scale=1024.0).value_and_grad(loss)(tnp.float32(0.25))
    assert float(eager.grad) == 0.5 and bool(eager.finite)
