from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import typelattice as tl
import typelattice.numpy as tnp

DEFAULTS = {
    "enable_x64": False,
    "dtype_promotion": "standard",
    "explicit_x64_dtypes": "warn",
    "rank_promotion": "allow",
    "default_backend": "numpy",
    "default_device": None,
}


def test_defaults_and_update() -> None:
    assert tl.config.values() == {
        "enable_x64": False,
        "dtype_promotion": "standard",
        "explicit_x64_dtypes": "warn",
        "rank_promotion": "allow",
        "default_backend": "numpy",
        "default_device": None,
    }
    tl.config.update("enable_x64", True)
    assert tl.config.enable_x64 is True
    assert tl.result_type(1) == "int64"
    tl.config.update("rank_promotion", "raise")
    assert tl.config.rank_promotion == "raise"
    tl.config.reset()
    assert tl.config.enable_x64 is False


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("enable_x65", True, "unknown configuration flag 'enable_x65'.*enable_x64"),
        ("enable_x64", "yes", "enable_x64 must be True or False"),
        ("dtype_promotion", "loose", "'standard', 'strict'.*got 'loose'"),
        ("explicit_x64_dtypes", "ignore", "'warn', 'error', 'allow'"),
        ("rank_promotion", None, "'allow', 'warn', 'raise'"),
    ],
)
def test_bad_names_and_values_list_the_valid_ones(
    name: str, value: object, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        tl.config.update(name, value)
    assert tl.config.values()["dtype_promotion"] == "standard"


def test_scope_constructor_validates_at_once() -> None:
    with pytest.raises(ValueError, match="'standard', 'strict'"):
        tl.dtype_promotion("loose")
    with pytest.raises(ValueError, match="'allow', 'warn', 'raise'"):
        tl.rank_promotion("sometimes")


def test_attribute_assignment_points_to_update() -> None:
    with pytest.raises(AttributeError, match=r"config.update\('enable_x64'"):
        tl.config.enable_x64 = True  # type: ignore[misc]


def test_scopes_nest_and_restore() -> None:
    with tl.enable_x64():
        assert tl.result_type(1.0) == "float64"
        with tl.dtype_promotion("strict"):
            assert tl.config.enable_x64 and tl.config.dtype_promotion == "strict"
            with pytest.raises(tl.TypePromotionError):
                tl.result_type("int8", "uint8")
            with tl.enable_x64(False):
                assert tl.result_type(1.0) == "float32"
        assert tl.result_type("int8", "uint8") == "int16"
    assert tl.result_type(1.0) == "float32"


def test_scope_restores_after_an_exception() -> None:
    with pytest.raises(RuntimeError), tl.enable_x64():
        raise RuntimeError
    assert not tl.config.enable_x64


def test_scoped_value_wins_over_a_global_update_of_the_same_flag() -> None:
    with tl.enable_x64(True):
        tl.config.update("enable_x64", False)
        assert tl.config.enable_x64 is True
        tl.config.update("dtype_promotion", "strict")  # another flag: seen
        assert tl.config.dtype_promotion == "strict"
    assert tl.config.enable_x64 is False


def test_decorator_sync_and_async() -> None:
    @tl.enable_x64()
    def wide() -> str:
        return str(tl.result_type(1))

    @tl.dtype_promotion("strict")
    async def strict() -> str:
        await asyncio.sleep(0)
        return tl.config.dtype_promotion

    assert wide() == "int64" and wide() == "int64"
    assert asyncio.run(strict()) == "strict"
    assert tl.result_type(1) == "int32" and tl.config.dtype_promotion == "standard"
    assert wide.__name__ == "wide"


def test_threads_see_only_their_own_scopes() -> None:
    barrier = threading.Barrier(2)
    seen: dict[str, list[object]] = {}

    def worker(name: str, x64: bool, promotion: str) -> None:
        with tl.enable_x64(x64), tl.dtype_promotion(promotion):
            barrier.wait()  # both scopes are active at once
            out: list[object] = []
            for _ in range(200):
                out.append(tl.result_type(1.0))
                try:
                    out.append(tl.result_type("int8", "uint8"))
                except tl.TypePromotionError:
                    out.append("error")
            seen[name] = out
            barrier.wait()

    threads = [
        threading.Thread(target=worker, args=("a", True, "strict")),
        threading.Thread(target=worker, args=("b", False, "standard")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(map(str, seen["a"])) == {"float64", "error"}
    assert set(map(str, seen["b"])) == {"float32", "int16"}
    assert tl.config.values()["enable_x64"] is False


def test_asyncio_tasks_see_only_their_own_scopes() -> None:
    async def task(x64: bool, started: asyncio.Event, other: asyncio.Event) -> str:
        with tl.enable_x64(x64):
            started.set()
            await other.wait()  # the other task's scope is active now too
            await asyncio.sleep(0)
            return str(tl.result_type(1))

    async def main() -> list[str]:
        a, b = asyncio.Event(), asyncio.Event()
        return list(await asyncio.gather(task(True, a, b), task(False, b, a)))

    assert asyncio.run(main()) == ["int64", "int32"]


def test_a_task_inherits_its_creators_scope() -> None:
    async def child() -> bool:
        return tl.config.enable_x64

    async def main() -> bool:
        with tl.enable_x64():
            return await asyncio.create_task(child())

    assert asyncio.run(main()) is True


def run_with_env(env: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True
    )


def test_environment_variables_are_read_at_import() -> None:
    code = "import typelattice as t; print(t.config.values())"
    out = run_with_env(
        {"TYPELATTICE_ENABLE_X64": "1", "TYPELATTICE_DTYPE_PROMOTION": "strict"}, code
    )
    assert out.returncode == 0, out.stderr
    assert "'enable_x64': True" in out.stdout
    assert "'dtype_promotion': 'strict'" in out.stdout


def test_bad_environment_variable_names_the_variable() -> None:
    out = run_with_env({"TYPELATTICE_RANK_PROMOTION": "nope"}, "import typelattice")
    assert out.returncode != 0
    assert "TYPELATTICE_RANK_PROMOTION='nope'" in out.stderr
    assert "'allow', 'warn', 'raise'" in out.stderr


# One scope object shared by threads, tasks and generators. Each probe reads
# what its flag does to real operations (through the C accelerator when it
# is built), so a flag lost or left behind shows in the results.


def _x64_probe() -> object:
    x = tnp.ones(3, "int32")
    return (
        str(tl.result_type(1.0)),
        str((x + 1.5).dtype),  # elementwise plan memo
        str(_jitted_add(x).dtype),  # jitted call, keyed on the state
    )


def _jitted_add_impl(a: tnp.Array) -> tnp.Array:
    return a + 1.5


_jitted_add = tl.jit(_jitted_add_impl)


def _promotion_probe() -> object:
    try:
        return str(tl.result_type("int8", "uint8"))
    except tl.TypePromotionError:
        return "strict"


def _explicit_probe() -> object:
    try:
        return str(tnp.zeros(2, "int64").dtype)
    except ValueError:
        return "error"
    except tl.X64DtypeWarning:  # the suite turns warnings into errors
        return "warn"


def _rank_probe() -> object:
    try:
        return (tnp.ones((2, 3)) + tnp.ones(3)).shape
    except ValueError:
        return "raise"


SHARED_SCOPES = {
    "enable_x64": (
        lambda: tl.enable_x64(),
        _x64_probe,
        ("float64", "float64", "float64"),
        ("float32", "float32", "float32"),
    ),
    "dtype_promotion": (
        lambda: tl.dtype_promotion("strict"),
        _promotion_probe,
        "strict",
        "int16",
    ),
    "explicit_x64_dtypes": (
        lambda: tl.explicit_x64_dtypes("error"),
        _explicit_probe,
        "error",
        "warn",
    ),
    "rank_promotion": (
        lambda: tl.rank_promotion("raise"),
        _rank_probe,
        "raise",
        (2, 3),
    ),
}


@pytest.fixture
def tiny_switch_interval() -> Iterator[None]:
    """Switch threads every microsecond, so that races show."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def run_threads(work: Callable[[], None], count: int = 8) -> list[str]:
    """Run ``work`` in ``count`` threads at once; the errors they raised."""
    barrier = threading.Barrier(count)
    errors: list[str] = []

    def start() -> None:
        barrier.wait()
        try:
            work()
        except BaseException as err:  # noqa: BLE001 - reported by the test
            errors.append(repr(err))

    threads = [threading.Thread(target=start) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@pytest.mark.usefixtures("tiny_switch_interval")
@pytest.mark.parametrize("kind", SHARED_SCOPES)
def test_one_scope_object_entered_by_many_threads(kind: str) -> None:
    make, probe, inside, outside = SHARED_SCOPES[kind]
    scope = make()
    seen: list[tuple[object, object]] = []

    def work() -> None:
        for _ in range(100):
            with scope:
                got_inside = probe()
            seen.append((got_inside, probe()))

    assert run_threads(work) == []
    assert set(seen) == {(inside, outside)}
    assert probe() == outside
    assert tl.config.values() == DEFAULTS


@pytest.mark.usefixtures("tiny_switch_interval")
@pytest.mark.parametrize("kind", SHARED_SCOPES)
def test_one_scope_object_reentered_while_in_force(kind: str) -> None:
    make, probe, inside, outside = SHARED_SCOPES[kind]
    scope = make()
    seen: list[tuple[object, ...]] = []

    def work() -> None:
        for _ in range(50):
            with scope:
                with scope:
                    innermost = probe()
                between = probe()
            seen.append((innermost, between, probe()))

    assert run_threads(work) == []
    assert set(seen) == {(inside, inside, outside)}
    assert tl.config.values() == DEFAULTS


@pytest.mark.usefixtures("tiny_switch_interval")
def test_one_decorator_on_a_function_run_by_many_threads() -> None:
    @tl.enable_x64()
    def wide() -> object:
        return _x64_probe()

    seen: list[tuple[object, object]] = []

    def work() -> None:
        for _ in range(100):
            seen.append((wide(), _x64_probe()))

    assert run_threads(work) == []
    assert set(seen) == {(SHARED_SCOPES["enable_x64"][2], _x64_probe())}
    assert tl.config.enable_x64 is False


@pytest.mark.usefixtures("tiny_switch_interval")
@pytest.mark.parametrize("kind", SHARED_SCOPES)
def test_one_scope_object_entered_by_many_asyncio_tasks(kind: str) -> None:
    make, probe, inside, outside = SHARED_SCOPES[kind]
    scope = make()

    async def in_scope() -> list[object]:
        seen = []
        for _ in range(20):
            with scope:
                await asyncio.sleep(0)  # the other tasks enter and exit here
                seen.append(probe())
                with scope:
                    await asyncio.sleep(0)
                    seen.append(probe())
            await asyncio.sleep(0)
            seen.append(probe())
        return seen

    @scope
    async def decorated() -> object:
        await asyncio.sleep(0)
        return probe()

    async def outside_scope() -> list[object]:
        seen = []
        for _ in range(40):
            await asyncio.sleep(0)
            seen.append(probe())
        return seen

    async def main() -> list[Any]:
        return list(
            await asyncio.gather(
                *(in_scope() for _ in range(8)),
                *(decorated() for _ in range(8)),
                outside_scope(),
            )
        )

    results = asyncio.run(main())
    for seen in results[:8]:
        assert seen == [inside, inside, outside] * 20
    assert results[8:16] == [inside] * 8
    assert set(results[16]) == {outside}
    assert probe() == outside
    assert tl.config.values() == DEFAULTS


def test_generators_closed_in_any_order_leave_no_flag_behind() -> None:
    x64 = tl.enable_x64()
    strict = tl.dtype_promotion("strict")

    def inside(scope: Any) -> Iterator[None]:
        with scope:
            yield

    first, second = inside(x64), inside(strict)
    next(first)
    next(second)
    assert tl.config.enable_x64 and tl.config.dtype_promotion == "strict"
    first.close()  # entered first, closed first: the strict scope stays
    assert tl.config.enable_x64 is False
    assert tl.config.dtype_promotion == "strict"
    second.close()
    assert tl.config.values() == DEFAULTS


def test_generator_exits_restore_the_flags() -> None:
    x64 = tl.enable_x64()

    def numbers() -> Iterator[str]:
        with x64:
            for _ in range(3):
                yield str(tl.result_type(1))

    assert list(numbers()) == ["int64"] * 3
    assert tl.config.enable_x64 is False

    early = numbers()
    assert next(early) == "int64"
    early.close()
    assert tl.config.enable_x64 is False

    thrown = numbers()
    next(thrown)
    with pytest.raises(KeyError):
        thrown.throw(KeyError("stop"))
    assert tl.config.values() == DEFAULTS


def test_exceptions_through_nested_reuse_restore_the_flags() -> None:
    x64 = tl.enable_x64()
    with pytest.raises(ZeroDivisionError), x64, tl.dtype_promotion("strict"), x64:
        assert tl.config.enable_x64 and tl.config.dtype_promotion == "strict"
        1 / 0  # noqa: B018
    assert tl.config.values() == DEFAULTS


def test_exit_where_the_scope_was_not_entered_says_so() -> None:
    x64 = tl.enable_x64()
    x64.__enter__()
    errors: list[BaseException] = []

    def exit_here() -> None:
        try:
            x64.__exit__(None, None, None)
        except RuntimeError as err:
            errors.append(err)

    thread = threading.Thread(target=exit_here)
    thread.start()
    thread.join()
    assert len(errors) == 1
    assert "enable_x64(True)" in str(errors[0])
    assert "same thread and task" in str(errors[0])
    assert tl.config.enable_x64 is True  # this thread's scope is untouched
    x64.__exit__(None, None, None)
    assert tl.config.enable_x64 is False
    with pytest.raises(RuntimeError, match="enable_x64"):
        x64.__exit__(None, None, None)
