"""A source's limits against a hostile or broken publisher: the options that set them (defaults,
refusals as problem documents that change nothing), a download larger than ``max_download`` (said
up front or found while streaming), a zip bomb (refused by its ratio before a byte is written), a
file that unzips past ``max_unpacked``, a zip whose member holds more than it declares, a line longer
than ``max_line``; each refused run names why in its report and leaves no file behind."""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.registries.formats import write_cslb
from tests.sources.conftest import ADMIN, QUICK, add_source, run_source
from tests.sources.formats import xlsx
from tests.sources.publisher import Publisher
from tests.sources.test_cli import vpx
from tests.sources.test_runs import LICENCE
from vpx.config import Settings
from vpx.models import Contact
from vpx.sources.fetch import Fetcher, SourceFailed
from vpx.sources.limits import GB, MB, Limits, parse_seconds, parse_size
from vpx.sources.unpack import xlsx_rows

HEADERS = {"X-Admin-Token": ADMIN}
BASE = "/api/v1/admin/sources"


def zipped(name: str, body: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr(name, body)
    return out.getvalue()


def declaring(archive: bytes, size: int) -> bytes:
    """The one-member zip with its member's uncompressed size rewritten to ``size`` in both headers
    (a publisher's archive that lies about what it holds)."""
    data = bytearray(archive)
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    struct.pack_into("<I", data, local + 22, size)
    struct.pack_into("<I", data, central + 24, size)
    return bytes(data)


def files_left(settings: Settings, name: str) -> list[str]:
    folder = Path(settings.data_dir) / "sources" / name
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def entries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
async def small_fetcher() -> AsyncIterator[Fetcher]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield Fetcher(client, policy=QUICK, limits=Limits(max_download=1 * MB))


def test_sizes_and_times_read_as_operators_write_them() -> None:
    assert parse_size("10GB") == parse_size("10 gib") == 10 * GB
    assert parse_size("1.5GB") == 1536 * MB and parse_size("1048576") == MB and parse_size("2,048") == 2048
    assert (parse_seconds("30s"), parse_seconds("5m"), parse_seconds("6h"), parse_seconds("1d")) == (
        30, 300, 21_600, 86_400,
    )  # fmt: skip
    for bad in ("lots", "10 GBs", "-1MB", "1e9"):
        with pytest.raises(ValueError):
            parse_size(bad)
    limits = Limits.of({"max_download": "20GB", "max_ratio": "50", "stall_timeout": "2m"})
    assert (limits.max_download, limits.max_ratio, limits.stall_timeout) == (20 * GB, 50, 120)
    assert (limits.max_unpacked, limits.max_line, limits.max_run_time) == (32 * GB, MB, 6 * 3600)  # the defaults


async def test_limits_are_options_of_every_kind_and_bad_values_change_nothing(client: httpx.AsyncClient) -> None:
    url = "http://127.0.0.1:9/f.csv"
    cases = [
        ({"max_download": "lots"}, "options.max_download", "'lots' is not a size such as 500MB, 10GB or 1TB"),
        ({"max_download": "10KB"}, "options.max_download", "must be from 1MB to 4TB"),
        ({"max_unpacked": "0"}, "options.max_unpacked", "must be from 1MB to 16TB"),
        ({"max_ratio": "1"}, "options.max_ratio", "must be a whole number from 2 to 1000"),
        ({"max_line": "1GB"}, "options.max_line", "must be from 1KB to 64MB"),
        ({"max_run_time": "0s"}, "options.max_run_time", "must be from 1s to 7d"),
        ({"stall_timeout": "forever"}, "options.stall_timeout", "'forever' is not a time such as 30s, 5m, 6h or 1d"),
    ]
    for options, field, message in cases:
        refused = await client.post(
            BASE, json={"name": "x", "kind": "nucc", "url": url, "options": options}, headers=HEADERS
        )
        assert refused.status_code == 422, refused.text
        assert refused.headers["content-type"].startswith("application/problem+json")
        problem = refused.json()
        assert problem["code"] == "invalid_parameters"
        [error] = problem["errors"]
        assert error["field"] == field and error["message"].startswith(message), problem
    assert (await client.get(BASE, headers=HEADERS)).json() == {"sources": []}
    options = {"max_download": "20 GB", "max_ratio": "100:1", "max_run_time": "90m", "stall_timeout": "120s"}
    created = await client.post(
        BASE, json={"name": "x", "kind": "cslb", "url": url, "options": options}, headers=HEADERS
    )
    assert created.status_code == 201, created.text
    assert created.json()["options"] == {
        "max_download": "20GB", "max_ratio": "100", "max_run_time": "90m", "stall_timeout": "2m",
    }  # fmt: skip


async def test_the_command_line_names_a_bad_limit(app: FastAPI, settings: Settings) -> None:
    refused = await vpx(
        settings, "sources", "add", "x", "nucc", "--url", "http://127.0.0.1:9/f.csv", "--option", "max_ratio=5000",
        code=2,
    )  # fmt: skip
    assert refused["error"]["message"] == "--option max_ratio: must be a whole number from 2 to 1000 (200 or 200:1: " \
        "a file may unzip to 200 times its size)"  # fmt: skip
    assert await vpx(settings, "sources", "list") == {"sources": []}


async def test_a_download_announced_larger_than_the_cap_is_refused_before_its_body(
    publisher: Publisher, small_fetcher: Fetcher, tmp_path: Path
) -> None:
    publisher.serve("/big.zip", os.urandom(2 * MB))
    with pytest.raises(SourceFailed) as refused:
        await small_fetcher.download(publisher.url("/big.zip"), tmp_path / "big.zip")
    assert refused.value.code == "download_too_large"
    assert str(refused.value) == (
        f"{publisher.url('/big.zip')} is 2 MB; this source downloads at most max_download=1MB"
    )
    assert small_fetcher.bytes_downloaded == 0 and entries(tmp_path) == []


async def test_a_download_that_goes_past_the_cap_unannounced_is_stopped_and_removed(
    publisher: Publisher, small_fetcher: Fetcher, tmp_path: Path
) -> None:
    publisher.serve("/big.zip", os.urandom(3 * MB), send_length=False)
    with pytest.raises(SourceFailed) as refused:
        await small_fetcher.download(publisher.url("/big.zip"), tmp_path / "big.zip")
    assert refused.value.code == "download_too_large" and "answered more than 1 MB" in str(refused.value)
    assert small_fetcher.bytes_downloaded <= MB and entries(tmp_path) == []
    publisher.serve("/page.json", b"[" + b"1," * MB + b"1]", send_length=False)
    with pytest.raises(SourceFailed) as page:
        await small_fetcher.get(publisher.url("/page.json"))
    assert page.value.code == "download_too_large"


async def test_a_zip_bomb_is_refused_before_a_byte_is_unpacked(
    app: FastAPI, settings: Settings, publisher: Publisher
) -> None:
    publisher.serve("/cslb.zip", zipped("licences.csv", b"\0" * (64 * MB)))  # ~64 KB, 1000:1
    await add_source(app, "cslb", "cslb", publisher.url("/cslb.zip"))
    report = await run_source(app, settings, "cslb")
    assert report.status == "failed" and report.error is not None
    assert report.error["code"] == "compression_ratio"
    assert "licences.csv unzips to 1" in report.error["message"] and "(max_ratio=200)" in report.error["message"]
    assert files_left(settings, "cslb") == []


async def test_a_file_past_max_unpacked_is_refused_and_the_default_admits_the_real_ones(
    app: FastAPI, settings: Settings, publisher: Publisher, tmp_path: Path
) -> None:
    licences = write_cslb(tmp_path / "cslb.csv", [LICENCE] * 3).read_bytes()
    publisher.serve("/cslb.zip", zipped("licences.csv", licences + os.urandom(2 * MB).hex().encode()))
    await add_source(app, "small", "cslb", publisher.url("/cslb.zip"), options={"max_unpacked": "1MB"})
    report = await run_source(app, settings, "small")
    assert report.error is not None and report.error["code"] == "unpacked_too_large"
    assert "licences.csv unzips to 4 MB, more than this source unzips (max_unpacked=1MB)" in report.error["message"]
    assert files_left(settings, "small") == []
    publisher.serve("/ok.zip", zipped("licences.csv", licences))
    await add_source(app, "cslb", "cslb", publisher.url("/ok.zip"))
    assert (await run_source(app, settings, "cslb")).status == "ok"


async def test_a_member_that_holds_more_than_it_declares_is_never_written_past_it(
    app: FastAPI, settings: Settings, publisher: Publisher
) -> None:
    publisher.serve("/cslb.zip", declaring(zipped("licences.csv", b"A," * (8 * MB)), 1000))
    await add_source(app, "cslb", "cslb", publisher.url("/cslb.zip"))
    report = await run_source(app, settings, "cslb")
    assert report.status == "failed" and report.error is not None
    assert report.error["code"] == "unexpected_layout" and "licences.csv cannot be unpacked" in report.error["message"]
    assert files_left(settings, "cslb") == []


async def test_a_line_longer_than_max_line_is_refused_before_the_importer_reads_it(
    app: FastAPI, settings: Settings, publisher: Publisher, tmp_path: Path
) -> None:
    licences = write_cslb(tmp_path / "cslb.csv", [LICENCE]).read_bytes()
    publisher.serve("/cslb.csv", licences + b"1000002," + b"X" * (2 * MB) + b"\r\n")
    await add_source(app, "cslb", "cslb", publisher.url("/cslb.csv"))
    report = await run_source(app, settings, "cslb")
    assert report.status == "failed" and report.error is not None
    assert (report.error["code"], report.error["message"]) == (
        "line_too_long", "cslb.csv: line 2 is longer than 1 MB, the longest line this source reads (max_line); it "
        "was not read",
    )  # fmt: skip
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Contact)) == 0
    assert files_left(settings, "cslb") == []


