"""The interactive API reference at /docs: Swagger UI served from the package itself, pinned, under a
Content-Security-Policy that lets the page load scripts from this origin only.

People paste their API keys into this page, so nothing on it may come from another host (a CDN's
floating version can change under it; a machine without internet would show a blank page). The files
in static/ are swagger-ui-dist's, unchanged; static/README.md records their version, licence and
checksums and how to update them.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from starlette.routing import Route

from vpx.apidocs import compressed

STATIC_DIR = Path(__file__).resolve().parent / "static"
ASSETS_PATH = "/docs/assets"
SWAGGER_UI_VERSION = "5.35.0"  # static/README.md

# Scripts, styles, fonts and the document from this origin only; images also as data: URIs (the
# stylesheet's icons). "Try it out" requests go to this origin. No framing, no forms, no plugins.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def docs_page(*, title: str, openapi_url: str) -> str:
    """The /docs page: Swagger UI's files and its start-up script, all from ASSETS_PATH."""
    version = f"?v={SWAGGER_UI_VERSION}"  # a new pinned version is fetched anew, not taken from caches
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} – reference</title>
<link rel="stylesheet" href="{ASSETS_PATH}/swagger-ui.css{version}">
<link rel="icon" type="image/png" href="{ASSETS_PATH}/favicon-32x32.png{version}">
</head>
<body>
<div id="swagger-ui" data-openapi-url="{escape(openapi_url)}"></div>
<script src="{ASSETS_PATH}/swagger-ui-bundle.js{version}"></script>
<script src="{ASSETS_PATH}/vpx-docs.js{version}"></script>
</body>
</html>
"""


def install_api_docs(app: FastAPI, *, path: str = "/docs") -> None:
    """Adds the reference page and its files to an app built with ``docs_url=None``, and sends the
    OpenAPI document and those files compressed and cached (vpx.apidocs.compressed)."""
    openapi_url = app.openapi_url
    assert openapi_url is not None
    page = docs_page(title=app.title, openapi_url=openapi_url)

    async def api_docs(request: Request) -> HTMLResponse:
        return HTMLResponse(page, headers=SECURITY_HEADERS)

    app.add_route(path, api_docs, include_in_schema=False)  # GET and HEAD, as FastAPI's own page
    # FastAPI's own route for the document serialises it on every request, uncompressed: replaced.
    app.router.routes[:] = [r for r in app.router.routes if not (isinstance(r, Route) and r.path == openapi_url)]
    app.add_route(openapi_url, compressed.document_endpoint(lambda: app.openapi()), include_in_schema=False)
    app.add_route(
        f"{ASSETS_PATH}/{{name}}", compressed.asset_endpoint(STATIC_DIR, SECURITY_HEADERS), include_in_schema=False
    )
