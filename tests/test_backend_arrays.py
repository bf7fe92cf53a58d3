"""Arrays of another library: what a user of a non-NumPy backend sees.

Written against the boxed backend (``tests/boxed_backend.py``: NumPy arrays
behind the backend module contract, on the fake devices ``'box:0'`` and
``'box:1'``), so they run without torch, CuPy or Dask. The goldens are
replayed on every installed backend by ``test_backend_replay.py``.
"""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import threading
from typing import Any

import numpy as np
import pytest

import boxed_backend
import typelattice as tl
import typelattice.numpy as tnp
import typelattice.random as tr
from typelattice import lax
from typelattice._backends import NUMPY, named, of_native

boxed_backend.register()


#: Every native result checked against its abstract evaluation.
pytestmark = pytest.mark.usefixtures("checked_native")


def boxed(values: Any, dtype: str = "float32", device: str = "box:0") -> Any:
    return tnp.asarray(np.asarray(values, dtype), backend="boxed", device=device)


def box_of(x: Any) -> boxed_backend.Box:
    """The native value an Array holds (the package's slot, read here to
    check that nothing changes it)."""
    value = x._value  # pyright: ignore[reportAttributeAccessIssue]
    assert type(value) is boxed_backend.Box
    return value


# -- the array ------------------------------------------------------------------


def test_properties_backend_device_and_repr() -> None:
    x = boxed([[1, 2, 3], [4, 5, 6]], "int16", "box:1")
    assert isinstance(x, tnp.Array)
    assert (x.dtype, x.shape, x.weak_type, x.ndim, x.size, x.nbytes) == (
        np.dtype("int16"),
        (2, 3),
        False,
        2,
        6,
        12,
    )
    assert (x.backend, x.device, x.devices()) == ("boxed", "box:1", {"box:1"})
    assert repr(x) == (
        "Array([[1, 2, 3],\n       [4, 5, 6]], dtype=int16, backend='boxed', "
        "device='box:1')"
    )
    assert tnp.ones(2).backend == "numpy"
    assert repr(boxed(np.zeros((0, 2)))).startswith("Array([], shape=(0, 2)")
    big = boxed(np.zeros(5000))
    assert repr(big) == (
        "Array(shape=(5000,), dtype=float32, backend='boxed', device='box:0')"
    )


def test_python_protocols() -> None:
    x = boxed([1.5, 2.5])
    assert np.asarray(x).tolist() == [1.5, 2.5] and x.tolist() == [1.5, 2.5]
    assert float(x[0]) == 1.5 and int(boxed(3, "int32")) == 3
    assert bool(boxed(1, "bool")) and len(x) == 2
    assert [float(v) for v in x] == [1.5, 2.5]
    assert format(x[1], ".2f") == "2.50" and str(x) == "[1.5 2.5]"
    assert x.item(1) == 2.5 and x.tobytes() == np.float32([1.5, 2.5]).tobytes()
    assert copy.copy(x) is x and copy.deepcopy(x) is x and x.block_until_ready() is x
    assert x.__array_namespace__() is tnp and tnp.ones(1).__array_namespace__() is tnp


def test_numpy_gets_read_only_data_and_copies_on_request() -> None:
    x = boxed([1, 2])
    view = np.asarray(x)
    assert not view.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 5
    owned = np.array(x)
    owned[0] = 5
    assert x.tolist() == [1, 2]
    assert np.asarray(x, dtype="float64").dtype == np.float64
    with pytest.raises(ValueError, match="copy=False"):
        x.__array__(np.dtype("float64"), copy=False)


def test_dlpack_delegates_to_the_library() -> None:
    x = boxed([1, 2, 3], "int32")
    assert np.from_dlpack(x).tolist() == [1, 2, 3]
    assert x.__dlpack_device__() == (1, 0)


def test_pickle_round_trips_on_the_backend_and_device() -> None:
    x = tnp.asarray(2.0, backend="boxed", device="box:1")
    y = pickle.loads(pickle.dumps(x))
    assert (y.backend, y.device, y.dtype, y.weak_type) == (
        "boxed",
        "box:1",
        x.dtype,
        True,
    )
    assert float(y) == 2.0


