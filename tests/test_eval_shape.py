"""eval_shape computes nothing: every namespace function that takes arrays
is evaluated abstractly, with the eager call's shapes, dtypes, weak flags
and errors.

Each case is a function of a few arrays of moderate, different sizes (so
that a rule that mixes up sizes shows), run eagerly, under eval_shape and
under jit: the three agree on every result's shape, dtype and weak flag, or
raise the same exception with the same message. The huge cases would need
gigabytes if anything were allocated at full size.
"""

from __future__ import annotations

import operator
import random
import tracemalloc
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp

S = tl.ShapeDtypeStruct


def _arrays() -> dict[str, Any]:
    def ramp(shape: tuple[int, ...], dtype: str) -> tnp.Array:
        size = int(np.prod(shape))
        return tnp.asarray((np.arange(size) % 7).reshape(shape).astype(dtype))

    return {
        "a": ramp((3, 4, 5), "int8"),  # a 3-d integer array
        "b": ramp((4, 5, 6), "float32"),
        "m": ramp((3, 4), "bfloat16"),
        "n": ramp((4, 5), "int16"),
        "q": ramp((4, 4), "float32"),
        "v": ramp((5,), "uint8"),
        "w": ramp((4,), "float16"),
        "u": ramp((12,), "int32"),
        "z": ramp((0, 3), "float32"),  # empty
        "one": ramp((1, 3, 1), "int8"),
        "c": tnp.asarray(np.array([[1 + 2j, 3j], [1, 2]], dtype="complex64")),
        "s": tnp.asarray(3.5),  # a weak scalar array
        "i": tnp.asarray(np.array([2, 0, 1, 1])),  # int32 indices
        "j": tnp.asarray(np.array([[0, 1, 2]])),
        "mask": tnp.asarray(np.arange(60).reshape(3, 4, 5) % 3 == 0),
    }


F = Callable[..., Any]
# (id, function, names of the array arguments); closed-over concrete arrays
# are taken from the same table with C(name).
CASES: list[tuple[str, F, str]] = []


def C(name: str) -> Any:
    """A concrete array (closed over, not an argument)."""
    return _arrays()[name]


def add_cases(table: list[tuple[str, str, F]]) -> None:
    for name, args, fn in table:
        CASES.append((name, fn, args))


