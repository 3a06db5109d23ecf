"""Bytes that are not HTTP/1.1 get a problem document from the server itself (uvicorn's protocols with
their one bare text/plain answer replaced), on a real uvicorn server over loopback; `vpx serve` runs
those protocols."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from typer.testing import CliRunner

from tests.conftest import TEST_SECRET_KEY
from vpx import http_protocol
from vpx.cli.app import app as cli

UNREADABLE = [
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(32) + b"\r\n\r\n",  # a TLS hello to the plain port
    b"GET / HTTP/1.1\r\nHost: x\r\nBad Header Name: 1\r\n\r\n",  # a header name that is not a token
    b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked, zebra\r\n\r\n",
    b"NOT HTTP AT ALL\r\n\r\n",
]


async def _ok(_: Any) -> PlainTextResponse:
    return PlainTextResponse("ok")


async def _exchange(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), timeout=5)  # the server closes: read to the end
    writer.close()
    return answer


@pytest.mark.parametrize("protocol", ["ProblemH11Protocol", "ProblemHttpToolsProtocol"])
async def test_bytes_that_are_not_http_get_a_problem_document(protocol: str) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = Starlette(routes=[Route("/", _ok)])
    config = uvicorn.Config(
        app, log_level="critical", lifespan="off", loop="asyncio", http=getattr(http_protocol, protocol)
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.01)
        assert (await _exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).endswith(b"ok")
        for data in UNREADABLE:
            answer = await _exchange(port, data)
            head, _, body = answer.partition(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            headers = dict(line.lower().split(": ", 1) for line in lines[1:])
            assert lines[0] == "HTTP/1.1 400 Bad Request", answer
            assert headers["content-type"] == "application/problem+json"
            assert headers["connection"] == "close" and int(headers["content-length"]) == len(body)
            problem = json.loads(body)
            assert problem["code"] == "malformed_request" and problem["status"] == 400
            assert problem["type"] == "urn:vpx:problem:malformed_request" and problem["title"]
            assert problem["request_id"] == headers["x-request-id"] and problem["request_id"].startswith("req_")
    finally:
        server.should_exit = True
        await serving


def test_vpx_serve_runs_the_protocols_that_answer_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    serve_module = importlib.import_module("vpx.cli.serve")  # where `vpx serve` runs the server
    started: list[uvicorn.Config] = []

    def run_server(config: uvicorn.Config, sock: socket.socket) -> bool:
        sock.close()
        started.append(config)
        return True

    # vpx serve binds its socket and runs uvicorn on it through run_server (not uvicorn.run, which this
    # test once replaced: when serve stopped calling it, a real server ran here until CI's limit).
    monkeypatch.setattr(serve_module, "run_server", run_server)
    monkeypatch.setenv("VPX_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'vpx.db'}")
    monkeypatch.setenv("VPX_SECRET_KEYS", TEST_SECRET_KEY)
    monkeypatch.setenv("VPX_DATA_DIR", str(tmp_path))
    # serve writes the address it listens on into VPX_PUBLIC_URL: set here, so that it is undone after.
    monkeypatch.setenv("VPX_PUBLIC_URL", "")
    from vpx.config import get_settings

    get_settings.cache_clear()
    try:
        done = CliRunner().invoke(cli, ["serve", "--port", "0", "--json"])
    finally:
        get_settings.cache_clear()
    assert done.exit_code == 0, done.output
    assert started and started[0].http == http_protocol.IMPORT_PATH
