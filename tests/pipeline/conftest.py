from __future__ import annotations

import pytest


@pytest.fixture
async def harnesses():
    opened = []
    yield opened
    for harness in opened:
        await harness.store.close()
