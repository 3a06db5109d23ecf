"""Permit portals' APIs kept in sync, on both databases, against fakes on loopback
(tests/sources/portals.py): a Socrata dataset paged with $where/$order/$limit/$offset (rows sharing a
watermark across a page boundary neither lost nor read twice, a second run reading only what is new,
rows moving under a run, the app token, a 429, a changed layout), an ArcGIS layer paged with
resultOffset while exceededTransferLimit says so (ties on the edit date, a layer that reads
timestamps in its own time zone), and JSON records flattened for the mapping."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.sources.conftest import add_source, later, run_source, source_row
from tests.sources.portals import ArcgisLayer, SodaDataset, epoch_ms
from tests.sources.publisher import Fault, Publisher
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import Signal
from vpx.sources import service as source_service
from vpx.sources.kinds import InvalidSource
from vpx.sources.kinds.permit_records import flatten

SODA_MAPPING = """
city = "Provo"
state = "UT"
date_format = "iso"

[columns]
permit_number = "permit_"
permit_type = "permit_type"
issued = "issue_date"
cost = "reported_cost"
description = "work_description"
address = "street_address"

[contractors]
name = "contractor_name"
city = "contractor_city"
state = "contractor_state"
"""
ARCGIS_MAPPING = """
city = "Boise"
state = "ID"
date_format = "epoch_ms"

[columns]
permit_number = "PERMIT_NO"
permit_type = "PERMIT_TYPE"
issued = "ISSUED"
description = "WORK"