add_cases(
    [
        # reductions
        ("sum", "a", lambda a: tnp.sum(a)),
        ("sum_axis", "a", lambda a: a.sum(axis=1)),
        ("sum_axes_keep", "a", lambda a: tnp.sum(a, axis=(0, 2), keepdims=True)),
        ("sum_bad_axis", "a", lambda a: tnp.sum(a, axis=3)),
        ("sum_repeated_axis", "a", lambda a: tnp.sum(a, axis=(0, -3))),
        ("sum_where", "a mask", lambda a, m: tnp.sum(a, axis=2, where=m)),
        ("sum_where_bad", "a v", lambda a, v: tnp.sum(a, where=v[:2] > 0)),
        ("sum_scalar", "s", lambda s: tnp.sum(s)),
        ("prod_dtype", "a", lambda a: tnp.prod(a, 0, dtype="int8")),
        ("mean", "a", lambda a: a.mean(-1)),
        ("mean_bf16", "m", lambda m: tnp.mean(m, axis=0)),
        ("var_ddof", "a", lambda a: tnp.var(a, 1, ddof=1)),
        ("std_axes", "b", lambda b: tnp.std(b, (0, 1))),
        ("std_correction", "b", lambda b: tnp.std(b, correction=1, keepdims=True)),
        ("max", "a", lambda a: tnp.max(a, 1)),
        ("min_where", "a", lambda a: tnp.min(a, where=a > 2, initial=0)),
        ("min_where_no_initial", "a", lambda a: tnp.min(a, where=a > 2)),
        ("max_empty_axis", "z", lambda z: tnp.max(z, axis=0)),
        ("max_empty_other_axis", "z", lambda z: tnp.max(z, axis=1)),
        ("amax_amin", "b", lambda b: (tnp.amax(b, 2), tnp.amin(b, keepdims=True))),
        ("argmax", "a", lambda a: tnp.argmax(a, 2)),
        ("argmin_keepdims", "b", lambda b: tnp.argmin(b, axis=1, keepdims=True)),
        ("argmax_complex", "c", lambda c: tnp.argmax(c)),
        ("argmax_empty", "z", lambda z: tnp.argmax(z, axis=0)),
        ("any_all", "a", lambda a: (tnp.any(a, 0), a.all(), tnp.all(a, (1, 2)))),
        ("cumsum", "a", lambda a: tnp.cumsum(a)),
        ("cumsum_axis", "a", lambda a: a.cumsum(1)),
        ("cumprod_dtype", "b", lambda b: tnp.cumprod(b, -1, dtype="float16")),
        ("cumsum_scalar", "s", lambda s: tnp.cumsum(s)),
        ("cumsum_bad_axis", "a", lambda a: tnp.cumsum(a, 3)),
        ("cumsum_bool", "mask", lambda m: tnp.cumsum(m, 0)),
        # sorting
        ("sort", "a", lambda a: tnp.sort(a)),
        ("sort_none", "b", lambda b: tnp.sort(b, axis=None)),
        ("sort_descending", "a", lambda a: a.sort(0, descending=True)),
        ("sort_scalar", "s", lambda s: tnp.sort(s)),
        ("argsort", "b", lambda b: tnp.argsort(b, 1)),
        ("argsort_none", "a", lambda a: tnp.argsort(a, axis=None, descending=True)),
        # products
        ("matmul", "m n", lambda m, n: m @ n),
        ("matmul_vector_left", "w n", lambda w, n: tnp.matmul(w, n)),
        ("matmul_vector_right", "m w", lambda m, w: tnp.matmul(m, w)),
        ("matmul_batch", "a b", lambda a, b: a[:, None, :, :4] @ b[:2, :, :4]),
        ("matmul_mismatch", "m q", lambda m, q: m @ q[:3]),
        ("matmul_scalar", "m s", lambda m, s: tnp.matmul(m, s)),
        (
            "matmul_preferred",
            "n",
            lambda n: tnp.matmul(n.T, n, preferred_element_type="int32"),
        ),
        (
            "matmul_narrower",
            "b",
            lambda b: tnp.matmul(b, b[0].T, preferred_element_type="float16"),
        ),
        ("dot", "m n", lambda m, n: tnp.dot(m, n)),
        (
            "dot_nd",
            "a b",
            lambda a, b: tnp.dot(
                a, b[:, :5, :].transpose(1, 0, 2)[:5].transpose(1, 0, 2)
            ),
        ),
        ("dot_nd2", "a b", lambda a, b: tnp.dot(a, b[:2, :5, :])),
        ("dot_scalar", "a s", lambda a, s: tnp.dot(s, a)),
        ("dot_vectors", "w", lambda w: tnp.dot(w, w)),
        ("dot_mismatch", "m v", lambda m, v: tnp.dot(m, v)),
        ("vdot", "m u", lambda m, u: tnp.vdot(m, u)),
        ("vdot_mismatch", "m v", lambda m, v: tnp.vdot(m, v)),
        ("inner", "n a", lambda n, a: tnp.inner(n, a)),
        ("inner_mismatch", "m n", lambda m, n: tnp.inner(m, n)),
        ("outer", "m v", lambda m, v: tnp.outer(m, v)),
        ("tensordot", "a b", lambda a, b: tnp.tensordot(a, b, 2)),
        (
            "tensordot_axes",
            "a b",
            lambda a, b: tnp.tensordot(a, b, axes=([1, 2], [0, 1])),
        ),
        (
            "tensordot_int_axes",
            "a n",
            lambda a, n: tnp.tensordot(a, n, axes=([1], [0])),
        ),
        ("tensordot_mismatch", "a b", lambda a, b: tnp.tensordot(a, b, 1)),
        ("einsum", "a n", lambda a, n: tnp.einsum("ijk,jl->ikl", a, n)),
        ("einsum_full", "m", lambda m: tnp.einsum("ij,ij->", m, m)),
        ("einsum_ellipsis", "b w", lambda b, w: tnp.einsum("...j,i->...ij", b, w)),
        ("einsum_trace", "q", lambda q: tnp.einsum("ii", q)),
        ("einsum_implicit", "m n", lambda m, n: tnp.einsum("ij,jk", m, n)),
        ("einsum_mismatch", "m v", lambda m, v: tnp.einsum("ij,j->i", m, v)),
        # shapes (views)
        ("reshape", "a", lambda a: tnp.reshape(a, (12, 5))),
        ("reshape_infer", "a", lambda a: a.reshape(-1, 10)),
        ("reshape_bad", "a", lambda a: a.reshape(7, -1)),
        ("ravel", "a", lambda a: tnp.ravel(a)),
        ("ravel_f", "b", lambda b: b.ravel(order="F")),
        ("flatten_scalar", "s", lambda s: s.flatten()),
        ("transpose", "a", lambda a: (tnp.transpose(a), a.T, a.transpose(1, 0, 2))),
        ("transpose_bad", "a", lambda a: tnp.transpose(a, (0, 1))),
        ("permute_dims", "a", lambda a: tnp.permute_dims(a, (2, 0, 1))),
        ("matrix_transpose", "a", lambda a: (tnp.matrix_transpose(a), a.mT)),
        ("matrix_transpose_1d", "v", lambda v: tnp.matrix_transpose(v)),
        ("moveaxis", "a", lambda a: tnp.moveaxis(a, 0, -1)),
        ("swapaxes", "a", lambda a: tnp.swapaxes(a, 0, 2)),
        ("expand_dims", "a", lambda a: tnp.expand_dims(a, (0, 4))),
        ("squeeze", "one", lambda o: (tnp.squeeze(o), tnp.squeeze(o, 2))),
        ("squeeze_bad", "a", lambda a: tnp.squeeze(a, 0)),
        ("broadcast_to", "v", lambda v: tnp.broadcast_to(v, (3, 5))),
        ("broadcast_to_bad", "v", lambda v: tnp.broadcast_to(v, (3, 4))),
        ("broadcast_arrays", "a v", lambda a, v: tnp.broadcast_arrays(a, v, 2)),
        ("broadcast_arrays_bad", "a w", lambda a, w: tnp.broadcast_arrays(a, w)),
        (
            "atleast",
            "s v m",
            lambda s, v, m: (
                tnp.atleast_1d(s),
                tnp.atleast_2d(v),
                tnp.atleast_3d(m),
                tnp.atleast_1d(s, v),
            ),
        ),
        ("flip", "a", lambda a: (tnp.flip(a, 1), tnp.flip(a))),
        ("split", "a", lambda a: tnp.split(a, 3)),
        ("split_indices", "a", lambda a: tnp.split(a, [1, 3], axis=1)),
        ("split_unequal", "a", lambda a: tnp.split(a, 2)),
        # shapes (copies)
        (
            "roll",
            "a",
            lambda a: (tnp.roll(a, 2, 1), tnp.roll(a, (1, 2), (0, 2)), tnp.roll(a, 7)),
        ),
        (
            "tile",
            "a v",
            lambda a, v: (
                tnp.tile(a, 2),
                tnp.tile(v, (2, 3)),
                tnp.tile(a, (2, 1, 1, 3)),
            ),
        ),
        ("tile_zero", "a", lambda a: tnp.tile(a, (0, 2))),
        ("tile_negative", "a", lambda a: tnp.tile(a, -1)),
        (
            "repeat",
            "a",
            lambda a: (tnp.repeat(a, 2), a.repeat(3, axis=1), tnp.repeat(a, 0, -1)),
        ),
        (
            "repeat_total",
            "a",
            lambda a: tnp.repeat(a, 2, axis=1, total_repeat_length=8),
        ),
        (
            "repeat_total_bad",
            "a",
            lambda a: tnp.repeat(a, 2, axis=1, total_repeat_length=9),
        ),
        ("repeat_negative", "a", lambda a: tnp.repeat(a, -1)),
        ("repeat_scalar", "s", lambda s: (tnp.repeat(s, 2), tnp.repeat(s, 3, axis=0))),
        ("repeat_counts", "v", lambda v: tnp.repeat(v, C("v"))),
        (
            "concatenate",
            "a b",
            lambda a, b: tnp.concatenate([a[:, :, :2], b[:3, :4, :3]], axis=-1),
        ),
        ("concatenate_none", "a b", lambda a, b: tnp.concatenate([a, b], axis=None)),
        ("concatenate_mismatch", "a b", lambda a, b: tnp.concatenate([a, b])),
        ("concatenate_scalar", "s", lambda s: tnp.concatenate([s, s])),
        ("concatenate_ndim", "a m", lambda a, m: tnp.concatenate([a, m])),
        (
            "concatenate_dtype",
            "v u",
            lambda v, u: tnp.concatenate((v, u), dtype="float32"),
        ),
        ("concatenate_bad_axis", "v", lambda v: tnp.concatenate([v, v], axis=1)),
        ("concat", "m", lambda m: tnp.concat([m, m, m], axis=1)),
        ("stack", "m n", lambda m, n: (tnp.stack([m, m], 1), tnp.stack([n, n, n], -1))),
        ("stack_mismatch", "m n", lambda m, n: tnp.stack([m, n])),
        ("stack_bad_axis", "m", lambda m: tnp.stack([m, m], axis=3)),
        ("stack_scalars", "s", lambda s: tnp.stack([s, s, 2])),
        (
            "hstack",
            "v w m",
            lambda v, w, m: (
                tnp.hstack([v, w]),
                tnp.hstack([m, m[:, :1]]),
                tnp.hstack([w[0], w[1]]),
            ),
        ),
        (
            "vstack",
            "v m",
            lambda v, m: (
                tnp.vstack([v, v]),
                tnp.vstack([m, m[0]]),
                tnp.vstack([v[0], v[1]]),
            ),
        ),
        ("vstack_mismatch", "v w", lambda v, w: tnp.vstack([v, w])),
        (
            "take",
            "a i",
            lambda a, i: (tnp.take(a, i, axis=1), tnp.take(a, i), a.take(i[:2], 0)),
        ),
        (
            "take_concrete",
            "a",
            lambda a: (
                tnp.take(a, C("j"), axis=2),
                tnp.take(a, C("i")),
                tnp.take(a, 3, axis=1),
            ),
        ),
        ("take_out_of_bounds", "a", lambda a: tnp.take(a, C("i") + 3, axis=0)),
        ("take_out_of_bounds_flat", "a", lambda a: tnp.take(a, C("i") * 30)),
        ("take_clip", "a", lambda a: tnp.take(a, C("i") * 30, mode="clip")),
        ("take_bad_axis", "a i", lambda a, i: tnp.take(a, i, axis=3)),
        ("take_float_indices", "a w", lambda a, w: tnp.take(a, w)),
        ("take_from_concrete", "i", lambda i: tnp.take(C("b"), i, axis=2)),
        ("nonzero_size", "a", lambda a: tnp.nonzero(a, size=7)),
        ("nonzero_scalar", "s", lambda s: tnp.nonzero(s, size=2, fill_value=-1)),
        ("nonzero_negative_size", "a", lambda a: tnp.nonzero(a, size=-1)),
        ("nonzero_float_size", "a", lambda a: tnp.nonzero(a, size=2.0)),
        ("where_negative_size", "v", lambda v: tnp.where(v, size=-3)),
        ("argwhere_size", "a", lambda a: tnp.argwhere(a, size=7, fill_value=1.5)),
        ("argwhere_scalar", "s", lambda s: tnp.argwhere(s, size=2)),
        ("argwhere_negative_size", "a", lambda a: tnp.argwhere(a, size=-1)),
        ("flatnonzero_size", "a", lambda a: tnp.flatnonzero(a, size=9, fill_value=-1)),
        ("flatnonzero_negative_size", "v", lambda v: tnp.flatnonzero(v, size=-1)),
        # indexing
        (
            "index_basic",
            "a",
            lambda a: (a[0], a[1:, ::2], a[..., None, 1], a[-1, :, 2:9]),
        ),
        ("index_bad", "a", lambda a: a[3]),
        ("index_too_many", "a", lambda a: a[0, 0, 0, 0]),
        ("index_array", "a i", lambda a, i: (a[i], a[:, i], a[..., i[:3]], a[i, 2])),
        (
            "index_arrays",
            "a i j",
            lambda a, i, j: (a[i, :, i], a[j, i[:, None]], a[None, i, j]),
        ),
        (
            "index_mixed",
            "a i",
            lambda a, i: (a[i, None, 1], a[1:, i[:2], None], a[None, ..., i]),
        ),
        (
            "index_concrete",
            "a",
            lambda a: (
                a[C("i")],
                a[:, C("j")],
                a[C("mask")],
                a[C("mask")[0]],
                a[0, C("mask")[0]],
            ),
        ),
        ("index_concrete_out_of_bounds", "a", lambda a: a[C("i") * 3]),
        ("index_broadcast_mismatch", "a i", lambda a, i: a[i, i[:3]]),
        ("index_mask_bad", "a", lambda a: a[C("mask")[:2]]),
        ("index_traced_out_of_bounds", "one i", lambda o, i: o[:, :, i]),
        ("index_of_concrete", "i", lambda i: (C("b")[i], C("b")[:, i[:2], 1:])),
        # updates
        (
            "at_set",
            "a",
            lambda a: (
                a.at[0].set(1),
                a.at[:, 1:3].add(2),
                a.at[..., 0].multiply(a[..., 1]),
            ),
        ),
        (
            "at_arrays",
            "a i v",
            lambda a, i, v: (
                a.at[i].set(0),
                a.at[i, :, 1].add(i[:, None]),
                a.at[:, :, i].max(a[..., :4]),
            ),
        ),
        ("at_concrete", "a", lambda a: (a.at[C("i")].min(1), a.at[C("mask")].set(5))),
        ("at_mismatch", "a", lambda a: a.at[:, 1].set(a[:2, 1])),
        ("at_dtype", "a b", lambda a, b: a.at[0].set(b[0, :4, :5])),
        ("at_out_of_bounds", "a", lambda a: a.at[5].set(1)),
        ("at_divide_int", "a", lambda a: a.at[0].divide(2)),
        ("at_overflow", "a", lambda a: a.at[0].set(300)),
        ("at_traced_values", "b w", lambda b, w: b.at[1, :, 1].set(w)),
        # functions of _ufuncs that are not elementwise ops
        ("where", "mask a b", lambda m, a, b: tnp.where(m[:, :, :1], a, b[:3, :, 1])),
        ("where_bad", "mask v w", lambda m, v, w: tnp.where(m, v, w)),
        (
            "clip",
            "a b",
            lambda a, b: (
                tnp.clip(a, 0, 3),
                tnp.clip(a, min=b[0, :, :5]),
                a.clip(max=2.5),
            ),
        ),
        ("clip_complex", "c", lambda c: tnp.clip(c, 0)),
        (
            "power",
            "a b",
            lambda a, b: (tnp.power(a, 2), a ** b[:3, :, :5], tnp.power(b, a[0, 0])),
        ),
        ("power_negative", "a", lambda a: a**-1),
        ("divmod", "a b", lambda a, b: (divmod(a, 3), tnp.divmod(b, a[..., :1]))),
        (
            "complex_parts",
            "c",
            lambda c: (tnp.real(c), tnp.imag(c), tnp.angle(c), tnp.angle(c, deg=True)),
        ),
        ("round", "b a", lambda b, a: (tnp.round(b, 1), tnp.around(a, -1), round(b))),
        ("round_bool", "mask", lambda m: tnp.round(m)),
        # creation and conversion
        (
            "astype",
            "a",
            lambda a: (
                a.astype("float32"),
                tnp.astype(a, "bool"),
                a.astype(tnp.bfloat16),
            ),
        ),
        (
            "asarray",
            "a",
            lambda a: (
                tnp.asarray(a),
                tnp.asarray(a, dtype="int16"),
                tnp.array(a, ndmin=5),
                a.copy(),
            ),
        ),
        (
            "zeros",
            "a",
            lambda a: (
                tnp.zeros((3, 4)),
                tnp.ones(5, "int8"),
                tnp.empty((2, 0, 3), tnp.bool_),
            ),
        ),
        ("zeros_negative", "a", lambda a: tnp.zeros((3, -1))),
        ("zeros_bad_dtype", "a", lambda a: tnp.ones(3, "object")),
        ("zeros_bad_both", "a", lambda a: tnp.ones(-1, "object")),
        (
            "full",
            "a",
            lambda a: (
                tnp.full((2, 3), 7),
                tnp.full(4, 2.5, "bfloat16"),
                tnp.full((2, 5), C("v")),
            ),
        ),
        ("full_mismatch", "a", lambda a: tnp.full((2, 4), C("v"))),
        ("full_overflow", "a", lambda a: tnp.full(3, 300, "int8")),
        (
            "likes",
            "a",
            lambda a: (
                tnp.zeros_like(a),
                tnp.ones_like(a, "float32"),
                tnp.empty_like(a, shape=(2,)),
                tnp.full_like(a, 2),
            ),
        ),
        (
            "likes_concrete",
            "a",
            lambda a: (
                tnp.zeros_like(C("b")),
                tnp.full_like(C("m"), 3, shape=(2, 2)),
                tnp.ones_like(C("s")),
            ),
        ),
        ("full_like_overflow", "a", lambda a: tnp.full_like(a, 300)),
        ("like_negative_shape", "a", lambda a: tnp.zeros_like(a, shape=(-2,))),
        (
            "eye",
            "a",
            lambda a: (
                tnp.eye(3),
                tnp.eye(3, 4, 1, "int8"),
                tnp.identity(2, "bool"),
                tnp.eye(0),
            ),
        ),
        ("eye_negative", "a", lambda a: tnp.eye(-1)),
        (
            "arange",
            "a",
            lambda a: (
                tnp.arange(5),
                tnp.arange(1, 10, 3),
                tnp.arange(0, 1, 0.125),
                tnp.arange(10, 0, -3),
                tnp.arange(5.0),
                tnp.arange(2, 2),
            ),
        ),
        (
            "arange_dtype",
            "a",
            lambda a: (
                tnp.arange(200, dtype="uint8"),
                tnp.arange(-3, 3, 2, "int8"),
                tnp.arange(0, 2, 0.5, "int32"),
            ),
        ),
        ("arange_overflow", "a", lambda a: tnp.arange(300, dtype="int8")),
        (
            "arange_overflow_negative",
            "a",
            lambda a: tnp.arange(0, -300, -1, dtype="int8"),
        ),
        ("arange_zero_step", "a", lambda a: tnp.arange(0, 3, 0)),
        (
            "linspace",
            "a",
            lambda a: (
                tnp.linspace(0, 1, 5),
                tnp.linspace(0, 10, 4, dtype="int32"),
                tnp.linspace(0, 1, 7, endpoint=False, retstep=True),
                tnp.linspace(1, 2, 0),
            ),
        ),
        ("linspace_negative", "a", lambda a: tnp.linspace(0, 1, -2)),
    ]
)


