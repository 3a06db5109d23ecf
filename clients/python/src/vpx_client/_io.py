"""The one difference between the sync and async clients that is not a keyword: how to wait."""

from __future__ import annotations

import asyncio
import time


async def async_sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


def sync_sleep(seconds: float) -> None:
    time.sleep(seconds)
