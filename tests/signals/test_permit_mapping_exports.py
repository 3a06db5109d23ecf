"""Mappings for two exports tried beyond the packaged cities: one writes its contractor as "Person Name,
Company Name" in one cell and splits addresses over house number / street / suffix columns
(``contractors.name_pattern``, column lists for ``contractors.address`` and ``columns.address``);
the other covers a metro area's cities in one file, each row with its site's city
(``columns.site_city``). Both imported through ``vpx signals import permits --mapping``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.test_cli import vpx
from vpx.models import Contact, Signal
from vpx.signals.sources.permit_mapping import MappingError, parse_mapping

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "signals" / "fixtures"
RIVERTON = FIXTURES / "riverton_permits.csv"
RIVERTON_MAPPING = ROOT / "docs" / "examples" / "riverton-permits.toml"
METRO = FIXTURES / "valley_metro_permits.csv"
METRO_MAPPING = ROOT / "docs" / "examples" / "valley-metro-permits.toml"


def _import(database_url: str, path: Path, mapping: Path, *extra: str, check: bool = True) -> dict[str, Any]:
    return vpx(database_url, "signals", "import", "permits", str(path), "--mapping", str(mapping), *extra, check=check)


async def test_the_company_is_taken_from_a_person_and_company_cell(app: FastAPI, database_url: str) -> None:
    done = _import(database_url, RIVERTON, RIVERTON_MAPPING)
    assert (done["rows_read"], done["ingested"], done["contacts_created"]) == (7, 5, 3)
    # "Ana M Ortiz, Owner Builder": ignore_names is checked on the name the pattern found.
    assert done["skipped_by_reason"] == {"placeholder_contractor": 1, "no_business": 1}

    async with app.state.database.read_sessions() as session:
        contacts = {c.business_name: c for c in await session.scalars(select(Contact))}
        signals = {s.source_record_id: s for s in await session.scalars(select(Signal))}
    # A cell without a comma ("Ross Plumbing") is kept whole: the same business, one contact.
    assert sorted(contacts) == ["Chen Electric, LLC", "Ross Plumbing", "webb roofing co"]
    ross = contacts["Ross Plumbing"]
    assert {signals[n].contact_id for n in ("B25-0101", "B25-0102", "B25-0103")} == {ross.id}
    assert signals["B25-0101"].evidence["vendor_named"] == "Ross Plumbing"
    # The contractor's address from three columns, empty ones skipped (no double spaces).
    assert (ross.street, ross.city, ross.postal_code) == ("410 Elm St", "Riverton", "84065")
    assert contacts["Chen Electric, LLC"].street == "88 Industrial"
    assert contacts["webb roofing co"].street == "PO Box 12"
    # The site's address from four columns, an empty direction skipped.
    assert signals["B25-0101"].evidence["site"] == "1200 W Oak Ave, Riverton, UT"
    assert signals["B25-0102"].evidence["site"] == "77 Canal Dr, Riverton, UT"

    again = _import(database_url, RIVERTON, RIVERTON_MAPPING)
    assert (again["ingested"], again["duplicates"], again["contacts_created"]) == (0, 5, 0)


async def test_a_metro_file_places_each_signal_in_its_site_city(app: FastAPI, database_url: str) -> None:
    dry = _import(database_url, METRO, METRO_MAPPING, "--dry-run")
    assert dry["signals"] == 6 and dry["first"][0]["contractor"]["city"] == "Scottsdale"
    done = _import(database_url, METRO, METRO_MAPPING)
    assert (done["source"], done["rows_read"], done["ingested"], done["contacts_created"]) == (
        "permits:valley-metro", 6, 6, 3
    )  # fmt: skip

    async with app.state.database.read_sessions() as session:
        contacts = {c.id: c for c in await session.scalars(select(Contact))}
        signals = {s.source_record_id: s for s in await session.scalars(select(Signal))}
    # The signal's city is the site's (an empty one: the mapping's city); the state is the mapping's.
    assert {n: s.city for n, s in signals.items()} == {
        "VM-24-0001": "Mesa",
        "VM-24-0002": "Tempe",
        "VM-24-0003": "Chandler",
        "VM-24-0004": "Gilbert",
        "VM-24-0005": "Phoenix",
        "VM-24-0006": "Glendale",
    }
    assert {s.state for s in signals.values()} == {"AZ"}
    assert signals["VM-24-0002"].evidence["site"] == "45 E University Dr, Tempe, AZ"
    assert (signals["VM-24-0003"].summary or "").startswith("Mechanical permit VM-24-0003 in Chandler:")
    # The contractor keeps its own city, else the mapping's: one contact across the sites' cities.
    placed = [contacts[s.contact_id] for s in signals.values() if s.contact_id is not None]
    cities = {c.business_name: c.city for c in placed}
    assert cities == {
        "Desert Sun Solar LLC": "Scottsdale",
        "Valley HVAC Services": "Phoenix",
        "Copper State Builders": "Phoenix",
    }


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("'(?P<name>[^,]+'", "is not a regular expression"),
        ("'(?P<person>[^,]+),\\s*(?P<company>.+)'", "no group named name"),
        ("''", "a regular expression with a group named name"),
    ],
)
async def test_a_bad_name_pattern_is_refused_before_any_row(
    app: FastAPI, database_url: str, tmp_path: Path, pattern: str, says: str
) -> None:
    bad = tmp_path / "riverton.toml"
    text = RIVERTON_MAPPING.read_text()
    line = next(line for line in text.splitlines() if line.startswith("name_pattern"))
    bad.write_text(text.replace(line, f"name_pattern = {pattern}"))
    result = _import(database_url, RIVERTON, bad, check=False)
    error = result["error"]
    assert isinstance(error, dict) and error["code"] == "invalid_mapping"
    assert error["message"].startswith(f"{bad}: contractors.name_pattern: ") and says in error["message"]
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Signal)) == 0


BASE = 'city = "Mesa"\nstate = "AZ"\ndate_format = "iso"\n[columns]\npermit_number = "P"\nissued = "I"\n'


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[contractors]\nname = "C_{n}"\ncount = 2\naddress = ["C_{n}_NO", "STREET"]', "contractors.address"),
        ('[contractors]\nname = "C"\naddress = []', "contractors.address"),
        ('[contractors]\nname = "C"\nphone = ["A", "B"]', "contractors.phone"),
        ('[contractors]\nname = "C"\nname_pattern = 3', "contractors.name_pattern"),
    ],
)
def test_contractor_column_lists_and_patterns_are_checked(text: str, key: str) -> None:
    with pytest.raises(MappingError) as raised:
        parse_mapping(BASE + text, slug="mesa", origin="mesa.toml")
    assert str(raised.value).startswith(f"mesa.toml: {key}: ")


def test_every_listed_column_and_the_site_city_must_be_in_the_header(tmp_path: Path, database_url: str) -> None:
    path = tmp_path / "metro.csv"
    path.write_text("P,I,C,NO,STREET\nX1,2025-01-02,Acme,1,Main\n")
    for text, key in (
        ('site_city = "CITY"\n[contractors]\nname = "C"', "columns.site_city"),
        ('[contractors]\nname = "C"\naddress = ["NO", "STREET", "SUFFIX"]', "contractors.address"),
    ):
        mapping = tmp_path / "metro.toml"
        mapping.write_text(BASE + text)
        result = _import(database_url, path, mapping, "--dry-run", check=False)
        error = result["error"]
        assert isinstance(error, dict) and error["code"] == "invalid_mapping"
        message = error["message"]
        assert message.startswith(f"{mapping}: {key}: no column") and "(P, I, C, NO, STREET)" in message


def test_a_grouped_address_list_and_a_single_address_column_still_load() -> None:
    grouped = parse_mapping(
        BASE + '[contractors]\nname = "C_{n}"\ncount = 2\naddress = ["C_{n}_NO", "C_{n}_STREET"]',
        slug="mesa",
        origin="mesa.toml",
    )
    assert grouped.contractors is not None
    assert grouped.contractors.column_names("address", 2) == ("C_2_NO", "C_2_STREET")
    single = parse_mapping(BASE + '[contractors]\nname = "C"\naddress = "ADDR"', slug="mesa", origin="mesa.toml")
    assert single.contractors is not None and single.contractors.column_names("address", 1) == ("ADDR",)
    assert single.contractors.business_name("Leroy V Ross, Ross Plumbing") == "Leroy V Ross, Ross Plumbing"


def test_a_name_pattern_matches_the_whole_value_whatever_its_case() -> None:
    text = BASE + "[contractors]\nname = \"C\"\nname_pattern = '(?P<person>.+?) DBA (?P<name>.+)'"
    contractors = parse_mapping(text, slug="mesa", origin="mesa.toml").contractors
    assert contractors is not None
    assert contractors.business_name("Jo Smith dba  Smith Tile") == "Smith Tile"
    assert contractors.business_name("Smith Tile") == "Smith Tile"  # not matched: kept whole
    # re.fullmatch: a pattern that matches only a part of the value leaves it whole.
    partial = parse_mapping(
        BASE + "[contractors]\nname = \"C\"\nname_pattern = '(?P<name>[^,]+),'", slug="m", origin="m"
    )
    assert partial.contractors is not None and partial.contractors.business_name("Ross, Ross Plumbing") == (
        "Ross, Ross Plumbing"
    )
