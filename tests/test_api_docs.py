"""/docs, the page where people paste their API keys: Swagger UI from the package itself (pinned, no
other host), under a Content-Security-Policy that allows scripts from this origin only; no /redoc."""

from __future__ import annotations

import hashlib
import re
from html.parser import HTMLParser

import httpx
import pytest

from vpx.apidocs import STATIC_DIR


class _References(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []
        self.inline_scripts = 0
        self._in_script_without_src = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for name in ("src", "href"):
            if values.get(name):
                self.found.append((tag, str(values[name])))
        self._in_script_without_src = tag == "script" and not values.get("src")

    def handle_data(self, data: str) -> None:
        if self._in_script_without_src and data.strip():
            self.inline_scripts += 1

    def handle_endtag(self, tag: str) -> None:
        self._in_script_without_src = False


def _directives(policy: str) -> dict[str, list[str]]:
    parts = (part.split() for part in policy.split(";") if part.strip())
    return {words[0]: words[1:] for words in parts}


async def test_docs_load_swagger_ui_from_this_origin_only(client: httpx.AsyncClient) -> None:
    page = await client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    references = _References()
    references.feed(page.text)
    assert references.inline_scripts == 0  # the start-up script is a file too: no 'unsafe-inline'
    assert {tag for tag, _ in references.found} >= {"script", "link"}
    for tag, url in references.found:
        assert url.startswith("/") and not url.startswith("//"), (tag, url)  # no other host
        asset = await client.get(url)
        assert asset.status_code == 200 and asset.content, url
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", page.text)
    bundle = await client.get(next(url for tag, url in references.found if "swagger-ui-bundle.js" in url))
    assert "javascript" in bundle.headers["content-type"] and b"SwaggerUIBundle" in bundle.content

    policy = _directives(page.headers["Content-Security-Policy"])
    assert policy["default-src"] == ["'none'"]
    assert policy["script-src"] == ["'self'"]  # no host, no 'unsafe-inline', no 'unsafe-eval'
    assert policy["connect-src"] == ["'self'"] and policy["frame-ancestors"] == ["'none'"]
    assert all("http" not in source and "*" not in source for sources in policy.values() for source in sources)
    assert page.headers["X-Content-Type-Options"] == "nosniff"


async def test_the_document_is_where_the_page_says_and_redoc_is_off(client: httpx.AsyncClient) -> None:
    page = (await client.get("/docs")).text
    address = re.search(r'data-openapi-url="([^"]+)"', page)
    assert address is not None and (await client.get(address.group(1))).json()["openapi"].startswith("3.")
    assert (await client.get("/redoc")).status_code == 404


def test_the_vendored_files_are_the_pinned_release() -> None:
    """The files are swagger-ui-dist's, unchanged: their checksums are those static/README.md records."""
    readme = (STATIC_DIR / "README.md").read_text()
    recorded = dict((name, digest) for digest, name in re.findall(r"`([0-9a-f]{64})`[\s|]+`([\w.-]+)`", readme))
    assert set(recorded) >= {"swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"}
    for name, digest in recorded.items():
        assert hashlib.sha256((STATIC_DIR / name).read_bytes()).hexdigest() == digest, name


def test_the_assets_are_package_data() -> None:
    """A wheel carries the files: pyproject.toml's package-data names every one of them."""
    import tomllib
    from fnmatch import fnmatch
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["vpx"]
    for path in STATIC_DIR.iterdir():
        relative = f"apidocs/static/{path.name}"
        assert any(fnmatch(relative, pattern) for pattern in patterns), relative


@pytest.mark.slow
async def test_the_page_works_in_a_browser_under_its_policy(database_url: str) -> None:
    """Headless Chromium: Swagger UI renders, takes a key and tries a request, with nothing refused by
    the Content-Security-Policy and no request to another host (skipped without Chromium)."""
    from tests.dashboard.live_server import live_server
    from tests.dashboard.test_browser import CHROMIUM, CHROMIUM_ARGS, _why_no_browser

    if not database_url.startswith("sqlite"):
        pytest.skip("the page is the same on both databases")
    reason = _why_no_browser()
    if reason:
        pytest.skip(reason)
    from playwright.async_api import async_playwright

    with live_server(database_url, worker_in_process="false") as server:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page()
                problems: list[str] = []
                hosts: set[str] = set()
                page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda error: problems.append(str(error)))
                page.on("request", lambda request: hosts.add(request.url.split("/")[2]))
                await page.goto(server.url + "/docs")
                await page.click("button.authorize")
                await page.fill(".modal-ux input", "vpx_ro_not-a-key")
                await page.click(".modal-ux button.authorize")
                await page.click(".modal-ux button.close-modal")
                operation = "#operations-account-get_account_api_v1_account_get"
                await page.click(operation)
                await page.click(f"{operation} button.try-out__btn")
                await page.click(f"{operation} button.execute")
                answer = await page.locator(f"{operation} .live-responses-table").inner_text(timeout=20_000)
            finally:
                await browser.close()
    assert "invalid_api_key" in answer  # the key went with the request, to this server
    assert hosts == {server.url.split("/")[2]}
    # The one expected error is the 401 itself; nothing refused by the policy, no script error.
    assert [p for p in problems if "401" not in p] == [], problems


async def test_the_document_and_the_files_are_sent_compressed_and_cached(client: httpx.AsyncClient) -> None:
    """/docs drew in more than two seconds on a 2-core machine (docs/benchmarks.md): the document is
    made once per process, sent gzipped to a client that takes gzip, with an ETag for a 304; the
    files, whose URLs carry the pinned version, are kept by the browser."""
    plain = await client.get("/api/v1/openapi.json", headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and "content-encoding" not in plain.headers
    assert plain.headers["content-type"] == "application/json"
    squeezed = await client.get("/api/v1/openapi.json", headers={"Accept-Encoding": "gzip, deflate"})
    assert squeezed.headers["content-encoding"] == "gzip" and squeezed.headers["vary"] == "Accept-Encoding"
    assert int(squeezed.headers["content-length"]) < len(plain.content) / 4
    assert squeezed.json() == plain.json() == client._transport.app.openapi()  # type: ignore[attr-defined]
    etag = plain.headers["etag"]
    assert squeezed.headers["etag"] == etag and plain.headers["cache-control"] == "no-cache"
    again = await client.get("/api/v1/openapi.json", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    refused = await client.get("/api/v1/openapi.json", headers={"Accept-Encoding": "gzip;q=0"})
    assert "content-encoding" not in refused.headers

    page = (await client.get("/docs")).text
    bundle_url = re.search(r'src="([^"]*swagger-ui-bundle\.js[^"]*)"', page)
    assert bundle_url is not None
    bundle = await client.get(bundle_url.group(1), headers={"Accept-Encoding": "gzip"})
    assert bundle.status_code == 200 and bundle.headers["content-encoding"] == "gzip"
    assert bundle.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert "javascript" in bundle.headers["content-type"] and b"SwaggerUIBundle" in bundle.content
    cached = await client.get(bundle_url.group(1), headers={"If-None-Match": bundle.headers["etag"]})
    assert cached.status_code == 304
    missing = await client.get("/docs/assets/nothing.js")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
