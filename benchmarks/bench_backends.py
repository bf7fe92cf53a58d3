"""The PyTorch backend against torch itself (and CuPy, when it imports).

What is timed, each against the raw library in the same run (medians of
repeated calls; CUDA timings synchronise around each call):

- small ops (1K elements): torch's own call; the backend's implementation
  called on tensors (what an operation on tensor-holding Arrays costs in
  the backend); ``Primitive.bind`` under ``use(BACKEND)`` on NumPy-held
  Arrays (converted in and out); and, where the core has native tensor
  Arrays, ``tnp.add`` on ``tnp.asarray(tensor)``;
- large ops (10M elements on the CPU, 100M with ``--device cuda``):
  float32 + float32, and int32 + float32, which the lattice makes float32
  (a conversion, then an add; or :func:`promoting`'s one torch call, the
  cast inside the kernel), against torch's own int32 + float32 (which
  computes float32 too);
- a jitted function of five elementwise operations on 1K-element native
  Arrays against the same five torch calls (jit's cost per call);
- a jitted MLP training step on native Arrays against the same step in
  plain torch (512-512-10 on the CPU, four layers of 512 with ``--device
  cuda``; batch 256), with float32 data, then with int32 inputs and
  targets, which the lattice converts to float32 (the targets' conversion
  inside the loss's subtraction kernel);
- with ``--device cuda``: CuPy's own int32 + float32 (NumPy's rules:
  float64) and with ``dtype=float32``.

Run: ``python benchmarks/bench_backends.py [--device cuda] [--repeat N]
[--threads N] [--only small|large|jit|mlp]``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax
from typelattice._backends import use
from typelattice._backends.torch import BACKEND, promoting
from typelattice._lax._primitive import PRIMITIVES


def median_seconds(
    fn: Callable[[], Any], *, repeat: int, number: int, sync: bool
) -> float:
    """The median over ``repeat`` rounds of the mean time of ``number`` calls
    (after a warmup round)."""
    for _ in range(number):
        fn()
    if sync:
        torch.cuda.synchronize()
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        if sync:
            torch.cuda.synchronize()
        rounds.append((time.perf_counter() - start) / number)
    return statistics.median(rounds)


def paired_seconds(
    raw: Callable[[], Any],
    other: Callable[[], Any],
    *,
    repeat: int,
    number: int,
    sync: bool,
) -> tuple[float, float]:
    """Medians of ``raw`` and ``other``, their rounds interleaved so that a
    change of load affects both alike."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        a.append(median_seconds(raw, repeat=1, number=number, sync=sync))
        b.append(median_seconds(other, repeat=1, number=number, sync=sync))
    return statistics.median(a), statistics.median(b)


def line(name: str, seconds: float, base: float | None = None) -> None:
    ratio = f"  x{seconds / base:.3f}" if base else ""
    print(f"  {name:<52} {seconds * 1e6:10.2f} us{ratio}")


