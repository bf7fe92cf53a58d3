"""Every function of the namespace golden shows only ``lax`` primitives in
its record: ``make_jaxpr`` of each golden call (ones as values, every mode)
holds no equation named after a namespace function, except the functions
listed below, which are still recorded as one call."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import typelattice as tl
import typelattice.numpy as tnp
from test_paths_agree import _split, cases, make_operand, outcome, rec

#: Namespace functions still recorded whole, each with why. The list must
#: only shrink.
RECORDED_WHOLE: dict[str, str] = {}


@pytest.mark.parametrize("mode", list(rec.MODES))
def test_every_golden_call_records_primitives_only(mode: str) -> None:
    x64, promotion = rec.MODES[mode]
    failures: list[str] = []
    count = 0
    with tl.enable_x64(x64), tl.dtype_promotion(promotion):
        all_cases = list(cases(mode))
        labels = {label for _, combo in all_cases for label in combo}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = {label: make_operand(label, False) for label in labels}
        for op, combo in all_cases:
            operands = [values[label] for label in combo]
            if isinstance(outcome("eager", op, operands), BaseException):
                continue
            positions, merge = _split(operands)

            def f(*arrays: Any, op: Any = op, merge: Any = merge) -> Any:
                return op.fn(tnp, *merge(*arrays))

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    record = tl.make_jaxpr(f)(*[operands[i] for i in positions])
                except Exception as err:  # noqa: BLE001 (reported below)
                    failures.append(f"{op.expr} {combo}: {type(err).__name__}")
                    continue
            count += 1
            whole = [
                e.name
                for e in record.eqns
                if isinstance(e.primitive, str)
                and e.name.rsplit(".", 1)[-1] not in RECORDED_WHOLE
            ]
            if whole:
                failures.append(f"{op.expr} {combo}: {whole}")
    assert count > 0
    shown = "\n".join(failures[:25])
    assert not failures, f"{len(failures)} of {count} records:\n{shown}"
