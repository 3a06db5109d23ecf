"""D30: an export of 100,000 rows keeps the server's memory flat.

A real uvicorn process serves the download; its peak resident memory (VmHWM) is measured around
the download of a 1,000-row export and of a 100,000-row export. Nothing here is timed.
"""

from __future__ import annotations

import httpx
import pytest

from tests.dashboard.live_server import LiveServer, live_server
from tests.exports.conftest import bulk_revealed
from tests.factories import Factory
from vpx.config import Settings

pytestmark = pytest.mark.asyncio

BIG, SMALL = 100_000, 1_000
URL = "/api/v1/exports/contacts.csv"


def download(server: LiveServer, key: str) -> tuple[int, int, int]:
    """Streams the export, keeping nothing; returns (bytes, lines, peak RSS growth in KiB)."""
    server.reset_peak_rss()
    before = server.peak_rss_kib()
    size = lines = 0
    with httpx.stream("GET", server.url + URL, headers={"X-API-Key": key}, timeout=300) as response:
        assert response.status_code == 200
        for chunk in response.iter_bytes():
            size += len(chunk)
            lines += chunk.count(b"\n")  # rows end in CRLF; a chunk may split the pair
    return size, lines, server.peak_rss_kib() - before


@pytest.mark.slow
async def test_export_of_100000_rows_keeps_memory_flat(factory: Factory, settings: Settings) -> None:
    big, small = await factory.account(), await factory.account()
    now = factory.clock.now()
    await bulk_revealed(factory, big.id, BIG, now=now)
    await bulk_revealed(factory, small.id, SMALL, now=now)
    # No worker in the server process: its rounds (folds, the search check, the test-mode feed) would
    # add their own peaks to the export's (a CI run measured 35 MB for the big export, 4 MB for the small).
    with live_server(settings.database_url, worker_in_process="false") as server:
        download(server, small.keys["live"])  # warm-up: imports, statement caches, pools
        small_size, small_lines, small_growth = download(server, small.keys["live"])
        big_size, big_lines, big_growth = download(server, big.keys["live"])
    print(f"\nsmall {small_size} B growth {small_growth} KiB; big {big_size} B growth {big_growth} KiB")
    assert small_lines == SMALL + 1 and big_lines == BIG + 1
    # The CSV is ~100 times larger, the memory it takes is not: a few MiB of batch, at most.
    assert big_size > 15 * 1024 * 1024
    assert big_growth < small_growth + 16 * 1024, (small_growth, big_growth)
