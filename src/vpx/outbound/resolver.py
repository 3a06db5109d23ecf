"""How the guard resolves a name: once, every address kept, so that the caller connects to an address
that was checked and a DNS answer cannot change between the check and the connection. Tests hand a
``Resolver`` of their own."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

Resolver = Callable[[str, int], Awaitable[list[str]]]

RESOLVE_TIMEOUT_SECONDS = 5.0


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for a name."""
    loop = asyncio.get_running_loop()
    infos = await asyncio.wait_for(
        loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout=RESOLVE_TIMEOUT_SECONDS
    )
    return list(dict.fromkeys(str(info[4][0]) for info in infos))