def test_a_spreadsheet_part_past_the_ratio_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain.xlsx"
    plain.write_bytes(xlsx([["NPI", "NPPES Deactivation Date"], ["1234567893", "45000"]]))
    assert list(xlsx_rows(plain, Limits()))[1] == ["1234567893", "45000"]
    bomb = tmp_path / "report.xlsx"
    with zipfile.ZipFile(plain) as book, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for item in book.infolist():
            body = book.read(item)
            if item.filename == "xl/sharedStrings.xml":
                body = body.replace(b"<sst ", b"<sst " + b" " * (16 * MB), 1)  # 16 MB of nothing
            out.writestr(item.filename, body)
    with pytest.raises(SourceFailed) as refused:
        list(xlsx_rows(bomb, Limits()))
    assert refused.value.code == "compression_ratio" and "xl/sharedStrings.xml" in str(refused.value)


def test_lines_are_measured_without_holding_one(tmp_path: Path) -> None:
    from vpx.sources.unpack import check_lines

    text = tmp_path / "f.csv"
    text.write_bytes(b"a,b\r\n" + b"1," + b"x" * 5000 + b"\r\n" + b"2,y\n" + b"3," + b"z" * 9000)
    check_lines(text, 9002)
    for most, line in ((9001, 4), (5001, 2)):
        with pytest.raises(SourceFailed) as refused:
            check_lines(text, most)
        assert f"line {line} is longer" in str(refused.value)
    assert zlib.crc32(text.read_bytes())  # the file is left as it was