def test_immutable_nothing_writes_the_native_value() -> None:
    x = boxed([1, 2, 3])
    before = box_of(x).value.copy()
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 9
    _ = x.at[0].set(9), x + 1, -x, tnp.sort(x), x.reshape(3, 1), x * x
    assert np.array_equal(box_of(x).value, before)


# -- computing on the backend ---------------------------------------------------


def test_results_stay_on_the_backend_and_device_with_the_lattices_dtypes() -> None:
    i = boxed([1, 2], "int32", "box:1")
    f = boxed([0.5, 0.25], "float32", "box:1")
    for out, dtype, weak in [
        (i + f, "float32", False),
        (i + 2, "int32", False),
        (i * 2.5, "float32", True),  # (as JAX: int32 * a Python float)
        (boxed([1, 2], "uint8", "box:1") + 255, "uint8", False),
        (tnp.sum(f), "float32", False),
        (lax.add(f, 1.0), "float32", False),
        (tnp.asarray(2, backend="boxed", device="box:1") + 1, "int32", True),
    ]:
        assert (out.backend, out.device, out.dtype, out.weak_type) == (
            "boxed",
            "box:1",
            np.dtype(dtype),
            weak,
        ), out
    assert (i + f).tolist() == [1.5, 2.25]


def test_one_answer_on_every_path() -> None:
    """Eager, jit, grad and vmap on the boxed backend equal NumPy's."""
    data = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)

    def f(a: Any) -> Any:
        return tnp.sum(tnp.tanh(a) * a + tnp.exp(-a))

    for make in (tnp.asarray, lambda v: boxed(v)):
        x = make(data)
        eager, jitted = f(x), tl.jit(f)(x)
        g = tl.grad(f)(x)
        v = tl.vmap(lambda r: tnp.max(r * 2.0))(x)
        results = [np.asarray(r) for r in (eager, jitted, g, v)]
        if make is tnp.asarray:
            expected = results
        else:
            assert all(r.backend == "boxed" for r in (eager, jitted, g, v))
            for got, want in zip(results, expected, strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-6)
    shape = tl.eval_shape(f, boxed(data))
    assert (shape.shape, shape.dtype) == ((), np.dtype("float32"))


def test_jit_keeps_one_program_per_backend_and_device() -> None:
    boxed_impls = named("boxed").impls
    calls: list[str] = []
    from typelattice._lax._elementwise import tanh_p

    original = boxed_impls[tanh_p]

    def counted(x: Any) -> Any:
        calls.append("tanh")
        return original(x)

    boxed_impls[tanh_p] = counted
    try:
        f = tl.jit(lambda a, s: (tnp.sum(tnp.tanh(a) * s + tnp.zeros(3)), a[:, ::2]))
        data = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
        on_numpy = f(tnp.asarray(data), 2.0)
        for device in ("box:0", "box:1", "box:0"):
            total, part = f(boxed(data, device=device), 2.0)
            assert (total.device, part.device) == (device, device)
            np.testing.assert_allclose(float(total), float(on_numpy[0]), rtol=1e-6)
            assert part.tolist() == on_numpy[1].tolist()
        # NumPy's program, then one per device (a later call of box:0 runs
        # its program: the boxed tanh called by the program, not retraced).
        assert f.cache_info().misses == 3 and calls == ["tanh"] * 3
    finally:
        boxed_impls[tanh_p] = original
    with pytest.raises(TypeError, match="two backends or devices"):
        f(boxed(data), tnp.ones(2))


