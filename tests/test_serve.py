"""What `vpx serve` gives a newcomer: `/` leads somewhere (a browser to the dashboard, an API client to
an index of links), and the links the service writes (the visitor snippet, the pixel, unsubscribe
and password-reset links) point at the port it listens on unless VPX_PUBLIC_URL says otherwise."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from tests.conftest import TEST_SECRET_KEY, test_settings
from tests.dashboard.live_server import free_port
from tests.faults.support import VPX, VpxServer
from vpx.accounts import service as account_service
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.cli.app import app as cli
from vpx.clock import Clock
from vpx.config import get_settings
from vpx.db import Database

serve_module = importlib.import_module("vpx.cli.serve")  # where `vpx serve` runs the server
REPO = Path(__file__).resolve().parents[1]
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


def _serve_env(monkeypatch: pytest.MonkeyPatch, database: Path, **settings: str) -> list[uvicorn.Config]:
    """`vpx serve` as far as the server's start (uvicorn itself not run): what it would have run."""
    started: list[uvicorn.Config] = []

    def run_server(config: uvicorn.Config, sock: socket.socket) -> bool:
        started.append(config)
        sock.close()
        return True

    monkeypatch.setattr(serve_module, "run_server", run_server)
    monkeypatch.setenv("VPX_DATABASE_URL", f"sqlite+aiosqlite:///{database}")
    monkeypatch.setenv("VPX_SECRET_KEYS", TEST_SECRET_KEY)
    monkeypatch.setenv("VPX_DATA_DIR", str(database.parent))
    for name, value in settings.items():
        monkeypatch.setenv(f"VPX_{name.upper()}", value)
    get_settings.cache_clear()
    return started


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
    """The public URL `vpx serve` hands the server processes."""
    started = _serve_env(monkeypatch, served_database, public_url=public_url)
    port = free_port()
    try:
        done = CliRunner().invoke(cli, ["serve", "--host", host, "--port", str(port), "--json"])
        assert done.exit_code == 0, done.output
        printed = json.loads(done.output)
        assert printed["public_url"] == expected.format(port=port) == os.environ["VPX_PUBLIC_URL"]
        assert started and started[0].host == host and started[0].port == port
    finally:
        get_settings.cache_clear()


def test_the_demo_mail_catcher_takes_the_next_free_port_and_says_which(
    served_database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy VPX_DEMO_MAIL_PORT never stops the demo (issue 39): the catcher listens on the next free
    port, `vpx serve` prints it, and the server processes get it as their VPX_DEMO_MAIL_PORT (the one
    the demo account's mailboxes may use)."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        busy = taken.getsockname()[1]
        started = _serve_env(monkeypatch, served_database, public_url="", demo_mail_port=str(busy))
        try:
            done = CliRunner().invoke(cli, ["serve", "--port", str(free_port()), "--json"])
            assert done.exit_code == 0, done.output
            printed = json.loads(done.output)
            assert started, "the server must start whatever the catcher's port"
            catcher_port = int(os.environ["VPX_DEMO_MAIL_PORT"])
            assert busy < catcher_port <= busy + 20
            assert printed["demo_mail_smtp"] == (
                f"127.0.0.1:{catcher_port} (the demo account only; no TLS; {busy} was taken)"
            )
            assert get_settings().demo_mail_port == catcher_port
            with socket.create_connection(("127.0.0.1", catcher_port), timeout=5) as smtp:
                assert smtp.recv(200).startswith(b"220 ")
        finally:
            get_settings.cache_clear()


def test_a_port_in_use_is_said_before_anything_says_serving(tmp_path: Path) -> None:
    """`vpx serve` on a port another program listens on: one error, and never `status: serving` first."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        env = {
            **{name: value for name, value in os.environ.items() if not name.startswith("VPX_")},
            "VPX_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'vpx.db'}",
            "VPX_SECRET_KEYS": TEST_SECRET_KEY,
            "VPX_DATA_DIR": str(tmp_path),
        }
        for flags in (["--json"], []):
            done = subprocess.run(
                [VPX, "serve", "--port", str(port), *flags], env=env, capture_output=True, text=True, timeout=60
            )
            assert done.returncode == 1, done.stdout + done.stderr
            assert "serving" not in done.stdout + done.stderr
            said = json.loads(done.stdout)["error"] if flags else {"code": "port_unavailable", "message": done.stderr}
            assert said["code"] == "port_unavailable"
            assert f"127.0.0.1:{port}" in said["message"] and "--port" in said["message"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(
    ("environment", "arguments", "expected"),
    [
        ({}, [], "2525"),
        ({"VPX_DEMO_MAIL_PORT": "18025"}, [], "18025"),  # the README's way
        ({"VPX_DEMO_MAIL_PORT": "18025"}, ["DEMO_MAIL_PORT=18026"], "18026"),  # make's own variable wins
    ],
)
def test_make_serve_passes_the_environments_demo_mail_port_on(
    environment: dict[str, str], arguments: list[str], expected: str
) -> None:
    env = {name: value for name, value in os.environ.items() if not name.startswith("VPX_")}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "serve", *arguments],
        cwd=REPO,
        env={**env, **environment},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if "vpx serve" in line]
    assert f"VPX_DEMO_MAIL_PORT={expected} " in line
