"""The recorded JAX goldens replayed on every installed backend, with the
operands as that backend's Arrays.

``golden/numpy_ops.json`` (the namespace: dtypes and weak flags),
``golden/lax_ops.json`` (``typelattice.lax``: dtypes, weak flags and
values) and ``golden/grad.json`` (``grad``/``vjp``: values) are replayed as
their own tests replay them (their loaders and comparisons are reused),
with each array operand made by ``typelattice.numpy.asarray(x,
backend=name, device=device)`` and every function of the case given a
namespace whose ``asarray`` does the same. Each result must be what JAX
gave, and an Array of that backend and device.

The boxed backend (``tests/boxed_backend.py``, NumPy arrays behind the
module contract) is always replayed; torch, Dask and CuPy when their
backend module and library import (CuPy and torch on CUDA under the
``gpu`` marker, skipped without a GPU). By default a sample of each
golden's cases is replayed (the boxed backend every 4th, the others every
7th); ``TYPELATTICE_REPLAY_ALL=1`` replays every case (CI does, on torch
and Dask).
"""

from __future__ import annotations

import importlib.util
import os
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import boxed_backend
import test_grad_golden as grad_golden
import test_lax_golden as lax_golden
import test_numpy_golden as numpy_golden
import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax
from typelattice._backends import named

boxed_backend.register()

ALL = os.environ.get("TYPELATTICE_REPLAY_ALL", "") not in ("", "0")
# Every n-th case by default (the boxed backend's every 4th: its full replay
# takes half a minute); TYPELATTICE_REPLAY_ALL=1 replays all of them.
BOXED_SAMPLE = 1 if ALL else 4
SAMPLE = 1 if ALL else 7


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _installed(name: str) -> bool:
    """Whether the library and typelattice's backend module for it import."""
    if importlib.util.find_spec(name) is None:
        return False
    try:
        named(name)
    except ImportError:
        return False
    return True


def _targets() -> Iterator[Any]:
    yield pytest.param("boxed", "box:1", BOXED_SAMPLE, id="boxed")
    for name, device, gpu in [
        ("torch", "cpu", False),
        ("dask", "cpu", False),
        ("torch", "cuda:0", True),
        ("cupy", "cuda:0", True),
    ]:
        marks = [pytest.mark.gpu] if gpu else []
        marks.append(
            pytest.mark.skipif(
                not _installed(name) or (gpu and not _cuda()),
                reason=f"{name} or its backend not installed"
                + (", or no GPU" if gpu else ""),
            )
        )
        ident = f"{name}-{device.partition(':')[0]}"
        yield pytest.param(name, device, SAMPLE, id=ident, marks=marks)


TARGETS = list(_targets())


#: Every native result checked against its abstract evaluation.
pytestmark = pytest.mark.usefixtures("checked_native")


def _namespace(name: str, device: str) -> types.ModuleType:
    """``typelattice.numpy`` with ``asarray`` making Arrays of the backend."""
    ns = types.ModuleType(f"typelattice.numpy on {name}")
    ns.__dict__.update(vars(tnp))

    def asarray(a: Any, *args: Any, **kwargs: Any) -> Any:
        return tnp.asarray(a, *args, backend=name, device=device, **kwargs)

    ns.asarray = asarray  # type: ignore[attr-defined]
    return ns


def _placed_wrongly(got: Any, name: str, device: str) -> str | None:
    """Why an outcome is not on the backend and device, or None."""
    if isinstance(got, list | tuple):
        for g in got:  # pyright: ignore[reportUnknownVariableType]
            why = _placed_wrongly(g, name, device)
            if why:
                return why
        return None
    if isinstance(got, tnp.Array):
        where = (getattr(got, "backend", None), getattr(got, "device", None))
        if where != (name, device):
            return f"result on {where}, not ({name!r}, {device!r})"
    return None


def _report(what: str, problems: list[str], total: int) -> None:
    if problems:
        shown = "\n".join(problems[:20])
        pytest.fail(
            f"{len(problems)} of {total} {what} differ:\n{shown}", pytrace=False
        )


@pytest.mark.parametrize(("name", "device", "every"), TARGETS)
def test_namespace_golden(name: str, device: str, every: int) -> None:
    ns = _namespace(name, device)
    problems: list[str] = []
    total = 0
    for mode, body in numpy_golden.GOLDEN["modes"].items():
        for op_name in list(body["results"])[::every]:
            op = numpy_golden.rec.OPS[op_name]
            expected = body["results"][op_name]
            calls = numpy_golden.rec.run_mode(ns, numpy_golden.configured, mode, op)
            for index, ((combo, got), want) in enumerate(
                zip(calls, expected, strict=True)
            ):
                total += 1
                instead = numpy_golden.deliberate_difference(mode, op_name, index, want)
                ok = numpy_golden.accepted(want, got) or (
                    instead is not None and numpy_golden.accepted(instead, got)
                )
                why = None if ok else f"JAX {want}, got {numpy_golden.describe(got)}"
                if not all(label.startswith("py:") for label in combo):
                    why = why or _placed_wrongly(got, name, device)
                if why:
                    problems.append(f"{mode} {op_name}({', '.join(combo)}): {why}")
    _report("namespace calls", problems, total)


