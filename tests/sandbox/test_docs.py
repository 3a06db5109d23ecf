"""docs/test-mode.md's Python example, run as written with a real test key against a served app."""

from __future__ import annotations

import asyncio

import httpx

from tests.factories import Factory
from tests.sandbox.conftest import test_keys
from tests.sandbox.docs_support import example, run


async def test_the_python_example_of_the_test_mode_guide(
    served: str, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    keys = await test_keys(client, account)
    code = example("test-mode.md", "## The Python client")
    await asyncio.to_thread(run, code, {"vpx_test_live_…": keys["live"], "http://127.0.0.1:8000": served})
