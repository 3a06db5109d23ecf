"""The MCP tests' fixtures: test mode's (a sandbox beside the main database) and a real HTTP server."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
import uvicorn
from fastapi import FastAPI

from tests.sandbox.conftest import app, client, factory, sandbox_url, settings

__all__ = ["app", "client", "factory", "sandbox_url", "served", "settings"]


@pytest.fixture
async def served(app: FastAPI) -> AsyncIterator[str]:
    """The app served over real HTTP on a loopback port (its lifespan run), for as long as the test."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await asyncio.wait_for(task, timeout=15)
