"""`vpx visitors import-ranges`, the real command as a subprocess (D35): what it reports, what a
running server then identifies, and a file of the wrong format refused without touching the source."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import httpx
from fastapi import FastAPI

from tests.factories import Factory
from tests.test_cli import vpx

CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
OFFICE = (
    "network,domain,organisation\n"
    "203.0.113.0/24,acmeplumbing.example,Acme Plumbing\n"
    "not-a-network,acmeplumbing.example,Acme Plumbing\n"
    "2001:db8:a::/48,acmeplumbing.example,Acme Plumbing\n"
)


async def test_imported_ranges_identify_visits_and_a_wrong_format_changes_nothing(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, database_url: str, tmp_path: Path
) -> None:
    contact = await factory.contact(business_name="Acme Plumbing LLC", website="https://www.acmeplumbing.example")
    account = await factory.account()
    created = await client.post(
        "/api/v1/visitors/sites", json={"domain": "seller.example"}, headers=account.headers("full")
    )
    assert created.status_code == 201, created.text
    office = tmp_path / "office.csv"
    office.write_text(OFFICE)

    imported = vpx(database_url, "visitors", "import-ranges", str(office), "--format", "csv")
    assert imported["source"] == "office.csv" and imported["format"] == "csv"
    assert imported["ranges"] == 2 and imported["by_kind"] == {"business": 2} and imported["skipped"] == 1
    assert imported["problems"][0]["line"] == 3

    # A server notices another process's import (the index's version check), without a restart.
    await app.state.visitors.ranges.refresh()
    for address in ("203.0.113.77", "2001:db8:a::1"):
        answer = await client.post(
            "/api/v1/visitors/identify",
            json={
                "site_id": created.json()["id"],
                "ip": address,
                "url": "https://seller.example/",
                "user_agent": CHROME,
            },
            headers=account.headers("full"),
        )
        assert answer.status_code == 200, answer.text
        found = answer.json()
        assert found["identified"] is True and found["method"] == "ip_range"
        assert found["company"]["contact_id"] == contact

    # An ip2asn TSV given as csv: every row is a problem, and the source keeps its ranges.
    wrong = tmp_path / "office-asn.tsv"
    wrong.write_text("203.0.113.0\t203.0.113.255\t64500\tUS\tEXAMPLE-NET\n")
    refused = vpx(
        database_url, "visitors", "import-ranges", str(wrong), "--format", "csv", "--source", "office.csv", check=False
    )
    assert refused["error"]["code"] == "invalid_file"
    assert "header must name a `network` column" in refused["error"]["message"]
    # A CSV with the right header and no readable row is refused too.
    empty = tmp_path / "empty.csv"
    empty.write_text("network,domain\nsomewhere,acmeplumbing.example\n")
    refused = vpx(
        database_url, "visitors", "import-ranges", str(empty), "--format", "csv", "--source", "office.csv", check=False
    )
    assert refused["error"]["code"] == "invalid_file" and "no range could be read" in refused["error"]["message"]
    # The message names the bad line and its value, as the registry importers' do.
    assert "line 2: not a network: 'somewhere'" in refused["error"]["message"], refused
    assert "1 bad row;" in refused["error"]["message"]
    again = vpx(
        database_url, "visitors", "import-ranges", str(tmp_path / "missing.csv"), "--format", "csv", check=False
    )
    assert again["error"]["code"] == "invalid_parameters"
    await app.state.visitors.ranges.refresh()
    assert (await app.state.visitors.ranges.index()).lookup(ipaddress.ip_address("203.0.113.77")) is not None
