from __future__ import annotations

from collections.abc import Iterator

import pytest

import typelattice as tl
from typelattice import _config


@pytest.fixture(autouse=True)
def _clean_config() -> Iterator[None]:
    """Every test starts and ends with the import-time configuration."""
    tl.config.reset()
    token = _config._scope.set(None)
    yield
    _config._scope.reset(token)
    tl.config.reset()
