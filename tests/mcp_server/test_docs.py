"""docs/mcp.md's example, run as written: `vpx mcp` with a real test key against a served app, driven
by the `mcp` package's client."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx

from tests.factories import Factory
from tests.sandbox.conftest import test_keys
from tests.sandbox.docs_support import example, run

VPX = str(Path(sys.executable).with_name("vpx"))


async def test_the_example_of_the_mcp_guide(served: str, client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    keys = await test_keys(client, account)
    code = example("mcp.md", "## An example")
    replacements = {
        "vpx_test_live_…": keys["live"],
        "http://127.0.0.1:8000": served,
        'command="vpx"': f'command="{VPX}"',
    }
    await asyncio.to_thread(run, code, replacements)