[contractors]
name = "CONTRACTOR"
"""
ARCGIS_FIELDS = ["PERMIT_NO", "PERMIT_TYPE", "ISSUED", "WORK", "CONTRACTOR"]


def stamp(minute: int) -> str:
    """A :updated_at as SODA writes it."""
    return f"2026-11-14T10:{minute:02d}:00.000Z"


def permit(number: int, **more: Any) -> dict[str, Any]:
    """A SODA row's own fields: numbers come as text in SODA's JSON, costs here as a number."""
    return {
        "permit_": f"BP-{number}",
        "permit_type": "ROOFING",
        "issue_date": "2026-11-13T00:00:00.000",
        "reported_cost": 18000.0,
        "work_description": "Reroof",
        "street_address": f"{number} Center St",
        "contractor_name": f"Summit Roofing {number} LLC",
        "contractor_city": "Provo",
        "contractor_state": "UT",
        "location": {"latitude": "40.23", "longitude": "-111.66"},
        **more,
    }


async def signal_numbers(app: FastAPI) -> list[str]:
    async with app.state.database.read_sessions() as session:
        return sorted(await session.scalars(select(Signal.source_record_id)))


async def add_soda(app: FastAPI, dataset: SodaDataset, **options: str) -> None:
    await add_source(
        app, "provo", "permits-socrata", dataset.url, mapping=SODA_MAPPING, mapping_name="provo", options=options
    )


def test_json_records_are_flattened_for_the_mapping() -> None:
    record = {
        "permit_": "BP-1",
        "reported_cost": 18000.0,
        "fee": 12.5,
        "units": 3,
        "owner_occupied": True,
        "expired": None,
        "location": {
            "latitude": "40.23",
            "human_address": '{"city": "Provo"}',
            "point": {"coordinates": [-111.6, 40.2]},
        },
    }
    assert flatten(record) == {
        "permit_": "BP-1",
        "reported_cost": "18000",
        "fee": "12.5",
        "units": "3",
        "owner_occupied": "true",
        "expired": "",
        "location.latitude": "40.23",
        "location.human_address": '{"city": "Provo"}',
        "location.point.coordinates.0": "-111.6",
        "location.point.coordinates.1": "40.2",
    }


def test_the_urls_and_options_are_checked_at_add() -> None:
    def refused(kind: str, url: str, mapping: str | None = SODA_MAPPING, **options: str) -> str:
        with pytest.raises(InvalidSource) as caught:
            source_service.check_new(
                name="x", kind=kind, url=url, every=None, mapping=mapping, mapping_name="x", options=options
            )
        return str(caught.value)

    assert refused("permits-socrata", "https://data.example.org/permits.csv").startswith(
        "url: must be the dataset's SODA endpoint"
    )
    assert refused("permits-socrata", "https://data.example.org/resource/ab12-cd34.json?$limit=5").startswith("url:")
    assert refused("permits-socrata", "https://data.example.org/resource/ab12-cd34.json", page_size="0") == (
        "options.page_size: must be a whole number from 1 to 50,000"
    )
    assert refused("permits-socrata", "https://data.example.org/resource/ab12-cd34.json", watermark="a b").startswith(
        "options.watermark: 'a b' is not a field name"
    )
    assert refused("permits-arcgis", "https://gis.example.org/arcgis/rest/services/Permits/FeatureServer").startswith(
        "url: must be the layer"
    )
    assert refused("permits-arcgis", "https://gis.example.org/arcgis/rest/services/Permits/FeatureServer/0", None) == (
        "mapping: permits-arcgis needs a mapping (--mapping FILE): see docs/signal-sources.md"
    )


async def test_rows_sharing_a_watermark_across_a_page_boundary_are_read_once(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock
) -> None:
    dataset = SodaDataset(publisher)
    dataset.add(stamp(1), **permit(1))
    for number in (2, 3, 4):  # one upsert: one :updated_at, across the first pages' boundaries
        dataset.add(stamp(2), **permit(number))
    dataset.add(stamp(3), **permit(5))
    await add_soda(app, dataset, page_size="2")
    report = await run_source(app, settings, "provo")
    assert (report.status, report.rows_read, report.ingested, report.duplicates) == ("ok", 5, 5, 0), report.error
    assert await signal_numbers(app) == ["BP-1", "BP-2", "BP-3", "BP-4", "BP-5"]
    [first, *rest] = [s.query for s in publisher.requests_for(dataset.path)]
    assert first == {
        "$select": ":*, *", "$where": ":updated_at IS NOT NULL", "$order": ":updated_at, :id", "$limit": "2",
        "$offset": "0",
    }  # fmt: skip
    # Each later page starts at the last watermark read, one row back (that row must come first).
    assert [(q["$where"], q["$offset"]) for q in rest] == [
        (f":updated_at >= '{stamp(2)}'", "0"),
        (f":updated_at >= '{stamp(2)}'", "1"),
        (f":updated_at >= '{stamp(2)}'", "2"),
        (f":updated_at >= '{stamp(3)}'", "0"),
    ]
    source = await source_row(app, "provo")
    assert source.watermark["rows"] == {"field": ":updated_at", "value": stamp(3), "ids": ["row-0005"], "position": 1}

    # Nothing new: one request, nothing read.
    later(clock, days=1)
    unchanged = await run_source(app, settings, "provo")
    assert (unchanged.status, unchanged.requests, unchanged.rows_read) == ("not_modified", 1, 0)

    # A row at the very watermark read last, one after it, and one updated: only those are read.
    dataset.add(stamp(3), **permit(6))
    dataset.add(stamp(4), **permit(7))
    dataset.update("row-0001", stamp(5), work_description="Reroof and gutters")
    later(clock, days=1)
    second = await run_source(app, settings, "provo")
    assert (second.status, second.rows_read, second.ingested, second.duplicates) == ("ok", 3, 2, 1), second.error
    assert await signal_numbers(app) == ["BP-1", "BP-2", "BP-3", "BP-4", "BP-5", "BP-6", "BP-7"]


async def test_rows_that_move_while_a_run_pages_are_not_lost(
    app: FastAPI, settings: Settings, publisher: Publisher
) -> None:
    dataset = SodaDataset(publisher)
    for number in range(1, 7):  # one upsert of six rows
        dataset.add(stamp(1), **permit(number))

    def meanwhile(request: int) -> None:
        if request == 1:  # after the first page, the first row is updated: the others move up one place
            dataset.update("row-0001", stamp(9), work_description="Reroof, revised")

    dataset.after_request = meanwhile
    await add_soda(app, dataset, page_size="3")
    report = await run_source(app, settings, "provo")
    assert report.status == "ok", report.error
    assert await signal_numbers(app) == [f"BP-{n}" for n in range(1, 7)]  # BP-4 was not skipped
    offsets = [s.query["$offset"] for s in publisher.requests_for(dataset.path)]
    assert offsets[:3] == ["0", "2", "0"]  # the moved rows noticed, their value read again from the first


async def test_the_app_token_is_sent_and_a_429_waited_out(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock
) -> None:
    dataset = SodaDataset(publisher)
    dataset.app_token = "app-token-0123"
    dataset.add(stamp(1), **permit(1))
    publisher.fail_next(dataset.path, Fault(status=429, headers={"Retry-After": "1"}))
    await add_soda(app, dataset, app_token="app-token-0123")
    report = await run_source(app, settings, "provo")
    assert (report.status, report.ingested) == ("ok", 1), report.error
    seen = publisher.requests_for(dataset.path)
    assert [s.status for s in seen] == [429, 200]
    assert {s.headers.get("x-app-token") for s in seen} == {"app-token-0123"}
    assert seen[1].at - seen[0].at >= 0.9  # Retry-After: 1 honoured
    view = source_service.view(await source_row(app, "provo"), clock.now())
    assert view["options"] == {"app_token": "(secret)"}
    # A wrong token is refused by the portal: the run fails, saying so.
    dataset.app_token = "another"
    later(clock, days=1)
    refused = await run_source(app, settings, "provo")
    assert refused.status == "failed" and refused.error is not None and "403" in refused.error["message"]


async def test_a_dataset_without_a_mapped_field_is_refused_before_any_write(
    app: FastAPI, settings: Settings, publisher: Publisher
) -> None:
    dataset = SodaDataset(publisher)
    renamed = permit(1)
    renamed["contractor"] = renamed.pop("contractor_name")
    dataset.add(stamp(1), **renamed)
    await add_soda(app, dataset)
    report = await run_source(app, settings, "provo")
    assert report.status == "failed" and report.error is not None
    assert report.error["code"] == "unexpected_layout" and "'contractor_name'" in report.error["message"]
    assert await signal_numbers(app) == []
    assert (await source_row(app, "provo")).watermark == {}


def arcgis_permit(number: int) -> dict[str, Any]:
    return {
        "PERMIT_NO": f"B26-{number:04d}",
        "PERMIT_TYPE": "Residential Remodel",
        "ISSUED": epoch_ms("2026-11-12 16:00:00"),
        "WORK": "Kitchen remodel",
        "CONTRACTOR": f"Treasure Valley Builders {number}",
    }


async def test_an_arcgis_layer_is_paged_while_the_transfer_limit_is_exceeded(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock
) -> None:
    # The layer reads where-clause timestamps in its own time zone, and answers at most 2 features.
    layer = ArcgisLayer(publisher, ARCGIS_FIELDS, max_record_count=2, zone="America/Boise")
    edited = epoch_ms("2026-11-14 18:30:00")
    layer.add(epoch_ms("2026-11-13 09:00:00"), **arcgis_permit(1))
    for number in (2, 3, 4):  # one edit session: one edit date to the millisecond
        layer.add(edited, **arcgis_permit(number))
    await add_source(
        app, "boise", "permits-arcgis", layer.url, mapping=ARCGIS_MAPPING, mapping_name="boise",
        options={"page_size": "3"},
    )  # fmt: skip
    report = await run_source(app, settings, "boise")
    assert (report.status, report.rows_read, report.ingested, report.duplicates) == ("ok", 4, 4, 0), report.error
    assert await signal_numbers(app) == ["B26-0001", "B26-0002", "B26-0003", "B26-0004"]
    described = publisher.requests_for(layer.path)
    assert [s.query for s in described] == [{"f": "json"}]
    first, *rest = layer.queries
    assert first == {
        "where": "1=1", "outFields": "*", "orderByFields": "EditDate ASC, OBJECTID ASC", "resultOffset": "0",
        "resultRecordCount": "3", "returnGeometry": "false", "f": "json",
    }  # fmt: skip
    # Two features a page (the layer's limit), each next page repeating the last feature read.
    assert [q["resultOffset"] for q in rest] == ["1", "2"]
    assert (await source_row(app, "boise")).watermark["features"] == {
        "field": "EditDate", "value": edited, "object_id": 4,
    }  # fmt: skip

    # A feature with the same edit date (a higher object id) and an edited one: only those are read.
    layer.add(edited, **arcgis_permit(5))
    layer.edit(1, epoch_ms("2026-11-15 08:00:00"), WORK="Kitchen and bath remodel")
    later(clock, days=1)
    second = await run_source(app, settings, "boise")
    assert (second.status, second.rows_read, second.ingested, second.duplicates) == ("ok", 2, 1, 1), second.error
    where = {q["where"] for q in layer.queries[3:]}
    assert where == {"EditDate >= TIMESTAMP '2026-11-13 18:30:00'"}  # a day before the watermark
    assert await signal_numbers(app) == [f"B26-{n:04d}" for n in range(1, 6)]


async def test_an_arcgis_layer_without_edit_dates_needs_a_watermark_field(
    app: FastAPI, settings: Settings, publisher: Publisher
) -> None:
    layer = ArcgisLayer(publisher, ARCGIS_FIELDS, edit_date_field=None)
    layer.add(epoch_ms("2026-11-13 09:00:00"), **arcgis_permit(1))
    await add_source(app, "boise", "permits-arcgis", layer.url, mapping=ARCGIS_MAPPING, mapping_name="boise")
    report = await run_source(app, settings, "boise")
    assert report.status == "failed" and report.error is not None
    assert "editor tracking is off" in report.error["message"] and "--option watermark=FIELD" in report.error["message"]
    await add_source(
        app, "boise2", "permits-arcgis", layer.url, mapping=ARCGIS_MAPPING, mapping_name="boise",
        options={"watermark": "EditDate"},
    )  # fmt: skip
    named = await run_source(app, settings, "boise2")
    assert (named.status, named.ingested) == ("ok", 1), named.error
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Signal)) == 1