def small_ops(repeat: int, device: str) -> None:
    """1K-element operations: torch, the implementation, bind."""
    sync = device != "cpu"
    n = 1000
    a = torch.rand(n, device=device)
    b = torch.rand(n, device=device)
    i = torch.arange(n, dtype=torch.int32, device=device)
    add, mul, exp = (BACKEND.impl(PRIMITIVES[k]) for k in ("add", "mul", "exp"))
    conv = BACKEND.impl(PRIMITIVES["convert_element_type"])
    total = BACKEND.impl(PRIMITIVES["reduce_sum"])
    f32 = np.dtype(np.float32)
    cases: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        ("add f32+f32", lambda: torch.add(a, b), lambda: add(a, b)),
        (
            "add i32+f32 -> f32",
            lambda: torch.add(i, b),
            lambda: add(conv(i, new_dtype=f32), b),
        ),
        ("mul", lambda: torch.mul(a, b), lambda: mul(a, b)),
        ("exp", lambda: torch.exp(a), lambda: exp(a)),
        ("sum", lambda: torch.sum(a), lambda: total(a, axes=(0,))),
    ]
    print(f"small ops ({n} elements, {device}): torch, then the backend")
    number = 2000 if device == "cpu" else 500
    for name, raw, impl in cases:
        t_raw, t_impl = paired_seconds(
            raw, impl, repeat=repeat, number=number, sync=sync
        )
        line(f"{name}: torch", t_raw)
        line(
            f"{name}: implementation (+{(t_impl - t_raw) * 1e6:.2f} us)", t_impl, t_raw
        )
    if device == "cpu":
        x = tnp.asarray(np.random.rand(n).astype(np.float32))
        y = tnp.asarray(np.random.rand(n).astype(np.float32))
        with use(BACKEND):
            t_bind = median_seconds(
                lambda: lax.add(x, y), repeat=repeat, number=number, sync=False
            )
        t_raw = median_seconds(
            lambda: torch.add(a, b), repeat=repeat, number=number, sync=False
        )
        line("add f32+f32: lax.add under use(BACKEND), NumPy-held", t_bind, t_raw)
    on_arrays: list[tuple[str, Any, Callable[[], Any], Callable[[Any, Any], Any]]] = [
        ("add f32+f32: tnp.add", a, lambda: torch.add(a, b), tnp.add),
        ("add i32+f32: tnp.add", i, lambda: torch.add(i, b), tnp.add),
        ("add f32+f32: x + y", a, lambda: a + b, lambda x, y: x + y),
        ("add f32+f32: lax.add", a, lambda: torch.add(a, b), lax.add),
        ("mul by 2.0: x * 2.0", a, lambda: a * 2.0, lambda x, y: x * 2.0),
        ("exp: tnp.exp", a, lambda: torch.exp(a), lambda x, y: tnp.exp(x)),
    ]
    print("  on Arrays holding the tensors (tnp.asarray(tensor)), against torch:")
    for name, first, raw, ours in on_arrays:
        native_arrays(
            name, first, b, raw, repeat=repeat, number=number, sync=sync, ours=ours
        )


def native_arrays(
    name: str,
    a: torch.Tensor,
    b: torch.Tensor,
    raw: Callable[[], Any],
    *,
    repeat: int,
    number: int,
    sync: bool,
    ours: Callable[[Any, Any], Any] = tnp.add,
) -> None:
    """``ours`` (``tnp.add``) on Arrays holding the tensors, against ``raw``."""
    try:
        x, y = tnp.asarray(a), tnp.asarray(b)
        if getattr(x, "backend", "numpy") != "torch":
            raise TypeError("an Array on NumPy")
    except Exception:
        print(f"  {name}: native Arrays not available")
        return
    t_raw, t_tnp = paired_seconds(
        raw, lambda: ours(x, y), repeat=repeat, number=number, sync=sync
    )
    line(f"{name} (+{(t_tnp - t_raw) * 1e6:.2f} us)", t_tnp, t_raw)


