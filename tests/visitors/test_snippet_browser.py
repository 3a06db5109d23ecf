"""The snippet in a real browser (D33): Debian's headless Chromium, driven by Playwright, opens a page of
another origin that embeds the snippet; its page view travels through a reverse proxy (which names the
visitor's address in X-Forwarded-For, as a production proxy does) to a real uvicorn server, whose
reverse DNS (a dnslib server on loopback) names the business, and a `visitor.identified` webhook reaches
a real receiver.

Skipped, with the reason, where /usr/bin/chromium or Playwright is missing (`make test` installs both).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import httpx
import pytest

from tests.dashboard.live_server import free_port, live_server
from tests.dashboard.test_browser import CHROMIUM, CHROMIUM_ARGS, _why_no_browser
from tests.factories import Factory
from tests.visitors.dns_server import DnsServer
from tests.webhooks.receiver import Receiver

VISITOR = "203.0.113.44"
CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"


class Server:
    """A threaded HTTP server on loopback answering with ``handler``."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.http.daemon_threads = True
        threading.Thread(target=self.http.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.http.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def reverse_proxy(upstream: str) -> Server:
    """Forwards every request to ``upstream``, adding the visitor's address as X-Forwarded-For."""
    target = urlsplit(upstream)

    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            headers["X-Forwarded-For"] = VISITOR
            connection = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=10)
            connection.request(self.command, self.path, body=body, headers=headers)
            answer = connection.getresponse()
            content = answer.read()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(name, value)
            self.send_header("content-length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)
            connection.close()

        do_GET = do_POST = do_OPTIONS = _forward

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Server(Proxy)


def page_server(script_url: str) -> Server:
    """The customer's website: one page embedding the snippet."""
    html = f"""<!doctype html><html><head><title>Fleet pricing</title>
<script async src="{script_url}"></script></head><body><h1>Pricing</h1></body></html>""".encode()

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(html)))
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Server(Page)


@pytest.fixture
def chromium_ready() -> None:
    reason = _why_no_browser()
    if reason:
        pytest.skip(reason)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


async def test_a_page_embedding_the_snippet_raises_visitor_identified(
    chromium_ready: None, database_url: str, factory: Factory, dns_server: DnsServer, receiver: Receiver
) -> None:
    from playwright.async_api import async_playwright

    account = await factory.account()
    contact = await factory.contact(business_name="Acme Plumbing LLC", website="https://www.acmeplumbing.example")
    dns_server.add_ptr(VISITOR, "gw.denver.acmeplumbing.example")
    dns_server.add_a("gw.denver.acmeplumbing.example", VISITOR)
    # The server must know the proxy's address as its public URL: the proxy starts first, pointed at a
    # port the server then takes.
    port = free_port()
    proxy = reverse_proxy(f"http://127.0.0.1:{port}")
    settings = {
        "dns_servers": f"{dns_server.host}:{dns_server.port}",
        "trusted_proxies": "127.0.0.1",
        "public_url": proxy.url,
        "webhook_allow_private": "1",
        "worker_in_process": "1",
        "worker_poll_seconds": "0.1",
    }
    page = None
    try:
        with live_server(database_url, port=port, **settings) as server:
            async with httpx.AsyncClient(base_url=server.url, headers=account.headers("full")) as api:
                hook = await api.post(
                    "/api/v1/webhooks", json={"url": receiver.url("/visits"), "events": ["visitor.identified"]}
                )
                assert hook.status_code == 201, hook.text
                site = (await api.post("/api/v1/visitors/sites", json={"domain": "www.seller.example"})).json()
            script_url = f"{proxy.url}/v/{site['site_key']}.js"
            assert site["snippet"] == f'<script async src="{script_url}"></script>'
            page = page_server(script_url)
            async with async_playwright() as playwright:
                chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    context = await chromium.new_context(user_agent=CHROME)
                    tab = await context.new_page()
                    await tab.goto(f"{page.url}/pricing?plan=fleet")
                    for _ in range(100):
                        if receiver.received("/visits"):
                            break
                        await asyncio.sleep(0.1)
                finally:
                    await chromium.close()
            [delivery] = receiver.received("/visits")
            event = json.loads(delivery.body)
            assert event["type"] == "visitor.identified"
            data = event["data"]
            assert data["company"]["contact_id"] == contact and data["site_id"] == site["id"]
            assert (data["method"], data["confidence"]) == ("reverse_dns", 0.8)
            assert data["url"] == f"{page.url}/pricing?plan=fleet"
    finally:
        proxy.stop()
        if page is not None:
            page.stop()