def _outcome(fn: F, args: list[Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args)
        except Exception as exc:
            return exc


def _leaves(result: Any) -> list[Any]:
    if isinstance(result, tuple | list):
        return [leaf for item in result for leaf in _leaves(item)]
    return [result]


def _abstract(x: Any) -> Any:
    return (x.shape, x.dtype, x.weak_type)


# Errors about traced values: raised where the values are known (eagerly,
# when the jitted program runs), not by eval_shape, which knows none.
VALUE_ERRORS = {"index_traced_out_of_bounds"}


def _compare(eager: Any, other: Any, how: str, message: bool = True) -> None:
    if isinstance(eager, BaseException):
        assert isinstance(other, type(eager)), f"eager {eager!r}, {how} {other!r}"
        if message:
            assert str(other) == str(eager), f"eager {eager!r}, {how} {other!r}"
        return
    assert not isinstance(other, BaseException), f"eager {eager!r}, {how} {other!r}"
    assert [_abstract(x) for x in _leaves(other)] == [
        _abstract(x) for x in _leaves(eager)
    ], f"eager {eager!r}, {how} {other!r}"


add_cases(
    [
        # functions and ufunc methods completing jax.numpy's signatures
        ("ptp", "a", lambda a: (tnp.ptp(a), tnp.ptp(a, axis=1, keepdims=True))),
        ("ptp_bad_axis", "a", lambda a: tnp.ptp(a, axis=5)),
        ("trace", "a", lambda a: (tnp.trace(a), tnp.trace(a, 1, axis1=1, axis2=2))),
        ("trace_same_axes", "q", lambda q: tnp.trace(q, axis1=1, axis2=1)),
        (
            "diagonal",
            "a",
            lambda a: (
                tnp.diagonal(a),
                tnp.diagonal(a, offset=2, axis1=1, axis2=2),
                tnp.diagonal(a, offset=-2, axis1=2, axis2=0),
                tnp.diagonal(a, offset=9),
            ),
        ),
        ("diagonal_1d", "v", lambda v: tnp.diagonal(v)),
        (
            "searchsorted",
            "u v",
            lambda u, v: (tnp.searchsorted(u, v), tnp.searchsorted(u, 2, side="right")),
        ),
        ("searchsorted_2d", "n v", lambda n, v: tnp.searchsorted(n, v)),
        ("compress", "a", lambda a: tnp.compress(C("i") > 0, a, axis=1)),
        ("compress_flat", "b", lambda b: tnp.compress(C("i") > 0, b)),
        (
            "compress_negative_size",
            "b",
            lambda b: tnp.compress(C("i") > 0, b, size=-2),
        ),
        (
            "compress_traced_sized",
            "i a",
            lambda i, a: tnp.compress(i > 0, a, axis=1, size=4, fill_value=0),
        ),
        (
            "ufunc_reduce",
            "a",
            lambda a: (
                tnp.add.reduce(a),
                tnp.multiply.reduce(a, axis=(0, 2), keepdims=True),
                tnp.maximum.reduce(a, axis=None),
                tnp.logaddexp.reduce(a, axis=1),
            ),
        ),
        ("ufunc_reduce_bad_axis", "a", lambda a: tnp.subtract.reduce(a, axis=4)),
        (
            "ufunc_accumulate",
            "b",
            lambda b: (tnp.add.accumulate(b, axis=1), tnp.minimum.accumulate(b)),
        ),
        ("ufunc_outer", "v w", lambda v, w: tnp.multiply.outer(v, w)),
        ("ufunc_outer_nd", "m n", lambda m, n: tnp.bitwise_or.outer(n, n[:2])),
        (
            "ufunc_at",
            "u",
            lambda u: tnp.add.at(u, C("i"), 5, inplace=False),
        ),
        ("ufunc_reduceat", "u", lambda u: tnp.add.reduceat(u, C("i")[:2])),
    ]
)


IDS = [name for name, _, _ in CASES]


@pytest.mark.parametrize(("name", "fn", "names"), CASES, ids=IDS)
def test_eval_shape_and_jit_match_eager(name: str, fn: F, names: str) -> None:
    table = _arrays()
    args = [table[n] for n in names.split()]
    eager = _outcome(fn, args)
    shaped = _outcome(lambda *a: tl.eval_shape(fn, *a), args)
    if name in VALUE_ERRORS:
        assert isinstance(eager, IndexError)
        assert not isinstance(shaped, BaseException), shaped
    else:
        _compare(eager, shaped, "eval_shape")
    _compare(eager, _outcome(tl.jit(fn), args), "jit")


def test_cases_cover_the_namespace() -> None:
    """Every namespace function is exercised above (or has no array input)."""
    import inspect

    source = "\n".join(inspect.getsource(fn) for _, fn, _ in CASES)
    source += inspect.getsource(_arrays)
    no_arrays = {"broadcast_shapes", "can_cast", "promote_types", "result_type"}
    no_arrays |= {"finfo", "iinfo", "isdtype", "issubdtype"}
    missing = [
        name
        for name in tnp.__all__
        if callable(getattr(tnp, name))
        and hasattr(getattr(tnp, name), "_traced")
        and name not in no_arrays
        and f"tnp.{name}(" not in source
    ]
    assert not missing


def _random_key(rng: random.Random) -> tuple[Any, ...]:
    """An index: slices, integers, None, an ellipsis, integer index arrays
    (traced: their stand-in values, 1, are their values here) and concrete
    boolean masks, in any order."""

    def shape() -> tuple[int, ...]:
        return tuple(rng.choice([0, 1, 2, 3, 5]) for _ in range(rng.randint(0, 2)))

    def part() -> Any:
        c = rng.random()
        if c < 0.2:
            return slice(
                rng.choice([None, 0, 1, -1]),
                rng.choice([None, 2, -1]),
                rng.choice([None, 1, 2, -1]),
            )
        if c < 0.35:
            return rng.choice([0, 1, -1, 2])
        if c < 0.6:
            return tnp.ones(shape(), "int32")
        if c < 0.75:
            return None
        if c < 0.85:
            return Ellipsis
        size = rng.choice([0, 1, 2, 3, 5])
        return tnp.asarray(np.array([rng.random() < 0.5 for _ in range(size)]))

    return tuple(part() for _ in range(rng.randint(1, 4)))


def test_indexing_random_keys() -> None:
    """Indexing with arrays mixed with slices, None and ellipses, in every
    placement NumPy distinguishes: eval_shape gives the eager shape (or
    error class)."""
    rng = random.Random(7)
    for _ in range(400):
        x = tnp.ones(
            tuple(rng.choice([0, 1, 2, 3, 5]) for _ in range(rng.randint(0, 4)))
        )
        key = _random_key(rng)
        traced = [k for k in key if isinstance(k, tnp.Array) and k.dtype != bool]

        def f(x: Any, *indices: Any, key: Any = key) -> Any:
            it = iter(indices)
            return x[
                tuple(
                    next(it) if isinstance(k, tnp.Array) and k.dtype != bool else k
                    for k in key
                )
            ]

        eager = _outcome(f, [x, *traced])
        shaped = _outcome(lambda *a, f=f: tl.eval_shape(f, *a), [x, *traced])
        how = f"eval_shape of x{x.shape}[{key}]"
        if _out_of_bounds(eager) and traced:
            # The values of traced indices are known when the jitted
            # function runs, not to eval_shape: jit raises.
            jitted = _outcome(lambda *a, f=f: tl.jit(f)(*a), [x, *traced])
            _compare(eager, jitted, f"jit of x{x.shape}[{key}]")
            continue
        _compare(eager, shaped, how, message=False)


def _out_of_bounds(outcome: Any) -> bool:
    return isinstance(outcome, IndexError) and "out of bounds" in str(outcome)


# -- huge shapes -------------------------------------------------------------------

HUGE = S((100_000, 100_000), "int8")  # 10 GB, if it were allocated

HUGE_CASES: dict[str, tuple[F, Any]] = {
    "sum": (lambda x: x.sum(axis=0), S((100_000,), "int32")),
    "mean": (lambda x: x.mean(1), S((100_000,), "float32")),
    "var": (lambda x: tnp.var(x, ddof=1), S((), "float32")),
    "argmax": (lambda x: x.argmax(0), S((100_000,), "int32")),
    "cumsum": (lambda x: tnp.cumsum(x, 0), S((100_000, 100_000), "int8")),
    "cumsum_flat": (lambda x: tnp.cumsum(x), S((10**10,), "int8")),
    "matmul": (lambda x: x @ x, S((100_000, 100_000), "int8")),
    "einsum": (lambda x: tnp.einsum("ij,jk->ik", x, x), S((100_000, 100_000), "int8")),
    "tensordot": (lambda x: tnp.tensordot(x, x, 1), S((100_000, 100_000), "int8")),
    "vdot": (lambda x: tnp.vdot(x, x), S((), "int8")),
    "outer": (lambda x: tnp.outer(x[0], x[1]), S((100_000, 100_000), "int8")),
    "sort": (lambda x: tnp.sort(x), S((100_000, 100_000), "int8")),
    "argsort": (lambda x: tnp.argsort(x, axis=None), S((10**10,), "int32")),
    "concatenate": (lambda x: tnp.concatenate([x, x]), S((200_000, 100_000), "int8")),
    "stack": (lambda x: tnp.stack([x, x], 1), S((100_000, 2, 100_000), "int8")),
    "astype": (lambda x: x.astype("float32"), S((100_000, 100_000), "float32")),
    "reshape": (lambda x: x.reshape(-1), S((10**10,), "int8")),
    "ravel": (lambda x: x.ravel(), S((10**10,), "int8")),
    "transpose": (lambda x: x.T, S((100_000, 100_000), "int8")),
    "slice": (lambda x: x[::2], S((50_000, 100_000), "int8")),
    "index_array": (lambda x: x[tnp.arange(3)], S((3, 100_000), "int8")),
    "index_columns": (
        lambda x: x[:, tnp.zeros((2, 3), "int32")],
        S((100_000, 2, 3), "int8"),
    ),
    "take": (lambda x: tnp.take(x, tnp.arange(5)), S((5,), "int8")),
    "at_set": (lambda x: x.at[tnp.arange(3)].add(1), S((100_000, 100_000), "int8")),
    "where": (
        lambda x: tnp.where(x > 0, x, 0.5),
        S((100_000, 100_000), "float32", True),
    ),
    "clip": (lambda x: tnp.clip(x, 0, 3), S((100_000, 100_000), "int8")),
    "roll": (lambda x: tnp.roll(x, 1), S((100_000, 100_000), "int8")),
    "tile": (lambda x: tnp.tile(x, (1, 2)), S((100_000, 200_000), "int8")),
    "repeat": (lambda x: x.repeat(2, axis=0), S((200_000, 100_000), "int8")),
    "ptp": (lambda x: tnp.ptp(x, axis=1), S((100_000,), "int8")),
    "trace": (lambda x: tnp.trace(x), S((), "int32")),
    "diagonal": (lambda x: tnp.diagonal(x, offset=3), S((99_997,), "int8")),
    "searchsorted": (
        lambda x: tnp.searchsorted(x[0], x),
        S((100_000, 100_000), "int32"),
    ),
    "add.reduce": (lambda x: tnp.add.reduce(x), S((100_000,), "int32")),
    "maximum.accumulate": (
        lambda x: tnp.maximum.accumulate(x, axis=1),
        S((100_000, 100_000), "int8"),
    ),
    "multiply.outer": (
        lambda x: tnp.multiply.outer(x[0], x[:, 0]),
        S((100_000, 100_000), "int8"),
    ),
    "zeros": (
        lambda x: tnp.zeros((100_000, 100_000)),
        S((100_000, 100_000), "float32"),
    ),
    "full": (lambda x: tnp.full(x.shape, 2), S((100_000, 100_000), "int32", True)),
    "ones_like": (lambda x: tnp.ones_like(x, "bool"), S((100_000, 100_000), "bool")),
    "eye": (lambda x: tnp.eye(100_000, dtype="int8"), S((100_000, 100_000), "int8")),
    "arange": (lambda x: tnp.arange(10**10, dtype="float32"), S((10**10,), "float32")),
    "linspace": (lambda x: tnp.linspace(0, 1, 10**10), S((10**10,), "float32")),
}


@pytest.mark.parametrize("name", list(HUGE_CASES))
def test_huge_shapes_compute_nothing(name: str) -> None:
    fn, expected = HUGE_CASES[name]
    tracemalloc.start()
    try:
        out = tl.eval_shape(fn, HUGE)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert out == expected
    # Nothing of the arrays' real size (10 GB) was allocated.
    assert peak < 2_000_000, f"{peak} bytes"


def test_huge_shape_errors_are_raised_from_stand_ins() -> None:
    """Too big to evaluate for real, an invalid call raises the error the
    eager call raises (its class; shape functions check the real shapes)."""
    with pytest.raises(ValueError, match="concatenate: .*100000.* 5") as info:
        tl.eval_shape(lambda x: tnp.concatenate([x, x[:, :5]]), HUGE)
    assert "concatenate" in str(info.value)
    with pytest.raises(ValueError, match="out of bounds"):
        tl.eval_shape(lambda x: tnp.sum(x, axis=2), HUGE)
    with pytest.raises(OverflowError, match="does not fit in int32"):
        tl.eval_shape(lambda x: tnp.arange(10**10), HUGE)


def test_creation_gives_tracers_under_eval_shape_only() -> None:
    seen: list[Any] = []

    def f(x: Any) -> Any:
        z = tnp.zeros(3, "int8")
        seen.append(z)
        return z + x

    assert tl.eval_shape(f, 1) == S((3,), "int8")
    assert isinstance(seen[-1], tl.Tracer)
    with pytest.raises(tl.ConcretizationTypeError):
        tl.eval_shape(lambda x: int(tnp.arange(3)[1]) + x, 1)
    # Under jit too (as in JAX): the program makes them when it runs, so
    # tracing allocates nothing of their size.
    out = tl.jit(f)(1)
    assert isinstance(seen[-1], tl.Tracer)
    np.testing.assert_array_equal(np.asarray(out), [1, 1, 1])
    # Eager code is untouched.
    assert not isinstance(tnp.zeros(3), tl.Tracer)


def test_jit_traces_without_computing() -> None:
    """jit's trace uses the same rules: a program for huge inputs."""
    program = tl.jit(lambda x: (x.sum(axis=0), x @ x, tnp.sort(x))).program(HUGE)
    assert "int32[100000]" in str(program)


def test_operator_cases_of_the_operator_module() -> None:
    assert tl.eval_shape(operator.matmul, S((3, 4), "int8"), S((4,), "int16")) == S(
        (3,), "int16"
    )
