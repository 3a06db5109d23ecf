"""D6: per-key IP allow-lists (IPv4, IPv6, CIDR) answered with 403; X-Forwarded-For only from trusted proxies."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from tests.conftest import asgi_client
from tests.factories import Factory
from vpx.auth.network import client_address, normalise_allowlist, parse_network


@pytest.mark.parametrize(
    ("allowlist", "caller", "allowed"),
    [
        (["203.0.113.7"], "203.0.113.7", True),
        (["203.0.113.7"], "203.0.113.8", False),
        (["203.0.113.0/24"], "203.0.113.200", True),
        (["203.0.113.0/24"], "198.51.100.1", False),
        (["2001:db8::1"], "2001:db8::1", True),
        (["2001:db8::/32"], "2001:db8:abcd::42", True),
        (["2001:db8::/32"], "2001:db9::1", False),
        (["203.0.113.0/24", "2001:db8::/32"], "2001:db8::5", True),
        (["203.0.113.7"], "::ffff:203.0.113.7", True),
        (["::ffff:203.0.113.7"], "203.0.113.7", True),
    ],
)
async def test_allowlist(app: FastAPI, factory: Factory, allowlist: list[str], caller: str, allowed: bool) -> None:
    account = await factory.account(key_types=())
    key = await factory.key(account.id, "live", ip_allowlist=allowlist)
    async with asgi_client(app, client_ip=caller) as http:
        response = await http.get("/api/v1/account", headers={"X-API-Key": key})
    if allowed:
        assert response.status_code == 200
    else:
        assert response.status_code == 403
        assert response.json()["code"] == "ip_not_allowed"


async def test_empty_allowlist_allows_everyone(app: FastAPI, factory: Factory) -> None:
    account = await factory.account(key_types=("ro",))
    async with asgi_client(app, client_ip="198.51.100.99") as http:
        assert (await http.get("/api/v1/account", headers=account.headers("ro"))).status_code == 200


async def test_forwarded_for_is_ignored_from_an_untrusted_peer(app: FastAPI, factory: Factory) -> None:
    account = await factory.account(key_types=())
    key = await factory.key(account.id, "live", ip_allowlist=["203.0.113.7"])
    async with asgi_client(app, client_ip="198.51.100.1") as http:
        response = await http.get("/api/v1/account", headers={"X-API-Key": key, "X-Forwarded-For": "203.0.113.7"})
    assert response.status_code == 403


async def test_forwarded_for_is_honoured_from_a_trusted_proxy(app: FastAPI, factory: Factory) -> None:
    app.state.trusted_proxies = [parse_network("10.0.0.0/8")]
    account = await factory.account(key_types=())
    key = await factory.key(account.id, "live", ip_allowlist=["203.0.113.7"])
    async with asgi_client(app, client_ip="10.1.2.3") as http:
        ok = await http.get("/api/v1/account", headers={"X-API-Key": key, "X-Forwarded-For": "203.0.113.7, 10.0.0.5"})
        spoofed = await http.get(
            "/api/v1/account", headers={"X-API-Key": key, "X-Forwarded-For": "203.0.113.7, 198.51.100.1"}
        )
    assert ok.status_code == 200
    assert spoofed.status_code == 403  # the right-most untrusted hop is the client


def test_client_address_rules() -> None:
    trusted = [parse_network("10.0.0.0/8"), parse_network("fd00::/8")]
    assert client_address("198.51.100.1", "1.2.3.4", trusted) == "198.51.100.1"
    assert client_address("10.0.0.1", "1.2.3.4", trusted) == "1.2.3.4"
    assert client_address("10.0.0.1", "5.6.7.8, 10.9.9.9", trusted) == "5.6.7.8"
    assert client_address("fd00::1", "2001:db8::7", trusted) == "2001:db8::7"
    assert client_address("10.0.0.1", "garbage", trusted) == "10.0.0.1"
    assert client_address("10.0.0.1", None, trusted) == "10.0.0.1"


def test_allowlist_entries_are_validated() -> None:
    assert normalise_allowlist(["203.0.113.7", "2001:db8::/32", "10.0.0.1/8"]) == [
        "203.0.113.7/32",
        "2001:db8::/32",
        "10.0.0.0/8",
    ]
    with pytest.raises(ValueError, match="not an IP address"):
        normalise_allowlist(["300.1.1.1"])
