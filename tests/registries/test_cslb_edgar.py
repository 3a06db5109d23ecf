"""CSLB and EDGAR imports on the real samples and on small files in their formats."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.registries.conftest import Importer, catalogue_counts, shared
from tests.registries.formats import write_cslb
from tests.registries.test_nppes import _contact
from vpx.models import DecisionMaker, RegistryRecord
from vpx.registries import companies as company_service
from vpx.registries.edgar import read_index
from vpx.registries.reader import ImportFailed

pytestmark = pytest.mark.asyncio

SOLAR = {
    "LicenseNo": "1099001", "LastUpdate": "11/10/2020", "BusinessName": "RIVERA ANA SOLAR",
    "FullBusinessName": "ANA RIVERA SOLAR",
    "MailingAddress": "77 SUNNY LN", "City": "FRESNO", "State": "CA", "ZIPCode": "937211234",
    "BusinessPhone": "(559) 555 0101", "BusinessType": "Sole Owner", "PrimaryStatus": "CLEAR",
    "Classifications(s)": "C-10| C46", "NAME-TP-2": "",
}  # fmt: skip


async def test_cslb_sample_field_by_field(app: FastAPI, run_import: Importer) -> None:
    path = shared("licenses", "ca_cslb_MasterLicenseData_noheader.csv")
    summary = await run_import("cslb", path)
    assert (summary.rows_read, summary.created, summary.merged, summary.encoding) == (123, 123, 0, "utf-8")
    assert not summary.skipped

    stokes = await _contact(app, "cslb", "1000001")
    assert (stokes.business_name, stokes.street, stokes.city, stokes.state, stokes.postal_code, stokes.phone) == (
        "John R Stokes", "3585 Hearst Drive", "Simi Valley", "CA", "93063", "+18053383191",
    )  # fmt: skip
    assert (stokes.industry, stokes.license_type, stokes.license_number, stokes.license_state) == (
        "home-services", "C-7 Low Voltage Systems Contractor", "1000001", "CA",
    )  # fmt: skip
    welding = await _contact(app, "cslb", "1000015")  # "C60| C51"
    assert welding.business_name == "Nerelli Welding Inc"
    assert welding.license_type == "C-60 Welding Contractor; C-51 Structural Steel Contractor"
    assert welding.specialty == "Welding, Structural Steel"
    assert (await _contact(app, "cslb", "1000037")).industry == "solar"  # ROAM SOLAR INC, C46
    async with app.state.database.read_sessions() as session:
        owner = (await session.scalars(select(DecisionMaker).where(DecisionMaker.contact_id == stokes.id))).one()
        status = await session.scalar(
            select(RegistryRecord.registry_status).where(RegistryRecord.record_id == "1000089")
        )
    assert (owner.name, owner.role, owner.title) == ("John R Stokes", "owner", "Sole Owner")
    assert status == "Contr Bond Susp"

    before = await catalogue_counts(app)
    again = await run_import("cslb", path)
    assert (again.created, again.unchanged) == (0, 123)
    assert await catalogue_counts(app) == before


async def test_cslb_with_a_header_line_maps_columns_by_name(app: FastAPI, run_import: Importer, tmp_path: Path) -> None:
    summary = await run_import("cslb", write_cslb(tmp_path / "master.csv", [SOLAR], header=True))
    assert summary.created == 1
    contact = await _contact(app, "cslb", "1099001")
    assert (contact.business_name, contact.industry, contact.phone) == ("Ana Rivera Solar", "solar", "+15595550101")
    assert contact.license_type == "C-10 Electrical Contractor; C-46 Solar Contractor"


async def test_edgar_company_lists_and_indexes(app: FastAPI, run_import: Importer) -> None:
    tickers = await run_import("edgar", shared("sec", "company_tickers.json"))
    assert tickers.rows_read == 10_077 and tickers.created + tickers.updated + tickers.unchanged == 10_077
    exchange = await run_import("edgar", shared("sec", "company_tickers_exchange.json"))
    assert exchange.rows_read == 10_069
    master = await run_import("edgar", shared("sec", "edgar_daily_master.20200103.idx"))
    company = await run_import("edgar", shared("sec", "edgar_daily_company.20200102.idx"))
    assert (master.rows_read, company.rows_read) == (7_989, 4_441)
    assert not (master.skipped or company.skipped)

    async with app.state.database.read_sessions() as session:
        nvidia = await company_service.company_by_cik(session, 1045810)
        costco = await company_service.company_by_cik(session, 909832)
        fund = await company_service.company_by_cik(session, 1798581)  # a Form D filer of the daily index
    assert nvidia is not None and (nvidia.name, nvidia.ticker, nvidia.exchange) == ("NVIDIA CORP", "NVDA", "Nasdaq")
    assert nvidia.padded_cik == "0001045810"
    assert costco is not None and costco.name == "COSTCO WHOLESALE CORP"  # "/NEW" dropped
    assert fund is not None and fund.name == "10H CAPITAL FUND I, LP" and fund.ticker is None
    assert str(fund.last_filed_on) == "2020-01-02"


async def test_index_entries_keep_form_types_with_spaces() -> None:
    path = shared("sec", "edgar_daily_company.20200102.idx")
    with path.open() as text:
        entries = [e for e in read_index(text) if not isinstance(e, Exception)]
    assert len(entries) == 4_441
    forms = {getattr(e, "form_type", "") for e in entries}
    assert "SC 13D/A" in forms and sum(getattr(e, "form_type", "") == "D" for e in entries) == 165
    first = entries[0]
    assert getattr(first, "accession_number", "") == "0001798581-20-000002"


async def test_a_cut_off_json_list_is_a_clear_error(app: FastAPI, run_import: Importer, tmp_path: Path) -> None:
    path = tmp_path / "company_tickers.json"
    path.write_text('{"0":{"cik_str":1045810,"ticker":"NVDA","title":"NVIDIA CORP"},"1":{"cik_str":32')
    with pytest.raises(ImportFailed) as failure:
        await run_import("edgar", path, batch_size=1)
    assert failure.value.code in ("corrupt_file", "truncated_file")
    async with app.state.database.read_sessions() as session:
        assert await company_service.company_by_cik(session, 1045810) is not None  # the complete entry stayed
