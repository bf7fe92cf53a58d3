"""Timing shared by the benchmarks: interleaved best-of-rounds with timeit."""

from __future__ import annotations

import timeit


def best_seconds(
    timers: dict[str, timeit.Timer],
    *,
    warmup: int,
    rounds: int,
    round_seconds: float,
    calibration_seconds: float,
) -> dict[str, float]:
    """Seconds per run of each timer: the best of ``rounds`` rounds.

    Each timer first runs ``warmup`` times (caches, first-call paths,
    compilation), then the number of runs per round is calibrated so a round
    lasts about ``round_seconds``. The rounds of the timers are interleaved,
    so a change of machine load during the measurement affects them alike;
    the minimum is the least disturbed.
    """
    numbers: dict[str, int] = {}
    for name, timer in timers.items():
        timer.timeit(number=warmup)
        number = 1
        while True:
            elapsed = timer.timeit(number=number)
            if elapsed >= calibration_seconds:
                break
            number *= 4
        numbers[name] = max(1, round(number * round_seconds / elapsed))
    best = dict.fromkeys(timers, float("inf"))
    for _ in range(rounds):
        for name, timer in timers.items():
            best[name] = min(
                best[name], timer.timeit(number=numbers[name]) / numbers[name]
            )
    return best
