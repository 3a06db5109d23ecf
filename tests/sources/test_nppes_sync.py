"""NPPES kept current from a fake CMS download page on loopback: the monthly full file, then the weekly
files after it in order, then the deactivation report (a zipped .xlsx); a weekly file that deactivates
records; an unchanged page costing one conditional request; a cut connection during the monthly file
(resumed, nothing imported twice); a changed layout refused before any write; both databases."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.conftest import SHARED_DATA
from tests.registries.formats import write_nucc
from tests.sources.conftest import add_source, later, run_source, source_row
from tests.sources.formats import deactivation_zip, npi_files_page, nppes_csv, nppes_zip
from tests.sources.publisher import Fault, Publisher
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import Contact, ContactSource, RegistryRecord
from vpx.sources.kinds.nppes import classify, files_on_page

CLINIC = {
    "npi": "1234567893", "entity": "2", "org": "SMILE BRIGHT DENTAL, PLLC", "street": "500 MAIN ST",
    "city": "BOISE", "state": "ID", "zip": "837021234", "country": "US", "phone": "2085550143",
    "taxonomy1": "1223G0001X", "licence1": "D-4471", "licence_state1": "ID", "switch1": "Y",
}  # fmt: skip
DOCTOR = {
    "npi": "1987654321", "entity": "1", "last": "NAKAMURA", "first": "KENJI", "credential": "MD",
    "street": "12 ELM AVE", "city": "SPOKANE", "state": "WA", "zip": "99201", "country": "US", "phone": "5095550120",
    "taxonomy1": "207RC0000X", "licence1": "MD60012345", "licence_state1": "WA", "switch1": "Y",
}  # fmt: skip
VET = {
    "npi": "1555555551", "entity": "2", "org": "RIVERSIDE ANIMAL HOSPITAL", "street": "9 RIVER RD",
    "city": "BEND", "state": "OR", "zip": "97701", "country": "US", "phone": "5415550100",
    "taxonomy1": "174M00000X", "switch1": "Y",
}  # fmt: skip
MONTHLY = "NPPES_Data_Dissemination_November_2026_V2.zip"
MONTHLY_V1 = "NPPES_Data_Dissemination_November_2026.zip"
OLD_WEEKLY = "NPPES_Data_Dissemination_110226_110826_Weekly_V2.zip"
WEEKLY = "NPPES_Data_Dissemination_110926_111526_Weekly_V2.zip"
NEXT_WEEKLY = "NPPES_Data_Dissemination_111626_112226_Weekly_V2.zip"
REPORT = "NPPES_Deactivated_NPI_Report_111026_V2.zip"


@pytest.fixture
async def nucc(app: FastAPI, settings: Settings, publisher: Publisher, tmp_path: Path) -> None:
    """The taxonomy code set synced first (NPPES needs it), through a nucc source."""
    publisher.serve("/nucc_taxonomy_251.csv", write_nucc(tmp_path / "nucc.csv").read_bytes())
    await add_source(app, "nucc", "nucc", publisher.url("/nucc_taxonomy_251.csv"))
    report = await run_source(app, settings, "nucc")
    assert (report.status, report.created) == ("ok", 8), report.error


def publish(publisher: Publisher, names: list[str]) -> None:
    publisher.serve("/nppes/NPI_Files.html", npi_files_page(names), content_type="text/html")


async def contacts(app: FastAPI) -> dict[str, str]:
    """NPI -> the contact's status."""
    async with app.state.database.read_sessions() as session:
        rows = await session.execute(
            select(ContactSource.record_id, Contact.status)
            .join(Contact, Contact.id == ContactSource.contact_id)
            .where(ContactSource.registry_name == "nppes")
        )
        return {npi: status for npi, status in rows}


def test_the_page_links_are_read_as_cms_names_them() -> None:
    page = [MONTHLY, MONTHLY_V1, OLD_WEEKLY, WEEKLY, REPORT, "NPPES_Data_Dissemination_Readme.pdf"]
    found = files_on_page([f"https://download.cms.gov/nppes/{name}" for name in page])
    assert [f.name for f in found] == [MONTHLY, OLD_WEEKLY, REPORT, WEEKLY]  # V2 preferred, in date order
    weekly = classify(f"https://download.cms.gov/nppes/{WEEKLY}")
    assert weekly is not None and (weekly.kind, weekly.first, weekly.last) == (
        "weekly", date(2026, 11, 9), date(2026, 11, 15),
    )  # fmt: skip
    assert classify("https://download.cms.gov/nppes/NPPES_Data_Dissemination_Sept_2026.zip") is not None