def test_a_jitted_gradient_moves_nothing_to_the_device_per_call() -> None:
    backend = named("boxed")
    moved: list[tuple[int, ...]] = []
    original = backend.from_numpy

    def counted(value: Any, device: Any = None) -> Any:
        moved.append(np.shape(value))
        return original(value, device)

    def loss(w: Any, x: Any) -> Any:
        return tnp.mean(tl.nn.relu(x @ w) ** 2)

    step = tl.jit(lambda w, x: w - 0.1 * tl.grad(loss)(w, x))
    w, x = boxed(np.ones((3, 2))), boxed(np.arange(12.0).reshape(4, 3) - 5)
    backend.from_numpy = counted
    try:
        first = step(w, x)
        made = len(moved)  # (the program's constants, once)
        second = step(first, x)
        assert len(moved) == made  # (the zeros of relu's rule made there)
    finally:
        backend.from_numpy = original
    want = np.asarray(w) - 0.1 * np.asarray(
        tl.grad(loss)(tnp.asarray(w), tnp.asarray(x))
    )
    np.testing.assert_allclose(np.asarray(first), want, rtol=1e-6)
    assert second.backend == "boxed"


def test_control_flow_and_forward_mode_on_the_backend() -> None:
    x = boxed([[1.0, 2.0], [3.0, 4.0]])
    assert lax.cond(True, lambda a: a + 1, lambda a: a - 1, x).backend == "boxed"
    loop = lax.fori_loop(0, 3, lambda i, a: a * 2, x)
    assert loop.backend == "boxed" and loop.tolist() == [[8, 16], [24, 32]]
    carry, ys = lax.scan(lambda c, r: (c + r, c * r), tnp.zeros(2, backend="boxed"), x)
    assert (carry.backend, ys.backend) == ("boxed", "boxed")
    assert carry.tolist() == [4, 6] and ys.tolist() == [[0, 0], [3, 8]]
    out, tangent = tl.jvp(lambda a: tnp.sum(a * a), (x,), (tnp.ones_like(x),))
    assert (out.backend, tangent.backend, float(tangent)) == ("boxed", "boxed", 20.0)


def test_gradients_of_linear_functions_and_unused_arguments_follow_the_inputs() -> None:
    x, y = boxed([1.0, 2.0], device="box:1"), boxed([3.0, 4.0], device="box:1")
    gx, gy = tl.grad(lambda a, b: tnp.sum(a * 2.0), argnums=(0, 1))(x, y)
    assert (gx.device, gy.device) == ("box:1", "box:1")
    assert gx.tolist() == [2, 2] and gy.tolist() == [0, 0]


def test_data_safety_checks_hold_on_the_backend() -> None:
    numer, denom = [7, -7, 3], [0, 2, -2]
    on_numpy = tnp.asarray(numer) // tnp.asarray(denom)
    on_boxed = boxed(numer, "int32") // boxed(denom, "int32")
    assert on_boxed.tolist() == on_numpy.tolist()
    with pytest.raises(OverflowError, match="int8"):
        tnp.asarray(boxed([1, 300], "int32"), dtype="int8")
    with pytest.raises(OverflowError, match="fit"):
        _ = boxed([1, 2], "uint8") + 300


def test_random_keys_draw_on_their_backend() -> None:
    key = tnp.asarray(tr.PRNGKey(3), backend="boxed", device="box:1")
    draw = tr.normal(key, (4,))
    assert (draw.backend, draw.device) == ("boxed", "box:1")
    np.testing.assert_array_equal(
        np.asarray(draw), np.asarray(tr.normal(tr.PRNGKey(3), (4,)))
    )
    a, _ = tr.split(key)
    assert a.backend == "boxed"


# -- mixing ---------------------------------------------------------------------


def test_scalars_and_0d_numpy_arrays_join_larger_numpy_arrays_raise() -> None:
    x = boxed([1.0, 2.0])
    assert (x + tnp.asarray(1.0)).backend == "boxed"
    assert (x + np.float32(1.0)).backend == "boxed"
    with pytest.raises(TypeError, match=r"boxed on 'box:0'.*numpy on 'cpu'.*to_device"):
        _ = x + tnp.ones(2)
    with pytest.raises(TypeError, match="asarray"):
        _ = np.ones(2, np.float32) + x
    with pytest.raises(TypeError, match="two backends or devices"):
        tnp.where(tnp.asarray([True, False]), x, x)