@pytest.mark.parametrize(("name", "device", "every"), TARGETS)
def test_lax_golden(name: str, device: str, every: int) -> None:
    ns = _namespace(name, device)
    rec = lax_golden.rec
    problems: list[str] = []
    total = 0
    for mode, body in lax_golden.GOLDEN["modes"].items():
        for case_name in list(body)[::every]:
            case = rec.CASES[case_name]
            with tl.enable_x64(rec.MODES[mode]), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for row in body[case_name]:
                    total += 1
                    operands = [rec.make_operand(ns, label) for label in row["args"]]
                    got = rec.outcome(lax, case, operands)
                    why = lax_golden.mismatch(row.get("alt", row["jax"]), got)
                    # (on the backend when an operand of the case's dtype
                    # group is: convert_element_type(2, y.dtype) takes a
                    # dtype from its array, not data)
                    labels = [
                        row["args"][i] for i in case.group if i < len(row["args"])
                    ]
                    if not all(a.startswith("py:") for a in labels):
                        why = why or _placed_wrongly(got, name, device)
                    if why:
                        args = ", ".join(row["args"])
                        problems.append(f"{mode} {case_name}({args}): {why}")
    _report("lax calls", problems, total)


def _grad_rows(every: int) -> list[tuple[str, str]]:
    rows = [(p.values[0], p.values[1]) for p in grad_golden.PARAMS]
    return rows[::every]


@pytest.mark.parametrize(("name", "device", "every"), TARGETS)
def test_grad_golden(name: str, device: str, every: int) -> None:
    ns = _namespace(name, device)
    rec = grad_golden.rec
    problems: list[str] = []
    rows = _grad_rows(every)
    for case_name, variant in rows:
        case = rec.CASES[case_name]
        row = grad_golden.GOLDEN["cases"][case_name]["variants"][variant]
        fn: Callable[..., Any] = lambda *a, case=case: case.fn(ns, *a)  # noqa: E731
        loss: Callable[..., Any] = lambda *a, case=case: rec.loss(  # noqa: E731
            ns, case, case.fn(ns, *a)
        )
        where = f"{case.expr} [{variant}]"
        with tl.enable_x64(variant in rec.X64_VARIANTS):
            args = [
                v if isinstance(v, float | complex) else ns.asarray(v)
                for v in (rec.decode(e) for e in row["args"])
            ]
            argnums = tuple(range(len(args)))
            try:
                if "error" in row:
                    try:
                        tl.value_and_grad(loss, argnums=argnums)(*args)
                    except Exception as exc:  # noqa: BLE001 (its family is checked)
                        if row["error"][1:] not in rec.builtin_bases(exc):
                            problems.append(f"{where}: JAX {row['error']}, got {exc!r}")
                    else:
                        problems.append(f"{where}: JAX {row['error']}, got no error")
                    continue
                stages = [("output", row["out"], fn(*args))]
                value, grads = tl.value_and_grad(loss, argnums=argnums)(*args)
                stages.append(("loss", row["loss"], value))
                want = grad_golden._as_arguments(row["grad"], args)  # pyright: ignore[reportPrivateUsage]
                stages.append(("grad", want, list(grads)))
                primal, vjp_fn = tl.vjp(fn, *args)
                ct = rec.cotangent(ns, case, primal)
                want = grad_golden._as_arguments(row["vjp"], args)  # pyright: ignore[reportPrivateUsage]
                stages.append(("vjp", want, list(vjp_fn(ct))))
            except Exception as exc:  # noqa: BLE001 (reported as a difference)
                problems.append(f"{where}: raised {type(exc).__name__}: {exc}"[:300])
                continue
            on_backend = any(isinstance(a, tnp.Array) for a in args)
            for stage, want, got in stages:
                why = grad_golden.mismatch(want, got)
                if on_backend and not isinstance(want, dict):
                    why = why or _placed_wrongly(got, name, device)
                if why:
                    problems.append(f"{where} {stage}: {why}")
    _report("gradient cases", problems, len(rows))


def test_boxed_arrays_never_reach_numpy() -> None:
    """The boxed backend's arrays cannot be converted by NumPy: a path
    that took one for a NumPy array would fail, not pass by accident."""
    box = boxed_backend.from_numpy(np.ones(2, np.float32), "box:0")
    with pytest.raises((TypeError, ValueError)):
        np.add(box, 1)