async def test_monthly_then_weeklies_then_deactivations(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock, nucc: None
) -> None:
    publisher.serve(f"/nppes/{MONTHLY}", nppes_zip([CLINIC, DOCTOR, VET], first="20050523", last="20261108"))
    publisher.serve(f"/nppes/{MONTHLY_V1}", b"the V1 file is not to be fetched")
    publisher.serve(f"/nppes/{OLD_WEEKLY}", b"covered by the monthly file: not to be fetched")
    # The weekly file lists the vet's NPI as deactivated (an empty entity type and the date).
    publisher.serve(
        f"/nppes/{WEEKLY}",
        nppes_zip([{**DOCTOR, "phone": "5095550199"}, {"npi": VET["npi"], "deactivated": "11/12/2026"}],
                  first="20261109", last="20261115"),
    )  # fmt: skip
    publisher.serve(f"/nppes/{REPORT}", deactivation_zip([(CLINIC["npi"], "11/10/2026")], day="20261110"))
    publish(publisher, [MONTHLY, MONTHLY_V1, OLD_WEEKLY, WEEKLY, REPORT])
    await add_source(app, "nppes", "nppes", publisher.url("/nppes/NPI_Files.html"), every="1d")

    report = await run_source(app, settings, "nppes")
    assert report.status == "ok", report.error
    applied = [(f.name, f.status) for f in report.files]
    assert applied == [
        ("npidata_pfile_20050523-20261108.csv", "applied"),
        (OLD_WEEKLY, "skipped"),
        ("deactivated_npi_report_20261110.csv", "applied"),
        ("npidata_pfile_20261109-20261115.csv", "applied"),
    ]
    assert (report.created, report.updated, report.deactivated) == (3, 1, 2)
    assert publisher.requests_for(f"/nppes/{MONTHLY_V1}") == publisher.requests_for(f"/nppes/{OLD_WEEKLY}") == []
    assert await contacts(app) == {
        CLINIC["npi"]: "deactivated", DOCTOR["npi"]: "active", VET["npi"]: "deactivated",
    }  # fmt: skip
    source = await source_row(app, "nppes")
    assert source.newest_record_at == datetime(2026, 11, 15, tzinfo=UTC)
    assert source.watermark["monthly"] == MONTHLY and source.watermark["through"] == "2026-11-08"
    assert set(source.watermark["applied"]) == {MONTHLY, OLD_WEEKLY, WEEKLY, REPORT}
    assert (source.rows_created, source.rows_updated, source.rows_deactivated) == (3, 1, 2)

    # The page unchanged: one conditional request, nothing else.
    before = len(publisher.seen)
    later(clock, days=1)
    again = await run_source(app, settings, "nppes")
    assert (again.status, again.requests) == ("not_modified", 1)
    assert [s.status for s in publisher.seen[before:]] == [304]

    # A new weekly file on the page: only it is fetched.
    publisher.serve(
        f"/nppes/{NEXT_WEEKLY}",
        nppes_zip([{"npi": DOCTOR["npi"], "deactivated": "11/20/2026"}], first="20261116", last="20261122"),
    )
    publish(publisher, [MONTHLY, OLD_WEEKLY, WEEKLY, NEXT_WEEKLY, REPORT])
    before = len(publisher.seen)
    third = await run_source(app, settings, "nppes")
    assert third.status == "ok" and [f.name for f in third.files] == ["npidata_pfile_20261116-20261122.csv"]
    assert [s.path for s in publisher.seen[before:]] == ["/nppes/NPI_Files.html", f"/nppes/{NEXT_WEEKLY}"]
    assert (await contacts(app))[DOCTOR["npi"]] == "deactivated"


