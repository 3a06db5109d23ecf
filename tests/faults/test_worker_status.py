"""Nothing silently idle: `vpx serve` runs the worker in its process on every database; with
`--no-worker` and no `vpx worker` alive, /readyz and `vpx status` say that work waits (503, exit 1)
and the server warns at start; a worker started later delivers and makes it ready."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
from fastapi import FastAPI

from tests.conftest import TEST_SECRET_KEY
from tests.dashboard.live_server import free_port
from tests.factories import Factory
from tests.faults.support import VPX, VpxProcess, VpxServer, wait_until
from tests.webhooks.receiver import Receiver
from vpx.webhooks.outbox import enqueue_event

PRIVATE = {"webhook_allow_private": "1"}


def status(database_url: str) -> tuple[int, dict[str, object]]:
    env = {"VPX_DATABASE_URL": database_url, "VPX_SECRET_KEYS": TEST_SECRET_KEY, "VPX_LOG_LEVEL": "WARNING"}
    import os

    done = subprocess.run([VPX, "status", "--json"], capture_output=True, text=True, env={**os.environ, **env})
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return done.returncode, found


async def readyz(url: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url, timeout=5) as http:
        return await http.get("/readyz")


async def test_serve_runs_a_worker_by_default_on_every_database(
    app: FastAPI, database_url: str, tmp_path: Path
) -> None:
    server = VpxServer(database_url, tmp_path / "serve.log", PRIVATE)
    try:

        async def beating() -> bool:
            body = (await readyz(server.url)).json()
            return bool(body.get("live_workers"))

        assert await wait_until(beating, limit=60), server.output()
        body = (await readyz(server.url)).json()
        assert body["status"] == "ok" and body["workers"][0]["in_server"] is True
        code, found = status(database_url)
        assert code == 0 and found["live_workers"] == 1
    finally:
        server.stop()
    # A clean stop removes the worker's beat.
    code, found = status(database_url)
    assert found["workers"] == [] and code == 0  # nothing waits


async def test_without_a_worker_waiting_work_is_not_ready_until_one_runs(
    app: FastAPI, factory: Factory, database_url: str, receiver: Receiver, tmp_path: Path
) -> None:
    account = await factory.account()
    port = free_port()
    log = tmp_path / "serve.log"
    server = VpxProcess(database_url, ["serve", "--port", str(port), "--no-worker"], log, PRIVATE)
    url = f"http://127.0.0.1:{port}"
    worker: VpxProcess | None = None
    try:

        async def answering() -> bool:
            try:
                return (await readyz(url)).status_code == 200
            except httpx.TransportError:
                return False

        assert await wait_until(answering, limit=60), server.output()
        assert "runs without a worker" in server.output()
        async with httpx.AsyncClient(base_url=url, timeout=5) as http:
            hook = await http.post(
                "/api/v1/webhooks",
                json={"url": receiver.url(), "events": ["contact.revealed"]},
                headers=account.headers("full"),
            )
        assert hook.status_code == 201, hook.text
        async with app.state.database.write_sessions() as session, session.begin():
            await enqueue_event(
                session,
                account_id=account.id,
                event_type="contact.revealed",
                data={"contact_id": "ct_1"},
                now=app.state.clock.now(),
            )
        waiting = await readyz(url)
        assert waiting.status_code == 503, waiting.text
        body = waiting.json()
        assert body["status"] == "no_worker" and body["waiting"]["webhook_deliveries"] == 1
        assert body["live_workers"] == 0
        code, found = status(database_url)
        assert code == 1 and found["ready"] is False

        worker = VpxProcess(database_url, ["worker"], tmp_path / "worker.log", PRIVATE)

        async def delivered() -> bool:
            return len(receiver.received("/hook")) == 1 and (await readyz(url)).status_code == 200

        assert await wait_until(delivered, limit=60), worker.output()
        assert (await readyz(url)).json()["live_workers"] == 1
    finally:
        if worker is not None:
            worker.stop()
        server.stop()
