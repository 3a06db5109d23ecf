"""What `vpx serve` gives a newcomer: `/` leads somewhere (a browser to the dashboard, an API client to
an index of links), and the links the service writes (the visitor snippet, the pixel, unsubscribe
and password-reset links) point at the port it listens on unless VPX_PUBLIC_URL says otherwise."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from tests.conftest import TEST_SECRET_KEY, test_settings
from tests.dashboard.live_server import free_port
from tests.faults.support import VpxServer
from vpx.accounts import service as account_service
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.cli.app import app as cli
from vpx.clock import Clock
from vpx.config import get_settings
from vpx.db import Database

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"


async def test_a_browser_opening_the_root_goes_to_the_dashboard(client: httpx.AsyncClient) -> None:
    answer = await client.get("/", headers={"Accept": BROWSER_ACCEPT})
    assert answer.status_code in (302, 303, 307) and answer.headers["location"] == "/dashboard"


@pytest.mark.parametrize("accept", ["application/json", "*/*", None])
async def test_an_api_client_at_the_root_gets_an_index_of_links(client: httpx.AsyncClient, accept: str | None) -> None:
    answer = await client.get("/", headers={"Accept": accept} if accept else {})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    links = answer.json()["links"]
    assert links["openapi"] == "/api/v1/openapi.json"
    assert links["docs"] == "/docs" and links["dashboard"] == "/dashboard"
    for path in links.values():
        assert (await client.get(path)).status_code != 404, path


def _site(server: VpxServer, database_url: str) -> dict[str, str]:
    """A visitor site of a new account (made in the server's database, here), made through the server."""

    async def full_key() -> str:
        settings = test_settings(database_url)
        database = Database(settings, pool=False)
        try:
            async with database.write_sessions() as session, session.begin():
                now = Clock().now()
                account = await account_service.create_account(
                    session, name="Acme", email=None, plan="free", now=now, settings=settings
                )
                _, secret = await key_service.create_key(
                    session,
                    account_id=account.id,
                    key_type=KeyType.full,
                    name="",
                    ip_allowlist=[],
                    now=now,
                    settings=settings,
                )
            return secret
        finally:
            await database.dispose()

    key = asyncio.run(full_key())
    answer = httpx.post(
        f"{server.url}/api/v1/visitors/sites", json={"domain": "www.acme.example"}, headers={"X-API-Key": key}
    )
    assert answer.status_code == 201, answer.text
    site: dict[str, str] = answer.json()
    return site


def test_links_point_at_the_port_serve_listens_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VPX_PUBLIC_URL", raising=False)
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'vpx.db'}"
    port = free_port()
    server = VpxServer(database_url, tmp_path / "serve.log", {"data_dir": str(tmp_path)}, port=port)
    try:
        site = _site(server, database_url)
        base = f"http://127.0.0.1:{port}"
        assert site["snippet"] == f'<script async src="{base}/v/{site["site_key"]}.js"></script>'
        assert site["pixel_url"] == f"{base}/v/{site['site_key']}/pixel.gif"
        script = httpx.get(site["snippet"].split('"')[1]).text
        assert json.dumps(f"{base}/v/collect") in script
    finally:
        server.stop()


@pytest.fixture(scope="module")
def served_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One database for the runs of `vpx serve` below (migrated by the first)."""
    return tmp_path_factory.mktemp("serve") / "vpx.db"


@pytest.mark.parametrize(
    ("public_url", "host", "expected"),
    [
        ("https://vpx.example.com", "127.0.0.1", "https://vpx.example.com"),  # behind a proxy: the setting wins
        ("", "0.0.0.0", "http://127.0.0.1:{port}"),  # every interface: reached here at loopback
        ("", "::1", "http://[::1]:{port}"),
    ],
)
def test_the_public_url_is_the_setting_or_where_serve_listens(
    served_database: Path, monkeypatch: pytest.MonkeyPatch, public_url: str, host: str, expected: str
) -> None:
    """`vpx serve` as far as the server's start (uvicorn itself not run): the public URL it hands the
    server processes."""
    started: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: started.append(kwargs))
    monkeypatch.setenv("VPX_PUBLIC_URL", public_url)
    monkeypatch.setenv("VPX_DATABASE_URL", f"sqlite+aiosqlite:///{served_database}")
    monkeypatch.setenv("VPX_SECRET_KEYS", TEST_SECRET_KEY)
    monkeypatch.setenv("VPX_DATA_DIR", str(served_database.parent))
    get_settings.cache_clear()
    try:
        done = CliRunner().invoke(cli, ["serve", "--host", host, "--port", "8123", "--json"])
        assert done.exit_code == 0, done.output
        printed = json.loads(done.output)
        assert printed["public_url"] == expected.format(port=8123) == os.environ["VPX_PUBLIC_URL"]
        assert started and started[0]["host"] == host and started[0]["port"] == 8123
    finally:
        get_settings.cache_clear()


def test_serve_stops_saying_so_when_the_demo_mail_port_is_taken(
    served_database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: pytest.fail("served with no mail catcher"))
    monkeypatch.setenv("VPX_DATABASE_URL", f"sqlite+aiosqlite:///{served_database}")
    monkeypatch.setenv("VPX_SECRET_KEYS", TEST_SECRET_KEY)
    monkeypatch.setenv("VPX_DATA_DIR", str(served_database.parent))
    monkeypatch.setenv("VPX_PUBLIC_URL", "")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        monkeypatch.setenv("VPX_DEMO_MAIL_PORT", str(taken.getsockname()[1]))
        get_settings.cache_clear()
        try:
            done = CliRunner().invoke(cli, ["serve", "--port", "8124", "--json"])
        finally:
            get_settings.cache_clear()
    assert done.exit_code == 1
    error = json.loads(done.output)["error"]
    assert error["code"] == "demo_mail_port_taken" and "VPX_DEMO_MAIL_PORT" in error["message"]
