"""Downloads from a fake publisher on loopback: conditional requests, a connection cut half-way
(resumed with Range, each byte fetched once), 429 with Retry-After, 5xx then success, a 5xx that
outlasts the run's budget."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.sources.conftest import QUICK
from tests.sources.publisher import Fault, Publisher
from vpx.sources.fetch import Fetcher, SourceFailed, Validators, retry_after_seconds

BODY = os.urandom(300_000)


@pytest.fixture
async def fetcher() -> AsyncIterator[Fetcher]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield Fetcher(client, policy=QUICK)


async def test_a_304_costs_one_request_and_leaves_no_file(
    publisher: Publisher, fetcher: Fetcher, tmp_path: Path
) -> None:
    publisher.serve("/f.csv", BODY, etag='"v1"')
    first = await fetcher.download(publisher.url("/f.csv"), tmp_path / "f.csv")
    assert not first.not_modified and first.path is not None and first.path.read_bytes() == BODY
    assert first.validators.etag == '"v1"' and first.validators.size == len(BODY)
    again = await fetcher.download(publisher.url("/f.csv"), tmp_path / "g.csv", validators=first.validators)
    assert again.not_modified and again.path is None and not (tmp_path / "g.csv").exists()
    [asked] = publisher.requests_for("/f.csv")[1:]
    assert (asked.headers["if-none-match"], asked.status) == ('"v1"', 304)
    assert fetcher.requests == 2


async def test_the_same_bytes_without_validators_count_as_unchanged(
    publisher: Publisher, fetcher: Fetcher, tmp_path: Path
) -> None:
    publisher.serve("/f.csv", BODY, etag=None, last_modified=None)
    first = await fetcher.download(publisher.url("/f.csv"), tmp_path / "f.csv")
    assert first.validators.sha256 and not first.not_modified
    again = await fetcher.download(publisher.url("/f.csv"), tmp_path / "g.csv", validators=first.validators)
    assert again.not_modified and not (tmp_path / "g.csv").exists()


async def test_a_cut_connection_resumes_with_range_and_fetches_each_byte_once(
    publisher: Publisher, fetcher: Fetcher, tmp_path: Path
) -> None:
    publisher.serve("/big.zip", BODY, etag='"big"')
    publisher.fail_next("/big.zip", Fault(cut_after=100_000), Fault(cut_after=50_000))
    got = await fetcher.download(publisher.url("/big.zip"), tmp_path / "big.zip")
    assert got.path is not None and got.path.read_bytes() == BODY and got.resumed == 2
    asked = publisher.requests_for("/big.zip")
    assert [r.status for r in asked] == [200, 206, 206]
    assert "range" not in asked[0].headers
    assert (asked[1].headers["range"], asked[1].headers["if-range"]) == ("bytes=100000-", '"big"')
    assert asked[2].headers["range"] == "bytes=150000-"
    assert fetcher.bytes_downloaded == len(BODY)  # nothing fetched twice
    assert not (tmp_path / "big.zip.part").exists() and not (tmp_path / "big.zip.part.json").exists()


async def test_a_partial_download_left_by_a_killed_run_goes_on_in_the_next(
    publisher: Publisher, fetcher: Fetcher, tmp_path: Path
) -> None:
    publisher.serve("/big.zip", BODY, etag='"big"')
    publisher.fail_next("/big.zip", *[Fault(cut_after=10_000)] * (QUICK.resumes + 1))
    with pytest.raises(SourceFailed) as failure:
        await fetcher.download(publisher.url("/big.zip"), tmp_path / "big.zip")
    assert failure.value.code == "incomplete_download"
    held = (tmp_path / "big.zip.part").stat().st_size
    assert held == 10_000 * (QUICK.resumes + 1)
    got = await fetcher.download(publisher.url("/big.zip"), tmp_path / "big.zip")
    assert got.path is not None and got.path.read_bytes() == BODY
    assert publisher.requests_for("/big.zip")[-1].headers["range"] == f"bytes={held}-"


async def test_a_changed_file_is_not_resumed_onto_old_bytes(
    publisher: Publisher, fetcher: Fetcher, tmp_path: Path
) -> None:
    publisher.serve("/f.zip", BODY, etag='"old"')
    publisher.fail_next("/f.zip", *[Fault(cut_after=1000)] * (QUICK.resumes + 1))
    with pytest.raises(SourceFailed):
        await fetcher.download(publisher.url("/f.zip"), tmp_path / "f.zip")
    fresh = os.urandom(5000)
    publisher.serve("/f.zip", fresh, etag='"new"')
    got = await fetcher.download(publisher.url("/f.zip"), tmp_path / "f.zip")
    assert got.path is not None and got.path.read_bytes() == fresh  # If-Range did not match: a whole 200


async def test_429_waits_its_retry_after(publisher: Publisher, fetcher: Fetcher, tmp_path: Path) -> None:
    publisher.serve("/f.csv", BODY)
    publisher.fail_next("/f.csv", Fault(status=429, headers={"Retry-After": "1"}))
    started = time.monotonic()
    got = await fetcher.download(publisher.url("/f.csv"), tmp_path / "f.csv")
    assert got.path is not None and time.monotonic() - started >= 1.0
    assert [r.status for r in publisher.requests_for("/f.csv")] == [429, 200]


async def test_429_asking_more_than_the_run_waits_fails_at_once(
    publisher: Publisher, fetcher: Fetcher, tmp_path: Path
) -> None:
    publisher.serve("/f.csv", BODY)
    publisher.fail_next("/f.csv", Fault(status=429, headers={"Retry-After": "3600"}))
    started = time.monotonic()
    with pytest.raises(SourceFailed) as failure:
        await fetcher.download(publisher.url("/f.csv"), tmp_path / "f.csv")
    assert failure.value.code == "rate_limited" and "3600" in str(failure.value)
    assert time.monotonic() - started < 1.0


async def test_5xx_then_success(publisher: Publisher, fetcher: Fetcher, tmp_path: Path) -> None:
    publisher.serve("/f.csv", BODY)
    publisher.fail_next("/f.csv", Fault(status=503), Fault(status=502))
    got = await fetcher.download(publisher.url("/f.csv"), tmp_path / "f.csv")
    assert got.path is not None and [r.status for r in publisher.requests_for("/f.csv")] == [503, 502, 200]


async def test_a_5xx_that_outlasts_the_budget_fails(publisher: Publisher, fetcher: Fetcher, tmp_path: Path) -> None:
    publisher.serve("/f.csv", BODY)
    publisher.down["/f.csv"] = 503
    started = time.monotonic()
    with pytest.raises(SourceFailed) as failure:
        await fetcher.download(publisher.url("/f.csv"), tmp_path / "f.csv")
    assert failure.value.code == "server_error" and "503" in str(failure.value)
    assert QUICK.server_error_budget - 0.3 <= time.monotonic() - started < QUICK.server_error_budget + 2


async def test_a_page_answers_304_with_its_validators(publisher: Publisher, fetcher: Fetcher) -> None:
    publisher.serve("/page.html", b"<a href='./x.zip'>x</a>", etag='"p1"', content_type="text/html; charset=utf-8")
    page = await fetcher.get(publisher.url("/page.html"))
    assert page.text.startswith("<a") and page.validators == Validators(
        etag='"p1"', last_modified="Mon, 09 Nov 2026 06:00:00 GMT"
    )
    again = await fetcher.get(publisher.url("/page.html"), validators=page.validators)
    assert again.not_modified


def test_retry_after_reads_seconds_and_dates() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 11, 9, 6, 0, tzinfo=UTC)
    assert retry_after_seconds("120") == 120
    assert retry_after_seconds("Mon, 09 Nov 2026 06:00:30 GMT", now) == 30
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