def _raw(x: Any) -> Any:
    """A NumPy-held Array as a NumPy array (lax's functions take the
    constants of rules as NumPy-held Arrays: a caller's NumPy arrays are
    what they refuse)."""
    return np.asarray(x) if x.backend == "numpy" else x


@pytest.mark.parametrize(
    "join",
    [
        lambda x, n: tnp.concatenate([x, n]),
        lambda x, n: tnp.stack([n, x]),
        lambda x, n: tnp.matmul(x, n),
        lambda x, n: tnp.dot(n, x),
        lambda x, n: tnp.outer(x, n),
        lambda x, n: tnp.einsum("i,i", x, n),
        lambda x, n: tnp.searchsorted(x, n),
        lambda x, n: x.at[:].set(n),
        lambda x, n: x.at[0:2].add(n),
        lambda x, n: lax.add(x, _raw(n)),
        lambda x, n: lax.select(x > 0, x, _raw(n)),
    ],
)
def test_functions_joining_arrays_refuse_larger_numpy_arrays(join: Any) -> None:
    x = boxed([1.0, 2.0])
    with pytest.raises(TypeError, match=r"boxed on 'box:0'.*numpy on 'cpu'.*to_device"):
        join(x, tnp.ones(2))
    assert join(x, x).backend == "boxed"


def test_two_devices_raise_until_moved() -> None:
    a, b = boxed([1.0], device="box:0"), boxed([2.0], device="box:1")
    with pytest.raises(TypeError, match=r"box:0.*box:1"):
        _ = a + b
    with pytest.raises(TypeError, match=r"box:0.*box:1"):
        lax.add(a, b)
    moved = b.to_device("box:0")
    assert moved.device == "box:0" and (a + moved).tolist() == [3.0]
    assert b.to_device("box:1") is b


# -- making arrays --------------------------------------------------------------


def test_asarray_of_a_native_array_holds_it_and_narrows_64_bits() -> None:
    box = boxed_backend.from_numpy(np.arange(3, dtype=np.int32), "box:1")
    x = tnp.asarray(box)
    assert (x.backend, x.device) == ("boxed", "box:1") and box_of(x) is box
    assert box_of(tnp.asarray(box, copy=True)) is not box
    wide = boxed_backend.from_numpy(np.arange(3, dtype=np.float64))
    assert tnp.asarray(wide).dtype == np.float32
    with tl.enable_x64():
        assert tnp.asarray(wide).dtype == np.float64
    with pytest.raises(OverflowError, match="float32"):
        tnp.asarray(boxed_backend.from_numpy(np.array([1e300])))
    assert of_native(np.ones(2)) is None and of_native(box) is named("boxed")


def test_asarray_moves_between_backends_on_request() -> None:
    x = tnp.asarray(np.arange(3), backend="boxed", device="box:1")
    assert (x.backend, x.device, x.dtype) == ("boxed", "box:1", np.dtype("int32"))
    back = tnp.asarray(x, backend="numpy")
    assert back.backend == "numpy" and back.tolist() == [0, 1, 2]
    assert tnp.asarray(x) is x
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        tnp.asarray(1, backend="nope")
    with pytest.raises(ValueError, match="backend='torch'"):
        tnp.asarray(1, device="cuda")
    with pytest.raises(ValueError, match="CPU only"):
        tnp.ones(2).to_device("cuda:0")
    assert tnp.ones(2).to_device("cpu").backend == "numpy"


def test_creation_functions_take_device_and_backend() -> None:
    made = [
        tnp.zeros(3, backend="boxed", device="box:1"),
        tnp.ones((2, 2), "int8", backend="boxed", device="box:1"),
        tnp.empty(2, backend="boxed", device="box:1"),
        tnp.full(2, 7, backend="boxed", device="box:1"),
        tnp.arange(4, backend="boxed", device="box:1"),
        tnp.linspace(0, 1, 3, backend="boxed", device="box:1"),
        tnp.eye(2, backend="boxed", device="box:1"),
        tnp.zeros_like(boxed([1, 2], "int8", "box:1")),
        tnp.full_like(boxed([1, 2], "int8", "box:1"), 3),
    ]
    for x in made:
        assert (x.backend, x.device) == ("boxed", "box:1"), x
    assert made[3].weak_type and made[3].tolist() == [7, 7]
    assert tnp.ones_like(made[0], device="box:0").device == "box:0"
    assert tnp.zeros_like(made[0], backend="numpy").backend == "numpy"