def large_ops(repeat: int, device: str, n: int) -> None:
    """Large additions: no cast, and int32 + float32."""
    sync = device != "cpu"
    a = torch.rand(n, device=device)
    b = torch.rand(n, device=device)
    i = torch.randint(0, 1000, (n,), dtype=torch.int32, device=device)
    add = BACKEND.impl(PRIMITIVES["add"])
    conv = BACKEND.impl(PRIMITIVES["convert_element_type"])
    f32 = np.dtype(np.float32)
    number = 5 if device == "cpu" else 20
    print(f"large ops ({n:,} elements, {device})")
    t_raw, t_impl = paired_seconds(
        lambda: torch.add(a, b),
        lambda: add(a, b),
        repeat=repeat,
        number=number,
        sync=sync,
    )
    line("add f32+f32: torch", t_raw)
    line("add f32+f32: implementation", t_impl, t_raw)
    t_raw, t_impl = paired_seconds(
        lambda: torch.add(i, b),
        lambda: add(conv(i, new_dtype=f32), b),
        repeat=repeat,
        number=number,
        sync=sync,
    )
    line("add i32+f32: torch's own (float32)", t_raw)
    line("add i32+f32: convert_element_type + add", t_impl, t_raw)
    fused = promoting("add", np.dtype(np.int32), f32, f32)
    assert fused is not None
    t_raw, t_fused = paired_seconds(
        lambda: torch.add(i, b),
        lambda: fused(i, b),
        repeat=repeat,
        number=number,
        sync=sync,
    )
    line("add i32+f32: promoting('add', ...) (the cast in the kernel)", t_fused, t_raw)
    native_arrays(
        "add i32+f32: tnp.add on tnp.asarray(tensor)",
        i,
        b,
        lambda: torch.add(i, b),
        repeat=repeat,
        number=number,
        sync=sync,
    )
    try:
        import cupy  # type: ignore[import-not-found]  # pyright: ignore[reportMissingImports]
    except ImportError:
        return
    if device == "cpu":
        return
    ci = cupy.random.randint(0, 1000, n, dtype=cupy.int32)
    cb = cupy.random.rand(n, dtype=cupy.float32)

    def cupy_sync() -> None:
        cupy.cuda.Device().synchronize()

    for name, fn in (
        ("cupy.add i32+f32 (NumPy rules: float64)", lambda: cupy.add(ci, cb)),
        (
            "cupy.add i32+f32, dtype=float32",
            lambda: cupy.add(ci, cb, dtype=cupy.float32),
        ),
    ):
        for _ in range(3):
            fn()
        cupy_sync()
        rounds = []
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            cupy_sync()
            rounds.append((time.perf_counter() - start) / number)
        line(name, statistics.median(rounds), t_raw)


def jit_overhead(repeat: int, device: str) -> None:
    """A jitted function of five small elementwise operations on native
    Arrays against the same five torch calls: jit's cost per call."""
    sync = device != "cpu"
    n = 1000
    a = torch.rand(n, device=device)
    b = torch.rand(n, device=device)

    def raw() -> Any:
        return torch.mul(torch.tanh(torch.add(torch.mul(a, b), a)) - b, a)

    print(f"jit of 5 elementwise ops ({n} elements, {device})")
    try:
        x, y = tnp.asarray(a), tnp.asarray(b)
        if getattr(x, "backend", "numpy") != "torch":
            raise TypeError("an Array on NumPy")
    except Exception:
        print("  native Arrays not available")
        return

    @tl.jit
    def five(x: Any, y: Any) -> Any:
        return (tnp.tanh(x * y + x) - y) * x

    assert np.array_equal(np.asarray(five(x, y)), raw().cpu().numpy())
    number = 2000 if device == "cpu" else 500
    t_raw, t_jit = paired_seconds(
        raw, lambda: five(x, y), repeat=repeat, number=number, sync=sync
    )
    line("5 torch calls", t_raw)
    line(f"jit on native Arrays (+{(t_jit - t_raw) * 1e6:.2f} us)", t_jit, t_raw)


