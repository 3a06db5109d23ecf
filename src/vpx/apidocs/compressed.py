"""The OpenAPI document and /docs' files, sent compressed and cached (docs/benchmarks.md, "/docs").

/docs took longer than two seconds to draw on a 2-core machine: the browser fetches a 310 KB document
and 1.9 MB of Swagger UI, parses and draws them. What the service can take off that: each body is
made once per process (the document is serialised once, not on every request) and kept with its gzip
form (a fifth of the document, a third of the script), sent gzipped to a client that accepts it
(``Vary: Accept-Encoding``), with an ETag a client sends back for a 304 without a body. The document
is revalidated on each load (``Cache-Control: no-cache``: a new release's document shows at once);
the files, whose URLs carry Swagger UI's pinned version, are kept a year without asking
(``immutable``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import mimetypes
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from vpx.errors import NotFound

GZIP_LEVEL = 6
DOCUMENT_CACHE = "no-cache"
ASSET_CACHE = "public, max-age=31536000, immutable"


@dataclass(frozen=True)
class Body:
    """One body as sent: plain and gzipped, its type and its validator."""

    content: bytes
    gzipped: bytes
    media_type: str
    etag: str

    @classmethod
    def of(cls, content: bytes, media_type: str) -> Body:
        etag = f'"{hashlib.sha256(content).hexdigest()[:32]}"'
        return cls(content, gzip.compress(content, compresslevel=GZIP_LEVEL, mtime=0), media_type, etag)

    def response(self, request: Request, *, cache_control: str, headers: dict[str, str] | None = None) -> Response:
        """200 with the body (gzipped when the client takes gzip), or 304 when the client holds it."""
        sent = {"ETag": self.etag, "Cache-Control": cache_control, "Vary": "Accept-Encoding", **(headers or {})}
        if self.etag in _tags(request.headers.get("if-none-match", "")):
            return Response(status_code=304, headers=sent)
        if _takes_gzip(request.headers.get("accept-encoding", "")):
            return Response(self.gzipped, media_type=self.media_type, headers={**sent, "Content-Encoding": "gzip"})
        return Response(self.content, media_type=self.media_type, headers=sent)


def _tags(header: str) -> set[str]:
    """The entity tags of an If-None-Match header (weak ones compared by their value, as RFC 9110 asks)."""
    return {tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()}


def _takes_gzip(header: str) -> bool:
    for part in header.split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() in ("gzip", "*"):
            quality = params.strip().lower().removeprefix("q=")
            try:
                return not params or float(quality) > 0
            except ValueError:
                return False
    return False


def document_endpoint(document: Callable[[], dict[str, Any]]) -> Callable[[Request], Any]:
    """The OpenAPI document's route: serialised (as FastAPI serialises it) once, on the first request."""
    made: list[Body] = []

    async def openapi(request: Request) -> Response:
        if not made:
            text = json.dumps(document(), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
            made.append(Body.of(text.encode("utf-8"), "application/json"))
        return made[0].response(request, cache_control=DOCUMENT_CACHE)

    return openapi


def asset_endpoint(folder: Path, headers: dict[str, str]) -> Callable[[Request], Any]:
    """/docs' files from ``folder`` (no sub-folders), each read and compressed once."""
    files = {path.name: path for path in folder.iterdir() if path.is_file()}
    made: dict[str, Body] = {}

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        path = files.get(name)
        if path is None:
            raise NotFound(f"No file {name} here.")
        if name not in made:
            media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
            if media_type.startswith("text/") or media_type.endswith("javascript"):
                media_type += "; charset=utf-8"
            made[name] = Body.of(path.read_bytes(), media_type)
        return made[name].response(request, cache_control=ASSET_CACHE, headers=headers)

    return asset
