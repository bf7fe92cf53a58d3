from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading

import pytest

import typelattice as tl


def test_defaults_and_update() -> None:
    assert tl.config.values() == {
        "enable_x64": False,
        "dtype_promotion": "standard",
        "explicit_x64_dtypes": "warn",
        "rank_promotion": "allow",
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
