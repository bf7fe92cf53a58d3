"""Recurrent layers beyond the recorded Flax answers (test_rnn_golden.py):
sequence lengths against truncated sequences, parameter sharing, jit and
grad through a sequence, mixed precision, errors; and the Module's sow and
perturb, with attention's sown weights."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import nn, random
from typelattice._tracing import tree

KEY = random.key(0)


def _sequence(shape: tuple[int, ...]) -> tnp.Array:
    n = int(np.prod(shape))
    return tnp.asarray(np.sin(np.arange(n) * 0.7).reshape(shape).astype("float32"))


def _close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cell", [nn.LSTMCell(3), nn.GRUCell(3), nn.MGUCell(3)])
def test_the_carry_at_a_sequence_length_is_that_of_the_shorter_sequence(
    cell: nn.RNNCellBase,
) -> None:
    layer = nn.RNN(cell, return_carry=True)
    x = _sequence((2, 6, 2))
    variables = layer.init(KEY, x)
    carry, _ = layer.apply(variables, x, seq_lengths=tnp.array([6, 4]))
    short_carry, _ = layer.apply(variables, x[1:, :4])
    for ours, short in zip(tree.leaves(carry), tree.leaves(short_carry), strict=True):
        _close(ours[1:], short)


def test_reverse_runs_each_sequence_backwards_within_its_length() -> None:
    layer = nn.RNN(nn.GRUCell(3), reverse=True, keep_order=True)
    x = _sequence((1, 5, 2))
    variables = layer.init(KEY, x)
    out = layer.apply(variables, x, seq_lengths=tnp.array([3]))
    # The first three steps are those of the three-step sequence, reversed.
    alone = nn.RNN(nn.GRUCell(3)).apply(variables, x[:, :3][:, ::-1])
    _close(out[:, :3], alone[:, ::-1])


def test_one_rnn_given_twice_to_bidirectional_shares_its_parameters() -> None:
    rnn = nn.RNN(nn.GRUCell(2))
    layer = nn.Bidirectional(rnn, rnn)
    variables = layer.init(KEY, _sequence((1, 3, 2)))
    assert list(variables["params"]) == ["forward_rnn"]


def test_an_rnn_runs_under_jit_and_grad_as_eagerly() -> None:
    layer = nn.RNN(nn.OptimizedLSTMCell(3))
    x = _sequence((2, 4, 2))
    params = layer.init(KEY, x)["params"]

    def loss(params: Any) -> Any:
        return (layer.apply({"params": params}, x) ** 2).sum()

    _close(tl.jit(loss)(params), loss(params))
    grads = tl.grad(loss)(params)
    jit_grads = tl.jit(tl.grad(loss))(params)
    for g, j in zip(tree.leaves(grads), tree.leaves(jit_grads), strict=True):
        _close(g, j)
    assert float(tnp.abs(grads["cell"]["hi"]["kernel"]).sum()) > 0


def test_bfloat16_compute_keeps_a_float32_lstm_carry() -> None:
    layer = nn.RNN(nn.LSTMCell(4, dtype="bfloat16"), return_carry=True)
    x = _sequence((2, 3, 5)).astype("bfloat16")
    variables = layer.init(KEY, x)
    (c, h), y = layer.apply(variables, x)
    assert variables["params"]["cell"]["ii"]["kernel"].dtype == tnp.float32
    # c' = f*c + i*g with c float32: the carry stays float32, as in Flax.
    assert (c.dtype, h.dtype, y.dtype) == (tnp.float32,) * 3


def test_rnn_errors_name_the_fix() -> None:
    with pytest.raises(ValueError, match="no time axis"):
        nn.RNN(nn.GRUCell(2)).init(KEY, tnp.ones(3))


def test_rnn_with_parameters_per_time_step() -> None:
    layer = nn.RNN(
        nn.GRUCell(2), variable_axes={"params": 0}, split_rngs={"params": True}
    )
    x = _sequence((1, 3, 4))
    variables = layer.init(KEY, x)
    kernels = variables["params"]["cell"]["ir"]["kernel"]
    assert kernels.shape == (3, 4, 2)
    assert not np.array_equal(np.asarray(kernels[0]), np.asarray(kernels[1]))
    y = layer.apply(variables, x)
    cell = nn.GRUCell(2)
    carry = cell.initialize_carry(KEY, (1, 4))
    for t in range(3):
        step = tree.tree_map(lambda v, t=t: v[t], variables["params"]["cell"])
        carry, y_t = cell.apply({"params": step}, carry, x[:, t])
        _close(y[:, t], y_t)


def test_flip_sequences_reverses_within_each_length_time_major() -> None:
    x = tnp.arange(8).reshape(4, 2)  # (time, batch)
    flipped = nn.recurrent.flip_sequences(x, tnp.array([2, 4]), 1, True)
    assert flipped.tolist() == [[2, 7], [0, 5], [6, 3], [4, 1]]


class Probe(nn.Module):
    @nn.compact
    def __call__(self, x: Any) -> Any:
        stored = self.sow("intermediates", "h", x * 2)
        self.sow("intermediates", "h", x * 3)
        self.sow(
            "stats", "total", x.sum(), reduce_fn=lambda a, b: a + b, init_fn=lambda: 0
        )
        self.sow("stats", "total", x.sum(), reduce_fn=lambda a, b: a + b)
        return x + stored


def test_sow_appends_to_a_tuple_only_when_the_collection_is_mutable() -> None:
    x = tnp.ones(2)
    assert Probe().init(KEY, x) == {"stats": {"total": tnp.asarray(4.0)}}
    assert Probe().apply({}, x).tolist() == [1.0, 1.0]  # sow returned False
    y, state = Probe().apply({}, x, mutable=["intermediates", "stats"])
    assert y.tolist() == [2.0, 2.0]  # sow returned True
    first, second = state["intermediates"]["h"]
    assert first.tolist() == [2.0, 2.0] and second.tolist() == [3.0, 3.0]
    assert float(state["stats"]["total"]) == 4.0


def test_perturb_gives_the_gradient_of_an_intermediate_value() -> None:
    class Model(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            h = self.perturb("h", nn.Dense(3)(x))
            return tnp.tanh(h).sum()

    x = _sequence((2, 4))
    variables = Model().init(KEY, x)
    assert variables["perturbations"]["h"].tolist() == [[0.0] * 3] * 2

    def loss(perturbations: Any) -> Any:
        return Model().apply(
            {"params": variables["params"], "perturbations": perturbations}, x
        )

    grad = tl.grad(loss)(variables["perturbations"])["h"]
    h = nn.Dense(3).apply({"params": variables["params"]["Dense_0"]}, x)
    _close(grad, 1 - tnp.tanh(h) ** 2)
    # Without the collection, the value passes unchanged.
    _close(
        Model().apply({"params": variables["params"]}, x),
        loss(variables["perturbations"]),
    )
    with pytest.raises(ValueError, match="perturbation 'perturbations/h' is missing"):
        Model().apply({"params": variables["params"], "perturbations": {}}, x)


def test_attention_sows_its_weights_when_asked() -> None:
    layer = nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=4)
    x = _sequence((2, 3, 4))
    variables = layer.init(KEY, x)
    assert "intermediates" not in variables
    out, state = layer.apply(variables, x, sow_weights=True, mutable=["intermediates"])
    (weights,) = state["intermediates"]["attention_weights"]
    assert weights.shape == (2, 2, 3, 3)
    _close(weights.sum(-1), tnp.ones((2, 2, 3)))
    _close(out, layer.apply(variables, x))
    _, quiet = layer.apply(variables, x, mutable=["intermediates"])
    assert quiet.get("intermediates", {}) == {}


def test_a_cell_made_in_a_compact_method_is_named_as_in_flax() -> None:
    # The cell is the enclosing module's child (GRUCell_0), as in Flax;
    # the RNN holds no parameters of its own.
    class Model(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            return nn.RNN(nn.GRUCell(3))(x)

    variables = Model().init(KEY, tnp.ones((1, 2, 2)))
    assert list(variables["params"]) == ["GRUCell_0"]
