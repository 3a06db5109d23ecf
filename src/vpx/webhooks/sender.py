"""Sending one webhook POST to a checked Target: HTTP/1.1 (the h11 protocol library) over asyncio
streams, connecting to the checked address only, TLS verified against the URL's host name, never
following a redirect, the whole exchange bounded by a timeout. Idle connections are kept per target.

A general-purpose client spends most of its time in connection-pool bookkeeping at the concurrency a
worker runs at (measured: ~300 vs ~5,000 requests/s on this machine); this does only what delivery needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from dataclasses import dataclass

import h11

from vpx.outbound.guard import Target

EXCERPT_BYTES = 1000
# A receiver's answer is read to its end (so the connection can be reused) up to this size.
MAX_RESPONSE_BYTES = 1 << 20
MAX_IDLE_PER_TARGET = 64
READ_CHUNK = 65536


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    excerpt: str


class ReceiverError(Exception):
    """The exchange failed before a complete answer: refused, reset, TLS, protocol, too large."""


@dataclass
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    protocol: h11.Connection

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


class WebhookSender:
    def __init__(self, *, tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls or ssl.create_default_context()
        self.idle: dict[tuple[str, str, int, str], list[_Connection]] = {}

    async def post(self, target: Target, *, headers: dict[str, str], body: bytes, limit_seconds: float) -> Answer:
        """POSTs ``body``; TimeoutError when the receiver is too slow, ReceiverError when it fails."""
        key = (target.url.scheme, str(target.address), target.port, target.host_header)
        async with asyncio.timeout(limit_seconds):
            reused = self._take_idle(key)
            if reused is not None:
                try:
                    return await self._exchange(key, reused, target, headers, body)
                except _StaleConnection:
                    pass  # closed by the receiver while idle: once more on a fresh connection
            connection = await self._connect(target)
            try:
                return await self._exchange(key, connection, target, headers, body)
            except _StaleConnection as exc:
                raise ReceiverError("the receiver closed the connection without answering") from exc

    def _take_idle(self, key: tuple[str, str, int, str]) -> _Connection | None:
        pool = self.idle.get(key)
        while pool:
            connection = pool.pop()
            if not connection.writer.is_closing() and not connection.reader.at_eof():
                return connection
            connection.close()
        return None

    async def _connect(self, target: Target) -> _Connection:
        name = target.tls_server_name
        try:
            reader, writer = await asyncio.open_connection(
                str(target.address),
                target.port,
                ssl=self.tls if name is not None else None,
                server_hostname=name,
                limit=READ_CHUNK,
            )
        except (OSError, ssl.SSLError) as exc:
            raise ReceiverError(f"{type(exc).__name__}: {exc}") from exc
        return _Connection(reader, writer, h11.Connection(h11.CLIENT, max_incomplete_event_size=READ_CHUNK))

    async def _exchange(
        self,
        key: tuple[str, str, int, str],
        connection: _Connection,
        target: Target,
        headers: dict[str, str],
        body: bytes,
    ) -> Answer:
        protocol = connection.protocol
        fields = [("host", target.host_header), *headers.items(), ("content-length", str(len(body)))]
        answered = False
        try:
            connection.writer.write(
                protocol.send(h11.Request(method="POST", target=target.request_target, headers=fields))
                + protocol.send(h11.Data(data=body))
                + protocol.send(h11.EndOfMessage())
            )
            await connection.writer.drain()
            status, response_headers, kept, size = 0, {}, bytearray(), 0
            while True:
                event = protocol.next_event()
                if event is h11.NEED_DATA:
                    protocol.receive_data(await connection.reader.read(READ_CHUNK))
                elif isinstance(event, h11.Response):
                    answered = True
                    status = event.status_code
                    response_headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in event.headers}
                elif isinstance(event, h11.Data):
                    size += len(event.data)
                    if size > MAX_RESPONSE_BYTES:
                        raise ReceiverError("the answer is larger than 1 MiB")
                    if len(kept) < EXCERPT_BYTES:
                        kept += event.data[: EXCERPT_BYTES - len(kept)]
                elif isinstance(event, h11.EndOfMessage):
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    raise ReceiverError("the connection closed before the answer ended")
        except BaseException as exc:
            connection.close()
            if not answered and isinstance(exc, OSError | h11.RemoteProtocolError | ReceiverError):
                raise _StaleConnection() from exc
            if isinstance(exc, OSError | ssl.SSLError | h11.ProtocolError):
                raise ReceiverError(f"{type(exc).__name__}: {exc}") from exc
            raise
        self._keep(key, connection)
        return Answer(status, response_headers, bytes(kept).decode("utf-8", errors="replace"))

    def _keep(self, key: tuple[str, str, int, str], connection: _Connection) -> None:
        protocol = connection.protocol
        if protocol.our_state is h11.DONE and protocol.their_state is h11.DONE:
            protocol.start_next_cycle()
            pool = self.idle.setdefault(key, [])
            if len(pool) < MAX_IDLE_PER_TARGET:
                pool.append(connection)
                return
        connection.close()

    async def close(self) -> None:
        for pool in self.idle.values():
            for connection in pool:
                connection.close()
        self.idle.clear()


class _StaleConnection(Exception):
    pass
