"""A small LSTM language model, trained in bfloat16 with float32 parameters.

The data are generated (nothing is downloaded): sequences of 32 tokens over
a vocabulary of 16, each repeating a random pattern of 3 to 6 tokens, with
one token in ten replaced by noise. The model (an embedding, an LSTM over
time, a dense read-out) learns to predict each next token: once it has
seen a pattern go by, the next token is the one a period back.

The layers compute in bfloat16 (``dtype='bfloat16'``) while the parameters,
their gradients and Adam's state stay float32 (``param_dtype``); the LSTM's
carry stays float32 too, as its update ``c' = f*c + i*g`` mixes the new
bfloat16 values into the float32 carry. The script prints the loss as it
goes down, and the dtypes.

Run it with the interpreter that has typelattice installed::

    python examples/sequence_model.py              # a few minutes
    python examples/sequence_model.py --steps 20   # several seconds
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import nn, optim, random
from typelattice._cli import run_main
from typelattice._tracing import tree

VOCAB = 16
LENGTH = 32


def sequences(n: int, rng: np.random.Generator) -> np.ndarray[Any, Any]:
    """``n`` noisy periodic sequences of ``LENGTH + 1`` tokens."""
    out = np.empty((n, LENGTH + 1), dtype=np.int32)
    for i in range(n):
        period = rng.integers(3, 7)
        pattern = rng.integers(0, VOCAB, period)
        out[i] = np.resize(pattern, LENGTH + 1)
    noise = rng.random(out.shape) < 0.1
    out[noise] = rng.integers(0, VOCAB, int(noise.sum()))
    return out


class LanguageModel(nn.Module):
    """Embedding, an LSTM over time, and logits for the next token."""

    hidden: int = 64
    dtype: Any = None

    @nn.compact
    def __call__(self, tokens: Any) -> Any:
        x = nn.Embed(VOCAB, 32, dtype=self.dtype)(tokens)
        cell = nn.OptimizedLSTMCell(self.hidden, dtype=self.dtype)
        carry, x = nn.RNN(cell, return_carry=True)(x)
        # Kept for a look when 'intermediates' is mutable (below).
        self.sow("intermediates", "carry", carry)
        return nn.Dense(VOCAB, dtype=self.dtype)(x)


def cross_entropy(logits: Any, targets: Any) -> Any:
    """The mean next-token loss, computed in float32."""
    logp = nn.log_softmax(logits.astype("float32"))
    return -tnp.mean(tnp.sum(logp * nn.one_hot(targets, VOCAB), axis=-1))


def _dtypes_of(x: Any) -> str:
    return ", ".join(sorted({str(leaf.dtype) for leaf in tree.leaves(x)}))


def main(argv: list[str] | None = None) -> tuple[float, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="training steps")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    batch = 32
    model = LanguageModel(dtype="bfloat16")
    data = sequences(batch, rng)
    params = model.init(random.key(0), tnp.asarray(data[:, :-1]))["params"]
    opt = optim.adam(1e-2)
    opt_state = opt.init(params)

    def loss_fn(p: Any, tokens: Any) -> Any:
        logits = model.apply({"params": p}, tokens[:, :-1])
        return cross_entropy(logits, tokens[:, 1:])

    @tl.jit
    def step(p: Any, s: Any, tokens: Any) -> Any:
        loss, grads = tl.value_and_grad(loss_fn)(p, tokens)
        updates, s = opt.update(grads, s, p)
        return optim.apply_updates(p, updates), s, loss

    every = max(1, args.steps // 10)
    first = last = 0.0
    for i in range(args.steps):
        tokens = tnp.asarray(sequences(batch, rng))
        params, opt_state, loss = step(params, opt_state, tokens)
        last = float(loss)
        if i == 0:
            first = last
        if i % every == 0 or i == args.steps - 1:
            print(f"step {i + 1:4d}  loss {last:.3f}", flush=True)
    print(f"loss {first:.3f} -> {last:.3f} (chance: {np.log(VOCAB):.3f})")

    tokens = tnp.asarray(sequences(batch, rng))
    logits, state = model.apply(
        {"params": params}, tokens[:, :-1], mutable=["intermediates"]
    )
    carry = state["intermediates"]["carry"]
    grads = tl.grad(loss_fn)(params, tokens)
    print(f"  activations      {logits.dtype}")
    print(f"  lstm carry       {_dtypes_of(carry)}")
    print(f"  parameters       {_dtypes_of(params)}")
    print(f"  gradients        {_dtypes_of(grads)}")
    print(f"  optimiser state  {_dtypes_of(opt_state)}")
    return first, last


if __name__ == "__main__":

    def run() -> None:
        main()

    # Ends as the typelattice command does: quietly when the reader of the
    # output goes away (| head).
    sys.exit(run_main(run))
