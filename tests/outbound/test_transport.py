"""The clients that reach an operator's API root (enrichment providers, DROP) ask the outbound guard
about every host: their network is admitted, link-local and cloud-metadata addresses never."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from vpx.outbound.resolver import Resolver
from vpx.outbound.transport import CheckedTransport

pytestmark = pytest.mark.asyncio


@pytest.fixture
async def server() -> AsyncIterator[str]:
    """A real HTTP server on loopback that answers every request with 200 ``ok``."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()

    listening = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    async with listening:
        yield f"http://127.0.0.1:{port}"


def resolving_to(*addresses: str) -> Resolver:
    async def resolve(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolve


async def test_an_operators_loopback_server_is_reached(server: str) -> None:
    async with httpx.AsyncClient(transport=CheckedTransport(allow_private=True)) as client:
        response = await client.get(f"{server}/data")
    assert response.text == "ok"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data", "169.254.169.254 is a cloud metadata address"),
        ("http://[fe80::1]/", "fe80::1 is a link-local address"),
    ],
)
async def test_link_local_and_metadata_addresses_are_refused_as_unreachable(url: str, reason: str) -> None:
    async with httpx.AsyncClient(transport=CheckedTransport(allow_private=True)) as client:
        with pytest.raises(httpx.ConnectError, match=reason):
            await client.get(url)


async def test_a_name_is_judged_by_every_address_it_resolves_to_without_naming_them() -> None:
    transport = CheckedTransport(allow_private=True, resolver=resolving_to("127.0.0.1", "169.254.169.254"))
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(httpx.ConnectError) as refused:
            await client.get("http://api.provider.test/")
    assert str(refused.value) == "host api.provider.test resolves to a non-public address"


async def test_a_name_that_does_not_resolve_in_the_connect_time_is_a_connect_timeout() -> None:
    async def silent(host: str, port: int) -> list[str]:
        await asyncio.sleep(30)
        return []

    transport = CheckedTransport(allow_private=True, resolver=silent)
    async with httpx.AsyncClient(transport=transport, timeout=0.2) as client:
        with pytest.raises(httpx.ConnectTimeout):
            await client.get("http://api.provider.test/")