def mlp_step(
    repeat: int, device: str, widths: tuple[int, ...], batch: int, mixed: bool
) -> float:
    """A jitted MLP training step on native Arrays against the same step in
    plain torch (interleaved rounds); returns typelattice's time over
    torch's.

    ``widths``: the input's, the hidden layers' and the output's. With
    ``mixed``, the inputs and the targets are int32 (counts and labels):
    the lattice converts them to float32, the input for the first matmul
    (a conversion, in both), the targets inside the loss's subtraction
    (torch's own promotion in plain torch, the conversion fused into the
    kernel by jit).
    """
    gen = torch.Generator(device="cpu").manual_seed(0)

    def init() -> list[torch.Tensor]:
        params = []
        for fan_in, fan_out in itertools.pairwise(widths):
            w = torch.randn(fan_in, fan_out, generator=gen) / fan_in**0.5
            params.append(w.to(device))
            params.append(torch.zeros(fan_out).to(device))
        return params

    if mixed:
        x = torch.randint(0, 8, (batch, widths[0]), generator=gen, dtype=torch.int32)
        y = torch.randint(0, 2, (batch, widths[-1]), generator=gen, dtype=torch.int32)
    else:
        x = torch.randn(batch, widths[0], generator=gen)
        y = torch.randn(batch, widths[-1], generator=gen)
    x, y = x.to(device), y.to(device)
    sync = device != "cpu"
    shape = "-".join(map(str, widths))
    kind = "int32 inputs and targets, float32 parameters" if mixed else "float32"
    print(f"MLP training step ({shape}, batch {batch}, {kind}, {device})")

    torch_params = [p.clone().requires_grad_(True) for p in init()]
    last = len(torch_params) - 2

    def torch_step() -> None:
        h = x.to(torch.float32) if mixed else x
        for k in range(0, len(torch_params), 2):
            h = h @ torch_params[k] + torch_params[k + 1]
            if k < last:
                h = torch.relu(h)
        loss = torch.mean((h - y) ** 2)  # (int32 y: torch promotes to float32)
        grads = torch.autograd.grad(loss, torch_params)
        with torch.no_grad():
            for p, g in zip(torch_params, grads, strict=True):
                p.sub_(0.01 * g)

    try:
        params = [tnp.asarray(p) for p in init()]
        xs, ys = tnp.asarray(x), tnp.asarray(y)
        if getattr(xs, "backend", "numpy") != "torch":
            raise TypeError("an Array on NumPy")
    except Exception:
        print("  typelattice jit: native Arrays not available")
        return math.nan

    def loss(ps: list[Any], x: Any, y: Any) -> Any:
        h = x
        for k in range(0, len(ps), 2):
            h = h @ ps[k] + ps[k + 1]
            if k < last:
                h = tl.nn.relu(h)  # (as torch.relu: derivative 0 at 0)
        return tnp.mean((h - y) ** 2)

    @tl.jit
    def step(ps: list[Any], x: Any, y: Any) -> list[Any]:
        grads = tl.grad(loss)(ps, x, y)
        return [p - 0.01 * g for p, g in zip(ps, grads, strict=True)]

    state = {"ps": params}

    def tl_step() -> None:
        state["ps"] = step(state["ps"], xs, ys)

    t_torch, t_tl = paired_seconds(
        torch_step, tl_step, repeat=repeat, number=10, sync=sync
    )
    line("plain torch", t_torch)
    line("typelattice jit(grad) on torch", t_tl, t_torch)
    return t_tl / t_torch


def main() -> None:
    parser = argparse.ArgumentParser(description="typelattice on torch vs torch")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--only",
        choices=("small", "large", "jit", "mlp"),
        help="run one part only (small ops, large ops, jit overhead, MLP step)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="torch's CPU threads (torch.set_num_threads; default: torch's): "
        "1 gives steadier timings on a shared machine",
    )
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    cpu = args.device == "cpu"
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads")
    parts = {
        "small": lambda: small_ops(args.repeat, args.device),
        "large": lambda: large_ops(
            args.repeat, args.device, 10_000_000 if cpu else 100_000_000
        ),
        "jit": lambda: jit_overhead(args.repeat, args.device),
        "mlp": lambda: mlp_steps(args.repeat, args.device),
    }
    for name, part in parts.items():
        if args.only in (None, name):
            part()


def mlp_steps(repeat: int, device: str) -> None:
    """The MLP step, float32 then mixed, at sizes for the device (small
    ones on the CPU)."""
    if device == "cpu":
        widths, batch = (512, 512, 10), 256
    else:
        widths, batch = (512, 512, 512, 512), 256
    for mixed in (False, True):
        mlp_step(repeat, device, widths, batch, mixed)


if __name__ == "__main__":
    main()