def test_default_backend_scope() -> None:
    assert tl.default_backend() == "cpu"
    with tl.default_backend("boxed", device="box:1"):
        x = tnp.ones(2)
        assert (x.backend, x.device) == ("boxed", "box:1")
        assert tnp.asarray([1, 2]).backend == "boxed"
        assert tnp.asarray(tnp.asarray(1.0, backend="numpy")).backend == "numpy"
        # A result of Python scalars alone is a new array: made there too.
        y = tnp.add(1, 2.5)
        assert (y.backend, y.device, y.dtype, y.weak_type) == (
            "boxed",
            "box:1",
            np.dtype("float32"),
            True,
        )
        assert tnp.sin(1.0).backend == "boxed"
    assert tnp.ones(2).backend == "numpy"
    assert tnp.add(1, 2.5).backend == "numpy"

    @tl.default_backend("boxed")
    def make() -> Any:
        return tnp.zeros(1)

    assert make().backend == "boxed"
    seen: list[str] = []
    with tl.default_backend("boxed"):
        worker = threading.Thread(target=lambda: seen.append(tnp.zeros(1).backend))
        worker.start()
        worker.join()
    assert seen == ["numpy"]  # (a scope is the thread's own)
    tl.config.update("default_backend", "boxed")
    try:
        assert tnp.zeros(1).backend == "boxed"
    finally:
        tl.config.update("default_backend", "numpy")
    with pytest.raises(ValueError, match="default_backend"):
        tl.config.update("default_backend", "no such")


def test_a_wrong_native_result_is_caught_in_the_tests() -> None:
    backend = named("boxed")
    from typelattice._lax._elementwise import neg_p

    good = backend.impls[neg_p]
    backend.impls[neg_p] = lambda x: boxed_backend.Box(
        (-x.value).astype(np.float64), x.device
    )
    try:
        with pytest.raises(TypeError, match="abstract evaluation"):
            lax.neg(boxed([1.0]))
    finally:
        backend.impls[neg_p] = good
    assert NUMPY.name == "numpy"


def test_importing_typelattice_imports_no_array_library() -> None:
    code = (
        "import sys, typelattice, typelattice.numpy, typelattice.nn, "
        "typelattice.random, typelattice.optim\n"
        "print(sorted(m for m in ('torch', 'cupy', 'dask') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_device_put_moves_trees_within_and_across_backends() -> None:
    tree = tl.device_put({"a": 1.0, "b": tnp.ones(2)}, "box:1", backend="boxed")
    assert {k: (v.backend, v.device) for k, v in tree.items()} == {
        "a": ("boxed", "box:1"),
        "b": ("boxed", "box:1"),
    }
    assert tree["a"].weak_type
    x = tnp.ones(2, backend="boxed")
    assert tl.device_put(x, "box:1").device == "box:1"
    assert tl.device_put(x, backend="numpy").backend == "numpy"
    assert tl.device_put(x) is x
    with pytest.raises(ValueError, match="device=None"):
        tl.device_put(1.0, "gpu:0")


def test_layers_initialise_and_run_on_the_default_backend() -> None:
    import typelattice.nn as nn

    with tl.default_backend("boxed", device="box:1"):
        model = nn.Dense(3)
        params = model.init(tr.PRNGKey(0), tnp.ones((2, 4)))
        out = model.apply(params, tnp.ones((2, 4)))
    leaves = tl.tree_util.tree_leaves(params)
    assert leaves and all((p.backend, p.device) == ("boxed", "box:1") for p in leaves)
    assert (out.backend, out.device, out.shape) == ("boxed", "box:1", (2, 3))
    x = tnp.ones((2, 4))
    on_numpy = model.apply(model.init(tr.PRNGKey(0), x), x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(on_numpy), rtol=1e-6)