async def test_a_cut_during_the_monthly_file_resumes_and_imports_once(
    app: FastAPI, settings: Settings, publisher: Publisher, nucc: None
) -> None:
    body = nppes_zip([CLINIC, DOCTOR, VET], first="20050523", last="20261108")
    publisher.serve(f"/nppes/{MONTHLY}", body)
    publisher.fail_next(f"/nppes/{MONTHLY}", Fault(cut_after=len(body) // 2))
    publish(publisher, [MONTHLY])
    await add_source(app, "nppes", "nppes", publisher.url("/nppes/NPI_Files.html"))
    report = await run_source(app, settings, "nppes")
    assert report.status == "ok", report.error
    assert [r.status for r in publisher.requests_for(f"/nppes/{MONTHLY}")] == [200, 206]
    assert report.bytes_downloaded == len(body) + len(npi_files_page([MONTHLY]))
    assert (report.rows_read, report.created) == (3, 3)
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(RegistryRecord)) == 3


async def test_a_changed_layout_is_refused_before_any_write(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock, nucc: None
) -> None:
    renamed = nppes_csv([CLINIC, DOCTOR]).replace(
        b'"Provider Business Practice Location Address City Name"', b'"Practice City"', 1
    )
    publisher.serve(f"/nppes/{MONTHLY}", nppes_zip([], first="20050523", last="20261108", data=renamed))
    publish(publisher, [MONTHLY])
    await add_source(app, "nppes", "nppes", publisher.url("/nppes/NPI_Files.html"), every="1d")
    report = await run_source(app, settings, "nppes")
    assert report.status == "failed" and report.error is not None
    assert report.error["code"] == "unexpected_layout"
    assert "Provider Business Practice Location Address City Name" in report.error["message"]
    assert await contacts(app) == {}
    source = await source_row(app, "nppes")
    assert (source.consecutive_failures, source.watermark) == (1, {})
    assert source.last_error == report.error["message"]
    # Retried sooner than its interval, and not in a tight loop.
    assert 60 <= (source.next_run_at - clock.now()).total_seconds() <= 600

    # The publisher fixes its file: the next run succeeds and clears the failure.
    publisher.serve(f"/nppes/{MONTHLY}", nppes_zip([CLINIC, DOCTOR], first="20050523", last="20261108"))
    later(clock, minutes=10)
    fixed = await run_source(app, settings, "nppes")
    assert fixed.status == "ok" and fixed.created == 2
    source = await source_row(app, "nppes")
    assert (source.consecutive_failures, source.last_error, source.last_success_at) == (0, None, clock.now())


async def test_without_the_taxonomy_the_run_fails_and_nothing_is_marked_applied(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock
) -> None:
    publisher.serve(f"/nppes/{MONTHLY}", nppes_zip([CLINIC], first="20050523", last="20261108"))
    publish(publisher, [MONTHLY])
    await add_source(app, "nppes", "nppes", publisher.url("/nppes/NPI_Files.html"))
    failed = await run_source(app, settings, "nppes")
    assert failed.error is not None and failed.error["code"] == "taxonomy_missing"
    assert (await source_row(app, "nppes")).watermark == {}


async def test_a_url_ending_in_zip_names_one_file(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock, nucc: None
) -> None:
    publisher.serve(f"/nppes/{WEEKLY}", nppes_zip([CLINIC], first="20261109", last="20261115"))
    await add_source(app, "week", "nppes", publisher.url(f"/nppes/{WEEKLY}"))
    first = await run_source(app, settings, "week")
    assert (first.status, first.created) == ("ok", 1)
    later(clock, hours=1)
    again = await run_source(app, settings, "week")
    assert (again.status, again.requests) == ("not_modified", 1)


async def test_the_real_samples_zipped_as_cms_ships_them(
    app: FastAPI, settings: Settings, publisher: Publisher
) -> None:
    nppes_sample = SHARED_DATA / "nppes" / "npidata_pfile_sample_k0bl.csv"
    nucc_sample = SHARED_DATA / "nppes" / "nucc_taxonomy_150.csv"
    if not (nppes_sample.is_file() and nucc_sample.is_file()):
        pytest.skip(f"the shared NPPES and NUCC samples are not under {SHARED_DATA}")
    publisher.serve("/nucc_taxonomy_150.csv", nucc_sample.read_bytes())
    await add_source(app, "nucc", "nucc", publisher.url("/nucc_taxonomy_150.csv"))
    assert (await run_source(app, settings, "nucc")).created == 834
    publisher.serve(
        f"/nppes/{MONTHLY}", nppes_zip([], first="20050523", last="20180211", data=nppes_sample.read_bytes())
    )
    publish(publisher, [MONTHLY])
    await add_source(app, "nppes", "nppes", publisher.url("/nppes/NPI_Files.html"))
    report = await run_source(app, settings, "nppes")
    assert report.status == "ok" and report.rows_read == 499, report.error
    assert report.created > 400 and report.newest_record_at == datetime(2018, 2, 11, tzinfo=UTC)
