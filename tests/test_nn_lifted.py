"""Lifted transformations of modules: nn.scan, nn.vmap, nn.checkpoint.

Each lifted call is compared with the same computation written by hand
(a Python loop, a loop over ensemble members, the plain module), values,
dtypes and gradients, eagerly and under jit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import nn, random


class Step(nn.Module):
    features: int = 4

    @nn.compact
    def __call__(self, h: Any, x: Any) -> Any:
        h = nn.tanh(nn.Dense(self.features)(h) + x)
        return h, 2 * h


def by_hand(params: Any, h: Any, xs: Any, reverse: bool = False) -> tuple[Any, Any]:
    ys = []
    order = range(xs.shape[0] - 1, -1, -1) if reverse else range(xs.shape[0])
    for t in order:
        h = tnp.tanh(h @ params["kernel"] + params["bias"] + xs[t])
        ys.append(2 * h)
    if reverse:
        ys.reverse()
    return h, tnp.stack(ys)


def close(a: Any, b: Any) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


XS = random.normal(random.key(1), (6, 4))
H0 = tnp.zeros(4)
Scanned = nn.scan(Step, variable_broadcast="params", split_rngs={"params": False})


def test_scan_shares_parameters_over_steps() -> None:
    variables = Scanned().init(random.key(0), H0, XS)
    params = variables["params"]["Dense_0"]
    assert params["kernel"].shape == (4, 4)
    h, ys = Scanned().apply(variables, H0, XS)
    want_h, want_ys = by_hand(params, H0, XS)
    close(h, want_h)
    close(ys, want_ys)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_reverse_and_axes(reverse: bool) -> None:
    variables = Scanned().init(random.key(0), H0, XS)
    params = variables["params"]["Dense_0"]
    lifted = nn.scan(
        Step,
        variable_broadcast="params",
        split_rngs={"params": False},
        in_axes=1,
        out_axes=1,
        reverse=reverse,
    )
    batch = tnp.stack([XS, 2 * XS])  # (2, 6, 4): time on axis 1
    h, ys = lifted().apply(variables, tnp.zeros((2, 4)), batch)
    assert ys.shape == (2, 6, 4)
    for b in range(2):
        want_h, want_ys = by_hand(params, H0, batch[b], reverse)
        close(h[b], want_h)
        close(ys[b], want_ys)


def test_scan_inside_a_parent_is_named_after_the_transformation() -> None:
    class Model(nn.Module):
        @nn.compact
        def __call__(self, xs: Any) -> Any:
            cell = nn.scan(
                Step, variable_broadcast="params", split_rngs={"params": False}
            )
            _, ys = cell()(H0, xs)
            return nn.Dense(2)(ys)

    variables = Model().init(random.key(0), XS)
    assert sorted(variables["params"]) == ["Dense_0", "ScanStep_0"]
    assert Model().apply(variables, XS).shape == (6, 2)


def test_scan_per_step_parameters() -> None:
    lifted = nn.scan(Step, variable_axes={"params": 0}, split_rngs={"params": True})
    variables = lifted().init(random.key(0), H0, XS)
    kernels = variables["params"]["Dense_0"]["kernel"]
    assert kernels.shape == (6, 4, 4)
    assert not np.array_equal(np.asarray(kernels[0]), np.asarray(kernels[1]))
    h, ys = lifted().apply(variables, H0, XS)
    hh = H0
    for t in range(6):
        p = {k: v[t] for k, v in variables["params"]["Dense_0"].items()}
        hh = tnp.tanh(hh @ p["kernel"] + p["bias"] + XS[t])
        close(ys[t], 2 * hh)
    close(h, hh)


def test_scan_broadcast_argument_and_length() -> None:
    class Add(nn.Module):
        @nn.compact
        def __call__(self, c: Any, x: Any) -> Any:
            return c + x, c

    lifted = nn.scan(Add, in_axes=nn.broadcast, length=3)
    c, ys = lifted().apply({}, tnp.float32(0), tnp.float32(2))
    assert float(c) == 6.0
    assert ys.tolist() == [0.0, 2.0, 4.0]
    with pytest.raises(ValueError, match="length"):
        nn.scan(Add, in_axes=nn.broadcast)().apply({}, tnp.float32(0), tnp.float32(2))


def test_scan_lengths_must_agree() -> None:
    class Pair(nn.Module):
        def __call__(self, c: Any, x: Any, y: Any) -> Any:
            return c, x + y

    with pytest.raises(ValueError, match="different lengths"):
        nn.scan(Pair)().apply({}, 0.0, tnp.ones(3), tnp.ones(4))


def test_scan_carried_collection() -> None:
    class Count(nn.Module):
        @nn.compact
        def __call__(self, c: Any, x: Any) -> Any:
            n = self.variable("counter", "n", tnp.zeros, (), "int32")
            n.value = n.value + 1
            return c + x, x

    lifted = nn.scan(Count, variable_carry="counter")
    given = {"counter": {"n": tnp.asarray(0, "int32")}}
    (c, _), updated = lifted().apply(
        given, tnp.float32(0), tnp.ones(5), mutable=["counter"]
    )
    assert int(updated["counter"]["n"]) == 5
    assert float(c) == 5.0


def test_scan_gradient_and_jit_agree_with_the_loop() -> None:
    variables = Scanned().init(random.key(0), H0, XS)

    def loss(v: Any) -> Any:
        return Scanned().apply(v, H0, XS)[1].sum()

    def loss_by_hand(v: Any) -> Any:
        return by_hand(v["params"]["Dense_0"], H0, XS)[1].sum()

    got = tl.grad(loss)(variables)["params"]["Dense_0"]
    want = tl.grad(loss_by_hand)(variables)["params"]["Dense_0"]
    close(got["kernel"], want["kernel"])
    close(got["bias"], want["bias"])
    close(tl.jit(loss)(variables), loss(variables))


def test_scan_of_a_function_of_a_submodule() -> None:
    class Wrapper(nn.Module):
        def setup(self) -> None:
            self.cell = Step()

        def __call__(self, xs: Any) -> Any:
            def run(cell: Step, c: Any, x: Any) -> Any:
                return cell(c, x)

            scanned = nn.scan(
                run, variable_broadcast="params", split_rngs={"params": False}
            )
            return scanned(self.cell, H0, xs)

    variables = Wrapper().init(random.key(0), XS)
    assert list(variables["params"]) == ["cell"]
    h, ys = Wrapper().apply(variables, XS)
    want_h, want_ys = by_hand(variables["params"]["cell"]["Dense_0"], H0, XS)
    close(h, want_h)
    close(ys, want_ys)


def test_vmap_ensemble_has_a_member_per_element() -> None:
    ensemble = nn.vmap(
        nn.Dense,
        variable_axes={"params": 0},
        split_rngs={"params": True},
        in_axes=None,
        axis_size=3,
    )(2)
    x = random.normal(random.key(2), (5, 4))
    variables = ensemble.init(random.key(0), x)
    kernels = variables["params"]["kernel"]
    assert kernels.shape == (3, 4, 2)
    assert not np.array_equal(np.asarray(kernels[0]), np.asarray(kernels[1]))
    y = ensemble.apply(variables, x)
    assert y.shape == (3, 5, 2)
    for m in range(3):
        member = {"params": {k: v[m] for k, v in variables["params"].items()}}
        close(y[m], nn.Dense(2).apply(member, x))


def test_vmap_with_shared_parameters_maps_the_input() -> None:
    shared = nn.vmap(
        nn.Dense, variable_axes={"params": None}, split_rngs={"params": False}
    )(3)
    x = random.normal(random.key(3), (4, 2, 5))
    variables = shared.init(random.key(0), x)
    assert variables["params"]["kernel"].shape == (5, 3)
    y = shared.apply(variables, x)
    close(y, nn.Dense(3).apply(variables, x))
    grad = tl.grad(lambda v: shared.apply(v, x).sum())(variables)
    want = tl.grad(lambda v: nn.Dense(3).apply(v, x).sum())(variables)
    close(grad["params"]["kernel"], want["params"]["kernel"])


def test_vmap_of_a_module_that_scans_gives_each_sequences_result() -> None:
    class Encoder(nn.Module):
        @nn.compact
        def __call__(self, h: Any, xs: Any) -> Any:
            return Scanned(name="cell")(h, xs)

    batched = nn.vmap(
        Encoder, variable_axes={"params": None}, split_rngs={"params": False}
    )()
    h0 = random.normal(random.key(4), (3, 4))
    xs = random.normal(random.key(5), (3, 6, 4))
    variables = batched.init(random.key(0), h0, xs)
    params = variables["params"]["cell"]["Dense_0"]
    assert params["kernel"].shape == (4, 4)
    for run in (batched.apply, tl.jit(batched.apply)):
        h, ys = run(variables, h0, xs)
        assert h.shape == (3, 4) and ys.shape == (3, 6, 4)
        for b in range(3):
            want_h, want_ys = by_hand(params, h0[b], xs[b])
            close(h[b], want_h)
            close(ys[b], want_ys)


@pytest.mark.parametrize("lift", [nn.remat, nn.checkpoint])
def test_checkpointed_module_gives_the_same_values_and_gradients(lift: Any) -> None:
    class Model(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            x = lift(nn.Dense)(8)(x)
            return nn.Dense(1)(nn.tanh(x))

    class Plain(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            x = nn.Dense(8, name="CheckpointDense_0")(x)
            return nn.Dense(1)(nn.tanh(x))

    x = random.normal(random.key(4), (3, 5))
    variables = Model().init(random.key(0), x)
    assert sorted(variables["params"]) == ["CheckpointDense_0", "Dense_0"]
    close(Model().apply(variables, x), Plain().apply(variables, x))
    got = tl.grad(lambda v: Model().apply(v, x).sum())(variables)
    want = tl.grad(lambda v: Plain().apply(v, x).sum())(variables)
    for name in ("CheckpointDense_0", "Dense_0"):
        for leaf in ("kernel", "bias"):
            close(got["params"][name][leaf], want["params"][name][leaf])


def test_lifting_something_else_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="neither a Module class nor a function"):
        nn.scan(3)


def test_values_sown_in_each_step_are_stacked() -> None:
    class Sowing(nn.Module):
        @nn.compact
        def __call__(self, h: Any, x: Any) -> Any:
            h = nn.tanh(nn.Dense(4)(h) + x)
            self.sow("intermediates", "h", h)
            return h, h

    lifted = nn.scan(
        Sowing,
        variable_broadcast="params",
        variable_axes={"intermediates": 0},
        split_rngs={"params": False},
    )
    variables = lifted().init(random.key(0), H0, XS)
    assert list(variables) == ["params"]  # (init keeps no intermediates)
    (_, ys), state = lifted().apply(variables, H0, XS, mutable=["intermediates"])
    (sown,) = state["intermediates"]["h"]
    close(sown, ys)
