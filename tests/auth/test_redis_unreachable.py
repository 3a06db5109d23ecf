"""With VPX_REDIS_URL set and Redis unreachable, requests are still served: each process counts on
its own until Redis answers again (docs/operator-guide.md, "Scaling out")."""

from __future__ import annotations

from fastapi import FastAPI

from tests.conftest import asgi_client, test_settings, wipe
from tests.factories import Factory
from vpx.app import create_app
from vpx.auth.keys import KeyType, generate_key
from vpx.clock import FixedClock


async def test_an_unreachable_store_counts_in_the_process_instead_of_failing(
    database_url: str, clock: FixedClock
) -> None:
    settings = test_settings(database_url, rate_limit="3/minute", redis_url="redis://127.0.0.1:1/0")
    app: FastAPI = create_app(settings, clock=clock)
    await wipe(app.state.database)
    account = await Factory(app, clock).account(key_types=("ro",))
    async with asgi_client(app) as http:
        statuses = [(await http.get("/api/v1/account", headers=account.headers("ro"))).status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]  # the limit holds, counted in this process
        wrong = await http.get("/api/v1/account", headers={"X-API-Key": generate_key(KeyType.ro)})
        assert wrong.status_code == 401
    await app.state.rate_limits.close()
    await app.state.database.dispose()
