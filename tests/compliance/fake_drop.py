"""A local fake of DROP's Data Broker API (1.2.0), on 127.0.0.1, as its technical specification
describes it: ``GET /data/download`` (a ZIP of ``ID,Hash`` lists named ``<date>_<broker>_<List>.csv``,
perhaps a ``_Removed.csv``; "no new data" as JSON; 202 with ``Retry-After`` while packaging; 409 while
the last download waits for answers; 429 with ``Retry-After``), ``POST /data/upload`` (multipart field
``files``, header exactly ``Id,Status``, names as downloaded with an optional ``_<suffix>``; 400 when
no file is accepted, a name already uploaded for this download among the reasons; 409 when no download
waits), and 401 for a wrong ``X-API-KEY``. Errors are ``{"message": …}``."""

from __future__ import annotations

import asyncio
import csv
import io
import re
import socket
import threading
import time
import zipfile
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

API_KEY = "drop-test-key-0123456789"
BROKER = "4821"
DATE = "20261115"
_SUFFIXED = re.compile(r"^(\d{8}_\d{4}_[A-Za-z]+)(?:_[A-Za-z0-9]{1,10})?\.csv$")


@dataclass
class Uploaded:
    name: str
    rows: list[tuple[str, str]]


@dataclass
class FakeDrop:
    base_url: str = ""
    lists_selected: tuple[str, ...] = ("Email", "Phone")
    offered: dict[str, list[tuple[str, str]]] | None = None
    removed: list[tuple[str, str, str]] = field(default_factory=list)
    # Answers given before the next normal one: ("packaging", seconds), ("rate_limited", seconds),
    # ("busy",), ("upload", status, message) for the next upload.
    script: list[tuple[Any, ...]] = field(default_factory=list)
    pending: dict[str, set[str]] | None = None
    uploaded_names: set[str] = field(default_factory=set)
    uploads: list[Uploaded] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def reset(self) -> None:
        self.offered, self.removed, self.script, self.pending = None, [], [], None
        self.uploaded_names, self.uploads, self.answers, self.calls = set(), [], {}, []

    def offer(self, lists: dict[str, list[tuple[str, str]]], removed: list[tuple[str, str, str]] | None = None) -> None:
        """The next download's work items by list (every selected list is in the ZIP, empty or not)."""
        self.offered, self.removed = lists, list(removed or [])

    def _script(self, kinds: tuple[str, ...]) -> tuple[Any, ...] | None:
        if self.script and self.script[0][0] in kinds:
            return self.script.pop(0)
        return None

    async def handle(self, request: Request) -> Response:
        self.calls.append(f"{request.method} {request.url.path}")
        if request.headers.get("x-api-key") != API_KEY:
            return JSONResponse({"message": "API key is missing or invalid."}, status_code=401)
        if request.method == "GET" and request.url.path == "/data/download":
            return self._download()
        if request.method == "POST" and request.url.path == "/data/upload":
            return await self._upload(request)
        return JSONResponse({"message": "The requested endpoint was not found."}, status_code=404)

    def _download(self) -> Response:
        scripted = self._script(("packaging", "rate_limited", "busy"))
        if scripted is not None:
            if scripted[0] == "busy":
                return JSONResponse({"message": "Complete the current batch."}, status_code=409)
            status = 202 if scripted[0] == "packaging" else 429
            return JSONResponse(
                {"message": "Call GET /data/download again later."},
                status_code=status,
                headers={"Retry-After": str(scripted[1])},
            )
        if self.pending:
            return JSONResponse({"message": "Complete the current batch."}, status_code=409)
        if self.offered is None and not self.removed:
            return JSONResponse(
                {"message": "No new consumer request data or removed identifiers are available."}, status_code=200
            )
        buffer = io.BytesIO()
        pending: dict[str, set[str]] = {}
        with zipfile.ZipFile(buffer, "w") as archive:
            for list_type in self.lists_selected:
                rows = (self.offered or {}).get(list_type, [])
                name = f"{DATE}_{BROKER}_{list_type}"
                archive.writestr(f"{name}.csv", "ID,Hash\n" + "".join(f"{i},{h}\n" for i, h in rows))
                if rows:
                    pending[name] = {i for i, _ in rows}
            if self.removed:
                body = "ID,Hash,ListType\n" + "".join(f"{i},{h},{t}\n" for i, h, t in self.removed)
                archive.writestr(f"{DATE}_{BROKER}_Removed.csv", body)
        self.pending = pending or None
        self.offered, self.removed = None, []
        self.uploaded_names = set()
        return Response(
            buffer.getvalue(),
            media_type="application/zip",
            headers={"Content-Disposition": f'attachment; filename="{DATE}_{BROKER}_DROP.zip"'},
        )

    async def _upload(self, request: Request) -> Response:
        scripted = self._script(("upload",))
        if scripted is not None:
            _, status, message = scripted
            body = {"message": "Upload request is invalid.", "acceptedCount": 0, "rejectedCount": 1, "accepted": []}
            return JSONResponse({**body, "rejected": [{"fileName": "?", "message": message}]}, status_code=status)
        if not self.pending:
            return JSONResponse({"message": "No active download is waiting for responses."}, status_code=409)
        form = await request.form()
        accepted: list[dict[str, Any]] = []
        rejected: list[dict[str, str]] = []
        for item in form.getlist("files"):
            if isinstance(item, str):
                continue
            name, content = item.filename or "", await item.read()
            why = self._check(name, content)
            if why is not None:
                rejected.append({"fileName": name, "message": why})
                continue
            self.uploaded_names.add(name)
            rows = list(csv.reader(io.StringIO(content.decode())))[1:]
            self.uploads.append(Uploaded(name, [(r[0], r[1]) for r in rows]))
            stem = _SUFFIXED.match(name).group(1)  # type: ignore[union-attr]
            for item_id, status in rows:
                self.answers[item_id] = status
                self.pending.get(stem, set()).discard(item_id)
            accepted.append({"fileName": name, "fileSizeBytes": len(content)})
        if all(not ids for ids in self.pending.values()):
            self.pending = None
        body = {
            "message": "Upload received." if accepted else "Upload request is invalid.",
            "acceptedCount": len(accepted),
            "rejectedCount": len(rejected),
            "accepted": accepted,
            "rejected": rejected,
        }
        return JSONResponse(body, status_code=202 if accepted else 400)

    def _check(self, name: str, content: bytes) -> str | None:
        named = _SUFFIXED.match(name)
        if named is None or self.pending is None or named.group(1) not in self.pending:
            return "The file name does not match a downloaded list."
        if name in self.uploaded_names:
            return "A file with this name was already uploaded for the current download. Use a unique suffix."
        lines = content.decode().splitlines()
        if not lines or lines[0] != "Id,Status":
            return "Invalid CSV header. Expected: Id,Status."
        for line in lines[1:]:
            item_id, _, status = line.partition(",")
            if status not in ("2", "3", "4", "5"):
                return f"Invalid status for {item_id}."
        return None


_started: FakeDrop | None = None
_lock = threading.Lock()


def start_fake_drop() -> FakeDrop:
    """The fake, on a free loopback port, started once per process (a thread with its own loop)."""
    global _started
    with _lock:
        if _started is not None:
            return _started
        fake = FakeDrop()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        fake.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        app = Starlette(routes=[Route("/{path:path}", fake.handle, methods=["GET", "POST"])])
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", loop="asyncio", http="h11")
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=asyncio.run, args=(server.serve(sockets=[sock]),), name="fake-drop", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the fake DROP did not start")
            time.sleep(0.01)
        _started = fake
        return fake
